"""Admin pages of connections and syncs, household-scoped, and the account "Sync now"."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from finance.models import Account
from finance.services.households import household_permissions_grant
from providers.models import Sync
from tests.providers.conftest import connect, day, run_sync


def admin_client(household) -> Client:
    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


@pytest.fixture
def synced(alice, lunchflow):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "1")
    lunchflow.scenario.add_transaction("a1", "t1", day(1), -1, "x")
    connection = connect(alice)
    run_sync(connection)
    return connection


def test_connection_pages_show_status_accounts_and_syncs_never_the_key(alice, synced):
    client = admin_client(alice)
    page = client.get(reverse("admin:providers_providerconnection_change", args=[synced.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "Checking" in text and "Completed" in text and "test-key" not in text
    assert "credential_encrypted" not in text
    listing = client.get(reverse("admin:providers_sync_changelist"))
    assert listing.status_code == 200 and "completed" in listing.content.decode()


def test_another_household_sees_none_of_it(alice, charlie, synced):
    client = admin_client(charlie)
    listing = client.get(reverse("admin:providers_providerconnection_changelist"))
    assert str(synced.pk) not in listing.content.decode()
    page = client.get(reverse("admin:providers_providerconnection_change", args=[synced.pk]))
    assert page.status_code in (302, 404)
    account = Account.objects.get(family=alice.family)
    sync_url = reverse("admin:providers_account_sync", args=[account.pk])
    assert client.post(sync_url).status_code == 404
    assert Sync.objects.count() == 1


def test_sync_now_action_and_account_button(alice, synced, django_capture_on_commit_callbacks):
    client = admin_client(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:providers_providerconnection_changelist"),
            {"action": "sync_now", "_selected_action": [str(synced.pk)]},
        )
    assert response.status_code == 302
    assert Sync.objects.filter(status="completed").count() == 2
    account = Account.objects.get(family=alice.family)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:providers_account_sync", args=[account.pk]))
    assert response.status_code == 302
    latest = Sync.objects.first()
    assert latest.provider_account.account == account and latest.status == "completed"
    assert client.get(reverse("admin:providers_account_sync", args=[account.pk])).status_code == 405
