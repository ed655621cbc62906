"""A re-import into a fixed account borrows the earlier import's rows (issue 19): it holds none
until it needs its own, and whatever happens to the lender, the borrower's rows stay what
its parse gave; whatever happens to the ledger, its counts and marks follow it."""

from __future__ import annotations

import uuid

import pytest
from django.db import IntegrityError, connection, transaction

from finance.models import Family, Transaction
from imports.models import Import, ImportRow
from imports.services.lending import import_rows_ensure
from tests.imports.test_admin import _admin
from tests.imports.test_imports_api import publish, revert, rows
from tests.imports.test_reimport_reuse import CSV, parsed, skip_invalid, uploaded

pytestmark = pytest.mark.django_db


def own_rows(import_id) -> int:
    return ImportRow.objects.filter(data_import_id=import_id).count()


def counts(import_id) -> dict:
    """Every count the import keeps (the API shows some of them)."""
    return Import.objects.get(pk=import_id).stats


def borrows(import_id) -> bool:
    return Import.objects.get(pk=import_id).rows_from_id is not None


@pytest.fixture
def published(alice, django_capture_on_commit_callbacks):
    """An account, and the CSV imported into it and published (invalid rows skipped)."""
    account = alice.account()
    first, _ = uploaded(alice, account_id=str(account.pk))
    skip_invalid(alice, first["id"])
    done = publish(alice.client, first["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete", done
    return account, first


def test_a_borrowing_import_counts_as_its_own_rows_would(alice, published):
    account, _ = published
    again, reused = uploaded(alice, account_id=str(account.pk))
    assert reused and borrows(again["id"]) and own_rows(again["id"]) == 0
    stats = counts(again["id"])
    # The first import's rows as parsed: 6 rows, 2 invalid, the 4 valid ones in the ledger.
    assert (stats["rows_count"], stats["valid_rows_count"], stats["invalid_rows_count"]) == (
        6,
        4,
        2,
    )
    assert (stats["duplicates_count"], stats["rows_to_create"], stats["skipped_rows_count"]) == (
        4,
        0,
        0,
    )
    # Listing its rows keeps it borrowing; they name the transactions they repeat, and the
    # lender's skips are the lender's own.
    listed = rows(alice.client, again["id"])
    assert borrows(again["id"]) and own_rows(again["id"]) == 0
    stored = set(Transaction.objects.filter(account=account).values_list("pk", flat=True))
    assert {r["duplicate_of"] for r in listed if r["duplicate"]} == {str(pk) for pk in stored}
    assert not any(r["skipped"] for r in listed)
    # The same counts as the copy it gets once it needs rows of its own.
    import_rows_ensure(data_import=Import.objects.get(pk=again["id"]))
    assert not borrows(again["id"]) and own_rows(again["id"]) == 6
    assert counts(again["id"]) == stats


@pytest.mark.parametrize(
    "params", [{}, {"valid": "false"}, {"duplicate": "true"}, {"duplicate": "false"}]
)
def test_borrowed_rows_list_as_their_copy_does(alice, published, params):
    """Every field of every row, through every filter, paged: the same whether the import
    still borrows its rows or holds the copy."""
    account, _ = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    borrowed = rows(alice.client, again["id"], **params)
    paged = [
        r
        for page in (1, 2, 3)
        for r in rows(alice.client, again["id"], per_page=2, page=page, **params)
    ]
    assert borrows(again["id"])
    import_rows_ensure(data_import=Import.objects.get(pk=again["id"]))
    assert not borrows(again["id"])
    assert rows(alice.client, again["id"], **params) == borrowed
    assert paged == borrowed
    # 6 rows: 2 invalid, 4 in the ledger (the lender published them).
    wanted = {"valid": 2, "duplicate": 4 if params.get("duplicate") == "true" else 2}
    assert len(borrowed) == (wanted[next(iter(params))] if params else 6)


def test_the_admin_page_shows_borrowed_rows_without_copying_them(alice, published):
    account, _ = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    client = _admin(alice)
    page = client.get(f"/admin/imports/import/{again['id']}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Rent" in text and "Bad row" in text
    duplicates = client.get(f"/admin/imports/import/{again['id']}/change/?rows=duplicate")
    assert "Rent" in duplicates.content.decode()
    assert "Bad row" not in duplicates.content.decode()
    assert borrows(again["id"]) and own_rows(again["id"]) == 0


def test_the_admin_row_list_of_a_borrower_leads_to_its_page_and_lists_the_lenders(
    alice, charlie, published
):
    account, first = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    client = _admin(alice)
    rows_url = "/admin/imports/importrow/?data_import__id__exact="
    listed = client.get(rows_url + first["id"])
    assert listed.status_code == 200 and "Rent" in listed.content.decode()
    moved = client.get(rows_url + again["id"])
    assert moved.status_code == 302
    assert moved["Location"] == f"/admin/imports/import/{again['id']}/change/"
    assert "Rent" in client.get(moved["Location"]).content.decode()
    # another household's borrower lists nothing and leads nowhere, as an unknown id does
    theirs = _admin(charlie)
    for import_id in (again["id"], first["id"], str(uuid.uuid4())):
        page = theirs.get(rows_url + import_id)
        assert page.status_code == 200
        assert "Rent" not in page.content.decode() and "0 import rows" in page.content.decode()
    # a malformed id is the admin's own "bad filter" answer, not an error page
    malformed = theirs.get(rows_url + "not-an-id")
    assert malformed.status_code == 302 and malformed["Location"].endswith("?e=1")
    assert borrows(again["id"]) and own_rows(again["id"]) == 0


def test_rows_no_longer_in_the_ledger_are_published_from_a_copy(
    alice, published, django_capture_on_commit_callbacks
):
    account, first = published
    revert(alice.client, first["id"], django_capture_on_commit_callbacks)
    assert not Transaction.objects.filter(account=account).exists()
    again, _ = uploaded(alice, account_id=str(account.pk))
    assert borrows(again["id"])
    assert counts(again["id"])["rows_to_create"] == 4
    assert again["stats"]["duplicates_count"] == 0
    skip_invalid(alice, again["id"])  # a row changed: its own copy
    assert not borrows(again["id"])
    done = publish(alice.client, again["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete"
    assert done["verification"]["readback"]["status"] == "matched"
    assert Transaction.objects.filter(account=account, import_id=again["id"]).count() == 4


def test_a_borrower_with_rows_to_create_publishes_them(alice, django_capture_on_commit_callbacks):
    """Publishing a borrower whose rows are not all in the ledger copies them first: the
    publish writes exactly the missing rows."""
    account = alice.account()
    content = b"date,name,amount\n2024-03-01,Rent,-1100.00\n2024-03-02,Coffee,-3.50\n"
    first, _ = uploaded(alice, content, account_id=str(account.pk))
    publish(alice.client, first["id"], django_capture_on_commit_callbacks)
    rent = Transaction.objects.get(account=account, name="Rent")
    alice.client.delete(f"/api/v1/transactions/{rent.pk}")
    assert Transaction.objects.filter(account=account).count() == 1
    again, _ = uploaded(alice, content, account_id=str(account.pk))
    assert borrows(again["id"]) and counts(again["id"])["rows_to_create"] == 1
    done = publish(alice.client, again["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete"
    assert done["verification"]["readback"]["status"] == "matched"
    assert done["verification"]["readback"]["checked_counts"]["transactions"] == 1
    assert Transaction.objects.filter(account=account, import_id=again["id"]).get().name == "Rent"
    assert own_rows(again["id"]) == 2


def test_a_match_from_elsewhere_gives_the_borrower_rows_marked_one_by_one(
    alice, published, django_capture_on_commit_callbacks
):
    """A transaction entered by hand with a row's date, amount and name is matched by
    occurrence, on rows of the import's own."""
    account, first = published
    revert(alice.client, first["id"], django_capture_on_commit_callbacks)
    coffee = ImportRow.objects.filter(data_import_id=first["id"], name="Coffee").first()
    body = {
        "account_id": str(account.pk),
        "date": coffee.date.isoformat(),
        "amount": str(coffee.amount),
        "name": "Coffee",
    }
    made = alice.client.post("/api/v1/transactions", {"transaction": body}, format="json")
    assert made.status_code == 201, made.content
    again, reused = uploaded(alice, account_id=str(account.pk))
    assert reused and not borrows(again["id"]) and own_rows(again["id"]) == 6
    # Two identical coffee rows, one such transaction: the first occurrence repeats it.
    assert again["stats"]["duplicates_count"] == 1
    marked = [r for r in rows(alice.client, again["id"]) if r["duplicate"]]
    assert [(r["name"], r["occurrence"], r["duplicate_of"]) for r in marked] == [
        ("Coffee", 1, made.json()["id"])
    ]


def test_a_lender_parsed_again_first_gives_its_borrowers_their_rows(alice, published):
    account, first = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    assert Import.objects.get(pk=again["id"]).rows_from_id == Import.objects.get(pk=first["id"]).pk
    # The lender is complete; a third, pending, import borrows from the same rows and lends
    # them on to nobody: reconfiguring the second (a borrower) drops its borrowing.
    third, _ = uploaded(alice, account_id=str(account.pk))
    assert str(Import.objects.get(pk=third["id"]).rows_from_id) == first["id"]
    before = parsed(first["id"])
    lender = Import.objects.get(pk=first["id"])
    Import.objects.filter(pk=lender.pk).update(status=Import.Status.PENDING)
    response = alice.client.patch(
        f"/api/v1/imports/{first['id']}", {"signage_convention": "inflows_negative"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert not borrows(again["id"]) and not borrows(third["id"])
    shape = [r[:-5] for r in before]  # the copied columns, without the lender's own choices
    assert [r[:-5] for r in parsed(again["id"])] == shape
    assert [r[:-5] for r in parsed(third["id"])] == shape
    assert [r[:-5] for r in parsed(first["id"])] != shape  # the lender was read anew


def test_changing_a_borrowers_mappings_keeps_it_borrowing(alice, published):
    account, _ = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    mapping = alice.client.get(f"/api/v1/imports/{again['id']}/mappings").json()["data"][0]
    response = alice.client.patch(
        f"/api/v1/imports/{again['id']}/mappings",
        {"mappings": [{"id": mapping["id"], "create_new": False, "target_id": None}]},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert borrows(again["id"]) and own_rows(again["id"]) == 0
    stats = alice.client.get(f"/api/v1/imports/{again['id']}").json()["data"]["stats"]
    assert counts(again["id"])["duplicates_count"] == 4
    assert stats["unassigned_mappings_count"] == 1


def test_forcing_a_borrowed_row_makes_the_rows_its_own(alice, published):
    account, _ = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    response = alice.client.patch(
        f"/api/v1/imports/{again['id']}/rows/5", {"skip": True}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["data"]["skipped"] is True
    assert not borrows(again["id"]) and own_rows(again["id"]) == 6
    assert ImportRow.objects.get(data_import_id=again["id"], row_number=5).skipped


def test_a_lender_deleted_in_the_admin_leaves_its_borrowers_their_rows(alice, published):
    account, first = published
    second, _ = uploaded(alice, account_id=str(account.pk))
    assert borrows(second["id"])
    before = parsed(first["id"])
    third, _ = uploaded(alice, account_id=str(account.pk))
    assert borrows(third["id"])
    client = _admin(alice)
    response = client.post(f"/admin/imports/import/{first['id']}/delete/", {"post": "yes"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not Import.objects.filter(pk=first["id"]).exists()
    assert not borrows(third["id"])
    assert [r[:-5] for r in parsed(third["id"])] == [r[:-5] for r in before]


def test_a_lender_deleted_behind_the_services_back_is_refused(alice, published):
    account, first = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    assert borrows(again["id"])
    with pytest.raises(IntegrityError), transaction.atomic():
        Import.objects.filter(pk=first["id"]).delete()
        connection.check_constraints()


def test_a_household_deleted_whole_takes_lender_and_borrowers(alice, published):
    account, _ = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    assert borrows(again["id"])
    family_id = alice.family.pk
    with transaction.atomic():
        Family.objects.get(pk=family_id).delete()
        connection.check_constraints()
    assert not Import.objects.filter(family_id=family_id).exists()


def test_another_households_rows_are_never_borrowed(alice, charlie):
    uploaded(alice, account_id=str(alice.account().pk))
    theirs, reused = uploaded(charlie, CSV, account_id=str(charlie.account().pk))
    assert not reused and not borrows(theirs["id"])


def test_rows_being_read_anew_are_not_borrowed(alice, published):
    """A borrower's lender that is being parsed again (a worker holds it, `parsing`): a new
    upload of the same file reads the file itself, never the rows about to be replaced."""
    account, first = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    assert borrows(again["id"])
    Import.objects.filter(pk=first["id"]).update(parsing=True)
    third, reused = uploaded(alice, account_id=str(account.pk))
    assert not reused and own_rows(third["id"]) == 6
    assert [r[:-5] for r in parsed(third["id"])] == [r[:-5] for r in parsed(again["id"])]


def test_a_borrowed_publish_reverts_and_publishes_again(alice, django_capture_on_commit_callbacks):
    """A borrower published with every row in the ledger wrote nothing, so its revert removes
    nothing; once the rows it repeats are gone (the lender reverted), publishing it again
    writes them from a copy of its own."""
    account = alice.account()
    content = b"date,name,amount\n2024-03-01,Rent,-1100.00\n2024-03-02,Coffee,-3.50\n"
    lender, _ = uploaded(alice, content, account_id=str(account.pk))
    publish(alice.client, lender["id"], django_capture_on_commit_callbacks)
    stored = set(Transaction.objects.filter(account=account).values_list("pk", flat=True))
    borrower, _ = uploaded(alice, content, account_id=str(account.pk))
    assert borrows(borrower["id"])
    done = publish(alice.client, borrower["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete" and borrows(borrower["id"])
    assert Import.objects.get(pk=borrower["id"]).rows_processed == 2
    undone = revert(alice.client, borrower["id"], django_capture_on_commit_callbacks)
    assert undone["status"] == "pending" and borrows(borrower["id"])
    assert counts(borrower["id"])["duplicates_count"] == 2
    assert set(Transaction.objects.filter(account=account).values_list("pk", flat=True)) == stored
    revert(alice.client, lender["id"], django_capture_on_commit_callbacks)
    assert not Transaction.objects.filter(account=account).exists()
    again = publish(alice.client, borrower["id"], django_capture_on_commit_callbacks)
    assert again["status"] == "complete"
    assert again["verification"]["readback"]["status"] == "matched"
    assert not borrows(borrower["id"]) and own_rows(borrower["id"]) == 2
    assert Transaction.objects.filter(import_id=borrower["id"]).count() == 2


def test_an_account_holding_only_the_files_rows_is_not_read_for_matches_from_elsewhere(
    alice, published
):
    """Its row counters say every row of the account is one the borrowed rows repeat: no
    transaction from elsewhere can match, and none is looked for row by row."""
    from django.test.utils import CaptureQueriesContext

    account, _ = published
    with CaptureQueriesContext(connection) as reading:
        again, _ = uploaded(alice, account_id=str(account.pk))
    assert borrows(again["id"]) and counts(again["id"])["duplicates_count"] == 4
    assert not [q for q in reading.captured_queries if '"source" IS NULL' in q["sql"]]


def test_a_row_change_that_is_refused_copies_nothing(
    alice, published, django_capture_on_commit_callbacks
):
    """An unknown row number is a 404 and a change to a published import a 409, both before
    the borrower gets rows of its own (a copy of every row for nothing)."""
    account, _ = published
    again, _ = uploaded(alice, account_id=str(account.pk))
    missing = alice.client.patch(
        f"/api/v1/imports/{again['id']}/rows/99", {"skip": True}, format="json"
    )
    assert missing.status_code == 404
    assert borrows(again["id"]) and own_rows(again["id"]) == 0
    Import.objects.filter(pk=again["id"]).update(status=Import.Status.COMPLETE)
    done = alice.client.patch(
        f"/api/v1/imports/{again['id']}/rows/2", {"skip": True}, format="json"
    )
    assert done.status_code == 409, done.content
    assert borrows(again["id"]) and own_rows(again["id"]) == 0
