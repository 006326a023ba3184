# Concierge — two commands on a fresh machine: `make dev` and `make test`.
.PHONY: install build dev test bench-e2e bench-hardening
SHELL := /bin/sh

install:
	@sh scripts/install.sh

build: install
	@sh scripts/build.sh

dev: install
	@sh scripts/dev.sh

test: install
	@sh scripts/test.sh

# On demand (not part of `make test`): end-to-end latency, CPU and concurrency figures.
bench-e2e: build
	@sh scripts/bench-e2e.sh

# On demand: issue 24's bounds over the demo data — the worst accepted rental SQL time
# (target ≤ 250 ms) and the worst accepted analyst pipeline time and bytes (≤ 1 s, ≤ 32 MB).
bench-hardening: install
	@sh scripts/bench-rental-sql.sh
	@sh scripts/bench-pipelines.sh
