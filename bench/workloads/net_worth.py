"""net_worth: GET /api/v1/net_worth over 3,650 days for 10 accounts in 4 currencies (USD,
EUR, GBP, JPY; one a credit card), converted into USD with ECB-style system rates (every
working day, against the euro), and GET /api/v1/cash_flow by month over the same ten years.

Balances are stored one row per account and day, as finance/services/balances.py keeps them.
Requests go through the whole Django stack in-process (no socket): the server's time."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from typing import Any

from bench.common import (
    Report,
    analyze,
    household_create,
    latency_summary,
    peak_rss_mb,
    seed_transactions,
)

DAYS = 3650
CURRENCIES = ["USD", "USD", "USD", "USD", "EUR", "EUR", "EUR", "GBP", "GBP", "JPY"]
EUR_RATES = {"USD": Decimal("1.1"), "GBP": Decimal("0.85"), "JPY": Decimal("150")}
TARGET_MS = 1000


def _seed(hh: Any, end: dt.date) -> float:
    from finance.models import Account, AccountBalance, ExchangeRate

    began = time.perf_counter()
    start = end - dt.timedelta(days=DAYS - 1)
    accounts = [
        Account.objects.create(
            family=hh.family,
            name=f"{currency} {i}",
            currency=currency,
            account_type="credit_card" if i == 3 else "depository",
        )
        for i, currency in enumerate(CURRENCIES)
    ]
    hh.accounts = accounts[:4]  # the USD ones carry the cash flow's transactions
    # Seeded as the ledger stores them, with the ORM: the ledger's own bulk writer is private.
    AccountBalance.objects.bulk_create(
        (
            AccountBalance(
                account=a,
                date=start + dt.timedelta(days=d),
                balance=Decimal(1000 + (d * 37 + i * 101) % 5000),
                currency=a.currency,
            )
            for i, a in enumerate(accounts)
            for d in range(DAYS)
        ),
        batch_size=2000,
    )
    rates = []
    for d in range(-7, DAYS):
        day = start + dt.timedelta(days=d)
        if day.weekday() >= 5:
            continue
        for currency, rate in EUR_RATES.items():
            wobble = Decimal((d * 13) % 21 - 10) / 1000
            rates.append(
                ExchangeRate(
                    date=day,
                    from_currency="EUR",
                    to_currency=currency,
                    rate=(rate * (1 + wobble)).quantize(Decimal("0.0001")),
                    source="ecb",
                )
            )
    ExchangeRate.objects.bulk_create(rates, batch_size=2000)
    return time.perf_counter() - began


def _time(client: Any, key: str, path: str, params: dict[str, str], reps: int) -> list[float]:
    samples = []
    for i in range(reps + 2):
        began = time.perf_counter()
        r = client.get(path, params, HTTP_X_API_KEY=key)
        elapsed = time.perf_counter() - began
        assert r.status_code == 200, (r.status_code, r.content[:300])
        if i >= 2:  # warm-up
            samples.append(elapsed)
    body = r.json()
    assert not body["missing_rates"], body["missing_rates"]
    return samples


def run(*, full: bool, backend: str) -> Report:
    from django.test import Client

    report = Report("net_worth", backend, full)
    end = dt.date.today()
    start = end - dt.timedelta(days=DAYS - 1)
    hh = household_create("networth", accounts=0, categories=20)
    seeded = _seed(hh, end)
    transactions = 100_000 if full else 10_000
    seed_transactions(hh, transactions)
    analyze()
    reps = 20 if full else 5
    client = Client()
    span = {"start_date": start.isoformat(), "end_date": end.isoformat()}
    rows = [
        ("net_worth, 30 days (default)", "/api/v1/net_worth", {}),
        ("net_worth, 3,650 days", "/api/v1/net_worth", span),
        ("net_worth, 3,650 days in EUR", "/api/v1/net_worth", {**span, "currency": "EUR"}),
        (f"cash_flow by month, 10 years, {transactions:,} rows", "/api/v1/cash_flow", span),
    ]
    for name, path, params in rows:
        samples = _time(client, hh.key, path, params, reps)
        report.add(scenario=name, **latency_summary(samples), target=f"p50 < {TARGET_MS} ms")
    report.extra["seed_seconds"] = round(seeded, 2)
    report.extra["peak_rss_mb"] = peak_rss_mb()
    report.print_table(["scenario", "n", "p50_ms", "p99_ms", "mean_ms", "target"])
    return report
