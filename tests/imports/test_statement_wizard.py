"""The admin wizard with statement files: the format recognised from the upload, the
statements shown with their accounts to map, then mappings, publish, readback and revert as
for a CSV; an unreadable file shows its error."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from finance.models import Transaction
from imports.models import Import, ImportMapping
from imports.parsing.detect import detect_format
from imports.services.config import DEFAULTS
from tests.imports.statement_helpers import fixture
from tests.imports.test_import_wizard import ADD, client_for, page

pytestmark = pytest.mark.django_db


def wizard_upload(client, name: str, content: bytes, **fields):
    """What the upload form posts when only the file (and maybe an account) is chosen."""
    data = {
        **DEFAULTS,
        "rows_to_skip": "0",
        "file": SimpleUploadedFile(name, content),
        "account": "",
        "type": "",
        **fields,
    }
    return client.post(ADD, data)


@pytest.mark.parametrize(
    ("name", "content", "found"),
    [
        ("statement.ofx", fixture("ofx102_checking.ofx"), "ofx"),
        ("download.txt", fixture("ofx211_creditcard.ofx"), "ofx"),
        ("export.qfx", fixture("qfx_two_accounts_one_line.qfx"), "ofx"),
        ("file.dat", fixture("qif_us_checking.qif"), "qif"),
        ("camt.xml", fixture("camt053_v08_two_accounts.xml"), "camt053"),
        ("auszug.txt", fixture("mt940_two_accounts.sta"), "mt940"),
        ("bank.csv", b"date,name,amount\n2024-01-01,A,1\n", "csv"),
        ("statement.sta", b"", "mt940"),  # no content to tell: the extension does
    ],
)
def test_formats_are_recognised_from_content_then_extension(name, content, found):
    assert detect_format(content[:65536], name) == found


def test_mt940_through_the_wizard(alice, django_capture_on_commit_callbacks):
    giro = alice.account(name="Giro", currency="EUR")
    tagesgeld = alice.account(name="Tagesgeld", currency="EUR")
    client = client_for(alice)
    form = client.get(ADD).content.decode()
    assert "CAMT.053" in form and 'name="type"' in form
    response = wizard_upload(client, "umsaetze.txt", fixture("mt940_two_accounts.sta"))
    assert response.status_code == 302, response.content.decode()[:2000]
    imp = Import.objects.get(family=alice.family)
    assert imp.type == "Mt940Import"
    text = page(client, imp)
    assert 'id="import-statements"' in text
    assert "37040044/0532013000" in text and "37040044/0532013999" in text
    assert text.count("not mapped: choose its account below") == 2
    assert 'id="reparse"' in text and 'name="amount_col_label"' not in text  # no CSV columns
    accounts = {m.value: m for m in ImportMapping.objects.filter(data_import=imp, kind="account")}
    client.post(
        reverse("admin:imports_import_mappings", args=[imp.pk]),
        {
            f"mapping-{accounts['37040044/0532013000'].pk}": str(giro.pk),
            f"mapping-{accounts['37040044/0532013999'].pk}": str(tagesgeld.pk),
        },
    )
    text = page(client, imp)
    assert "not mapped: choose" not in text and text.count(">Tagesgeld</td>") == 1
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:imports_import_publish", args=[imp.pk]))
    imp.refresh_from_db()
    assert imp.status == "complete"
    text = page(client, imp)
    assert 'id="readback-status">Matched<' in text
    assert 'id="readback-statements"' in text and text.count('pf-status-good">Matched<') == 2
    assert Transaction.objects.filter(account=giro).count() == 5
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:imports_import_revert", args=[imp.pk]))
    assert not Transaction.objects.filter(import_id=imp.pk).exists()


def test_qif_through_the_wizard_reads_us_dates_and_reconfigures(alice):
    account = alice.account(name="Checking", currency="USD")
    client = client_for(alice)
    response = wizard_upload(
        client, "checking.qif", fixture("qif_us_checking.qif"), account=str(account.pk)
    )
    assert response.status_code == 302
    imp = Import.objects.get(family=alice.family)
    assert (imp.type, imp.configuration["date_format"]) == ("QifImport", "%m/%d/%Y")
    assert imp.stats["invalid_rows_count"] == 0
    client.post(
        reverse("admin:imports_import_configure", args=[imp.pk]),
        {
            "date_format": "%d/%m/%Y",
            "number_format": "1,234.56",
            "signage_convention": "inflows_positive",
            "set_balance": "false",
        },
    )
    imp.refresh_from_db()
    assert imp.configuration["set_balance"] == "false"
    assert imp.stats["invalid_rows_count"] == 5  # 1/15'24 is no date read day first


def test_hostile_file_through_the_wizard_shows_its_error(alice):
    client = client_for(alice)
    response = wizard_upload(client, "camt.xml", fixture("camt053_external_entity.xml"))
    assert response.status_code == 302
    imp = Import.objects.get(family=alice.family)
    assert (imp.type, imp.status) == ("Camt053Import", "failed")
    text = page(client, imp)
    assert "the DOCTYPE (DTD) before this root element is refused" in text
    assert 'id="publish"' in text and "the file has no rows" in text


def test_import_file_command_any_format(alice, tmp_path):
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    giro = alice.account(name="Giro", currency="EUR")
    tagesgeld = alice.account(name="Tagesgeld", currency="EUR")
    path = tmp_path / "umsaetze.txt"
    path.write_bytes(fixture("mt940_two_accounts.sta"))
    out, err = StringIO(), StringIO()
    call_command(
        "import_file",
        str(path),
        "--map",
        f"37040044/0532013000={giro.pk}",
        "--map",
        f"37040044/0532013999={tagesgeld.pk}",
        stdout=out,
        stderr=err,
    )
    text = out.getvalue()
    assert "(Mt940Import): 7 rows, 0 invalid, 0 duplicates" in text
    assert "readback matched" in text
    assert "statement 2 37040044/0532013999: matched" in text
    assert "publish [" in err.getvalue()  # the progress bar
    assert Transaction.objects.filter(account=tagesgeld).count() == 2
    # CSV through the same command; a statement account the file lacks is refused by name.
    csv = tmp_path / "bank.csv"
    csv.write_bytes(b"date,name,amount\n2024-05-01,Kiosk,-2.50\n")
    call_command(
        "import_file", str(csv), "--account", str(giro.pk), stdout=StringIO(), stderr=StringIO()
    )
    assert Transaction.objects.get(account=giro, name="Kiosk").amount == 2.5
    qif = tmp_path / "c.qif"
    qif.write_bytes(fixture("qif_us_checking.qif"))
    with pytest.raises(CommandError, match="has no statement account 123; its accounts are Bank"):
        call_command(
            "import_file", str(qif), "--map", f"123={giro.pk}", stdout=StringIO(), stderr=StringIO()
        )
    broken = tmp_path / "x.xml"
    broken.write_bytes(fixture("camt053_billion_laughs.xml"))
    with pytest.raises(CommandError, match="failed: The file cannot be read: line 14"):
        call_command(
            "import_file",
            str(broken),
            "--account",
            str(giro.pk),
            stdout=StringIO(),
            stderr=StringIO(),
        )
