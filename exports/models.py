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


class Export(models.Model):
    Status = Status

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="exports")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Records per kind ("transactions": 1200, ...), as the manifest counts them.
    counts = models.JSONField(default=dict, blank=True)
    size_bytes = models.BigIntegerField(null=True, blank=True)
    # The archive, relative to DATA_DIR/exports; empty until complete (and once expired).
    file_name = models.CharField(max_length=255, blank=True, default="")
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "export"
        # The admin's name for the exports page (its index links to it by this name).
        verbose_name_plural = "Export my data"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["family", "-created_at"], name="export_family_created")]

    def __str__(self) -> str:
        return f"Export {self.created_at:%Y-%m-%d %H:%M} ({self.status})"


class Restore(models.Model):
    Status = Status

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="restores")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # The uploaded archive while it waits for the worker, relative to DATA_DIR/restores.
    file_name = models.CharField(max_length=255, blank=True, default="")
    size_bytes = models.BigIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True)
    # Counts per kind and sums per account read back from the database against the manifest.
    readback = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Restore {self.created_at:%Y-%m-%d %H:%M} ({self.status})"
