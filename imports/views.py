"""API viewsets of this app and their routes."""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from core.filters import QueryFilters
from finance.api.errors import ApiError, ValidationFailed
from finance.api.parsers import JSONObjectParser
from finance.api.schema import filter_parameters
from finance.api.viewsets import FamilyViewSet
from finance.models import Account
from imports import docs
from imports.models import Import, ImportRow
from imports.request_serializers import (
    ImportCreateRequestSerializer,
    ImportUpdateRequestSerializer,
    MappingsUpdateRequestSerializer,
    RowUpdateRequestSerializer,
)
from imports.selectors import (
    ImportFilters,
    ImportMappingFilters,
    ImportRowFilters,
    as_listed,
    import_list,
    import_mapping_list,
    import_row_list,
    mapping_targets,
    with_transaction_ids,
)
from imports.serializers import (
    ImportEnvelopeSerializer,
    ImportListSerializer,
    ImportMappingListSerializer,
    ImportRowEnvelopeSerializer,
    ImportRowListSerializer,
    import_representation,
    mapping_representation,
    row_representation,
)
from imports.services.config import CONFIG_KEYS
from imports.services.mappings import import_mappings_update, import_row_update
from imports.services.parse import import_configure, import_create
from imports.services.publish import import_blockers, import_publish
from imports.services.revert import import_revert

NOT_IN_HOUSEHOLD = "does not exist in this household"


def _too_large(size: int) -> ApiError:
    limit = settings.IMPORT_MAX_UPLOAD_BYTES
    return ApiError(
        413,
        "payload_too_large",
        f"The file is {size} bytes, over the upload limit of {limit} bytes.",
        details={"limit_bytes": limit, "size_bytes": size},
    )


