# The two commands: `make demo` runs the pipeline, `make test` runs every suite. Both set up what they need first;
# set-up is idempotent and cached (stamps under .venv and .state), so a second run skips what is there.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
PYTHON := $(VENV)/bin/python
CASSANDRA := deploy/local/cassandra
# Debian packages the Foundation needs; python3-venv only where the interpreter lacks ensurepip (Debian's own);
# systemd for `systemd-analyze verify` of the gateway's unit (a test; systemd need not be PID 1).
DEBIAN_PACKAGES := openjdk-17-jdk-headless maven systemd $(shell python3 -c 'import ensurepip' 2>/dev/null || echo python3-venv)

.PHONY: help setup system-packages python-env cassandra-jars test demo clean distclean

help:
	@echo "make demo    set up, start the local Cassandra, apply the schema, run the pipeline"
	@echo "make test    set up and run every suite (starts and stops the local Cassandra itself)"
	@echo "make setup   only the set-up: Debian packages, Python virtualenv, Cassandra jars, firmware toolchain"

setup: system-packages python-env cassandra-jars
	@$(MAKE) --no-print-directory -C firmware setup
	@$(MAKE) --no-print-directory -C analytics setup

system-packages:
	@deploy/setup/debian-packages $(DEBIAN_PACKAGES)

python-env: $(VENV)/.installed

# Exact pins from requirements.lock, no resolver surprises (--no-deps), then `pip check` proves the lock is complete.
# Lock files: requirements.lock (gateway, schema, tests) and one per part that needs more (analytics: Spark).
LOCK_FILES := requirements.lock $(wildcard analytics/requirements.lock)

$(VENV)/.installed: $(LOCK_FILES) gateway/python/pyproject.toml firmware/board_sim/pyproject.toml \
		schema/pyproject.toml
	@test -x $(PYTHON) || python3 -m venv $(VENV)
	@$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps $(addprefix -r ,$(LOCK_FILES))
	@# The editable install builds with the pinned setuptools already in the venv, not an unpinned download.
	@$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e gateway/python
	@$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e firmware/board_sim
	@$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e schema
	@$(PYTHON) -m pip check >/dev/null || { $(PYTHON) -m pip check; exit 1; }
	@touch $@
	@echo "Python environment ready in $(VENV)"

cassandra-jars:
	@$(CASSANDRA) fetch

# Firmware host and simulator tests first (C++, seconds), then every Python suite (gateway, conformance, schema,
# launcher, firmware-on-a-pty) against the real local Cassandra.
test: setup
	@$(MAKE) --no-print-directory -C firmware test
	@$(PYTHON) -m pytest

demo: setup
	@deploy/demo/run

clean:
	rm -rf .pytest_cache .hypothesis
	find . -name __pycache__ -prune -exec rm -rf {} +

# Also removes the local Cassandra's data.
distclean: clean
	-$(CASSANDRA) stop
	rm -rf $(VENV) .state
