"""Issue 24: sync rules that never lose a posted charge, each scenario against both providers'
fake servers over real HTTP, the household's side over the API (decisions.md, "Provider
connections": "Nothing upstream still sends is left out")."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.models import Transaction
from providers.models import ProviderConnection
from tests.factories import CategoryFactory, TagFactory
from tests.providers.upstream import Bank, ago, bank_for, ledger, patch


@pytest.fixture(params=["lunchflow", "simplefin"])
def bank(request, settings) -> Iterator[Bank]:
    with bank_for(request.param, settings) as made:
        yield made


@pytest.fixture
def sync(alice, bank, django_capture_on_commit_callbacks):
    def run() -> dict:
        result = bank.sync(alice, django_capture_on_commit_callbacks)
        assert result["status"] == "completed", result
        return result

    bank.connect(alice)
    return run


def by_external_id(alice) -> dict[str, dict]:
    return {t["external_id"]: t for t in ledger(alice)}


def edit(alice, txn: dict) -> tuple[str, str]:
    """The household's edits: category, notes, a new name and a tag, over the API."""
    category = CategoryFactory(family=alice.family, name="Travel")
    tag = TagFactory(family=alice.family, name="trip")
    patch(
        alice,
        txn["id"],
        category_id=str(category.pk),
        notes="hotel in Lyon",
        name="Hotel Lyon",
        tag_ids=[str(tag.pk)],
    )
    return str(category.pk), str(tag.pk)


def assert_edits(txn: dict, category: str, tag: str) -> None:
    assert txn["category"]["id"] == category
    assert (txn["notes"], txn["name"]) == ("hotel in Lyon", "Hotel Lyon")
    assert [t["id"] for t in txn["tags"]] == [tag]


# --- 1. a row the sync excluded comes back --------------------------------------------------


def test_a_stale_excluded_row_comes_back_when_it_posts_under_its_id(alice, bank, sync):
    hold = bank.add("p-40", 20, "40.00", "HOTEL AUTH", pending=True)
    sync()
    category, tag = edit(alice, by_external_id(alice)["p-40"])

    bank.remove(hold)  # vanished, and older than SYNC_STALE_PENDING_DAYS: excluded
    result = sync()
    assert by_external_id(alice)["p-40"]["excluded"] is True
    assert result["stats"]["transactions_removed"] == 1

    bank.add("p-40", 18, "40.00", "HOTEL", pending=False)  # posted under the same id
    result = sync()
    (txn,) = ledger(alice)
    assert (txn["external_id"], txn["excluded"], txn["pending"]) == ("p-40", False, False)
    assert txn["date"] == ago(18).isoformat()
    assert_edits(txn, category, tag)
    assert result["stats"]["transactions_updated"] == 1


def test_a_stale_excluded_row_comes_back_when_it_is_sent_pending_again(alice, bank, sync):
    hold = bank.add("p-40", 20, "40.00", "HOTEL AUTH", pending=True)
    sync()
    category, tag = edit(alice, by_external_id(alice)["p-40"])
    if not bank.omit_pending(True):  # SimpleFIN: the institution omits pending rows a while
        bank.remove(hold)
    sync()
    assert by_external_id(alice)["p-40"]["excluded"] is True

    if not bank.omit_pending(False):
        bank.rows[bank.accounts[0]].append(hold)
    sync()
    (txn,) = ledger(alice)
    assert (txn["excluded"], txn["pending"]) == (False, True)
    assert_edits(txn, category, tag)
    # and it stays: an unchanged row the sync included again is not excluded again
    sync()
    assert ledger(alice)[0]["excluded"] is False


def test_the_households_exclusion_is_never_lifted_by_a_sync(alice, bank, sync):
    hold = bank.add("p-40", 20, "40.00", "HOTEL AUTH", pending=True)
    sync()
    patch(alice, by_external_id(alice)["p-40"]["id"], excluded=True)
    bank.remove(hold)
    sync()
    bank.add("p-40", 18, "40.00", "HOTEL", pending=False)
    sync()
    (txn,) = ledger(alice)
    assert (txn["pending"], txn["excluded"]) == (False, True)


def test_the_households_exclusion_of_a_sync_excluded_row_sticks(alice, bank, sync):
    hold = bank.add("p-40", 20, "40.00", "HOTEL AUTH", pending=True)
    sync()
    bank.remove(hold)
    sync()
    txn = by_external_id(alice)["p-40"]
    assert txn["excluded"] is True
    patch(alice, txn["id"], excluded=True)  # now the household's own
    bank.add("p-40", 18, "40.00", "HOTEL", pending=False)
    sync()
    assert ledger(alice)[0]["excluded"] is True


# --- 2. the window covers every row still pending --------------------------------------------


