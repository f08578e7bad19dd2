# nodetrace: the two set-up commands of the README.
#   make demo   trace the bundled sqlite3 demo workload with `nodetrace latency`
#   make test   run every test (unit and, as root, integration with the real tracer)
# Both install what they need first: bpftrace (apt-get) when no tracer is
# present, gdb for `nodetrace ebadf`, the npm packages and the native part,
# and they mount tracefs when it is not mounted.

SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Node's headers ship with Debian's and NodeSource's node; use them so the
# native builds (sqlite3 for the demo/tests, our USDT part) need no download.
NODEDIR := $(shell [ -f /usr/include/node/node.h ] && echo /usr)
NPM_ENV := $(if $(NODEDIR),npm_config_nodedir=$(NODEDIR))
DEMO_SECONDS ?= 5

.PHONY: all deps system-deps tracefs demo test unit bench clean dtrace dtrace-if-available

all: deps

deps: system-deps tracefs node_modules/.installed

system-deps:
	@if ! command -v bpftrace >/dev/null || ! command -v gdb >/dev/null || ! command -v c++filt >/dev/null || ! command -v g++ >/dev/null; then \
	  echo "Installing bpftrace, gdb, binutils and a compiler (apt-get)..."; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace gdb binutils g++ make python3 >/dev/null; \
	fi

tracefs:
	@if [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/uprobe_events ]; then \
	  echo "Mounting tracefs on /sys/kernel/tracing"; \
	  $(SUDO) mount -t tracefs nodev /sys/kernel/tracing; \
	fi

node_modules/.installed: package.json package-lock.json
	$(NPM_ENV) npm ci --no-audit --no-fund
	@# npm runs our install script today; a future npm that skips install
	@# scripts must still get the USDT addon.
	$(NPM_ENV) node scripts/build-native.js
	@touch $@

demo: deps
	@echo "Starting the sqlite3 demo loop (test/targets/sqlite-loop.js)..."
	@node test/targets/sqlite-loop.js > /dev/null & pid=$$!; \
	  trap 'kill $$pid 2>/dev/null' EXIT; sleep 1; \
	  echo "\$$ sudo bin/nodetrace latency -p $$pid -d $(DEMO_SECONDS)"; \
	  $(SUDO) bin/nodetrace latency -p $$pid -d $(DEMO_SECONDS)

test: deps
	$(SUDO) npx mocha 'test/**/*.test.js'

unit: node_modules/.installed
	npx mocha --grep '@tracer' --invert 'test/**/*.test.js'

# DTrace for Linux, built from ../shared/vendor/ into the cache (once; then a
# no-op): the D scripts and `--backend dtrace` run under it in the tests tagged
# @dtrace.  `make dtrace` insists on the source archive; `dtrace-if-available`
# (for `make test`) skips with a reason where a clone has none, except in CI.
dtrace: tracefs
	$(SUDO) scripts/build-dtrace.sh

dtrace-if-available: tracefs
	$(SUDO) env CI="$$CI" scripts/build-dtrace.sh --if-available

bench: deps
	$(SUDO) node bench/latency-overhead.js

clean:
	rm -rf node_modules build
