"""Charts drawn by the service itself as inline SVG (nothing is loaded from outside): axes with
rounded ticks and a grid, a tooltip on every point or bar (SVG <title>), and each chart drawn
twice, for a wide and a narrow screen (the stylesheet shows one), so labels keep a readable
size on a phone."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from html import escape

from django.utils.formats import date_format
from django.utils.safestring import SafeString, mark_safe

from finance.templatetags.finance_admin import money_text

PALETTE = [
    "#2563eb",
    "#16a34a",
    "#dc2626",
    "#d97706",
    "#7c3aed",
    "#0891b2",
    "#db2777",
    "#65a30d",
    "#9333ea",
    "#ea580c",
]
INK, QUIET, GRID = "#374151", "#4b5563", "#e5e7eb"
SIZES = {"wide": (960, 280), "narrow": (360, 240)}
FONT = 12


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]; a flat series gets a band around its value."""
    if hi == lo:
        pad = abs(hi) * 0.05 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(1, count - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    value = start
    while value < hi + step * 0.999:
        ticks.append(round(value, 10))
        value += step
    return ticks


def short_number(value: float) -> str:
    """Axis labels: "12k", "1.5M", "950"."""
    size = abs(value)
    if size >= 1_000_000:
        return f"{value / 1_000_000:,.1f}M".replace(".0M", "M")
    if size >= 10_000:
        return f"{value / 1000:,.0f}k"
    if size >= 1000:
        return f"{value / 1000:,.1f}k".replace(".0k", "k")
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"


def _both(draw, *args, **kwargs) -> SafeString:  # type: ignore[no-untyped-def]
    wide = draw(*args, size="wide", **kwargs)
    narrow = draw(*args, size="narrow", **kwargs)
    return mark_safe(  # noqa: S308 - every interpolated text is escaped or numeric
        f'<div class="pf-chart-box"><div class="pf-chart-wide">{wide}</div>'
        f'<div class="pf-chart-narrow">{narrow}</div></div>'
    )


def _svg(width: int, height: int, label: str, body: str) -> str:
    return (
        f'<svg class="pf-chart" role="img" aria-label="{escape(label)}" viewBox="0 0 {width} '
        f'{height}" width="100%" xmlns="http://www.w3.org/2000/svg" font-size="{FONT}" '
        f'font-family="system-ui, sans-serif">{body}</svg>'
    )


def _y_axis(ticks: list[float], y, left: int, right: int) -> str:  # type: ignore[no-untyped-def]
    parts = []
    for tick in ticks:
        ty = y(tick)
        parts.append(
            f'<line x1="{left}" x2="{right}" y1="{ty}" y2="{ty}" stroke="{GRID}"/>'
            f'<text x="{left - 6}" y="{ty + 4}" text-anchor="end" fill="{QUIET}">'
            f"{escape(short_number(tick))}</text>"
        )
    return "".join(parts)


def line_chart(
    points: list[tuple[dt.date, Decimal]], *, currency: str = "", label: str = "balance"
) -> SafeString:
    """A line over time: y ticks and grid, a month tick on the x axis, a tooltip per day."""
    if not points:
        return mark_safe('<p class="pf-empty">No data yet.</p>')
    return _both(_line, points, currency=currency, label=label)


def _line(points: list[tuple[dt.date, Decimal]], *, currency: str, label: str, size: str) -> str:
    width, height = SIZES[size]
    pad_l, pad_r, pad_t, pad_b = 48, 12, 12, 26
    values = [float(v) for _, v in points]
    ticks = nice_ticks(min(values), max(values))
    lo, hi = ticks[0], ticks[-1]
    first, last = points[0][0], points[-1][0]
    span = max(1, (last - first).days)
    inner_w, inner_h = width - pad_l - pad_r, height - pad_t - pad_b

    def x(day: dt.date) -> float:
        return round(pad_l + inner_w * ((day - first).days / span), 1)

    def y(value: float) -> float:
        return round(pad_t + inner_h * (1 - (value - lo) / (hi - lo)), 1)

    parts = [_y_axis(ticks, y, pad_l, width - pad_r)]
    months = _month_starts(first, last)
    every = max(1, math.ceil(len(months) / (9 if size == "wide" else 4)))
    for month in months[::every]:
        mx = x(month)
        parts.append(
            f'<line x1="{mx}" x2="{mx}" y1="{pad_t}" y2="{pad_t + inner_h}" stroke="{GRID}"/>'
            f'<text x="{mx}" y="{height - 8}" text-anchor="middle" fill="{QUIET}">'
            f"{escape(date_format(month, 'M'))}</text>"
        )
    coords = " ".join(f"{x(d)},{y(float(v))}" for d, v in points)
    parts.append(f'<polyline fill="none" stroke="#2563eb" stroke-width="2" points="{coords}"/>')
    step = max(1.0, inner_w / max(1, len(points)))
    for day, value in points:  # an invisible band per day carries its tooltip
        parts.append(
            f'<rect class="pf-hit" x="{x(day) - step / 2:.1f}" y="{pad_t}" width="{step:.1f}" '
            f'height="{inner_h}" fill="transparent"><title>{escape(date_format(day))}: '
            f"{escape(money_text(value, currency))}</title></rect>"
        )
    parts.append(
        f'<circle cx="{x(last)}" cy="{y(values[-1])}" r="4" fill="#2563eb">'
        f"<title>{escape(date_format(last))}: {escape(money_text(points[-1][1], currency))}"
        "</title></circle>"
    )
    return _svg(width, height, f"{label} chart", "".join(parts))


def _month_starts(first: dt.date, last: dt.date) -> list[dt.date]:
    out, day = [], first.replace(day=1)
    while day <= last:
        if day >= first:
            out.append(day)
        day = (day + dt.timedelta(days=32)).replace(day=1)
    return out


def bar_chart(
    rows: list[tuple[str, Decimal]], *, currency: str = "", label: str = "spending"
) -> SafeString:
    """Horizontal bars, largest first, as HTML (text at the page's size on any screen)."""
    if not rows:
        return mark_safe('<p class="pf-empty">Nothing spent yet this month.</p>')
    rows = sorted(rows, key=lambda r: r[1], reverse=True)[:10]
    top = float(rows[0][1]) or 1.0
    items = []
    for i, (name, value) in enumerate(rows):
        share = max(1.0, 100 * float(value) / top)
        text = money_text(value, currency)
        items.append(
            f'<li title="{escape(name)}: {escape(text)}"><span class="pf-bar-name">'
            f"{escape(name)}</span>"
            f'<span class="pf-bar-track"><span class="pf-bar" style="width:{share:.1f}%;'
            f'background:{PALETTE[i % len(PALETTE)]}"></span></span>'
            f'<span class="pf-bar-value">{escape(text)}</span></li>'
        )
    return mark_safe(  # noqa: S308
        f'<ul class="pf-bars" aria-label="{escape(label)}">{"".join(items)}</ul>'
    )


def cash_flow_chart(
    months: list[tuple[dt.date, Decimal, Decimal]], *, currency: str = ""
) -> SafeString:
    """Money in and money out per month, side by side, with a tooltip per bar."""
    if not any(income or expense for _, income, expense in months):
        return mark_safe('<p class="pf-empty">No income or spending yet.</p>')
    legend = (
        '<p class="pf-legend"><span class="pf-key pf-key-in"></span>Money in '
        '<span class="pf-key pf-key-out"></span>Money out</p>'
    )
    return mark_safe(_both(_cash_flow, months, currency=currency) + legend)  # noqa: S308


def _cash_flow(months: list[tuple[dt.date, Decimal, Decimal]], *, currency: str, size: str) -> str:
    width, height = SIZES[size]
    pad_l, pad_r, pad_t, pad_b = 48, 8, 12, 26
    ticks = nice_ticks(0.0, max(float(max(i, e)) for _, i, e in months))
    hi = ticks[-1] or 1.0
    inner_w, inner_h = width - pad_l - pad_r, height - pad_t - pad_b

    def y(value: float) -> float:
        return round(pad_t + inner_h * (1 - value / hi), 1)

    parts = [_y_axis(ticks, y, pad_l, width - pad_r)]
    slot = inner_w / len(months)
    bar = slot * 0.36
    for i, (month, income, expense) in enumerate(months):
        left = pad_l + i * slot + slot * 0.12
        name = date_format(month, "YEAR_MONTH_FORMAT")
        for j, (value, color, what) in enumerate(
            ((income, "#16a34a", "money in"), (expense, "#dc2626", "money out"))
        ):
            top = y(float(value))
            parts.append(
                f'<rect x="{left + j * bar:.1f}" y="{top}" width="{bar:.1f}" '
                f'height="{max(0.0, pad_t + inner_h - top):.1f}" fill="{color}" rx="2">'
                f"<title>{escape(name)}, {what}: {escape(money_text(value, currency))}</title>"
                "</rect>"
            )
        if size == "wide" or i % 2 == 0:
            parts.append(
                f'<text x="{left + bar:.1f}" y="{height - 8}" text-anchor="middle" '
                f'fill="{QUIET}">{escape(date_format(month, "M"))}</text>'
            )
    return _svg(width, height, "cash flow chart", "".join(parts))
