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


@pytest.mark.django_db(transaction=True)
def test_concurrent_edits_and_creates_leave_the_series_a_derivation_gives(
    postgres_only, live_server
):
    """Edits move their flows in place and creates move theirs: racing on one account, each
    waits for the account's lock, and the series left is exactly a derivation's."""
    from tests.finance.test_balance_shift import _derived, _rows

    user = UserFactory()
    account = AccountFactory(family=user.family)
    _, key = api_key_create(user=user, name="k", scope=ApiKey.SCOPE_READ_WRITE)
    url, headers = f"{live_server.url}/api/v1/transactions", {"X-Api-Key": key}

    def create(i: int) -> str:
        body = {"account_id": str(account.id), "date": f"2024-05-{1 + i % 28:02d}",
                "amount": f"{i + 1}.25", "name": f"row {i}"}  # fmt: skip
        r = requests.post(url, json={"transaction": body}, headers=headers, timeout=60)
        assert r.status_code == 201, r.text
        return r.json()["id"]

    ids = [create(i) for i in range(12)]

    def work(i: int) -> int:
        if i >= 12:  # two edits racing on one row: each moves the flow it finds under the lock
            r = requests.patch(
                f"{url}/{ids[i % 2]}", json={"transaction": {"amount": f"{i}.75"}},
                headers=headers, timeout=60,
            )  # fmt: skip
            return r.status_code
        if i % 3 == 2:  # a create before the series' opening
            body = {"account_id": str(account.id), "date": f"2024-04-{1 + i:02d}",
                    "amount": "-2.00", "name": f"new {i}"}  # fmt: skip
            r = requests.post(url, json={"transaction": body}, headers=headers, timeout=60)
            return r.status_code
        change = {"amount": f"{i * 3}.50"} if i % 2 else {"date": f"2024-06-{1 + i:02d}"}
        r = requests.patch(
            f"{url}/{ids[i]}", json={"transaction": change}, headers=headers, timeout=60
        )
        return r.status_code

    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(work, range(16)))
    assert set(statuses) <= {200, 201}, statuses
    account.refresh_from_db()
    assert (_rows(account), account.balance) == _derived(account)
