# Concierge — two commands on a fresh machine: `make dev` and `make test`.
.PHONY: install build dev test bench-e2e bench-load bench-cold-start worker-size bench-hardening bench-abuse
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

# On demand (issue 40): load and isolation at 10,000 sites — counted storage calls per turn,
# added TTFT from the scheduled send time, the isolation delta, the breadth ratio, RSS and
# bytes on disk, under the correctness gates; INVALID when the driver cannot hold its schedule.
bench-load: build
	@sh scripts/bench-load.sh

# On demand: a new isolate's first /health and first streamed turn, from a fresh wrangler
# dev per run, Concierge beside the bare relay (medians).
bench-cold-start: build
	@sh scripts/bench-cold-start.sh

# On demand: issue 39's abuse figures — a /64 flood, visitors flooding beside the
# merchant's calls, a 1,000-request handoff flood (medians of 3 runs).
bench-abuse: build
	@sh scripts/bench-abuse.sh

# On demand: the Worker's upload size against its budget, and where its bytes go (twiggy).
worker-size: build
	@sh scripts/worker-size.sh check
	@sh scripts/worker-size.sh profile

# On demand: issue 24's bounds over the demo data — the worst accepted rental SQL time
# (target ≤ 250 ms) and the worst accepted analyst pipeline time and bytes (≤ 1 s, ≤ 32 MB).
bench-hardening: install
	@sh scripts/bench-rental-sql.sh
	@sh scripts/bench-pipelines.sh
