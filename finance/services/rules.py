"""A household's rules: create, update, delete; and applying one rule to the transactions
already stored, as a background run in chunks (each chunk one ledger batch)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import uuid
from collections.abc import Mapping
from typing import Any, Unpack

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from core.errors import ValidationFailed
from core.tasks import enqueue_on_commit
from finance.ledger import LedgerBatch, ledger_batch
from finance.models import Family, Rule, RuleRun, Tag, Transaction
from finance.rules.definitions import RuleFields, rule_fields_validate
from finance.rules.existing import Outcome, candidate_chunks, rule_candidates, rule_outcomes
from finance.rules.loading import ruleset_compile

logger = logging.getLogger("finance")
RUN_TASK = "finance.rule_run"
# A run that has not moved for this long lost its worker (a chunk takes seconds).
RUN_ABANDONED = dt.timedelta(minutes=30)


def rule_create(*, family: Family, **given: Unpack[RuleFields]) -> Rule:
    """A new rule; without a `position` it goes after the household's others."""
    fields = rule_fields_validate(family=family, data=given)
    if "position" not in fields:
        last = Rule.objects.filter(family=family).aggregate(last=Max("position"))["last"]
        fields["position"] = 0 if last is None else last + 1
    return Rule.objects.create(family=family, **fields)


def rule_update(*, rule: Rule, **given: Unpack[RuleFields]) -> Rule:
    """Change the fields given; a list given (conditions, actions) replaces the stored one."""
    fields = rule_fields_validate(family=rule.family, data=given, partial=True)
    for name, value in fields.items():
        setattr(rule, name, value)
    rule.save()
    return rule


def rule_delete(*, rule: Rule) -> None:
    """Delete a rule. What it set stays, and transactions keep its id in `rule_ids`."""
    rule.delete()


def rule_apply_request(*, rule: Rule) -> RuleRun:
    """Queue a run of the rule over the household's stored transactions; a run of it still
    waiting or running is answered instead of a second one (unless it has not moved for
    RUN_ABANDONED: its worker is gone, and it is marked failed)."""
    with transaction.atomic():
        Rule.objects.select_for_update().filter(pk=rule.pk).first()
        active = RuleRun.objects.filter(
            rule=rule, status__in=(RuleRun.Status.PENDING, RuleRun.Status.RUNNING)
        ).first()
        if active is not None and active.updated_at > timezone.now() - RUN_ABANDONED:
            return active
        if active is not None:
            RuleRun.objects.filter(pk=active.pk).update(
                status=RuleRun.Status.FAILED,
                error="abandoned: no progress for a long time (the worker stopped?)",
                finished_at=timezone.now(),
                updated_at=timezone.now(),
            )
        run = RuleRun.objects.create(family_id=rule.family_id, rule=rule)
        enqueue_on_commit(RUN_TASK, str(run.pk))
    return run


def rule_run_execute(*, run_id: uuid.UUID | str) -> RuleRun | None:
    """The worker side of an apply: the rule over every stored row it may match, a chunk at a
    time (each chunk one ledger batch, committed on its own, its counts added to the run).
    Idempotent: a second run of the same rule changes nothing."""
    moved = RuleRun.objects.filter(pk=run_id, status=RuleRun.Status.PENDING).update(
        status=RuleRun.Status.RUNNING, started_at=timezone.now(), updated_at=timezone.now()
    )
    run = RuleRun.objects.select_related("rule", "family").filter(pk=run_id).first()
    if run is None or not moved:
        return run
    try:
        if run.rule is None:
            raise ValidationFailed(["rule_id: the rule was deleted"])
        for ids in candidate_chunks(rule_candidates(run.rule)):
            matched, changed = _run_chunk(run.rule, ids)
            RuleRun.objects.filter(pk=run.pk).update(
                matched=F("matched") + matched,
                changed=F("changed") + changed,
                updated_at=timezone.now(),
            )
    except Exception as exc:
        logger.exception("rule run %s failed", run.pk)
        RuleRun.objects.filter(pk=run.pk).update(
            status=RuleRun.Status.FAILED,
            error=f"{exc.__class__.__name__}: {exc}"[:1000],
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
    else:
        RuleRun.objects.filter(pk=run.pk).update(
            status=RuleRun.Status.COMPLETED, finished_at=timezone.now(), updated_at=timezone.now()
        )
    run.refresh_from_db()
    return run


def _run_chunk(rule: Rule, ids: list[Any]) -> tuple[int, int]:
    with ledger_batch(family=rule.family) as batch:
        # The rows stay as read until written: an edit racing this run waits for it.
        locked = list(
            Transaction.objects.select_for_update().filter(pk__in=ids).values_list("pk", flat=True)
        )
        ruleset = ruleset_compile(family_id=rule.family_id, rules=[rule])
        if ruleset is None or not locked:
            return 0, 0
        matched, outcomes = rule_outcomes(ruleset, locked)
        _outcomes_write(batch, outcomes, ruleset.refs.tags)
    return matched, len(outcomes)


def _outcomes_write(
    batch: LedgerBatch, outcomes: list[Outcome], tags: Mapping[uuid.UUID, Tag]
) -> None:
    """Write what the rule changed: one UPDATE per distinct set of new values, one tag link
    statement per tag."""
    groups: dict[tuple[Any, ...], list[uuid.UUID]] = {}
    added: dict[uuid.UUID, list[uuid.UUID]] = {}
    removed: dict[uuid.UUID, list[uuid.UUID]] = {}
    for outcome in outcomes:
        key = (
            tuple(sorted(outcome.values.items())),
            json.dumps(outcome.rule_changes, sort_keys=True),
        )
        groups.setdefault(key, []).append(outcome.pk)
        for tag_id in outcome.tags_added:
            added.setdefault(tag_id, []).append(outcome.pk)
        for tag_id in outcome.tags_removed:
            removed.setdefault(tag_id, []).append(outcome.pk)
    for (values, changes), ids in groups.items():
        batch.update_rows(
            Transaction.objects.filter(pk__in=ids), **dict(values), rule_changes=json.loads(changes)
        )
    for tag_id, ids in added.items():
        batch.tag(Transaction.objects.filter(pk__in=ids), tags[tag_id])
    for tag_id, ids in removed.items():
        batch.untag(Transaction.objects.filter(pk__in=ids), tags[tag_id])
