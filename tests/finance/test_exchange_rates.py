"""Exchange rates: system rates fetched from the (fake) European Central Bank by the command
and by the beat task, the household's own rates by the API, the list, and the 422s."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from core.bounds import MIN_DATE, date_problem, max_date
from finance.fx.bounds import DATE_RANGE_MESSAGE, RATE_MESSAGE
from finance.models import ExchangeRate
from finance.tasks import exchange_rates_fetch_task
from providers.testing.ecb_server import DAILY, HISTORY, NINETY_DAYS, Fault
from tests.conftest import assert_error
from tests.finance.fx_helpers import every_day

TODAY = dt.date.today()


def _system(currency: str, day: dt.date) -> Decimal:
    return ExchangeRate.objects.get(
        family__isnull=True, from_currency="EUR", to_currency=currency, date=day
    ).rate


@pytest.mark.django_db
def test_the_command_fetches_the_90_day_file_then_the_daily_file_then_history(ecb, capsys):
    old = TODAY - dt.timedelta(days=400)
    ecb.scenario.add_day(old, USD="1.1000", GBP="0.9000")
    every_day(ecb.scenario, TODAY - dt.timedelta(days=60), TODAY, USD="1.0850", GBP="0.8412")
    newest = max(ecb.scenario.days)

    call_command("fetch_exchange_rates")  # nothing stored yet: the 90-day file
    assert ecb.scenario.requests == [NINETY_DAYS]
    assert _system("USD", newest) == Decimal("1.0850")
    assert _system("GBP", newest) == Decimal("0.8412")
    assert not ExchangeRate.objects.filter(date=old).exists()
    stored = ExchangeRate.objects.count()
    assert stored == 2 * len([d for d in ecb.scenario.days if d != old])
    assert "rates added" in capsys.readouterr().out

    call_command("fetch_exchange_rates")  # up to date: the daily file, nothing written
    assert ecb.scenario.requests[-1] == DAILY
    assert ExchangeRate.objects.count() == stored
    assert "0 rates added, 0 changed, 2 unchanged" in capsys.readouterr().out

    ecb.scenario.add_day(newest, USD="1.0900")  # the ECB corrects a published rate
    call_command("fetch_exchange_rates", "--history")
    assert ecb.scenario.requests[-1] == HISTORY
    assert _system("USD", old) == Decimal("1.1000")
    assert _system("USD", newest) == Decimal("1.0900")
    assert ExchangeRate.objects.count() == stored + 2
    assert ExchangeRate.objects.filter(family__isnull=True).exclude(source="ecb").count() == 0


@pytest.mark.django_db
def test_the_beat_task_fetches_and_fills_a_gap(ecb, settings):
    every_day(ecb.scenario, TODAY - dt.timedelta(days=30), TODAY, USD="1.2", GBP="0.8")
    summary = exchange_rates_fetch_task()
    assert "eurofxref-hist-90d.xml" in summary and "rates added" in summary
    assert ExchangeRate.objects.filter(family__isnull=True).count() == 2 * len(ecb.scenario.days)
    # a gap of working days (a failed fetch): the next run reads the 90-day file again
    newest = max(ecb.scenario.days)
    ExchangeRate.objects.filter(date__gte=newest - dt.timedelta(days=6)).delete()
    exchange_rates_fetch_task()
    assert ecb.scenario.requests[-1] == NINETY_DAYS
    assert ExchangeRate.objects.filter(family__isnull=True).count() == 2 * len(ecb.scenario.days)

    settings.FX_PROVIDER = "none"
    assert "nothing fetched" in exchange_rates_fetch_task()
    assert len(ecb.scenario.requests) == 2


@pytest.mark.django_db
def test_upstream_failures_are_reported_not_raised_by_the_task(ecb):
    ecb.scenario.add_day(TODAY, USD="1.2")
    ecb.scenario.faults[NINETY_DAYS] = Fault(kind="status", status=503)
    assert "server error (HTTP 503)" in exchange_rates_fetch_task()
    ecb.scenario.faults[NINETY_DAYS] = Fault(kind="not_xml")
    with pytest.raises(CommandError, match="cannot be read"):
        call_command("fetch_exchange_rates")
    ecb.scenario.faults[NINETY_DAYS] = Fault(kind="dtd")
    with pytest.raises(CommandError, match="not valid or safe XML"):
        call_command("fetch_exchange_rates")
    assert not ExchangeRate.objects.exists()


@pytest.mark.django_db
def test_entries_that_are_not_rates_are_skipped_and_counted(ecb, capsys):
    ecb.scenario.add_day(TODAY, USD="1.2", GBP="0", XYZ="3.5", JPY="abc", CHF="0.94")
    call_command("fetch_exchange_rates")
    assert set(ExchangeRate.objects.values_list("to_currency", flat=True)) == {"USD", "CHF"}
    assert "3 skipped" in capsys.readouterr().out


# --- the API ---------------------------------------------------------------------------------


def _post(household, **fields):
    return household.client.post("/api/v1/exchange_rates", {"exchange_rate": fields}, format="json")


@pytest.mark.django_db
def test_a_household_posts_its_own_rate_and_lists_it_beside_system_rates(alice, charlie):
    ExchangeRate.objects.create(
        date=TODAY, from_currency="EUR", to_currency="USD", rate=Decimal("1.08"), source="ecb"
    )
    r = _post(alice, date=TODAY.isoformat(), from_currency="eur", to_currency="USD", rate=1.25)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["rate"] == "1.25" and body["source"] == "household"
    assert body["from_currency"] == "EUR" and body["date"] == TODAY.isoformat()
    # the same day and pair again replaces the household's rate
    r = _post(alice, date=TODAY.isoformat(), from_currency="EUR", to_currency="USD", rate="1.3")
    assert r.status_code == 200 and r.json()["id"] == body["id"] and r.json()["rate"] == "1.3"
    _post(charlie, date=TODAY.isoformat(), from_currency="EUR", to_currency="USD", rate="9.99")

    listed = alice.client.get("/api/v1/exchange_rates").json()
    assert listed["pagination"]["total_count"] == 2
    assert {(e["source"], e["rate"]) for e in listed["exchange_rates"]} == {
        ("household", "1.3"),
        ("ecb", "1.08"),
    }
    # Charlie's rate is nowhere in Alice's answer (its value, not a timestamp's digits).
    answered = alice.client.get("/api/v1/exchange_rates").json()["exchange_rates"]
    assert "9.99" not in {e["rate"] for e in answered}
    assert alice.read_client.get("/api/v1/exchange_rates").status_code == 200
    r = alice.read_client.post(
        "/api/v1/exchange_rates",
        {"exchange_rate": {"date": TODAY.isoformat(), "from_currency": "EUR"}},
        format="json",
    )
    assert_error(r, 403, "insufficient_scope")


@pytest.mark.django_db
def test_the_list_filters(alice):
    for n, (src, dst) in enumerate([("EUR", "USD"), ("EUR", "GBP"), ("USD", "GBP")]):
        ExchangeRate.objects.create(
            date=TODAY - dt.timedelta(days=n), from_currency=src, to_currency=dst, rate=1
        )
    get = alice.client.get
    assert get("/api/v1/exchange_rates?from_currency=eur").json()["pagination"]["total_count"] == 2
    only = get("/api/v1/exchange_rates?to_currency=GBP&from_currency=USD").json()
    assert [e["from_currency"] for e in only["exchange_rates"]] == ["USD"]
    start = (TODAY - dt.timedelta(days=1)).isoformat()
    dated = get(f"/api/v1/exchange_rates?start_date={start}").json()["exchange_rates"]
    assert [e["to_currency"] for e in dated] == ["USD", "GBP"]  # newest first
    body = assert_error(
        get("/api/v1/exchange_rates?from_currency=EURO&start_date=2024-13-01"),
        422,
        "validation_failed",
    )
    assert {e.split(":")[0] for e in body["errors"]} == {"from_currency", "start_date"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"from_currency": "EURO"}, "exchange_rate.from_currency"),
        ({"to_currency": "ABC"}, "exchange_rate.to_currency"),
        ({"to_currency": "EUR"}, "exchange_rate.to_currency"),
        ({"rate": 0}, "exchange_rate.rate"),
        ({"rate": "-1.2"}, "exchange_rate.rate"),
        ({"rate": "abc"}, "exchange_rate.rate"),
        ({"rate": "1e999999"}, "exchange_rate.rate"),
        ({"rate": "NaN"}, "exchange_rate.rate"),
        ({"rate": "1000000000000"}, "exchange_rate.rate"),
        ({"rate": "1.00000000001"}, "exchange_rate.rate"),
        ({"rate": True}, "exchange_rate.rate"),
        ({"date": "1899-12-31"}, "exchange_rate.date"),
        ({"date": "0002-01-01"}, "exchange_rate.date"),
        ({"date": (TODAY + dt.timedelta(days=5 * 366 + 2)).isoformat()}, "exchange_rate.date"),
        ({"date": "2024-02-30"}, "exchange_rate.date"),
        ({"date": None}, "exchange_rate.date"),
    ],
)
def test_a_bad_rate_is_a_422_naming_the_field(alice, fields, field):
    body = {"date": TODAY.isoformat(), "from_currency": "EUR", "to_currency": "USD", "rate": "1.1"}
    body.update(fields)
    r = _post(alice, **body)
    errors = assert_error(r, 422, "validation_failed")["errors"]
    assert [e.split(":")[0] for e in errors] == [field], errors
    if field.endswith("rate") and fields["rate"] is not True:
        assert errors == [f"{field}: {RATE_MESSAGE}"]
    assert not ExchangeRate.objects.exists()


@pytest.mark.django_db
def test_rate_and_report_dates_have_the_ledger_bounds_to_the_day(alice):
    """A rate's date and a report's range end where every ledger date does (core.bounds): the
    rate's date is a bounded StrictDateField, named as any ledger date is."""
    last, first = max_date(), MIN_DATE
    for day in (first, last):
        r = _post(alice, date=day.isoformat(), from_currency="EUR", to_currency="USD", rate="1.1")
        assert r.status_code == 201, r.json()
    for day in (first - dt.timedelta(days=1), last + dt.timedelta(days=1)):
        r = _post(alice, date=day.isoformat(), from_currency="EUR", to_currency="USD", rate="1.1")
        errors = assert_error(r, 422, "validation_failed")["errors"]
        assert errors == [f"exchange_rate.date: {date_problem(day)}"]
    r = alice.client.get(f"/api/v1/net_worth?start_date={first}&end_date={first}")
    assert r.status_code == 200, r.json()
    r = alice.client.get(f"/api/v1/cash_flow?end_date={last + dt.timedelta(days=1)}")
    assert assert_error(r, 422, "validation_failed")["errors"] == [
        f"end_date: {DATE_RANGE_MESSAGE}"
    ]


