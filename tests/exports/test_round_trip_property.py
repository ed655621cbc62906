"""Export, restore into a new household, export again: the same records, field for field (ids
and the export's own timestamp aside), for generated households. Runs on whichever database
the suite runs on (SQLite by default, PostgreSQL with DATABASE_URL): `make test` runs both."""

from __future__ import annotations

import itertools
import string

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.conftest import make_household
from tests.exports.helpers import canonical, ok, post, read_archive

pytestmark = pytest.mark.django_db
_names = itertools.count()

CURRENCIES = ("USD", "EUR", "JPY")
TYPES = ("depository", "credit_card", "investment", "loan")
text = st.text(alphabet=string.ascii_letters + ' äß€\n,"', min_size=1, max_size=12).filter(
    lambda s: s.strip()
)

households = st.fixed_dictionaries(
    {
        "accounts": st.lists(
            st.tuples(st.sampled_from(CURRENCIES), st.sampled_from(TYPES)), min_size=1, max_size=4
        ),
        "categories": st.lists(st.integers(min_value=-1, max_value=5), max_size=4),
        "tags": st.integers(min_value=0, max_value=3),
        "transactions": st.lists(
            st.fixed_dictionaries(
                {
                    "account": st.integers(min_value=0, max_value=3),
                    "day": st.integers(min_value=1, max_value=28),
                    "cents": st.integers(min_value=-50_000, max_value=50_000),
                    "name": text,
                    "notes": st.none() | text,
                    "category": st.none() | st.integers(min_value=0, max_value=3),
                    "tags": st.lists(
                        st.integers(min_value=0, max_value=2), max_size=2, unique=True
                    ),
                    "excluded": st.booleans(),
                    "mirror": st.none() | st.integers(min_value=0, max_value=3),
                }
            ),
            max_size=10,
        ),
        "decide": st.lists(st.sampled_from(["confirm", "reject", "keep"]), max_size=6),
        "buys": st.lists(
            st.tuples(st.sampled_from(["VTI", "BND"]), st.integers(min_value=1, max_value=20)),
            max_size=3,
        ),
    }
)


def _amount(cents: int, currency: str) -> str:
    if currency == "JPY":
        return str(cents)
    return f"{cents / 100:.2f}"


def build(household, spec) -> None:
    accounts = [
        post(
            household,
            "/api/v1/accounts",
            {"account": {"name": f"A{i}", "currency": c, "account_type": t}},
        )
        for i, (c, t) in enumerate(spec["accounts"])
    ]
    categories: list[dict] = []
    for i, parent in enumerate(spec["categories"]):
        fields = {"name": f"C{i}"}
        # categories nest two levels at most: only a top-level one can be a parent
        if 0 <= parent < len(categories) and categories[parent]["parent_id"] is None:
            fields["parent_id"] = categories[parent]["id"]
        categories.append(post(household, "/api/v1/categories", {"category": fields}))
    tags = [
        post(household, "/api/v1/tags", {"tag": {"name": f"T{i}"}}) for i in range(spec["tags"])
    ]
    for row in spec["transactions"]:
        account = accounts[row["account"] % len(accounts)]
        fields = {
            "account_id": account["id"],
            "date": f"2024-03-{row['day']:02d}",
            "amount": _amount(row["cents"], account["currency"]),
            "name": row["name"],
            "notes": row["notes"],
            "excluded": row["excluded"],
            "tag_ids": [tags[t]["id"] for t in row["tags"] if t < len(tags)],
        }
        if row["category"] is not None and row["category"] < len(categories):
            fields["category_id"] = categories[row["category"]]["id"]
        post(household, "/api/v1/transactions", {"transaction": fields})
        if row["mirror"] is not None and row["cents"]:  # the other leg of a transfer, maybe
            other = accounts[row["mirror"] % len(accounts)]
            fields = {
                "account_id": other["id"],
                "date": f"2024-03-{row['day']:02d}",
                "amount": _amount(-row["cents"], other["currency"]),
                "name": "other leg",
            }
            post(household, "/api/v1/transactions", {"transaction": fields})
    transfers = ok(household.client.get("/api/v1/transfers"), 200)["transfers"]
    for transfer, decision in zip(transfers, spec["decide"], strict=False):
        if decision != "keep":
            ok(household.client.post(f"/api/v1/transfers/{transfer['id']}/{decision}"), 200)
    brokers = [a for a in accounts if a["account_type"] == "investment"]
    for ticker, qty in spec["buys"] if brokers else ():
        body = {
            "account_id": brokers[0]["id"],
            "date": "2024-03-05",
            "ticker": ticker,
            "qty": qty,
            "price": "12.5",
        }
        post(household, "/api/v1/trades", {"trade": body})


def export(household, capture) -> bytes:
    with capture(execute=True):
        started = ok(household.client.post("/api/v1/exports"), 202)
    done = ok(household.client.get(f"/api/v1/exports/{started['id']}"), 200)
    response = household.client.get(done["download_url"])
    return b"".join(response.streaming_content)


@settings(
    max_examples=12,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=households)
def test_export_restore_export_gives_the_same_records(spec, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    n = next(_names)
    source, target = make_household(f"source{n}"), make_household(f"target{n}")
    build(source, spec)
    first = export(source, capture)
    upload = SimpleUploadedFile("a.zip", first, content_type="application/zip")
    with capture(execute=True):
        restore = ok(
            target.client.post("/api/v1/restores", {"file": upload}, format="multipart"), 202
        )
    done = ok(target.client.get(f"/api/v1/restores/{restore['id']}"), 200)
    assert done["status"] == "complete", (done["error"], (done["readback"] or {}).get("mismatches"))
    assert done["readback"]["status"] == "matched"
    second = export(target, capture)
    assert canonical(read_archive(second)[1]) == canonical(read_archive(first)[1])
