from __future__ import annotations

import pytest
import requests

from finance.services.households import household_permissions_grant
from tests.browser.conftest import login, shot
from tests.factories import UserFactory


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_create_use_and_revoke_an_api_key_in_the_browser(page, live_server):
    alice = UserFactory(email="alice@example.com", family__name="Alice household")
    bob = UserFactory(email="bob@example.com", family__name="Bob household")
    for user in (alice, bob):
        household_permissions_grant(user=user)

    login(page, live_server, alice.email)
    assert "Alice household" in page.content()
    shot(page, "dashboard-alice")

    page.goto(f"{live_server.url}/admin/finance/apikey/add/")
    page.fill("#id_name", "laptop script")
    page.select_option("#id_scope", "read_write")
    page.click("input[name=_save]")
    key = page.input_value("#new-api-key")
    assert key.startswith("pfk_")
    page.click("#copy-api-key")
    shot(page, "api-key-created")

    api = f"{live_server.url}/api/v1/transactions"
    assert requests.get(api, headers={"X-Api-Key": key}, timeout=10).status_code == 200

    page.goto(f"{live_server.url}/admin/finance/apikey/")
    assert "laptop script" in page.content() and key not in page.content()
    page.click("text=laptop script")
    page.click("input[name=_revoke]")
    page.wait_for_load_state()
    shot(page, "api-key-revoked")
    assert "revoked" in page.content()
    assert requests.get(api, headers={"X-Api-Key": key}, timeout=10).status_code == 401

    page.context.clear_cookies()
    login(page, live_server, bob.email)
    page.goto(f"{live_server.url}/admin/finance/apikey/")
    shot(page, "api-keys-bob")
    assert "laptop script" not in page.content()
