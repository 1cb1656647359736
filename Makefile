# mcpgw — build, test and install.
#
# `make`            optimised daemon at build/mcpgw (-O2 -g, no sanitizers)
# `make deps`       Debian packages and the pinned npm packages of test/
# `make run`        deps, build, run on conf/mcp.yaml
# `make test`       deps, unit tests under ASan+UBSan, integration tests
# `make valgrind`   integration tests with the daemon under valgrind

CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
BUILD   := build

LLHTTP_SRC := /usr/share/llhttp
LLHTTP_INC := /usr/share/include/llhttp
# llhttp.c holds two parsers; without this the loose one is compiled, which
# skips the byte after a CR in chunk framing and header ends unchecked
# (security.md C5). Strict mode also refuses tab, form feed and bytes >= 0x80
# in the request target, and data after a Connection: close request.
LLHTTP_DEFS := -DLLHTTP_STRICT_MODE=1

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
CPPFLAGS += -Iinclude -I$(LLHTTP_INC) $(LLHTTP_DEFS) -D_GNU_SOURCE
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -fno-strict-aliasing
# libcurl is not linked: src/net/curl_lib.c dlopen()s it when the first HTTP
# upstream starts (gw/curl_lib.h); dlopen is in glibc's libc since 2.34.
# Nor is libwebsockets: src/net/ws_lib.c dlopen()s it when the first WebSocket
# upstream starts (gw/ws_lib.h); it runs on our loop through its libuv event
# library, which it dlopen()s itself (libwebsockets-evlib-uv).
CPPFLAGS += $(shell pkg-config --cflags libwebsockets 2>/dev/null)
# Nor is libm: loading it runs the IFUNC resolvers of all its functions, which
# maps some 300 KiB of it into every daemon (gw_ln in gw/util.h instead).
LDLIBS  := -luv -ljansson -lyaml
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm -pthread)

