"""Provider connection, provider account and sync shapes (decisions.md, Provider connections).
No serializer has a credential field."""

from __future__ import annotations

from rest_framework import serializers

from finance.serializers.fields import TextChoiceField, UtcDateTimeField
from providers.models import ProviderAccount, ProviderConnection, Sync


class ProviderAccountSerializer(serializers.ModelSerializer):
    connection_id = serializers.UUIDField(read_only=True)
    account_id = serializers.UUIDField(read_only=True, allow_null=True)
    account_type = serializers.CharField(read_only=True, allow_null=True)
    holdings_supported = serializers.BooleanField(read_only=True, allow_null=True)

    class Meta:
        model = ProviderAccount
        fields = [
            "id",
            "connection_id",
            "upstream_id",
            "name",
            "currency",
            "account_type",
            "institution_name",
            "account_id",
            "skipped",
            "holdings_supported",
        ]
        read_only_fields = fields


class ProviderConnectionSerializer(serializers.ModelSerializer):
    error = serializers.CharField(read_only=True, allow_null=True)
    last_synced_at = UtcDateTimeField(allow_null=True)
    created_at = UtcDateTimeField()
    accounts = ProviderAccountSerializer(many=True, read_only=True)

    class Meta:
        model = ProviderConnection
        fields = ["id", "provider", "status", "error", "last_synced_at", "created_at", "accounts"]
        read_only_fields = fields


class ConnectionCreateRequestSerializer(serializers.Serializer):
    provider = TextChoiceField(choices=ProviderConnection.Provider.choices)
    api_key = serializers.CharField(max_length=1024, required=False, write_only=True)
    setup_token = serializers.CharField(max_length=2048, required=False, write_only=True)
    connection_id = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="Reconnect this connection in place (keeps every account link).",
    )

    class Meta:
        ref_name = "ProviderConnectionCreate"


class ProviderAccountUpdateRequestSerializer(serializers.Serializer):
    account_id = serializers.UUIDField(required=False, allow_null=True)
    skipped = serializers.BooleanField(required=False)

    class Meta:
        ref_name = "ProviderAccountUpdate"


class FailedAccountSerializer(serializers.Serializer):
    provider_account_id = serializers.UUIDField()
    name = serializers.CharField()
    error = serializers.CharField()

    class Meta:
        ref_name = "SyncFailedAccount"


class SyncStatsSerializer(serializers.Serializer):
    accounts_seen = serializers.IntegerField(default=0)
    transactions_added = serializers.IntegerField(default=0)
    transactions_updated = serializers.IntegerField(default=0)
    transactions_unchanged = serializers.IntegerField(default=0)
    transactions_pending = serializers.IntegerField(default=0)
    transactions_removed = serializers.IntegerField(default=0)
    requests_made = serializers.IntegerField(default=0)
    failed_accounts = FailedAccountSerializer(many=True, default=list)

    def to_representation(self, instance: dict) -> dict:
        from providers.sync.engine import empty_stats

        return super().to_representation({**empty_stats(), **(instance or {})})


class SyncSerializer(serializers.ModelSerializer):
    connection_id = serializers.UUIDField(read_only=True)
    provider_account_id = serializers.UUIDField(read_only=True, allow_null=True)
    window_start = serializers.DateField(read_only=True, allow_null=True)
    window_end = serializers.DateField(read_only=True, allow_null=True)
    started_at = UtcDateTimeField(allow_null=True)
    finished_at = UtcDateTimeField(allow_null=True)
    created_at = UtcDateTimeField()
    error = serializers.CharField(read_only=True, allow_null=True)
    stats = SyncStatsSerializer(read_only=True)

    class Meta:
        model = Sync
        fields = [
            "id",
            "status",
            "connection_id",
            "provider_account_id",
            "window_start",
            "window_end",
            "started_at",
            "finished_at",
            "created_at",
            "error",
            "attempt",
            "stats",
        ]
        read_only_fields = fields
