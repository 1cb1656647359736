# test/bench/bench.mk — `make bench` (issue 8). Included by the top Makefile:
#   include test/bench/bench.mk
# `make bench`               full run: 3 interleaved rounds (~12 minutes)
# `make bench BENCH_QUICK=1` smoke run (~1-2 minutes)
# Needs the Debian package wrk (in DEB_PKGS) and node/npm; the peers are pinned
# in test/bench/package.json + package-lock.json (kept apart from test/).
# Results: the tables on stdout (also build/bench/results.md), raw rounds in
# build/bench/results.json.

BENCH_DIR   := test/bench
BENCH_OUT   := $(BUILD)/bench
BENCH_STAMP := $(BENCH_DIR)/node_modules/.mcpgw-bench-installed
BENCH_BINS  := $(BENCH_OUT)/echo_server $(BENCH_OUT)/bench_client $(BENCH_OUT)/http_floor \
               $(BENCH_OUT)/paced_http $(BENCH_OUT)/otlp_sink
BENCH_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror

.PHONY: bench bench-tools

$(BENCH_OUT):
	mkdir -p $@

$(BENCH_OUT)/echo_server: $(BENCH_DIR)/echo_server.c | $(BENCH_OUT)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -ljansson

$(BENCH_OUT)/bench_client: $(BENCH_DIR)/bench_client.c | $(BENCH_OUT)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

$(BENCH_OUT)/http_floor: $(BENCH_DIR)/http_floor.c | $(BENCH_OUT)
	$(CC) $(BENCH_CFLAGS) -D_GNU_SOURCE -o $@ $< -luv

$(BENCH_OUT)/paced_http: $(BENCH_DIR)/paced_http.c | $(BENCH_OUT)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

$(BENCH_OUT)/otlp_sink: $(BENCH_DIR)/otlp_sink.c | $(BENCH_OUT)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

$(BENCH_STAMP): $(BENCH_DIR)/package.json $(BENCH_DIR)/package-lock.json
	cd $(BENCH_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

bench-tools: $(BENCH_BINS) $(BENCH_STAMP) $(NODE_STAMP)

# The daemon is copied so that a rebuild of build/mcpgw during the run does
# not change the binary under test. BENCH_ONLY (a comma-separated list)
# picks parts; `toolsearch` and `sandbox` name the last two tables.
bench: all fixtures bench-tools
	@command -v wrk >/dev/null || { echo "bench: wrk is missing (apt-get install wrk, or make deps)"; exit 1; }
	cp $(BUILD)/mcpgw $(BENCH_OUT)/mcpgw
	BENCH_QUICK=$(BENCH_QUICK) node $(BENCH_DIR)/run.mjs
	@case ",$(BENCH_ONLY)," in ,,|*,toolsearch,*) $(MAKE) --no-print-directory bench-toolsearch;; esac
	@case ",$(BENCH_ONLY)," in ,,|*,sandbox,*) $(MAKE) --no-print-directory bench-sandbox;; esac

# Tool search (issue 29): retrieval quality on captured tool listings and
# the speed of a search over 2,000 tools, the last tables of `make bench`
# (about a second); alone: `make bench-toolsearch`
# (BENCH_TS_FLAGS=-v lists the misses). The ranking is the daemon's own
# code: the program links the optimised objects.
TS_BENCH := $(BENCH_OUT)/toolsearch_bench
TS_DATA  := $(BENCH_DIR)/toolsearch

.PHONY: bench-toolsearch

$(TS_BENCH): $(BENCH_DIR)/toolsearch_bench.c $(filter-out $(BUILD)/obj/main.o,$(OBJ)) \
             $(BUILD)/libllhttp.a $(HDRS) | $(BENCH_OUT)
	$(CC) $(CPPFLAGS) $(BENCH_CFLAGS) -o $@ $< $(filter-out $(BUILD)/obj/main.o,$(OBJ)) \
		$(BUILD)/libllhttp.a $(LDLIBS) -lm

bench-toolsearch: $(TS_BENCH)
	$(TS_BENCH) $(TS_DATA)/catalog.json $(TS_DATA)/tasks.json \
		$(TS_DATA)/external/catalog.json $(TS_DATA)/external/queries.jsonl $(BENCH_TS_FLAGS)

# The sandbox's costs (issue 36): start → ready, bubblewrap's memory per
# instance and call latency, sandboxed and not, in one daemon (~1 minute;
# the table also goes to build/bench/sandbox.md). Needs bubblewrap.
.PHONY: bench-sandbox

bench-sandbox: all bench-tools
	cp $(BUILD)/mcpgw $(BENCH_OUT)/mcpgw
	BENCH_QUICK=$(BENCH_QUICK) node $(BENCH_DIR)/sandbox.mjs
