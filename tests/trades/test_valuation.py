"""Investment and crypto accounts valued as cash plus holdings, over HTTP: the README's trade
example, the daily series valued at the latest price on or before each day, price points from
trades and `POST /api/v1/security_prices`, and the series and balance agreeing with a full
re-derivation (ledger_check). Every figure exact, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from finance.ledger import ledger_check
from finance.models import Account, AccountBalance
from tests.conftest import assert_error
from trades.models import Security, SecurityPrice

pytestmark = pytest.mark.django_db


def brokerage(household, **kwargs):
    kwargs.setdefault("name", "Brokerage")
    return household.account(account_type="investment", **kwargs)


def trade(household, account, date, **fields):
    body = {"trade": {"account_id": str(account.id), "date": date, **fields}}
    r = household.client.post("/api/v1/trades", body, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def price(household, security, date, value, **fields):
    body = {"security_price": {"security_id": str(security.id), "date": date, "price": value}}
    body["security_price"].update(fields)
    return household.client.post("/api/v1/security_prices", body, format="json")


def account_json(household, account):
    r = household.client.get(f"/api/v1/accounts/{account.id}")
    assert r.status_code == 200, r.content
    return r.json()


def figures(household, account):
    body = account_json(household, account)
    return body["balance"], body["cash_balance"], body["holdings_value"]


def series(household, account, start, end):
    r = household.client.get(
        f"/api/v1/accounts/{account.id}/balances", {"start_date": start, "end_date": end}
    )
    assert r.status_code == 200, r.content
    return {row["date"]: row["balance"] for row in r.json()["balances"]}


def stored_days(account):
    return [
        d.isoformat()
        for d in AccountBalance.objects.filter(account=account)
        .order_by("date")
        .values_list("date", flat=True)
    ]


def readme_example(household):
    """Buy 10 VTI at 250, sell 4 at 260 on an empty brokerage (README)."""
    account = brokerage(household)
    trade(household, account, "2024-05-02", ticker="VTI", qty=10, price=250)
    trade(
        household,
        account,
        "2024-05-03",
        ticker="VTI",
        qty=4,
        price=260,
        investment_activity_label="Sell",
    )
    return account, Security.objects.get(ticker="VTI", family__isnull=True)


def test_the_readme_example_leaves_the_brokerage_worth_its_holdings(alice):
    account, vti = readme_example(alice)
    # cash -2,500 + 1,040 = -1,460; 6 VTI at the latest price 260 = 1,560
    assert figures(alice, account) == ("100.00", "-1460.00", "1560.00")
    account.refresh_from_db()
    assert (account.balance, account.holdings_value) == (Decimal("100"), Decimal("1560"))
    listed = alice.client.get("/api/v1/accounts").json()["accounts"]
    assert [(a["balance"], a["cash_balance"], a["holdings_value"]) for a in listed] == [
        ("100.00", "-1460.00", "1560.00")
    ]
    (holding,) = alice.client.get("/api/v1/holdings", {"account_id": str(account.id)}).json()[
        "holdings"
    ]
    assert (holding["qty"], holding["price"], holding["market_value"]) == ("6", "260.00", "1560.00")
    # the trades recorded their prices as the household's price points
    points = alice.client.get("/api/v1/security_prices", {"security_id": str(vti.id)}).json()
    assert [
        (p["date"], p["price"], p["currency"], p["source"]) for p in points["security_prices"]
    ] == [
        ("2024-05-03", "260.00", "USD", "trade"),
        ("2024-05-02", "250.00", "USD", "trade"),
    ]


def test_ledger_check_reports_then_repairs_a_wrong_holdings_value(alice):
    account, _vti = readme_example(alice)
    Account.objects.filter(pk=account.pk).update(holdings_value=Decimal("7"))
    problems = ledger_check(family=alice.family).problems
    assert len(problems) == 1, problems
    assert problems[0].startswith("Brokerage: holdings value 7")
    assert Decimal(problems[0].split()[-1]) == Decimal("1560")
    assert Account.objects.get(pk=account.pk).holdings_value == Decimal("7")  # a check only
    ledger_check(family=alice.family, fix=True)
    assert Account.objects.get(pk=account.pk).holdings_value == Decimal("1560")
    assert ledger_check(family=alice.family).problems == []


def test_a_posted_price_moves_the_value_from_its_date_on(alice):
    account, vti = readme_example(alice)
    r = price(alice, vti, "2024-05-10", "270")
    assert r.status_code == 201, r.content
    body = r.json()
    assert (body["date"], body["price"], body["currency"], body["source"]) == (
        "2024-05-10",
        "270.00",
        "USD",
        "api",
    )
    assert body["security"] == {"id": str(vti.id), "ticker": "VTI", "name": "VTI"}
    assert figures(alice, account) == ("160.00", "-1460.00", "1620.00")
    days = series(alice, account, "2024-05-01", "2024-05-12")
    assert days == {
        "2024-05-01": "0.00",  # the opening row: nothing yet
        "2024-05-02": "0.00",  # -2,500 cash + 10 x 250
        "2024-05-03": "100.00",  # -1,460 + 6 x 260
        **{f"2024-05-0{d}": "100.00" for d in range(4, 10)},
        "2024-05-10": "160.00",  # -1,460 + 6 x 270
        "2024-05-11": "160.00",
        "2024-05-12": "160.00",
    }
    # a price between moves only the days from it to the next price
    assert price(alice, vti, "2024-05-06", "255.5").status_code == 201
    days = series(alice, account, "2024-05-01", "2024-05-12")
    assert [days[f"2024-05-{d:02}"] for d in range(3, 12)] == [
        "100.00",
        "100.00",
        "100.00",
        "73.00",
        "73.00",
        "73.00",
        "73.00",
        "160.00",
        "160.00",
    ]
    # sparse: rows only where cash, a quantity or a price changed, plus the opening row
    assert stored_days(account) == [
        "2024-05-01",
        "2024-05-02",
        "2024-05-03",
        "2024-05-06",
        "2024-05-10",
    ]
    assert figures(alice, account) == ("160.00", "-1460.00", "1620.00")
    assert ledger_check(family=alice.family).problems == []


def test_a_price_dated_before_the_first_trade_values_it_and_makes_no_row(alice):
    account = brokerage(alice)
    vti = Security.objects.create(ticker="VTI", name="Vanguard Total")
    trade(alice, account, "2024-05-02", security_id=str(vti.id), qty=10, price=250)
    # an api price of the same day beats the trade's
    assert price(alice, vti, "2024-05-02", "251").status_code == 201
    assert figures(alice, account) == ("10.00", "-2500.00", "2510.00")
    # an older price changes nothing: a later one is known on every held day
    assert price(alice, vti, "2024-04-01", "100").status_code == 201
    assert stored_days(account) == ["2024-05-01", "2024-05-02"]
    assert figures(alice, account) == ("10.00", "-2500.00", "2510.00")
    assert ledger_check(family=alice.family).problems == []


def test_series_by_day_with_trades_written_out_of_order_edited_and_deleted(alice):
    account = brokerage(alice, name="Broker")
    checking = alice.account(name="Checking")
    trade(
        alice,
        account,
        "2024-03-01",
        type="deposit",
        amount="5000",
        transfer_account_id=str(checking.id),
    )
    trade(alice, account, "2024-03-10", ticker="ABC", qty="3", price="100.1234")
    trade(alice, account, "2024-03-05", ticker="ABC", qty="2", price="90")
    sell = trade(alice, account, "2024-03-20", ticker="ABC", qty="1", price="120", type="sell")
    abc = Security.objects.get(ticker="ABC")
    assert price(alice, abc, "2024-03-15", "110.55").status_code == 201
    # cash: 5000 - 180 - 300.3702 + 120 = 4639.6298; 4 ABC at 120
    days = series(alice, account, "2024-02-28", "2024-03-21")
    assert days["2024-02-28"] == "0.00" and days["2024-02-29"] == "0.00"
    assert days["2024-03-01"] == "5000.00"
    assert days["2024-03-05"] == "5000.00"  # 4820 cash + 2 x 90
    assert days["2024-03-09"] == "5000.00"
    assert days["2024-03-10"] == "5020.25"  # 4519.6298 + 5 x 100.1234
    assert days["2024-03-15"] == "5072.38"  # 4519.6298 + 5 x 110.55
    assert days["2024-03-20"] == "5119.63"  # 4639.6298 + 4 x 120
    assert figures(alice, account) == ("5119.63", "4639.63", "480.00")
    # the sell moves to another day, then goes
    r = alice.client.patch(
        f"/api/v1/trades/{sell['id']}", {"trade": {"date": "2024-03-12"}}, format="json"
    )
    assert r.status_code == 200, r.content
    days = series(alice, account, "2024-03-10", "2024-03-21")
    # 4639.6298 + 4 x 120 on the 12th (the sell's price), 4 x 110.55 from the 15th
    assert days["2024-03-12"] == "5119.63" and days["2024-03-15"] == "5081.83"
    assert days["2024-03-20"] == "5081.83"
    assert alice.client.delete(f"/api/v1/trades/{sell['id']}").status_code == 200
    days = series(alice, account, "2024-03-10", "2024-03-21")
    assert days["2024-03-12"] == "5020.25" and days["2024-03-20"] == "5072.38"
    assert figures(alice, account) == ("5072.38", "4519.63", "552.75")
    assert not SecurityPrice.objects.filter(date=dt.date(2024, 3, 12)).exists()
    assert ledger_check(family=alice.family).problems == []


def test_a_trade_in_one_account_prices_the_security_for_the_households_others(alice):
    first, _ = readme_example(alice)
    second = brokerage(alice, name="Second")
    trade(alice, second, "2024-05-20", ticker="VTI", qty=1, price="300")
    # the second account's buy on the 20th is the household's latest VTI price
    assert figures(alice, first) == ("340.00", "-1460.00", "1800.00")
    days = series(alice, first, "2024-05-19", "2024-05-20")
    assert days == {"2024-05-19": "100.00", "2024-05-20": "340.00"}
    assert figures(alice, second) == ("0.00", "-300.00", "300.00")
    assert ledger_check(family=alice.family).problems == []


def test_another_households_prices_do_not_value_this_one(alice, charlie):
    account, vti = readme_example(alice)
    theirs = brokerage(charlie)
    trade(charlie, theirs, "2024-05-20", ticker="VTI", qty=1, price="999")
    assert price(charlie, vti, "2024-05-21", "1000").status_code == 201
    assert figures(alice, account) == ("100.00", "-1460.00", "1560.00")


def test_prices_in_another_currency_value_only_accounts_in_it(alice):
    usd, vti = readme_example(alice)
    eur = brokerage(alice, name="Euro broker", currency="EUR")
    trade(alice, eur, "2024-05-02", ticker="VTI", qty=2, price="230", currency="EUR")
    assert price(alice, vti, "2024-05-10", "240", currency="EUR").status_code == 201
    assert figures(alice, eur) == ("20.00", "-460.00", "480.00")
    assert figures(alice, usd) == ("100.00", "-1460.00", "1560.00")  # no USD price moved
    assert price(alice, vti, "2024-05-11", "250", currency="USD").status_code == 201
    assert figures(alice, usd) == ("40.00", "-1460.00", "1500.00")
    assert figures(alice, eur) == ("20.00", "-460.00", "480.00")


def test_other_accounts_have_null_cash_and_holdings(alice):
    checking = alice.account(name="Checking")
    body = account_json(alice, checking)
    assert (body["balance"], body["cash_balance"], body["holdings_value"]) == ("0.00", None, None)
    empty = brokerage(alice, name="Empty")
    assert figures(alice, empty) == ("0.00", "0.00", "0.00")


def test_changing_the_account_type_revalues_it(alice):
    account, _ = readme_example(alice)
    r = alice.client.patch(
        f"/api/v1/accounts/{account.id}", {"account": {"account_type": "depository"}}, format="json"
    )
    assert r.status_code == 200, r.content
    # a bank account counts neither trades nor holdings
    assert (r.json()["balance"], r.json()["cash_balance"], r.json()["holdings_value"]) == (
        "0.00",
        None,
        None,
    )
    r = alice.client.patch(
        f"/api/v1/accounts/{account.id}", {"account": {"account_type": "crypto"}}, format="json"
    )
    assert (r.json()["balance"], r.json()["cash_balance"], r.json()["holdings_value"]) == (
        "100.00",
        "-1460.00",
        "1560.00",
    )


def test_an_opening_balance_is_the_cash_the_account_opens_with(alice):
    r = alice.client.post(
        "/api/v1/accounts",
        {
            "account": {
                "name": "Funded",
                "account_type": "investment",
                "balance": "1000",
                "balance_date": "2024-05-01",
            }
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    assert (r.json()["balance"], r.json()["cash_balance"], r.json()["holdings_value"]) == (
        "1000.00",
        "1000.00",
        "0.00",
    )
    account = Account.objects.get(pk=r.json()["id"])
    trade(alice, account, "2024-05-02", ticker="VTI", qty=10, price=250)
    trade(alice, account, "2024-05-03", ticker="VTI", qty=4, price=260, type="sell")
    assert figures(alice, account) == ("1100.00", "-460.00", "1560.00")
    assert series(alice, account, "2024-04-30", "2024-05-03") == {
        "2024-04-30": "1000.00",
        "2024-05-01": "1000.00",
        "2024-05-02": "1000.00",
        "2024-05-03": "1100.00",
    }
    assert ledger_check(family=alice.family).problems == []


def test_a_crypto_wallet_with_fractional_quantities(alice):
    wallet = alice.account(account_type="crypto", name="Wallet", currency="EUR")
    trade(alice, wallet, "2024-01-10", ticker="BTC", qty="0.5", price="40000.12345678")
    trade(alice, wallet, "2024-02-10", ticker="BTC", qty="0.12345678", price="45000", type="sell")
    btc = Security.objects.get(ticker="BTC")
    assert price(alice, btc, "2024-03-01", "61234.56789").status_code == 201
    # cash: -20000.0617 (0.5 x 40000.12345678 at four places) + 5555.5551 = -14444.5066;
    # 0.37654322 BTC x 61234.56789 = 23057.4613686092058, at four places 23057.4614
    assert figures(alice, wallet) == ("8612.95", "-14444.51", "23057.46")
    wallet.refresh_from_db()
    assert (wallet.balance, wallet.holdings_value) == (Decimal("8612.9548"), Decimal("23057.4614"))
    assert ledger_check(family=alice.family).problems == []


def test_a_value_past_the_bound_is_refused_and_the_household_stays_usable(alice):
    account = brokerage(alice)
    for day in ("2024-05-01", "2024-05-02"):
        trade(alice, account, day, ticker="BIG", qty="999999999999999", price="0.00000001")
    big = Security.objects.get(ticker="BIG")
    before = stored_days(account)
    r = price(alice, big, "2024-05-03", "999999999999999")
    body = assert_error(r, 422, "validation_failed")
    assert [e.split(":")[0] for e in body["errors"]] == ["holdings_value"]
    assert not SecurityPrice.objects.filter(source="api").exists()
    assert stored_days(account) == before
    assert alice.client.get("/api/v1/accounts").status_code == 200
    assert alice.client.get(f"/api/v1/accounts/{account.id}/balances").status_code == 200
    # one lot at the highest price is still a value the ledger stores
    third = brokerage(alice, name="Third")
    trade(alice, third, "2024-05-01", ticker="ONE", qty="999999999999999", price="0.00000001")
    one = Security.objects.get(ticker="ONE")
    assert price(alice, one, "2024-05-03", "999999999999999").status_code == 201
    assert alice.client.get(f"/api/v1/accounts/{third.id}").status_code == 200


def test_any_order_of_writes_leaves_the_series_a_full_derivation_gives(alice):
    """Trades, price points, edits and deletes in a scrambled order (fixed seed): after each
    step the stored series, balance and holdings value equal a re-derivation from nothing."""
    import random

    rng = random.Random(18)
    accounts = []
    for name in ("A", "B"):
        r = alice.client.post(
            "/api/v1/accounts",
            {"account": {"name": name, "account_type": "investment"}},
            format="json",
        )
        assert r.status_code == 201 and r.json()["holdings_value"] == "0.00"
        accounts.append(Account.objects.get(pk=r.json()["id"]))
    made: list[str] = []
    for step in range(30):
        account = rng.choice(accounts)
        day = f"2024-0{rng.randint(1, 6)}-{rng.randint(1, 28):02}"
        ticker = rng.choice(["AAA", "BBB"])
        action = rng.random()
        if action < 0.45 or not made:
            kind = "sell" if made and rng.random() < 0.3 else "buy"
            body = trade(
                alice, account, day, ticker=ticker, qty=rng.randint(1, 9),
                price=f"{rng.randint(100, 300)}.{rng.randint(0, 99):02}", type=kind,
            )  # fmt: skip
            made.append(body["id"])
        elif action < 0.7:
            security = Security.objects.get(ticker=ticker) if Security.objects.filter(
                ticker=ticker
            ).exists() else None  # fmt: skip
            if security is not None:
                r = price(alice, security, day, f"{rng.randint(100, 300)}.5")
                assert r.status_code in (200, 201), r.content
        elif action < 0.85:
            r = alice.client.patch(
                f"/api/v1/trades/{rng.choice(made)}", {"trade": {"date": day}}, format="json"
            )
            assert r.status_code == 200, r.content
        else:
            gone = made.pop(rng.randrange(len(made)))
            assert alice.client.delete(f"/api/v1/trades/{gone}").status_code == 200
        assert ledger_check(family=alice.family).problems == [], step
