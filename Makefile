# Development entry points. `make run` and `make test` set up .venv on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Touched after a successful install, so dependencies are reinstalled only when
# pyproject.toml changes.
INSTALLED := $(VENV)/.installed

.PHONY: venv run test bench soak web-deps

venv: $(INSTALLED)

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -U pip
	$(BIN)/python -m pip install --disable-pip-version-check -q -e '.[test]'
	touch $@

# axe-core for the browser tests' accessibility check (tests/web/package.json); the tests
# install it themselves when it is missing and npm is there.
web-deps: tests/web/node_modules/.package-lock.json

tests/web/node_modules/.package-lock.json: tests/web/package-lock.json
	npm ci --prefix tests/web --no-audit --no-fund --loglevel=error

# scripts/run-dev migrates, registers the built-in bots and starts the ladder first.
run: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" scripts/run-dev

test: venv
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	$(BIN)/pytest -q

# Every benchmark (engine, API on PostgreSQL, tournament workers, ratings recompute); the
# table goes to artefacts/benchmarks.md. Needs PostgreSQL and Redis on 127.0.0.1.
bench: venv
	$(BIN)/python -m benchmarks

# The embedded arena (make run's processes) with the ladder at full speed and HTTP bots,
# for SOAK_HOURS hours; reports crashes, matches, errors and memory (benchmarks/soak.py).
SOAK_HOURS ?= 2
soak: venv
	$(BIN)/python -m benchmarks.soak --hours $(SOAK_HOURS)
