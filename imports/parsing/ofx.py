"""OFX and QFX: OFX 1.x (SGML, leaf elements without end tags), OFX 2.x (XML) and Quicken's
QFX (OFX 1.x with Intuit extensions), bank and credit-card statements.

One tolerant streaming reader serves both: real OFX 2 files are often not well-formed XML
(unclosed leaves, stray end tags), and a tree parser would hold the whole file. It expands
nothing but the five predefined entities and character references, and refuses any DTD,
entity declaration or other `<!` markup: an external entity or an entity bomb cannot be read."""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import BinaryIO

from imports.parsing.csvfile import detect_encoding
from imports.parsing.statements import (
    MAX_ID,
    MAX_NOTES,
    Entry,
    FormatError,
    Statement,
    StatementFile,
    ValueProblem,
    clean_text,
    plain_decimal,
    ymd,
)

HEADERS = ["TRNTYPE", "DTPOSTED", "DTUSER", "TRNAMT", "FITID", "CHECKNUM", "NAME", "MEMO"]
# Aggregates (elements that hold elements) of the messages read here; an unknown element with
# no value is taken as an aggregate too, closed at the latest by its parent's end tag.
AGGREGATES = frozenset(
    """OFX SIGNONMSGSRSV1 SONRS STATUS FI BANKMSGSRSV1 STMTTRNRS STMTRS BANKACCTFROM
    BANKACCTTO BANKTRANLIST STMTTRN PAYEE CURRENCY ORIGCURRENCY LEDGERBAL AVAILBAL BALLIST BAL
    CREDITCARDMSGSRSV1 CCSTMTTRNRS CCSTMTRS CCACCTFROM CCACCTTO INVSTMTMSGSRSV1 INVSTMTTRNRS
    INVSTMTRS INVACCTFROM INVTRANLIST INVBANKTRAN INVPOSLIST INVBAL SECLISTMSGSRSV1 SECLIST
    MKTGINFO EXTDPAYEE""".split()
)
STATEMENTS = {"STMTRS": "bank", "CCSTMTRS": "credit_card"}
TAG = re.compile(r"<(/?)([A-Za-z][\w.\-]*)\s*>")
_OTHER = re.compile(r"<(\?.*?\?>|!--.*?-->|!\[CDATA\[(.*?)\]\]>)", re.S)
_ENTITY = re.compile(r"&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|amp|lt|gt|quot|apos|nbsp);")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "nbsp": " "}
CHUNK = 1 << 20
MAX_MARKUP = 1 << 20
HEAD_BYTES = 64 * 1024
TRNTYPES = {
    "CHECK": "Check",
    "DEP": "Deposit",
    "ATM": "ATM",
    "POS": "Point of sale",
    "XFER": "Transfer",
    "PAYMENT": "Payment",
    "CASH": "Cash",
    "DIRECTDEP": "Direct deposit",
    "DIRECTDEBIT": "Direct debit",
    "REPEATPMT": "Repeating payment",
    "INT": "Interest",
    "DIV": "Dividend",
    "FEE": "Fee",
    "SRVCHG": "Service charge",
    "CREDIT": "Credit",
    "DEBIT": "Debit",
}


def _entity(match: re.Match[str]) -> str:
    name = match[1]
    if name.startswith("#"):
        code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
        return chr(code) if 0 < code < 0x110000 else ""
    return _NAMED[name]


def unescape(text: str) -> str:
    return _ENTITY.sub(_entity, text) if "&" in text else text


def _encoding(head: bytes, stream: BinaryIO) -> tuple[str, bool]:
    """(Python codec, is XML) from the OFX header; an undeclared or legacy charset is checked
    against the content (many "USASCII/1252" files are really UTF-8)."""
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if start.startswith(b"<?xml"):
        declared = re.match(rb"<\?xml[^>]*encoding=[\"']([A-Za-z0-9._\-]+)[\"']", start)
        name = declared[1].decode() if declared else "utf-8"
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            raise FormatError(1, f"the XML declaration names an unknown encoding {name!r}")
        return ("utf-8-sig" if codec == "utf-8" else codec), True
    if not (start.startswith(b"OFXHEADER") or start.upper().startswith(b"<OFX>")):
        raise FormatError(1, "not an OFX file: it starts with neither an OFX header nor <OFX>")
    header = dict(re.findall(rb"([A-Z]+):([^\s<]*)", start.split(b"<", 1)[0]))
    if header.get(b"ENCODING", b"").upper() in (b"UTF-8", b"UNICODE"):
        return "utf-8-sig", False
    return detect_encoding(stream), False


