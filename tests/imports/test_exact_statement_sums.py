"""A statement of many of the largest amounts checks out exactly (issue 18: every figure
exact on both databases): its entries' sum, the computed closing balance, the readback's
per-account sums and the reported balance, to the fourth decimal (a CLF account). The largest
amounts in and out differ by a ten-thousandth each: as floats they are all 10^13, and cancel."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finance.models import Account
from tests.imports.statement_helpers import publish, readback, uploaded

pytestmark = pytest.mark.django_db

BIG = Decimal("9999999999999.9999")  # core/bounds.py MAX_AMOUNT
PAIRS = 20  # credits of BIG, debits of BIG - 0.0001: balances stay below 10^13
OPENING = Decimal("0.0001")
OTHER = Decimal("1234.5678")


def _entry(n: int, amount: Decimal, sign: str) -> str:
    return f"""
      <Ntry>
        <NtryRef>N{n:03d}</NtryRef>
        <Amt Ccy="CLF">{amount}</Amt>
        <CdtDbtInd>{sign}</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>2024-03-{1 + n % 28:02d}</Dt></BookgDt>
        <AcctSvcrRef>ASR-{n:03d}</AcctSvcrRef>
        <NtryDtls><TxDtls><RmtInf><Ustrd>Entry {n}</Ustrd></RmtInf></TxDtls></NtryDtls>
      </Ntry>"""


def _balance(code: str, amount: Decimal, day: str) -> str:
    return f"""
      <Bal>
        <Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp>
        <Amt Ccy="CLF">{amount}</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Dt><Dt>{day}</Dt></Dt>
      </Bal>"""


def _statement(closing: Decimal) -> bytes:
    entries = "".join(
        _entry(2 * n, BIG, "CRDT") + _entry(2 * n + 1, BIG - Decimal("0.0001"), "DBIT")
        for n in range(PAIRS)
    )
    entries += _entry(2 * PAIRS, OTHER, "CRDT")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>EXACT-1</MsgId><CreDtTm>2024-04-01T05:00:00+02:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>STMT-EXACT</Id>
      <CreDtTm>2024-04-01T05:00:00+02:00</CreDtTm>
      <Acct><Id><IBAN>FR7630006000011234567890189</IBAN></Id><Ccy>CLF</Ccy></Acct>
      {_balance("OPBD", OPENING, "2024-03-01")}
      {_balance("CLBD", closing, "2024-03-31")}
      {entries}
    </Stmt>
  </BkToCstmrStmt>
</Document>
""".encode()


@pytest.mark.parametrize("off_by", [Decimal(0), Decimal("0.0001")])
def test_statement_of_the_largest_amounts_checks_out_to_the_fourth_decimal(
    alice, django_capture_on_commit_callbacks, off_by
):
    account = alice.account(name="Vault", currency="CLF")
    total = PAIRS * Decimal("0.0001") + OTHER
    closing = OPENING + total + off_by
    assert OPENING + total == Decimal("1234.5699")
    data = uploaded(
        alice.client, _statement(closing), "s.xml", "Camt053Import", account_id=str(account.pk)
    )
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete", done
    check = readback(done)
    (statement,) = check["statements"]
    assert statement["entries"] == 2 * PAIRS + 1
    assert Decimal(statement["entries_total"]) == total
    assert Decimal(statement["computed_closing"]) == OPENING + total
    if off_by:  # a ten-thousandth off is a mismatch, named
        assert statement["status"] == "mismatch" and check["status"] == "mismatch", check
        assert list(check["mismatches"]) == ["statements"], check["mismatches"]
    else:
        assert statement["status"] == "matched" and check["status"] == "matched", check
    account = Account.objects.get(pk=account.pk)
    assert account.reported_balance == closing
    body = alice.client.get(f"/api/v1/accounts/{account.pk}").json()
    assert Decimal(body["balance"]) == closing
    # Derived backwards from the closing balance through every entry: the opening again.
    r = alice.client.get(
        f"/api/v1/accounts/{account.pk}/balances?start_date=2024-02-29&end_date=2024-02-29"
    )
    assert [Decimal(p["balance"]) for p in r.json()["balances"]] == [OPENING + off_by]
