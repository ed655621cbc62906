"""A re-import of a file read the same way reuses the earlier parse (issue 19): it copies the
earlier rows, or into a fixed account borrows them until it needs its own (then copied); the
rows are those a parse gives, field by field; what the household did to the earlier rows is
not copied; the marks are the ledger's as it is now; any difference in the file, the
reading, the account or the household parses again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.models import Transaction
from imports.models import Import, ImportMapping, ImportRow
from imports.services.lending import import_rows_ensure
from imports.services.reuse import COPIED
from tests.imports.test_imports_api import publish, revert, upload

pytestmark = pytest.mark.django_db

CSV = (
    b"date,name,amount,category,tags\n"
    b"2024-03-01,Rent,-1100.00,Housing,home\n"
    b"2024-03-02,Coffee,-3.50,Food,food|coffee\n"
    b"2024-03-02,Coffee,-3.50,Food,food|coffee\n"
    b"2024-03-03,Salary,2500.00,Income,\n"
    b"2024-03-04,Bad row,not-a-number,,\n"
    b"2099-01-01,Future,-1.00,,\n"
)
ROWS = "imports_importrow"


def uploaded(alice, content=CSV, **fields) -> tuple[dict, bool]:
    """Upload; returns (the import, whether it reused an earlier import's rows: copied them,
    or borrows them)."""
    with CaptureQueriesContext(connection) as queries:
        response = upload(alice.client, content, **fields)
    assert response.status_code == 201, response.content
    copied = any(
        q["sql"].lstrip().upper().startswith("INSERT")
        and "SELECT" in q["sql"].upper()
        and ROWS in q["sql"]
        for q in queries.captured_queries
    )
    data = response.json()["data"]
    borrows = Import.objects.get(pk=data["id"]).rows_from_id is not None
    return data, copied or borrows


def parsed(import_id) -> list[tuple]:
    """The import's rows (a borrowing import gets its own copy first, as a change would)."""
    import_rows_ensure(data_import=Import.objects.get(pk=import_id))
    return list(
        ImportRow.objects.filter(data_import_id=import_id)
        .order_by("row_number")
        .values_list(*COPIED, "account_id", "skipped", "forced", "duplicate", "duplicate_of")
    )


def skip_invalid(alice, import_id) -> None:
    listed = alice.client.get(f"/api/v1/imports/{import_id}/rows?valid=false&per_page=100")
    assert listed.status_code == 200, listed.content
    for number in [row["row_number"] for row in listed.json()["data"]]:
        response = alice.client.patch(
            f"/api/v1/imports/{import_id}/rows/{number}", {"skip": True}, format="json"
        )
        assert response.status_code == 200, response.content


def mappings(import_id) -> set[tuple]:
    return set(
        ImportMapping.objects.filter(data_import_id=import_id).values_list(
            "kind", "value", "rows_count", "target_id", "create_new"
        )
    )


def test_the_same_file_read_the_same_way_copies_the_rows_a_parse_gives(alice):
    account = alice.account()
    first, copied = uploaded(alice, account_id=str(account.pk))
    assert not copied
    again, copied = uploaded(alice, account_id=str(account.pk))
    assert copied
    assert parsed(again["id"]) == parsed(first["id"])
    assert len(parsed(again["id"])) == 6
    assert mappings(again["id"]) == mappings(first["id"])
    assert again["stats"] == first["stats"]
    assert again["stats"]["invalid_rows_count"] == 2
    imp = Import.objects.get(pk=again["id"])
    assert imp.headers == ["date", "name", "amount", "category", "tags"]
    assert imp.configuration["col_sep"] == ","
    assert imp.parse_key == Import.objects.get(pk=first["id"]).parse_key


