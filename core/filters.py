"""Query-string filters: each reader returns the typed value or raises a 422 naming the filter.

A list's filters are a small frozen dataclass whose fields say which query parameter they read
and how (`query_param`). The API layer reads the query string into it
(`QueryFilters(params).parse(SomeFilters)`) and documents the parameters from the same
declaration; the selector takes the dataclass and never sees a query dict."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field, fields
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from core.errors import ValidationFailed
from core.formats import parse_strict_date

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}
_KINDS = ("uuid", "uuid_list", "date", "decimal", "choice", "boolean", "text")
F = TypeVar("F")


@dataclass(frozen=True)
class QueryParam:
    """How one filter field is read from the query string."""

    kind: str
    name: str | None = None  # the parameter's name when it is not the field's
    choices: tuple[str, ...] = ()
    max_length: int = 200
    not_before: str | None = None  # the date field this one must not precede
    description: str | None = None


def query_param(
    kind: str,
    *,
    name: str | None = None,
    choices: tuple[str, ...] | list[str] = (),
    max_length: int = 200,
    not_before: str | None = None,
    description: str | None = None,
) -> Any:
    """A filter dataclass field, read from the query parameter of its name (or `name`)."""
    if kind not in _KINDS:
        raise ValueError(f"unknown filter kind {kind!r}")
    spec = QueryParam(kind, name, tuple(choices), max_length, not_before, description)
    default: Any = () if kind == "uuid_list" else None
    return field(default=default, metadata={"query": spec})


def query_params(cls: type) -> list[tuple[str, QueryParam]]:
    """The (field name, spec) pairs of a filter dataclass, in declaration order."""
    return [(f.name, f.metadata["query"]) for f in fields(cls) if "query" in f.metadata]


class QueryFilters:
    """Collects every invalid filter before failing, so a caller sees all problems at once."""

    def __init__(self, params: Any) -> None:
        self.params = params
        self.errors: list[str] = []

    def _raw(self, name: str) -> str | None:
        value = self.params.get(name)
        return None if value in (None, "") else value

    def uuid(self, name: str) -> uuid.UUID | None:
        raw = self._raw(name)
        if raw is None:
            return None
        try:
            return uuid.UUID(raw)
        except ValueError:
            self.errors.append(f"{name}: {raw!r} is not a valid id")
            return None

    def uuid_list(self, name: str) -> list[uuid.UUID]:
        """`name[]=a&name[]=b`, `name=a&name=b` or `name=a,b`."""
        raws: list[str] = []
        for key in (f"{name}[]", name):
            for value in self.params.getlist(key):
                raws.extend(part for part in value.split(",") if part)
        out = []
        for raw in raws:
            try:
                out.append(uuid.UUID(raw))
            except ValueError:
                self.errors.append(f"{name}: {raw!r} is not a valid id")
        return out

    def date(self, name: str) -> dt.date | None:
        raw = self._raw(name)
        if raw is None:
            return None
        try:
            return parse_strict_date(raw)
        except ValueError as exc:
            self.errors.append(f"{name}: {exc}")
            return None

    def decimal(self, name: str) -> Decimal | None:
        raw = self._raw(name)
        if raw is None:
            return None
        try:
            value = Decimal(raw)
        except InvalidOperation:
            value = None
        if value is None or not value.is_finite() or value.copy_abs() >= Decimal("1e15"):
            self.errors.append(f"{name}: {raw!r} is not a number")
            return None
        return value

    def choice(self, name: str, choices: tuple[str, ...] | list[str]) -> str | None:
        raw = self._raw(name)
        if raw is None:
            return None
        if raw not in choices:
            self.errors.append(f"{name}: must be one of {', '.join(choices)}")
            return None
        return raw

    def boolean(self, name: str) -> bool | None:
        raw = self._raw(name)
        if raw is None:
            return None
        lowered = raw.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        self.errors.append(f"{name}: must be true or false")
        return None

    def text(self, name: str, max_length: int = 200) -> str | None:
        raw = self._raw(name)
        if raw is None:
            return None
        if len(raw) > max_length or "\x00" in raw:
            self.errors.append(f"{name}: must be at most {max_length} characters of text")
            return None
        return raw

    def date_range(
        self, start: str = "start_date", end: str = "end_date"
    ) -> tuple[dt.date | None, dt.date | None]:
        start_date, end_date = self.date(start), self.date(end)
        if start_date and end_date and start_date > end_date:
            self.errors.append(f"{end}: must not be before {start}")
        return start_date, end_date

    def check(self) -> None:
        if self.errors:
            raise ValidationFailed(self.errors)

    def parse(self, cls: type[F]) -> F:
        """The filter dataclass `cls` read from the query string; a 422 naming every bad value."""
        values: dict[str, Any] = {}
        names: dict[str, str] = {}
        for attr, spec in query_params(cls):
            name = names[attr] = spec.name or attr
            if spec.kind == "uuid_list":
                value: Any = tuple(self.uuid_list(name))
            elif spec.kind == "choice":
                value = self.choice(name, spec.choices)
            elif spec.kind == "text":
                value = self.text(name, max_length=spec.max_length)
            else:
                value = getattr(self, spec.kind)(name)
            earlier = values.get(spec.not_before) if spec.not_before else None
            if value is not None and earlier is not None and earlier > value:
                self.errors.append(f"{name}: must not be before {names[spec.not_before]}")
            values[attr] = value
        self.check()
        return cls(**values)
