"""Every figure exact on both databases (issue 18; docs/decisions.md "Exact money on SQLite"):
sums of many of the largest amounts, balances and their daily series, net worth and cash flow
to the fourth decimal (CLF has four), and filters, counts and sorts by amount in numeric order.
A float anywhere on the way (SQLite's REAL, SUM() or a comparison as text) fails these."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.db import connection

from finance.models import Transaction
from finance.services.households import household_permissions_grant

URL = "/api/v1/transactions"
BIG = Decimal("9999999999999.9999")  # core/bounds.py MAX_AMOUNT
DAYS = ("2024-05-01", "2024-05-02", "2024-05-03")


def bulk(household, items):
    r = household.client.post(f"{URL}/bulk", {"transactions": items}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["summary"]["created"] == len(items), r.content
    return r


def item(account, amount, date="2024-05-01", name="x"):
    return {"account_id": str(account.id), "date": date, "amount": str(amount), "name": name}


@pytest.fixture
def clf(alice):
    """A household counting in CLF (four decimal places), with one CLF account."""
    alice.family.currency = "CLF"
    alice.family.save(update_fields=["currency"])
    return alice.account(name="Vault", currency="CLF")


@pytest.mark.django_db
class TestLargestAmountsAddUpExactly:
    # 70 max-amount incomes a day on three days, and a small expense each day: every
    # running balance needs 20 significant digits.
    PER_DAY = 70
    SPEND = Decimal("0.0003")

    def _ledger(self, alice, account):
        items = [
            item(account, -BIG, day, f"in {day} {i}") for day in DAYS for i in range(self.PER_DAY)
        ]
        items += [item(account, self.SPEND, day, f"out {day}") for day in DAYS]
        bulk(alice, items)
        return [self.PER_DAY * BIG * (n + 1) - self.SPEND * (n + 1) for n in range(len(DAYS))]

    def test_balance_and_its_daily_series(self, alice, clf):
        expected = self._ledger(alice, clf)
        assert expected[-1] == Decimal("2099999999999999.9781")
        body = alice.client.get(f"/api/v1/accounts/{clf.id}").json()
        assert Decimal(body["balance"]) == expected[-1]
        r = alice.client.get(
            f"/api/v1/accounts/{clf.id}/balances?start_date=2024-04-30&end_date=2024-05-04"
        )
        assert r.status_code == 200, r.content
        assert [Decimal(p["balance"]) for p in r.json()["balances"]] == [
            Decimal(0),
            *expected,
            expected[-1],
        ]
        # A change in the middle of the series recomputes from there on, exactly.
        bulk(alice, [item(clf, BIG, DAYS[1], "back")])
        series = alice.client.get(
            f"/api/v1/accounts/{clf.id}/balances?start_date=2024-05-01&end_date=2024-05-03"
        ).json()["balances"]
        assert [Decimal(p["balance"]) for p in series] == [
            expected[0],
            expected[1] - BIG,
            expected[2] - BIG,
        ]

    def test_net_worth_and_cash_flow(self, alice, clf):
        expected = self._ledger(alice, clf)
        r = alice.client.get("/api/v1/net_worth?start_date=2024-05-01&end_date=2024-05-03")
        assert r.status_code == 200, r.content
        body = r.json()
        assert body["currency"] == "CLF"
        assert [Decimal(p["net_worth"]) for p in body["series"]] == expected
        assert [Decimal(p["assets"]) for p in body["series"]] == expected
        r = alice.client.get("/api/v1/cash_flow?start_date=2024-05-01&end_date=2024-05-31")
        assert r.status_code == 200, r.content
        (may,) = r.json()["periods"]
        assert Decimal(may["income"]) == 3 * self.PER_DAY * BIG == Decimal("2099999999999999.9790")
        assert Decimal(may["expense"]) == 3 * self.SPEND
        assert Decimal(may["net"]) == expected[-1]

    def test_stored_as_written(self, alice, clf):
        """The single and the bulk paths (the ORM and executemany) store the exact value."""
        single = {"account_id": str(clf.id), "date": DAYS[0], "amount": "-" + str(BIG)}
        r = alice.client.post(URL, {"transaction": {**single, "name": "one"}}, format="json")
        assert r.status_code == 201, r.content
        bulk(alice, [item(clf, "12.5", name="two"), item(clf, "-0.0001", name="three")])
        stored = dict(Transaction.objects.filter(account=clf).values_list("name", "amount"))
        assert stored == {"one": -BIG, "two": Decimal("12.5"), "three": Decimal("-0.0001")}
        if connection.vendor == "sqlite":  # canonical text: equal values, equal texts
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT typeof(amount), amount FROM finance_transaction WHERE account_id = %s",
                    [clf.pk.hex],
                )
                rows = set(cursor.fetchall())
            assert rows == {
                ("text", "-9999999999999.9999"),
                ("text", "12.5000"),
                ("text", "-0.0001"),
            }


@pytest.mark.django_db
class TestAmountOrder:
    AMOUNTS = [
        "9999999999999.9999",
        "9999999999999.9998",
        "-9999999999999.9999",
        "-9999999999999.9998",
        "10",
        "9",
        "0.0001",
        "0",
        "-0.0001",
        "-9",
        "-10",
    ]

    def _ledger(self, alice, account):
        bulk(alice, [item(account, a, name=a) for a in self.AMOUNTS])

    def _names(self, alice, query):
        r = alice.client.get(f"{URL}?{query}&per_page=100")
        assert r.status_code == 200, r.content
        body = r.json()
        names = sorted((t["name"] for t in body["transactions"]), key=Decimal)
        assert body["pagination"]["total_count"] == len(names)
        return names

    @pytest.mark.parametrize(
        ("query", "wanted"),
        [
            ("min_amount=9999999999999.9999", lambda d: d >= BIG),
            ("max_amount=9999999999999.9998", lambda d: d <= BIG - Decimal("0.0001")),
            ("min_amount=-9999999999999.9998", lambda d: d >= -BIG + Decimal("0.0001")),
            ("max_amount=-9999999999999.9999", lambda d: d <= -BIG),
            ("min_amount=9", lambda d: d >= 9),  # as text, "10" < "9"
            ("min_amount=-9&max_amount=10", lambda d: -9 <= d <= 10),
            ("max_amount=-10", lambda d: d <= -10),  # as text, "-9" > "-10"
            ("min_amount=0.00005", lambda d: d >= Decimal("0.00005")),
            ("max_amount=0.00005", lambda d: d <= Decimal("0.00005")),
            ("min_amount=0&max_amount=0", lambda d: d == 0),
            ("type=income", lambda d: d < 0),
            ("type=expense", lambda d: d >= 0),
            ("type=income&account_id={account}", lambda d: d < 0),  # the kept counters
            ("type=expense&account_id={account}", lambda d: d >= 0),
        ],
    )
    def test_filters_compare_numbers(self, alice, query, wanted):
        account = alice.account()
        self._ledger(alice, account)
        expected = sorted((a for a in self.AMOUNTS if wanted(Decimal(a))), key=Decimal)
        assert self._names(alice, query.format(account=account.id)) == expected

    def test_a_changed_sign_moves_the_kept_counters(self, alice):
        account = alice.account()
        self._ledger(alice, account)
        txn = Transaction.objects.get(account=account, name="10")
        r = alice.client.patch(f"{URL}/{txn.id}", {"transaction": {"amount": "-10"}}, format="json")
        assert r.status_code == 200, r.content
        income = self._names(alice, f"type=income&account_id={account.id}")
        assert income == sorted([a for a in self.AMOUNTS if Decimal(a) < 0] + ["10"], key=Decimal)

    def test_admin_sorts_by_amount_as_numbers(self, alice, client):
        account = alice.account()
        self._ledger(alice, account)
        household_permissions_grant(user=alice.user)
        client.force_login(alice.user)
        for order, descending in (("", False), ("-", True)):
            index = _admin_column(client, "amount_display")
            r = client.get(f"/admin/finance/transaction/?o={order}{index}")
            assert r.status_code == 200
            shown = re.findall(r'class="field-name_display"><a [^>]*>([^<]+)<', r.content.decode())
            assert shown == sorted(self.AMOUNTS, key=Decimal, reverse=descending)


def _admin_column(client, name: str) -> int:
    """The changelist's column number of `name` (what its `o=` parameter takes)."""
    html = client.get("/admin/finance/transaction/").content.decode()
    headers = re.findall(r'<th scope="col"\s+class="([^"]*)"', html)
    for i, classes in enumerate(headers):
        if f"column-{name}" in classes:
            return i
    raise AssertionError(f"no column {name}: {headers}")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("condition", "wanted"),
    [
        ({"operator": "between", "value": ["9", "10"]}, lambda d: 9 <= d <= 10),
        (
            {"operator": "between", "value": ["-9999999999999.9999", "-9999999999999.9999"]},
            lambda d: d == -BIG,
        ),
        ({"operator": "gt", "value": "9999999999999.9998"}, lambda d: d > BIG - Decimal("0.0001")),
        ({"operator": "lte", "value": "-10"}, lambda d: d <= -10),
        ({"operator": "equals", "value": "9.0"}, lambda d: d == 9),
    ],
)
def test_a_rules_amount_condition_over_stored_rows_compares_numbers(alice, condition, wanted):
    account = alice.account()
    bulk(alice, [item(account, a, name=a) for a in TestAmountOrder.AMOUNTS])
    body = {
        "rule": {
            "name": "Amounts",
            "conditions": [{"field": "amount", **condition}],
            "actions": [{"type": "set_notes", "value": "matched"}],
        }
    }
    r = alice.client.post("/api/v1/rules", body, format="json")
    assert r.status_code == 201, r.content
    r = alice.client.post(f"/api/v1/rules/{r.json()['id']}/preview")
    assert r.status_code == 200, r.content
    names = sorted((t["name"] for t in r.json()["transactions"]), key=Decimal)
    expected = [a for a in TestAmountOrder.AMOUNTS if wanted(Decimal(a))]
    assert names == sorted(expected, key=Decimal) and r.json()["count"] == len(expected)
