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

.PHONY: run worker beat watch test lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUNTIME_STAMP): requirements.txt | $(BIN)/python
	$(BIN)/pip install -r requirements.txt
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install -r requirements-dev.txt
	touch $@ $(RUNTIME_STAMP)

# The demo hub and its watch run in the background and are stopped when `make run` exits.
run: export DEBUG := 1
run: $(RUNTIME_STAMP)
	$(MANAGE) migrate --noinput
	$(MANAGE) shell --no-imports -c "$$CREATE_DEV_SUPERUSER"
	@set -e; \
	$(MANAGE) demo_hub --port $(DEMO_HUB_PORT) --clusters 200 --fleet --churn-per-minute 12 & hub=$$!; \
	watcher=; trap 'kill $$hub $$watcher 2>/dev/null || true' EXIT INT TERM; \
	$(BIN)/python -c "$$WAIT_FOR_DEMO_HUB" $(DEMO_HUB_URL); \
	$(MANAGE) hubs add demo --server $(DEMO_HUB_URL) --fleet; \
	$(MANAGE) sync_hubs demo; \
	$(MANAGE) watch_hubs demo & watcher=$$!; \
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

lint: $(DEV_STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/pytest
