# libFuzzer targets of mcpgw (test/fuzz/). Included by the top Makefile;
# also works on its own from the repository root:
#   make -f test/fuzz/fuzz.mk fuzz FUZZ_SECONDS=5
#
# `make fuzz`        builds every target and fuzzes each for FUZZ_SECONDS
#                    (default 60) with its corpus and dictionary; new inputs
#                    go to build/fuzz/scratch/<target>/, crashes to
#                    build/fuzz/crashes/. The checked-in corpus is only read.
# `make fuzz-smoke`  runs each target over its checked-in corpus (every
#                    file once: the regression inputs) plus 3 s of fuzzing.
# `make fuzz-build`  only builds.
#
# One target: make -f test/fuzz/fuzz.mk fuzz FUZZ_TARGETS=fuzz_sse
# A crash:    build/fuzz/fuzz_sse build/fuzz/crashes/fuzz_sse-crash-…

BUILD      ?= build
LLHTTP_SRC ?= /usr/share/llhttp
LLHTTP_INC ?= /usr/share/include/llhttp
LLHTTP_DEFS ?= -DLLHTTP_STRICT_MODE=1

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= fuzz_http fuzz_http_parse fuzz_jsonrpc fuzz_config fuzz_sse fuzz_artifact_path
FUZZ_OUT     := $(BUILD)/fuzz

# Longest input per target: enough to pass every limit the target can
# configure (fuzz_http's tight limits are 512 bytes; the SSE bound in
# fuzz_sse is at most 304) while keeping executions fast.
FUZZ_MAXLEN_fuzz_http          := 8192
FUZZ_MAXLEN_fuzz_http_parse    := 8192
FUZZ_MAXLEN_fuzz_jsonrpc       := 16384
FUZZ_MAXLEN_fuzz_config        := 8192
FUZZ_MAXLEN_fuzz_sse           := 4096
FUZZ_MAXLEN_fuzz_artifact_path := 512

# A target's corpus and dictionary are its own, but the parser alone reads
# the connection target's inputs.
FUZZ_SEEDS = $(or $(FUZZ_SEEDS_$(1)),$(1))
FUZZ_SEEDS_fuzz_http_parse := fuzz_http

FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
               -fno-omit-frame-pointer
FUZZ_WARN   := -Wall -Wextra -Werror -Wno-unused-parameter
FUZZ_CFLAGS := -std=gnu11 -O1 -g $(FUZZ_SAN) -Iinclude -I$(LLHTTP_INC) $(LLHTTP_DEFS) -D_GNU_SOURCE
FUZZ_LIBS   := -luv -ljansson -lyaml -lm

FUZZ_LIB_SRC := $(filter-out src/main.c,$(wildcard src/*.c src/*/*.c))
FUZZ_OBJ     := $(FUZZ_LIB_SRC:src/%.c=$(FUZZ_OUT)/obj/%.o) $(FUZZ_OUT)/obj/ui_files.o
FUZZ_OBJ_DIRS := $(patsubst %/,%,$(sort $(dir $(FUZZ_OBJ))))
FUZZ_LLHTTP  := $(FUZZ_OUT)/obj/llhttp/api.o $(FUZZ_OUT)/obj/llhttp/http.o \
                $(FUZZ_OUT)/obj/llhttp/llhttp.o
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_OUT)/%)
FUZZ_HDRS    := $(wildcard include/gw/*.h)

# -close_fd_mask=2: the targets log at debug level (the log escaping runs on
# hostile input) and libFuzzer keeps its own stderr for reports. stdin is
# /dev/null so a config naming /dev/stdin as envFile cannot block.
FUZZ_RUN_OPTS := -close_fd_mask=2 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
FUZZ_ENV      := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=0 \
                 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: fuzz fuzz-smoke fuzz-build

fuzz-build: $(FUZZ_BINS)

# The library is compiled for coverage (fuzzer-no-link) and linked as an
# archive, so each target pulls in only the modules it reaches.
$(FUZZ_OUT)/obj/%.o: src/%.c $(FUZZ_HDRS) | $(FUZZ_OBJ_DIRS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_WARN) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_OUT)/obj/ui_files.o: $(UI_GEN) include/gw/ui.h | $(FUZZ_OBJ_DIRS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_WARN) -fsanitize=fuzzer-no-link -c -o $@ $<

# llhttp's generated sources are compiled as shipped (strict mode, as in the
# daemon), without -Werror.
$(FUZZ_OUT)/obj/llhttp/%.o: $(LLHTTP_SRC)/%.c test/fuzz/fuzz.mk | $(FUZZ_OUT)/obj/llhttp
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_OUT)/libgw.a: $(FUZZ_OBJ) $(FUZZ_LLHTTP)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_BINS): $(FUZZ_OUT)/%: test/fuzz/%.c $(FUZZ_OUT)/libgw.a $(FUZZ_HDRS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_WARN) -fsanitize=fuzzer -o $@ $< $(FUZZ_OUT)/libgw.a \
		$(FUZZ_LIBS)

$(FUZZ_OBJ_DIRS) $(FUZZ_OUT)/obj/llhttp:
	mkdir -p $@

# $(call fuzz_run,target,seconds)
define fuzz_run
	@mkdir -p $(FUZZ_OUT)/scratch/$(1) $(FUZZ_OUT)/crashes
	@echo "== $(1): $(2) s"
	$(FUZZ_ENV) $(FUZZ_OUT)/$(1) $(FUZZ_RUN_OPTS) -max_total_time=$(2) \
		-max_len=$(FUZZ_MAXLEN_$(1)) -dict=test/fuzz/$(call FUZZ_SEEDS,$(1)).dict \
		-artifact_prefix=$(FUZZ_OUT)/crashes/$(1)- \
		$(FUZZ_OUT)/scratch/$(1) test/fuzz/corpus/$(call FUZZ_SEEDS,$(1)) </dev/null

endef

# Every checked-in input once, by name: crash regressions fail here.
define fuzz_replay
	@echo "== $(1): checked-in corpus"
	$(FUZZ_ENV) $(FUZZ_OUT)/$(1) -close_fd_mask=2 -timeout=20 \
		test/fuzz/corpus/$(call FUZZ_SEEDS,$(1))/* \
		</dev/null >$(FUZZ_OUT)/$(1).replay.log 2>&1 || \
		{ tail -n 60 $(FUZZ_OUT)/$(1).replay.log; exit 1; }

endef

fuzz: $(FUZZ_BINS)
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run,$(t),$(FUZZ_SECONDS)))

fuzz-smoke: $(FUZZ_BINS)
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_replay,$(t))$(call fuzz_run,$(t),3))
