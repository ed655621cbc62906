"""The connection screens in the admin, against the real fake providers over HTTP: add a
Lunch Flow or SimpleFIN connection, link discovered accounts, reconnect, sync history."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from finance.models import Transaction, User
from providers.models import ProviderConnection, Sync
from providers.testing import simplefin_pytest
from providers.testing.simplefin_demo import demo_scenario
from tests.factories import AccountFactory
from tests.providers.conftest import connect, day
from tests.providers.test_provider_admin import admin_client

simplefin_server = simplefin_pytest.simplefin_server
ADD = reverse("admin:providers_providerconnection_add")


def change_url(connection) -> str:
    return reverse("admin:providers_providerconnection_change", args=[connection.pk])


@pytest.fixture
def three_accounts(lunchflow):
    for upstream, name in (("a1", "Checking"), ("a2", "Savings"), ("a3", "Old card")):
        lunchflow.scenario.add_account(upstream, name, "EUR", "100.00")
        lunchflow.scenario.add_transaction(upstream, f"t-{upstream}", day(2), "-10.00", name)
    return lunchflow


def test_add_lunchflow_with_a_good_key_discovers_accounts(alice, three_accounts):
    client = admin_client(alice)
    assert client.get(ADD).status_code == 200
    response = client.post(
        ADD, {"provider": "lunchflow", "api_key": "test-key", "name": "My bank"}, follow=True
    )
    connection = ProviderConnection.objects.get(family=alice.family)
    assert connection.name == "My bank" and connection.accounts.count() == 3
    text = response.content.decode()
    assert "3 accounts found" in text and "Savings" in text and "test-key" not in text


def test_add_with_a_bad_key_is_a_form_error_and_creates_nothing(alice, three_accounts):
    response = admin_client(alice).post(ADD, {"provider": "lunchflow", "api_key": "wrong-key-123"})
    assert response.status_code == 200
    text = response.content.decode()
    assert "errorlist" in text and "wrong-key-123" not in text
    assert not ProviderConnection.objects.exists()


def test_add_needs_the_providers_credential(alice, three_accounts):
    response = admin_client(alice).post(ADD, {"provider": "simplefin", "api_key": "test-key"})
    assert response.status_code == 200 and "Required for this provider" in response.content.decode()
    assert not ProviderConnection.objects.exists()


def test_add_simplefin_with_a_setup_token_and_refuse_it_twice(alice, simplefin_server, settings):
    token = simplefin_server.create_setup_token(demo_scenario())
    client = admin_client(alice)
    response = client.post(ADD, {"provider": "simplefin", "setup_token": token}, follow=True)
    connection = ProviderConnection.objects.get(family=alice.family)
    assert connection.provider == "simplefin" and connection.accounts.exists()
    assert token not in response.content.decode()
    again = client.post(ADD, {"provider": "simplefin", "setup_token": token})
    assert again.status_code == 200 and "errorlist" in again.content.decode()
    assert ProviderConnection.objects.count() == 1


def test_link_new_existing_and_skip_then_sync(
    alice, three_accounts, django_capture_on_commit_callbacks
):
    connection = connect(alice)
    mine = AccountFactory(family=alice.family, name="My savings", currency="EUR")
    client = admin_client(alice)
    page = client.get(change_url(connection)).content.decode()
    assert "Discovered accounts" in page and "Link to My savings" in page
    by_upstream = {pa.upstream_id: pa for pa in connection.accounts.all()}
    response = client.post(
        reverse("admin:providers_connection_link", args=[connection.pk]),
        {
            f"link-{by_upstream['a1'].pk}": "new",
            f"link-{by_upstream['a2'].pk}": str(mine.pk),
            f"link-{by_upstream['a3'].pk}": "skip",
        },
    )
    assert response.status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:providers_connection_sync", args=[connection.pk]))
    assert Sync.objects.get().status == "completed"
    assert Transaction.objects.get(name="Savings").account == mine
    assert Transaction.objects.get(name="Checking").account.name == "Checking"
    assert not Transaction.objects.filter(name="Old card").exists()
    history = client.get(change_url(connection)).content.decode()
    assert "Sync history" in history and "2 new" in history


def test_linking_to_an_account_of_another_household_changes_nothing(alice, charlie, three_accounts):
    connection = connect(alice)
    theirs = AccountFactory(family=charlie.family, name="Theirs")
    pa = connection.accounts.get(upstream_id="a1")
    client = admin_client(alice)
    url = reverse("admin:providers_connection_link", args=[connection.pk])
    page = client.post(url, {f"link-{pa.pk}": str(theirs.pk)}, follow=True).content.decode()
    assert "does not exist in this household" in page
    client.post(url, {f"link-{pa.pk}": "not-a-uuid"})
    pa.refresh_from_db()
    assert pa.account_id is None and not pa.skipped


def test_reconnect_a_connection_that_requires_update(
    alice, three_accounts, django_capture_on_commit_callbacks
):
    connection = connect(alice)
    ProviderConnection.objects.filter(pk=connection.pk).update(
        status="requires_update", error="The API key was refused."
    )
    three_accounts.scenario.api_keys = {"new-key"}
    client = admin_client(alice)
    url = reverse("admin:providers_connection_reconnect", args=[connection.pk])
    page = client.get(url).content.decode()
    assert "New Lunch Flow API key" in page and "Requires" in page
    bad = client.post(url, {"credential": "test-key"})
    assert bad.status_code == 200 and "errorlist" in bad.content.decode()
    assert client.post(url, {"credential": "new-key"}).status_code == 302
    connection.refresh_from_db()
    assert connection.status == "good" and connection.accounts.count() == 3
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:providers_connection_sync", args=[connection.pk]))
    assert Sync.objects.get().status == "completed"


def test_another_household_gets_404_on_every_view(alice, charlie, three_accounts):
    connection = connect(alice)
    client = admin_client(charlie)
    for name in ("providers_connection_link", "providers_connection_sync"):
        assert client.post(reverse(f"admin:{name}", args=[connection.pk])).status_code == 404
    url = reverse("admin:providers_connection_reconnect", args=[connection.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, {"credential": "x"}).status_code == 404
    assert client.get(change_url(connection)).status_code in (302, 404)
    assert not Sync.objects.exists()


def test_superuser_sees_every_household_with_a_household_filter(alice, charlie, three_accounts):
    connect(alice)
    admin_user = User.objects.create_superuser(email="root@example.com", password="x")
    client = Client()
    client.force_login(admin_user)
    listing = client.get(reverse("admin:providers_providerconnection_changelist"))
    text = listing.content.decode()
    assert "By household" in text and alice.family.name in text
    only_charlie = client.get(
        reverse("admin:providers_providerconnection_changelist"),
        {"household": str(charlie.family.pk)},
    ).content.decode()
    assert "0 provider connections" in only_charlie


def test_superuser_without_household_chooses_one(alice, three_accounts):
    admin_user = User.objects.create_superuser(email="root@example.com", password="x")
    client = Client()
    client.force_login(admin_user)
    missing = client.post(ADD, {"provider": "lunchflow", "api_key": "test-key"})
    assert "Choose the household" in missing.content.decode()
    client.post(ADD, {"provider": "lunchflow", "api_key": "test-key", "family": alice.family.pk})
    assert ProviderConnection.objects.get().family == alice.family


def test_the_credential_never_appears(alice, three_accounts):
    connection = connect(alice)
    client = admin_client(alice)
    for url in (
        change_url(connection),
        reverse("admin:providers_connection_reconnect", args=[connection.pk]),
    ):
        text = client.get(url).content.decode()
        assert "test-key" not in text and connection.credential_encrypted not in text
