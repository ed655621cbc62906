"""Every household page in a real Chromium, at a laptop's size (1366x900) and a phone's
(390x844), on the demo household's year: no horizontal overflow, no raw ids, JSON, enum names
or "(s)" plurals in the text, a screenshot of each, and no serious or critical accessibility
violation (axe-core, from the npm registry, run in the page)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from finance.demo_data import demo_seed
from finance.models import Account, Category, Transaction, Transfer
from finance.services.households import household_permissions_grant
from imports.models import Import
from providers.models import ProviderConnection, Sync
from providers.testing.lunchflow_server import Fault
from tests.browser.axe import axe_serious, axe_source
from tests.browser.conftest import OUTPUT, login, shot
from tests.factories import UserFactory
from tests.providers.conftest import connect, day, lunchflow, run_sync  # noqa: F401 (fixture)
from trades.models import Holding

SIZES = {"laptop": (1366, 900), "phone": (390, 844)}
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
JSON = re.compile(r"[{\[]\s*\"[a-z_]+\"\s*:")
ENUM = re.compile(
    r"\b(not_verified|cc_payment|funds_movement|inflows_positive|inflows_negative|"
    r"requires_update|revert_failed|credit_card|other_asset|other_liability|rows_count|"
    r"[a-z]+_[a-z]+_(?:count|label|id))\b|Cc Payment|%[dmYyb]"
)
BAD_PLURAL = re.compile(r"\(s\)|\b1 (rows|accounts|transactions|syncs|days)\b")
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
TRAILING_ZEROS = re.compile(r"\d\.\d*0000\b")


def shot_dir():
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return OUTPUT


def _pages(family) -> dict[str, str]:
    checking = Account.objects.get(family=family, name="Everyday checking")
    linked = Account.objects.filter(family=family, name="Joint card").first()
    txn = Transaction.objects.filter(family=family, category__isnull=False).order_by("-date")[0]
    imp = Import.objects.filter(family=family).first()
    connection = ProviderConnection.objects.filter(family=family).first()
    category = Category.objects.filter(family=family).first()

    def change(name: str, obj) -> str:
        return reverse(f"admin:{name}_change", args=[obj.pk])

    return {
        "dashboard": reverse("admin:index"),
        "transactions": reverse("admin:finance_transaction_changelist"),
        "transaction": change("finance_transaction", txn),
        "transaction-add": reverse("admin:finance_transaction_add"),
        "accounts": reverse("admin:finance_account_changelist"),
        "account": change("finance_account", checking),
        "account-linked": change("finance_account", linked),
        "categories": reverse("admin:finance_category_changelist"),
        "category": change("finance_category", category),
        "transfers": reverse("admin:finance_transfer_changelist"),
        "imports": reverse("admin:imports_import_changelist"),
        "import": change("imports_import", imp),
        "import-upload": reverse("admin:imports_import_add"),
        "connections": reverse("admin:providers_providerconnection_changelist"),
        "connection": change("providers_providerconnection", connection),
        "syncs": reverse("admin:providers_sync_changelist"),
        "holdings": reverse("admin:trades_holding_changelist"),
        "trades": reverse("admin:trades_trade_changelist"),
        "rules": reverse("admin:finance_rule_changelist"),
        "api-keys": reverse("admin:finance_apikey_changelist"),
        "account-add": reverse("admin:finance_account_add"),
        "transfer": change("finance_transfer", Transfer.objects.filter(family=family).first()),
        "merchants": reverse("admin:finance_merchant_changelist"),
        "tags": reverse("admin:finance_tag_changelist"),
        "exchange-rates": reverse("admin:finance_exchangerate_changelist"),
        "securities": reverse("admin:trades_security_changelist"),
        "security-prices": reverse("admin:trades_securityprice_changelist"),
        "provider-accounts": reverse("admin:providers_provideraccount_changelist"),
        "connection-add": reverse("admin:providers_providerconnection_add"),
        "sync": change("providers_sync", Sync.objects.filter(connection=connection).first()),
        "import-rows": reverse("admin:imports_importrow_changelist"),
    }


@pytest.fixture
def household(lunchflow):  # noqa: F811
    user = UserFactory(email="demo@example.com", family__name="Demo household")
    household_permissions_grant(user=user)
    demo_seed(family=user.family)
    scenario = lunchflow.scenario
    scenario.add_account("c1", "Joint card", "USD", "-310.00")
    scenario.add_transaction("c1", "t1", day(3), "-42.10", "Corner bakery")
    scenario.add_transaction("c1", "t2", day(1), "-18.00", "Book shop", pending=True)

    class Household:
        family = user.family

    connection = connect(Household)
    run_sync(connection)
    scenario.faults["/accounts"] = Fault(status=503)  # the next sync fails
    run_sync(connection)
    assert Holding.objects.filter(account__family=user.family).exists()
    return user


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("size", SIZES)
def test_household_pages_read_well(chromium, live_server, household, size):
    width, height = SIZES[size]
    context = chromium.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(20_000)
    axe = axe_source()
    problems: list[str] = []
    try:
        login(page, live_server, household.email)
        for name, url in _pages(household.family).items():
            response = page.goto(f"{live_server.url}{url}")
            assert response is not None and response.ok, f"{name}: {response and response.status}"
            page.wait_for_load_state("networkidle")
            shot(page, f"{size}-{name}")
            page.screenshot(path=str(shot_dir() / f"{size}-{name}-top.png"))  # the first screen
            overflow = page.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth"
            )
            if overflow > 1:
                problems.append(f"{name}: {overflow}px wider than the screen")
            text = page.locator("body").inner_text()
            for label, pattern in (
                ("an id", UUID),
                ("JSON", JSON),
                ("an enum name or strftime code", ENUM),
                ("a broken plural", BAD_PLURAL),
                ("an ISO timestamp", ISO_TIME),
                ("trailing zeros", TRAILING_ZEROS),
            ):
                found = pattern.search(text)
                if found:
                    problems.append(f"{name}: {label} in the text: {found.group(0)!r}")
            if axe is not None:
                problems += [f"{name}: {v}" for v in axe_serious(page, axe)]
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    if axe is None:
        pytest.skip("npm is not available: the accessibility pass was skipped")
