"""A household's exports (its whole data as one archive) and restores (an archive read back
into an empty household). docs/decisions.md, "Export and restore"."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from finance.models import Family


class Status(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"


class ArchiveJob(models.Model):
    """What an export and a restore share: the worker's status, counts, file and times (each
    declares its own `family`, whose related name is the household's list of them)."""

    Status = Status

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Records per kind ("transactions": 1200, ...), as the manifest counts them.
    counts = models.JSONField(default=dict, blank=True)
    # An export's archive, relative to DATA_DIR/exports: empty until complete (and once
    # expired). A restore's upload while it waits for the worker, relative to DATA_DIR/restores.
    file_name = models.CharField(max_length=255, blank=True, default="")
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        name = type(self).__name__
        return f"{name} {self.created_at:%Y-%m-%d %H:%M} ({self.status})"


class Export(ArchiveJob):
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="exports")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    size_bytes = models.BigIntegerField(null=True, blank=True)

    class Meta(ArchiveJob.Meta):
        verbose_name = "export"
        # The admin's name for the exports page (its index links to it by this name).
        verbose_name_plural = "Export my data"
        indexes = [models.Index(fields=["family", "-created_at"], name="export_family_created")]


class Restore(ArchiveJob):
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="restores")
    size_bytes = models.BigIntegerField(default=0)
    # Counts per kind and sums per account read back from the database against the manifest.
    readback = models.JSONField(null=True, blank=True)
