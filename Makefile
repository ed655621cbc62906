# Two commands do everything: `make run` and `make test`. `make bench` runs the benchmarks.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# One venv for running and testing: the runtime lock plus the development lock (the Docker
# image installs the runtime lock alone). The stamp changes when either file does.
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements-dev.txt | cksum | cut -d' ' -f1)
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
BIND ?= 127.0.0.1:8000

.PHONY: install run test test-sqlite test-postgres lint format bench e2e fuzz fake-lunchflow fake-simplefin fake-ecb

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py demo --base-url http://$(BIND)
	$(PY) manage.py runall --bind $(BIND)

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run

format: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

test: install lint test-sqlite test-postgres

test-sqlite: install
	$(PY) -m pytest -q $(PYTEST_ARGS)

# Runs again on PostgreSQL when 127.0.0.1:5432 answers (production runs there).
test-postgres: install
	@if $(PY) -c "import socket; socket.create_connection(('127.0.0.1', 5432), 2)" 2>/dev/null; then \
		echo "== PostgreSQL =="; DATABASE_URL=$(PG_URL) $(PY) -m pytest -q $(PYTEST_ARGS); \
	else echo "PostgreSQL is not reachable on 127.0.0.1:5432: skipping the PostgreSQL run"; fi

# PEER=actual: our CSV import and re-import beside Actual Budget's on the same file instead
# (bench/peer.py; installs @actual-app/api from the npm registry into a temp folder; not in CI).
bench: install
	$(if $(PEER),$(PY) bench/peer.py --peer $(PEER),$(PY) bench/run.py $(if $(FULL),--full,))

# The production shape (gunicorn, two Celery workers, beat, PostgreSQL, Redis) as local
# processes, workers SIGKILLed mid-publish and mid-sync (scripts/e2e/run.py). Skips, exit 0,
# when PostgreSQL or Redis does not answer. E2E_REDIS_URL: a Redis database it owns (flushed).
e2e: install
	$(PY) scripts/e2e/run.py

fuzz: install
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-500} $(PY) -m pytest -q tests/hardening/test_schema_fuzz.py
	SYNC_MODEL_EXAMPLES=$${SYNC_MODEL_EXAMPLES:-25} SYNC_MODEL_SEED=$${SYNC_MODEL_SEED:-$$RANDOM} \
		$(PY) -m pytest -q -p no:randomly tests/providers/test_sync_model.py

fake-lunchflow: install
	$(PY) -m providers.testing.lunchflow_server

fake-simplefin: install
	$(PY) -m providers.testing.simplefin_demo

fake-ecb: install
	$(PY) -m providers.testing.ecb_server --port 8767
