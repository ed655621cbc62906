"""The European Central Bank's reference-rate files over the provider HTTP seam.

    rates = EcbRates()                       # FX_BASE_URL, e.g. https://www.ecb.europa.eu/stats/eurofxref
    for day in rates.days(EcbRates.NINETY_DAYS): ...

`days()` downloads the file (the seam reads whole bodies, with its timeouts, status mapping and
network retries) and parses it as a stream (providers/ecb/parsing.py)."""

from __future__ import annotations

import io
from collections.abc import Iterator

from django.conf import settings

from providers.ecb.parsing import EcbDay, ParseNotes, ecb_days
from providers.http import ProviderHttp


class EcbRates:
    LABEL = "The European Central Bank"
    DAILY = "eurofxref-daily.xml"
    NINETY_DAYS = "eurofxref-hist-90d.xml"
    HISTORY = "eurofxref-hist.xml"
    FILES = (DAILY, NINETY_DAYS, HISTORY)
    NETWORK_RETRIES = 2

    def __init__(self, *, base_url: str | None = None, http: ProviderHttp | None = None) -> None:
        self.base_url = (base_url or settings.FX_BASE_URL).rstrip("/")
        self.http = http or ProviderHttp(label=self.LABEL)
        self.notes = ParseNotes()

    def __repr__(self) -> str:
        return f"EcbRates(base_url={self.base_url!r})"

    @property
    def requests_made(self) -> int:
        return self.http.requests_made

    def url(self, file: str) -> str:
        if file not in self.FILES:
            raise ValueError(f"unknown ECB file {file!r}")
        return f"{self.base_url}/{file}"

    def days(self, file: str) -> Iterator[EcbDay]:
        """Every day of one file; skipped entries are counted in `self.notes`."""
        response = self.http.request("GET", self.url(file), network_retries=self.NETWORK_RETRIES)
        return ecb_days(io.BytesIO(response.content), notes=self.notes)
