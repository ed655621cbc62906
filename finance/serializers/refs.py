"""Small nested shapes that several resources embed (API document part 2)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from finance.money import format_amount


class AccountRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    account_type = serializers.CharField(allow_null=True)
    status = serializers.CharField(required=False)

    class Meta:
        ref_name = "AccountRef"


class CategoryRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    color = serializers.CharField()
    icon = serializers.CharField()

    class Meta:
        ref_name = "CategoryRef"


class MerchantRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()

    class Meta:
        ref_name = "MerchantRef"


class TagRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    color = serializers.CharField()

    class Meta:
        ref_name = "TagRef"


class TransferRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    amount = serializers.CharField()
    currency = serializers.CharField()
    status = serializers.CharField()
    other_account = AccountRefSerializer(allow_null=True)

    class Meta:
        ref_name = "TransferRef"


def account_ref(account: Any) -> dict[str, Any] | None:
    if account is None:
        return None
    return {
        "id": str(account.id),
        "name": account.name,
        "account_type": account.account_type,
        "status": account.status,
    }


def category_ref(category: Any) -> dict[str, Any] | None:
    if category is None:
        return None
    return {
        "id": str(category.id),
        "name": category.name,
        "color": category.color,
        "icon": category.icon,
    }


def merchant_ref(merchant: Any) -> dict[str, Any] | None:
    if merchant is None:
        return None
    return {"id": str(merchant.id), "name": merchant.name}


def tag_ref(tag: Any) -> dict[str, Any]:
    return {"id": str(tag.id), "name": tag.name, "color": tag.color}


def transfer_ref(txn: Any) -> dict[str, Any] | None:
    """The transfer a transaction is a leg of, seen from that leg."""
    transfer = getattr(txn, "transfer_as_inflow", None)
    other = None
    if transfer is not None:
        other = transfer.outflow_transaction
    else:
        transfer = getattr(txn, "transfer_as_outflow", None)
        if transfer is not None:
            other = transfer.inflow_transaction
    if transfer is None:
        return None
    return {
        "id": str(transfer.id),
        "amount": format_amount(abs(txn.amount), txn.currency),
        "currency": txn.currency,
        "status": transfer.status,
        "other_account": account_ref(other.account) if other is not None else None,
    }
