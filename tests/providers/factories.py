"""Factories for provider records (no HTTP: for isolation and admin tests)."""

from __future__ import annotations

import factory
from factory.django import DjangoModelFactory

from providers.crypto import encrypt_secret
from providers.models import ProviderAccount, ProviderConnection, Sync
from tests.factories import FamilyFactory


class ProviderConnectionFactory(DjangoModelFactory):
    class Meta:
        model = ProviderConnection

    family = factory.SubFactory(FamilyFactory)
    provider = "lunchflow"
    name = "Lunch Flow"
    credential_encrypted = factory.LazyFunction(lambda: encrypt_secret("factory-key"))


class ProviderAccountFactory(DjangoModelFactory):
    class Meta:
        model = ProviderAccount

    connection = factory.SubFactory(ProviderConnectionFactory)
    upstream_id = factory.Sequence(lambda n: f"up-{n}")
    name = factory.Sequence(lambda n: f"Upstream {n}")
    currency = "EUR"


class SyncFactory(DjangoModelFactory):
    class Meta:
        model = Sync

    connection = factory.SubFactory(ProviderConnectionFactory)
    status = Sync.Status.COMPLETED
