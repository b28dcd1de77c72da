# learntorch: the README's two commands and the steps they share.
#
#   make lab     install what a learner needs, then open the course (chapters/) in JupyterLab
#   make test    install everything (the test machinery too), then run every test
#
# Both can be repeated: once installed, nothing is installed again until
# pyproject.toml changes, so the second run starts at once.  `make help` lists
# the other targets and the variables you can set (make test PYTEST_ARGS="-x").

SHELL := /bin/bash
.DEFAULT_GOAL := help

# --- Python and the virtual environment ------------------------------------
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Two installs (pyproject.toml's extras): a learner's, and the tests' (a superset of it).
LAB_EXTRAS ?= lab
TEST_EXTRAS ?= test
# Written after a successful install; a stamp is newer than pyproject.toml exactly when
# there is nothing left to install.  Its name lists the top-level packages, because
# an editable install only knows the packages that existed when it ran: a new one
# (widgets/, course/) changes the name and so triggers one re-install.  The tests'
# install renews the learner's stamp too: it installed all of that.
TOP_PACKAGES := $(sort $(patsubst %/__init__.py,%,$(wildcard */__init__.py)))
empty :=
space := $(empty) $(empty)
PACKAGES_TAG := $(subst $(space),+,$(TOP_PACKAGES))
LAB_STAMP := $(VENV)/.installed-lab-$(PACKAGES_TAG)
TEST_STAMP := $(VENV)/.installed-test-$(PACKAGES_TAG)
# PyTorch is only the test oracle (the `oracle` extra, pinned to 2.13.0), and `make lab`
# never installs it.  Which build pip takes is the package index's choice: on Linux,
# PyPI's is the multi-GB CUDA build; PyTorch's CPU index gives the ~200 MB CPU build:
#   make test TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
PIP_INDEX_ARGS := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))

# --- Debian/Ubuntu packages ------------------------------------------------
# graphviz: `dot` draws the autograd graphs in the widgets.
# bubblewrap: `bwrap`, the sandbox `learntorch-course grade` runs each submission in
# (a few hundred KB; the grading tests need it).
# chromium: the browser tests (part of `make test`) drive JupyterLab in it; about
# 300 MB, so `make lab` leaves it out.  WITH_CHROMIUM=0 or 1 overrides that.
WITH_CHROMIUM ?= $(if $(filter test,$(MAKECMDGOALS)),1,0)
APT_PACKAGES := graphviz
ifeq ($(WITH_CHROMIUM),1)
APT_PACKAGES += chromium
endif
APT_PACKAGES += bubblewrap
# Debian ships `python3 -m venv` separately (python3-venv); ask for it only when missing.
APT_PACKAGES += $(shell $(PYTHON) -c "import ensurepip, venv" >/dev/null 2>&1 || echo $(notdir $(PYTHON))-venv)

# --- Numba's compiled-kernel cache -----------------------------------------
# Inside the repository (and git-ignored), so the second run of anything starts warm.
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache

# --- pytest ------------------------------------------------------------------
# Two worker processes (pytest-xdist) for the two cores CI has; 0 runs in one process.
PYTEST_WORKERS ?= 2
PYTEST_ARGS ?=
# the whole suite's session lists its slowest tests at the end: where CI's time goes
PYTEST_DURATIONS ?= --durations=25
# After the whole suite, `make check` runs the oracle suite (ops, autograd, nn, optim and a
# training run, compared with PyTorch) once more in the reference tier (LEARNTORCH_REFERENCE=1:
# the engine exactly as written, numpy backend), so that what a learner reads is proven too;
# tests/compiler too: compiled programs must equal that engine as well.
REFERENCE_TESTS ?= tests/ops tests/autograd tests/nn tests/optim tests/compiler tests/test_end_to_end_digits.py