def test_a_long_hold_upstream_still_lists_is_never_excluded(alice, bank, sync):
    bank.add("hold", 35, "250.00", "CAR RENTAL DEPOSIT", pending=True)
    first = sync()  # reads 45 days back
    assert first["stats"]["transactions_added"] == 1
    second = sync()  # the overlap alone would start 30 days back
    connection = ProviderConnection.objects.get(pk=bank.connection_id)
    last = connection.syncs.order_by("-created_at").first()
    assert last.window_start <= ago(35)
    assert second["stats"]["transactions_removed"] == 0
    assert by_external_id(alice)["hold"]["excluded"] is False

    bank.find("hold").pending = False  # it posts under its id
    sync()
    txn = by_external_id(alice)["hold"]
    assert (txn["pending"], txn["excluded"]) == (False, False)


@pytest.mark.parametrize("bank", ["simplefin"], indirect=True)
def test_simplefin_reads_an_old_hold_back_by_several_requests(alice, settings, sync, bank):
    settings.SIMPLEFIN_HISTORY_DAYS = 100
    bank.add("hold", 95, "250.00", "CAR RENTAL DEPOSIT", pending=True)
    sync()
    again = sync()
    assert again["stats"]["requests_made"] == 2  # 96 days: two windows of at most 60
    assert by_external_id(alice)["hold"]["excluded"] is False


@pytest.mark.parametrize("bank", ["simplefin"], indirect=True)
def test_simplefin_reads_back_only_as_far_as_the_days_budget_allows(alice, settings, sync, bank):
    settings.SIMPLEFIN_HISTORY_DAYS = 100
    hold = bank.add("hold", 95, "250.00", "CAR RENTAL DEPOSIT", pending=True)
    sync()
    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 6  # connect (2) and the first sync (2) used 4
    connection = ProviderConnection.objects.get(pk=bank.connection_id)
    assert connection.daily_request_count == 4  # 2 left: the old hold may take 1 of them
    bank.remove(hold)  # not seen: the window cannot reach it, so it is not judged
    result = sync()
    assert result["stats"]["requests_made"] == 1
    assert by_external_id(alice)["hold"]["excluded"] is False


# --- 3. takeover by the posted version, whenever it arrived ----------------------------------


def test_a_posted_version_that_arrived_early_takes_the_pending_row_over(alice, bank, sync):
    hold = bank.add("p-1", 20, "40.00", "HOTEL AUTH", pending=True)
    sync()
    pending = by_external_id(alice)["p-1"]
    category, tag = edit(alice, pending)
    bank.add("post-1", 17, "40.00", "HOTEL")  # posted while the pending row is still listed
    sync()
    assert {t["external_id"] for t in ledger(alice) if not t["excluded"]} == {"p-1", "post-1"}

    bank.remove(hold)
    result = sync()
    (txn,) = ledger(alice)
    assert (txn["external_id"], txn["pending"], txn["excluded"]) == ("post-1", False, False)
    assert_edits(txn, category, tag)
    assert not Transaction.objects.filter(pk=pending["id"]).exists()
    assert result["stats"]["transactions_removed"] == 1


def test_a_posted_version_arriving_after_the_exclusion_takes_over(alice, bank, sync):
    hold = bank.add("p-1", 20, "40.00", "HOTEL AUTH", pending=True)
    sync()
    category, tag = edit(alice, by_external_id(alice)["p-1"])
    bank.remove(hold)
    sync()
    assert by_external_id(alice)["p-1"]["excluded"] is True

    bank.add("post-1", 14, "40.00", "HOTEL")
    sync()
    (txn,) = ledger(alice)
    assert (txn["external_id"], txn["excluded"]) == ("post-1", False)
    assert_edits(txn, category, tag)


def test_the_households_exclusion_moves_to_the_posted_version(alice, bank, sync):
    hold = bank.add("p-1", 5, "40.00", "HOTEL AUTH", pending=True)
    sync()
    patch(alice, by_external_id(alice)["p-1"]["id"], excluded=True)
    bank.remove(hold)
    bank.add("post-1", 3, "40.00", "HOTEL")
    sync()
    (txn,) = ledger(alice)
    assert (txn["external_id"], txn["excluded"]) == ("post-1", True)


