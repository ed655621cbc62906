"""Charts drawn by the service itself as inline SVG: nothing is loaded from outside."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from html import escape

from django.utils.safestring import SafeString, mark_safe

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


def _fmt(value: Decimal | float) -> str:
    return f"{Decimal(value):,.0f}" if abs(Decimal(value)) >= 1000 else f"{Decimal(value):,.2f}"


def line_chart(
    points: list[tuple[dt.date, Decimal]],
    *,
    currency: str = "",
    width: int = 640,
    height: int = 220,
    label: str = "balance",
) -> SafeString:
    """A line over time with its min, max, first and last values labelled."""
    if not points:
        return mark_safe('<p class="pf-empty">No data yet.</p>')
    pad_l, pad_r, pad_t, pad_b = 70, 16, 16, 28
    values = [float(v) for _, v in points]
    lo, hi = min(values), max(values)
    if hi == lo:
        hi, lo = hi + 1, lo - 1
    span_days = max(1, (points[-1][0] - points[0][0]).days)
    inner_w, inner_h = width - pad_l - pad_r, height - pad_t - pad_b

    def xy(day: dt.date, value: float) -> tuple[float, float]:
        x = pad_l + inner_w * ((day - points[0][0]).days / span_days)
        y = pad_t + inner_h * (1 - (value - lo) / (hi - lo))
        return round(x, 1), round(y, 1)

    coords = " ".join(f"{x},{y}" for x, y in (xy(d, float(v)) for d, v in points))
    zero = ""
    if lo < 0 < hi:
        _, zy = xy(points[0][0], 0.0)
        zero = (
            f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{zy}" y2="{zy}" '
            'stroke="#9ca3af" stroke-dasharray="4 3"/>'
        )
    last_x, last_y = xy(points[-1][0], values[-1])
    svg = f"""<svg class="pf-chart" role="img" aria-label="{escape(label)} chart"
 viewBox="0 0 {width} {height}" width="100%" preserveAspectRatio="xMidYMid meet"
 xmlns="http://www.w3.org/2000/svg">
<rect x="{pad_l}" y="{pad_t}" width="{inner_w}" height="{inner_h}" fill="none" stroke="#e5e7eb"/>
{zero}
<polyline fill="none" stroke="#2563eb" stroke-width="2" points="{coords}"/>
<circle cx="{last_x}" cy="{last_y}" r="3.5" fill="#2563eb"/>
<text x="{pad_l - 6}" y="{pad_t + 10}" text-anchor="end" font-size="11" fill="#6b7280">{_fmt(hi)}</text>
<text x="{pad_l - 6}" y="{pad_t + inner_h}" text-anchor="end" font-size="11" fill="#6b7280">{_fmt(lo)}</text>
<text x="{pad_l}" y="{height - 8}" font-size="11" fill="#6b7280">{points[0][0].isoformat()}</text>
<text x="{width - pad_r}" y="{height - 8}" text-anchor="end" font-size="11" fill="#6b7280">{points[-1][0].isoformat()}</text>
<text x="{width - pad_r - 4}" y="{pad_t + 14}" text-anchor="end" font-size="12" font-weight="600"
 fill="#111827">{escape(currency)} {_fmt(values[-1])}</text>
</svg>"""
    return mark_safe(svg)  # noqa: S308 - every interpolated text is escaped or numeric


def bar_chart(
    rows: list[tuple[str, Decimal]],
    *,
    currency: str = "",
    width: int = 640,
    label: str = "spending",
) -> SafeString:
    """Horizontal bars, largest first."""
    if not rows:
        return mark_safe('<p class="pf-empty">Nothing spent yet this month.</p>')
    rows = sorted(rows, key=lambda r: r[1], reverse=True)[:10]
    bar_h, gap, pad_l, pad_r = 22, 8, 150, 110
    height = len(rows) * (bar_h + gap) + gap
    top = float(rows[0][1]) or 1.0
    parts = []
    for i, (name, value) in enumerate(rows):
        y = gap + i * (bar_h + gap)
        w = max(2.0, (width - pad_l - pad_r) * float(value) / top)
        color = PALETTE[i % len(PALETTE)]
        parts.append(
            f'<text x="{pad_l - 8}" y="{y + 15}" text-anchor="end" font-size="12" '
            f'fill="#374151">{escape(name[:22])}</text>'
            f'<rect x="{pad_l}" y="{y}" width="{w:.1f}" height="{bar_h}" rx="3" fill="{color}"/>'
            f'<text x="{pad_l + w + 6:.1f}" y="{y + 15}" font-size="12" fill="#111827">'
            f"{escape(currency)} {_fmt(value)}</text>"
        )
    svg = (
        f'<svg class="pf-chart" role="img" aria-label="{escape(label)} chart" '
        f'viewBox="0 0 {width} {height}" width="100%" xmlns="http://www.w3.org/2000/svg">'
        + "".join(parts)
        + "</svg>"
    )
    return mark_safe(svg)  # noqa: S308
