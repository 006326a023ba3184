# Concierge — two commands on a fresh machine: `make dev` and `make test`.
.PHONY: install build dev test bench
SHELL := /bin/sh

install:
	@sh scripts/install.sh

build: install
	@sh scripts/build.sh

dev: install
	@sh scripts/dev.sh

test: install
	@sh scripts/test.sh
