"""The household's rules run on every new row before it is written, whatever its road: built
rows (`LedgerBatch.add` for the API, bulk and trades) and rows given as tuples
(`write_values` for an import's publish and a sync's new rows).

The rules are loaded and compiled once per batch and household (finance/rules/loading.py);
each row is read into a plain dict, run through them, and only the fields they changed are
written back, with the row's `rule_changes` (which rule set what)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from finance.models import Merchant, Tag, Transaction
from finance.rules.engine import MERCHANT_RECORD, Row, RuleSet, rule_changes_merge
from finance.rules.loading import ruleset_compile

NO_TAGS: frozenset[uuid.UUID] = frozenset()


class BatchRules:
    """Each household's compiled rules, loaded the first time a batch writes its rows."""

    def __init__(self) -> None:
        self._sets: dict[uuid.UUID, RuleSet | None] = {}
        self._merchant_names: dict[uuid.UUID, str] = {}

    def of(self, family_id: uuid.UUID) -> RuleSet | None:
        if family_id not in self._sets:
            self._sets[family_id] = ruleset_compile(family_id=family_id)
        return self._sets[family_id]

    def merchant_names(self, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, str]:
        missing = {pk for pk in ids if pk is not None and pk not in self._merchant_names}
        if missing:
            self._merchant_names.update(
                Merchant.objects.filter(pk__in=missing).values_list("pk", "name")
            )
        return self._merchant_names

    # -- built rows -------------------------------------------------------------------------
    def apply_to_rows(
        self, rows: Sequence[tuple[Transaction, list[Tag] | None]]
    ) -> dict[uuid.UUID, list[Tag]]:
        """Run the rules over built rows, changing them in place; the new tag lists of the rows
        whose tags the rules changed (by row id)."""
        new_tags: dict[uuid.UUID, list[Tag]] = {}
        for family_id in {txn.family_id for txn, _ in rows}:
            ruleset = self.of(family_id)
            if ruleset is None:
                continue
            mine = [(txn, tags) for txn, tags in rows if txn.family_id == family_id]
            names = self._names_of(ruleset, [txn for txn, _ in mine])
            for txn, tags in mine:
                changed = _apply_to_row(ruleset, txn, tags, names)
                if changed is not None:
                    new_tags[txn.pk] = changed
        return new_tags

    def _names_of(self, ruleset: RuleSet, txns: list[Transaction]) -> dict[uuid.UUID, str]:
        """Merchant names of rows whose merchant is not loaded, when a rule reads them."""
        if not ruleset.reads_merchant:
            return {}
        return self.merchant_names(
            txn.merchant_id
            for txn in txns
            if txn.merchant_id is not None and not Transaction.merchant.is_cached(txn)
        )

    # -- rows as tuples ---------------------------------------------------------------------
    def apply_to_values(
        self, names: Sequence[str], rows: list[tuple], tag_links: list[tuple[Any, Any]]
    ) -> tuple[list[tuple[Sequence[str], list[tuple]]], list[tuple[Any, Any]]]:
        """Run the rules over rows given as tuples in the order of `names`; returns the rows
        to write as groups of (names, rows), and the tag links. The rows no rule changed
        stay as given; those changed form a group with the columns the rules set."""
        at = {name: i for i, name in enumerate(names)}
        for name in list(at):  # a relation given by its column name ("category_id")
            if name.endswith("_id"):
                at.setdefault(name.removesuffix("_id"), at[name])
        family_at = at["family"]
        rulesets = {f: self.of(f) for f in {row[family_at] for row in rows}}
        if not any(rulesets.values()):
            return [(names, rows)], tag_links
        tags_of: dict[Any, set[Any]] = {}
        if any(r.uses_tags for r in rulesets.values() if r):
            for txn_id, tag_id in tag_links:
                tags_of.setdefault(txn_id, set()).add(tag_id)
        read = _tuple_reader(at)
        merchant_at = at.get("merchant")
        changes: dict[int, tuple[Row, list[tuple[str, list[str]]]]] = {}
        for index, values in enumerate(rows):
            ruleset = rulesets[values[family_at]]
            if ruleset is None:
                continue
            row = read(values)
            if ruleset.reads_merchant and merchant_at is not None and values[merchant_at]:
                row["merchant"] = self.merchant_names([values[merchant_at]]).get(
                    values[merchant_at]
                )
            if ruleset.uses_tags:
                row["tags"] = frozenset(tags_of.get(values[at["id"]], NO_TAGS))
            applied = ruleset.run(row)
            if applied:
                changes[index] = (row, applied)
        if not changes:
            return [(names, rows)], tag_links
        return _values_write(names, at, rows, tag_links, changes)


_COLUMNS = {  # a field rules set -> (column name, where the row dict holds its value)
    "category": ("category", "category_id"),
    "merchant": ("merchant", "merchant_id"),
    "name": ("name", "name"),
    "notes": ("notes", "notes"),
    "excluded": ("excluded", "excluded"),
}


