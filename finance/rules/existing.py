"""One rule over a household's stored transactions (a preview, or a run that applies it).

The database narrows the rows first where a condition says the same in SQL (text operators
with an ASCII value, amounts, dates, ids); the compiled rule then decides each remaining row,
so what matches is exactly what the ledger's rules would say. Fields the household edited
itself are left alone. Rows are read in chunks by primary key."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import reduce
from operator import and_, or_
from typing import Any

from django.db.models import Q, QuerySet

from finance.models import Rule, Transaction, TransactionTag
from finance.rules.definitions import FIELDS, ID, TEXT
from finance.rules.engine import MERCHANT_RECORD, Row, RuleSet, rule_changes_merge

CHUNK = 1000
_TEXT_LOOKUPS = {
    "contains": "icontains",
    "equals": "iexact",
    "starts_with": "istartswith",
    "ends_with": "iendswith",
}
_ORDERED_LOOKUPS = {"equals": "exact", "gt": "gt", "gte": "gte", "lt": "lt", "lte": "lte"}
_COLUMNS = {"merchant": "merchant__name"}
COLUMNS = (
    "pk",
    "name",
    "notes",
    "merchant__name",
    "merchant_id",
    "amount",
    "account_id",
    "category_id",
    "currency",
    "date",
    "source",
    "excluded",
    "edited_fields",
    "rule_changes",
    "created_at",
)
# The column an action's field is stored in (the engine's row uses the same key).
_STORED = {
    "category": "category_id",
    "merchant": "merchant_id",
    "name": "name",
    "notes": "notes",
    "excluded": "excluded",
}


def _condition_q(condition: dict[str, Any]) -> Q | None:
    """The condition in SQL, when SQL says exactly the same (else None: Python decides)."""
    name, operator, value = condition["field"], condition["operator"], condition["value"]
    kind, column = FIELDS[name], _COLUMNS.get(name, name)
    if kind == TEXT:
        # SQLite's LIKE folds the case of ASCII letters only; expressions are Python's.
        if operator in _TEXT_LOOKUPS and value.isascii():
            return Q(**{f"{column}__{_TEXT_LOOKUPS[operator]}": value})
        return None
    if operator == "is_empty":
        empty = Q(**{f"{column}__isnull": True})
        return empty if value else ~empty
    if kind == ID:
        return Q(**{f"{column}__in" if operator == "in" else column: value})
    if operator == "between":
        return Q(**{f"{column}__range": tuple(value)})
    return Q(**{f"{column}__{_ORDERED_LOOKUPS[operator]}": value})


def rule_candidates(rule: Rule) -> QuerySet[Transaction]:
    """The household's rows the rule may match: a superset of those it does."""
    qs = Transaction.objects.filter(family_id=rule.family_id)
    parts = [_condition_q(c) for c in rule.conditions]
    if rule.match == "any":
        if parts and None not in parts:
            qs = qs.filter(reduce(or_, parts))
    else:
        known = [q for q in parts if q is not None]
        if known:
            qs = qs.filter(reduce(and_, known))
    return qs


def candidate_chunks(
    queryset: QuerySet[Transaction], size: int | None = None
) -> Iterator[list[Any]]:
    """The primary keys of `queryset`, in chunks (of CHUNK), in key order."""
    size = size or CHUNK
    last = None
    while True:
        page = queryset.order_by("pk")
        if last is not None:
            page = page.filter(pk__gt=last)
        ids = list(page.values_list("pk", flat=True)[:size])
        if not ids:
            return
        yield ids
        last = ids[-1]


@dataclass
class Outcome:
    """What the rule changes on one stored row."""

    pk: uuid.UUID
    order: tuple[dt.date, dt.datetime, uuid.UUID]  # the list order's key (newest first)
    values: dict[str, Any] = field(default_factory=dict)  # column -> new value
    tags_added: frozenset[uuid.UUID] = frozenset()
    tags_removed: frozenset[uuid.UUID] = frozenset()
    rule_changes: list[dict[str, Any]] = field(default_factory=list)


def rows_read(ids: Sequence[Any], *, with_tags: bool) -> list[tuple[Row, Any]]:
    """The rows as the engine reads them, with what the outcome needs beside each."""
    tags_of: dict[Any, set[Any]] = {}
    if with_tags:
        for txn_id, tag_id in TransactionTag.objects.filter(transaction_id__in=ids).values_list(
            "transaction_id", "tag_id"
        ):
            tags_of.setdefault(txn_id, set()).add(tag_id)
    out = []
    for values in Transaction.objects.filter(pk__in=ids).values_list(*COLUMNS):
        (pk, name, notes, merchant, merchant_id, amount, account_id, category_id) = values[:8]
        currency, date, source, excluded, edited, changes, created_at = values[8:]
        row: Row = {
            "name": name,
            "notes": notes,
            "merchant": merchant,
            "merchant_id": merchant_id,
            "amount": amount,
            "account_id": account_id,
            "category_id": category_id,
            "currency": currency,
            "date": date,
            "source": source,
            "excluded": excluded,
            "tags": frozenset(tags_of.get(pk, ())),
        }
        out.append((row, (pk, date, created_at, edited or (), changes)))
    return out


def rule_outcomes(ruleset: RuleSet, ids: Sequence[Any]) -> tuple[int, list[Outcome]]:
    """How many of these rows the (single) rule matches, and what it changes on each."""
    (rule,) = ruleset.rules
    matched, outcomes = 0, []
    for row, (pk, date, created_at, edited, changes) in rows_read(ids, with_tags=ruleset.uses_tags):
        low: dict[str, str] = {}
        if not rule.test(row, low):
            continue
        matched += 1
        before = dict(row)
        changed = rule.act(row, low, edited)
        if not changed:
            continue
        outcome = Outcome(pk=pk, order=(date, created_at, pk))
        for name in changed:
            if name == "tags":
                outcome.tags_added = row["tags"] - before["tags"]
                outcome.tags_removed = before["tags"] - row["tags"]
            else:
                column = _STORED[name]
                outcome.values[column] = row[column]
        if "merchant" in changed and row.get(MERCHANT_RECORD) is None:
            outcome.values.pop("merchant_id", None)  # a preview: the merchant is not made
        outcome.rule_changes = rule_changes_merge(changes, [(rule.id, changed)])
        outcomes.append(outcome)
    return matched, outcomes
