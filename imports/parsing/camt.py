"""CAMT.053 (ISO 20022 bank-to-customer statement), versions camt.053.001.02 to .001.08 (later
versions share the elements read here and are accepted too).

Streamed with lxml's iterparse: each entry is read when its end tag arrives, then cleared with
the siblings before it, so memory stays bounded for any number of entries. The parser never
loads a DTD, resolves no entity and reaches no network; a document that carries a DTD at all is
refused (a statement never needs one), which also refuses external entities and entity bombs.

Signs: `CdtDbtInd` CRDT is money in (negative in the ledger), DBIT money out (positive). A
reversal (`RvslInd`) is booked in the direction its indicator gives. A batch entry whose
transaction details each carry an amount adding up to the entry becomes one row per detail;
otherwise the entry is one row."""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any, BinaryIO

from lxml import etree

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

HEADERS = [
    "NtryRef",
    "AcctSvcrRef",
    "BookgDt",
    "ValDt",
    "Amt",
    "Ccy",
    "CdtDbtInd",
    "Sts",
    "BkTxCd",
    "Counterparty",
    "RmtInf",
    "EndToEndId",
    "AddtlInf",
]
_NAMESPACE = re.compile(r"camt\.(\d{3})\.001\.(\d{2})")
_TAGS = ("{*}Document", "{*}Stmt", "{*}Acct", "{*}Bal", "{*}Ntry")
OPENING = ("OPBD", "PRCD")
CLOSING = "CLBD"


def _local(el: Any) -> str:
    return el.tag.rpartition("}")[2] if isinstance(el.tag, str) else ""


Flat = dict[str, str]
# Repeated elements whose texts are all kept (joined by a space).
_REPEATED = frozenset({"RmtInf/Ustrd", "AddtlTxInf"})


def _flatten(el: Any, prefix: str, out: Flat, details: list[Any] | None) -> Flat:
    """Every text below `el` by its path of local names (`BookgDt/Dt`, `Amt@Ccy` for the
    attribute): one walk, then plain lookups (namespace-wildcard searches cost far more).
    Transaction details are collected into `details` instead, each read on its own."""
    for child in el:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        path = prefix + tag[tag.rfind("}") + 1 :]
        if len(child):
            if details is not None and path == "NtryDtls/TxDtls":
                details.append(child)
            else:
                _flatten(child, path + "/", out, details)
            continue
        text = (child.text or "").strip()
        if path in out:
            if path in _REPEATED and text:
                out[path] = f"{out[path]} {text}".strip()
        else:
            out[path] = text
        currency = child.get("Ccy")
        if currency:
            out.setdefault(path + "@Ccy", currency)
    return out


def _text(flat: Flat, *paths: str) -> str:
    """The first of `paths` that has a text."""
    for path in paths:
        value = flat.get(path)
        if value:
            return value
    return ""


def read_camt053(stream: BinaryIO, *, default_currency: str) -> StatementFile:
    stream.seek(0)
    result = StatementFile(headers=list(HEADERS), encoding="utf-8", items=iter(()))
    result.items = _read(stream, result, default_currency)
    return result


