"""Writing a household's archive (docs/decisions.md "Export and restore").

One JSON Lines file per kind, each line the record in the API's own representation (the same
serializers and fast shapes the API answers with), plus the few stored values the API does not
show but a faithful restore needs (`EXTRAS`); `transactions.csv` for spreadsheets; and
`manifest.json`, written last, with the counts and SHA-256 of every file and the sum of the
transactions per account for the restore's readback.

Memory stays bounded whatever the household's size: each kind's rows are read in chunks
(`.iterator(chunk_size=...)`) and written into their zip member as they come, the digest
computed on the way; the CSV is spooled to a temporary file during the same pass."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

from django.utils import timezone

from exports.rows import transaction_rows
from exports.selectors import KINDS, archive_querysets
from finance.models import Account, Family, Transaction
from finance.serializers.fast import transaction_representation
from finance.serializers.fields import iso_utc
from finance.serializers.fx import ExchangeRateSerializer
from finance.serializers.ledger import (
    AccountSerializer,
    CategorySerializer,
    MerchantSerializer,
    TagSerializer,
)
from finance.serializers.rules import RuleSerializer
from finance.serializers.transfers import RejectedTransferSerializer, TransferSerializer
from providers.serializers import ProviderConnectionSerializer
from trades.serializers import (
    HoldingSerializer,
    SecurityPriceSerializer,
    SecuritySerializer,
    TradeSerializer,
)

FORMAT = "pf-export"
VERSION = 1
MANIFEST = "manifest.json"
CSV_FILE = "transactions.csv"
CHUNK = 2000
PROGRESS_EVERY = 10_000
CSV_COLUMNS = (
    "id",
    "date",
    "account",
    "amount",
    "currency",
    "name",
    "category",
    "merchant",
    "tags",
    "notes",
    "kind",
    "pending",
    "excluded",
    "external_id",
    "source",
)
# Stored values a line carries beside the API representation, per kind: what the API does not
# show but the records need to come back exactly (balances' anchors, what rules and the user
# set, a provider's last snapshot, holdings' unrounded values; `stored_amount`, the amount as
# stored, on transactions and trades: the API shows it at the currency's precision, and a
# trade of 3 at 12.5 JPY holds 37.5).
EXTRAS = {
    "accounts": (
        "opening_balance",
        "opening_balance_date",
        "reported_balance",
        "reported_balance_at",
    ),
    "securities": ("household",),
    "transactions": (
        "excluded_by_sync",
        "pending_settled",
        "provider_snapshot",
        "rule_changes",
        "edited_fields",
    ),
    "holdings": ("stored",),
    "provider_connections": ("name",),
}

Progress = Callable[[str, int], None]


def file_name(kind: str) -> str:
    return f"{kind}.jsonl"


def _text(value: Any) -> Any:
    """A stored value as JSON: decimals as exact text, days and instants ISO."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return iso_utc(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _account(account: Account) -> dict[str, Any]:
    out = AccountSerializer().to_representation(account)
    out.update((name, _text(getattr(account, name))) for name in EXTRAS["accounts"])
    return out


def _transaction(txn: Transaction) -> dict[str, Any]:
    out = transaction_representation(txn)
    out.update((name, getattr(txn, name)) for name in EXTRAS["transactions"])
    out["stored_amount"] = _text(txn.amount)
    return out


def _trade(trade: Any) -> dict[str, Any]:
    return {**TradeSerializer().to_representation(trade), "stored_amount": _text(trade.amount)}


def _security(security: Any) -> dict[str, Any]:
    return {
        **SecuritySerializer().to_representation(security),
        "household": security.family_id is not None,
    }


def _holding(holding: Any) -> dict[str, Any]:
    out = HoldingSerializer().to_representation(holding)
    out["stored"] = {
        name: _text(getattr(holding, name))
        for name in ("qty", "price", "cost_basis", "market_value", "created_at")
    }
    return out


def _connection(connection: Any) -> dict[str, Any]:
    # ProviderConnectionSerializer has no credential field: none can reach the archive.
    return {**ProviderConnectionSerializer(connection).data, "name": connection.name}


def _plain(serializer: type) -> Callable[[Any], dict[str, Any]]:
    instance = serializer()
    return instance.to_representation


