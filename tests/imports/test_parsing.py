"""Pure parsing: every number and date format, examples and hypothesis properties."""

from __future__ import annotations

import csv
import datetime as dt
import io
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from core.bounds import MIN_DATE, max_date
from imports.parsing.csvfile import CsvError, normalize_header, open_csv
from imports.parsing.dates import DATE_FORMATS, DateError, parse_date
from imports.parsing.numbers import NUMBER_FORMATS, NumberError, parse_amount

# (raw, format) -> expected; None means "invalid row", never a guess.
NUMBER_CASES = {
    "1,234.56": {
        "-110.7": "-110.7",
        "1.000": "1.000",
        "(12.50)": "-12.50",
        "1,234.56": "1234.56",
        "1234": "1234",
        "12,34": None,
        "1.234,56": None,
        "$1,000.00": "1000.00",
    },
    "1.234,56": {
        "-110.7": None,
        "1.000": "1000",
        "(12.50)": None,
        "(12,50)": "-12.50",
        "1.234,56": "1234.56",
        "-45,20": "-45.20",
        "1,234.56": None,
        "12.50-": None,
    },
    "1 234,56": {
        "-110.7": None,
        "1.000": None,
        "(12.50)": None,
        "1 234,56": "1234.56",
        "1\u00a0234,56": "1234.56",
        "-3,5": "-3.5",
        "(12,50)": "-12.50",
    },
    "1,234": {
        "-110.7": None,
        "1.000": None,
        "(12.50)": None,
        "1,234": "1234",
        "-5": "-5",
        "12,34": None,
    },
}


@pytest.mark.parametrize(
    "fmt,raw,expected",
    [(fmt, raw, exp) for fmt, cases in NUMBER_CASES.items() for raw, exp in cases.items()],
)
def test_number_formats(fmt, raw, expected):
    if expected is None:
        with pytest.raises(NumberError):
            parse_amount(raw, fmt)
    else:
        assert parse_amount(raw, fmt) == Decimal(expected)


def _render(value: Decimal, fmt: str) -> str:
    """How a bank writes `value` in `fmt` (grouped thousands, the format's decimal mark)."""
    negative = value < 0
    places = 0 if NUMBER_FORMATS[fmt].decimal is None else 2
    text = f"{abs(value):,.{places}f}"  # 1,234.56
    whole, _, frac = text.partition(".")
    sep = NUMBER_FORMATS[fmt].thousands[0]
    whole = whole.replace(",", sep)
    out = f"{whole}{NUMBER_FORMATS[fmt].decimal}{frac}" if places else whole
    return f"-{out}" if negative else out


@given(
    st.decimals(min_value=Decimal("-99999999999"), max_value=Decimal("99999999999"), places=2),
    st.sampled_from(list(NUMBER_FORMATS)),
)
def test_number_roundtrip_every_format(value, fmt):
    if NUMBER_FORMATS[fmt].decimal is None:
        value = value.quantize(Decimal(1))
    assert parse_amount(_render(value, fmt), fmt) == value


@given(st.text(max_size=30), st.sampled_from(list(NUMBER_FORMATS)))
def test_number_parser_never_crashes(raw, fmt):
    try:
        value = parse_amount(raw, fmt)
    except NumberError:
        return
    assert value.is_finite()
    assert abs(value) < Decimal("1e15")


# One "today" for the strategies (built at collection) and the parses they feed, so a run that
# crosses midnight checks the same bound it generated against.
TODAY = dt.date.today()


@given(
    st.dates(min_value=dt.date(1970, 1, 1), max_value=max_date(TODAY)),
    st.sampled_from(DATE_FORMATS),
)
def test_date_roundtrip_every_format(value, fmt):
    assert parse_date(value.strftime(fmt), fmt, TODAY) == value


@given(st.dates(min_value=max_date(TODAY) + dt.timedelta(days=1)), st.sampled_from(DATE_FORMATS))
def test_dates_past_five_years_ahead_are_row_errors(value, fmt):
    if "%y" in fmt and value.year >= 2070:
        return  # two-digit years pivot back to the 1900s
    with pytest.raises(DateError, match="five years"):
        parse_date(value.strftime(fmt), fmt, TODAY)


@given(st.text(max_size=20), st.sampled_from(DATE_FORMATS))
def test_date_parser_never_crashes(raw, fmt):
    try:
        value = parse_date(raw, fmt, TODAY)
    except DateError:
        return
    assert MIN_DATE <= value <= max_date(TODAY)


