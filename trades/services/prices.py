"""Security prices: a household's price points (from its trades, its providers' holdings and
`POST /api/v1/security_prices`) and the accounts whose value a changed point moves.

A price point changes the value of every investment or crypto account of the household that
trades the security, from the point's day on: each such change touches those accounts through
the caller's ledger batch, so their series and balances are derived in the same database
transaction, and their holdings' `price` and `market_value` follow."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from decimal import Decimal

from django.db.models import Q

from core.bounds import MAX_QUANTITY
from core.errors import ValidationFailed
from finance.ledger import LedgerBatch, ledger_batch, merge_account_dates
from finance.models import Account, Family
from trades.models import Security, SecurityPrice, Trade
from trades.services.holdings import holdings_recompute_from_trades
from trades.services.securities import security_visible_get

PRICE_QUANT = Decimal("0.00000001")
NO_SECURITY = "does not exist in this household"
CURRENCY_REQUIRED = "is required: accounts in {currencies} trade this security"
CURRENCY_UNUSABLE = (
    "must be the currency of an account that trades or holds this security ({currencies}); "
    "prices are not converted between currencies"
)
PRICED_KINDS = (Trade.Kind.BUY, Trade.Kind.SELL)

Key = tuple[uuid.UUID, dt.date]


def _match(keys: Iterable[Key]) -> Q:
    match = Q()
    for security_id, day in keys:
        match |= Q(security_id=security_id, date=day)
    return match


def trade_prices_refresh(
    *, family_id: uuid.UUID, keys: Iterable[Key | tuple[None, dt.date]]
) -> set[Key]:
    """Make the `trade` price points of these (security, day) pairs the price of that day's
    last buy or sell of the household (one per currency), and none where no trade priced it.
    Returns the pairs whose points changed."""
    wanted = {(s, d) for s, d in keys if s is not None}
    if not wanted:
        return set()
    match = _match(wanted)
    last: dict[tuple[uuid.UUID, dt.date, str], Decimal] = {}
    for sid, day, currency, price in (
        Trade.objects.filter(match, family_id=family_id, kind__in=PRICED_KINDS, price__gt=0)
        .order_by("date", "created_at", "id")
        .values_list("security_id", "date", "currency", "price")
    ):
        last[(sid, day, currency)] = price
    stored = {
        (p.security_id, p.date, p.currency): p
        for p in SecurityPrice.objects.filter(
            match, family_id=family_id, source=SecurityPrice.Source.TRADE
        )
    }
    gone = [p.pk for key, p in stored.items() if key not in last]
    changed = {(sid, day) for (sid, day, _), p in stored.items() if p.pk in gone}
    if gone:
        SecurityPrice.objects.filter(pk__in=gone).delete()
    for (sid, day, currency), price in last.items():
        point = stored.get((sid, day, currency))
        if point is None or point.price != price:
            changed.add((sid, day))
            _point_set(
                family_id=family_id,
                security_id=sid,
                date=day,
                currency=currency,
                source=SecurityPrice.Source.TRADE,
                price=price,
            )
    return changed


def prices_changed(batch: LedgerBatch, *, family_id: uuid.UUID, keys: Iterable[Key]) -> set:
    """The household's price points of these (security, day) pairs changed: touch every
    account that trades one of the securities from the earliest such day on, and bring its
    holdings' prices up to date. Returns the ids of those accounts."""
    firsts: dict[uuid.UUID, dt.date] = {}
    for security_id, day in keys:
        if security_id is not None and (security_id not in firsts or day < firsts[security_id]):
            firsts[security_id] = day
    if not firsts:
        return set()
    dates: dict[uuid.UUID, dt.date | None] = {}
    for account_id, security_id in (
        Trade.objects.filter(family_id=family_id, security_id__in=list(firsts))
        .order_by()
        .values_list("account_id", "security_id")
        .distinct()
    ):
        merge_account_dates(dates, account_id, firsts[security_id])
    for account in Account.objects.filter(pk__in=list(dates)).order_by("pk"):
        holdings_recompute_from_trades(account=account)
    for account_id, day in dates.items():
        batch.touch(family_id, account_id, day)
    return set(dates)