def test_a_reimport_after_publish_is_all_duplicates_and_its_publish_writes_nothing(
    alice, django_capture_on_commit_callbacks
):
    account = alice.account()
    first, _ = uploaded(alice, account_id=str(account.pk))
    skip_invalid(alice, first["id"])
    done = publish(alice.client, first["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete", done
    stored = set(Transaction.objects.filter(account=account).values_list("pk", flat=True))
    assert len(stored) == 4

    again, copied = uploaded(alice, account_id=str(account.pk))
    assert copied
    assert again["stats"]["duplicates_count"] == 4
    rows = parsed(again["id"])
    assert {r[-1] for r in rows if r[-2]} == stored
    assert not any(r[-4] for r in rows)  # the earlier import's skips are not copied
    skip_invalid(alice, again["id"])
    second = publish(alice.client, again["id"], django_capture_on_commit_callbacks)
    assert second["status"] == "complete"
    assert set(Transaction.objects.filter(account=account).values_list("pk", flat=True)) == stored


def test_marks_follow_the_ledger_now_not_the_earlier_import(
    alice, django_capture_on_commit_callbacks
):
    """The earlier import was published then reverted: its rows are gone from the ledger,
    so the copied rows repeat nothing."""
    account = alice.account()
    first, _ = uploaded(alice, account_id=str(account.pk))
    skip_invalid(alice, first["id"])
    publish(alice.client, first["id"], django_capture_on_commit_callbacks)
    second, _ = uploaded(alice, account_id=str(account.pk))
    assert second["stats"]["duplicates_count"] == 4
    assert revert(alice.client, first["id"], django_capture_on_commit_callbacks)["status"] != (
        "complete"
    )
    assert not Transaction.objects.filter(account=account).exists()
    third, copied = uploaded(alice, account_id=str(account.pk))
    assert copied
    assert third["stats"]["duplicates_count"] == 0
    assert not any(r[-2] for r in parsed(third["id"]))


@pytest.mark.parametrize(
    "change",
    [
        {"content": CSV + b"2024-03-05,Extra,-1.00,,\n"},
        {"fields": {"date_format": "%Y-%m-%d", "signage_convention": "inflows_negative"}},
        {"fields": {"number_format": "1.234,56"}},
        {"other_account": True},
        {"no_account": True},
    ],
    ids=["file", "signage", "numbers", "account", "account-column"],
)
def test_any_difference_parses_again(alice, change):
    account = alice.account()
    first, _ = uploaded(alice, account_id=str(account.pk))
    fields = {"account_id": str(account.pk), **change.get("fields", {})}
    if change.get("other_account"):
        fields["account_id"] = str(alice.account(name="Other").pk)
    if change.get("no_account"):
        fields.pop("account_id")
    again, copied = uploaded(alice, change.get("content", CSV), **fields)
    assert not copied
    if change.get("fields", {}).get("signage_convention"):
        rent = [r[3] for r in parsed(again["id"]) if r[0] == 2]
        assert rent == [-r[3] for r in parsed(first["id"]) if r[0] == 2]


def test_another_households_identical_file_is_never_copied(alice, charlie):
    uploaded(alice)
    theirs, copied = uploaded(charlie)
    assert not copied
    assert len(parsed(theirs["id"])) == 6


def test_an_import_whose_file_could_not_be_read_is_never_copied(alice):
    account = alice.account()
    first, _ = uploaded(alice, account_id=str(account.pk))
    Import.objects.filter(pk=first["id"]).update(parse_key=None)  # as import_parse_failed does
    again, copied = uploaded(alice, account_id=str(account.pk))
    assert not copied
    assert parsed(again["id"]) == parsed(first["id"])


def test_a_reconfigured_import_records_its_new_key(alice):
    account = alice.account()
    first, _ = uploaded(alice, account_id=str(account.pk))
    before = Import.objects.get(pk=first["id"]).parse_key
    response = alice.client.patch(
        f"/api/v1/imports/{first['id']}", {"signage_convention": "inflows_negative"}, format="json"
    )
    assert response.status_code == 200, response.content
    after = Import.objects.get(pk=first["id"]).parse_key
    assert after and after != before
    # a new upload read as the first was is no longer the first's rows
    again, copied = uploaded(alice, account_id=str(account.pk))
    assert not copied
    assert parsed(again["id"]) != parsed(first["id"])
