"""Real parallel trade requests through a live server, on PostgreSQL."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
import requests

from finance.models import Account, ApiKey
from finance.services.api_keys import api_key_create
from tests.factories import AccountFactory, UserFactory
from trades.models import Holding, Security, Trade


@pytest.mark.django_db(transaction=True)
def test_parallel_buys_of_a_new_ticker_make_one_security_and_a_right_holding(
    postgres_only, live_server
):
    user = UserFactory()
    account = AccountFactory(family=user.family, account_type=Account.Type.INVESTMENT)
    _, key = api_key_create(user=user, name="k", scope=ApiKey.SCOPE_READ_WRITE)

    def buy(i: int) -> int:
        payload = {
            "trade": {
                "account_id": str(account.id),
                "date": f"2024-05-{1 + i % 28:02d}",
                "ticker": "RACE",
                "qty": 1,
                "price": "10.00",
            }
        }
        r = requests.post(
            f"{live_server.url}/api/v1/trades",
            json=payload,
            headers={"X-Api-Key": key},
            timeout=60,
        )
        return r.status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(buy, range(20)))
    assert statuses == [201] * 20, statuses
    assert Security.objects.filter(ticker="RACE").count() == 1
    assert Trade.objects.filter(account=account).count() == 20
    holding = Holding.objects.get(account=account)
    assert holding.qty == Decimal(20) and holding.cost_basis == Decimal(200)
