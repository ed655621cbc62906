"""Export and restore shapes (docs/decisions.md "Export and restore")."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from exports.models import Export, Restore, Status
from finance.serializers.fields import UtcDateTimeField, iso_utc

COUNTS_HELP = (
    "records per kind (accounts, transactions, ...), as the archive's manifest counts them"
)


class ExportStartedSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Status.choices)

    class Meta:
        ref_name = "ExportStarted"


class ExportSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Status.choices)
    counts = serializers.DictField(child=serializers.IntegerField(), help_text=COUNTS_HELP)
    size_bytes = serializers.IntegerField(allow_null=True, help_text="the archive's size")
    created_at = UtcDateTimeField()
    completed_at = UtcDateTimeField(allow_null=True)
    download_url = serializers.CharField(
        allow_null=True, help_text="where the archive is, once complete (until it expires)"
    )

    class Meta:
        ref_name = "Export"
        description = (
            "An export of the household's whole data as one ZIP archive: `manifest.json` "
            "(counts and SHA-256 per file), one JSON Lines file per kind in the API's own "
            "representation, and `transactions.csv`."
        )

    def to_representation(self, export: Export) -> dict[str, Any]:
        ready = export.status == Export.Status.COMPLETE and bool(export.file_name)
        return {
            "id": str(export.id),
            "status": export.status,
            "counts": export.counts or {},
            "size_bytes": export.size_bytes,
            "created_at": iso_utc(export.created_at),
            "completed_at": iso_utc(export.completed_at),
            "download_url": self._absolute(reverse("export-download", args=[export.pk]))
            if ready
            else None,
        }

    def _absolute(self, path: str) -> str:
        """A full URL when the request is known (the API), the path otherwise."""
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class RestoreRequestSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="an archive made by an export (application/zip)")

    class Meta:
        ref_name = "RestoreCreate"


class RestoreSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Status.choices)
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="records per kind the archive holds"
    )
    readback = serializers.JSONField(
        allow_null=True,
        help_text="once done: `status` (matched or mismatch), `expected_counts` (the "
        "manifest's) and `actual_counts` (read back from the database) per kind, `sums` per "
        "account and currency ({expected, actual}) and `mismatches`",
    )
    error = serializers.CharField(allow_null=True)
    created_at = UtcDateTimeField()
    completed_at = UtcDateTimeField(allow_null=True)

    class Meta:
        ref_name = "Restore"
        description = "A restore of an export archive into this (empty) household."

    def to_representation(self, restore: Restore) -> dict[str, Any]:
        return {
            "id": str(restore.id),
            "status": restore.status,
            "counts": restore.counts or {},
            "readback": restore.readback,
            "error": restore.error or None,
            "created_at": iso_utc(restore.created_at),
            "completed_at": iso_utc(restore.completed_at),
        }