# src/main.c and one folder per layer (docs/architecture.md); objects keep
# the folder: src/base/util.c -> build/obj/base/util.o.
SRC      := $(wildcard src/*.c src/*/*.c)
LIB_SRC  := $(filter-out src/main.c,$(SRC))
HDRS     := $(wildcard include/gw/*.h)
# The status page (gw/ui.h): its files in src/ui/ become one generated C file.
UI_SRC   := $(sort $(wildcard src/ui/*.html src/ui/*.css src/ui/*.js src/ui/*.svg))
UI_GEN   := $(BUILD)/gen/ui_files.c
OBJ      := $(SRC:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/ui_files.o
ASAN_OBJ := $(SRC:src/%.c=$(BUILD)/asan/obj/%.o) $(BUILD)/asan/obj/ui_files.o
ASAN_LIB_OBJ := $(LIB_SRC:src/%.c=$(BUILD)/asan/obj/%.o) $(BUILD)/asan/obj/ui_files.o
OBJ_DIRS := $(patsubst %/,%,$(sort $(dir $(OBJ) $(ASAN_OBJ))))
UNIT_SRC := $(wildcard test/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:test/unit/%.c=$(BUILD)/asan/%)
FIXTURE_SRC := $(wildcard test/fixtures/*.c)
FIXTURE_BIN := $(FIXTURE_SRC:test/fixtures/%.c=$(BUILD)/fixtures/%)
LLHTTP_OBJ      := $(BUILD)/llhttp/api.o $(BUILD)/llhttp/http.o $(BUILD)/llhttp/llhttp.o
ASAN_LLHTTP_OBJ := $(LLHTTP_OBJ:$(BUILD)/llhttp/%=$(BUILD)/asan/llhttp/%)

# libcurl4 (libcurl.so.4) and libwebsockets17 are run-time dependencies
# only: the daemon dlopen()s them for HTTP and WebSocket upstreams; the -dev
# packages have the headers.
# procps (/bin/kill, the unit's ExecReload) and man-db (its Documentation=)
# are what `systemd-analyze verify` checks the unit against.
# chromium is the browser test/integration/ui.test.mjs drives (puppeteer-core
# from test/package.json; it downloads no browser of its own). curl and jq
# run docs/api.md's examples (test/integration/docs_examples.test.mjs).
# bubblewrap makes the servers' sandboxes (docs/config.md, Sandbox).
# dpkg-dev (dpkg-shlibdeps) and lintian build and check `make deb`;
# debootstrap and systemd-container (systemd-nspawn) run `make systemd-test`.
DEB_PKGS := gcc make pkg-config libuv1-dev libyaml-dev node-llhttp libcurl4 libcurl4-openssl-dev libssl3 \
            libjansson-dev check clang libclang-rt-14-dev valgrind wrk curl jq haproxy systemd \
            groff-base procps man-db libwebsockets17 libwebsockets-dev libwebsockets-evlib-uv \
            chromium bubblewrap dpkg-dev lintian debootstrap systemd-container
# promtool comes out of Debian's prometheus package without installing it,
# so that no Prometheus server is enabled on the machine as a side effect.
PROMTOOL := $(BUILD)/tools/usr/bin/promtool
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
NODE_STAMP := test/node_modules/.mcpgw-installed
# Every Node process a test starts (servers, clients, the test runner) gets
# test/webcrypto.cjs, which gives Node 18 (Debian 12's) the global `crypto`
# that the MCP SDK's HTTP server transport needs; on newer Nodes it is a no-op.
TEST_NODE_OPTIONS := NODE_OPTIONS="--require=$(CURDIR)/test/webcrypto.cjs $$NODE_OPTIONS"

.PHONY: all deps run test structure unit integration valgrind soak cgroup2-test format install uninstall \
	clean fixtures asan deb systemd-test FORCE

all: $(BUILD)/mcpgw

# The functions that run at the start and on every call sit together at the
# start of the daemon's text (src/hot_functions.txt, one name a line, made by
# test/bench/hot_functions.sh): the kernel maps a file's pages 64 KiB at a
# time around each fault, so the text resident in an idle daemon is every
# 64 KiB window its run has touched; with the hot functions spread among the
# others, that was all of it (docs/performance.md, issue 34 item 14). Each
# function gets its own section to be placed by name; a name no longer in
# the code places nothing, and one missing only leaves its function among
# the others. Likewise the status page's files (75 KiB, read when the page
# is asked for) are linked last, after llhttp's tables, next to .eh_frame
# (read by nothing that runs): the cold end of the read-only data.
HOT_LIST := src/hot_functions.txt
HOT_LD   := $(BUILD)/gen/hot.ld
OPT_SECTIONS := -ffunction-sections
UI_OBJ   := $(BUILD)/obj/ui_files.o

$(BUILD)/mcpgw: $(OBJ) $(BUILD)/libllhttp.a $(HOT_LD)
	$(CC) $(CFLAGS) $(LDFLAGS) -Wl,-T,$(HOT_LD) -o $@ $(filter-out $(UI_OBJ),$(OBJ)) \
		$(BUILD)/libllhttp.a $(UI_OBJ) $(LDLIBS)

$(HOT_LD): $(HOT_LIST) src/hot_ld.sh Makefile | $(BUILD)/gen
	sh src/hot_ld.sh $@ $(HOT_LIST) $(CC) $(CFLAGS) $(LDFLAGS)

# The objects are rebuilt when the command that compiles them changes (as
# when -ffunction-sections came): the stamp is rewritten only then.
OBJ_CMD := $(CC) $(CPPFLAGS) $(CFLAGS) $(OPT_SECTIONS)
OBJ_CMD_STAMP := $(BUILD)/gen/obj_cmd

$(OBJ_CMD_STAMP): FORCE | $(BUILD)/gen
	@echo '$(OBJ_CMD)' | cmp -s - $@ || echo '$(OBJ_CMD)' > $@

FORCE:

$(BUILD)/obj/%.o: src/%.c $(HDRS) $(OBJ_CMD_STAMP) | $(OBJ_DIRS)
	$(OBJ_CMD) -c -o $@ $<

$(UI_GEN): $(UI_SRC) src/ui/embed.sh | $(BUILD)/gen
	sh src/ui/embed.sh $@ $(UI_SRC)

$(BUILD)/obj/ui_files.o: $(UI_GEN) include/gw/ui.h | $(BUILD)/obj
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# llhttp's generated sources are compiled as shipped (strict mode chosen),
# without our -Werror. The objects depend on the Makefile so that a change
# of LLHTTP_DEFS rebuilds them.
$(BUILD)/llhttp/%.o: $(LLHTTP_SRC)/%.c Makefile | $(BUILD)/llhttp
	$(CC) -O2 -g -fPIC $(OPT_SECTIONS) -I$(LLHTTP_INC) $(LLHTTP_DEFS) -c -o $@ $<

$(BUILD)/libllhttp.a: $(LLHTTP_OBJ)
	ar rcs $@ $^

$(BUILD)/asan/llhttp/%.o: $(LLHTTP_SRC)/%.c Makefile | $(BUILD)/asan/llhttp
	$(CC) -O1 -g $(SAN) -I$(LLHTTP_INC) $(LLHTTP_DEFS) -c -o $@ $<

$(BUILD)/asan/libllhttp.a: $(ASAN_LLHTTP_OBJ)
	ar rcs $@ $^

$(BUILD)/asan/obj/%.o: src/%.c $(HDRS) | $(OBJ_DIRS)
	$(CC) $(CPPFLAGS) -std=gnu11 $(WARN) -O1 -g $(SAN) -c -o $@ $<

$(BUILD)/asan/obj/ui_files.o: $(UI_GEN) include/gw/ui.h | $(BUILD)/asan/obj
	$(CC) $(CPPFLAGS) -std=gnu11 $(WARN) -O1 -g $(SAN) -c -o $@ $<

asan: $(BUILD)/asan/mcpgw

$(BUILD)/asan/mcpgw: $(ASAN_OBJ) $(BUILD)/asan/libllhttp.a
	$(CC) $(SAN) -o $@ $(ASAN_OBJ) $(BUILD)/asan/libllhttp.a $(LDLIBS)

# Unit tests also link libcurl: test_upstream_http probes with
# curl_easy_perform, which the daemon does not call (nor forward).
$(BUILD)/asan/test_%: test/unit/test_%.c $(ASAN_LIB_OBJ) $(BUILD)/asan/libllhttp.a $(HDRS) $(wildcard test/unit/*.h)
	$(CC) $(CPPFLAGS) -std=gnu11 $(WARN) -Wno-missing-prototypes -O1 -g $(SAN) -o $@ $< \
		$(ASAN_LIB_OBJ) $(BUILD)/asan/libllhttp.a $(LDLIBS) -lcurl $(CHECK_LIBS)

# Adversarial MCP servers used by the integration tests.
$(BUILD)/fixtures/%: test/fixtures/%.c | $(BUILD)/fixtures
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -o $@ $< -ljansson

fixtures: $(FIXTURE_BIN)

$(OBJ_DIRS) $(BUILD)/gen $(BUILD)/llhttp $(BUILD)/asan/llhttp $(BUILD)/fixtures:
	mkdir -p $@

deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then missing="$$missing nodejs npm"; fi; \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@$(MAKE) --no-print-directory $(NODE_STAMP) $(PROMTOOL)

$(PROMTOOL):
	mkdir -p $(BUILD)/tools/deb
	cd $(BUILD)/tools/deb && rm -f prometheus_*.deb && \
		{ apt-get download -qq prometheus || \
		  { $(SUDO) apt-get update -qq && apt-get download -qq prometheus; }; }
	dpkg-deb -x $(BUILD)/tools/deb/prometheus_*.deb $(BUILD)/tools
	rm -rf $(BUILD)/tools/deb
	touch $@

$(NODE_STAMP): test/package.json test/package-lock.json
	cd test && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# deps installs node-llhttp, whose sources `all` compiles: a second make reads
# /usr/share/llhttp after the install (make caches a directory it has read).
run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/mcpgw -c conf/mcp.yaml

# The shape of src/: no file over 800 lines, no include cycle between modules,
# no include or call upward between its folders (test/structure/modules.mjs).
structure:
	node test/structure/modules.mjs
	node test/structure/hot_text.mjs

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; \
		$(TEST_NODE_OPTIONS) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1 $$t; done

# The official MCP conformance suite against /mcp (`make conformance`): see
# docs/conformance.md.
include test/conformance/conformance.mk

# A hang is a failure with a name: each integration file must finish within
# INTEGRATION_FILE_TIMEOUT_MS (20 times that under valgrind). The harness
# (test/integration/lib/harness.mjs) fails the file at that deadline and
# kills what it started; the runner's --test-timeout, a minute later, is the
# outer bound where node has it (Node >= 20.11; Debian 12's Node 18 has not).
# The longest file (reload_storm) took 19 s under ASan on this 2-core
# machine, the whole suite 2.5 min: 300 s leaves room for a slow box.
INTEGRATION_FILE_TIMEOUT_MS ?= 300000
NODE_TEST_TIMEOUT = MCPGW_TEST_FILE_TIMEOUT_MS=$(1) node --test \
	$(if $(shell node --test-timeout=1 -e 0 2>/dev/null && echo y),--test-timeout=$(shell echo $$(($(1) + 60000))))

# The SDK v2 client of mcp_modern.test.mjs runs from test/conformance.
integration: all asan fixtures $(NODE_STAMP) $(CONFORMANCE_STAMP)
	PATH="$(CURDIR)/$(BUILD)/tools/usr/bin:$$PATH" $(TEST_NODE_OPTIONS) \
	MCPGW_BIN=$${MCPGW_BIN:-$(CURDIR)/$(BUILD)/asan/mcpgw} \
	$(call NODE_TEST_TIMEOUT,$(INTEGRATION_FILE_TIMEOUT_MS)) test/integration/*.test.mjs

test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory structure
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory integration
	@$(MAKE) --no-print-directory conformance
	@$(MAKE) --no-print-directory fuzz-smoke

valgrind: all fixtures $(NODE_STAMP) $(CONFORMANCE_STAMP)
	PATH="$(CURDIR)/$(BUILD)/tools/usr/bin:$$PATH" $(TEST_NODE_OPTIONS) \
	MCPGW_BIN=$(CURDIR)/$(BUILD)/mcpgw MCPGW_WRAPPER=valgrind \
	$(call NODE_TEST_TIMEOUT,$(shell echo $$((20 * $(INTEGRATION_FILE_TIMEOUT_MS))))) test/integration/*.test.mjs

# A bounded soak (not in `make test`): SOAK_SECONDS, default 600.
soak: all fixtures $(NODE_STAMP)
	$(TEST_NODE_OPTIONS) MCPGW_BIN=$(CURDIR)/$(BUILD)/mcpgw node test/soak/soak.mjs

# The sandbox's limits for real where this host's cgroup v2 has no
# controllers (a hybrid or v1 host): a QEMU VM on a pure cgroup v2 runs
# test/integration/sandbox_limits.test.mjs (root; a few minutes emulated).
cgroup2-test: all fixtures $(NODE_STAMP)
	test/cgroup2-vm.sh

format:
	clang-format -i $(SRC) $(HDRS) $(UNIT_SRC) $(FIXTURE_SRC)

UNITDIR     ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/mcpgw

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SYSCONFDIR)/mcpgw $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
		$(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(BUILD)/mcpgw $(DESTDIR)$(PREFIX)/bin/mcpgw
	[ -e $(DESTDIR)$(SYSCONFDIR)/mcpgw/mcp.yaml ] || \
		install -m 0644 conf/system.yaml $(DESTDIR)$(SYSCONFDIR)/mcpgw/mcp.yaml
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	sed 's|/usr/local/|$(PREFIX)/|g' systemd/mcpgw.service > $(DESTDIR)$(UNITDIR)/mcpgw.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/mcpgw.service
	install -m 0644 systemd/mcpgw.sysusers $(DESTDIR)$(SYSUSERSDIR)/mcpgw.conf
	install -m 0644 systemd/mcpgw.tmpfiles $(DESTDIR)$(TMPFILESDIR)/mcpgw.conf
	install -m 0644 docs/mcpgw.8 $(DESTDIR)$(MANDIR)/man8/mcpgw.8
	@[ -n "$(DESTDIR)" ] || ! command -v systemd-sysusers >/dev/null || \
		{ systemd-sysusers $(SYSUSERSDIR)/mcpgw.conf && \
		  systemd-tmpfiles --create $(TMPFILESDIR)/mcpgw.conf; }

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/mcpgw $(DESTDIR)$(UNITDIR)/mcpgw.service \
		$(DESTDIR)$(SYSUSERSDIR)/mcpgw.conf $(DESTDIR)$(TMPFILESDIR)/mcpgw.conf \
		$(DESTDIR)$(MANDIR)/man8/mcpgw.8
	rm -rf $(DESTDIR)$(DOCDIR)

# The Debian package, build/mcpgw_<VERSION>_<arch>.deb (docs/operations.md,
# *The Debian package*); VERSION defaults to the daemon's own.
VERSION ?= $(shell sed -n 's/^\#define GW_VERSION "\(.*\)"/\1/p' include/gw/version.h)
deb:
	@sh systemd/deb/mkdeb.sh $(VERSION)

# The package under a real systemd: a Debian 12 container booted with
# systemd-nspawn on a debootstrap tree cached in ~/.cache/mcpgw/systemd-test/
# (outside the clone, which CI makes afresh; test/systemd/run.sh skips
# without root or systemd-nspawn).
# It builds two packages, VERSION and VERSION+upgrade, for the upgrade check.
systemd-test:
	VERSION=$(VERSION) bash test/systemd/run.sh

clean:
	rm -rf $(BUILD)

# Fuzzing (`make fuzz FUZZ_SECONDS=N`; `make fuzz-smoke` replays the checked-in
# corpora and fuzzes each target for 3 s): see test/fuzz/fuzz.mk.
include test/fuzz/fuzz.mk

# Benchmarks (`make bench`, `make bench BENCH_QUICK=1`): see test/bench/README.md.
include test/bench/bench.mk