class _Tokens:
    """(name, closing, text after the tag, line) for each tag of the text, streamed."""

    def __init__(self, text: io.TextIOBase) -> None:
        self.text = text
        self.line = 1
        self.pushed: list[tuple[str, bool, str, int]] = []

    def push(self, token: tuple[str, bool, str, int]) -> None:
        self.pushed.append(token)

    def __iter__(self) -> Iterator[tuple[str, bool, str, int]]:
        while self.pushed:
            yield self.pushed.pop()
        for token in self._scan():
            yield token
            while self.pushed:
                yield self.pushed.pop()

    def _scan(self) -> Iterator[tuple[str, bool, str, int]]:
        buf, eof, pos = "", False, 0
        pending: tuple[str, bool, int] | None = None
        text_parts: list[str] = []
        while True:
            at = buf.find("<", pos)
            if at < 0 or (not eof and len(buf) - at < 256 and ">" not in buf[at:]):
                text_parts.append(buf[pos:] if at < 0 else buf[pos:at])
                self.line += text_parts[-1].count("\n")
                buf, pos = ("" if at < 0 else buf[at:]), 0
                if eof:
                    break
                chunk = self.text.read(CHUNK)
                eof = not chunk
                buf += chunk
                continue
            text_parts.append(buf[pos:at])
            self.line += text_parts[-1].count("\n")
            match = TAG.match(buf, at)
            if match is None:
                if buf.startswith("<!", at) and not buf.startswith(("<!--", "<![CDATA["), at):
                    raise FormatError(self.line, "DTD and entity declarations are refused")
                other = _OTHER.match(buf, at)
                if other is None:
                    long_markup = buf.startswith(("<?", "<!"), at)
                    if long_markup and not eof and len(buf) - at < MAX_MARKUP:
                        more = self.text.read(CHUNK)
                        eof = not more
                        buf, pos = buf[at:] + more, 0
                        continue
                    snippet = buf[at : at + 40].split("\n")[0]
                    raise FormatError(self.line, f"unreadable markup {snippet!r}")
                if other[2] is not None:  # CDATA: its content is text
                    text_parts.append(other[2].replace("&", "&amp;"))
                self.line += other[0].count("\n")
                pos = other.end()
                continue
            if pending is not None:
                yield pending[0], pending[1], "".join(text_parts), pending[2]
            text_parts = []
            pending = (match[2].upper(), match[1] == "/", self.line)
            pos = match.end()
        if pending is not None:
            yield pending[0], pending[1], "".join(text_parts), pending[2]


def read_ofx(
    stream: BinaryIO, *, default_currency: str, inflows_positive: bool = True
) -> StatementFile:
    stream.seek(0)
    head = stream.read(HEAD_BYTES)
    encoding, _ = _encoding(head, stream)
    stream.seek(0)
    text = io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline="")
    items = _read(_Tokens(text), default_currency, inflows_positive)
    return StatementFile(headers=list(HEADERS), encoding=encoding, items=items)


