# nodetrace: the two set-up commands of the README.
#   make demo   trace the bundled sqlite3 demo workload with `nodetrace latency`
#   make test   run every test (unit and, as root, integration with the real tracer)
# and the shorter loops of test/README.md: `make lint` (ESLint), `make unit`
# (lint, then no tracer), `make check` (unit and each command's @core
# tests), `make test-command COMMAND=latency TIER=sid` (one command's tests
# under one bpftrace).
# Both install what they need first: bpftrace (apt-get) when no tracer is
# present, gdb for `nodetrace ebadf`, the npm packages and the native part,
# and they mount tracefs when it is not mounted.

SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Node's headers ship with Debian's and NodeSource's node; use them so the
# native builds (sqlite3 for the demo/tests, our USDT part) need no download.
# Told to node-gyp through its own variable: npm 11 warns about an
# npm_config_nodedir ("Unknown env config"), node-gyp reads both.
NODEDIR := $(shell [ -f /usr/include/node/node.h ] && echo /usr)
NPM_ENV := $(if $(NODEDIR),npm_package_config_node_gyp_nodedir=$(NODEDIR))
# Wait for another apt-get or dpkg (unattended-upgrades, a second terminal)
# to let go of the dpkg lock instead of failing at once.
APT_GET := apt-get -o DPkg::Lock::Timeout=600
# What a command run as root must still see: sudo drops the environment, and
# CI (nothing skipped) and NODETRACE_CACHE (where the builds are) matter.
ROOT_ENV := env $(if $(CI),CI=$(CI)) $(if $(NODETRACE_CACHE),NODETRACE_CACHE=$(NODETRACE_CACHE))
DEMO_SECONDS ?= 5

.PHONY: all deps system-deps browser podman debootstrap prometheus container-image image tracefs checkout-readable demo test test-packages test-builds check test-command unit lint bench clean node-builds bpftrace-tiers bpftrace-tiers-if-available test-tiers dtrace dtrace-if-available

all: deps

deps: system-deps tracefs node_modules/.installed

system-deps:
	@if ! command -v bpftrace >/dev/null || ! command -v gdb >/dev/null || ! command -v c++filt >/dev/null || ! command -v g++ >/dev/null; then \
	  echo "Installing bpftrace, gdb, binutils and a compiler (apt-get)..."; \
	  $(SUDO) $(APT_GET) update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq bpftrace gdb binutils g++ make python3 >/dev/null; \
	fi

# The flame graph test opens nodetrace profile's SVG in a real browser.
browser:
	@if ! command -v chromium >/dev/null; then \
	  echo "Installing chromium for the flame graph test (apt-get)..."; \
	  $(SUDO) $(APT_GET) update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq chromium >/dev/null; \
	fi

# The container tests trace Node in real podman containers (runc: crun
# cannot run on this kind of host's hybrid cgroups; docs/platforms.md).
podman:
	@if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then \
	  echo "Installing podman and runc for the container tests (apt-get)..."; \
	  $(SUDO) $(APT_GET) update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq podman runc >/dev/null; \
	fi

# latency --prometheus is checked against a real Prometheus that the test
# starts on 127.0.0.1 (Debian 12's 2.42: 19 MB to download, 96 MB
# installed; no recommends: not its node exporter). Its package would start
# a system service on :9090: a policy-rc.d that refuses (made for the
# install where there is none) keeps it from starting, and systemctl
# disables it where systemd runs.
prometheus:
	@if ! command -v prometheus >/dev/null; then \
	  echo "Installing prometheus for the live metrics test, its service kept from starting (apt-get)..."; \
	  made=; if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee /usr/sbin/policy-rc.d >/dev/null && $(SUDO) chmod 755 /usr/sbin/policy-rc.d && made=1; fi; \
	  $(SUDO) $(APT_GET) update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq --no-install-recommends prometheus >/dev/null; \
	  rc=$$?; if [ -n "$$made" ]; then $(SUDO) rm -f /usr/sbin/policy-rc.d; fi; \
	  if [ -d /run/systemd/system ]; then $(SUDO) systemctl disable --now prometheus.service >/dev/null 2>&1 || true; fi; \
	  exit $$rc; \
	fi

# The Debian roots of the bpftrace tiers and of the container image.
debootstrap:
	@if ! command -v debootstrap >/dev/null; then \
	  echo "Installing debootstrap for the bpftrace tiers and the container image (apt-get)..."; \
	  $(SUDO) $(APT_GET) update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq debootstrap >/dev/null; \
	fi

