"""Transfer matching run concurrently on PostgreSQL never pairs a transaction twice."""

from __future__ import annotations

import datetime as dt
import threading
from decimal import Decimal

import pytest
from django.db import connection, transaction

from finance.ledger.transfer_matching import transfers_match
from finance.models import Transaction, Transfer
from tests.factories import AccountFactory, FamilyFactory, TransactionFactory

PAIRS = 30
RUNS = 4


@pytest.mark.django_db(transaction=True)
def test_concurrent_matching_pairs_each_transaction_once(postgres_only):
    family = FamilyFactory()
    a = AccountFactory(family=family)
    b = AccountFactory(family=family)
    for i in range(PAIRS):
        amount = Decimal(100 + i)
        TransactionFactory(account=a, amount=amount, date=dt.date(2024, 1, 1 + i % 20))
        TransactionFactory(account=b, amount=-amount, date=dt.date(2024, 1, 2 + i % 20))
    # a second candidate inflow for the first outflow: racing runs must still pick one
    TransactionFactory(account=b, amount=Decimal(-100), date=dt.date(2024, 1, 3))
    barrier = threading.Barrier(RUNS)
    errors: list[BaseException] = []
    counts: list[int] = []

    def run() -> None:
        try:
            barrier.wait()
            with transaction.atomic():
                counts.append(transfers_match(family=family, account_ids=[a.pk, b.pk]))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(RUNS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Transfer.objects.count() == PAIRS
    assert sum(counts) == PAIRS
    legs = list(Transfer.objects.values_list("inflow_transaction_id", "outflow_transaction_id"))
    flat = [pk for pair in legs for pk in pair]
    assert len(flat) == len(set(flat))
    unpaired = Transaction.objects.filter(
        transfer_as_inflow__isnull=True, transfer_as_outflow__isnull=True
    )
    assert unpaired.count() == 1


@pytest.mark.django_db(transaction=True)
def test_parallel_writes_keep_the_balance_and_series_right(postgres_only, live_server):
    """40 transactions posted at once to one account: every balance refresh sees the others."""
    from concurrent.futures import ThreadPoolExecutor

    import requests

    from finance.models import AccountBalance, ApiKey
    from finance.services.api_keys import api_key_create
    from tests.factories import UserFactory

    user = UserFactory()
    account = AccountFactory(family=user.family)
    _, key = api_key_create(user=user, name="k", scope=ApiKey.SCOPE_READ_WRITE)

    def post(i: int) -> int:
        r = requests.post(
            f"{live_server.url}/api/v1/transactions",
            json={
                "transaction": {
                    "account_id": str(account.id),
                    "date": f"2024-01-{1 + i % 10:02d}",
                    "amount": "-10",
                    "name": f"pay {i}",
                }
            },
            headers={"X-Api-Key": key},
            timeout=60,
        )
        return r.status_code

    with ThreadPoolExecutor(max_workers=40) as pool:
        statuses = list(pool.map(post, range(40)))
    assert statuses == [201] * 40
    account.refresh_from_db()
    assert account.balance == Decimal("400")
    day = AccountBalance.objects.get(account=account, date=dt.date(2024, 1, 10))
    assert day.balance == Decimal("400")
    fifth = AccountBalance.objects.get(account=account, date=dt.date(2024, 1, 5))
    assert fifth.balance == Decimal("200")
