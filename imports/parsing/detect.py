"""Which format an upload is, from its first bytes (and, when they say nothing, its name)."""

from __future__ import annotations

import re

CSV, OFX, QIF, CAMT053, MT940 = "csv", "ofx", "qif", "camt053", "mt940"
HEAD_BYTES = 64 * 1024
EXTENSIONS = {
    "ofx": OFX,
    "qfx": OFX,
    "qif": QIF,
    "xml": CAMT053,
    "sta": MT940,
    "mt940": MT940,
    "940": MT940,
    "csv": CSV,
    "txt": CSV,
}
_MT940_FIELD = re.compile(r"^:(20|25|28C|60F|61):", re.M)


def detect_format(head: bytes, filename: str = "") -> str:
    """csv, ofx, qif, camt053 or mt940. The content decides; the extension breaks a tie (a
    file whose start matches no statement format is read by its extension, else as CSV)."""
    text = head[:HEAD_BYTES].decode("latin-1").lstrip("\ufeff\xef\xbb\xbf \t\r\n")
    upper = text[:4096].upper()
    if (
        upper.startswith("OFXHEADER")
        or upper.startswith("<OFX>")
        or (upper.startswith("<?XML") and "<OFX>" in upper)
    ):
        return OFX
    xml = upper.startswith(("<?XML", "<DOCUMENT"))
    if xml and ("CAMT.05" in upper or "BKTOCSTMRSTMT" in upper):
        return CAMT053
    if upper.startswith(("!TYPE:", "!ACCOUNT", "!OPTION:")):
        return QIF
    if text.startswith("{1:") or len(set(_MT940_FIELD.findall(text[:8192]))) >= 3:
        return MT940
    extension = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    return EXTENSIONS.get(extension, CSV)
