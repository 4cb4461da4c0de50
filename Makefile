# Questwall: the two commands are `make run` and `make test`. Both install what they need.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
PORT   ?= 8000
VENV   := .venv
TOOLS  := .tools
BIN    := $(VENV)/bin

# Node.js 22 and bun for the portal's build come from the npm registry into .tools/.
export PATH := $(CURDIR)/$(TOOLS)/node_modules/.bin:$(CURDIR)/$(BIN):$(PATH)
export REFLEX_TELEMETRY_ENABLED := false
export REFLEX_USE_SYSTEM_BUN := true

.PHONY: help run test screenshots check lint install install-dev bytecode chromium pgbouncer prometheus bench lock messages clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

run: install bytecode ## Install, migrate the database and start Questwall on http://localhost:8000 (PORT=8000)
	$(BIN)/questwall migrate
	$(if $(filter-out 8000,$(PORT)),BASE_URL=$${BASE_URL:-http://localhost:$(PORT)}) $(BIN)/questwall serve --port $(PORT)

demo: install ## Seed demo data (studio, game, missions, publisher, players) into the database
	$(BIN)/questwall migrate
	$(BIN)/questwall demo

lint: install-dev ## Lint and format checks, the import contracts, type checks
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

# Test worker processes (pytest-xdist); each has its own databases, Redis keys, ports and portal.
WORKERS ?= auto

test: lint bytecode ## Install test tools, lint, check the import contracts, type-check and run every test in parallel, with coverage
	$(BIN)/pytest -n $(WORKERS) --cov --cov-report=term $(PYTEST_ARGS)

screenshots: install-dev bytecode ## The browser tests alone, each page's screenshots to test-artifacts/screenshots/
	QUESTWALL_SCREENSHOTS=1 $(BIN)/pytest -n $(WORKERS) -m e2e $(PYTEST_ARGS)

check: lint bytecode ## The inner loop: lint, import contracts, types, unit and domain tests on SQLite (skips `slow`)
	$(BIN)/pytest -n $(WORKERS) -m "not postgres and not slow" tests/unit tests/domain $(PYTEST_ARGS)

install: $(VENV)/.installed $(TOOLS)/.installed ## Python packages, Node.js 22 and bun

install-dev: install $(VENV)/.installed-dev chromium pgbouncer prometheus

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.9

$(VENV)/.installed: $(BIN)/python requirements.txt pyproject.toml
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -r requirements.txt
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -r requirements-dev.txt
	@touch $@

$(TOOLS)/.installed: $(TOOLS)/package.json $(TOOLS)/package-lock.json
	@command -v npm >/dev/null || scripts/apt-install.sh nodejs npm
	cd $(TOOLS) && npm ci --no-audit --no-fund --loglevel=error
	@node --version && bun --version
	@touch $@

# Compiled modules for every process a run starts (servers, `questwall` commands), also
# where PYTHONDONTWRITEBYTECODE is set: without them each process compiles its imports anew.
bytecode:
	@$(BIN)/python -m compileall -q -j 0 api models portal alembic tests bench rxconfig.py

chromium: ## Debian's headless Chromium for the browser tests
	@test -x /usr/bin/chromium-headless-shell || scripts/apt-install.sh chromium-headless-shell

pgbouncer: ## Debian's PgBouncer for the tests that run through it (each starts its own)
	@test -x /usr/sbin/pgbouncer || scripts/apt-install.sh pgbouncer

prometheus: ## Debian's Prometheus and promtool, which check the metrics and alert rules in the tests
	@test -x /usr/bin/promtool || scripts/apt-install.sh prometheus

bench: install bytecode ## Run every benchmark on SQLite and PostgreSQL, with targets (see bench/README.md)
	$(BIN)/python bench/all.py $(BENCH_ARGS)
	$(BIN)/python bench/reports.py

lock: $(BIN)/python ## Re-pin requirements*.txt from pyproject.toml
	$(BIN)/uv pip compile pyproject.toml --no-header --no-annotate --quiet -o requirements.txt
	$(BIN)/uv pip compile pyproject.toml --extra dev --no-header --no-annotate --quiet -o requirements-dev.txt

messages: $(BIN)/python ## Extract the hosted wall's messages (and its tracking links' refusals) into api/wall/locales/wall.pot
	cd api/wall && ../../$(BIN)/pybabel extract -F babel.cfg -k N_ --no-location --omit-header --sort-output -o locales/wall.pot . ../routes/wall.py ../tickets/report.py ../routes/tracking.py ../tracking/clicks.py ../tracking/live_ops.py ../fraud/policy.py

clean: ## Remove installed tools and build outputs (keeps data/)
	rm -rf $(VENV) $(TOOLS)/node_modules $(TOOLS)/.installed .web .web-tests
