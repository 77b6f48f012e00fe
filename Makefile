# EnvFoundry: `make run` builds the default dataset offline; `make test` runs the whole suite,
# `make test-fast` its fast tier (no builds, containers or databases: the inner loop).
# Both create .venv themselves from the lock file, so a fresh clone needs only Python 3.11.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOME_DIR ?= $(CURDIR)/var
# BFCL's multi-turn backends (foreign environments), installed without their heavy requirements.
BFCL   := bfcl-eval==2026.3.23
# What tau2-bench's toolkits import beyond the lock (pyproject.toml's `tau2` extra).
TAU2   := loguru==0.7.3 addict==2.4.0 toml==0.10.2

export DO_NOT_TRACK := 1

.PHONY: run test test-fast ui validate bench lint clean install sandbox screenshots docs \
	deploy-local deploy-down

install: $(STAMP)

# The lock pins every data-generating dependency (Faker, numpy, …): same seed, same bytes.
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.lock
	$(BIN)/python -m pip install -q --no-deps -e .
	$(BIN)/python -m pip install -q --no-deps $(BFCL)
	$(BIN)/python -m pip install -q --no-deps $(TAU2)
	touch $(STAMP)

run: $(STAMP) sandbox
	$(BIN)/envfoundry build --profile default --home $(HOME_DIR)

# Code we did not compile (foreign classes, LLM-written code) only runs under bubblewrap:
# install it when we can (root with apt, as CI does), else say how. Our own compiled
# environments also run without it.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) \
			|| echo "could not install bubblewrap; foreign environments will be refused"; \
		else \
			echo "bubblewrap (bwrap) is missing: foreign environments will be refused until you"; \
			echo "install it (Debian/Ubuntu: sudo apt-get install bubblewrap)"; \
		fi; }

# Four workers on two cores, a module each at a time (tests/conftest.py says why and in which
# order): the heavy tests mostly wait on builds, containers, servers and deadlines, and two
# more workers use the cores meanwhile. TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS ?= 4
PYTEST := $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: $(STAMP)
	$(PYTEST)

# The tests not marked slow, in a few minutes: no build, no container, no database
# (tests/conftest.py says how the tiers are kept apart).
test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

# The UI on the instance `envfoundry build` records into, with the last build's profile and
# seed (PORT=3001 make ui to move it).
PORT ?= 3000
ui: $(STAMP)
	$(BIN)/envfoundry ui --home $(HOME_DIR) --port $(PORT)

# The README's pictures of the UI, from a fresh tiny build (skipped, saying why, without
# Chromium).
screenshots: $(STAMP)
	$(BIN)/python docs/screenshots.py --out docs/images

# docs/llm-stages.md: each LLM stage's role, answer schema and prompt, and the LLM settings,
# generated from synthesis/llm/stages.py (a test fails when the committed page is stale).
docs: $(STAMP)
	$(BIN)/python -m synthesis.llm.stages > docs/llm-stages.md

# A deployment on this machine (docs/deployment.md): a Docker engine and the base
# image, Postgres, the code-location image, the Dagster webserver and daemon on a
# Postgres-backed instance, then a build whose runs DockerRunLauncher starts in containers.
# `make deploy-down` stops it. DEPLOY_EXECUTOR=docker puts each step in a container too.
DEPLOY_HOME     ?= $(CURDIR)/var/deploy
DEPLOY_PROFILE  ?= tiny
DEPLOY_SEED     ?= 0
DEPLOY_EXECUTOR ?= in_process
DEPLOY_PORT     ?= 3070
WHEELS_DIR      ?= $(HOME)/.cache/envfoundry/wheels
DEPLOY_SETTINGS = BIN=$(abspath $(BIN)) BFCL=$(BFCL) DEPLOY_HOME=$(DEPLOY_HOME) \
	DEPLOY_PROFILE=$(DEPLOY_PROFILE) DEPLOY_SEED=$(DEPLOY_SEED) \
	DEPLOY_EXECUTOR=$(DEPLOY_EXECUTOR) DEPLOY_PORT=$(DEPLOY_PORT) WHEELS_DIR=$(WHEELS_DIR)

deploy-local: $(STAMP)
	$(DEPLOY_SETTINGS) bash deploy/local.sh up

deploy-down:
	$(DEPLOY_SETTINGS) bash deploy/local.sh down

validate: $(STAMP)
	ENVFOUNDRY_HOME=$(HOME_DIR) $(BIN)/dagster definitions validate -w workspace.yaml

bench: $(STAMP)
	$(BIN)/python benchmarks/sandbox.py
	$(BIN)/python benchmarks/sandbox_reuse.py
	$(BIN)/python benchmarks/pipeline.py
	$(BIN)/python benchmarks/text_variety.py
	$(BIN)/python benchmarks/catalogue_breadth.py
	$(BIN)/python benchmarks/ui_vs_cli.py
	$(BIN)/python benchmarks/run_launch.py
	$(BIN)/python benchmarks/llm_throughput.py
	$(BIN)/python benchmarks/rollouts.py
	$(BIN)/python benchmarks/incremental.py

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var dbt_project/target dbt_project/logs
