"""The account's admin page: balance, chart, provider link and last sync, Sync now with its
JSON progress, latest transactions with the Pending badge; scoped to the household."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from finance.models import Account
from providers.models import Sync
from tests.providers.conftest import connect, day, run_sync
from tests.providers.test_provider_admin import admin_client


@pytest.fixture
def linked(alice, lunchflow):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "1500.25")
    lunchflow.scenario.add_transaction("a1", "t1", day(3), "-42.10", "Groceries")
    lunchflow.scenario.add_transaction("a1", "t2", day(1), "-9.99", "Coffee shop", pending=True)
    run_sync(connect(alice))
    return Account.objects.get(family=alice.family)


def page_of(client: Client, account: Account) -> str:
    response = client.get(reverse("admin:finance_account_change", args=[account.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_page_shows_balance_chart_connection_last_sync_and_pending_badge(alice, linked):
    text = page_of(admin_client(alice), linked)
    assert "1,500.25 EUR" in text
    assert '<svg class="pf-chart"' in text and "daily balance chart" in text
    assert "Lunch Flow" in text and 'id="sync-status">Completed' in text.replace("\n", "")
    assert 'id="sync-now"' in text
    assert "Coffee shop" in text and "-42.10 EUR" in text
    rows = re.findall(r'<tr class="pf-tx.*?</tr>', text, re.S)
    coffee = next(r for r in rows if "Coffee shop" in r)
    groceries = next(r for r in rows if "Groceries" in r)
    assert "Pending" in coffee and "Pending" not in groceries


def test_unlinked_account_page_has_no_sync_button(alice):
    from tests.factories import AccountFactory

    account = AccountFactory(family=alice.family)
    text = page_of(admin_client(alice), account)
    assert 'id="sync-now"' not in text and "Not linked to a bank connection" in text
    assert "No transactions yet." in text


def test_page_reads_are_bounded(alice, linked, django_assert_max_num_queries):
    client = admin_client(alice)
    with django_assert_max_num_queries(30):
        page_of(client, linked)


def test_sync_now_json_then_status_reports_the_result(
    alice, linked, lunchflow, django_capture_on_commit_callbacks
):
    lunchflow.scenario.add_transaction("a1", "t3", day(0), "-5.00", "Bakery", pending=True)
    client = admin_client(alice)
    url = reverse("admin:providers_account_sync", args=[linked.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, headers={"Accept": "application/json"})
    assert response.status_code == 202
    sync_id = response.json()["id"]
    status_url = reverse("admin:providers_account_sync_status", args=[linked.pk])
    body = client.get(status_url, {"sync": sync_id}).json()
    assert body["id"] == sync_id and body["status"] == "completed"
    assert body["stats"]["transactions_added"] == 1
    assert "Bakery" in body["transactions_html"] and "Pending" in body["transactions_html"]
    assert body["balance_text"] == "1,500.25 EUR"


def test_status_while_a_sync_runs_carries_no_page_parts(alice, linked):
    link = linked.provider_accounts.get()
    running = Sync.objects.create(connection=link.connection, status="syncing")
    status_url = reverse("admin:providers_account_sync_status", args=[linked.pk])
    body = admin_client(alice).get(status_url, {"sync": str(running.pk)}).json()
    assert body["status"] == "syncing" and "transactions_html" not in body


def test_another_household_gets_404_everywhere(alice, charlie, linked):
    client = admin_client(charlie)
    change = client.get(reverse("admin:finance_account_change", args=[linked.pk]))
    assert change.status_code in (302, 404)
    assert "Checking" not in change.content.decode()
    sync_url = reverse("admin:providers_account_sync", args=[linked.pk])
    assert client.post(sync_url, headers={"Accept": "application/json"}).status_code == 404
    status_url = reverse("admin:providers_account_sync_status", args=[linked.pk])
    assert client.get(status_url).status_code == 404
    assert Sync.objects.count() == 1


def test_sync_now_needs_the_csrf_token(alice, linked):
    from finance.services.households import household_permissions_grant

    household_permissions_grant(user=alice.user)
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice.user)
    url = reverse("admin:providers_account_sync", args=[linked.pk])
    assert client.post(url, headers={"Accept": "application/json"}).status_code == 403
    assert Sync.objects.count() == 1


def test_unlinked_account_sync_answers_422_json(alice):
    from tests.factories import AccountFactory

    account = AccountFactory(family=alice.family)
    url = reverse("admin:providers_account_sync", args=[account.pk])
    response = admin_client(alice).post(url, headers={"Accept": "application/json"})
    assert response.status_code == 422 and "not linked" in response.json()["message"]


def test_badges_follow_the_last_sync_a_failed_sync_is_not_good(alice, linked, lunchflow):
    from providers.models import ProviderConnection
    from providers.testing.lunchflow_server import Fault

    client = admin_client(alice)
    connection = ProviderConnection.objects.get(family=alice.family)
    badge = re.compile(r'id="connection-health">([^<]+)<')
    connection_badge = re.compile(r'id="connection-status-badge">([^<]+)<')
    connection_page = reverse("admin:providers_providerconnection_change", args=[connection.pk])
    assert badge.search(page_of(client, linked)).group(1) == "Good"

    lunchflow.scenario.faults["/accounts/a1/transactions"] = Fault(status=500)
    assert run_sync(connection).status == "failed"
    failed = badge.search(page_of(client, linked)).group(1)
    assert failed in ("Error", "Last sync failed")
    text = client.get(connection_page).content.decode()
    assert connection_badge.search(text).group(1) == failed
    # the connection marked good again while its last sync failed: still not "Good"
    ProviderConnection.objects.filter(pk=connection.pk).update(status="good", error="")
    assert badge.search(page_of(client, linked)).group(1) == "Last sync failed"

    del lunchflow.scenario.faults["/accounts/a1/transactions"]
    assert run_sync(connection).status == "completed"
    assert badge.search(page_of(client, linked)).group(1) == "Good"
