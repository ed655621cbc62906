"""Admin lists read a fixed number of queries, however many rows they show."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from finance.models import User
from finance.services.households import household_permissions_grant
from tests.conftest import make_household
from tests.factories import AccountFactory, CategoryFactory
from tests.providers.factories import (
    ProviderAccountFactory,
    ProviderConnectionFactory,
    SyncFactory,
)

pytestmark = pytest.mark.django_db


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_categories_list_reads_parents_with_the_rows(alice):
    household_permissions_grant(user=alice.user)
    client = Client()
    client.force_login(alice.user)
    url = reverse("admin:finance_category_changelist")
    CategoryFactory(family=alice.family, parent=CategoryFactory(family=alice.family, name="Food"))
    one = _queries(client, url)
    for name in ("Home", "Travel", "Fun"):
        CategoryFactory(family=alice.family, parent=CategoryFactory(family=alice.family, name=name))
    assert _queries(client, url) == one


def test_staff_users_list_reads_households_with_the_rows(alice):
    client = Client()
    client.force_login(User.objects.create_superuser(email="root@example.com", password="x"))
    url = reverse("admin:finance_user_changelist")
    one = _queries(client, url)
    for name in ("bob", "dana", "erin"):
        make_household(name)
    assert _queries(client, url) == one


def test_dashboard_reads_recent_syncs_connections_with_the_rows(alice):
    household_permissions_grant(user=alice.user)
    client = Client()
    client.force_login(alice.user)
    connection_ = ProviderConnectionFactory(family=alice.family)
    SyncFactory(connection=connection_)
    one = _queries(client, reverse("admin:index"))
    for _ in range(3):
        SyncFactory(connection=ProviderConnectionFactory(family=alice.family))
    assert _queries(client, reverse("admin:index")) == one


def test_provider_accounts_list_reads_connections_and_accounts_with_the_rows(alice):
    household_permissions_grant(user=alice.user)
    client = Client()
    client.force_login(alice.user)
    url = reverse("admin:providers_provideraccount_changelist")
    linked = lambda: ProviderAccountFactory(  # noqa: E731
        connection=ProviderConnectionFactory(family=alice.family),
        account=AccountFactory(family=alice.family),
    )
    linked()
    one = _queries(client, url)
    for _ in range(3):
        linked()
    assert _queries(client, url) == one
