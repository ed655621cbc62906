"""Trades over HTTP: the issue's scenario end to end, the rules of create and update, 422s
that leave no row behind, isolation between households, and read keys."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finance.models import Transaction, Transfer
from tests.conftest import assert_error
from tests.factories import AccountFactory, CategoryFactory
from trades.models import Holding, Security, Trade
from trades.services import trades as svc

URL = "/api/v1/trades"


def investment(household, **kwargs):
    return AccountFactory(family=household.family, account_type="investment", **kwargs)


def post(household, account, **fields):
    body = {"trade": {"account_id": str(account.id), "date": "2024-05-02", **fields}}
    return household.client.post(URL, body, format="json")


def holdings(household, account):
    r = household.client.get("/api/v1/holdings", {"account_id": str(account.id)})
    assert r.status_code == 200, r.content
    return r.json()["holdings"]


def row_counts() -> tuple[int, int, int, int, int]:
    return (
        Trade.objects.count(),
        Transaction.objects.count(),
        Transfer.objects.count(),
        Security.objects.count(),
        Holding.objects.count(),
    )


@pytest.mark.django_db
class TestScenario:
    """Buy 10 VTI at 250, sell 4 by label, a dividend, deposits; read back; patch; holdings."""

    def test_the_issue_scenario(self, alice):
        brokerage = investment(alice, name="Brokerage")
        checking = alice.account(name="Checking")

        # GIVEN a buy of 10 VTI at 250.00 by ticker
        r = post(alice, brokerage, ticker="VTI", qty=10, price="250.00")
        assert r.status_code == 201, r.content
        buy = r.json()
        assert buy["amount"] == "2500.00"
        assert buy["currency"] == "USD"
        assert buy["name"] == "Buy 10 VTI"
        assert buy["entryable_type"] == "Trade"
        assert buy["account"] == {
            "id": str(brokerage.id),
            "name": "Brokerage",
            "account_type": "investment",
        }
        vti = Security.objects.get(ticker="VTI")
        assert vti.family_id is None and vti.manual is False

        # a sell of 4 by label, qty positive
        r = post(alice, brokerage, ticker="VTI", qty=4, price=260, investment_activity_label="Sell")
        assert r.status_code == 201, r.content
        sell = r.json()
        assert sell["amount"] == "-1040.00" and sell["name"] == "Sell 4 VTI"
        assert Trade.objects.get(pk=sell["id"]).qty == Decimal(-4)
        assert Security.objects.filter(ticker="VTI").count() == 1

        # a dividend: cash coming in
        r = post(
            alice,
            brokerage,
            security_id=str(vti.id),
            amount="12.34",
            investment_activity_label="Dividend",
            date="2024-05-03",
        )
        assert r.status_code == 201, r.content
        assert r.json()["amount"] == "-12.34"
        assert r.json()["name"] == "Dividend from VTI"

        # a deposit without a transfer account: a plain Transaction
        r = post(alice, brokerage, type="deposit", amount=1000)
        assert r.status_code == 201, r.content
        deposit = r.json()
        assert deposit["entryable_type"] == "Transaction"
        assert deposit["amount"] == "-1000.00"
        txn = Transaction.objects.get(pk=deposit["id"])
        assert txn.account_id == brokerage.id and not hasattr(txn, "transfer_as_inflow")

        # a deposit from checking: a confirmed transfer with both legs
        r = post(
            alice,
            brokerage,
            investment_activity_label="Contribution",
            amount=500,
            transfer_account_id=str(checking.id),
        )
        assert r.status_code == 201, r.content
        inflow = Transaction.objects.get(pk=r.json()["id"])
        assert inflow.amount == Decimal("-500") and inflow.account_id == brokerage.id
        transfer = Transfer.objects.get(inflow_transaction=inflow)
        assert transfer.status == Transfer.Status.CONFIRMED
        outflow = transfer.outflow_transaction
        assert outflow.account_id == checking.id and outflow.amount == Decimal(500)
        assert outflow.kind == Transaction.Kind.INVESTMENT_CONTRIBUTION
        # the transfer is visible from the transactions API
        t = alice.client.get(f"/api/v1/transactions/{outflow.id}").json()
        assert t["transfer"]["status"] == "confirmed"
        assert t["transfer"]["other_account"]["id"] == str(brokerage.id)

        # WHEN the trades are read back
        r = alice.client.get(URL, {"account_id": str(brokerage.id)})
        assert r.status_code == 200
        listed = r.json()["trades"]
        assert [t["name"] for t in listed] == ["Dividend from VTI", "Sell 4 VTI", "Buy 10 VTI"]
        assert r.json()["pagination"]["total_count"] == 3
        got = alice.client.get(f"{URL}/{buy['id']}").json()
        assert got["qty"] == "10" and got["price"] == "250.00"
        assert got["security"] == {"id": str(vti.id), "ticker": "VTI", "name": "VTI"}
        assert got["account"]["status"] == "active"
        assert got["investment_activity_label"] == "Buy"
        assert got["category"] is None and got["notes"] is None

        # THEN the holding is 6 VTI at average cost 250, last price 260
        (held,) = holdings(alice, brokerage)
        assert held["security"]["ticker"] == "VTI"
        assert held["qty"] == "6"
        assert held["cost_basis"] == "1500.00"
        assert held["average_cost"] == "250.00"
        assert held["price"] == "260.00"
        assert held["market_value"] == "1560.00"
        assert held["source"] == "trades"

        # WHEN the buy's qty and price are patched
        r = alice.client.patch(
            f"{URL}/{buy['id']}", {"trade": {"qty": 12, "price": "200"}}, format="json"
        )
        assert r.status_code == 200, r.content
        patched = r.json()
        assert patched["amount"] == "2400.00"
        assert patched["name"] == "Buy 12 VTI"
        assert patched["qty"] == "12" and patched["price"] == "200.00"
        assert patched["updated_at"] >= patched["created_at"]
        # THEN holdings follow: 8 left at average cost 200
        (held,) = holdings(alice, brokerage)
        assert held["qty"] == "8"
        assert held["cost_basis"] == "1600.00"
        assert held["market_value"] == "2080.00"

        # deleting the sell brings the position back to 12
        r = alice.client.delete(f"{URL}/{sell['id']}")
        assert r.status_code == 200 and r.json() == {"message": "Trade deleted"}
        (held,) = holdings(alice, brokerage)
        assert held["qty"] == "12" and held["price"] == "200.00"


@pytest.mark.django_db
class TestCreateRules:
    def test_withdrawal_to_checking_records_a_confirmed_transfer(self, alice):
        brokerage, checking = investment(alice), alice.account()
        r = post(
            alice, brokerage, type="withdrawal", amount=300, transfer_account_id=str(checking.id)
        )
        assert r.status_code == 201, r.content
        outflow = Transaction.objects.get(pk=r.json()["id"])
        assert outflow.amount == Decimal(300)
        transfer = Transfer.objects.get(outflow_transaction=outflow)
        assert transfer.inflow_transaction.account_id == checking.id
        assert transfer.inflow_transaction.amount == Decimal(-300)
        assert outflow.kind == Transaction.Kind.FUNDS_MOVEMENT

    def test_kind_from_sign_of_qty(self, alice):
        brokerage = investment(alice)
        assert post(alice, brokerage, ticker="AAPL", qty=5, price=100).status_code == 201
        r = post(alice, brokerage, ticker="AAPL", qty=-2, price=110)
        assert r.status_code == 201, r.content
        assert r.json()["name"] == "Sell 2 AAPL" and r.json()["amount"] == "-220.00"
        trade = Trade.objects.get(pk=r.json()["id"])
        assert trade.kind == "sell" and trade.qty == Decimal(-2)
        assert trade.investment_activity_label == "Sell"

    def test_type_sell_with_negative_qty_is_taken_as_abs(self, alice):
        r = post(alice, investment(alice), type="sell", ticker="VTI", qty=-3, price=10)
        assert r.status_code == 201 and r.json()["amount"] == "-30.00"

    def test_amount_given_is_the_cash_including_fees(self, alice):
        brokerage = investment(alice)
        r = post(alice, brokerage, ticker="VTI", qty=10, price=250, amount="2504.95")
        assert r.status_code == 201 and r.json()["amount"] == "2504.95"
        (held,) = holdings(alice, brokerage)
        assert held["cost_basis"] == "2504.95"
        r = post(alice, brokerage, ticker="VTI", qty=-5, price=260, amount="1295.05")
        assert r.status_code == 201 and r.json()["amount"] == "-1295.05"

    def test_ticker_with_mic_and_manual_ticker(self, alice, charlie):
        brokerage = investment(alice)
        r = post(alice, brokerage, ticker="vti|arcx", qty=1, price=1)
        assert r.status_code == 201, r.content
        assert Security.objects.filter(ticker="VTI", exchange_mic="ARCX", family=None).exists()
        r = post(alice, brokerage, manual_ticker="Family Fund", qty=2, price=50)
        assert r.status_code == 201, r.content
        manual = Security.objects.get(family=alice.family)
        assert manual.manual and manual.ticker == "FAMILY FUND"
        # charlie cannot trade alice's manual security by id
        r = post(charlie, investment(charlie), security_id=str(manual.id), qty=1, price=1)
        body = assert_error(r, 422, "validation_failed")
        assert body["errors"] == ["security_id: does not exist"]

    def test_security_id_beats_ticker(self, alice):
        spy = Security.objects.create(ticker="SPY", name="SPDR S&P 500")
        r = post(alice, investment(alice), security_id=str(spy.id), ticker="VTI", qty=1, price=5)
        assert r.status_code == 201 and r.json()["name"] == "Buy 1 SPY"
        assert not Security.objects.filter(ticker="VTI").exists()

    def test_currency_defaults_to_the_account_and_crypto_takes_trades(self, alice):
        wallet = AccountFactory(family=alice.family, account_type="crypto", currency="EUR")
        r = post(alice, wallet, ticker="BTC-EUR", qty="0.5", price=40000)
        assert r.status_code == 201 and r.json()["currency"] == "EUR"
        assert r.json()["amount"] == "20000.00" and r.json()["name"] == "Buy 0.5 BTC-EUR"

    def test_category_and_interest(self, alice):
        category = CategoryFactory(family=alice.family)
        r = post(
            alice, investment(alice), type="interest", amount="1.5", category_id=str(category.id)
        )
        assert r.status_code == 201, r.content
        trade = Trade.objects.get(pk=r.json()["id"])
        assert trade.category == category and trade.amount == Decimal("-1.5")
        assert trade.security is None and r.json()["name"] == "Interest"


def _invalid_cases(alice, charlie):
    brokerage, checking = investment(alice), alice.account()
    foreign = investment(charlie)
    foreign_category = CategoryFactory(family=charlie.family)
    return brokerage, [
        (
            {"ticker": "VTI", "qty": 1, "price": 1, "account_id": str(checking.id)},
            [f"account_id: {svc.NOT_A_TRADING_ACCOUNT}"],
        ),
        (
            {"ticker": "VTI", "qty": 1, "price": 1, "account_id": str(foreign.id)},
            [f"account_id: {svc.NOT_IN_HOUSEHOLD}"],
        ),
        (
            {
                "ticker": "VTI",
                "qty": 1,
                "price": 1,
                "account_id": "6d3c0f9e-5d43-4a39-a7a3-2b6d4f4f0a11",
            },
            [f"account_id: {svc.NOT_IN_HOUSEHOLD}"],
        ),
        ({"qty": 1, "price": 1}, [f"security_id: {svc.SECURITY_REQUIRED}"]),
        ({"type": "buy", "ticker": "VTI", "price": 1}, [f"qty: {svc.QTY_REQUIRED}"]),
        ({"type": "buy", "ticker": "VTI", "qty": 1}, [f"price: {svc.PRICE_REQUIRED}"]),
        ({"ticker": "VTI", "qty": 1, "price": 0}, [f"price: {svc.MUST_BE_POSITIVE}"]),
        ({"ticker": "VTI", "qty": 1, "price": -3}, [f"price: {svc.MUST_BE_POSITIVE}"]),
        ({"type": "buy", "ticker": "VTI", "qty": -1, "price": 1}, [f"qty: {svc.BUY_QTY_NEGATIVE}"]),
        (
            {"investment_activity_label": "Buy", "ticker": "VTI", "qty": 0, "price": 1},
            [f"qty: {svc.MUST_BE_POSITIVE}"],
        ),
        ({"ticker": "VTI", "price": 1}, [f"qty: {svc.KIND_UNKNOWN}"]),
        ({"type": "dividend", "ticker": "VTI"}, ["amount: is required for a dividend"]),
        ({"type": "interest", "amount": -5}, [f"amount: {svc.MUST_BE_POSITIVE}"]),
        ({"type": "deposit"}, ["amount: is required for a deposit"]),
        ({"type": "withdrawal", "amount": 0}, [f"amount: {svc.MUST_BE_POSITIVE}"]),
        (
            {"type": "deposit", "amount": 5, "transfer_account_id": str(foreign.id)},
            [f"transfer_account_id: {svc.NOT_IN_HOUSEHOLD}"],
        ),
        (
            {"type": "deposit", "amount": 5, "transfer_account_id": str(brokerage.id)},
            [f"transfer_account_id: {svc.TRANSFER_SAME_ACCOUNT}"],
        ),
        (
            {"ticker": "VTI", "qty": 1, "price": 1, "transfer_account_id": str(checking.id)},
            [f"transfer_account_id: {svc.TRANSFER_ONLY_CASH}"],
        ),
        (
            {"ticker": "VTI", "qty": 1, "price": 1, "category_id": str(foreign_category.id)},
            [f"category_id: {svc.NOT_IN_HOUSEHOLD}"],
        ),
        (
            {
                "type": "buy",
                "investment_activity_label": "Sell",
                "ticker": "VTI",
                "qty": 1,
                "price": 1,
            },
            ["investment_activity_label: Sell contradicts type buy"],
        ),
        (
            {"ticker": "VTI|XX", "qty": 1, "price": 1},
            ["ticker: the exchange after | must be a 4-character MIC"],
        ),
        ({"ticker": "VTI", "qty": 1, "price": 1, "investment_activity_label": "Bought"}, None),
        ({"ticker": "VTI", "qty": 1, "price": 1, "type": "swap"}, None),
        ({"ticker": "VTI", "qty": "1.123456789", "price": 1}, None),
        ({"ticker": "VTI", "qty": 1, "price": 1, "currency": "ZZZ"}, None),
        ({"ticker": "VTI", "qty": 1, "price": 1, "date": "05/02/2024"}, None),
        ({"ticker": "VTI", "qty": 1, "price": 1, "account_id": "not-a-uuid"}, None),
    ]


@pytest.mark.django_db
def test_each_invalid_combination_is_a_422_that_leaves_no_row(alice, charlie):
    brokerage, cases = _invalid_cases(alice, charlie)
    before = row_counts()
    for fields, expected in cases:
        body = {"account_id": str(brokerage.id), "date": "2024-05-02", **fields}
        r = alice.client.post(URL, {"trade": body}, format="json")
        data = assert_error(r, 422, "validation_failed")
        if expected is not None:
            assert data["errors"] == expected, (fields, data["errors"])
        else:
            assert len(data["errors"]) == 1 and data["errors"][0].startswith("trade."), data
        assert row_counts() == before, fields


@pytest.mark.django_db
def test_missing_root_key_and_required_fields(alice):
    r = alice.client.post(URL, {"ticker": "VTI"}, format="json")
    assert assert_error(r, 422, "validation_failed")["errors"] == ["trade: This field is required."]
    r = alice.client.post(URL, {"trade": {}}, format="json")
    errors = assert_error(r, 422, "validation_failed")["errors"]
    assert errors == [
        "trade.account_id: This field is required.",
        "trade.date: This field is required.",
    ]


@pytest.mark.django_db
class TestUpdate:
    def _buy(self, alice, **fields):
        account = investment(alice)
        r = post(alice, account, ticker="VTI", qty=10, price=250, **fields)
        assert r.status_code == 201
        return account, r.json()["id"]

    def patch(self, household, trade_id, **fields):
        return household.client.patch(f"{URL}/{trade_id}", {"trade": fields}, format="json")

    def test_only_sent_fields_change(self, alice):
        _, trade_id = self._buy(alice)
        category = CategoryFactory(family=alice.family)
        r = self.patch(alice, trade_id, notes="long term", category_id=str(category.id))
        assert r.status_code == 200, r.content
        data = r.json()
        assert data["notes"] == "long term"
        assert data["category"] == {"id": str(category.id), "name": category.name}
        assert data["amount"] == "2500.00" and data["name"] == "Buy 10 VTI"
        r = self.patch(alice, trade_id, category_id=None, name="Bought VTI", date="2024-06-01")
        data = r.json()
        assert data["category"] is None and data["name"] == "Bought VTI"
        assert data["date"] == "2024-06-01" and data["notes"] == "long term"

    def test_price_alone_recomputes_amount(self, alice):
        account, trade_id = self._buy(alice)
        r = self.patch(alice, trade_id, price="251.5")
        assert r.json()["amount"] == "2515.00" and r.json()["price"] == "251.50"
        (held,) = holdings(alice, account)
        assert held["cost_basis"] == "2515.00"

    def test_a_fee_sent_at_create_survives_a_new_qty_or_price(self, alice):
        account, trade_id = self._buy(alice, amount="2504.95")  # 10 x 250 + 4.95 fee
        r = self.patch(alice, trade_id, price="251.5")
        assert r.status_code == 200, r.content
        assert r.json()["amount"] == "2519.95"  # 2515.00 + the fee
        (held,) = holdings(alice, account)
        assert held["cost_basis"] == "2519.95"
        # a sell's fee comes off its proceeds: 4 x 50 - 5.00 received
        r = post(alice, account, ticker="VTI", qty=-4, price=50, amount="195")
        sell = r.json()["id"]
        r = self.patch(alice, sell, qty="-2")
        assert (r.json()["amount"], r.json()["qty"]) == ("-95.00", "-2")
        # a fee larger than what is left of the sale is refused, and nothing changes
        r = self.patch(alice, sell, price="1")
        body = assert_error(r, 422, "validation_failed")
        assert body["errors"] == [
            "price: the trade's fee would exceed its value; delete the trade and create a new one"
        ]
        assert Trade.objects.get(pk=sell).amount == Decimal("-95")

    def test_a_computed_amount_stays_exact_through_updates(self, alice):
        _, trade_id = self._buy(alice)
        r = self.patch(alice, trade_id, qty="0.33333333", price="3.3333")
        assert r.json()["amount"] == "1.11"  # 1.1111 at four places, shown at the currency's
        assert Trade.objects.get(pk=trade_id).amount == Decimal("1.1111")
        r = self.patch(alice, trade_id, qty="3")
        assert Trade.objects.get(pk=trade_id).amount == Decimal("9.9999")  # no residue carried

    def test_label_sell_flips_direction(self, alice):
        account, trade_id = self._buy(alice)
        r = self.patch(alice, trade_id, investment_activity_label="Sell")
        assert r.status_code == 200
        assert r.json()["amount"] == "-2500.00" and r.json()["qty"] == "-10"
        assert r.json()["name"] == "Sell 10 VTI"
        assert holdings(alice, account)[0]["qty"] == "-10"

    def test_invalid_updates_are_422_and_change_nothing(self, alice, charlie):
        _, trade_id = self._buy(alice)
        dividend = post(alice, investment(alice), type="dividend", amount=3).json()["id"]
        foreign_category = CategoryFactory(family=charlie.family)
        before = Trade.objects.get(pk=trade_id)
        for target, fields, message in [
            (trade_id, {"qty": 0}, f"qty: {svc.MUST_BE_POSITIVE}"),
            (trade_id, {"qty": -2}, f"qty: {svc.BUY_QTY_NEGATIVE}"),
            (trade_id, {"price": -1}, f"price: {svc.MUST_BE_POSITIVE}"),
            (
                trade_id,
                {"category_id": str(foreign_category.id)},
                f"category_id: {svc.NOT_IN_HOUSEHOLD}",
            ),
            (
                trade_id,
                {"investment_activity_label": "Dividend"},
                "investment_activity_label: "
                + svc.LABEL_CHANGES_KIND.format(kind="buy", label="Dividend"),
            ),
            (dividend, {"qty": 2}, f"qty: {svc.ONLY_BUY_SELL_QTY}"),
            (trade_id, {"investment_activity_label": "Nope"}, None),
            (trade_id, {"date": "2024-13-01"}, None),
        ]:
            r = self.patch(alice, target, **fields)
            errors = assert_error(r, 422, "validation_failed")["errors"]
            if message:
                assert errors == [message]
        after = Trade.objects.get(pk=trade_id)
        assert (after.qty, after.price, after.amount, after.category_id, after.updated_at) == (
            before.qty,
            before.price,
            before.amount,
            before.category_id,
            before.updated_at,
        )


@pytest.mark.django_db
class TestListAndIsolation:
    def test_filters_and_pagination(self, alice):
        account, other = investment(alice), investment(alice)
        for day in (1, 2, 3):
            post(alice, account, ticker="VTI", qty=1, price=1, date=f"2024-05-0{day}")
        post(alice, other, ticker="VTI", qty=1, price=1)
        r = alice.client.get(URL, {"start_date": "2024-05-02", "end_date": "2024-05-02"})
        assert r.json()["pagination"]["total_count"] == 2
        r = alice.client.get(URL, {"account_id": str(account.id), "per_page": 2, "page": 2})
        data = r.json()
        assert data["pagination"] == {"page": 2, "per_page": 2, "total_count": 3, "total_pages": 2}
        assert [t["date"] for t in data["trades"]] == ["2024-05-01"]
        for bad in ({"account_id": "x"}, {"start_date": "2024-5-1"}):
            assert_error(alice.client.get(URL, bad), 422, "validation_failed")

    def test_list_is_n_plus_one_free(self, alice, django_assert_max_num_queries):
        account = investment(alice)
        category = CategoryFactory(family=alice.family)
        for i in range(30):
            post(alice, account, ticker=f"T{i}", qty=1, price=1, category_id=str(category.id))
        with django_assert_max_num_queries(8):
            r = alice.client.get(URL, {"per_page": 100})
        assert len(r.json()["trades"]) == 30
        with django_assert_max_num_queries(8):
            r = alice.client.get("/api/v1/holdings", {"per_page": 100})
        assert len(r.json()["holdings"]) == 30

    def test_another_household_sees_404_and_nothing(self, alice, charlie):
        account = investment(alice)
        trade_id = post(alice, account, ticker="VTI", qty=1, price=1).json()["id"]
        holding_id = holdings(alice, account)[0]["id"]
        for response in (
            charlie.client.get(f"{URL}/{trade_id}"),
            charlie.client.patch(f"{URL}/{trade_id}", {"trade": {"qty": 2}}, format="json"),
            charlie.client.delete(f"{URL}/{trade_id}"),
            charlie.client.get(f"/api/v1/holdings/{holding_id}"),
            alice.client.get(f"{URL}/not-a-uuid"),
        ):
            assert_error(response, 404, "not_found")
        assert charlie.client.get(URL).json()["trades"] == []
        assert charlie.client.get("/api/v1/holdings").json()["holdings"] == []
        r = charlie.client.get(URL, {"account_id": str(account.id)})
        assert r.json()["trades"] == []
        assert Trade.objects.get(pk=trade_id).qty == 1

    def test_read_key_is_refused_on_writes_and_reads(self, alice):
        account = investment(alice)
        trade_id = post(alice, account, ticker="VTI", qty=1, price=1).json()["id"]
        body = {
            "trade": {
                "account_id": str(account.id),
                "date": "2024-05-02",
                "type": "deposit",
                "amount": 1,
            }
        }
        assert_error(alice.read_client.post(URL, body, format="json"), 403, "insufficient_scope")
        assert_error(
            alice.read_client.patch(f"{URL}/{trade_id}", {"trade": {"qty": 3}}, format="json"),
            403,
            "insufficient_scope",
        )
        assert_error(alice.read_client.delete(f"{URL}/{trade_id}"), 403, "insufficient_scope")
        assert alice.read_client.get(f"{URL}/{trade_id}").status_code == 200
        assert Trade.objects.count() == 1 and Transaction.objects.count() == 0

    def test_no_key_is_401(self, anon):
        assert_error(anon.get(URL), 401, "unauthorized")
