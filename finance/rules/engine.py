"""Rules compiled once and run over many rows.

A row is a plain dict of the fields rules read and write (ROW_KEYS); `RuleSet.run` runs the
household's rules over it in order, each seeing the changes of those before it, and returns
which rule set which fields. Compiling does the work once per batch instead of once per row:
conditions become closures with their values parsed (text casefolded, expressions compiled,
amounts and dates parsed, ids as UUIDs), actions hold the records they name.

Regular expressions run with a time bound: an evaluation that runs out of time counts as no
match, and a condition that runs out of time MAX_TIMEOUTS times is skipped (no match) for the
rest of the batch, so one pathological expression cannot stall an import."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import regex

from finance.rules.definitions import ACTIONS, FIELDS, ID, NUMBER, TEXT
from finance.rules.gates import expression_literals, rule_runs

logger = logging.getLogger("finance")

REGEX_TIMEOUT = 0.05  # seconds, per evaluation
MAX_TIMEOUTS = 3
ROW_KEYS = (
    "name",
    "notes",
    "merchant",  # the merchant's name
    "merchant_id",
    "amount",
    "account_id",
    "category_id",
    "currency",
    "date",
    "source",
    "excluded",
    "tags",  # a set of tag ids (only filled when a rule adds or removes tags)
)
# Where `set_merchant` leaves the merchant record it set (the writer assigns it to the row).
MERCHANT_RECORD = "merchant_record"
Row = dict[str, Any]
Test = Callable[[Row, dict[str, str]], bool]


class MerchantTarget:
    """The merchant a `set_merchant` action names: a stored one, or a name that becomes one the
    first time the action changes a row (never, when `create` is None: a preview)."""

    def __init__(self, name: str, merchant: Any = None, create: Callable[[str], Any] | None = None):
        self.name = name
        self.merchant = merchant
        self._create = create

    @property
    def pk(self) -> uuid.UUID | None:
        return self.merchant.pk if self.merchant is not None else None

    def resolve(self) -> Any:
        if self.merchant is None and self._create is not None:
            self.merchant = self._create(self.name)
        return self.merchant


@dataclass
class Refs:
    """The household's records that rules name, loaded once."""

    categories: dict[uuid.UUID, Any] = field(default_factory=dict)
    tags: dict[uuid.UUID, Any] = field(default_factory=dict)
    merchants: dict[str, MerchantTarget] = field(default_factory=dict)  # by the action's value


def _lowered(name: str) -> Callable[[Row, dict[str, str]], str]:
    def lowered(row: Row, low: dict[str, str]) -> str:
        value = low.get(name)
        if value is None:
            raw = row[name]
            value = low[name] = raw.casefold() if raw else ""
        return value

    return lowered


class _Timeouts:
    def __init__(self, rule_name: str) -> None:
        self.rule_name = rule_name
        self.count = 0

    def spent(self) -> bool:
        return self.count >= MAX_TIMEOUTS

    def add(self) -> None:
        self.count += 1
        if self.count == MAX_TIMEOUTS:
            logger.warning("rule %r: its expression ran out of time, skipped", self.rule_name)


def _text_test(name: str, operator: str, value: Any, timeouts: _Timeouts) -> Test:
    lowered = _lowered(name)
    if operator == "matches":
        pattern = regex.compile(value, regex.IGNORECASE)
        pieces = expression_literals(value)

        def matches(row: Row, low: dict[str, str]) -> bool:
            if pieces:  # looking for its words first is far cheaper than running it
                text = lowered(row, low)
                for piece in pieces:
                    if piece not in text:
                        return False
            if timeouts.spent():
                return False
            try:
                return pattern.search(row[name] or "", timeout=REGEX_TIMEOUT) is not None
            except TimeoutError:
                timeouts.add()
                return False

        return matches
    needle = value.casefold()
    if operator == "contains":
        # The hottest test of all: the casefolded field read without a further call.
        def contains(row: Row, low: dict[str, str]) -> bool:
            text = low.get(name)
            if text is None:
                raw = row[name]
                text = low[name] = raw.casefold() if raw else ""
            return needle in text

        return contains
    if operator == "equals":
        return lambda row, low: lowered(row, low) == needle
    if operator == "starts_with":
        return lambda row, low: lowered(row, low).startswith(needle)
    return lambda row, low: lowered(row, low).endswith(needle)  # ends_with


def _ordered_test(name: str, operator: str, value: Any, parse: Callable[[Any], Any]) -> Test:
    if operator == "between":
        low_value, high_value = parse(value[0]), parse(value[1])
        return lambda row, low: (v := row[name]) is not None and low_value <= v <= high_value
    bound = parse(value)
    if operator == "equals":
        return lambda row, low: row[name] == bound
    if operator == "gt":
        return lambda row, low: (v := row[name]) is not None and v > bound
    if operator == "gte":
        return lambda row, low: (v := row[name]) is not None and v >= bound
    if operator == "lt":
        return lambda row, low: (v := row[name]) is not None and v < bound
    return lambda row, low: (v := row[name]) is not None and v <= bound  # lte


def _condition_test(condition: dict[str, Any], timeouts: _Timeouts) -> Test:
    name, operator, value = condition["field"], condition["operator"], condition["value"]
    kind = FIELDS[name]
    if operator == "is_empty":
        if kind == TEXT:
            return lambda row, low: (not (row[name] or "").strip()) is value
        return lambda row, low: (row[name] is None) is value
    if kind == TEXT:
        return _text_test(name, operator, value, timeouts)
    if kind == ID:
        if operator == "in":
            ids = frozenset(uuid.UUID(v) for v in value)
            return lambda row, low: row[name] in ids
        one = uuid.UUID(value)
        return lambda row, low: row[name] == one
    parse = Decimal if kind == NUMBER else dt.date.fromisoformat
    return _ordered_test(name, operator, value, parse)