# Their image: a Debian 12 root (debootstrap) with the official Node 22 of
# node-builds, cached under $${NODETRACE_CACHE:-/var/cache/nodetrace}/containers
# and imported into podman's storage; see the script.
container-image: podman node-builds
	@$(SUDO) scripts/container-image.sh >/dev/null

# nodetrace as an image (Containerfile, docs/image.md), built by podman
# from Debian 13's packages on a registry's debian:trixie-slim or, where no
# registry answers, on a bare Debian 13 root made the way the tests' image is
# (scripts/container-image.sh --base trixie). The production modules are
# installed here first (.image-build/), by the host's npm. Not part of
# `make test`.
# The run flags are this host's needs (docs/platforms.md, "Containers").
IMAGE ?= localhost/nodetrace:latest
IMAGE_BASE ?= docker.io/library/debian:trixie-slim
PODMAN_BUILD_FLAGS := --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096
image: podman debootstrap
	@base='$(IMAGE_BASE)'; \
	if ! $(SUDO) podman image exists "$$base" && ! $(SUDO) timeout 60 podman pull -q "$$base" >/dev/null 2>&1; then \
	  echo "make image: $$base cannot be pulled here; building on a local Debian 13 root"; \
	  base="$$($(SUDO) $(ROOT_ENV) scripts/container-image.sh --base trixie)" || exit 1; \
	fi; \
	rm -rf .image-build && mkdir .image-build && cp package.json package-lock.json .image-build/ && \
	  (cd .image-build && npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error) || exit 1; \
	$(SUDO) podman build $(PODMAN_BUILD_FLAGS) --squash-all --build-arg BASE="$$base" -t '$(IMAGE)' -f Containerfile . || exit 1; \
	$(SUDO) podman image inspect -f '{{.Size}}' '$(IMAGE)' | awk '{ printf "make image: $(IMAGE) is %d MB\n", $$1 / 1e6 }'

tracefs:
	@if [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/uprobe_events ]; then \
	  echo "Mounting tracefs on /sys/kernel/tracing"; \
	  $(SUDO) mount -t tracefs nodev /sys/kernel/tracing; \
	fi

node_modules/.installed: package.json package-lock.json
	@mkdir -p build && touch build/.npm-ci-started
	$(NPM_ENV) npm ci --no-audit --no-fund
	@# npm runs our install script today; a future npm that skips install
	@# scripts must still get the USDT addon, built once: not again when npm
	@# just built it (node-gyp rebuild also removes the marker).
	@[ build/Release/nodetrace_usdt.node -nt build/.npm-ci-started ] || $(NPM_ENV) node scripts/build-native.js
	@rm -f build/.npm-ci-started
	@touch $@

demo: deps
	@echo "Starting the sqlite3 demo loop (test/targets/sqlite-loop.js)..."
	@node test/targets/sqlite-loop.js > /dev/null & pid=$$!; \
	  trap 'kill $$pid 2>/dev/null' EXIT; sleep 1; \
	  echo "\$$ sudo bin/nodetrace latency -p $$pid -d $(DEMO_SECONDS)"; \
	  $(SUDO) bin/nodetrace latency -p $$pid -d $(DEMO_SECONDS)

# Everything. First what the tests assert exists, each made once into
# $${NODETRACE_CACHE:-/var/cache/nodetrace} (outside the checkout; a no-op
# once made): chromium, the Node builds of the matrix, the container image
# (podman), DTrace for Linux and the bpftrace tiers. The packages come first,
# one apt-get after another (two at once fail on apt's lock); then the
# builds, side by side (downloads, debootstrap and DTrace's compile wait on
# different things). Then the cells of test/README.md: the full
# suite in the main cell (the host's bpftrace and node, those builds, DTrace,
# containers) and each command's core tests (@core) under each newer bpftrace
# tier one after another, each file by itself: side by side, a loaded
# 2-core machine failed six timing-bound tests in one CI run (2026-11-29).
# TEST_JOBS=N runs the cells side by side and N files at a time in main.
# Every cell runs to its end: one run shows every failure, each cell's
# again at the end (scripts/test-matrix.sh). How long it takes: test/README.md.
test: checkout-readable
	@$(MAKE) --no-print-directory test-packages
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory -j 4 --output-sync=target test-builds
	$(SUDO) $(ROOT_ENV) scripts/test-matrix.sh $(if $(TEST_JOBS),--jobs $(TEST_JOBS),--one-at-a-time) main $(BPFTRACE_TIERS)

