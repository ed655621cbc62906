"""Large statement files for `import_bench --format`: written as a stream, any number of
entries, realistic enough for the readers (names, references, a balance that adds up)."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

START = dt.date(2015, 1, 1)
NAMES = [f"Shop {i}" for i in range(500)] + ["Kaffee & Co", "Miete", "Gehalt"]


def _entries(rows: int, seed: int):
    rng = random.Random(seed)
    for i in range(rows):
        day = START + dt.timedelta(days=i * 3650 // max(rows, 1))
        cents = rng.randint(-250000, 50000)
        yield i, day, Decimal(cents).scaleb(-2), rng.choice(NAMES)


def write_camt053(path: str, rows: int, seed: int = 5) -> None:
    total = Decimal(0)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">\n'
            "<BkToCstmrStmt><GrpHdr><MsgId>BENCH</MsgId></GrpHdr><Stmt><Id>BENCH-1</Id>\n"
            "<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>\n"
            '<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">0.00</Amt>'
            "<CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2015-01-01</Dt></Dt></Bal>\n"
        )
        for i, day, amount, name in _entries(rows, seed):
            total += amount
            ind = "CRDT" if amount > 0 else "DBIT"
            role = "Dbtr" if amount > 0 else "Cdtr"
            fh.write(
                f'<Ntry><NtryRef>{i}</NtryRef><Amt Ccy="EUR">{abs(amount)}</Amt>'
                f"<CdtDbtInd>{ind}</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>{day}</Dt></BookgDt>"
                f"<AcctSvcrRef>BENCH{i:09d}</AcctSvcrRef><NtryDtls><TxDtls>"
                f"<RltdPties><{role}><Nm>{name.replace('&', '&amp;')}</Nm></{role}></RltdPties>"
                f"<RmtInf><Ustrd>Invoice {i}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>\n"
            )
        ind = "CRDT" if total >= 0 else "DBIT"
        fh.write(
            f'<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">{abs(total)}</Amt>'
            f"<CdtDbtInd>{ind}</CdtDbtInd><Dt><Dt>2024-12-31</Dt></Dt></Bal>\n"
            "</Stmt></BkToCstmrStmt></Document>\n"
        )


def write_ofx(path: str, rows: int, seed: int = 5) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(
            "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\n"
            "ENCODING:UTF-8\r\nCHARSET:NONE\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\n"
            "NEWFILEUID:NONE\r\n\r\n<OFX><BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STMTRS>"
            "<CURDEF>EUR\r\n<BANKACCTFROM><BANKID>1<ACCTID>BENCH<ACCTTYPE>CHECKING"
            "</BANKACCTFROM>\r\n<BANKTRANLIST>\r\n"
        )
        for i, day, amount, name in _entries(rows, seed):
            fh.write(
                f"<STMTTRN>\r\n<TRNTYPE>{'CREDIT' if amount > 0 else 'DEBIT'}\r\n"
                f"<DTPOSTED>{day:%Y%m%d}\r\n<TRNAMT>{amount}\r\n<FITID>BENCH{i:09d}\r\n"
                f"<NAME>{name.replace('&', '&amp;')}\r\n<MEMO>Invoice {i}\r\n</STMTTRN>\r\n"
            )
        fh.write(
            "</BANKTRANLIST><LEDGERBAL><BALAMT>0<DTASOF>20241231</LEDGERBAL>"
            "</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\r\n"
        )
