"""Transfer candidates by the matching rules, on both roads: PostgreSQL's one self-join
(finance/ledger/db/pair_candidates.py) and SQLite's staged one give the same pairs."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db.models import Q

from finance.ledger.pairs import MAX_DAYS_APART
from finance.ledger.transfer_matching import _candidates
from finance.models import RejectedTransfer
from tests.factories import TransactionFactory

pytestmark = pytest.mark.django_db


def test_candidates_follow_the_matching_rules(alice):
    a, b = alice.account(), alice.account()
    euros = alice.account(currency="EUR")
    day = dt.date(2024, 5, 10)

    def leg(account, amount, days=0):
        return TransactionFactory(
            account=account, date=day + dt.timedelta(days=days), amount=amount
        )

    out = leg(a, Decimal("50"))
    inflow = leg(b, Decimal("-50"), days=1)  # the one pair
    leg(b, Decimal("-50"), days=MAX_DAYS_APART + 1)  # too far apart
    leg(a, Decimal("-50"))  # same account
    leg(euros, Decimal("-50"))  # another currency
    rejected_out, rejected_in = leg(a, Decimal("70")), leg(b, Decimal("-70"))
    RejectedTransfer.objects.create(
        family=alice.family, outflow_transaction=rejected_out, inflow_transaction=rejected_in
    )
    window = (day - dt.timedelta(days=30), day + dt.timedelta(days=30))
    pairs = _candidates(alice.family, Q(account_id=a.pk), window)
    assert [(o.pk, i.pk) for o, i in pairs] == [(out.pk, inflow.pk)]


def test_a_change_to_one_account_pairs_only_when_another_holds_rows(alice):
    """A change confined to one account looks for counterparts only when another account of
    the household has rows (a pair needs two accounts); when one does, its legs still pair."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from finance.ledger.transfer_matching import transfers_match
    from finance.models import Transfer

    a, b = alice.account(), alice.account()
    day = dt.date(2024, 5, 10)
    TransactionFactory(account=a, date=day, amount=Decimal("50"))
    with CaptureQueriesContext(connection) as alone:
        assert transfers_match(family=alice.family, account_ids=[a.pk]) == 0
    assert not [q for q in alone.captured_queries if "MIN(" in q["sql"].upper()]
    inflow = TransactionFactory(account=b, date=day, amount=Decimal("-50"))
    Transfer.objects.filter(family=alice.family).delete()  # the factory's write may have paired
    assert transfers_match(family=alice.family, account_ids=[a.pk]) == 1
    assert Transfer.objects.get(family=alice.family).inflow_transaction_id == inflow.pk
