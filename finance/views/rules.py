"""Rules (decisions.md "Rules"): list, get, create, update (PATCH; PUT behaves the same),
delete; preview over stored transactions; apply to them as a background run."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import ValidationFailed
from core.filters import QueryFilters
from finance.api.viewsets import FamilyViewSet
from finance.models import Rule, RuleRun
from finance.rules.definitions import READ_ONLY_KEYS, RULE_KEYS, UNKNOWN_KEY
from finance.selectors.rules import rule_list, rule_preview, rule_run_list
from finance.serializers.common import DeletedSerializer, deleted_response
from finance.serializers.rules import (
    RuleCreateRequestDocSerializer,
    RulePreviewSerializer,
    RuleRequestSerializer,
    RuleRunSerializer,
    RuleSerializer,
    RuleUpdateRequestDocSerializer,
    rule_preview_response,
)
from finance.services.rules import rule_apply_request, rule_create, rule_delete, rule_update

INVALID = (
    "A 422 lists every problem, each named by its place in the rule (`name`, "
    "`conditions[0].operator`, `actions[1].value`); an id of another household's account, "
    "category, merchant or tag is refused as an unknown one."
)
NOT_FOUND = "An unknown id, or the id of another household's rule, is a 404."
PAGES = (
    "One page at a time: `page` (from 1) and `per_page` (25 by default, at most 100), with "
    "`pagination` beside the list."
)
RULE = (
    "A rule has a `name`, `active` (default true), `match` (`all` or `any` of its "
    "`conditions`), its `conditions` (`field`, `operator`, `value`), its `actions` (`type`, "
    "`value`) and a `position`: rules apply in position order, a later rule seeing what earlier "
    "ones changed, to every new transaction, whatever its road (API, bulk, import, provider "
    "sync), before it is stored. A field the household edited itself is never changed by a rule."
)


class RuleViewSet(FamilyViewSet):
    serializer_class = RuleSerializer
    results_key = "rules"
    root_key = "rule"

    def get_queryset(self) -> QuerySet[Rule]:
        return Rule.objects.filter(family=self.family)

    def _body(self, request: Request) -> dict[str, Any]:
        """The rule's fields as sent; a key a rule does not have is refused, the read-only
        ones (sent back from a GET) are left out."""
        body = RuleRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        fields = body.validated_data["rule"]
        unknown = [key for key in fields if key not in RULE_KEYS + READ_ONLY_KEYS]
        if unknown:
            raise ValidationFailed([f"{key}: {UNKNOWN_KEY}" for key in unknown])
        return {key: value for key, value in fields.items() if key in RULE_KEYS}

    @extend_schema(
        summary="List rules",
        description="The household's rules in the order they apply (position, then creation); "
        f"`active=true` or `false` narrows them. {PAGES}",
        parameters=[OpenApiParameter("active", bool)],
        responses=RuleSerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        f = QueryFilters(request.query_params)
        active = f.boolean("active")
        f.check()
        return self.paginated(rule_list(family=self.family, active=active))

    @extend_schema(
        summary="Get a rule", description=f"One rule, by id. {NOT_FOUND}", responses=RuleSerializer
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(RuleSerializer(self.get_object()).data)

    @extend_schema(
        summary="Create a rule",
        description=f"{RULE} Without a `position` the rule goes after the household's others. "
        f"Answers 201 with the rule. {INVALID}",
        request=RuleCreateRequestDocSerializer,
        responses={201: RuleSerializer},
    )
    def create(self, request: Request) -> Response:
        rule = rule_create(family=self.family, **self._body(request))
        return Response(RuleSerializer(rule).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Update a rule",
        description="Send the fields to change under the `rule` key; the others stay as they "
        f"are, and a list sent (conditions, actions) replaces the stored one. {INVALID} "
        f"{NOT_FOUND}",
        request=RuleUpdateRequestDocSerializer,
        responses=RuleSerializer,
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        rule = self.get_object()
        rule_update(rule=rule, **self._body(request))
        return Response(RuleSerializer(rule).data)

    @extend_schema(
        summary="Update a rule (PUT)",
        description="The same as PATCH: only the fields sent under the `rule` key change, none "
        f"is required. {INVALID} {NOT_FOUND}",
        request=RuleUpdateRequestDocSerializer,
        responses=RuleSerializer,
    )
    def update(self, request: Request, pk: str) -> Response:
        return self.partial_update(request, pk)

    @extend_schema(
        summary="Delete a rule",
        description='Deletes the rule and answers 200 with `{"message": "Rule deleted"}`. What '
        f"it set on transactions stays, and they keep its id in `rule_ids`. {NOT_FOUND}",
        responses={200: DeletedSerializer},
    )
    def destroy(self, request: Request, pk: str) -> Response:
        rule_delete(rule=self.get_object())
        return deleted_response("Rule")

    @extend_schema(
        summary="Preview a rule on stored transactions",
        description=(
            "The stored transactions this rule would change (fields the household edited "
            "itself excepted), active or not: their `count` and the first 25 of them, newest "
            f"first, as they are now. Nothing changes. {NOT_FOUND}"
        ),
        request=None,
        responses={200: RulePreviewSerializer},
    )
    @action(detail=True, methods=["post"])
    def preview(self, request: Request, pk: str) -> Response:
        count, transactions = rule_preview(rule=self.get_object())
        return Response(rule_preview_response(count, transactions))

    @extend_schema(
        summary="Apply a rule to stored transactions",
        description=(
            "Applies this rule (active or not) to the household's stored transactions in the "
            "background, and answers 202 with the run: its progress is at "
            "`GET /api/v1/rule_runs/{id}`. A run of this rule that has not finished is answered "
            "instead of starting another. Applying a rule again changes nothing it already "
            f"set. {NOT_FOUND}"
        ),
        request=None,
        responses={202: RuleRunSerializer},
    )
    @action(detail=True, methods=["post"])
    def apply(self, request: Request, pk: str) -> Response:
        run = rule_apply_request(rule=self.get_object())
        return Response(RuleRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class RuleRunViewSet(FamilyViewSet):
    serializer_class = RuleRunSerializer
    results_key = "rule_runs"

    def get_queryset(self) -> QuerySet[RuleRun]:
        return RuleRun.objects.filter(family=self.family)

    @extend_schema(
        summary="List rule runs",
        description="The household's runs of rules over stored transactions, newest first; "
        f"`rule_id` narrows them to one rule's. {PAGES} An invalid filter value is a 422 "
        "naming it.",
        parameters=[OpenApiParameter("rule_id", str, description="uuid")],
        responses=RuleRunSerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        f = QueryFilters(request.query_params)
        rule_id = f.uuid("rule_id")
        f.check()
        return self.paginated(rule_run_list(family=self.family, rule_id=rule_id))

    @extend_schema(
        summary="Get a rule run",
        description="One run of a rule over stored transactions: its `status` (`pending`, "
        "`running`, `completed`, `failed`), how many transactions it found `matched` and "
        f"`changed` so far, and when it started and finished. {NOT_FOUND}",
        responses=RuleRunSerializer,
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(RuleRunSerializer(self.get_object()).data)
