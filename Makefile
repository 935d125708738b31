# Fleet Placement Dashboard: `make run` for a local site with the demo hub, `make test` for CI.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MANAGE := $(BIN)/python manage.py
# Stamps: reinstall only when a requirements file changes.
RUNTIME_STAMP := $(VENV)/.installed-runtime
DEV_STAMP := $(VENV)/.installed-dev

export PIP_DISABLE_PIP_VERSION_CHECK := 1

# Creates the dev superuser only when there is no superuser at all.
define CREATE_DEV_SUPERUSER
from django.contrib.auth import get_user_model
User = get_user_model()
if User.objects.filter(is_superuser=True).exists():
    print("A superuser already exists; log in with it.")
else:
    User.objects.create_superuser("admin", "admin@example.com", "admin")
    print("Dev superuser created: username admin, password admin")
endef
export CREATE_DEV_SUPERUSER

# The live demo hub `make run` starts and registers as hub "demo".
DEMO_HUB_PORT ?= 8001
DEMO_HUB_URL := http://127.0.0.1:$(DEMO_HUB_PORT)
# Polls the demo hub's /readyz for up to 30 s.
define WAIT_FOR_DEMO_HUB
import sys, time, urllib.request
for _ in range(150):
    try:
        urllib.request.urlopen(sys.argv[1] + "/readyz", timeout=1)
        break
    except OSError:
        time.sleep(0.2)
else:
    sys.exit("the demo hub did not answer within 30 s")
endef
export WAIT_FOR_DEMO_HUB

# .env for `make up`: .env.example with a fresh SECRET_KEY and credentials key filled in.
define WRITE_DOTENV
import secrets, sys
from cryptography.fernet import Fernet
fresh = {"SECRET_KEY": secrets.token_urlsafe(50), "FLEETUI_CREDENTIALS_KEY": Fernet.generate_key().decode()}
lines = []
for line in open(".env.example"):
    name = line.split("=", 1)[0]
    lines.append(f"{name}={fresh[name]}\n" if name in fresh and line.strip() == f"{name}=" else line)
open(sys.argv[1], "w").write("".join(lines))
print(f"wrote {sys.argv[1]} (from .env.example, with a new SECRET_KEY and FLEETUI_CREDENTIALS_KEY)")
endef
export WRITE_DOTENV

# Creates the PostgreSQL database DATABASE_URL names when it does not exist yet.
define CREATE_DATABASE
import os, sys
import dj_database_url, psycopg
from psycopg import sql
config = dj_database_url.parse(os.environ["DATABASE_URL"])
if "postgresql" not in config["ENGINE"]:
    sys.exit(0)
params = dict(host=config["HOST"] or None, port=config["PORT"] or None, user=config["USER"] or None,
              password=config["PASSWORD"] or None, dbname="postgres", autocommit=True)
with psycopg.connect(**{k: v for k, v in params.items() if v is not None}) as conn:
    if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]).fetchone():
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(config["NAME"])))
        print(f"created database {config['NAME']}")
endef
export CREATE_DATABASE

# Polls a URL for up to 60 s (`make up` waits for the site's /healthz).
define WAIT_FOR_URL
import sys, time, urllib.request
for _ in range(300):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=1)
        break
    except OSError:
        time.sleep(0.2)
else:
    sys.exit(f"{sys.argv[1]} did not answer within 60 s; see {sys.argv[2]}")
endef
export WAIT_FOR_URL

# Overridable so a test can bring up a second, separate topology.
DOTENV ?= .env
UP_PID ?= var/up.pid
UP_LOG ?= var/up.log
# The project's own PostgreSQL and Redis (scripts/services), and the settings file it writes.
SERVICES ?= scripts/services
SERVICES_ENV ?= var/services/env

.PHONY: run worker beat watch up down test lint services services-stop oracle conformance realhub-bin test-realhub

# axe-core, which the browser tests inject into pages to check accessibility, pinned in package-lock.json.
AXE := node_modules/axe-core/axe.min.js

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUNTIME_STAMP): requirements.txt | $(BIN)/python
	$(BIN)/pip install -r requirements.txt
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install -r requirements-dev.txt
	touch $@ $(RUNTIME_STAMP)

# The demo hub, registered, synced and given the first-look placements (demo_setup: a staged update run
# waiting for approval, a rolling update in progress, unavailable clusters, a placement short of
# clusters), its watch and the in-process periodic runner (the beat schedule without a broker: timed
# steps of staged update runs and rolling updates among it) run in the background and are stopped when
# `make run` exits.
run: export DEBUG := 1
run: $(RUNTIME_STAMP)
	$(MANAGE) migrate --noinput
	$(MANAGE) shell --no-imports -c "$$CREATE_DEV_SUPERUSER"
	@set -e; \
	$(MANAGE) demo_hub --port $(DEMO_HUB_PORT) --clusters 200 --fleet --churn-per-minute 12 & hub=$$!; \
	watcher=; runner=; trap 'kill $$hub $$watcher $$runner 2>/dev/null || true' EXIT INT TERM; \
	$(BIN)/python -c "$$WAIT_FOR_DEMO_HUB" $(DEMO_HUB_URL); \
	$(MANAGE) demo_setup --hub demo --server $(DEMO_HUB_URL); \
	$(MANAGE) watch_hubs demo & watcher=$$!; \
	$(MANAGE) run_periodic & runner=$$!; \
	echo "Fleet Placement Dashboard: http://127.0.0.1:8000/ (demo hub at $(DEMO_HUB_URL))"; \
	$(MANAGE) runserver 127.0.0.1:8000