def test_takeovers_of_many_excluded_rows_read_no_row_again(alice, bank, sync):
    """Each takeover moves the household's exclusion (a flow) onto the posted version; the rows'
    old account and date come from the one query that found the candidates, not one read per
    row (LedgerBatch.update without `was`)."""
    holds = [bank.add(f"p-{i}", 5 + i, f"4{i}.00", f"AUTH {i}", pending=True) for i in range(4)]
    sync()
    for i in range(3):
        patch(alice, by_external_id(alice)[f"p-{i}"]["id"], excluded=True)
    for i, hold in enumerate(holds):
        bank.remove(hold)
        bank.add(f"post-{i}", 4 + i, f"4{i}.00", "POSTED")
    connection.queries_log.clear()  # a full log (it keeps 9,000) would capture nothing
    with CaptureQueriesContext(connection) as queries:
        sync()
    assert len(queries) > 10
    t = r'"finance_transaction"'
    old_flow = re.compile(
        rf'SELECT {t}\."account_id"( AS "account_id")?, {t}\."date"( AS "date")? '
        rf'FROM {t} WHERE {t}\."id" = '
    )
    assert [q["sql"] for q in queries if old_flow.match(q["sql"])] == []
    rows = by_external_id(alice)
    assert set(rows) == {f"post-{i}" for i in range(4)}
    assert [rows[f"post-{i}"]["excluded"] for i in range(4)] == [True, True, True, False]


def test_takeovers_cost_one_write_per_posted_version_not_queries_per_pair(alice, bank, sync):
    """The pending rows a sync's posted versions take over go together (tags, transfer legs,
    the delete): a sync settling 6 of them runs one query per posted version more than one
    settling 2 (the save of its edits), not a dozen (LedgerBatch.supersede per pair)."""

    def takeovers(first: int, count: int) -> int:
        holds = [
            bank.add(f"p-{i}", 5 + i % 9, f"{i}.50", f"AUTH {i}", pending=True)
            for i in range(first, first + count)
        ]
        sync()
        for i, hold in enumerate(holds, start=first):
            bank.remove(hold)
            bank.add(f"post-{i}", 4 + i % 9, f"{i}.50", "POSTED")
        connection.queries_log.clear()
        with CaptureQueriesContext(connection) as queries:
            sync()
        return len(queries)

    two, six = takeovers(1, 2), takeovers(11, 6)
    assert two > 10
    assert six - two <= 4, (two, six)
    rows = by_external_id(alice)
    assert not any(key.startswith("p-") for key in rows)
    assert {key for key in rows if key.startswith("post-")} == {
        f"post-{i}" for i in (1, 2, 11, 12, 13, 14, 15, 16)
    }


