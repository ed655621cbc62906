"""Finding and creating securities: shared reference data by ticker (and MIC), manual ones
private to a household."""

from __future__ import annotations

import re
import uuid

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet

from finance.models import Family
from trades.models import Security

TICKER_RE = re.compile(r"^[A-Z0-9][A-Z0-9.\-^=/:_ ]{0,31}$")
MIC_RE = re.compile(r"^[A-Z0-9]{4}$")
INVALID_TICKER = "must be a ticker of at most 32 letters, digits or . - ^ = / : _, optionally |MIC"
INVALID_MIC = "the exchange after | must be a 4-character MIC"


def securities_visible(*, family: Family) -> QuerySet[Security]:
    """Shared reference securities and the household's own manual ones; never another's."""
    return Security.objects.filter(Q(family__isnull=True) | Q(family=family))


def security_visible_get(*, family: Family, security_id: uuid.UUID) -> Security | None:
    return securities_visible(family=family).filter(pk=security_id).first()


def ticker_parse(raw: str) -> tuple[str, str]:
    """`VTI` or `VTI|ARCX` -> (ticker, mic). Raises ValueError with a message for the user."""
    ticker, _, mic = raw.strip().upper().partition("|")
    ticker, mic = ticker.strip(), mic.strip()
    if not TICKER_RE.match(ticker):
        raise ValueError(INVALID_TICKER)
    if mic and not MIC_RE.match(mic):
        raise ValueError(INVALID_MIC)
    return ticker, mic


def manual_ticker_parse(raw: str) -> str:
    value = " ".join(raw.split())
    if not value or len(value) > 32 or "\x00" in value:
        raise ValueError("must be 1 to 32 characters")
    return value.upper()


def security_for_ticker(
    *, ticker: str, mic: str = "", name: str = "", currency: str | None = None
) -> Security:
    """The shared security of a listed ticker, created on first use."""
    lookup = {"family__isnull": True, "ticker": ticker, "exchange_mic": mic}
    found = Security.objects.filter(**lookup).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return Security.objects.create(
                family=None,
                ticker=ticker,
                exchange_mic=mic,
                name=name or ticker,
                currency=currency,
                manual=False,
            )
    except IntegrityError:
        return Security.objects.get(**lookup)


def security_manual(*, family: Family, ticker: str, name: str = "", currency: str | None = None):
    """The household's manual security of this ticker, created on first use."""
    lookup = {"family": family, "ticker": ticker}
    found = Security.objects.filter(**lookup).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return Security.objects.create(
                family=family, ticker=ticker, name=name or ticker, currency=currency, manual=True
            )
    except IntegrityError:
        return Security.objects.get(**lookup)


def security_manual_by_name(*, family: Family, name: str, currency: str | None = None) -> Security:
    """A holding without a ticker: the household's manual security of that name."""
    clean = " ".join(name.split())[:255] or "Unnamed security"
    found = Security.objects.filter(family=family, manual=True, name=clean).first()
    if found is not None:
        return found
    return security_manual(family=family, ticker=clean[:32].upper(), name=clean, currency=currency)
