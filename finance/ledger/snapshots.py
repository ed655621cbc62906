"""Provider snapshot digests: the sync's own bookkeeping on ledger rows."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.db.models import Case, CharField, Value, When

from finance.models import Transaction

CHUNK = 500


def snapshot_hashes_record(pairs: Sequence[tuple[uuid.UUID, str]]) -> int:
    """Record the digest of the snapshot each row already holds, (row id, digest) pairs: one
    UPDATE per 500 rows. Nothing the household sees changes (no balance, no `updated_at`), so
    no batch has anything to derive."""
    done = 0
    for i in range(0, len(pairs), CHUNK):
        part = pairs[i : i + CHUNK]
        digest = Case(
            *(When(pk=pk, then=Value(value)) for pk, value in part),
            output_field=CharField(),
        )
        done += Transaction.objects.filter(pk__in=[pk for pk, _ in part]).update(
            provider_snapshot_hash=digest
        )
    return done
