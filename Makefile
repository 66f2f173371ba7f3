# GeAR Studio — two commands on a fresh machine:
#   make run    install everything into .venv and start the app on the bundled demo (no API key, no server)
#   make test   install everything into .venv and run the whole test suite (lint, unit, integration, browser)
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
PORT ?= 8501
DEPS_STAMP := $(VENV)/.deps-stamp
DEV_STAMP := $(VENV)/.dev-stamp
LLM_STAMP := $(VENV)/.llm-stamp

.PHONY: run test install install-dev llm browser lint unit integration e2e bench clean-venv

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# torch first: the local CPU build; later packages then find it satisfied and pull no CUDA wheels
$(DEPS_STAMP): requirements.txt pyproject.toml | $(PY)
	$(PIP) install torch==2.13.0
	$(PIP) install -r requirements.txt
	$(PIP) install --no-deps -e .
	touch $@

$(DEV_STAMP): requirements-dev.txt $(DEPS_STAMP)
	$(PIP) install -r requirements-dev.txt
	touch $@

# the embedded model: llama.cpp's llama-server built from pinned source (cached in ~/.cache/gear) and the GGUF
$(LLM_STAMP): scripts/install_local_llm.sh scripts/build_llama_server.sh scripts/llama_glue_o1.cmake $(DEPS_STAMP)
	bash scripts/install_local_llm.sh $(PY)
	touch $@

install: $(DEPS_STAMP)
install-dev: $(DEV_STAMP)
llm: $(LLM_STAMP)

# Debian's Chromium for the browser tests (never `playwright install`: its download cannot work offline)
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver fonts-liberation >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver fonts-liberation >/dev/null; fi; \
	fi
	@/usr/bin/chromium --version

run: $(DEPS_STAMP) $(LLM_STAMP)
	$(PY) -m streamlit run app.py --server.port $(PORT) --server.address 127.0.0.1 --server.headless true \
	  --browser.gatherUsageStats false

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

unit: $(DEV_STAMP)
	$(PY) -m pytest tests/unit -q

test: $(DEV_STAMP) $(LLM_STAMP) browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	GEAR_REQUIRE_LOCAL_LLM=1 $(PY) -m pytest tests -q --timeout 1200 --durations=25

bench: $(DEPS_STAMP)
	$(PY) bench/expand.py

clean-venv:
	rm -rf $(VENV)
