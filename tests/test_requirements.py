"""The runtime lock (requirements.txt, what the Docker image installs) holds every package the
service imports; test and development tools live in requirements-dev.txt only."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCAL_PACKAGES = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
# The service's own packages: every local one but the tests and the benchmarks.
RUNTIME_PACKAGES = sorted(LOCAL_PACKAGES - {"tests", "bench"})
# Loaded by pytest only (`-p providers.testing.simplefin_pytest`), never by the service.
TEST_ONLY_MODULES = {ROOT / "providers" / "testing" / "simplefin_pytest.py"}


def pins(name: str) -> dict[str, str]:
    found = {}
    for line in (ROOT / name).read_text().splitlines():
        if "==" in line:
            dist, version = line.split("==")
            found[normalize(dist)] = version.strip()
    return found


def normalize(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def imported_top_level_modules() -> dict[str, set[Path]]:
    modules: dict[str, set[Path]] = {}
    files = [ROOT / "manage.py"]
    for package in RUNTIME_PACKAGES:
        files += [p for p in (ROOT / package).rglob("*.py") if p not in TEST_ONLY_MODULES]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                modules.setdefault(name.split(".")[0], set()).add(path)
    return modules


def test_every_package_the_service_imports_is_in_the_runtime_lock():
    runtime = pins("requirements.txt")
    owners = packages_distributions()
    missing = []
    for module, paths in imported_top_level_modules().items():
        if module in sys.stdlib_module_names or module in LOCAL_PACKAGES or module == "__future__":
            continue
        dists = owners.get(module)
        assert dists, f"{module} (imported by {sorted(map(str, paths))[0]}) is not installed"
        if not any(normalize(d) in runtime for d in dists):
            missing.append((module, dists, sorted(str(p.relative_to(ROOT)) for p in paths)[:3]))
    assert missing == []


def test_the_development_lock_builds_on_the_runtime_lock_without_repeating_it():
    dev_text = (ROOT / "requirements-dev.txt").read_text()
    assert "-r requirements.txt" in dev_text.splitlines()
    runtime, dev = pins("requirements.txt"), pins("requirements-dev.txt")
    assert set(runtime) & set(dev) == set()
    for tool in ("pytest", "pytest-django", "pytest-xdist", "playwright", "schemathesis", "ruff"):
        assert tool in dev and tool not in runtime
    for package in ("django", "djangorestframework", "celery", "gunicorn", "psycopg", "redis"):
        assert package in runtime


def test_the_image_installs_the_runtime_lock_alone():
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    installs = [line for line in lines if "pip install" in line]
    assert installs == ["RUN pip install --no-cache-dir -r requirements.txt"]
    assert not any("requirements-dev" in line for line in lines if not line.startswith("#"))