def _as_uuid(value: Any) -> uuid.UUID | None:
    if value is None or type(value) is uuid.UUID:
        return value
    return uuid.UUID(str(value))


def _tuple_reader(at: dict[str, int]) -> Any:
    def index(name: str) -> int | None:
        return at.get(name)

    i_name, i_notes, i_amount = index("name"), index("notes"), index("amount")
    i_account, i_category, i_merchant = index("account"), index("category"), index("merchant")
    i_currency, i_date, i_source, i_excluded = (
        index("currency"),
        index("date"),
        index("source"),
        index("excluded"),
    )

    def value(values: tuple, i: int | None, default: Any = None) -> Any:
        return default if i is None else values[i]

    def read(values: tuple) -> Row:
        return {
            "name": values[i_name],
            "notes": value(values, i_notes),
            "merchant": None,
            "merchant_id": _as_uuid(value(values, i_merchant)),
            "amount": values[i_amount],
            "account_id": _as_uuid(values[i_account]),
            "category_id": _as_uuid(value(values, i_category)),
            "currency": value(values, i_currency),
            "date": values[i_date],
            "source": value(values, i_source),
            "excluded": value(values, i_excluded, False),
            "tags": NO_TAGS,
        }

    return read


def _values_write(
    names: Sequence[str],
    at: dict[str, int],
    rows: list[tuple],
    tag_links: list[tuple[Any, Any]],
    changes: dict[int, tuple[Row, list[tuple[str, list[str]]]]],
) -> tuple[list[tuple[Sequence[str], list[tuple]]], list[tuple[Any, Any]]]:
    """The rows no rule changed as they were, then the changed ones with every column a rule
    set on any of them (and `rule_changes`); the tag links with the rules' changes."""
    fields = {f for _, applied in changes.values() for _, set_ in applied for f in set_}
    extra = [_COLUMNS[f][0] for f in _COLUMNS if f in fields and _COLUMNS[f][0] not in at]
    extra.append("rule_changes")
    defaults = tuple(Transaction._meta.get_field(name).get_default() for name in extra)
    new_names = [*names, *extra]
    where = {**at, **{name: len(names) + i for i, name in enumerate(extra)}}
    id_at = at["id"]
    tags_changed: dict[Any, frozenset[Any]] = {}
    kept = [values for index, values in enumerate(rows) if index not in changes]
    out: list[tuple] = []
    for index, (row, applied) in changes.items():
        values = rows[index]
        line = [*values, *defaults]
        for field in {f for _, set_ in applied for f in set_}:
            if field == "tags":
                tags_changed[values[id_at]] = row["tags"]
                continue
            column, key = _COLUMNS[field]
            line[where[column]] = row[key]
        line[where["rule_changes"]] = rule_changes_merge(None, applied)
        out.append(tuple(line))
    if tags_changed:
        tag_links = [link for link in tag_links if link[0] not in tags_changed]
        tag_links.extend((txn_id, tag) for txn_id, tags in tags_changed.items() for tag in tags)
    return [(names, kept), (new_names, out)], tag_links


def _apply_to_row(
    ruleset: RuleSet, txn: Transaction, tags: list[Tag] | None, names: dict[uuid.UUID, str]
) -> list[Tag] | None:
    """Run the rules over one built row, writing back what they changed; the row's new tag
    list when they changed its tags (else None)."""
    merchant = None
    if ruleset.reads_merchant and txn.merchant_id is not None:
        cached = Transaction.merchant.is_cached(txn)
        merchant = txn.merchant.name if cached else names.get(txn.merchant_id)
    tag_ids = frozenset(t.pk for t in tags or ()) if ruleset.uses_tags else NO_TAGS
    row: Row = {
        "name": txn.name,
        "notes": txn.notes,
        "merchant": merchant,
        "merchant_id": txn.merchant_id,
        "amount": txn.amount,
        "account_id": txn.account_id,
        "category_id": txn.category_id,
        "currency": txn.currency,
        "date": txn.date,
        "source": txn.source,
        "excluded": txn.excluded,
        "tags": tag_ids,
    }
    applied = ruleset.run(row)
    if not applied:
        return None
    fields = {f for _, set_ in applied for f in set_}
    if "category" in fields:
        txn.category = ruleset.refs.categories[row["category_id"]]
    if "merchant" in fields:
        txn.merchant = row[MERCHANT_RECORD]
    for name in ("name", "notes", "excluded"):
        if name in fields:
            setattr(txn, name, row[name])
    txn.rule_changes = rule_changes_merge(txn.rule_changes, applied)
    if "tags" not in fields:
        return None
    kept = [t for t in tags or () if t.pk in row["tags"]]
    added = [ruleset.refs.tags[pk] for pk in row["tags"] - {t.pk for t in kept}]
    return kept + sorted(added, key=lambda t: (t.name, str(t.pk)))
