"""Provider connections, the upstream accounts they discover, and sync runs."""

from __future__ import annotations

import datetime as dt
import uuid

from django.db import models
from django.db.models import Q
from django.utils import timezone

from finance.models import Account, Family
from providers.crypto import decrypt_secret, encrypt_secret


class ProviderConnection(models.Model):
    class Provider(models.TextChoices):
        LUNCHFLOW = "lunchflow", "Lunch Flow"
        SIMPLEFIN = "simplefin", "SimpleFIN"

    class Status(models.TextChoices):
        GOOD = "good"
        REQUIRES_UPDATE = "requires_update"
        ERROR = "error"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="connections")
    provider = models.CharField(max_length=32, choices=Provider.choices)
    name = models.CharField(max_length=255, blank=True, default="")
    # Fernet token of the API key or access URL; never shown, logged or returned.
    credential_encrypted = models.TextField(editable=False)
    status = models.CharField(max_length=32, choices=Status.choices, default=Status.GOOD)
    error = models.TextField(null=True, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    # Upstream request budget (SimpleFIN: ~24 a day): requests made on `request_day` (UTC).
    request_day = models.DateField(null=True, blank=True)
    daily_request_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name or f"{self.get_provider_display()} connection"

    def __repr__(self) -> str:  # never the credential
        return f"<ProviderConnection {self.pk} {self.provider} {self.status}>"

    @property
    def credential(self) -> str:
        return decrypt_secret(self.credential_encrypted)

    @credential.setter
    def credential(self, plain: str) -> None:
        self.credential_encrypted = encrypt_secret(plain)

    def requests_today(self, today: dt.date | None = None) -> int:
        today = today or timezone.now().date()
        return self.daily_request_count if self.request_day == today else 0


class ProviderAccount(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    connection = models.ForeignKey(
        ProviderConnection, on_delete=models.CASCADE, related_name="accounts"
    )
    upstream_id = models.CharField(max_length=255)
    name = models.CharField(max_length=255)
    currency = models.CharField(max_length=3)
    account_type = models.CharField(max_length=32, null=True, blank=True)
    institution_name = models.CharField(max_length=255, blank=True, default="")
    raw = models.JSONField(default=dict, blank=True)
    account = models.ForeignKey(
        Account, null=True, blank=True, on_delete=models.SET_NULL, related_name="provider_accounts"
    )
    skipped = models.BooleanField(default=False)
    # None: not asked yet; False: the provider said "not supported" and is not asked again.
    holdings_supported = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    family_path = "connection__family"

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["connection", "upstream_id"], name="provider_account_upstream_unique"
            )
        ]

    def __str__(self) -> str:
        return self.name


class Sync(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        SYNCING = "syncing"
        COMPLETED = "completed"
        FAILED = "failed"

    ACTIVE = (Status.PENDING, Status.SYNCING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    connection = models.ForeignKey(
        ProviderConnection, on_delete=models.CASCADE, related_name="syncs"
    )
    # Set when the sync was asked for one ledger account (POST /accounts/{id}/sync).
    provider_account = models.ForeignKey(
        ProviderAccount, null=True, blank=True, on_delete=models.SET_NULL, related_name="syncs"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    window_start = models.DateField(null=True, blank=True)
    window_end = models.DateField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(null=True, blank=True)
    stats = models.JSONField(default=dict, blank=True)
    # Worth retrying later (network trouble, 429, 5xx), as opposed to a bad credential.
    retryable = models.BooleanField(default=False)
    attempt = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    family_path = "connection__family"

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # The DB-level guard: at most one pending or running sync per connection.
            models.UniqueConstraint(
                fields=["connection"],
                condition=Q(status__in=["pending", "syncing"]),
                name="one_active_sync_per_connection",
            )
        ]
        indexes = [models.Index(fields=["status", "updated_at"], name="sync_status_updated")]

    def __str__(self) -> str:
        """ "Lunch Flow sync, 25 Nov 2026, 22:09": no ids on screens."""
        from django.utils.formats import date_format
        from django.utils.timezone import localtime

        when = self.started_at or self.created_at
        return (
            f"{self.connection} sync, {date_format(localtime(when), 'DATETIME_FORMAT')}"
            if when
            else f"{self.connection} sync"
        )