test-packages: deps browser podman debootstrap prometheus
test-builds: node-builds container-image dtrace-if-available bpftrace-tiers-if-available

# `make unit`, then each command's core tests (@core) on the host's
# bpftrace and node: the loop to run before landing a change
# (test/README.md). One after the other: side by side (test-matrix.sh
# unit host) the unit tests' CPU stretched a callback async times.
check: unit
	$(SUDO) $(ROOT_ENV) scripts/test-matrix.sh host

# One command's tests (its own files, and the tests of shared files whose
# title names it) under one bpftrace: TIER is host (default), trixie or sid.
#   make test-command COMMAND=latency TIER=sid
TIER ?= host
test-command: deps
	@[ -n "$(COMMAND)" ] || { echo "make test-command: say which, e.g. COMMAND=latency (TIER=sid)" >&2; exit 2; }
	$(SUDO) $(ROOT_ENV) scripts/test-matrix.sh --command '$(COMMAND)' '$(TIER)'

# Some tests run processes as nobody and as a throwaway user (not root, a
# hostile local user) from the checkout: say so at once where those cannot
# read it (a clone under a home directory of mode 0700, Debian 12's default
# for new users), rather than fail those tests with "Cannot find module".
checkout-readable:
	@$(SUDO) runuser -u nobody -- test -r '$(CURDIR)/register.js' || { \
	  echo "make test: other users cannot read $(CURDIR), and some tests run processes as nobody" >&2; \
	  echo "  and as a throwaway user from it: let them in (chmod o+x on each directory above it) or clone it elsewhere" >&2; \
	  exit 1; }

# The Node builds of the integration test matrix (official 22/24/26, Debian's
# 18), cached under $${NODETRACE_CACHE:-/var/cache/nodetrace}/node; see the script.
node-builds:
	$(SUDO) $(ROOT_ENV) scripts/node-builds.sh

# Newer bpftrace beside the host's: Debian 13's (0.23) and Debian unstable's
# (0.27), each in a Debian root cached under $${NODETRACE_CACHE:-/var/cache/nodetrace}
# (debootstrap: a minute or two each). `make bpftrace-tiers` insists;
# `bpftrace-tiers-if-available` (for `make test`) goes on without a tier that
# cannot be made here (no network), which the tests then skip saying why,
# except in CI.
BPFTRACE_TIERS ?= trixie sid
bpftrace-tiers:
	@for suite in $(BPFTRACE_TIERS); do $(SUDO) $(ROOT_ENV) scripts/bpftrace-tier.sh $$suite >/dev/null || exit 1; done

# One target per tier, so that `make -j` makes them side by side.
bpftrace-tiers-if-available: $(addprefix bpftrace-tier-if-available-,$(BPFTRACE_TIERS))

bpftrace-tier-if-available-%:
	@$(SUDO) $(ROOT_ENV) scripts/bpftrace-tier.sh $* >/dev/null && exit 0; \
	if [ -n "$(CI)" ]; then echo "bpftrace tier $* could not be made (above); CI runs every tier" >&2; exit 1; fi; \
	echo "bpftrace tier $* could not be made (above); its tests will be skipped" >&2

# Each command's core integration tests (@core) under each bpftrace tier.
# A tier that cannot be made is skipped with the reason, but not in CI.
test-tiers: deps container-image
	$(SUDO) $(ROOT_ENV) scripts/test-matrix.sh $(BPFTRACE_TIERS)

unit: lint
	npx mocha --grep '@tracer' --invert 'test/**/*.test.js'

# ESLint over our JavaScript (eslint.config.js); `make unit` and `make test`
# run it first, so a finding fails them in seconds.
LINT_PATHS := lib bin test bench scripts
lint: node_modules/.installed
	npx eslint $(LINT_PATHS)

# DTrace for Linux, built from vendor/'s source archive into the cache (once;
# then a no-op): the D scripts and `--backend dtrace` run under it in the tests tagged
# @dtrace.  `make dtrace` insists on the source archive; `dtrace-if-available`
# (for `make test`) skips with a reason where a clone has none, except in CI.
dtrace: tracefs
	$(SUDO) $(ROOT_ENV) scripts/build-dtrace.sh

dtrace-if-available: tracefs
	$(SUDO) $(ROOT_ENV) scripts/build-dtrace.sh --if-available

bench: deps
	$(SUDO) node bench/latency-overhead.js

clean:
	rm -rf node_modules build
