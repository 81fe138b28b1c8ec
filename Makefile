# The two commands: `make demo` runs the pipeline, `make test` runs every suite. Both set up what they need first;
# set-up is idempotent and cached (stamps under .venv and .state), so a second run skips what is there.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
PYTHON := $(VENV)/bin/python
CASSANDRA := deploy/local/cassandra
# Debian packages the Foundation needs; python3-venv only where the interpreter lacks ensurepip (Debian's own);
# systemd for `systemd-analyze verify` of the gateway's unit (a test; systemd need not be PID 1); openssl for the TLS tests.
# nodejs and npm (the Node gateway) only where there is no node or npm: the Node gateway needs Node 20, which
# Debian 12 does not ship (its nodejs is 18); a NodeSource nodejs 20 (npm included) is kept as it is.
# prometheus for its promtool: deploy/monitoring's alert rules are checked and unit-tested with it.
# fuse3, libfuse3-dev and pkg-config: the conformance kit's power-cut file system (gateway/conformance/powercutfs).
DEBIAN_PACKAGES := openjdk-17-jdk-headless maven systemd openssl prometheus $(shell python3 -c 'import ensurepip' 2>/dev/null || echo python3-venv) \
	fuse3 libfuse3-dev pkg-config $(shell command -v node >/dev/null || echo nodejs) $(shell command -v npm >/dev/null || echo npm)
NODE_GATEWAY := gateway/node

.PHONY: help setup setup-parts system-packages python-env node-env cassandra-jars firmware-setup analytics-setup \
	powercutfs test test-slow demo clean distclean

help:
	@echo "make demo    set up, start the local Cassandra, apply the schema, run the pipeline"
	@echo "make test    set up and run every suite (starts and stops the local Cassandra itself)"
	@echo "make setup   only the set-up: Debian packages, Python venv, Node packages, Cassandra jars, firmware toolchain"

# The Debian packages first (one apt at a time), then the parts side by side: compiling better-sqlite3 keeps one core
# busy for about a minute while the venv, Maven and Ivy mostly read their caches. Each part's output is shown whole.
setup: system-packages
	@$(MAKE) --no-print-directory -j3 --output-sync=target setup-parts

setup-parts: python-env node-env cassandra-jars firmware-setup analytics-setup powercutfs

powercutfs:
	@$(MAKE) --no-print-directory -C gateway/conformance/powercutfs

firmware-setup:
	@$(MAKE) --no-print-directory -C firmware setup

# The connector's resolution runs the venv's pyspark: after python-env, never beside it.
analytics-setup: python-env
	@$(MAKE) --no-print-directory -C analytics setup

system-packages:
	@deploy/setup/debian-packages $(DEBIAN_PACKAGES)

python-env: $(VENV)/.installed

# Exact pins from requirements.lock, no resolver surprises (--no-deps), then `pip check` proves the lock is complete.
# Lock files: requirements.lock (gateway, schema, tests) and one per part that needs more (analytics: Spark).
LOCK_FILES := requirements.lock $(wildcard analytics/requirements.lock)

# The repo's own Python packages, each a folder with a pyproject.toml, installed editable (tests and tools import
# them by name; none is found through a path).
PY_PACKAGES := lib/telemetry_cassandra lib/telemetry_chromium gateway/python firmware/board_sim schema gateway/conformance analytics analytics/kit

$(VENV)/.installed: $(LOCK_FILES) $(addsuffix /pyproject.toml,$(PY_PACKAGES))
	@test -x $(PYTHON) || python3 -m venv $(VENV)
	@$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps $(addprefix -r ,$(LOCK_FILES))
	@# The editable install builds with the pinned setuptools already in the venv, not an unpinned download.
	@$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation $(addprefix -e ,$(PY_PACKAGES))
	@$(PYTHON) -m pip check >/dev/null || { $(PYTHON) -m pip check; exit 1; }
	@touch $@
	@echo "Python environment ready in $(VENV)"

node-env: $(NODE_GATEWAY)/node_modules/.installed

# The Node gateway's packages, exactly as package-lock.json says (npm ci), engine-strict (.npmrc). better-sqlite3
# builds from source against Node's headers in /usr/include/node (npm_config_nodedir=/usr).
$(NODE_GATEWAY)/node_modules/.installed: $(NODE_GATEWAY)/package.json $(NODE_GATEWAY)/package-lock.json | system-packages
	@major=$$(node -p 'process.versions.node.split(".")[0]'); (( major >= 20 )) || { \
		echo "The Node gateway needs Node >= 20; this node is $$(node --version) (Debian 12's nodejs is 18:" \
		"install nodejs 20 from NodeSource, npm included)" >&2; exit 1; }
	@cd $(NODE_GATEWAY) && npm_config_nodedir=/usr npm ci --no-audit --no-fund --loglevel=error
	@touch $@
	@echo "Node packages ready in $(NODE_GATEWAY)/node_modules"

cassandra-jars:
	@$(CASSANDRA) fetch

# Firmware host and simulator tests first (C++, its sketch variants built side by side on every core), the Node
# gateway's unit and vector tests (seconds), then
# every Python suite (gateway, conformance, schema, launcher, firmware-on-a-pty) against the real local Cassandra,
# then the cluster suites in a session of their own: one 3-node cluster and Spark master for all of them, on
# 127.0.0.1-3 (the single node, which also answers on 127.0.0.1, is stopped meanwhile).
# CI=true (or 1): a skipped (or todo) test fails the run, in pytest (conftest.py) and node:test (ci-reporter.js).
test: setup
	@$(MAKE) --no-print-directory -j$(shell nproc) -C firmware test
	@node --test --test-reporter=./$(NODE_GATEWAY)/test-support/ci-reporter.js $(NODE_GATEWAY)/test/
	@$(PYTHON) -m pytest
	@$(PYTHON) -m pytest deploy/cluster/tests -m "not slow"

# Cluster operations that take minutes each: repair after lost hints, replacing a dead node, adding a fourth node.
test-slow: setup
	@$(PYTHON) -m pytest deploy/cluster/tests -m slow

demo: setup
	@deploy/demo/run

clean:
	rm -rf .pytest_cache .hypothesis
	find . -name __pycache__ -prune -exec rm -rf {} +

# Also removes the local Cassandra's data.
distclean: clean
	-deploy/cluster/down
	-$(CASSANDRA) stop
	rm -rf $(VENV) .state