# --- the oracle op tests through learntorch.compile -----------------------------
# `make check` also runs tests/ops with learntorch's side of every oracle program compiled
# (pytest --through-compile: tests/compiler/through_compile.py) by these backends and checked
# against eager -- every test, a few hypothesis examples each (HYPOTHESIS_PROFILE=compile);
# `make compile-oracle` runs all the examples.
COMPILE_ORACLE_BACKENDS ?= numba,reference,eager

# --- benchmarks --------------------------------------------------------------
BENCH_ARGS ?= --markdown BENCHMARKS.md

# --- the differential fuzzer (tests/fuzz) ----------------------------------
# `make test` runs its fast profile; `make fuzz` the long one: FUZZ_EXAMPLES programs per
# area (all areas, or those named in FUZZ_AREAS); another FUZZ_SEED draws other programs;
# FUZZ_MINUTES stops it early (after the batch that passes it).
FUZZ_EXAMPLES ?= 2000
FUZZ_AREAS ?=
FUZZ_SEED ?= 0
FUZZ_MINUTES ?=
FUZZ_ARGS := --examples $(FUZZ_EXAMPLES) --seed $(FUZZ_SEED) $(foreach a,$(FUZZ_AREAS),--area $(a)) \
	$(if $(FUZZ_MINUTES),--minutes $(FUZZ_MINUTES))

# --- JupyterLab --------------------------------------------------------------
# Served on this machine only.  On a remote or headless machine, for example:
#   make lab LAB_IP=0.0.0.0 LAB_ARGS=--no-browser
LAB_IP ?= 127.0.0.1
LAB_PORT ?= 8888
LAB_ARGS ?=
# Jupyter refuses to run as root unless told that it is meant.
LAB_ROOT_ARG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: help system-deps venv venv-lab lab test check compile-oracle bench fuzz api-table clean distclean

help:
	@echo "make lab          install what a learner needs ($(LAB_EXTRAS)), open the course (chapters/) in JupyterLab"
	@echo "make test         install everything ($(TEST_EXTRAS)), run every test"
	@echo "make venv-lab     create $(VENV) with learntorch and its extras for learners ($(LAB_EXTRAS))"
	@echo "make venv         create $(VENV) with learntorch and every extra ($(TEST_EXTRAS))"
	@echo "make system-deps  install the Debian/Ubuntu packages: $(strip $(APT_PACKAGES))"
	@echo "make check        run the tests only, installing nothing (PYTEST_ARGS=tests/ops)"
	@echo "make compile-oracle  the op tests (tests/ops) through learntorch.compile, every example"
	@echo "make bench        run the benchmarks, write BENCHMARKS.md (BENCH_ARGS='$(BENCH_ARGS)')"
	@echo "make fuzz         the long differential fuzz run against PyTorch (FUZZ_EXAMPLES per area)"
	@echo "make api-table    regenerate docs/api.md from the code"
	@echo "make clean        remove caches and build files (keeps $(VENV)); distclean removes it too"
	@echo "Variables: PYTHON=$(PYTHON) WITH_CHROMIUM=$(WITH_CHROMIUM) PYTEST_WORKERS=$(PYTEST_WORKERS)"
	@echo "  PYTEST_ARGS='$(PYTEST_ARGS)' LAB_IP=$(LAB_IP) LAB_PORT=$(LAB_PORT) LAB_ARGS='$(LAB_ARGS)'"
	@echo "  TORCH_INDEX='$(TORCH_INDEX)' NUMBA_CACHE_DIR=$(NUMBA_CACHE_DIR)"

system-deps:
	@bash scripts/system_deps.sh $(APT_PACKAGES)

venv-lab: $(LAB_STAMP)

venv: $(TEST_STAMP)

# the virtual environment itself, with a Python that is new enough
define make_venv
	@$(PYTHON) -c "import sys; sys.exit(sys.version_info < (3, 11))" 2>/dev/null || { \
	  echo "learntorch needs Python >= 3.11, and '$(PYTHON)' is $$($(PYTHON) --version 2>&1)." >&2; \
	  echo "  Install a newer Python and run: make $(MAKECMDGOALS) PYTHON=python3.11" >&2; exit 1; }
	@if ! $(PY) -m pip --version >/dev/null 2>&1; then \
	  echo "creating the virtual environment $(VENV)"; \
	  $(PYTHON) -m venv $(VENV) || { \
	    echo "'$(PYTHON) -m venv' failed. On Debian/Ubuntu: sudo apt-get install -y $(notdir $(PYTHON))-venv" >&2; \
	    exit 1; }; \
	fi
	$(PY) -m pip install --quiet --upgrade pip
