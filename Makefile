# Each target installs what it needs into .venv first (Python 3.11).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: dev test test-fast lint bench bench-quick screenshots clean wheel image images deploy-check

# Editable install in compat mode: a path entry instead of an import hook, which cost every
# process (CLI, API worker, RQ worker) about 20 ms at start.
$(STAMP): setup.cfg pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# The distribution was once named "herald" (a name the public index gives another
	@# project): a venv made before the rename drops it, and its metadata in the checkout.
	$(BIN)/python -m pip uninstall --quiet --yes herald 2>/dev/null || true
	rm -rf herald.egg-info
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres]' --config-settings editable_mode=compat \
		|| $(BIN)/python -m pip install --quiet -e '.[dev,postgres]'
	touch $(STAMP)

dev: $(STAMP)
	$(BIN)/herald dev

# The suite waits more than it computes (real servers, processes, a browser): three test
# processes (pytest-xdist) on two cores, each module's tests in one process, each process
# with its own database and Redis (docs/testing.md). TEST_PROCESSES=0 runs in this process.
TEST_PROCESSES ?= 3
XDIST = $(if $(filter 0,$(TEST_PROCESSES)),,-n $(TEST_PROCESSES) --dist loadfile)

test: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) $(PYTEST_ARGS)

# The edit-run loop: everything but the tests marked slow (real processes for seconds).
test-fast: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) -m "not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# The docs' screenshots, taken by the browser tests' Chromium (docs/images/).
screenshots: $(STAMP)
	$(BIN)/python -m pytest tests/web/screenshots.py -q

# Every figure beside its floor (docs/performance.md): about ten minutes on 2 cores.
bench: $(STAMP)
	$(BIN)/python -m bench

# The edit-measure loop: send, preview, delivery and the editor's preview, fewer rounds.
bench-quick: $(STAMP)
	$(BIN)/python -m bench --quick

# The distribution (herald-notification-service) as a wheel in dist/: what a VM installs
# (docs/deploy.md) and the image holds. Only pip is needed, not the dev install.
wheel:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	rm -rf build dist
	$(BIN)/python -m pip wheel --quiet --no-deps --wheel-dir dist .
	@ls dist/*.whl

# Container images, built here with podman and no registry (docs/deploy.md): a Debian base
# made by mmdebstrap from this host's apt sources, then Herald's image on it (IMAGE_BASE=
# python:3.11-slim where a registry is reachable). The host's CA bundle is mounted for pip
# during the build only. deploy/podman/containers.conf picks runc (crun refuses hybrid
# cgroups on some hosts) unless CONTAINERS_CONF is already set. RUN steps use the host's
# network: name resolution through the build network's NAT failed now and then on CI's kind
# of machine, and a flaky build would block every merge.
IMAGE_BASE ?= localhost/herald-debian:bookworm
# Each image is also tagged with the release (setup.cfg's version), to pin and roll back to.
VERSION := $(shell sed -n 's/^version = //p' setup.cfg)
HOST_CA ?= /etc/ssl/certs/ca-certificates.crt
export CONTAINERS_CONF ?= $(CURDIR)/deploy/podman/containers.conf
PODMAN_BUILD = podman build --format docker --network=host $(if $(wildcard $(HOST_CA)),-v $(HOST_CA):/run/host-ca.crt:ro)

image: wheel
	$(if $(filter localhost/herald-debian:%,$(IMAGE_BASE)),deploy/podman/build-base $(IMAGE_BASE))
	$(PODMAN_BUILD) --build-arg BASE=$(IMAGE_BASE) -f deploy/Containerfile -t herald:latest -t herald:$(VERSION) .
	@podman image inspect --format 'herald:latest {{.Size}} bytes' herald:latest

# Herald's image and the PostgreSQL, Redis and Caddy (TLS) images deploy/compose.yaml runs.
images: image
	$(PODMAN_BUILD) --build-arg BASE=$(IMAGE_BASE) -t herald-postgres:15 deploy/images/postgres
	$(PODMAN_BUILD) --build-arg BASE=$(IMAGE_BASE) -t herald-redis:7 deploy/images/redis
	$(PODMAN_BUILD) --build-arg BASE=$(IMAGE_BASE) -t herald-caddy:2 deploy/images/caddy

# CI's deployment check: images, the compose stack up, /readyz, a send to an SMTP server,
# the Kubernetes manifests under `podman kube play`, then everything down
# (deploy/check/check.py). HERALD_CHECK_PORT moves the API off 8000.
deploy-check: $(STAMP)
	deploy/check/install-tools
	$(MAKE) images
	$(BIN)/python deploy/check/check.py

clean:
	rm -rf $(VENV) var build dist
