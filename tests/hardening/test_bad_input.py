"""Bad input of every kind answers 4xx in the error shape, never a 500."""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_error

URL = "/api/v1/transactions"


def payload(account, **fields):
    return {
        "transaction": {
            "account_id": str(account.id),
            "date": "2024-01-02",
            "amount": "1",
            "name": "x",
            **fields,
        }
    }


@pytest.mark.django_db
class TestBadBodies:
    def test_invalid_utf8(self, alice):
        r = alice.client.post(URL, b'{"transaction": "\xff\xfe"}', content_type="application/json")
        assert_error(r, 400, "bad_request")

    def test_nul_bytes(self, alice):
        r = alice.client.post(URL, payload(alice.account(), name="bad\x00name"), format="json")
        assert_error(r, 422, "validation_failed")
        r = alice.client.get(URL, {"search": "a\x00b"})
        assert_error(r, 422, "validation_failed")

    @pytest.mark.parametrize("amount", ["1e400", "-1e400", "NaN", "Infinity", 10**30, "1" * 400])
    def test_huge_or_non_finite_numbers(self, alice, amount):
        r = alice.client.post(URL, payload(alice.account(), amount=amount), format="json")
        assert_error(r, 422, "validation_failed")

    def test_json_nan_literal(self, alice):
        body = json.dumps(payload(alice.account())).replace('"1"', "NaN")
        r = alice.client.post(URL, body, content_type="application/json")
        assert_error(r, 400, "bad_request")

    @pytest.mark.parametrize(
        "date",
        [
            "0000-01-01",
            "2024-02-30",
            "99999-01-01",
            "2024-13-01",
            "",
            None,
            20240101,
            "2024-01-01T00:00:00",
        ],
    )
    def test_dates_out_of_range_or_malformed(self, alice, date):
        r = alice.client.post(URL, payload(alice.account(), date=date), format="json")
        assert_error(r, 422, "validation_failed")

    @pytest.mark.parametrize("value", [[], "string", 5, None, {"a": 1}])
    def test_wrong_types_at_the_root_key(self, alice, value):
        r = alice.client.post(URL, {"transaction": value}, format="json")
        assert_error(r, 422, "validation_failed")

    def test_deeply_nested(self, alice):
        nested = "[" * 5000 + "]" * 5000
        r = alice.client.post(
            URL, '{"transaction": ' + nested + "}", content_type="application/json"
        )
        assert r.status_code in (400, 422)
        assert r.json()["error"] in ("bad_request", "validation_failed")

    @pytest.mark.parametrize(
        "params",
        [
            {"start_date": "2024-02-30"},
            {"min_amount": "1e999"},
            {"page": "-1"},
            {"per_page": "0"},
            {"account_ids[]": "nope"},
            {"page": "9" * 50},
        ],
    )
    def test_bad_filters(self, alice, params):
        assert_error(alice.client.get(URL, params), 422, "validation_failed")

    def test_very_long_strings(self, alice):
        r = alice.client.post(URL, payload(alice.account(), name="n" * 10_000), format="json")
        assert_error(r, 422, "validation_failed")
