"""Export and restore endpoints: thin, each validates, calls one service and answers."""

from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from exports.models import Export, Restore
from exports.serializers import (
    ExportSerializer,
    ExportStartedSerializer,
    RestoreRequestSerializer,
    RestoreSerializer,
)
from exports.services import export_create, export_download, restore_create
from finance.api.errors import ApiError
from finance.api.viewsets import FamilyViewSet

EXPORT_DOC = (
    "Starts an export of the whole household (a background task) and answers at once with "
    "its id and status. Poll `GET /api/v1/exports/{id}` until `status` is `complete`, then "
    "fetch `download_url`. The archive: `manifest.json` (format `pf-export`, version 1, counts "
    "and SHA-256 per file), JSON Lines files in the API's own representation (accounts, "
    "categories, merchants, tags, transactions, transfers, rejected_transfers, securities, "
    "trades, holdings, security_prices, rules, exchange_rates, provider_connections) and "
    "`transactions.csv`. No API key and no provider credential is ever in it. Archives are "
    "deleted EXPORT_RETENTION_HOURS (default 72) after they were made."
)
RESTORE_DOC = (
    "Uploads an export archive (multipart/form-data, field `file`) to restore into this "
    "household, which must have no accounts (409 `conflict` otherwise). The archive is "
    "verified first (manifest, format, SHA-256 and line count of every file): anything else "
    "is refused with 422 and nothing is written. Answers 202; a worker then writes every "
    "record with new ids in one database transaction and reads the counts and per-account "
    "sums back against the manifest (`readback`); on any failure nothing is kept. Provider "
    "connections come back with status `requires_update`: reconnect them with new credentials."
)


class ExportViewSet(FamilyViewSet):
    serializer_class = ExportSerializer

    def get_queryset(self) -> QuerySet[Export]:
        return Export.objects.filter(family=self.family)

    @extend_schema(
        summary="Start an export",
        description=EXPORT_DOC,
        request=None,
        responses={202: OpenApiResponse(ExportStartedSerializer, description="started")},
    )
    def create(self, request: Request) -> Response:
        export = export_create(family=self.family, requested_by=request.user)
        return Response({"id": str(export.pk), "status": export.status}, status=202)

    @extend_schema(
        summary="Get an export",
        description="The export's status (`pending`, `running`, `complete`, `failed`), its "
        "counts per kind, the archive's size and, once complete, its `download_url`.",
        responses=ExportSerializer,
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(
            ExportSerializer(context={"request": request}).to_representation(self.get_object())
        )

    @extend_schema(
        summary="Download an export's archive",
        description="The archive (application/zip), streamed. 404 until the export is "
        "complete, and once it has expired.",
        responses={(200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY)},
    )
    @action(detail=True, methods=["get"], url_path="download", url_name="download")
    def download(self, request: Request, pk: str) -> FileResponse:
        response = export_download(self.get_object())
        if response is None:
            raise NotFound("The export's archive is not ready, or has expired.")
        return response


class RestoreViewSet(FamilyViewSet):
    serializer_class = RestoreSerializer

    def get_queryset(self) -> QuerySet[Restore]:
        return Restore.objects.filter(family=self.family)

    def get_parsers(self) -> list[BaseParser]:
        """The upload is multipart/form-data; DRF builds parsers before it sets `action`."""
        action_name = getattr(self, "action", None) or self.action_map.get(
            self.request.method.lower()
        )
        if action_name == "create":
            return [MultiPartParser()]
        return super().get_parsers()

    @extend_schema(
        summary="Restore an export archive",
        description=RESTORE_DOC,
        request={"multipart/form-data": RestoreRequestSerializer},
        responses={202: OpenApiResponse(RestoreSerializer, description="verified; restoring")},
    )
    def create(self, request: Request) -> Response:
        body = RestoreRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        upload = body.validated_data["file"]
        limit = settings.RESTORE_MAX_UPLOAD_BYTES
        if upload.size > limit:
            raise ApiError(
                413,
                "payload_too_large",
                f"The file is {upload.size} bytes, over the restore limit of {limit} bytes.",
                details={"limit_bytes": limit, "size_bytes": upload.size},
            )
        restore = restore_create(family=self.family, upload=upload)
        return Response(RestoreSerializer().to_representation(restore), status=202)

    @extend_schema(
        summary="Get a restore",
        description="The restore's status and, once done, its `readback`: counts per kind and "
        "sums per account read back from the database against the manifest.",
        responses=RestoreSerializer,
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(RestoreSerializer().to_representation(self.get_object()))


def register(router: SimpleRouter) -> None:
    """Register this app's viewsets on the /api/v1 router."""
    router.register("exports", ExportViewSet, basename="export")
    router.register("restores", RestoreViewSet, basename="restore")
