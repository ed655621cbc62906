"""Rules (decisions.md "Rules"): list, get, create, update (PATCH; PUT behaves the same),
delete; preview over stored transactions; apply to them as a background run."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.viewsets import FamilyViewSet
from finance.models import Rule, RuleRun
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


class RuleViewSet(FamilyViewSet):
    serializer_class = RuleSerializer
    results_key = "rules"

    def get_queryset(self) -> QuerySet[Rule]:
        return Rule.objects.filter(family=self.family)

    def _body(self, request: Request) -> dict:
        body = RuleRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return body.validated_data["rule"]

    @extend_schema(
        parameters=[OpenApiParameter("active", bool)],
        responses=RuleSerializer(many=True),
        description="The household's rules in the order they apply (position, then creation).",
    )
    def list(self, request: Request) -> Response:
        return self.paginated(rule_list(family=self.family, params=request.query_params))

    @extend_schema(responses=RuleSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(RuleSerializer(self.get_object()).data)

    @extend_schema(request=RuleCreateRequestDocSerializer, responses={201: RuleSerializer})
    def create(self, request: Request) -> Response:
        rule = rule_create(family=self.family, data=self._body(request))
        return Response(RuleSerializer(rule).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=RuleUpdateRequestDocSerializer, responses=RuleSerializer)
    def partial_update(self, request: Request, pk: str) -> Response:
        rule = self.get_object()
        rule_update(rule=rule, data=self._body(request))
        return Response(RuleSerializer(rule).data)

    @extend_schema(request=RuleUpdateRequestDocSerializer, responses=RuleSerializer)
    def update(self, request: Request, pk: str) -> Response:
        return self.partial_update(request, pk)

    @extend_schema(responses={200: DeletedSerializer})
    def destroy(self, request: Request, pk: str) -> Response:
        rule_delete(rule=self.get_object())
        return deleted_response("Rule")

    @extend_schema(
        request=None,
        responses={200: RulePreviewSerializer},
        description=(
            "The stored transactions this rule would change (fields the household edited "
            "itself excepted): their count and the first 25, newest first. Nothing changes."
        ),
    )
    @action(detail=True, methods=["post"])
    def preview(self, request: Request, pk: str) -> Response:
        count, transactions = rule_preview(rule=self.get_object())
        return Response(rule_preview_response(count, transactions))

    @extend_schema(
        request=None,
        responses={202: RuleRunSerializer},
        description=(
            "Apply this rule to the stored transactions, in the background: answers the run "
            "(GET /api/v1/rule_runs/{id} for its progress). A run of this rule that has not "
            "finished is answered instead of starting another."
        ),
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
        parameters=[OpenApiParameter("rule_id", str, description="uuid")],
        responses=RuleRunSerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        return self.paginated(rule_run_list(family=self.family, params=request.query_params))

    @extend_schema(responses=RuleRunSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(RuleRunSerializer(self.get_object()).data)
