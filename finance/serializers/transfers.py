"""Transfers and rejected transfers (API document part 2, "Rejected transfer")."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from finance.models import RejectedTransfer, Transaction, Transfer
from finance.money import format_amount, to_minor_units
from finance.serializers.fields import StrictDateField, UtcDateTimeField, envelope, iso_utc
from finance.serializers.refs import AccountBriefRefSerializer, account_brief_ref


class TransferLegSerializer(serializers.Serializer):
    """RejectedTransferLeg of the API document; transfers show their legs the same way.
    `entry_id` is the transaction's id (this service has no separate entry table)."""

    id = serializers.UUIDField()
    entry_id = serializers.UUIDField()
    date = StrictDateField(bounded=False)
    amount = serializers.CharField(help_text="ledger sign: positive = money leaving")
    amount_cents = serializers.IntegerField(help_text="minor units, ledger sign")
    currency = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=Transaction.Kind.choices)
    account = AccountBriefRefSerializer()

    class Meta:
        ref_name = "RejectedTransferLeg"
        description = (
            "A leg of a transfer or a rejected transfer: the transaction (`entry_id` is its id "
            "too), its amount in the ledger sign and its account."
        )


def leg(txn: Transaction) -> dict[str, Any]:
    return {
        "id": str(txn.id),
        "entry_id": str(txn.id),
        "date": txn.date.isoformat(),
        "amount": format_amount(txn.amount, txn.currency),
        "amount_cents": to_minor_units(txn.amount, txn.currency),
        "currency": txn.currency,
        "name": txn.name,
        "kind": txn.kind,
        "account": account_brief_ref(txn.account),
    }


class TransferSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Transfer.Status.choices)
    amount = serializers.CharField(help_text="what left the outflow account, positive")
    currency = serializers.CharField()
    date = StrictDateField(help_text="the outflow's date")
    inflow_transaction = TransferLegSerializer()
    outflow_transaction = TransferLegSerializer()
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Transfer"

    def to_representation(self, transfer: Transfer) -> dict[str, Any]:
        outflow = transfer.outflow_transaction
        return {
            "id": str(transfer.id),
            "status": transfer.status,
            "amount": format_amount(abs(outflow.amount), outflow.currency),
            "currency": outflow.currency,
            "date": outflow.date.isoformat(),
            "inflow_transaction": leg(transfer.inflow_transaction),
            "outflow_transaction": leg(outflow),
            "created_at": iso_utc(transfer.created_at),
            "updated_at": iso_utc(transfer.updated_at),
        }


class RejectedTransferSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    inflow_transaction = TransferLegSerializer()
    outflow_transaction = TransferLegSerializer()
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "RejectedTransfer"

    def to_representation(self, rejected: RejectedTransfer) -> dict[str, Any]:
        return {
            "id": str(rejected.id),
            "inflow_transaction": leg(rejected.inflow_transaction),
            "outflow_transaction": leg(rejected.outflow_transaction),
            "created_at": iso_utc(rejected.created_at),
            "updated_at": iso_utc(rejected.updated_at),
        }


class TransferFieldsSerializer(serializers.Serializer):
    inflow_transaction_id = serializers.UUIDField()
    outflow_transaction_id = serializers.UUIDField()

    class Meta:
        ref_name = "TransferFields"


TransferCreateRequestSerializer = envelope(
    "transfer", TransferFieldsSerializer(), ref_name="TransferCreate"
)