def _read(
    tokens: _Tokens, default_currency: str, inflows_positive: bool
) -> Iterator[Entry | Statement]:
    stack: list[tuple[str, int]] = []
    statement: Statement | None = None
    fields: dict[str, str] | None = None
    txn_line = 0
    seen_ofx = False
    count = 0
    iterator = iter(tokens)
    for name, closing, after, line in iterator:
        if closing:
            if not any(open_name == name for open_name, _ in stack):
                continue  # a leaf's optional end tag, or an end tag of nothing
            while stack:
                open_name, _ = stack.pop()
                if open_name == "STMTTRN" and fields is not None and statement is not None:
                    yield _entry(fields, txn_line, statement, default_currency, inflows_positive)
                    fields = None
                elif open_name in STATEMENTS and statement is not None:
                    statement.last_line = line
                    yield statement
                    statement = None
                if open_name == name:
                    break
            continue
        if not seen_ofx:
            if name != "OFX":
                raise FormatError(line, f"not an OFX file: <{name}> before <OFX>")
            seen_ofx = True
        value = after.strip()
        if not value:
            nxt = next(iterator, None)
            if nxt is not None and nxt[0] == name and nxt[1]:
                value = ""  # <MEMO></MEMO>: an empty leaf
            else:
                if nxt is not None:
                    tokens.push(nxt)
                if name in AGGREGATES or name not in _LEAVES:
                    stack.append((name, line))
                    if name in STATEMENTS:
                        count += 1
                        statement = Statement(number=count, line=line, kind=STATEMENTS[name])
                    elif name == "STMTTRN" and statement is not None:
                        fields, txn_line = {}, line
                    continue
        value = unescape(value)
        parent = stack[-1][0] if stack else ""
        if fields is not None:
            fields.setdefault(name, value)
            if parent != "STMTTRN":
                fields.setdefault(f"{parent}.{name}", value)
        elif statement is not None:
            _statement_leaf(statement, parent, name, value, line)
    if stack:
        name, opened = stack[-1]
        raise FormatError(
            tokens.line, f"the file ends inside <{name}> opened at line {opened}: truncated?"
        )
    if not seen_ofx:
        raise FormatError(1, "not an OFX file: no <OFX> element")
    if count == 0:
        raise FormatError(None, "the file has no bank or credit card statement (STMTRS, CCSTMTRS)")


# Leaf elements that may come empty (a value that is only spaces).
_LEAVES = frozenset(
    """NAME MEMO CHECKNUM REFNUM PAYEEID SIC SRVRTID CORRECTFITID CORRECTACTION INV401KSOURCE
    MESSAGE ADDR1 ADDR2 ADDR3 CITY STATE POSTALCODE COUNTRY PHONE INTU.BID INTU.USERID""".split()
)


def _statement_leaf(statement: Statement, parent: str, name: str, value: str, line: int) -> None:
    if name == "CURDEF" and parent in STATEMENTS:
        statement.currency = value.upper()[:3]
    elif name == "ACCTID" and parent in ("BANKACCTFROM", "CCACCTFROM"):
        statement.account = clean_text(value)
    elif name == "ACCTTYPE" and parent == "BANKACCTFROM":
        statement.kind = "credit_card" if value.upper() == "CREDITLINE" else "bank"
    elif parent == "LEDGERBAL" and name == "BALAMT":
        try:
            statement.closing_balance = plain_decimal(value, comma=True)
        except ValueProblem as exc:
            raise FormatError(line, f"LEDGERBAL BALAMT {value!r} {exc}") from None
    elif parent == "LEDGERBAL" and name == "DTASOF":
        try:
            statement.closing_date = ymd(value)
        except ValueProblem as exc:
            raise FormatError(line, f"LEDGERBAL DTASOF {value!r} {exc}") from None


def _entry(
    fields: dict[str, str],
    line: int,
    statement: Statement,
    default_currency: str,
    inflows_positive: bool,
) -> Entry:
    if not statement.account:
        raise FormatError(line, "a transaction comes before its statement's account (ACCTID)")
    statement.entries += 1
    raw = [fields.get(h, "") for h in HEADERS]
    entry = Entry(line=line, statement=statement, raw=raw)
    posted = fields.get("DTPOSTED", "")
    try:
        entry.date = ymd(posted)
    except ValueProblem as exc:
        entry.problem("DTPOSTED", posted, str(exc) if posted else "is missing")
    amount_text = fields.get("TRNAMT", "")
    try:
        amount = plain_decimal(amount_text, comma=True)
        # OFX amounts are the holder's view (a debit is negative); the ledger's is the opposite.
        entry.amount = -amount if inflows_positive else amount
        entry.amount += Decimal(0)  # -0 -> 0
    except ValueProblem as exc:
        entry.problem("TRNAMT", amount_text, str(exc) if amount_text else "is missing")
    currency = fields.get("CURRENCY.CURSYM") or statement.currency or default_currency
    entry.currency = currency.upper()[:3]
    memo = clean_text(fields.get("MEMO"), MAX_NOTES)
    name = clean_text(fields.get("NAME") or fields.get("PAYEE.NAME"))
    kind = fields.get("TRNTYPE", "").upper()
    check = clean_text(fields.get("CHECKNUM"))
    entry.name = name or memo[:255] or (f"Check {check}" if check else TRNTYPES.get(kind, "OFX"))
    entry.notes = memo if memo and memo != entry.name else ""
    entry.upstream_id = clean_text(fields.get("FITID"), MAX_ID)
    return entry