# With CELERY_BROKER_URL (and DATABASE_URL on PostgreSQL) set: the worker, the periodic scheduler, the watches.
worker: $(RUNTIME_STAMP)
	$(BIN)/celery -A fleetui worker --loglevel INFO

beat: $(RUNTIME_STAMP)
	mkdir -p var
	$(BIN)/celery -A fleetui beat --loglevel INFO --schedule var/celerybeat-schedule

watch: $(RUNTIME_STAMP)
	$(MANAGE) watch_hubs

$(DOTENV): | $(RUNTIME_STAMP)
	$(BIN)/python -c "$$WRITE_DOTENV" $@

# The production topology without containers (Procfile): gunicorn, two workers, beat, the hub watcher,
# against the PostgreSQL and Redis named in .env, or the project's own (make services) where .env names
# none; logs in var/up.log. `make down` stops them.
up: $(RUNTIME_STAMP) $(DOTENV)
	@if [ -f $(UP_PID) ] && kill -0 $$(cat $(UP_PID)) 2>/dev/null; then \
		echo "already up (pid $$(cat $(UP_PID))); make down first"; exit 1; fi
	@set -e; mkdir -p var; envs=$(DOTENV); \
	named=$$($(BIN)/honcho --env $(DOTENV) run sh -c '[ -n "$$DATABASE_URL" ] && [ -n "$$CELERY_BROKER_URL" ] && echo yes || true'); \
	if [ "$$named" != yes ]; then \
		echo "$(DOTENV) names no DATABASE_URL or CELERY_BROKER_URL: using the project's own services"; \
		$(SERVICES) start; envs=$(SERVICES_ENV),$(DOTENV); fi; \
	honcho="$(BIN)/honcho --env $$envs"; \
	$$honcho run $(BIN)/python -c "$$CREATE_DATABASE"; \
	$$honcho run $(MANAGE) migrate --noinput; \
	$$honcho run $(MANAGE) collectstatic --noinput -v 0; \
	nohup $$honcho start -f Procfile > $(UP_LOG) 2>&1 & echo $$! > $(UP_PID); \
	bind=$$($$honcho run sh -c 'echo $${WEB_BIND:-127.0.0.1:8000}'); \
	$(BIN)/python -c "$$WAIT_FOR_URL" "http://$$bind/healthz" $(UP_LOG); \
	echo "up: http://$$bind/ (processes: web, worker1, worker2, beat, watch; log $(UP_LOG); make down stops)"

down:
	@if [ ! -f $(UP_PID) ]; then echo "not up"; exit 0; fi
	@pid=$$(cat $(UP_PID)); kill -TERM $$pid 2>/dev/null || true; \
	for _ in $$(seq 1 100); do kill -0 $$pid 2>/dev/null || break; sleep 0.2; done; \
	kill -0 $$pid 2>/dev/null && kill -KILL $$pid; rm -f $(UP_PID); echo "down"

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	DEBUG=1 DATABASE_URL=sqlite:///:memory: $(MANAGE) makemigrations --check --dry-run
	DEBUG=1 $(BIN)/mypy

$(AXE): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# Starts (or reuses) the project's own PostgreSQL and Redis; `make test` and `make up` then use them.
services:
	$(SERVICES) start

services-stop:
	$(SERVICES) stop

# The tests use the services `make services` started unless the environment names its own; without
# any, the tests that need PostgreSQL, Redis or Chromium skip with the reason (CI fails them instead).
# They run in PYTEST_WORKERS pytest-xdist workers (0: in this process), each with its own test database
# and Redis database (tests/conftest.py); each test file stays on one worker, so a file's module-scoped
# browser or server starts once and the `make up` tests, which share one separate database, never
# overlap.
PYTEST_WORKERS ?= 2
test: lint $(AXE)
	@if [ -z "$$DATABASE_URL$$CELERY_BROKER_URL" ] && [ -f $(SERVICES_ENV) ]; then \
		if $(SERVICES) status >/dev/null 2>&1; then set -a; . "$(abspath $(SERVICES_ENV))"; set +a; \
			echo "make test: PostgreSQL and Redis from $(SERVICES_ENV)"; \
		else echo "make test: $(SERVICES_ENV) names services that do not answer (make services)"; fi; \
	fi; \
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile -m "not realhub" $(PYTEST_ARGS)

# Differential testing against the upstream OCM and KubeFleet schedulers (conformance/README.md): CASES
# random cases per family from SEED (a fresh seed when empty; the run prints it first), each disagreement
# shrunk and appended to tests/vectors/regressions/. `make oracle` builds only the Go oracle, and only
# when a Go source changed (Go's build and module caches make a rebuild cheap).
CASES ?= 2000
SEED ?=

oracle: $(RUNTIME_STAMP)
	$(BIN)/python -c "from conformance.oracle import build; build()"

conformance: oracle
	$(BIN)/python -m conformance --cases $(CASES) $(if $(SEED),--seed $(SEED)) --write-regressions

# A real hub for the tests, built from the upstream modules conformance/go.mod pins (no prebuilt downloads):
# kube-apiserver, etcd and the OCM placement controller in var/realhub/bin/, each built only when missing or
# older than go.mod/go.sum (conformance/realhub.py). `python -m conformance.realhub crds` lists the OCM and
# KubeFleet CRD manifests in the module cache.
realhub-bin: $(RUNTIME_STAMP)
	$(BIN)/python -m conformance.realhub build

# The tests marked `realhub` (tests/realhub/, and the real half of the hub contract tests), which `make test`
# leaves out: they need the binaries above.
test-realhub: realhub-bin $(DEV_STAMP)
	$(BIN)/pytest -m realhub tests/realhub tests/demohub/test_contract.py $(PYTEST_ARGS)
