"""Every write of a ledger row, seen at the database: it must come from `finance/ledger/`.

Installed around every test (tests/conftest.py), so each write path the suite drives is
checked: the SQL of every statement on this thread's connection is read, and an INSERT,
UPDATE or DELETE on the ledger's tables is traced to the innermost project module on the call
stack. The ledger package may write; so may a test's own setup (factories), unless the write
happened inside a request or the admin (Django's handlers between the test and the write): that
is a path that bypassed the seam."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LEDGER_TABLES = ("finance_transaction", "finance_transaction_tags", "finance_accountbalance")
WRITE = re.compile(
    r"^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+\"?(" + "|".join(LEDGER_TABLES) + r")\"?[\s(]",
    re.IGNORECASE,
)
ALLOWED = ("finance/ledger/",)
# Framework code that runs a project's request or admin code: a test frame past it is not the
# writer.
HANDLERS = ("django/core/handlers/", "django/contrib/admin/", "rest_framework/", "celery/")


def _project_path(filename: str) -> str | None:
    try:
        path = Path(filename).resolve().relative_to(ROOT)
    except ValueError:
        return None
    text = path.as_posix()
    if text.startswith(".venv/"):
        return None
    return text


def writer_of(frame: Any) -> tuple[str | None, bool]:
    """The innermost project module on the stack, and whether a framework handler lies
    between it and the statement."""
    through_handler = False
    while frame is not None:
        filename = frame.f_code.co_filename
        project = _project_path(filename)
        if project is not None and project != "tests/ledger_guard.py":
            return project, through_handler
        if any(marker in filename.replace("\\", "/") for marker in HANDLERS):
            through_handler = True
        frame = frame.f_back
    return None, through_handler


class LedgerWriteGuard:
    """A database execute wrapper that records writes to ledger tables from elsewhere."""

    def __init__(self) -> None:
        self.violations: list[str] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        match = WRITE.match(sql) if isinstance(sql, str) else None
        if match:
            module, through_handler = writer_of(sys._getframe(1))
            allowed = module is None or module.startswith(ALLOWED)
            if module is not None and module.startswith("tests/") and not through_handler:
                allowed = True  # a test's own setup (factories, fixtures)
            if not allowed:
                self.violations.append(f"{module} wrote {match.group(1)}: {sql[:80]}")
        return execute(sql, params, many, context)
