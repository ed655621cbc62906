"""`field__any=values`: membership in a long list of values as one parameter.

`field__in` sends one placeholder per value: a statement with 1,000 of them costs Django and
psycopg more to build and bind than the database takes to answer it (a bulk's counterpart
query: 26 ms against 12 ms as an array). On PostgreSQL `field__any` sends the values as one
array (`field = ANY(%s)`), the form PostgreSQL rewrites an IN list to before planning, so the
plan is the same; elsewhere, and for a subquery or expressions, it is `field__in`. Each value
is prepared by the field, as `in` does."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db.models import Field, ForeignObject
from django.db.models.expressions import ColPairs
from django.db.models.fields.related_lookups import RelatedIn
from django.db.models.lookups import In


class _ArrayOnPostgreSQL:
    lookup_name = "any"

    def as_postgresql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        if (
            not self.rhs_is_direct_value()
            or isinstance(self.lhs, ColPairs)
            or any(hasattr(value, "resolve_expression") for value in self.rhs)
        ):
            return self.as_sql(compiler, connection)
        lhs, lhs_params = self.process_lhs(compiler, connection)
        field = self.lhs.output_field
        values = list(
            dict.fromkeys(
                field.get_db_prep_value(value, connection, prepared=True)
                for value in self.rhs
                if value is not None
            )
        )
        if not values:
            raise EmptyResultSet  # as `in` with no values: no row
        return f"{lhs} = ANY(%s)", [*lhs_params, values]


@Field.register_lookup
class AnyOf(_ArrayOnPostgreSQL, In):
    pass


@ForeignObject.register_lookup  # a relation's lookups are its own, not Field's
class RelatedAnyOf(_ArrayOnPostgreSQL, RelatedIn):
    pass
