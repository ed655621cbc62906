"""Exchange rates: the system's (from the European Central Bank, `family` NULL) and a
household's own (`family` set), which the household's conversions prefer."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q

from core.exact import ExactDecimalField
from finance.models.household import Family

# 14 integer and 10 decimal digits: a rate below 10^12 with at most 10 decimal places fits.
RATE = {"max_digits": 24, "decimal_places": 10}


class ExchangeRate(models.Model):
    """1 `from_currency` = `rate` `to_currency` on `date`."""

    SOURCE_HOUSEHOLD = "household"  # a household's own rate
    SOURCE_ECB = "ecb"  # a system rate from the European Central Bank
    SOURCE_MANUAL = "manual"  # a system rate an operator entered in the admin
    SOURCES = (SOURCE_HOUSEHOLD, SOURCE_ECB, SOURCE_MANUAL)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(
        Family,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="exchange_rates",
        db_index=False,  # the household constraint's index leads with it
        help_text="Empty for a system rate; set for a household's own rate.",
    )
    date = models.DateField()
    from_currency = models.CharField(max_length=3)
    to_currency = models.CharField(max_length=3)
    rate = ExactDecimalField(**RATE)
    # Where a system rate came from; a household's own rate says "household".
    source = models.CharField(max_length=16, default=SOURCE_HOUSEHOLD, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-date", "-created_at", "-id"]
        constraints = [
            # NULLs are distinct in a plain unique constraint, so system rates get their own.
            models.UniqueConstraint(
                fields=["from_currency", "to_currency", "date"],
                condition=Q(family__isnull=True),
                name="exchange_rate_system_one_per_day",
            ),
            models.UniqueConstraint(
                fields=["family", "from_currency", "to_currency", "date"],
                condition=Q(family__isnull=False),
                name="exchange_rate_household_one_per_day",
            ),
        ]
        indexes = [models.Index(fields=["-date", "-created_at", "-id"], name="exchange_rate_order")]

    def __str__(self) -> str:
        return f"{self.date} 1 {self.from_currency} = {self.rate:f} {self.to_currency}"

    @property
    def is_system(self) -> bool:
        return self.family_id is None