def _holder_currencies(family: Family, security: Security) -> list[str]:
    """The currencies of the household's accounts that trade or hold the security."""
    trading = Account.objects.filter(family=family).filter(
        Q(trades__security=security) | Q(holdings__security=security)
    )
    return sorted(set(trading.values_list("currency", flat=True)))


def security_price_set(
    *,
    family: Family,
    security_id: uuid.UUID,
    date: dt.date,
    price: Decimal,
    currency: str | None = None,
) -> tuple[SecurityPrice, bool]:
    """Record the household's price of a security on a day (replacing its own earlier price
    for that day and currency). Returns the point and whether it is new."""
    security = security_visible_get(family=family, security_id=security_id)
    if security is None:
        raise ValidationFailed([f"security_id: {NO_SECURITY}"])
    currencies = _holder_currencies(family, security)
    if currency is None:
        if len(currencies) > 1:
            raise ValidationFailed(
                ["currency: " + CURRENCY_REQUIRED.format(currencies=", ".join(currencies))]
            )
        currency = currencies[0] if currencies else (security.currency or family.currency)
    elif currencies and currency not in currencies:
        raise ValidationFailed(
            ["currency: " + CURRENCY_UNUSABLE.format(currencies=", ".join(currencies))]
        )
    with ledger_batch(family=family) as batch:
        stored = _point_set(
            family_id=family.pk,
            security_id=security.pk,
            date=date,
            currency=currency,
            source=SecurityPrice.Source.API,
            price=price,
        )
        if stored is None:  # the same price again: nothing moves
            point = SecurityPrice.objects.get(
                family=family, security=security, date=date, currency=currency, source="api"
            )
            return point, False
        prices_changed(batch, family_id=family.pk, keys=[(security.pk, date)])
    return stored[0], stored[1]


def provider_prices_record(
    batch: LedgerBatch,
    *,
    account: Account,
    prices: dict[uuid.UUID, tuple[Decimal, str]],
    as_of: dt.date,
) -> None:
    """A provider reported these prices (security -> (price, currency)) for the account's
    holdings on `as_of`: the household's `provider` price points of that day."""
    keys: list[Key] = []
    # the day's provider points, read in one query: a re-sync at unchanged prices writes nothing
    stored = {
        (security_id, currency): price
        for security_id, currency, price in SecurityPrice.objects.filter(
            family_id=account.family_id,
            security_id__in=list(prices),
            date=as_of,
            source=SecurityPrice.Source.PROVIDER,
        ).values_list("security_id", "currency", "price")
    }
    for security_id, (raw, currency) in prices.items():
        if raw <= 0 or raw.copy_abs() > MAX_QUANTITY:
            continue  # not a price the ledger can store: left out, the holding keeps its row
        price = raw.quantize(PRICE_QUANT)
        if stored.get((security_id, currency)) == price:
            continue
        if _point_set(
            family_id=account.family_id,
            security_id=security_id,
            date=as_of,
            currency=currency,
            source=SecurityPrice.Source.PROVIDER,
            price=price,
        ):
            keys.append((security_id, as_of))
    prices_changed(batch, family_id=account.family_id, keys=keys)


def _point_set(
    *,
    family_id: uuid.UUID,
    security_id: uuid.UUID,
    date: dt.date,
    currency: str,
    source: str,
    price: Decimal,
) -> tuple[SecurityPrice, bool] | None:
    """Store one price point; returns (point, created), or None when it was there already
    with this price."""
    point, created = SecurityPrice.objects.get_or_create(
        family_id=family_id,
        security_id=security_id,
        date=date,
        currency=currency,
        source=source,
        defaults={"price": price},
    )
    if created:
        return point, True
    if point.price == price:
        return None
    point.price = price
    point.save(update_fields=["price", "updated_at"])
    return point, False
