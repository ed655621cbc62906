"""Real parallel requests through a live server, on PostgreSQL."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from finance.models import ApiKey, Transaction
from finance.services.api_keys import api_key_create
from tests.factories import AccountFactory, UserFactory


@pytest.mark.django_db(transaction=True)
def test_50_identical_idempotent_creates_leave_one_row(postgres_only, live_server):
    user = UserFactory()
    account = AccountFactory(family=user.family)
    _, key = api_key_create(user=user, name="k", scope=ApiKey.SCOPE_READ_WRITE)
    payload = {
        "transaction": {
            "account_id": str(account.id),
            "date": "2024-05-02",
            "amount": "19.99",
            "name": "Same",
            "external_id": "race-1",
        }
    }

    def post(_: int) -> int:
        r = requests.post(
            f"{live_server.url}/api/v1/transactions",
            json=payload,
            headers={"X-Api-Key": key},
            timeout=60,
        )
        return r.status_code

    with ThreadPoolExecutor(max_workers=50) as pool:
        statuses = list(pool.map(post, range(50)))
    assert sorted(set(statuses)) == [200, 201], statuses
    assert statuses.count(201) == 1
    assert Transaction.objects.filter(account=account, external_id="race-1").count() == 1
