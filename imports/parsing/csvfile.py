"""Reading a bank's CSV export as a stream: encoding, separator, junk lines, header matching."""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from charset_normalizer import from_bytes

SEPARATORS = {",": ",", ";": ";", "\t": "\t", "tab": "\t", "comma": ",", "semicolon": ";"}
SAMPLE_BYTES = 256 * 1024
_WESTERN = {"cp1252", "latin_1", "iso8859_15", "iso8859_1"}
MAX_FIELD_CHARS = 100_000

csv.field_size_limit(MAX_FIELD_CHARS)


class CsvError(ValueError):
    """The file as a whole cannot be read (no header, duplicate headers, not text)."""


def normalize_header(name: str) -> str:
    """Header names match ignoring case, spaces and `*` (banks mark required columns with it)."""
    return re.sub(r"[\s*]+", "", name).casefold()


def detect_encoding(stream: BinaryIO) -> str:
    """`utf-8-sig` when the whole file is UTF-8 (with or without BOM), else the best guess of
    charset-normalizer over the start of the file, else Windows-1252 (it decodes any byte)."""
    stream.seek(0)
    head = stream.read(SAMPLE_BYTES)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    decoder = codecs.getincrementaldecoder("utf-8")()
    chunk = head
    try:
        while chunk:
            decoder.decode(chunk)
            chunk = stream.read(1024 * 1024)
        decoder.decode(b"", final=True)
        return "utf-8-sig"
    except UnicodeDecodeError:
        pass
    finally:
        stream.seek(0)
    # Text with few non-ASCII bytes that Windows-1252 decodes is Western text (banks' legacy
    # exports): statistical guessers are unreliable on it (a few accented names are not enough
    # evidence), so it wins; CJK and Cyrillic exports have far more high bytes.
    high = sum(1 for b in head if b >= 0x80)
    if high <= len(head) * 0.2 and _decodes(head, "cp1252"):
        return "cp1252"
    results = from_bytes(head)
    candidates = [match.encoding for match in results]
    if not candidates or set(candidates) & _WESTERN:
        return "cp1252"
    best = results.best()
    try:
        name = codecs.lookup(best.encoding).name if best else "cp1252"
    except LookupError:
        return "cp1252"
    return "cp1252" if name.startswith(("utf-16", "utf-32")) else name


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def sniff_separator(lines: list[str]) -> str:
    """The separator that splits the sample lines most consistently into several columns."""
    best, best_score = ",", -1.0
    for sep in (",", ";", "\t"):
        counts = [len(row) for row in csv.reader(lines, delimiter=sep) if any(row)]
        if not counts:
            continue
        common = max(set(counts), key=counts.count)
        if common < 2:
            continue
        score = counts.count(common) / len(counts) * 10 + common / 100
        if score > best_score:
            best, best_score = sep, score
    return best


@dataclass
class CsvReader:
    """Opened CSV: its encoding, separator and headers, and an iterator of (line_no, cells)."""

    encoding: str
    separator: str
    headers: list[str]
    rows: Iterator[tuple[int, list[str]]]


def open_csv(stream: BinaryIO, *, separator: str | None = None, rows_to_skip: int = 0) -> CsvReader:
    """Open `stream` (binary, seekable). Row numbers are the file's line numbers (1-based)."""
    encoding = detect_encoding(stream)
    text = io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline="")
    if separator is None:
        sample = text.read(64 * 1024)
        text.seek(0)
        lines = sample.splitlines()[rows_to_skip : rows_to_skip + 50]
        separator = sniff_separator(lines)
    for _ in range(rows_to_skip):
        text.readline()
    reader = csv.reader(text, delimiter=separator)
    line_no = rows_to_skip
    headers: list[str] | None = None
    try:
        for headers in reader:
            line_no = rows_to_skip + reader.line_num
            if any(cell.strip() for cell in headers):
                break
        else:
            headers = None
    except csv.Error as exc:
        raise CsvError(f"the file is not readable as CSV: {exc}") from None
    if not headers:
        raise CsvError("the file has no header row")
    headers = [cell.strip().replace("\x00", "") for cell in headers]
    seen: dict[str, str] = {}
    for name in headers:
        key = normalize_header(name)
        if key and key in seen:
            raise CsvError(f"duplicate column {name!r} (same as {seen[key]!r})")
        seen[key] = name

    def rows() -> Iterator[tuple[int, list[str]]]:
        base = line_no - reader.line_num
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield base + reader.line_num, [f"\x00{exc}"]
                continue
            if any(cell.strip() for cell in cells):
                yield base + reader.line_num, [cell.replace("\x00", "") for cell in cells]

    return CsvReader(encoding=encoding, separator=separator, headers=headers, rows=rows())


def find_column(headers: list[str], label: str) -> int | None:
    key = normalize_header(label)
    for index, name in enumerate(headers):
        if normalize_header(name) == key:
            return index
    return None