def _rule(alice, name: str, word: str, action: dict) -> str:
    body = {
        "rule": {
            "name": name,
            "conditions": [{"field": "name", "operator": "contains", "value": word}],
            "actions": [action],
        }
    }
    response = alice.client.post("/api/v1/rules", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_the_posted_version_keeps_what_the_household_and_its_rules_set(
    alice, bank, sync, django_capture_on_commit_callbacks
):
    """Issue 21: a takeover carries the pending row's record of who set what (`edited_fields`,
    `rule_changes`) to its posted version, so neither a re-sync nor a rule applied later undoes
    a user's edit, and the posted row still names the rule that set a field."""
    travel = CategoryFactory(family=alice.family, name="Travel")
    by_rule = _rule(alice, "Holds", "AUTH", {"type": "set_category", "value": str(travel.pk)})
    hold = bank.add("p-1", 6, "40.00", "HOTEL AUTH", pending=True)
    sync()
    pending = by_external_id(alice)["p-1"]
    assert (pending["category"]["id"], pending["rule_ids"]) == (str(travel.pk), [by_rule])
    patch(alice, pending["id"], name="HOTEL")  # the household's own name for it

    bank.remove(hold)
    posted_row = bank.add("post-1", 4, "40.00", "HOTEL")  # the rule matches no posted row
    sync()
    (txn,) = ledger(alice)
    assert (txn["external_id"], txn["name"]) == ("post-1", "HOTEL")
    assert (txn["category"]["id"], txn["rule_ids"]) == (str(travel.pk), [by_rule])
    stored = Transaction.objects.get(pk=txn["id"])
    assert stored.edited_fields == ["name"] and stored.rule_set_fields == {"category"}

    posted_row.name = "HOTEL PARIS"  # upstream renames the posted row: the user's name stays
    sync()
    (txn,) = ledger(alice)
    assert (txn["name"], txn["category"]["id"]) == ("HOTEL", str(travel.pk))

    # a rule applied to existing rows leaves the user's name alone as well
    renamer = _rule(alice, "Rename", "HOTEL", {"type": "set_name", "value": "Lodging"})
    with django_capture_on_commit_callbacks(execute=True):
        response = alice.client.post(f"/api/v1/rules/{renamer}/apply")
    assert response.status_code == 202, response.content
    (txn,) = ledger(alice)
    assert txn["name"] == "HOTEL" and txn["rule_ids"] == [by_rule]
    sync()
    assert ledger(alice)[0]["name"] == "HOTEL"


def test_a_posted_version_takes_over_one_pending_row_only(alice, bank, sync):
    first = bank.add("p-1", 6, "40.00", "AUTH ONE", pending=True)
    second = bank.add("p-2", 5, "40.00", "AUTH TWO", pending=True)
    sync()
    patch(alice, by_external_id(alice)["p-2"]["id"], notes="second")
    bank.add("post-1", 5, "40.00", "POSTED")
    sync()
    bank.remove(first)
    bank.remove(second)
    sync()
    rows = by_external_id(alice)
    # p-1 is the oldest, so it goes first; p-2 is young and waits for its own posted version
    assert set(rows) == {"post-1", "p-2"}
    assert rows["post-1"]["notes"] is None and rows["p-2"]["notes"] == "second"
    bank.add("post-2", 4, "40.00", "POSTED")
    sync()
    rows = by_external_id(alice)
    assert set(rows) == {"post-1", "post-2"} and rows["post-2"]["notes"] == "second"


def test_a_row_posted_under_its_own_id_takes_over_no_other_row(alice, bank, sync):
    mine = bank.add("p-1", 4, "40.00", "AUTH ONE", pending=True)
    other = bank.add("p-2", 4, "40.00", "AUTH TWO", pending=True)
    sync()
    mine.pending = False
    bank.remove(other)
    sync()
    rows = by_external_id(alice)
    assert set(rows) == {"p-1", "p-2"} and rows["p-2"]["pending"] is True


def test_ties_go_to_the_closest_date_then_the_oldest(alice, bank, sync):
    hold = bank.add("p-1", 10, "40.00", "AUTH", pending=True)
    sync()
    patch(alice, by_external_id(alice)["p-1"]["id"], notes="mine")
    bank.add("post-late", 8, "40.00", "POSTED")  # 2 days after
    bank.add("post-early", 12, "40.00", "POSTED")  # 2 days before: as close, and older
    bank.add("post-far", 4, "40.00", "POSTED")
    bank.remove(hold)
    sync()
    rows = by_external_id(alice)
    assert rows["post-early"]["notes"] == "mine"
    assert rows["post-late"]["notes"] is None and "p-1" not in rows


def test_a_posted_row_outside_eight_days_or_of_another_amount_takes_nothing_over(alice, bank, sync):
    hold = bank.add("p-1", 20, "40.00", "AUTH", pending=True)
    sync()
    bank.add("post-far", 11, "40.00", "POSTED")  # 9 days after
    bank.add("post-other", 19, "40.01", "POSTED")
    bank.remove(hold)
    sync()
    rows = by_external_id(alice)
    assert set(rows) == {"p-1", "post-far", "post-other"}
    assert rows["p-1"]["excluded"] is True


def test_a_transfer_moves_to_the_posted_version(alice, bank, sync):
    from finance.models import Transfer

    hold = bank.add("p-1", 5, "40.00", "TO SAVINGS", pending=True)
    sync()
    savings = alice.account(name="Savings", currency="EUR")
    pending = Transaction.objects.get(external_id="p-1")
    inflow = alice.client.post(
        "/api/v1/transactions",
        {
            "transaction": {
                "account_id": str(savings.pk),
                "date": pending.date.isoformat(),
                "amount": "40.00",
                "nature": "income",
                "name": "From checking",
            }
        },
        format="json",
    )
    assert inflow.status_code == 201, inflow.content
    suggested = Transfer.objects.filter(outflow_transaction=pending).first()
    if suggested is not None:
        response = alice.client.post(f"/api/v1/transfers/{suggested.pk}/confirm")
    else:
        legs = {
            "inflow_transaction_id": inflow.json()["id"],
            "outflow_transaction_id": str(pending.pk),
        }
        response = alice.client.post("/api/v1/transfers", {"transfer": legs}, format="json")
    assert response.status_code in (200, 201), response.content
    bank.remove(hold)
    bank.add("post-1", 4, "40.00", "TO SAVINGS")
    sync()
    transfer = Transfer.objects.get()
    assert transfer.outflow_transaction.external_id == "post-1"
    assert transfer.status == Transfer.Status.CONFIRMED
    assert transfer.outflow_transaction.kind == Transaction.Kind.FUNDS_MOVEMENT


def test_a_failed_sync_changes_nothing_and_the_next_one_settles(
    alice, bank, sync, django_capture_on_commit_callbacks
):
    hold = bank.add("p-1", 20, "40.00", "AUTH", pending=True)
    sync()
    before = ledger(alice)
    bank.remove(hold)
    bank.add("post-1", 18, "40.00", "POSTED")
    bank.fail_sync()
    failed = bank.sync(alice, django_capture_on_commit_callbacks)
    assert failed["status"] == "failed"
    assert ledger(alice) == before
    bank.faults_clear()
    sync()
    (txn,) = ledger(alice)
    assert txn["external_id"] == "post-1" and txn["date"] == ago(18).isoformat()
