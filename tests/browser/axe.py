"""axe-core for the browser tests: installed from the npm registry (`npm install axe-core`) into
a cache folder on first use, then injected into each page. Nothing else is fetched; without npm
(or with the registry unreachable) the accessibility pass is skipped, saying so."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

AXE_VERSION = "4.10"  # a major.minor line; npm picks its newest patch
CACHE = Path(os.environ.get("AXE_CACHE_DIR", Path.home() / ".cache" / "pf-axe-core"))
SERIOUS = ("serious", "critical")
_source: list[str | None] = []


def axe_source() -> str | None:
    """axe.min.js's text, or None when it cannot be had."""
    if _source:
        return _source[0]
    script = CACHE / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists() and shutil.which("npm"):
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE),
             f"axe-core@{AXE_VERSION}"],
            capture_output=True,
            timeout=180,
            check=False,
        )  # fmt: skip
    _source.append(script.read_text() if script.exists() else None)
    return _source[0]


def axe_serious(page, source: str) -> list[str]:
    """The page's serious and critical violations, one line each."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=source)
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
    )
    return [
        f"axe {v['impact']} {v['id']}: {v['help']} at {', '.join(v['nodes'])}"
        for v in violations
        if v["impact"] in SERIOUS
    ]
