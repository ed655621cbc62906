"""Reads of rules and their runs, and a rule's preview over stored transactions."""

from __future__ import annotations

import heapq
import uuid
from typing import Any

from django.db.models import QuerySet

from finance.models import Family, Rule, RuleRun, Transaction
from finance.rules.existing import candidate_chunks, rule_candidates, rule_outcomes
from finance.rules.loading import ruleset_compile
from finance.selectors.transactions import transaction_base_queryset

PREVIEW_ROWS = 25


def rule_list(*, family: Family, active: bool | None = None) -> QuerySet[Rule]:
    """In the order they apply (position, then creation)."""
    qs = Rule.objects.filter(family=family)
    if active is not None:
        qs = qs.filter(active=active)
    return qs.order_by(*Rule._meta.ordering)


def rule_run_list(*, family: Family, rule_id: uuid.UUID | None = None) -> QuerySet[RuleRun]:
    qs = RuleRun.objects.filter(family=family)
    if rule_id is not None:
        qs = qs.filter(rule_id=rule_id)
    return qs.order_by("-created_at", "-id")


def rule_preview(*, rule: Rule) -> tuple[int, list[Transaction]]:
    """How many stored transactions the rule would change, and the first PREVIEW_ROWS of them
    in the transactions list's order (newest first), read as the list reads them. Nothing is
    written: a merchant the rule names but the household lacks is not created."""
    ruleset = ruleset_compile(family_id=rule.family_id, rules=[rule], create_merchants=False)
    if ruleset is None:
        return 0, []
    count = 0
    newest: list[tuple[Any, ...]] = []  # a min-heap of the newest PREVIEW_ROWS keys
    for ids in candidate_chunks(rule_candidates(rule)):
        _, outcomes = rule_outcomes(ruleset, ids)
        count += len(outcomes)
        for outcome in outcomes:
            if len(newest) < PREVIEW_ROWS:
                heapq.heappush(newest, outcome.order)
            else:
                heapq.heappushpop(newest, outcome.order)
    keys = sorted(newest, reverse=True)
    rows = transaction_base_queryset(family=rule.family).filter(pk__in=[k[2] for k in keys])
    by_pk = {txn.pk: txn for txn in rows}
    return count, [by_pk[k[2]] for k in keys if k[2] in by_pk]
