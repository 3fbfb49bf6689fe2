# Attest: `make run` serves a demo instance, `make test` runs the suite, `make lint` runs ruff.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-fast lint format install demo worker clean

$(STAMP): requirements.txt requirements-dev.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

# Embedded default: SQLite under var/, a filesystem Celery broker and a worker beside the
# web server; no Redis or PostgreSQL needed. Ctrl-C stops both.
run: export DEBUG ?= 1
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	@echo "Serving http://$(HOST):$(PORT)/ (worker running beside it; Ctrl-C stops both)"
	@trap 'kill 0' INT TERM EXIT; \
	$(BIN)/celery -A annotation worker --pool=solo --beat --loglevel=warning & \
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

worker: $(STAMP)
	$(BIN)/celery -A annotation worker --loglevel=info

test: $(STAMP)
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not browser"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf var/ $(VENV)
