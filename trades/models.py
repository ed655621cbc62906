"""Securities, trades and holdings of investment and crypto accounts.

Scoping (docs/decisions.md, "Trades"): a security with `family` NULL is shared reference data
(a listed ticker, optionally on an exchange MIC) that every household sees; a security with a
`family` is that household's own manual security and no other household ever sees it."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q

from core.bounds import validate_amount, validate_date
from core.exact import ExactDecimalField
from finance.models import Account, Category, Family
from finance.models.ledger import AMOUNT, BALANCE

QTY = {"max_digits": 24, "decimal_places": 8}
HOLDING_QTY = {"max_digits": 38, "decimal_places": 8}  # a sum of any number of trades' qty

INVESTMENT_ACTIVITY_LABELS = (
    "Buy",
    "Sell",
    "Sweep In",
    "Sweep Out",
    "Dividend",
    "Reinvestment",
    "Interest",
    "Fee",
    "Transfer",
    "Contribution",
    "Withdrawal",
    "Exchange",
    "Other",
)


class Security(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # NULL: shared reference data. Set: a manual security private to that household.
    family = models.ForeignKey(
        Family, null=True, blank=True, on_delete=models.CASCADE, related_name="securities"
    )
    ticker = models.CharField(max_length=32)
    name = models.CharField(max_length=255, blank=True, default="")
    exchange_mic = models.CharField("exchange (MIC)", max_length=10, blank=True, default="")
    currency = models.CharField(max_length=3, null=True, blank=True)
    manual = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "securities"
        ordering = ["ticker", "exchange_mic", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["ticker", "exchange_mic"],
                condition=Q(family__isnull=True),
                name="security_shared_ticker_mic",
            ),
            models.UniqueConstraint(
                fields=["family", "ticker"],
                condition=Q(family__isnull=False),
                name="security_manual_ticker_per_family",
            ),
        ]

    def __str__(self) -> str:
        label = f"{self.ticker}|{self.exchange_mic}" if self.exchange_mic else self.ticker
        return f"{label} ({self.name})" if self.name and self.name != self.ticker else label


class Trade(models.Model):
    """A trade's cash flow in the LEDGER sign: positive = money leaving the account (a buy),
    negative = money entering (a sell, a dividend, interest). `qty` is signed (sell negative)."""

    class Kind(models.TextChoices):
        BUY = "buy"
        SELL = "sell"
        DIVIDEND = "dividend"
        INTEREST = "interest"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="trades")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="trades")
    # Required for buys and sells; optional for dividends and interest.
    security = models.ForeignKey(
        Security, null=True, blank=True, on_delete=models.RESTRICT, related_name="trades"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    date = models.DateField(validators=[validate_date])
    qty = ExactDecimalField(**QTY, default=0)
    price = ExactDecimalField(**QTY, default=0)
    amount = ExactDecimalField(**AMOUNT, validators=[validate_amount])
    currency = models.CharField(max_length=3)
    name = models.CharField(max_length=255)
    notes = models.TextField(null=True, blank=True)
    investment_activity_label = models.CharField(
        max_length=32, choices=[(label, label) for label in INVESTMENT_ACTIVITY_LABELS]
    )
    category = models.ForeignKey(
        Category, null=True, blank=True, on_delete=models.SET_NULL, related_name="trades"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-date", "-created_at", "-id"]
        indexes = [
            models.Index(fields=["family", "-date", "-created_at"], name="trade_family_date"),
            models.Index(fields=["account", "-date", "-created_at"], name="trade_account_date"),
            models.Index(fields=["account", "security", "date"], name="trade_account_security"),
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.name} {self.amount} {self.currency}"


class Holding(models.Model):
    """One position of an account: derived from its trades, or as a provider reported it."""

    class Source(models.TextChoices):
        TRADES = "trades"
        PROVIDER = "provider"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="holdings")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="holdings")
    security = models.ForeignKey(Security, on_delete=models.RESTRICT, related_name="holdings")
    qty = ExactDecimalField(**HOLDING_QTY)
    # Total cost of the position in `currency` (average-cost method for derived holdings).
    cost_basis = ExactDecimalField(**BALANCE, null=True, blank=True)
    price = ExactDecimalField(**QTY, null=True, blank=True)
    market_value = ExactDecimalField(**BALANCE, null=True, blank=True)
    currency = models.CharField(max_length=3)
    date = models.DateField(help_text="As of this day.")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.TRADES)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["account", "security__ticker", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["account", "security"], name="holding_one_per_account_security"
            )
        ]
        indexes = [models.Index(fields=["family", "account"], name="holding_family_account")]

    def __str__(self) -> str:
        return f"{self.qty} {self.security.ticker}"


class SecurityPrice(models.Model):
    """The price of one unit of a security on a day, in a currency: a household's price point.

    Points come from the household's trades (`trade`: the price of the day's last buy or sell,
    kept by every trade write), from a provider's holdings (`provider`: the connection's
    household) and from `POST /api/v1/security_prices` (`api`). One point per household,
    security, day, currency and source; when several sources priced one day, `api` wins over
    `provider`, which wins over `trade` (`RANK`). Valuation (finance/ledger/valuation.py)
    takes, for each day, the latest point on or before it in the account's currency."""

    class Source(models.TextChoices):
        TRADE = "trade"
        PROVIDER = "provider"
        API = "api"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="security_prices")
    security = models.ForeignKey(Security, on_delete=models.CASCADE, related_name="prices")
    date = models.DateField(validators=[validate_date])
    price = ExactDecimalField(**QTY)
    currency = models.CharField(max_length=3)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.API)
    # Same-day precedence of the sources: the highest rank wins.
    RANK = {"trade": 0, "provider": 1, "api": 2}
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["security", "date", "source"]
        constraints = [
            models.UniqueConstraint(
                fields=["family", "security", "date", "currency", "source"],
                name="security_price_one_per_day_source",
            )
        ]
        indexes = [
            models.Index(fields=["family", "security", "date"], name="security_price_lookup"),
        ]

    def __str__(self) -> str:
        return f"{self.security_id} {self.date} {self.price} {self.currency} ({self.source})"
