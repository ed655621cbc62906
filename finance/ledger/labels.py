"""The label writes of a ledger batch: tags, the household's own edits, a posted row standing
for its pending one, and transfer legs confirmed or rejected. None moves a balance (a
superseded row's deletion goes through the batch's `delete`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

from django.db.models import QuerySet
from django.utils import timezone

from finance.ledger.pairs import legs_kinds_set, legs_move_many, legs_reset, legs_unpair
from finance.models import Tag, Transaction

EDIT_BATCH = 500


class LabelWrites:
    """Mixed into `LedgerBatch` (finance/ledger/batch.py), which provides `delete`."""

    def delete(self, queryset: QuerySet[Transaction]) -> int:  # pragma: no cover - LedgerBatch's
        raise NotImplementedError

    def set_tags(self, txn: Transaction, tags: Iterable[Tag]) -> None:
        txn.tags.set(list(tags))

    def tag(self, queryset: QuerySet[Transaction], tag: Tag) -> int:
        """Add the tag to every row that lacks it; returns how many gained it."""
        through = Transaction.tags.through
        ids = list(queryset.values_list("pk", flat=True))
        already = set(_tagged(ids, tag))
        links = [through(transaction_id=pk, tag=tag) for pk in ids if pk not in already]
        through.objects.bulk_create(links, batch_size=1000)
        Transaction.objects.filter(pk__in=[link.transaction_id for link in links]).update(
            updated_at=timezone.now()
        )
        return len(links)

    def supersede(self, pairs: Sequence[tuple[Transaction, Transaction]]) -> None:
        """For each (old, new) pair, `new` stands for `old` from now on (a provider's posted
        version of a pending row): old's tags join new's, a transfer old is a leg of moves to
        new (with its kind) when new is a leg of none, and old is deleted. Field edits are the
        caller's (`update`). A few queries for all the pairs, not a few per pair."""
        if not pairs:
            return
        through = Transaction.tags.through
        new_of = {old.pk: new.pk for old, new in pairs}
        have = set(
            through.objects.filter(transaction_id__in=new_of.values()).values_list(
                "transaction_id", "tag_id"
            )
        )
        moving = {
            (new_of[old_id], tag_id)
            for old_id, tag_id in through.objects.filter(transaction_id__in=new_of).values_list(
                "transaction_id", "tag_id"
            )
        } - have
        through.objects.bulk_create(
            [through(transaction_id=txn_id, tag_id=tag_id) for txn_id, tag_id in moving]
        )
        legs_move_many(new_of.items())
        self.delete(Transaction.objects.filter(pk__in=list(new_of)))

    def untag(self, queryset: QuerySet[Transaction], tag: Tag) -> int:
        """Take the tag off every row that has it; returns how many lost it."""
        through = Transaction.tags.through
        having = _tagged(list(queryset.values_list("pk", flat=True)), tag)
        if having:
            through.objects.filter(tag=tag, transaction_id__in=having).delete()
            Transaction.objects.filter(pk__in=having).update(updated_at=timezone.now())
        return len(having)

    def mark_edited(self, queryset: QuerySet[Transaction], fields: Sequence[str]) -> None:
        """The household set these fields of these rows itself (the admin's bulk actions): no
        rule changes them again, and a re-sync leaves them alone."""
        groups: dict[tuple[str, ...], list[uuid.UUID]] = {}
        for pk, edited in queryset.values_list("pk", "edited_fields"):
            edited = list(edited or ())
            new = (*edited, *(f for f in fields if f not in edited))
            if len(new) != len(edited):
                groups.setdefault(new, []).append(pk)
        for new, ids in groups.items():
            for i in range(0, len(ids), EDIT_BATCH):
                Transaction.objects.filter(pk__in=ids[i : i + EDIT_BATCH]).update(
                    edited_fields=list(new)
                )

    # -- pairs ------------------------------------------------------------------------------
    def pair(self, inflow: Transaction, outflow: Transaction) -> None:
        """The legs of a confirmed transfer take the kinds it gives them."""
        legs_kinds_set(inflow.pk, outflow.pk, inflow.account.account_type)

    def unpair(self, transaction_ids: Iterable[uuid.UUID]) -> None:
        """The household said these legs are not a transfer: standard again."""
        legs_unpair(transaction_ids)

    def legs_reset(self, transaction_ids: Iterable[uuid.UUID]) -> None:
        """These legs lost their transfer (the other leg went): plain again."""
        legs_reset(transaction_ids)


def _tagged(ids: list[uuid.UUID], tag: Tag) -> list[uuid.UUID]:
    """Which of these transactions carry the tag."""
    links = Transaction.tags.through.objects.filter(tag=tag, transaction_id__in=ids)
    return list(links.values_list("transaction_id", flat=True))