def _read(stream: BinaryIO, result: StatementFile, default_currency: str) -> Iterator[Any]:
    context = etree.iterparse(
        stream,
        events=("start", "end"),
        tag=_TAGS,
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    statement: Statement | None = None
    count = 0
    checked = False
    try:
        for event, el in context:
            if not checked:
                _check_document(el, result)
                checked = True
            name = _local(el)
            parent = el.getparent()
            in_statement = parent is not None and _local(parent) == "Stmt"
            if name == "Stmt":
                if event == "start":
                    count += 1
                    statement = Statement(number=count, line=el.sourceline or 0, kind="bank")
                    continue
                if statement is not None:
                    statement.last_line = el.sourceline or statement.line
                    yield statement
                statement = None
                _release(el)
            elif event == "end" and statement is not None and in_statement:
                if name == "Acct":
                    # The statement's own id comes before its account (and is freed with it).
                    statement.reference = clean_text(parent.findtext("{*}Id"))
                    account = _flatten(el, "", {}, None)
                    statement.account = clean_text(_text(account, "Id/IBAN", "Id/Othr/Id"))
                    statement.currency = _text(account, "Ccy").upper()[:3]
                elif name == "Bal":
                    _balance(_flatten(el, "", {}, None), el.sourceline, statement)
                elif name == "Ntry":
                    yield from _entries(el, statement, default_currency)
                _release(el)
    except etree.XMLSyntaxError as exc:
        error = exc.error_log.last_error if exc.error_log else None
        line = getattr(error, "line", None) or exc.lineno or None
        message = getattr(error, "message", None) or exc.msg or str(exc)
        raise FormatError(line, f"not well-formed XML: {message}") from None
    root = context.root
    if root is not None and not checked:
        _check_document(root, result)
    if count == 0:
        raise FormatError(None, "the file has no statement (Document/BkToCstmrStmt/Stmt)")


def _check_document(el: Any, result: StatementFile) -> None:
    tree = el.getroottree()
    info = tree.docinfo
    root = tree.getroot()
    if info.internalDTD is not None or info.externalDTD is not None or info.doctype:
        raise FormatError(
            root.sourceline,
            "the DOCTYPE (DTD) before this root element is refused: a CAMT statement never "
            "needs one, and its entities are not read",
        )
    result.encoding = (info.encoding or "utf-8").lower()
    namespace = root.tag.partition("}")[0].lstrip("{") if root.tag.startswith("{") else ""
    match = _NAMESPACE.search(namespace)
    if _local(root) != "Document" or match is None:
        raise FormatError(
            root.sourceline, f"not a CAMT file: the root element is {root.tag!r}, not a Document"
        )
    if match[1] != "053":
        raise FormatError(root.sourceline, f"a camt.{match[1]} message, not a camt.053 statement")


def _release(el: Any) -> None:
    """Free what was read: the element's content and the siblings before it."""
    el.clear(keep_tail=False)
    parent = el.getparent()
    if parent is not None:
        while el.getprevious() is not None:
            del parent[0]


def _signed(amount: Decimal, indicator: str) -> Decimal:
    return -amount if indicator == "DBIT" else amount


def _balance(el: Flat, line: int | None, statement: Statement) -> None:
    code = _text(el, "Tp/CdOrPrtry/Cd", "Tp/CdOrPrtry/Prtry").upper()
    if code not in (*OPENING, CLOSING):
        return
    amount_text = _text(el, "Amt")
    try:
        amount = _signed(plain_decimal(amount_text), _text(el, "CdtDbtInd").upper())
        day_text = _text(el, "Dt/Dt", "Dt/DtTm")
        day = ymd(day_text) if day_text else None
    except ValueProblem as exc:
        raise FormatError(line, f"balance {code}: {exc}") from None
    if code == CLOSING:
        statement.closing_balance, statement.closing_date = amount, day
    elif statement.opening_balance is None or code == "OPBD":
        statement.opening_balance, statement.opening_date = amount, day


_PARTIES = {
    credit: [
        f"RltdPties/{w}/{p}"
        for w in (("Dbtr", "UltmtDbtr") if credit else ("Cdtr", "UltmtCdtr"))
        for p in ("Nm", "Pty/Nm")
    ]
    for credit in (True, False)
}


def _party(detail: Flat, credit: bool) -> str:
    return clean_text(_text(detail, *_PARTIES[credit]))


def _remittance(detail: Flat) -> str:
    parts = [detail.get("RmtInf/Ustrd", ""), detail.get("RmtInf/Strd/CdtrRefInf/Ref", "")]
    return clean_text(" ".join(p for p in parts if p), MAX_NOTES)


def _entries(el: Any, statement: Statement, default_currency: str) -> Iterator[Entry]:
    if not statement.account:
        raise FormatError(el.sourceline, "an entry comes before its statement's account (Acct)")
    line = el.sourceline or 0
    elements: list[Any] = []
    flat = _flatten(el, "", {}, elements)
    details = [(d, _flatten(d, "", {}, None)) for d in elements]
    status = _text(flat, "Sts/Cd", "Sts").upper()
    indicator = _text(flat, "CdtDbtInd").upper()
    currency = (flat.get("Amt@Ccy") or statement.currency or default_currency).upper()[:3]
    booked = _text(flat, "BookgDt/Dt", "BookgDt/DtTm", "ValDt/Dt", "ValDt/DtTm")
    entry_id = clean_text(_text(flat, "AcctSvcrRef", "NtryRef"), MAX_ID)
    amount_text = _text(flat, "Amt")
    base = {
        "NtryRef": _text(flat, "NtryRef"),
        "AcctSvcrRef": _text(flat, "AcctSvcrRef"),
        "BookgDt": _text(flat, "BookgDt/Dt", "BookgDt/DtTm"),
        "ValDt": _text(flat, "ValDt/Dt", "ValDt/DtTm"),
        "Amt": amount_text,
        "Ccy": currency,
        "CdtDbtInd": indicator,
        "Sts": status,
        "BkTxCd": _text(flat, "BkTxCd/Prtry/Cd", "BkTxCd/Domn/Fmly/SubFmlyCd"),
        "AddtlInf": clean_text(_text(flat, "AddtlNtryInf"), MAX_NOTES),
    }
    parts = _split(details, amount_text, indicator, currency) if len(details) > 1 else None
    if parts is None:
        first = details[0][1] if details else None
        statement.entries += 1
        yield _entry(line, statement, base, first, entry_id, booked, len(details))
        return
    for number, (detail_el, detail, detail_amount, detail_indicator) in enumerate(parts, start=1):
        statement.entries += 1
        fields = {**base, "Amt": detail_amount, "CdtDbtInd": detail_indicator}
        own = clean_text(_text(detail, "Refs/AcctSvcrRef"), MAX_ID)
        upstream = f"{entry_id}/{number}" if entry_id else own
        yield _entry(detail_el.sourceline or line, statement, fields, detail, upstream, booked, 1)


def _split(
    details: list[tuple[Any, Flat]], amount_text: str, indicator: str, currency: str
) -> list[tuple[Any, Flat, str, str]] | None:
    """Each detail with its amount and direction, when they add up to the entry exactly."""
    try:
        total = _signed(plain_decimal(amount_text), indicator)
    except ValueProblem:
        return None
    parts, found = [], Decimal(0)
    for element, detail in details:
        if "Amt" in detail:
            text, own_currency = detail["Amt"], detail.get("Amt@Ccy")
        elif "AmtDtls/TxAmt/Amt" in detail:
            text, own_currency = detail["AmtDtls/TxAmt/Amt"], detail.get("AmtDtls/TxAmt/Amt@Ccy")
        else:
            return None
        if (own_currency or currency).upper() != currency:
            return None
        own = _text(detail, "CdtDbtInd").upper() or indicator
        try:
            found += _signed(plain_decimal(text), own)
        except ValueProblem:
            return None
        parts.append((element, detail, text, own))
    return parts if found == total else None


def _entry(
    line: int,
    statement: Statement,
    fields: dict[str, str],
    detail: Flat | None,
    upstream_id: str,
    booked: str,
    details_count: int,
) -> Entry:
    credit = fields["CdtDbtInd"] == "CRDT"
    counterparty = _party(detail, credit) if detail is not None else ""
    remittance = _remittance(detail) if detail is not None else ""
    end_to_end = _text(detail, "Refs/EndToEndId") if detail is not None else ""
    if end_to_end.upper() == "NOTPROVIDED":
        end_to_end = ""
    extra = clean_text(_text(detail, "AddtlTxInf"), MAX_NOTES) if detail is not None else ""
    info = fields["AddtlInf"] or extra
    values = {
        **fields,
        "Counterparty": counterparty,
        "RmtInf": remittance,
        "EndToEndId": end_to_end,
        "AddtlInf": info,
    }
    entry = Entry(
        line=line,
        statement=statement,
        raw=[values.get(h, "") for h in HEADERS],
        currency=fields["Ccy"],
        upstream_id=upstream_id,
    )
    if fields["Sts"] and fields["Sts"] != "BOOK":
        entry.skipped = True
        entry.errors.append(f"line {line}: entry status {fields['Sts']} is not booked: left out")
    try:
        entry.date = ymd(booked) if booked else None
        if entry.date is None:
            entry.problem("BookgDt", "", "is missing: a booking or value date is required")
    except ValueProblem as exc:
        entry.problem("BookgDt", booked, str(exc))
    if fields["CdtDbtInd"] not in ("CRDT", "DBIT"):
        entry.problem("CdtDbtInd", fields["CdtDbtInd"], "must be CRDT or DBIT")
    else:
        try:
            # Ledger sign: money in (a credit) is negative.
            entry.amount = -_signed(plain_decimal(fields["Amt"]), fields["CdtDbtInd"])
            entry.amount += Decimal(0)
        except ValueProblem as exc:
            entry.problem("Amt", fields["Amt"], str(exc))
    if len(entry.currency) != 3:
        entry.problem("Amt/@Ccy", entry.currency, "is not a currency code")
    fallback = "Credit" if credit else "Debit"
    if details_count > 1:
        fallback = f"{fallback}: {details_count} transactions"
    entry.name = counterparty or remittance[:255] or info[:255] or fields["BkTxCd"] or fallback
    notes = [n for n in (remittance, info) if n and n != entry.name]
    entry.notes = "\n".join(notes)[:MAX_NOTES]
    return entry
