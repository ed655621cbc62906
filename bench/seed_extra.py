"""Trades and imports for the list workload, written straight to the tables. They grow with
the ledger (one trade per 100 transactions, one import per 5,000) from a floor that gives even
the small household full pages (100 trades per account, 120 imports), so small and large
compare pages of the same size."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from decimal import Decimal
from typing import Any

TRADES_PER_TRANSACTION = 1 / 100
IMPORTS_PER_TRANSACTION = 1 / 5000
MIN_TRADES = 500
MIN_IMPORTS = 120


def seed_trades_and_imports(hh: Any, transactions: int, *, seed: int = 11) -> dict[str, int]:
    from finance.ledger.db.fastinsert import fast_insert
    from imports.models import Import
    from trades.models import Security, Trade

    rng = random.Random(seed)
    securities = [
        Security.objects.create(family=hh.family, ticker=f"T{i}", name=f"Fund {i}", manual=True)
        for i in range(20)
    ]
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    trades = max(MIN_TRADES, int(transactions * TRADES_PER_TRANSACTION))
    rows = []
    for i in range(trades):
        qty = Decimal(rng.randrange(1, 500))
        price = Decimal(rng.randrange(100, 50000)) / 100
        rows.append(
            (
                uuid.uuid4(), hh.family.pk, hh.accounts[i % len(hh.accounts)].pk,
                securities[i % len(securities)].pk, "buy",
                dt.date(2016, 1, 1) + dt.timedelta(days=rng.randrange(3650)),
                qty, price, qty * price, "USD", f"Buy T{i % 20}", "Buy",
                now + dt.timedelta(microseconds=i), now,
            )
        )  # fmt: skip
    fast_insert(
        Trade,
        ("id", "family", "account", "security", "kind", "date", "qty", "price", "amount",
         "currency", "name", "investment_activity_label", "created_at", "updated_at"),
        rows,
    )  # fmt: skip
    imports = max(MIN_IMPORTS, int(transactions * IMPORTS_PER_TRANSACTION))
    fast_insert(
        Import,
        ("id", "family", "status", "file", "original_filename", "stats", "rows_processed",
         "created_at"),
        (
            (
                uuid.uuid4(), hh.family.pk, Import.Status.COMPLETE, "", f"bank-{i}.csv",
                {"rows_count": 5000, "valid_rows_count": 5000, "invalid_rows_count": 0},
                5000, now + dt.timedelta(minutes=i),
            )
            for i in range(imports)
        ),
    )  # fmt: skip
    return {"trades": trades, "imports": imports}
