# bai: two commands for a fresh machine.
#   make up    start the whole platform (baid up) in the foreground
#   make test  run every test (unit, Docker integration, CLI and official-client end to end)
# One cargo profile (release) serves both, so nothing is built twice.

CARGO ?= cargo
PROFILE ?= release
BIN_DIR := target/$(PROFILE)
PREFIX ?= /usr/local
# Tests start many containers; run them a few at a time on small machines.
TEST_THREADS ?= 2

.PHONY: up test deps test-deps build build-test web install-cli official-client lint bench chaos fuzz clean-containers

deps:
	@scripts/ensure-deps.sh

test-deps:
	@scripts/ensure-deps.sh --test

# The kernel runner is then linked statically (scripts/build-krunner.sh: it runs inside every
# kernel image, whatever C library that image has, or none).
build:
	$(CARGO) build --profile $(PROFILE) --workspace --bins
	PROFILE=$(PROFILE) scripts/build-krunner.sh

# Test builds carry the crash tests' fault points (crates/bai-fault); `make up` does not.
TEST_FEATURES ?= baid/fault-points

# The binaries with the test harnesses, in one build with one feature set (the tests'
# dev-dependencies turn on tokio's test-util: binaries built without them would be built twice).
build-test:
	$(CARGO) build --profile $(PROFILE) --workspace --lib --bins --tests --features $(TEST_FEATURES)
	PROFILE=$(PROFILE) scripts/build-krunner.sh

# The web UI (web/dist, served by baid): built when missing or older than its sources.
web:
	@scripts/build-web.sh

install-cli: build
	@dest=$(PREFIX)/bin; [ -w $$dest ] || dest=$$HOME/.local/bin; mkdir -p $$dest; \
	ln -sf $(CURDIR)/$(BIN_DIR)/bai $$dest/bai; ln -sf $(CURDIR)/$(BIN_DIR)/bai $$dest/backend.ai; \
	echo "==> installed bai and backend.ai in $$dest"

# REGISTRY=1: also a registry on loopback (Debian's docker-registry), so the images this
# machine builds and converts travel to other nodes' agents.
up: deps build web install-cli
	@if [ -n "$(REGISTRY)" ]; then \
	  reg=$$(scripts/local-registry.sh) && exec env BAI_REGISTRY=$$reg $(BIN_DIR)/baid up; \
	else exec $(BIN_DIR)/baid up; fi

official-client:
	@scripts/official-client.sh

# No separate `build-test`: scripts/run-tests.sh builds the binaries with the test harnesses
# in one `cargo build --bins --tests` (a `cargo build --bins` first would build the workspace
# twice: the tests' dev-dependencies turn on tokio's test-util, which rebuilds all above it).
test: test-deps official-client lint web
	PROFILE=$(PROFILE) TEST_THREADS=$(TEST_THREADS) FEATURES=$(TEST_FEATURES) scripts/run-tests.sh

# fmt and clippy -D warnings, part of `make test`. Clippy checks the release profile's
# dependencies, so the build that follows reuses them.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --profile $(PROFILE) --workspace --all-targets --features $(TEST_FEATURES) -- -D warnings

# The full reliability runs whose figures docs/RELIABILITY.md keeps (RUNS=20 by default).
chaos: test-deps official-client build-test
	FEATURES=$(TEST_FEATURES) scripts/chaos.sh

# The fuzz targets under libFuzzer (nightly, cargo-fuzz), FUZZ_SECONDS each (default 60);
# `make test` runs them bounded on stable.
fuzz:
	scripts/fuzz.sh

bench: deps build
	bench/run.sh
	bench/pool.sh
	bench/sched.sh
	bench/sched-tree.sh
	bench/vfolder.sh
	bench/apps.sh
	bench/remote.sh
	bench/cluster.sh
	bench/serving.sh
	bench/images.sh

clean-containers:
	-docker ps -aq --filter label=ai.bai.agent | xargs -r docker rm -f
