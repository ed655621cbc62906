"""Rules and rule runs: request bodies (under the `rule` root key) and responses.

A rule's body is checked by the service (finance/rules/definitions.py), which names every
problem by its path (`conditions[0].operator: ...`); the shapes here only require the root key
to hold an object, and describe the body for the OpenAPI document."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from finance.models import Rule, RuleRun
from finance.rules.definitions import ACTIONS, FIELDS, MATCHES, OPERATORS
from finance.serializers.fields import UtcDateTimeField, envelope, iso_utc
from finance.serializers.transactions import TransactionSerializer

_OPERATORS = sorted({op for ops in OPERATORS.values() for op in ops})
_VALUE = {
    "description": (
        "text: a string (`matches`: a regular expression); amount: a number or decimal string; "
        "date: YYYY-MM-DD; `between`: [low, high]; ids: a uuid, `in`: a list of uuids; "
        "`is_empty`: true (the default) or false"
    ),
    "nullable": True,
}


@extend_schema_field(_VALUE)
class _ConditionValue(serializers.JSONField):
    pass


@extend_schema_field(
    {
        "description": (
            "set_category: a category id; set_merchant: a merchant id or a name (created when "
            "first used); add_tags / remove_tags: tag ids; set_name, set_notes: a string; "
            "exclude: true or false"
        ),
        "nullable": True,
    }
)
class _ActionValue(serializers.JSONField):
    pass


class RuleConditionSerializer(serializers.Serializer):
    field = serializers.ChoiceField(choices=list(FIELDS))
    operator = serializers.ChoiceField(choices=_OPERATORS)
    value = _ConditionValue(required=False)

    class Meta:
        ref_name = "RuleCondition"
        description = "A condition: the transaction's `field`, an `operator` and its `value`."


class RuleActionSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=list(ACTIONS))
    value = _ActionValue()

    class Meta:
        ref_name = "RuleAction"
        description = "An action: what it does (`type`) and its `value`."


class RuleFieldsSerializer(serializers.Serializer):
    """What the OpenAPI document shows of a rule's body."""

    name = serializers.CharField(max_length=255)
    active = serializers.BooleanField(required=False, default=True)
    match = serializers.ChoiceField(choices=list(MATCHES), required=False, default="all")
    conditions = RuleConditionSerializer(many=True, min_length=1, max_length=50)
    actions = RuleActionSerializer(many=True, min_length=1, max_length=20)
    position = serializers.IntegerField(required=False, min_value=0)

    class Meta:
        ref_name = "RuleFields"
        description = "A rule's fields, under the `rule` key."


class RuleUpdateFieldsSerializer(RuleFieldsSerializer):
    class Meta:
        ref_name = "RuleUpdateFields"
        description = "The fields to change, under the `rule` key: only what is sent changes."

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


RuleCreateRequestDocSerializer = envelope("rule", RuleFieldsSerializer(), ref_name="RuleCreate")
RuleUpdateRequestDocSerializer = envelope(
    "rule", RuleUpdateFieldsSerializer(), ref_name="RuleUpdate"
)
# The request as checked here: `rule` holds an object (the service checks the rest).
RuleRequestSerializer = envelope("rule", serializers.DictField(), ref_name="RuleRequestEnvelope")


class RuleSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    active = serializers.BooleanField()
    match = serializers.ChoiceField(choices=list(MATCHES))
    conditions = RuleConditionSerializer(many=True)
    actions = RuleActionSerializer(many=True)
    position = serializers.IntegerField()
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Rule"
        description = (
            "A rule: when a transaction meets `all` (or `any`) of its conditions, its actions "
            "set the transaction's fields. Rules apply in `position` order, lower first."
        )

    def to_representation(self, rule: Rule) -> dict[str, Any]:
        return {
            "id": str(rule.id),
            "name": rule.name,
            "active": rule.active,
            "match": rule.match,
            "conditions": rule.conditions,
            "actions": rule.actions,
            "position": rule.position,
            "created_at": iso_utc(rule.created_at),
            "updated_at": iso_utc(rule.updated_at),
        }


class RulePreviewSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="stored transactions the rule would change")
    transactions = TransactionSerializer(many=True, help_text="the first 25, newest first")

    class Meta:
        ref_name = "RulePreview"
        description = "What a rule would change: how many stored transactions, and the first 25."


def rule_preview_response(count: int, transactions: list[Any]) -> dict[str, Any]:
    to_json = TransactionSerializer().to_representation
    return {"count": count, "transactions": [to_json(txn) for txn in transactions]}


class RuleRunSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    rule_id = serializers.UUIDField(allow_null=True)
    status = serializers.ChoiceField(choices=RuleRun.Status.choices)
    matched = serializers.IntegerField(help_text="transactions whose fields met the conditions")
    changed = serializers.IntegerField(help_text="transactions the actions changed")
    error = serializers.CharField(allow_null=True)
    created_at = UtcDateTimeField()
    started_at = UtcDateTimeField(allow_null=True)
    finished_at = UtcDateTimeField(allow_null=True)
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "RuleRun"
        description = (
            "One run of a rule over the household's stored transactions, and its progress."
        )

    def to_representation(self, run: RuleRun) -> dict[str, Any]:
        return {
            "id": str(run.id),
            "rule_id": str(run.rule_id) if run.rule_id else None,
            "status": run.status,
            "matched": run.matched,
            "changed": run.changed,
            "error": run.error or None,
            "created_at": iso_utc(run.created_at),
            "started_at": iso_utc(run.started_at),
            "finished_at": iso_utc(run.finished_at),
            "updated_at": iso_utc(run.updated_at),
        }
