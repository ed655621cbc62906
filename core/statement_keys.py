"""Foreign keys checked once per statement (PostgreSQL), for the tables written in bulk.

PostgreSQL checks a foreign key by one query per inserted row (`RI_FKey_check_ins`, ~4 us
each at COMMIT, measured: docs/decisions.md, "Foreign keys checked once per statement"). A
million-row import made three million such checks. A `StatementKey` holds the same rule as
the constraint it replaces, checked over the whole statement's rows at once:

- insert into the child (statement level, over the transition table): every distinct key of
  the new rows is locked in the parent `FOR KEY SHARE`, as the constraint's check locks it
  (a concurrent delete of the parent waits, then finds the new rows), and a key with no parent
  refuses the statement;
- update of the child's key columns (row level, only where they change, as the constraint's
  own update check skips rows whose key is unchanged): the same check for that row;
- delete from the parent (statement level): a parent row still referenced refuses it;
- update of the parent's key columns (row level, only where they change): the same.

The error is the constraint's: SQLSTATE 23503 (`IntegrityError`), the key's name as the
constraint, its message and detail worded as PostgreSQL's own. What differs: the check runs at
the end of each statement (the constraints were DEFERRABLE INITIALLY DEFERRED, checked at
COMMIT), so a child row cannot be written before its parent within one transaction; no code
here does (deletes go children first, as Django's collector orders them), and the tests hold
it. SQLite keeps its plain keys: its per-row checks are B-tree probes in the same process."""

# ruff: noqa: S608 - every statement is built from the key's constant names, never input.
from __future__ import annotations

from dataclasses import dataclass

from django.db import migrations