class ImportViewSet(FamilyViewSet):
    results_key = "data"
    serializer_class = ImportEnvelopeSerializer

    def get_queryset(self) -> QuerySet[Import]:
        return Import.objects.filter(family=self.family).select_related("family")

    def get_parsers(self) -> list[BaseParser]:
        """The upload takes its file as multipart/form-data too; everything else is JSON only.
        DRF builds the parsers before it sets `action`, hence the method lookup."""
        action = getattr(self, "action", None) or self.action_map.get(self.request.method.lower())
        if action == "create":
            return [JSONObjectParser(), MultiPartParser()]
        return super().get_parsers()

    def _account(self, account_id: Any) -> Account | None:
        if account_id is None:
            return None
        account = Account.objects.filter(family=self.family, pk=account_id).first()
        if account is None:
            raise ValidationFailed([f"account_id: {NOT_IN_HOUSEHOLD}"])
        return account

    def _one(self, imp: Import, status: int = 200) -> Response:
        imp.refresh_from_db()
        return Response({"data": import_representation(imp)}, status=status)

    def _page(self, queryset: QuerySet, render: Any) -> Response:
        page = self.paginate_queryset(queryset)
        meta = self.paginator.pagination_meta()
        return Response({"data": [render(item) for item in page], "meta": meta})

    @extend_schema(
        summary="List imports",
        description=docs.LIST,
        parameters=filter_parameters(ImportFilters),
        responses=ImportListSerializer,
    )
    def list(self, request: Request) -> Response:
        filters = QueryFilters(request.query_params).parse(ImportFilters)
        return self._page(import_list(family=self.family, filters=filters), import_representation)

    @extend_schema(
        summary="Get an import", description=docs.RETRIEVE, responses=ImportEnvelopeSerializer
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        return self._one(self.get_object())

    @extend_schema(
        summary="Upload a file to import",
        description=docs.CREATE,
        examples=docs.CREATE_EXAMPLES,
        request={
            "multipart/form-data": ImportCreateRequestSerializer,
            "application/json": ImportCreateRequestSerializer,
        },
        responses={
            201: OpenApiResponse(
                ImportEnvelopeSerializer,
                description="created, pending; or failed: a statement file that cannot be read "
                "(its error names the line)",
            ),
            202: OpenApiResponse(
                ImportEnvelopeSerializer,
                description="created; publishing, or a large file being parsed by a worker",
            ),
        },
    )
    def create(self, request: Request) -> Response:
        body = ImportCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        account = self._account(data.get("account_id"))
        limit = settings.IMPORT_MAX_UPLOAD_BYTES
        if "file" in data:
            upload = data["file"]
            if upload.size > limit:
                raise _too_large(upload.size)
            stream, name, size = upload, upload.name, upload.size
        else:
            raw = data["raw_file_content"].encode("utf-8")
            if len(raw) > limit:
                raise _too_large(len(raw))
            extension = Import.EXTENSIONS.get(data.get("type"), "csv")
            stream, name, size = io.BytesIO(raw), f"raw_file_content.{extension}", len(raw)
        config = {k: data[k] for k in CONFIG_KEYS if k in data}
        imp = import_create(
            family=self.family,
            stream=stream,
            filename=name,
            size=size,
            account=account,
            configuration=config,
            background=True,
            publish=bool(data.get("publish")),
            import_type=data.get("type") or Import.Type.TRANSACTION,
        )
        if imp.status == Import.Status.FAILED:  # a statement file that cannot be read
            return self._one(imp, 201)
        if imp.parsing:  # a large file: a worker parses it (and publishes it if asked)
            return self._one(imp, 202)
        if data.get("publish"):
            blockers = import_blockers(data_import=imp)
            if not blockers:
                import_publish(data_import=imp)
                return self._one(imp, 202)
            Import.objects.filter(pk=imp.pk).update(error="Not published: " + "; ".join(blockers))
        return self._one(imp, 201)

    @extend_schema(
        summary="Change an import's configuration",
        description=docs.UPDATE,
        request=ImportUpdateRequestSerializer,
        responses=ImportEnvelopeSerializer,
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        imp = self.get_object()
        body = ImportUpdateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        account: Any = self._account(data["account_id"]) if "account_id" in data else ...
        changes = {k: data[k] for k in CONFIG_KEYS if k in data}
        import_configure(data_import=imp, account=account, changes=changes, background=True)
        return self._one(imp)

    @extend_schema(
        summary="List an import's rows",
        description=docs.ROWS,
        parameters=filter_parameters(ImportRowFilters),
        responses=ImportRowListSerializer,
    )
    @action(detail=True, methods=["get"], url_path="rows")
    def rows(self, request: Request, pk: str) -> Response:
        imp = self.get_object()
        filters = QueryFilters(request.query_params).parse(ImportRowFilters)
        targets = mapping_targets(data_import=imp)
        return self._page(
            import_row_list(data_import=imp, filters=filters),
            lambda row: row_representation(as_listed(row, imp), imp, targets),
        )

    @extend_schema(
        summary="Force or skip a row",
        description=docs.ROW_UPDATE,
        request=RowUpdateRequestSerializer,
        responses=ImportRowEnvelopeSerializer,
    )
    @action(detail=True, methods=["patch"], url_path=r"rows/(?P<row_number>[^/]+)")
    def row(self, request: Request, pk: str, row_number: str) -> Response:
        imp = self.get_object()
        number = int(row_number) if row_number.isascii() and row_number.isdigit() else None
        listed = import_row_list(data_import=imp, filters=ImportRowFilters())
        row = (
            listed.filter(row_number=number).first()
            if number is not None and number < 2**31
            else None
        )
        if row is None:
            raise NotFound()
        body = RowUpdateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        row = import_row_update(data_import=imp, row=row, **body.validated_data)
        row = with_transaction_ids(ImportRow.objects.filter(pk=row.pk), imp).get()
        return Response({"data": row_representation(row, imp, mapping_targets(data_import=imp))})

    @extend_schema(
        methods=["GET"],
        summary="List an import's mappings",
        description=docs.MAPPINGS,
        parameters=filter_parameters(ImportMappingFilters),
        responses=ImportMappingListSerializer,
    )
    @extend_schema(
        methods=["PATCH"],
        summary="Change an import's mappings",
        description=docs.MAPPINGS_UPDATE,
        request=MappingsUpdateRequestSerializer,
        responses=ImportMappingListSerializer,
    )
    @action(detail=True, methods=["get", "patch"], url_path="mappings")
    def mappings(self, request: Request, pk: str) -> Response:
        imp = self.get_object()
        if request.method == "PATCH":
            body = MappingsUpdateRequestSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            import_mappings_update(data_import=imp, items=body.validated_data["mappings"])
        filters = QueryFilters(request.query_params).parse(ImportMappingFilters)
        return self._page(
            import_mapping_list(data_import=imp, filters=filters),
            mapping_representation,
        )

    @extend_schema(
        summary="Publish an import",
        description=docs.PUBLISH,
        request=None,
        responses={202: OpenApiResponse(ImportEnvelopeSerializer, description="publishing")},
    )
    @action(detail=True, methods=["post"])
    def publish(self, request: Request, pk: str) -> Response:
        imp = import_publish(data_import=self.get_object())
        return self._one(imp, 202)

    @extend_schema(
        summary="Revert an import",
        description=docs.REVERT,
        request=None,
        responses={202: OpenApiResponse(ImportEnvelopeSerializer, description="reverting")},
    )
    @action(detail=True, methods=["post"])
    def revert(self, request: Request, pk: str) -> Response:
        imp = import_revert(data_import=self.get_object())
        return self._one(imp, 202)


def register(router: SimpleRouter) -> None:
    """Register this app's viewsets on the /api/v1 router."""
    router.register("imports", ImportViewSet, basename="import")