@pytest.mark.django_db
def test_the_root_key_and_every_missing_field_are_named(alice):
    r = alice.client.post("/api/v1/exchange_rates", {"rate": "1"}, format="json")
    assert (
        "exchange_rate: This field is required."
        in assert_error(r, 422, "validation_failed")["errors"]
    )
    r = alice.client.post("/api/v1/exchange_rates", {"exchange_rate": {}}, format="json")
    errors = assert_error(r, 422, "validation_failed")["errors"]
    assert {e.split(":")[0] for e in errors} == {
        f"exchange_rate.{name}" for name in ("date", "from_currency", "to_currency", "rate")
    }


def test_beat_fetches_daily_after_the_ecb_publishes_unless_turned_off(settings):
    from config.celery import app
    from config.schedule import beat_schedule

    settings.FX_PROVIDER = "ecb"
    entry = beat_schedule()["Fetch exchange rates"]
    assert entry["task"] == "finance.fetch_exchange_rates" and entry["options"]["expires"] > 0
    assert entry["schedule"].hour == {16} and entry["schedule"].minute == {30}
    assert str(entry["schedule"].tz) == "Europe/Berlin"
    app.autodiscover_tasks(force=True)
    assert "finance.fetch_exchange_rates" in app.tasks
    settings.FX_PROVIDER = "none"
    assert "Fetch exchange rates" not in beat_schedule()