@dataclass(frozen=True)
class StatementKey:
    name: str  # the constraint it stands for: errors name it, triggers are named after it
    table: str
    columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...] = ("id",)

    # -- names ---------------------------------------------------------------------------

    def _fn(self, what: str) -> str:
        return f"{self.name}_{what}"

    @property
    def triggers(self) -> tuple[tuple[str, str], ...]:
        """(trigger, table) of every trigger the key installs."""
        return (
            (self._fn("ins"), self.table),
            (self._fn("upd"), self.table),
            (self._fn("pdel"), self.parent),
            (self._fn("pupd"), self.parent),
        )

    # -- SQL pieces ----------------------------------------------------------------------

    def _match(self, child: str, parent: str) -> str:
        pairs = zip(self.columns, self.parent_columns, strict=True)
        return " AND ".join(f"{parent}.{p} = {child}.{c}" for c, p in pairs)

    def _changed(self, columns: tuple[str, ...]) -> str:
        return " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in columns)

    def _raise(self, record: str, side: str) -> str:
        """RAISE the constraint's own error for `record`: a child whose key has no parent
        (`side` "child") or a parent still referenced ("parent")."""
        if side == "child":
            columns, table = self.columns, self.table
            message = (
                f'insert or update on table "{self.table}" violates foreign key constraint '
                f'"{self.name}"'
            )
            detail = f'is not present in table "{self.parent}".'
        else:
            columns, table = self.parent_columns, self.parent
            message = (
                f'update or delete on table "{self.parent}" violates foreign key constraint '
                f'"{self.name}" on table "{self.table}"'
            )
            detail = f'is still referenced from table "{self.table}".'
        values = " || ', ' || ".join(f"coalesce({record}.{c}::text, 'null')" for c in columns)
        return f"""RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
            CONSTRAINT = '{self.name}', TABLE = '{table}', MESSAGE = '{message}',
            DETAIL = 'Key ({", ".join(columns)})=(' || {values} || ') {detail}';"""

    def _function(self, what: str, declare: str, body: str) -> str:
        return f"""CREATE OR REPLACE FUNCTION {self._fn(what)}() RETURNS trigger
            LANGUAGE plpgsql AS $fn$
            DECLARE {declare}
            BEGIN
            {body}
            RETURN NULL;
            END $fn$"""

    # -- install / drop ------------------------------------------------------------------

    def install_sql(self) -> list[str]:
        cols = ", ".join(self.columns)
        present = " AND ".join(f"{c} IS NOT NULL" for c in self.columns)
        pcols = ", ".join(f"p.{c}" for c in self.parent_columns)
        # The distinct keys of the statement's rows, each locked in the parent as the
        # constraint's check locks it; the first with no parent (if any) is the error's.
        ins = f"""SELECT k.* INTO missing
            FROM (SELECT DISTINCT {cols} FROM new_rows WHERE {present}) AS k
            LEFT JOIN LATERAL (
                SELECT {pcols} FROM {self.parent} AS p WHERE {self._match("k", "p")}
                FOR KEY SHARE OF p
            ) AS found ON true
            WHERE found.{self.parent_columns[0]} IS NULL
            LIMIT 1;
            IF FOUND THEN {self._raise("missing", "child")} END IF;"""
        new_present = " AND ".join(f"NEW.{c} IS NOT NULL" for c in self.columns)
        upd = f"""IF {new_present} THEN
                PERFORM 1 FROM {self.parent} AS p WHERE {self._match("NEW", "p")}
                    FOR KEY SHARE OF p;
                IF NOT FOUND THEN {self._raise("NEW", "child")} END IF;
            END IF;"""
        pdel = f"""SELECT o.* INTO held FROM old_rows AS o
            WHERE EXISTS (SELECT 1 FROM {self.table} AS c WHERE {self._match("c", "o")})
            LIMIT 1;
            IF FOUND THEN {self._raise("held", "parent")} END IF;"""
        pupd = f"""IF EXISTS (SELECT 1 FROM {self.table} AS c WHERE {self._match("c", "OLD")}) THEN
                {self._raise("OLD", "parent")}
            END IF;"""
        return [
            *self.drop_sql(),
            self._function("ins", "missing record;", ins),
            self._function("upd", "", upd),
            self._function("pdel", "held record;", pdel),
            self._function("pupd", "", pupd),
            f"""CREATE TRIGGER {self._fn("ins")} AFTER INSERT ON {self.table}
                REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
                EXECUTE FUNCTION {self._fn("ins")}()""",
            f"""CREATE TRIGGER {self._fn("upd")} AFTER UPDATE OF {cols} ON {self.table}
                FOR EACH ROW WHEN ({self._changed(self.columns)})
                EXECUTE FUNCTION {self._fn("upd")}()""",
            f"""CREATE TRIGGER {self._fn("pdel")} AFTER DELETE ON {self.parent}
                REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
                EXECUTE FUNCTION {self._fn("pdel")}()""",
            f"""CREATE TRIGGER {self._fn("pupd")} AFTER UPDATE OF {", ".join(self.parent_columns)}
                ON {self.parent} FOR EACH ROW WHEN ({self._changed(self.parent_columns)})
                EXECUTE FUNCTION {self._fn("pupd")}()""",
        ]

    def drop_sql(self) -> list[str]:
        return [
            *(f"DROP TRIGGER IF EXISTS {name} ON {table}" for name, table in self.triggers),
            *(f"DROP FUNCTION IF EXISTS {name}()" for name, _ in self.triggers),
        ]

    def constraint_sql(self) -> str:
        """The plain constraint the key stands for (to go back to it)."""
        return (
            f"ALTER TABLE {self.table} ADD CONSTRAINT {self.name} FOREIGN KEY "
            f"({', '.join(self.columns)}) REFERENCES {self.parent} "
            f"({', '.join(self.parent_columns)}) DEFERRABLE INITIALLY DEFERRED"
        )


def _plain_keys(connection, cursor, table: str, columns: tuple[str, ...]) -> list[str]:
    """Names of the plain foreign-key constraints of `table` over exactly `columns`."""
    constraints = connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, info in constraints.items()
        if info["foreign_key"] and tuple(info["columns"]) == columns
    ]


def statement_keys_install(schema_editor, keys: tuple[StatementKey, ...]) -> None:
    """Replace each key's plain constraint with its statement-level checks (PostgreSQL)."""
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    for key in keys:
        with connection.cursor() as cursor:
            names = _plain_keys(connection, cursor, key.table, key.columns)
        for name in names:
            schema_editor.execute(f'ALTER TABLE {key.table} DROP CONSTRAINT "{name}"')
        for sql in key.install_sql():
            schema_editor.execute(sql)


def statement_keys_uninstall(schema_editor, keys: tuple[StatementKey, ...]) -> None:
    """Put each key's plain constraint back, under the key's name (PostgreSQL)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for key in keys:
        for sql in key.drop_sql():
            schema_editor.execute(sql)
        schema_editor.execute(key.constraint_sql())


def statement_keys_operation(keys: tuple[StatementKey, ...]) -> migrations.RunPython:
    """A migration's operation installing `keys` (and, backwards, their constraints again)."""
    return migrations.RunPython(
        lambda apps, schema_editor: statement_keys_install(schema_editor, keys),
        lambda apps, schema_editor: statement_keys_uninstall(schema_editor, keys),
    )
