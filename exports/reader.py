"""Reading an archive back: the manifest and every file's checksum verified before anything
is written (a corrupt, tampered or foreign file is refused as a whole), then its lines."""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.errors import ValidationFailed
from exports.archive import CSV_FILE, FORMAT, MANIFEST, VERSION, file_name
from exports.selectors import KINDS

NOT_A_ZIP = "file: not a ZIP archive"
NO_MANIFEST = "file: the archive has no readable manifest.json"
WRONG_FORMAT = f"file: not a {FORMAT} archive of version {VERSION}"
MISSING_FILE = "file: {name} is missing from the archive"
UNLISTED_FILE = "file: {name} is not listed in the manifest"
CHECKSUM_MISMATCH = "file: {name} does not match its SHA-256 checksum in the manifest"
COUNT_MISMATCH = "file: {name} has {actual} lines where the manifest says {expected}"
CORRUPT = "file: {name} cannot be read (the archive is corrupt)"
BAD_LINE = "file: {name} line {line} is not a JSON object"
READ_CHUNK = 1 << 20


def _manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except (KeyError, ValueError, zipfile.BadZipFile, zlib.error, OSError):
        raise ValidationFailed([NO_MANIFEST]) from None
    if not isinstance(manifest, dict):
        raise ValidationFailed([NO_MANIFEST])
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ValidationFailed([WRONG_FORMAT])
    for key in ("counts", "sha256", "sums"):
        if not isinstance(manifest.get(key), dict):
            raise ValidationFailed([WRONG_FORMAT])
    if not isinstance(manifest.get("currency"), str):
        raise ValidationFailed([WRONG_FORMAT])
    return manifest


def _check_member(archive: zipfile.ZipFile, name: str, manifest: dict[str, Any]) -> str | None:
    digest, lines = hashlib.sha256(), 0
    try:
        with archive.open(name) as stream:
            while chunk := stream.read(READ_CHUNK):
                digest.update(chunk)
                lines += chunk.count(b"\n")
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError):
        return CORRUPT.format(name=name)
    if digest.hexdigest() != manifest["sha256"].get(name):
        return CHECKSUM_MISMATCH.format(name=name)
    expected = manifest["counts"].get(name)
    if name.endswith(".jsonl") and lines != expected:
        return COUNT_MISMATCH.format(name=name, actual=lines, expected=expected)
    return None


class Archive:
    """An opened, verified archive. Use `archive_open`; close it (or use `with`)."""

    def __init__(self, path: Path) -> None:
        if not zipfile.is_zipfile(path):
            raise ValidationFailed([NOT_A_ZIP])
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError):
            raise ValidationFailed([NOT_A_ZIP]) from None
        try:
            self.manifest = _manifest(self.zip)
            self._verify()
        except BaseException:
            self.zip.close()
            raise

    def _verify(self) -> None:
        expected = [file_name(kind) for kind in KINDS] + [CSV_FILE]
        present = set(self.zip.namelist())
        problems = [MISSING_FILE.format(name=n) for n in expected if n not in present]
        listed = set(self.manifest["sha256"]) | {MANIFEST}
        problems += [UNLISTED_FILE.format(name=n) for n in sorted(present - listed)]
        problems += [
            MISSING_FILE.format(name=n) for n in expected if n not in self.manifest["sha256"]
        ]
        if problems:
            raise ValidationFailed(list(dict.fromkeys(problems)))
        for name in expected:
            problem = _check_member(self.zip, name, self.manifest)
            if problem:
                problems.append(problem)
        if problems:
            raise ValidationFailed(problems)

    def count(self, kind: str) -> int:
        return int(self.manifest["counts"].get(file_name(kind), 0))

    def lines(self, kind: str) -> Iterator[dict[str, Any]]:
        name = file_name(kind)
        with self.zip.open(name) as stream:
            for number, raw in enumerate(stream, start=1):
                try:
                    record = json.loads(raw)
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    raise ValidationFailed([BAD_LINE.format(name=name, line=number)])
                yield record

    def close(self) -> None:
        self.zip.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def archive_open(path: Path) -> Archive:
    """Open and verify an archive: ValidationFailed (422) when it is not one, or not intact."""
    return Archive(path)
