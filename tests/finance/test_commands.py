from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from finance.models import ApiKey, User


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_createapikey_creates_user_household_and_prints_the_key_alone():
    out = run("createapikey", "--email", "Ops@Example.com", "--scope", "read", "--name", "cli")
    key = out.strip()
    assert out == key + "\n" and key.startswith("pfk_")
    user = User.objects.get(email="ops@example.com")
    assert user.family is not None
    assert ApiKey.objects.get(user=user).scope == "read"
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    assert client.get("/api/v1/transactions").status_code == 200
    second = run("createapikey", "--email", "ops@example.com", "--name", "second").strip()
    assert second != key and User.objects.filter(email="ops@example.com").count() == 1
    assert ApiKey.objects.get(prefix=second.split("_")[1]).scope == "read_write"


@pytest.mark.django_db
def test_createhousehold_creates_an_admin_user_who_can_log_in(client):
    run(
        "createhousehold",
        "--email",
        "hh@example.com",
        "--password",
        "a long password 1",
        "--name",
        "The Smiths",
        "--currency",
        "eur",
    )
    user = User.objects.get(email="hh@example.com")
    assert user.family.name == "The Smiths" and user.family.currency == "EUR"
    assert client.login(username="hh@example.com", password="a long password 1")
    run("createhousehold", "--email", "hh@example.com", "--password", "another password 2")
    assert client.login(username="hh@example.com", password="another password 2")
    with pytest.raises(CommandError):
        run("createhousehold", "--email", "x@example.com", "--password", "p", "--currency", "ZZZ")
