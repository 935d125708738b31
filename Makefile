# Fleet Placement Dashboard: `make run` for a local site with the demo fleet, `make test` for CI.
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

.PHONY: run test lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUNTIME_STAMP): requirements.txt | $(BIN)/python
	$(BIN)/pip install -r requirements.txt
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install -r requirements-dev.txt
	touch $@ $(RUNTIME_STAMP)

run: export DEBUG := 1
run: $(RUNTIME_STAMP)
	$(MANAGE) migrate --noinput
	$(MANAGE) load_demo
	$(MANAGE) shell --no-imports -c "$$CREATE_DEV_SUPERUSER"
	@echo "Fleet Placement Dashboard: http://127.0.0.1:8000/"
	$(MANAGE) runserver 127.0.0.1:8000

lint: $(DEV_STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/pytest
