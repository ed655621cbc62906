"""The database's transfer candidates (finance/ledger/db/pair_candidates.py: one self-join,
the same statement on both databases) against the matching rules written out by hand, for
generated households: same pairs, same order. On SQLite the statement works on the amounts'
canonical texts (sign flipped in text), so amounts that differ only in sign, in a digit's
place (1 and 10) or below a cent are drawn on purpose."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal

import pytest
from django.db.models import Q
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finance.ledger.pairs import MAX_DAYS_APART
from finance.ledger.transfer_matching import Leg, _candidates, _pair_order
from finance.models import RejectedTransfer, Transaction, Transfer
from tests.conftest import make_household
from tests.factories import TransactionFactory

pytestmark = pytest.mark.django_db
_names = itertools.count()
DAY = dt.date(2024, 3, 1)
AMOUNTS = [Decimal(v) for v in ("1", "10", "0.01", "0.0001")]

households = st.fixed_dictionaries(
    {
        "accounts": st.sampled_from([("USD", "USD"), ("USD", "USD", "EUR"), ("USD", "EUR", "USD")]),
        "legs": st.lists(
            st.tuples(
                st.integers(min_value=0, max_value=2),  # account
                st.integers(min_value=0, max_value=7),  # day
                st.sampled_from(AMOUNTS),
                st.booleans(),  # sign
            ),
            min_size=6,
            max_size=20,
        ),
        "rejected": st.lists(st.tuples(st.integers(0, 19), st.integers(0, 19)), max_size=3),
        "paired": st.lists(st.tuples(st.integers(0, 19), st.integers(0, 19)), max_size=2),
        "window": st.tuples(st.integers(0, 7), st.integers(0, 7)),
    }
)


def _by_hand(family, touched_account, window):
    """Every (outflow, inflow) pair the rules allow with a leg of `touched_account` dated in
    `window`, in `_candidates`' order."""
    in_transfer = set(Transfer.objects.values_list("inflow_transaction_id", flat=True)) | set(
        Transfer.objects.values_list("outflow_transaction_id", flat=True)
    )
    rejected = set(
        RejectedTransfer.objects.values_list("outflow_transaction_id", "inflow_transaction_id")
    )
    legs = [
        Leg(*leg)
        for leg in Transaction.objects.filter(family=family).values_list(
            "id", "account_id", "account__account_type", "date", "amount", "currency", "created_at"
        )
        if leg[0] not in in_transfer and leg[4] != 0
    ]

    def touched(leg):
        return leg[1] == touched_account and window[0] <= leg[3] <= window[1]

    pairs = [
        (o, i)
        for o in legs
        for i in legs
        if o[4] > 0
        and i[4] == -o[4]
        and i[5] == o[5]
        and i[1] != o[1]
        and abs((i[3] - o[3]).days) <= MAX_DAYS_APART
        and (touched(o) or touched(i))
        and (o[0], i[0]) not in rejected
    ]
    return sorted(pairs, key=_pair_order)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(households)
def test_the_database_pairs_as_the_rules_say(db, spec):
    hh = make_household(f"pairs{next(_names)}")
    accounts = [hh.account(currency=currency) for currency in spec["accounts"]]
    rows = [
        TransactionFactory(
            account=accounts[a % len(accounts)],
            currency=accounts[a % len(accounts)].currency,
            date=DAY + dt.timedelta(days=day),
            amount=amount if positive else -amount,
        )
        for a, day, amount, positive in spec["legs"]
    ]
    for o, i in spec["rejected"]:
        if o < len(rows) and i < len(rows) and o != i:
            RejectedTransfer.objects.get_or_create(
                family=hh.family, outflow_transaction=rows[o], inflow_transaction=rows[i]
            )
    used = set()
    for o, i in spec["paired"]:  # legs already in a transfer are no one's candidates
        if o < len(rows) and i < len(rows) and len({o, i} | used) == len(used) + 2:
            used |= {o, i}
            Transfer.objects.create(
                family=hh.family, outflow_transaction=rows[o], inflow_transaction=rows[i]
            )
    low, high = sorted(spec["window"])
    window = (DAY + dt.timedelta(days=low), DAY + dt.timedelta(days=high))
    got = _candidates(hh.family, Q(account_id=accounts[0].pk), window)
    want = _by_hand(hh.family, accounts[0].pk, window)
    assert [(tuple(o), tuple(i)) for o, i in got] == want
    assert all(isinstance(o.amount, Decimal) and isinstance(o.date, dt.date) for o, _ in got)
