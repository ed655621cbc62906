"""A household's rules, compiled with the records they name: one query for the rules, one per
kind of record they name (categories, tags, merchants), once per batch."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Q

from finance.models import Category, Merchant, Rule, Tag
from finance.rules.engine import MerchantTarget, Refs, RuleSet


def rules_active(family_id: uuid.UUID) -> list[Rule]:
    return list(
        Rule.objects.filter(family_id=family_id, active=True).order_by(*Rule._meta.ordering)
    )


def ruleset_compile(
    *, family_id: uuid.UUID, rules: Sequence[Rule] | None = None, create_merchants: bool = True
) -> RuleSet | None:
    """The household's active rules (or `rules`) compiled; None when there are none.

    `create_merchants`: a `set_merchant` naming a merchant the household does not have yet
    creates it the first time it changes a row (False for a preview, which changes nothing)."""
    rules = rules_active(family_id) if rules is None else list(rules)
    if not rules:
        return None
    actions = [a for rule in rules for a in rule.actions]
    category_ids = {a["value"] for a in actions if a["type"] == "set_category"}
    tag_ids = {v for a in actions if a["type"] in ("add_tags", "remove_tags") for v in a["value"]}
    merchant_values = {a["value"] for a in actions if a["type"] == "set_merchant"}
    refs = Refs()
    if category_ids:
        refs.categories = {
            c.pk: c for c in Category.objects.filter(family_id=family_id, pk__in=category_ids)
        }
    if tag_ids:
        refs.tags = {t.pk: t for t in Tag.objects.filter(family_id=family_id, pk__in=tag_ids)}
    if merchant_values:
        refs.merchants = _merchant_targets(family_id, merchant_values, create_merchants)
    return RuleSet(rules, refs)


def _as_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _merchant_targets(
    family_id: uuid.UUID, values: set[str], create: bool
) -> dict[str, MerchantTarget]:
    """`set_merchant` values (an id, or a name matched without regard to case) -> targets."""
    ids = {v: pk for v in values if (pk := _as_uuid(v)) is not None}
    names = [v for v in values if v not in ids]
    by_id: dict[uuid.UUID, Merchant] = {}
    by_name: dict[str, Merchant] = {}
    if ids:
        by_id = {m.pk: m for m in Merchant.objects.filter(family_id=family_id, pk__in=ids.values())}
    if names:
        query = reduce(or_, (Q(name__iexact=n) for n in names))
        for merchant in Merchant.objects.filter(query, family_id=family_id).order_by("name"):
            by_name.setdefault(merchant.name.casefold(), merchant)

    def maker(name: str) -> Any:
        merchant, _ = Merchant.objects.get_or_create(family_id=family_id, name=name)
        return merchant

    out: dict[str, MerchantTarget] = {}
    for value, pk in ids.items():
        if pk in by_id:
            out[value] = MerchantTarget(by_id[pk].name, by_id[pk])
    for name in names:
        found = by_name.get(name.casefold())
        out[name] = MerchantTarget(name, found, maker if create else None)
    return out