def _all(tests: Sequence[Test]) -> Test:
    if len(tests) == 1:
        return tests[0]

    def every(row: Row, low: dict[str, str]) -> bool:
        # A plain loop, not all(generator): this runs for every row and rule.
        for test in tests:  # noqa: SIM110
            if not test(row, low):
                return False
        return True

    return every


def _any(tests: Sequence[Test]) -> Test:
    if len(tests) == 1:
        return tests[0]

    def some(row: Row, low: dict[str, str]) -> bool:
        for test in tests:  # noqa: SIM110
            if test(row, low):
                return True
        return False

    return some


# An action: change the row when it differs from what the action wants; True when it did.
Act = Callable[[Row, dict[str, str]], bool]


def _action(action: dict[str, Any], refs: Refs) -> Act | None:
    """The action as a closure; None when the record it names is gone (deleted since)."""
    kind, value = action["type"], action["value"]
    if kind == "set_category":
        category = refs.categories.get(uuid.UUID(value))
        if category is None:
            return None

        def set_category(row: Row, low: dict[str, str]) -> bool:
            if row["category_id"] == category.pk:
                return False
            row["category_id"] = category.pk
            return True

        return set_category
    if kind == "set_merchant":
        target = refs.merchants.get(value)
        if target is None:
            return None

        def set_merchant(row: Row, low: dict[str, str]) -> bool:
            if target.pk is not None and row["merchant_id"] == target.pk:
                return False
            merchant = target.resolve()
            row["merchant_id"] = merchant.pk if merchant is not None else None
            row["merchant"] = target.name if merchant is None else merchant.name
            row[MERCHANT_RECORD] = merchant
            low.pop("merchant", None)
            return True

        return set_merchant
    if kind in ("add_tags", "remove_tags"):
        ids = frozenset(pk for v in value if (pk := uuid.UUID(v)) in refs.tags)
        if not ids:
            return None
        if kind == "add_tags":

            def add_tags(row: Row, low: dict[str, str]) -> bool:
                if ids <= row["tags"]:
                    return False
                row["tags"] = row["tags"] | ids
                return True

            return add_tags

        def remove_tags(row: Row, low: dict[str, str]) -> bool:
            if not ids & row["tags"]:
                return False
            row["tags"] = row["tags"] - ids
            return True

        return remove_tags
    key = {"set_name": "name", "set_notes": "notes", "exclude": "excluded"}[kind]

    def set_value(row: Row, low: dict[str, str]) -> bool:
        if row[key] == value or (key == "notes" and not row[key] and not value):
            return False
        row[key] = value
        low.pop(key, None)
        return True

    return set_value


class CompiledRule:
    __slots__ = ("actions", "id", "name", "test")

    def __init__(self, rule: Any, refs: Refs) -> None:
        self.id = str(rule.id)
        self.name = rule.name
        timeouts = _Timeouts(rule.name)
        tests = [_condition_test(c, timeouts) for c in rule.conditions]
        self.test = _any(tests) if rule.match == "any" else _all(tests)
        self.actions: list[tuple[str, Act]] = [
            (ACTIONS[a["type"]], act) for a in rule.actions if (act := _action(a, refs))
        ]

    def act(self, row: Row, low: dict[str, str], edited: Iterable[str] = ()) -> list[str]:
        """Run the actions on a matching row (leaving the `edited` fields alone); the fields
        they changed."""
        changed: list[str] = []
        for name, act in self.actions:
            if name not in edited and act(row, low) and name not in changed:
                changed.append(name)
        return changed


class RuleSet:
    """A household's active rules, in order, compiled once for a batch of rows."""

    def __init__(self, rules: Sequence[Any], refs: Refs) -> None:
        self.refs = refs
        self.rules = [CompiledRule(rule, refs) for rule in rules]
        kinds = {a["type"] for rule in rules for a in rule.actions}
        self.uses_tags = bool(kinds & {"add_tags", "remove_tags"})
        self.reads_merchant = any(c["field"] == "merchant" for r in rules for c in r.conditions)
        self.sets = {ACTIONS[kind] for kind in kinds}
        self.steps = [
            (union, _lowered(name) if union else None, [self.rules[i] for i in indexes])
            for union, name, indexes in rule_runs(rules)
        ]

    def run(self, row: Row, edited: Iterable[str] = ()) -> list[tuple[str, list[str]]]:
        """Run every rule over the row, in order, changing it in place; (rule id, fields it
        changed) for each rule that changed something."""
        low: dict[str, str] = {}
        applied = []
        for union, lowered, rules in self.steps:
            if union is not None and union.search(lowered(row, low)) is None:
                continue  # none of these rules can match (finance/rules/gates.py)
            for rule in rules:
                if rule.test(row, low):
                    changed = rule.act(row, low, edited)
                    if changed:
                        applied.append((rule.id, changed))
        return applied


def rule_changes_merge(
    existing: Sequence[dict[str, Any]] | None, applied: Sequence[tuple[str, list[str]]]
) -> list[dict[str, Any]]:
    """A row's record of which rule set what, with `applied` added (a rule that changed the row
    before keeps its place, and gains the fields it set now)."""
    out = [{"rule": c["rule"], "set": list(c["set"])} for c in existing or ()]
    by_rule = {c["rule"]: c for c in out}
    for rule_id, fields in applied:
        change = by_rule.get(rule_id)
        if change is None:
            change = by_rule[rule_id] = {"rule": rule_id, "set": []}
            out.append(change)
        change["set"].extend(f for f in fields if f not in change["set"])
    return out