RENDER: dict[str, Callable[[Any], dict[str, Any]]] = {
    "accounts": _account,
    "categories": _plain(CategorySerializer),
    "merchants": _plain(MerchantSerializer),
    "tags": _plain(TagSerializer),
    "securities": _security,
    "rules": _plain(RuleSerializer),
    "transactions": _transaction,
    "transfers": _plain(TransferSerializer),
    "rejected_transfers": _plain(RejectedTransferSerializer),
    "trades": _trade,
    "holdings": _holding,
    "security_prices": _plain(SecurityPriceSerializer),
    "exchange_rates": _plain(ExchangeRateSerializer),
    "provider_connections": _connection,
}


def dumps(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class _Member:
    """A zip member being written, counting its lines and hashing its bytes on the way."""

    def __init__(self, archive: zipfile.ZipFile, name: str) -> None:
        self.stream: IO[bytes] = archive.open(name, "w", force_zip64=True)
        self.digest = hashlib.sha256()
        self.lines = 0

    def write(self, data: bytes, lines: int = 1) -> None:
        self.digest.update(data)
        self.stream.write(data)
        self.lines += lines

    def close(self) -> str:
        self.stream.close()
        return self.digest.hexdigest()


@dataclass
class ArchiveSummary:
    counts: dict[str, int] = field(default_factory=dict)  # per file
    sha256: dict[str, str] = field(default_factory=dict)  # per file
    sums: dict[str, str] = field(default_factory=dict)  # "<account id>:<currency>": total
    size_bytes: int = 0

    def kind_counts(self) -> dict[str, int]:
        return {
            name.rsplit(".", 1)[0]: n for name, n in self.counts.items() if name.endswith(".jsonl")
        }


def _csv_row(line: dict[str, Any]) -> list[Any]:
    return [
        line["id"],
        line["date"],
        line["account"]["name"],
        line["amount"],
        line["currency"],
        line["name"],
        (line["category"] or {}).get("name", ""),
        (line["merchant"] or {}).get("name", ""),
        ";".join(tag["name"] for tag in line["tags"]),
        line["notes"] or "",
        line["kind"],
        line["pending"],
        line["excluded"],
        line["external_id"] or "",
        line["source"] or "",
    ]


def _write_kind(
    archive: zipfile.ZipFile,
    kind: str,
    rows: Iterable[Any],
    summary: ArchiveSummary,
    progress: Progress | None,
    spool: IO[str] | None = None,
) -> None:
    render = RENDER[kind]
    member = _Member(archive, file_name(kind))
    writer = csv.writer(spool) if spool is not None else None
    sums: dict[str, Decimal] = {}
    for record in rows:
        line = render(record)
        member.write(dumps(line))
        if writer is not None:
            writer.writerow(_csv_row(line))
            key = f"{record.account_id}:{record.currency}"
            sums[key] = sums.get(key, Decimal(0)) + record.amount
        if progress is not None and member.lines % PROGRESS_EVERY == 0:
            progress(kind, member.lines)
    summary.sha256[file_name(kind)] = member.close()
    summary.counts[file_name(kind)] = member.lines
    if writer is not None:
        summary.sums = {key: str(total.normalize()) for key, total in sorted(sums.items())}
    if progress is not None:
        progress(kind, member.lines)


def archive_write(
    *, family: Family, path: Path, progress: Progress | None = None
) -> ArchiveSummary:
    """Write the household's archive to `path` (a new file); return what the manifest says."""
    summary = ArchiveSummary()
    querysets = archive_querysets(family=family)
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        tempfile.TemporaryFile("w+", newline="", encoding="utf-8", dir=path.parent) as spool,
    ):
        for kind in KINDS:
            is_transactions = kind == "transactions"
            rows = (
                transaction_rows(family=family, chunk=CHUNK)
                if is_transactions
                else querysets[kind].iterator(chunk_size=CHUNK)
            )
            if is_transactions:
                csv.writer(spool).writerow(CSV_COLUMNS)
            _write_kind(archive, kind, rows, summary, progress, spool if is_transactions else None)
        spool.seek(0)
        member = _Member(archive, CSV_FILE)
        encoder_chunk = 1 << 20
        while chunk := spool.read(encoder_chunk):
            member.write(chunk.encode(), lines=0)
        summary.sha256[CSV_FILE] = member.close()
        # One row per transaction (a quoted field may hold a line break: rows are not lines).
        summary.counts[CSV_FILE] = summary.counts[file_name("transactions")]
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "created_at": iso_utc(timezone.now()),
            "currency": family.currency,
            "household": {"name": family.name, "timezone": family.timezone},
            "counts": summary.counts,
            "sha256": summary.sha256,
            "sums": summary.sums,
        }
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False))
    summary.size_bytes = path.stat().st_size
    return summary
