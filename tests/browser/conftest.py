"""Browser tests: Playwright driving Debian's Chromium against a live server.

They skip, saying how to enable them, where /usr/bin/chromium (or CHROMIUM_PATH) is missing:
`apt-get install chromium` (.ci/run does this). Screenshots go to $TEST_OUTPUT_DIR/screenshots
(default test-output/screenshots)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
OUTPUT = Path(os.environ.get("TEST_OUTPUT_DIR", "test-output")) / "screenshots"
PASSWORD = "pw-12345-secret"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="session")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip(
            f"Chromium not found at {CHROMIUM}: `apt-get install chromium` (or set "
            "CHROMIUM_PATH) to run the browser tests"
        )
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # playwright's sync API loop
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium, request) -> Iterator:
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def shot(page, name: str) -> Path:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    path = OUTPUT / (re.sub(r"[^a-z0-9_-]+", "-", name.lower()) + ".png")
    page.screenshot(path=str(path), full_page=True)
    return path


def login(page, live_server, email: str, password: str = PASSWORD) -> None:
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", email)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_load_state()
