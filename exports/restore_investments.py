"""What a restore writes after the ledger's rows (exports/restore.py): trades, holdings and
prices, the household's exchange rates, and provider connections (without credentials)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from exports.restore_values import day, dec, instant, ref
from finance.ledger import fast_insert
from finance.models import Account, ExchangeRate
from providers.models import ProviderAccount, ProviderConnection
from trades.models import Holding, SecurityPrice, Trade

RECONNECT = "Restored from an export: reconnect with new credentials to sync again."


class InvestmentsAndConnections:
    """The second half of `Restorer` (its `_insert`, `new`, `securities`, `batch`, `family`)."""

    def trades(self) -> None:
        def build(line: dict[str, Any]) -> tuple:
            security = line["security"]
            return (
                self.new(line["id"]), self.family.pk, self.new(line["account"]["id"]),
                None if security is None else self.securities[security["id"]], line["kind"],
                day(line["date"]), Decimal(line["qty"]), Decimal(line["price"]),
                Decimal(line["stored_amount"]), line["currency"], line["name"], line["notes"],
                line["investment_activity_label"], self.new(ref(line["category"])),
                *self._stamps(line),
            )  # fmt: skip

        self._insert(
            "trades", Trade,
            ("id", "family", "account", "security", "kind", "date", "qty", "price", "amount",
             "currency", "name", "notes", "investment_activity_label", "category", "created_at",
             "updated_at"),
            build,
        )  # fmt: skip
        # Trades move balances without a transaction row: every account is derived again.
        for pk in Account.objects.filter(family=self.family).values_list("pk", flat=True):
            self.batch.touch(self.family, pk, None)

    def holdings_and_prices(self) -> None:
        def holding(line: dict[str, Any]) -> tuple:
            stored = line["stored"]
            return (
                self.new(line["id"]), self.family.pk, self.new(line["account"]["id"]),
                self.securities[line["security"]["id"]], Decimal(stored["qty"]),
                dec(stored["cost_basis"]), dec(stored["price"]), dec(stored["market_value"]),
                line["currency"], day(line["date"]), line["source"],
                instant(stored["created_at"]), instant(line["updated_at"]),
            )  # fmt: skip

        self._insert(
            "holdings", Holding,
            ("id", "family", "account", "security", "qty", "cost_basis", "price", "market_value",
             "currency", "date", "source", "created_at", "updated_at"),
            holding,
        )  # fmt: skip

        def price(line: dict[str, Any]) -> tuple:
            return (
                self.new(line["id"]), self.family.pk, self.securities[line["security"]["id"]],
                day(line["date"]), Decimal(line["price"]), line["currency"], line["source"],
                *self._stamps(line),
            )  # fmt: skip

        self._insert(
            "security_prices", SecurityPrice,
            ("id", "family", "security", "date", "price", "currency", "source", "created_at",
             "updated_at"),
            price,
        )  # fmt: skip

    def exchange_rates(self) -> None:
        def build(line: dict[str, Any]) -> tuple:
            return (
                self.new(line["id"]), self.family.pk, day(line["date"]), line["from_currency"],
                line["to_currency"], Decimal(line["rate"]), ExchangeRate.SOURCE_HOUSEHOLD,
                *self._stamps(line),
            )  # fmt: skip

        self._insert(
            "exchange_rates", ExchangeRate,
            ("id", "family", "date", "from_currency", "to_currency", "rate", "source",
             "created_at", "updated_at"),
            build,
        )  # fmt: skip

    def connections(self) -> None:
        """Connections come back listed, without credentials: each waits for new ones."""
        for line in self.archive.lines("provider_connections"):
            pk = self.new(line["id"])
            created_at = instant(line["created_at"])
            fast_insert(
                ProviderConnection,
                ("id", "family", "provider", "name", "credential_encrypted", "status", "error",
                 "last_synced_at", "created_at"),
                [(pk, self.family.pk, line["provider"], line.get("name") or "", "",
                  ProviderConnection.Status.REQUIRES_UPDATE, RECONNECT,
                  instant(line["last_synced_at"]), created_at)],
            )  # fmt: skip
            fast_insert(
                ProviderAccount,
                ("id", "connection", "upstream_id", "name", "currency", "account_type",
                 "institution_name", "account", "skipped", "holdings_supported"),
                [(self.new(a["id"]), pk, a["upstream_id"], a["name"], a["currency"],
                  a["account_type"], a["institution_name"] or "", self.new(a["account_id"]),
                  a["skipped"], a["holdings_supported"]) for a in line["accounts"]],
            )  # fmt: skip
