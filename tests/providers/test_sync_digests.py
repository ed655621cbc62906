"""Re-syncs compare snapshot digests (issue 19): an unchanged row is not read whole nor
written, a changed one is refreshed with its new digest, rows stored without a digest (synced
before the column, restored) are compared once by their snapshot and given one. Against the
fake Lunch Flow server (sync engine inline) and the fake SimpleFIN server (through the API),
both over real HTTP."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finance.models import Transaction
from providers.sync.apply import snapshot_digest
from providers.testing import simplefin_pytest
from providers.testing.simplefin_demo import demo_scenario
from tests.providers.conftest import connect, day, run_sync

simplefin_server = simplefin_pytest.simplefin_server


@pytest.fixture
def checking(lunchflow):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "1500.25")
    for n in range(12):
        lunchflow.scenario.add_transaction("a1", f"t{n}", day(n), -n - 1, f"Row {n}", f"M{n % 3}")
    return lunchflow.scenario


def stored() -> dict[str, tuple]:
    return {
        t.external_id: (t.pk, t.updated_at, t.amount, t.provider_snapshot_hash)
        for t in Transaction.objects.all()
    }


def test_every_synced_row_carries_the_digest_of_its_snapshot(alice, checking):
    run_sync(connect(alice))
    rows = list(Transaction.objects.all())
    assert len(rows) == 12
    for txn in rows:
        assert txn.provider_snapshot_hash == snapshot_digest(txn.provider_snapshot)
    assert len({t.provider_snapshot_hash for t in rows}) == 12


def test_an_unchanged_resync_reads_digests_not_snapshots_and_writes_nothing(
    alice, checking, django_assert_max_num_queries
):
    connection = connect(alice)
    run_sync(connection)
    before = stored()
    with django_assert_max_num_queries(40) as captured:
        sync = run_sync(connection)
    assert sync.stats["transactions_unchanged"] == 12
    assert sync.stats["transactions_added"] == sync.stats["transactions_updated"] == 0
    assert stored() == before
    reads = [q["sql"] for q in captured.captured_queries if "finance_transaction" in q["sql"]]
    by_key = [q for q in reads if '"external_id" IN (' in q]
    assert by_key and all('"provider_snapshot_hash"' in q for q in by_key), by_key
    assert not any('"provider_snapshot",' in q or '"provider_snapshot" FROM' in q for q in by_key)
    writes = [q for q in reads if q.lstrip().upper().startswith(("UPDATE", "INSERT", "DELETE"))]
    assert writes == []


def test_a_changed_row_is_refreshed_with_its_new_digest_and_the_rest_left_alone(alice, checking):
    connection = connect(alice)
    run_sync(connection)
    before = stored()
    checking.transactions["a1"][3]["amount"] = -40
    checking.add_transaction("a1", "new", day(1), -5, "New row")
    sync = run_sync(connection)
    assert (sync.stats["transactions_updated"], sync.stats["transactions_added"]) == (1, 1)
    after = stored()
    changed = Transaction.objects.get(external_id="t3")
    assert changed.amount == Decimal("40")
    assert changed.provider_snapshot_hash == snapshot_digest(changed.provider_snapshot)
    assert after["t3"][3] != before["t3"][3] and after["t3"][1] > before["t3"][1]
    assert {k: v for k, v in after.items() if k not in ("t3", "new")} == {
        k: v for k, v in before.items() if k != "t3"
    }
    assert after["new"][3] == snapshot_digest(
        Transaction.objects.get(external_id="new").provider_snapshot
    )


def test_pending_to_posted_changes_the_digest_and_settles_the_row(alice, checking):
    row = checking.add_transaction("a1", "p1", day(2), -7, "CARD AUTH", pending=True)
    connection = connect(alice)
    run_sync(connection)
    pending_digest = Transaction.objects.get(external_id="p1").provider_snapshot_hash
    row.update(isPending=False, description="Posted")
    run_sync(connection)
    txn = Transaction.objects.get(external_id="p1")
    assert (txn.pending, txn.name, txn.pending_settled) == (False, "Posted", True)
    assert txn.provider_snapshot_hash not in (None, pending_digest)


def test_rows_without_a_digest_are_compared_once_and_given_theirs_unchanged(alice, checking):
    connection = connect(alice)
    run_sync(connection)
    # As rows synced before the column existed (or restored from an archive) are stored.
    Transaction.objects.update(provider_snapshot_hash=None)
    before = stored()
    checking.transactions["a1"][5]["description"] = "Renamed upstream"
    sync = run_sync(connection)
    assert (sync.stats["transactions_unchanged"], sync.stats["transactions_updated"]) == (11, 1)
    after = stored()
    for key, (pk, updated_at, amount, digest) in after.items():
        txn = Transaction.objects.get(pk=pk)
        assert digest == snapshot_digest(txn.provider_snapshot)
        if key != "t5":  # recorded without a change the household sees
            assert (updated_at, amount) == before[key][1:3]
    assert Transaction.objects.get(external_id="t5").name == "Renamed upstream"
    assert run_sync(connection).stats["transactions_unchanged"] == 12


def test_an_excluded_by_sync_row_sent_again_is_included_with_its_digest_unchanged(alice, checking):
    connection = connect(alice)
    run_sync(connection)
    Transaction.objects.filter(external_id="t2").update(excluded=True, excluded_by_sync=True)
    digest = Transaction.objects.get(external_id="t2").provider_snapshot_hash
    sync = run_sync(connection)
    assert sync.stats["transactions_updated"] == 1
    txn = Transaction.objects.get(external_id="t2")
    assert (txn.excluded, txn.excluded_by_sync, txn.provider_snapshot_hash) == (
        False,
        False,
        digest,
    )


def test_another_households_identical_rows_are_their_own(alice, charlie, checking):
    run_sync(connect(alice))
    sync = run_sync(connect(charlie))
    assert sync.stats["transactions_added"] == 12
    for household in (alice, charlie):
        rows = Transaction.objects.filter(family=household.family)
        assert rows.count() == 12 and not rows.filter(provider_snapshot_hash=None).exists()


def test_simplefin_resync_unchanged_then_changed(alice, settings, simplefin_server):
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.001
    settings.SIMPLEFIN_INCLUDE_PENDING = False
    scenario = demo_scenario()
    response = alice.client.post(
        "/api/v1/provider_connections",
        {"provider": "simplefin", "setup_token": simplefin_server.create_setup_token(scenario)},
        format="json",
    )
    assert response.status_code == 201, response.content
    from providers.models import ProviderConnection

    connection = ProviderConnection.objects.get(pk=response.json()["id"])
    first = run_sync(connection)
    assert first.stats["transactions_added"] == 4
    before = stored()
    assert all(v[3] for v in before.values())
    again = run_sync(connection)
    assert again.stats["transactions_unchanged"] == 4 and again.stats["transactions_updated"] == 0
    assert stored() == before
    grocery = next(t for a in scenario.accounts for t in a["transactions"] if t["id"] == "TRN-1")
    grocery["amount"] = "-43.00"
    changed = run_sync(connection)
    assert changed.stats["transactions_updated"] == 1
    txn = Transaction.objects.get(external_id="TRN-1")
    assert txn.amount == Decimal("43.00")
    assert txn.provider_snapshot_hash == snapshot_digest(txn.provider_snapshot)
    assert txn.provider_snapshot_hash != before["TRN-1"][3]
