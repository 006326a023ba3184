# Concierge — two commands on a fresh machine: `make dev` and `make test`.
.PHONY: install build dev test bench-e2e
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