endef

$(LAB_STAMP): pyproject.toml | system-deps
	$(make_venv)
	$(PY) -m pip install --quiet -e ".[$(LAB_EXTRAS)]"
	@rm -f $(VENV)/.installed-lab-* && touch $@

$(TEST_STAMP): pyproject.toml | system-deps
	$(make_venv)
	$(PY) -m pip install --quiet $(PIP_INDEX_ARGS) -e ".[$(TEST_EXTRAS)]"
	@rm -f $(VENV)/.installed-* && touch $@ $(LAB_STAMP)

lab: venv-lab
	$(VENV)/bin/jupyter lab --ip=$(LAB_IP) --port=$(LAB_PORT) $(LAB_ROOT_ARG) $(LAB_ARGS) chapters/

test: venv
	@$(MAKE) --no-print-directory check

# The tests alone, in the environment as it is (no install step); for example
#   make check PYTEST_ARGS=tests/ops PYTEST_WORKERS=0
# pytest exits 5 when it collected no test: a failure here too, and it says why.
check:
	@echo "running the tests (NUMBA_CACHE_DIR=$(NUMBA_CACHE_DIR))"
	@rc=0; $(PY) -m pytest -n $(PYTEST_WORKERS) $(if $(PYTEST_ARGS),,$(PYTEST_DURATIONS)) $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then \
	  echo "make: FAILED: pytest collected no tests (exit code 5). Check that tests/ is" \
	       "there and that PYTEST_ARGS='$(PYTEST_ARGS)' selects some." >&2; \
	fi; \
	if [ $$rc -eq 0 ] && [ -z "$(PYTEST_ARGS)" ]; then \
	  echo "running the oracle suite in the reference tier (LEARNTORCH_REFERENCE=1)"; \
	  LEARNTORCH_REFERENCE=1 $(PY) -m pytest -n $(PYTEST_WORKERS) $(REFERENCE_TESTS) || rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make: FAILED: the reference-tier session collected no tests" >&2; fi; \
	fi; \
	if [ $$rc -eq 0 ] && [ -z "$(PYTEST_ARGS)" ]; then \
	  echo "running the op tests through learntorch.compile ($(COMPILE_ORACLE_BACKENDS)), a few examples each"; \
	  HYPOTHESIS_PROFILE=compile $(PY) -m pytest -n $(PYTEST_WORKERS) tests/ops \
	    --through-compile=$(COMPILE_ORACLE_BACKENDS) || rc=$$?; \
	fi; \
	exit $$rc

# Every oracle program of tests/ops through learntorch.compile, all the examples (long); e.g.
#   make compile-oracle COMPILE_ORACLE_BACKENDS=numba PYTEST_ARGS=tests/ops/test_pointwise_unary.py
compile-oracle: venv
	$(PY) -m pytest -n $(PYTEST_WORKERS) --through-compile=$(COMPILE_ORACLE_BACKENDS) \
	  $(if $(PYTEST_ARGS),$(PYTEST_ARGS),tests/ops)

# The benchmarks write their report to BENCHMARKS.md; for a quick sanity run:
#   make bench BENCH_ARGS=--quick
bench: venv
	$(PY) -m benchmarks $(BENCH_ARGS)

# prints the cases run per area and the mismatches by class; exits 1 on a silent wrong value
fuzz: venv
	$(PY) tests/fuzz/campaign.py $(FUZZ_ARGS)

api-table: venv
	$(PY) scripts/api_table.py

clean:
	rm -rf .numba_cache .pytest_cache .hypothesis build dist test-artifacts *.egg-info
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
