"""A household's rules (decisions.md "Rules"): conditions on a transaction's fields, actions
that set its category, merchant, tags, name, notes or exclusion; and the runs that apply one
rule to the transactions already stored.

A rule's `conditions` and `actions` are stored as validated JSON (finance/rules/definitions.py
checks and normalises them; finance/rules/engine.py compiles them once per ledger batch)."""

from __future__ import annotations

import uuid

from django.db import models

from finance.models.household import Family


class Rule(models.Model):
    class Match(models.TextChoices):
        ALL = "all"
        ANY = "any"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="rules")
    name = models.CharField(max_length=255)
    active = models.BooleanField(default=True)
    match = models.CharField(max_length=3, choices=Match.choices, default=Match.ALL)
    # [{"field", "operator", "value"}] and [{"type", "value"}], as the API shows them.
    conditions = models.JSONField(default=list)
    actions = models.JSONField(default=list)
    # Order of application, lower first; ties by creation.
    position = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "created_at", "id"]
        indexes = [models.Index(fields=["family", "active", "position"], name="rule_family_order")]

    def __str__(self) -> str:
        return self.name


class RuleRun(models.Model):
    """One application of a rule to a household's stored transactions (a background task)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        COMPLETED = "completed"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="rule_runs")
    # A run outlives its rule: the record of what it did stays.
    rule = models.ForeignKey(
        Rule, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Transactions whose fields met the conditions, and those the actions changed.
    matched = models.IntegerField(default=0)
    changed = models.IntegerField(default=0)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Run of {self.rule_id}: {self.status}"