@pytest.mark.parametrize(
    "raw,fmt",
    [
        ("2024-13-01", "%Y-%m-%d"),
        ("31/02/2024", "%d/%m/%Y"),
        ("2024011", "%Y%m%d"),
        ("01/02", "%d/%m/%Y"),
        ("1 Foo 2024", "%d %b %Y"),
        ("2024-01-01 extra", "%Y-%m-%d"),
        ("01.01.1800", "%d.%m.%Y"),
    ],
)
def test_bad_dates_are_errors(raw, fmt):
    with pytest.raises(DateError):
        parse_date(raw, fmt)


def test_short_day_and_month_names():
    assert parse_date("5 Jan 2024", "%d %b %Y") == dt.date(2024, 1, 5)
    assert parse_date("1/5/2024", "%m/%d/%Y") == dt.date(2024, 1, 5)


# Control and line/paragraph separators are not text a bank writes inside a cell.
cell = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(cell, min_size=3, max_size=3), min_size=1, max_size=15),
    st.sampled_from([",", ";", "\t"]),
    st.sampled_from(["utf-8", "utf-8-sig", "cp1252"]),
)
def test_csv_roundtrip_any_cells(rows, sep, encoding):
    """Whatever the cells, a file written by a CSV writer reads back to the same cells."""
    try:
        "".join(c for r in rows for c in r).encode(encoding)
    except UnicodeEncodeError:
        encoding = "utf-8"
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=sep)
    writer.writerow(["date", "name", "amount"])
    writer.writerows(rows)
    data = buffer.getvalue().encode(encoding)
    if encoding == "cp1252":
        # A 1252 file whose bytes also form valid UTF-8 is read as UTF-8 (documented; real
        # Western text almost never does, random characters sometimes do).
        try:
            data.decode("utf-8")
            assume(False)
        except UnicodeDecodeError:
            pass
        # 1252 wins only where it is plausible: at most a fifth of the bytes above 0x7F (more
        # is what Cyrillic or Greek code pages look like, and then the guesser decides).
        assume(sum(b >= 0x80 for b in data) <= len(data) * 0.2)
    reader = open_csv(io.BytesIO(data), separator=sep)
    assert reader.headers == ["date", "name", "amount"]
    expected = [r for r in rows if any(c.strip() for c in r)]
    assert [cells for _, cells in reader.rows] == expected


def test_separator_detection_and_rows_to_skip():
    content = b"Bank export\nAccount 123\nDate;Name;Amount\n01.01.2024;A;1,00\n"
    reader = open_csv(io.BytesIO(content), rows_to_skip=2)
    assert reader.separator == ";"
    assert reader.headers == ["Date", "Name", "Amount"]
    assert list(reader.rows) == [(4, ["01.01.2024", "A", "1,00"])]


def test_duplicate_headers_rejected():
    with pytest.raises(CsvError):
        open_csv(io.BytesIO(b"Amount*,amount,name\n1,2,3\n"))


def test_header_matching_ignores_case_spaces_and_stars():
    assert normalize_header(" Booking Date* ") == normalize_header("bookingdate")


def test_cyrillic_windows_1251_export_is_detected():
    text = "Дата;Описание;Сумма\n" + "".join(
        f"0{d}.01.2024;Перевод денежных средств магазину Пятёрочка;-1 234,56\n" for d in range(1, 9)
    )
    reader = open_csv(io.BytesIO(text.encode("cp1251")))
    assert reader.headers == ["Дата", "Описание", "Сумма"]
    assert next(reader.rows)[1][1] == "Перевод денежных средств магазину Пятёрочка"


@given(
    st.from_regex(r"-?[0-9]{1,13}([.,][0-9]{1,4})?", fullmatch=True),
    st.sampled_from(list(NUMBER_FORMATS)),
)
def test_plain_number_shortcut_gives_what_the_general_rules_give(raw, fmt):
    """parse_amount takes a plain number straight to Decimal: the same value, sign and
    places as the general rules (-0.00 is 0.00), and the same refusals."""
    from imports.parsing.numbers import _parse_general

    try:
        expected = str(_parse_general(raw, NUMBER_FORMATS[fmt]))
    except NumberError:
        with pytest.raises(NumberError):
            parse_amount(raw, fmt)
        return
    assert str(parse_amount(raw, fmt)) == expected
