/* Config loader: every key, every value form, every error class with its
 * message and line, error scopes, limits, hashes and the public view. */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/util.h"

static char dir[64];
static char cfgpath[128];

static void setup(void)
{
    strcpy(dir, "/tmp/gwcfgXXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cfgpath, sizeof(cfgpath), "%s/mcp.yaml", dir);
    setenv("GWT_TOKEN", "s3cret-token", 1);
    setenv("GWT_X", "GWT_TOKEN", 1);
    setenv("GWT_BRACES", "${GWT_TOKEN}", 1);
    unsetenv("GWT_MISSING");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *name, const char *text, int mode)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    chmod(p, (mode_t)mode);
}

static struct gw_config *load(const char *yaml)
{
    struct gw_config *c = NULL;
    ck_assert_int_eq(gw_config_load_buffer(cfgpath, yaml, strlen(yaml), &c), 0);
    ck_assert_ptr_nonnull(c);
    return c;
}

/* The first diag whose message contains `needle`. */
static const struct gw_diag *find(const struct gw_config *c, const char *needle)
{
    for (size_t i = 0; i < c->ndiags; i++) {
        if (strstr(c->diags[i].message, needle) != NULL)
            return &c->diags[i];
    }
    return NULL;
}

static size_t count(const struct gw_config *c, enum gw_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < c->ndiags; i++)
        n += c->diags[i].severity == sev;
    return n;
}

static void dump(const struct gw_config *c)
{
    for (size_t i = 0; i < c->ndiags; i++) {
        char *s = gw_diag_format(&c->diags[i]);
        fprintf(stderr, "  %s\n", s);
        free(s);
    }
}

/* Asserts an error with exactly `msg` at `line`, returns it. */
static const struct gw_diag *expect_error(const struct gw_config *c, const char *msg, int line)
{
    const struct gw_diag *d = find(c, msg);
    if (d == NULL)
        dump(c);
    ck_assert_msg(d != NULL, "no diag containing \"%s\"", msg);
    ck_assert_int_eq(d->severity, GW_SEV_ERROR);
    ck_assert_int_eq(d->line, line);
    ck_assert_str_eq(d->file, d->file[0] == '/' ? d->file : "/");
    return d;
}

static const struct gw_server_config *srv(const struct gw_config *c, const char *id)
{
    const struct gw_server_config *s = gw_config_server(c, id);
    ck_assert_msg(s != NULL, "no server %s", id);
    return s;
}

#define OK_STDIO "    command: npx\n"

START_TEST(missing_file_is_empty)
{
    struct gw_config *c = NULL;
    char p[128];
    snprintf(p, sizeof(p), "%s/nope.yaml", dir);
    ck_assert_int_eq(gw_config_load(p, &c), 0);
    ck_assert(c->ok);
    ck_assert(!c->exists);
    ck_assert_uint_eq(c->nservers, 0);
    ck_assert_uint_eq(c->ndiags, 0);
    ck_assert_str_eq(c->gateway.listen, "127.0.0.1:7420");
    ck_assert_str_eq(c->dir, dir);
    gw_config_unref(c);
}
END_TEST

START_TEST(gateway_defaults)
{
    struct gw_config *c = load("version: 1\n");
    const struct gw_gateway_config *g = &c->gateway;
    ck_assert(c->ok && c->exists);
    ck_assert_str_eq(g->listen, "127.0.0.1:7420");
    ck_assert_ptr_null(g->auth_token);
    ck_assert_int_eq(g->max_concurrent, 64);
    ck_assert_uint_eq(g->request_timeout_ms, 60000);
    ck_assert_uint_eq(g->lease_idle_timeout_ms, 15 * 60000);
    ck_assert_int_eq(g->max_instances_per_server, 32);
    ck_assert_int_eq(g->warm_spares, 1);
    char want[128];
    snprintf(want, sizeof(want), "%s/artifacts", dir);
    ck_assert_str_eq(g->artifacts_dir, want);
    ck_assert_uint_eq(g->artifacts_max_bytes_per_dialog, 64u << 20);
    ck_assert_uint_eq(g->artifacts_max_bytes, 1ull << 30);
    ck_assert_uint_eq(g->nallowed_commands, 0);
    ck_assert_uint_eq(g->max_body, 8u << 20);
    ck_assert_uint_eq(g->max_header_bytes, 16u << 10);
    ck_assert_int_eq(g->max_connections, 1024);
    ck_assert_uint_eq(g->header_timeout_ms, 10000);
    ck_assert_uint_eq(g->keepalive_timeout_ms, 75000);
    ck_assert_uint_eq(g->nallowed_origins, 0);
    ck_assert_uint_eq(g->ninherit_env, 16);
    ck_assert_str_eq(g->inherit_env[0], "PATH");
    ck_assert_str_eq(g->inherit_env[15], "NO_PROXY");
    ck_assert_int_eq(g->tool_changes, GW_TOOL_CHANGES_WARN);
    ck_assert_int_eq(g->mcp_default_dialog, GW_MCP_DIALOG_CLIENT);
    ck_assert_uint_eq(g->shutdown_grace_ms, 10000);
    ck_assert_uint_eq(g->reload_debounce_ms, 200);
    ck_assert_uint_eq(g->reload_poll_interval_ms, 1000);
    ck_assert(!g->tool_search_enabled);
    ck_assert_uint_eq(g->ntool_search_always_loaded, 0);
    ck_assert_int_eq(g->tool_search_max_results, 5);
    gw_config_unref(c);
}
END_TEST

START_TEST(gateway_all_keys)
{
    struct gw_config *c = load("version: 1\n"
                               "gateway:\n"
                               "  listen: '[::1]:9000'\n"
                               "  auth_token: {env: GWT_TOKEN}\n"
                               "  max_concurrent: 8\n"
                               "  request_timeout: 2m\n"
                               "  lease_idle_timeout: 0\n"
                               "  max_instances_per_server: 3\n"
                               "  warm_spares: 0\n"
                               "  artifacts_dir: /var/lib/mcpgw/art\n"
                               "  artifacts_max_bytes_per_dialog: 1KiB\n"
                               "  artifacts_max_bytes: 2MB\n"
                               "  allowed_commands: [npx, uvx, docker]\n"
                               "  max_body: 1MiB\n"
                               "  max_header_bytes: 8KB\n"
                               "  max_connections: 10\n"
                               "  header_timeout: 500ms\n"
                               "  keepalive_timeout: PT5S\n"
                               "  allowed_origins: ['https://app.example.com']\n"
                               "  inherit_env: [PATH, 'LC_*']\n"
                               "  tool_changes: disable\n"
                               "  mcp_default_dialog: shared\n"
                               "  shutdown_grace: 1.5\n"
                               "  reload: {debounce_ms: 50, poll_interval_ms: 2s}\n"
                               "  tool_search: {enabled: true, always_loaded: ['browser_*'], "
                               "max_results: 100}\n");
    const struct gw_gateway_config *g = &c->gateway;
    dump(c);
    ck_assert(c->ok);
    ck_assert_uint_eq(c->ndiags, 0);
    ck_assert_str_eq(g->listen, "[::1]:9000");
    ck_assert_str_eq(g->auth_token, "s3cret-token");
    ck_assert_int_eq(g->max_concurrent, 8);
    ck_assert_uint_eq(g->request_timeout_ms, 120000);
    ck_assert_uint_eq(g->lease_idle_timeout_ms, 0);
    ck_assert_int_eq(g->max_instances_per_server, 3);
    ck_assert_int_eq(g->warm_spares, 0);
    ck_assert_str_eq(g->artifacts_dir, "/var/lib/mcpgw/art");
    ck_assert_uint_eq(g->artifacts_max_bytes_per_dialog, 1024);
    ck_assert_uint_eq(g->artifacts_max_bytes, 2000000);
    ck_assert_uint_eq(g->nallowed_commands, 3);
    ck_assert_str_eq(g->allowed_commands[2], "docker");
    ck_assert_uint_eq(g->max_body, 1u << 20);
    ck_assert_uint_eq(g->max_header_bytes, 8000);
    ck_assert_int_eq(g->max_connections, 10);
    ck_assert_uint_eq(g->header_timeout_ms, 500);
    ck_assert_uint_eq(g->keepalive_timeout_ms, 5000);
    ck_assert_str_eq(g->allowed_origins[0], "https://app.example.com");
    ck_assert_uint_eq(g->ninherit_env, 2);
    ck_assert_int_eq(g->tool_changes, GW_TOOL_CHANGES_DISABLE);
    ck_assert_int_eq(g->mcp_default_dialog, GW_MCP_DIALOG_SHARED);
    ck_assert_uint_eq(g->shutdown_grace_ms, 1500);
    ck_assert_uint_eq(g->reload_debounce_ms, 50);
    ck_assert_uint_eq(g->reload_poll_interval_ms, 2000);
    ck_assert(g->tool_search_enabled);
    ck_assert_uint_eq(g->ntool_search_always_loaded, 1);
    ck_assert_str_eq(g->tool_search_always_loaded[0], "browser_*");
    ck_assert_int_eq(g->tool_search_max_results, 100);
    gw_config_unref(c);
}
END_TEST

START_TEST(duration_forms)
{
    static const struct {
        const char *s;
        uint64_t ms;
    } ok[] = {
        {"30", 30000},        {"0", 0},        {"0.5", 500},          {"1.25", 1250},
        {"250ms", 250},       {"30s", 30000},  {"5m", 300000},        {"1h", 3600000},
        {"1m30s", 90000},     {"1.5s", 1500},  {"PT30S", 30000},      {"P0DT0H0M30S", 30000},
        {"P1D", 86400000},    {"PT0.5S", 500}, {"P0DT0H1M0S", 60000}, {"PT1H2M3.004S", 3723004},
        {"P1DT1S", 86401000}, {".5", 500}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t v = 12345;
        ck_assert_msg(gw_parse_duration(ok[i].s, &v) == 0, "%s refused", ok[i].s);
        ck_assert_msg(v == ok[i].ms, "%s gave %llu", ok[i].s, (unsigned long long)v);
    }
}
END_TEST

START_TEST(duration_rejects)
{
    static const char *const bad[] = {"",
                                      "-1",
                                      "-5s",
                                      "abc",
                                      "5 minutes",
                                      "P",
                                      "PT",
                                      "P1Y",
                                      "P1M",
                                      "PT1D",
                                      "1x",
                                      "30S",
                                      "1.",
                                      "1..5s",
                                      "s",
                                      "1m30",
                                      "99999999999999999999",
                                      "18446744073709551615s",
                                      "P1S",
                                      "PT1S1M",
                                      "1e3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t v = 7;
        ck_assert_msg(gw_parse_duration(bad[i], &v) == UV_EINVAL, "%s accepted", bad[i]);
        ck_assert_uint_eq(v, 7);
    }
}
END_TEST

START_TEST(size_forms)
{
    static const struct {
        const char *s;
        uint64_t b;
    } ok[] = {{"0", 0},          {"1024", 1024},     {"100B", 100},        {"16KiB", 16384},
              {"8MiB", 8388608}, {"1GiB", 1u << 30}, {"2TiB", 2ull << 40}, {"1KB", 1000},
              {"1kB", 1000},     {"3MB", 3000000},   {"1GB", 1000000000}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t v = 0;
        ck_assert_msg(gw_parse_size(ok[i].s, &v) == 0, "%s refused", ok[i].s);
        ck_assert_uint_eq(v, ok[i].b);
    }
    static const char *const bad[] = {"",
                                      "-1",
                                      "1.5MiB",
                                      "8 MiB",
                                      "8mib",
                                      "MiB",
                                      "1XB",
                                      "99999999999999999999",
                                      "17179869184GiB"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t v = 3;
        ck_assert_msg(gw_parse_size(bad[i], &v) == UV_EINVAL, "%s accepted", bad[i]);
        ck_assert_uint_eq(v, 3);
    }
}
END_TEST

START_TEST(bad_duration_in_gateway_is_workspace_error)
{
    struct gw_config *c = load("version: 1\ngateway:\n  request_timeout: 5 minutes\n");
    const struct gw_diag *d = expect_error(c, "'gateway.request_timeout' is '5 minutes'", 3);
    ck_assert(!c->ok);
    ck_assert_int_eq(d->scope, GW_SCOPE_WORKSPACE);
    ck_assert_int_eq(d->col, 20);
    ck_assert_str_eq(d->key, "gateway.request_timeout");
    ck_assert_ptr_nonnull(strstr(d->message, "250ms, 30s, 5m, 1h"));
    ck_assert_ptr_nonnull(strstr(d->message, "ISO-8601"));
    gw_config_unref(c);
}
END_TEST

START_TEST(bad_size_and_ints)
{
    struct gw_config *c = load("version: 1\ngateway:\n  max_body: 8 megs\n  max_connections: -3\n"
                               "  warm_spares: lots\n  max_header_bytes: 10\n");
    expect_error(c, "'gateway.max_body' is '8 megs'; write a number of bytes", 3);
    expect_error(c, "'gateway.max_connections' is '-3'; write a whole number, at least 1", 4);
    expect_error(c, "'gateway.warm_spares' is 'lots'", 5);
    const struct gw_diag *d = expect_error(c, "'gateway.max_header_bytes' is '10'", 6);
    ck_assert_ptr_nonnull(strstr(d->message, "at least 1024 bytes"));
    ck_assert(!c->ok);
    gw_config_unref(c);
}
END_TEST

/* `key` ("gateway.reload.debounce_ms", "servers.<id>.timeout") written as
 * nested YAML with the value `value`, server a given a command; *line is
 * the value's line. */
static char *yaml_for_key(const char *key, const char *value, int *line)
{
    char *out = gw_xasprintf("version: 1\n"), *rest = gw_xstrdup(key), *save = NULL, *tmp;
    int depth = 0;

    *line = 1;
    for (char *part = strtok_r(rest, ".", &save); part != NULL; part = strtok_r(NULL, ".", &save)) {
        const char *name = strcmp(part, "<id>") == 0 ? "a" : part;
        char *next = save != NULL && *save != '\0' ? save : NULL;
        tmp = gw_xasprintf("%s%*s%s:%s%s\n", out, 2 * depth, "", name, next ? "" : " ",
                           next ? "" : value);
        free(out);
        out = tmp;
        ++*line;
        if (strcmp(part, "<id>") == 0) {
            tmp = gw_xasprintf("%s%*scommand: npx\n", out, 2 * depth + 2, "");
            free(out);
            out = tmp;
            ++*line;
        }
        depth++;
    }
    free(rest);
    return out;
}

/* Every key that takes a number refuses one written in quotes, naming the
 * key and its line; unquoted, the same text loads. */
START_TEST(quoted_numbers_refused_for_every_number_key)
{
    struct gw_config_directive_info info;
    size_t checked = 0;

    for (size_t i = 0; gw_config_directive(i, &info) == 0; i++) {
        static const char *const numeric[] = {"integer", "duration", "milliseconds", "size"};
        bool number = false;
        for (size_t k = 0; k < 4; k++)
            number = number || strcmp(info.type, numeric[k]) == 0;
        if (!number)
            continue;
        for (size_t q = 0; q < 3; q++) {
            static const char *const forms[] = {"\"64\"", "'64'", "!!str 64"};
            int line;
            char *yaml = yaml_for_key(info.key, forms[q], &line), *shown = gw_xstrdup(info.key);
            char *id = strstr(shown, "<id>"), want[200];
            if (id != NULL) {
                *id = 'a';
                memmove(id + 1, id + 4, strlen(id + 4) + 1);
            }
            snprintf(want, sizeof want, "'%s' is the string \"64\"", shown);
            struct gw_config *c = load(yaml);
            const struct gw_diag *d = expect_error(c, want, line);
            ck_assert_str_eq(d->key, shown);
            gw_config_unref(c);
            free(yaml);
            free(shown);
        }
        int line;
        char *yaml = yaml_for_key(info.key, "2048", &line);
        struct gw_config *c = load(yaml);
        ck_assert_msg(find(c, "is the string") == NULL, "%s: plain 2048 refused", info.key);
        gw_config_unref(c);
        free(yaml);
        checked++;
    }
    ck_assert_uint_ge(checked, 16);

    /* the keys outside the table: version and a tool config's two */
    struct gw_config *c = load("version: '1'\n");
    expect_error(c, "'version' is the string \"1\"", 1);
    ck_assert(!c->ok);
    gw_config_unref(c);
    c = load("version: 1\nservers:\n  a:\n" OK_STDIO "    mode: dynamic\n"
             "    default_tool_config: {max_instances: '2', timeout: \"30\"}\n"
             "    tool_config:\n      t1: {max_instances: \"3\", timeout: 1.5}\n");
    expect_error(c, "'servers.a.default_tool_config.max_instances' is the string \"2\"", 6);
    expect_error(c, "'servers.a.default_tool_config.timeout' is the string \"30\"", 6);
    expect_error(c, "'servers.a.tool_config.t1.max_instances' is the string \"3\"", 8);
    ck_assert_ptr_null(find(c, "'servers.a.tool_config.t1.timeout'"));
    ck_assert(!srv(c, "a")->ok);
    gw_config_unref(c);
    /* a unit makes it a duration's text, which may be quoted */
    c = load("version: 1\ngateway:\n  request_timeout: '30s'\n  max_body: \"8MiB\"\n"
             "  reload: {debounce_ms: '250ms'}\n");
    ck_assert_uint_eq(count(c, GW_SEV_ERROR), 0);
    ck_assert_uint_eq(c->gateway.request_timeout_ms, 30000);
    gw_config_unref(c);
}
END_TEST

START_TEST(bad_gateway_values)
{
    struct gw_config *c = load("version: 1\ngateway:\n  listen: 'localhost'\n"
                               "  tool_changes: explode\n  auth_token: ''\n"
                               "  allowed_origins: ['evil.example']\n"
                               "  mcp_default_dialog: [client]\n"
                               "  tool_search:\n    max_results: 101\n    enabled: maybe\n");
    expect_error(c, "'gateway.listen' is not a listen address: 'localhost'", 3);
    expect_error(c, "'gateway.tool_search.max_results' must be at most 100", 9);
    expect_error(c, "gateway.tool_search.enabled", 10);
    expect_error(c, "'gateway.tool_changes' must be 'warn' or 'disable'", 4);
    expect_error(c, "'gateway.auth_token' is empty", 5);
    expect_error(c, "an origin is scheme://host[:port]", 6);
    expect_error(c, "'gateway.mcp_default_dialog' must be 'client', 'shared' or 'none'", 7);
    ck_assert(!c->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(listen_forms)
{
    static const char *const good[] = {"127.0.0.1:7420", "[::1]:1", "localhost:65535",
                                       "unix:/run/mcpgw/mcpgw.sock", "0.0.0.0:80"};
    static const char *const bad[] = {"127.0.0.1", ":80",      "host:0", "host:65536", "[::1]",
                                      "[zz]:80",   "unix:rel", "a b:80", "::1:80",     "host:http"};
    const char *why;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char y[200];
        snprintf(y, sizeof(y), "version: 1\ngateway: {listen: '%s'}\n", good[i]);
        struct gw_config *c = load(y);
        ck_assert_msg(c->ok, "%s refused", good[i]);
        gw_config_unref(c);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char y[200];
        snprintf(y, sizeof(y), "version: 1\ngateway: {listen: '%s'}\n", bad[i]);
        struct gw_config *c = load(y);
        ck_assert_msg(!c->ok, "%s accepted", bad[i]);
        gw_config_unref(c);
    }
    (void)why;
}
END_TEST

START_TEST(invalid_yaml)
{
    struct gw_config *c = load("version: 1\nservers:\n  a: [1, 2\n  b: x\n");
    const struct gw_diag *d = find(c, "invalid YAML:");
    ck_assert_ptr_nonnull(d);
    ck_assert(!c->ok);
    ck_assert_int_eq(d->scope, GW_SCOPE_WORKSPACE);
    ck_assert_int_ge(d->line, 3);
    ck_assert_uint_eq(c->nservers, 0);
    gw_config_unref(c);
    c = load("version: 1\n  bad: indent\n");
    d = find(c, "mapping values are not allowed");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->line, 2);
    gw_config_unref(c);
}
END_TEST

START_TEST(version_missing_or_unsupported)
{
    struct gw_config *c = load("servers: {}\n");
    expect_error(c, "missing 'version'; add 'version: 1' at the top of the file", 1);
    ck_assert(!c->ok);
    gw_config_unref(c);
    c = load("# comment\nversion: 2\n");
    expect_error(c, "unsupported version '2'; this mcpgw reads 'version: 1'", 2);
    ck_assert(!c->ok);
    gw_config_unref(c);
    c = load("");
    expect_error(c, "the file is empty", 1);
    gw_config_unref(c);
    c = load("- a\n- b\n");
    expect_error(c, "the top level must be a map", 1);
    gw_config_unref(c);
}
END_TEST

START_TEST(file_too_large)
{
    size_t n = GW_CONFIG_MAX_FILE + 10;
    char *big = malloc(n + 1);
    memset(big, '#', n);
    memcpy(big, "version: 1\n", 11);
    big[n] = '\0';
    struct gw_config *c = NULL;
    ck_assert_int_eq(gw_config_load_buffer(cfgpath, big, n, &c), 0);
    ck_assert(!c->ok);
    ck_assert_ptr_nonnull(find(c, "the limit is 4 MiB"));
    gw_config_unref(c);
    FILE *f = fopen(cfgpath, "w");
    fwrite(big, 1, n, f);
    fclose(f);
    ck_assert_int_eq(gw_config_load(cfgpath, &c), 0);
    ck_assert(!c->ok && c->exists);
    ck_assert_ptr_nonnull(find(c, "the limit is 4 MiB"));
    ck_assert_ptr_nonnull(strstr(find(c, "the limit is 4 MiB")->message, cfgpath));
    gw_config_unref(c);
    free(big);
}
END_TEST

/* security.md F2: a FIFO at the config path (no writer) is refused at once
 * instead of blocking open(), which would freeze the daemon's reload; the
 * test's timeout is what fails when open() blocks. */
START_TEST(fifo_and_directory_refused)
{
    struct gw_config *c = NULL;
    const struct gw_diag *d;
    char sub[160];

    ck_assert_int_eq(mkfifo(cfgpath, 0600), 0);
    ck_assert_int_eq(gw_config_load(cfgpath, &c), 0);
    ck_assert(!c->ok && c->exists);
    d = find(c, "it is a FIFO, not a regular file");
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(strstr(d->message, cfgpath));
    ck_assert_str_eq(d->file, cfgpath);
    gw_config_unref(c);

    snprintf(sub, sizeof sub, "%s/conf.d", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ck_assert_int_eq(gw_config_load(sub, &c), 0);
    ck_assert(!c->ok && c->exists);
    d = find(c, "it is a directory, not a regular file");
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(strstr(d->message, sub));
    gw_config_unref(c);
}
END_TEST

START_TEST(alias_bomb)
{
    const char *y = "version: 1\n"
                    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                    "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                    "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
    struct gw_config *c = load(y);
    const struct gw_diag *d = find(c, "aliases expand to more than 100000 nodes");
    ck_assert_ptr_nonnull(d);
    ck_assert(!c->ok);
    ck_assert_int_eq(d->line, 6);
    gw_config_unref(c);
}
END_TEST

START_TEST(aliases_within_limits_work)
{
    struct gw_config *c = load("version: 1\n"
                               "servers:\n"
                               "  a: &base\n"
                               "    command: npx\n"
                               "    args: ['-y', 'x']\n"
                               "  b: *base\n");
    dump(c);
    ck_assert(c->ok);
    ck_assert_uint_eq(c->nservers, 2);
    ck_assert_str_eq(srv(c, "b")->args[1], "x");
    gw_config_unref(c);
}
END_TEST

START_TEST(nesting_too_deep)
{
    char y[512] = "version: 1\nx: ";
    for (int i = 0; i < 70; i++)
        strcat(y, "[");
    for (int i = 0; i < 70; i++)
        strcat(y, "]");
    strcat(y, "\n");
    struct gw_config *c = load(y);
    ck_assert_ptr_nonnull(find(c, "nesting is deeper than 64 levels"));
    ck_assert(!c->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(duplicate_top_and_gateway_keys)
{
    struct gw_config *c = load("version: 1\nservers: {}\nservers: {}\n");
    expect_error(c, "duplicate key 'servers' at the top level (first written at line 2)", 3);
    ck_assert(!c->ok);
    gw_config_unref(c);
    c = load("version: 1\ngateway:\n  reload:\n    debounce_ms: 1\n    debounce_ms: 2\n");
    const struct gw_diag *d = expect_error(
        c, "duplicate key 'debounce_ms' in gateway.reload (first written at line 4)", 5);
    ck_assert_int_eq(d->scope, GW_SCOPE_WORKSPACE);
    ck_assert(!c->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(duplicate_server_id_is_workspace_error)
{
    struct gw_config *c = load("version: 1\nservers:\n  a:\n" OK_STDIO "  a:\n" OK_STDIO);
    const struct gw_diag *d =
        expect_error(c, "duplicate server id 'a' (first defined at line 3)", 5);
    ck_assert_int_eq(d->scope, GW_SCOPE_WORKSPACE);
    ck_assert(!c->ok);
    ck_assert_uint_eq(c->nservers, 1);
    gw_config_unref(c);
}
END_TEST

START_TEST(duplicate_key_inside_server_is_per_server)
{
    struct gw_config *c =
        load("version: 1\nservers:\n"
             "  a:\n    command: npx\n    command: npx\n"
             "  b:\n" OK_STDIO "  c:\n" OK_STDIO "    env:\n      X: '1'\n      X: '2'\n");
    const struct gw_diag *d =
        expect_error(c, "duplicate key 'command' in servers.a (first written at line 4)", 5);
    ck_assert_int_eq(d->scope, GW_SCOPE_SERVER);
    ck_assert_str_eq(d->server, "a");
    expect_error(c, "duplicate key 'X' in servers.c.env", 12);
    ck_assert(c->ok);
    ck_assert(!srv(c, "a")->ok);
    ck_assert(srv(c, "b")->ok);
    ck_assert(!srv(c, "c")->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(server_defaults)
{
    struct gw_config *c = load("version: 1\nservers:\n  pw:\n" OK_STDIO);
    const struct gw_server_config *s = srv(c, "pw");
    dump(c);
    ck_assert(c->ok && s->ok);
    ck_assert_ptr_null(s->error);
    ck_assert_int_eq(s->line, 3);
    ck_assert_int_eq(s->col, 3);
    ck_assert(!s->truely_stateless);
    ck_assert_int_eq(s->transport, GW_TRANSPORT_STDIO);
    ck_assert(!s->required);
    ck_assert_str_eq(s->command, "npx");
    ck_assert_ptr_nonnull(s->command_path);
    ck_assert_int_eq(s->command_path[0], '/');
    ck_assert_uint_eq(s->nargs, 0);
    ck_assert_str_eq(s->cwd, dir);
    ck_assert_ptr_null(s->env_file);
    ck_assert_str_eq(s->encoding, "utf-8");
    ck_assert_ptr_null(s->url);
    ck_assert_ptr_null(s->session_id);
    ck_assert_uint_eq(s->timeout_ms, 10000);
    ck_assert_uint_eq(s->sse_read_timeout_ms, 300000);
    ck_assert(s->terminate_on_close);
    ck_assert_uint_eq(s->request_timeout_ms, 0);
    ck_assert_ptr_null(s->init_config);
    ck_assert(s->load_tools && s->load_prompts && s->load_resources);
    ck_assert(!s->resource_namespace);
    ck_assert_int_eq(s->mode, GW_MODE_UNSET);
    ck_assert(!s->has_default_tool_config);
    ck_assert_int_eq(s->default_tool_config.max_instances, 5);
    ck_assert_uint_eq(s->default_tool_config.timeout_ms, 30000);
    ck_assert_uint_eq(strlen(s->spawn_hash), 16);
    ck_assert_uint_eq(strlen(s->catalog_hash), 16);
    gw_config_unref(c);
}
END_TEST

START_TEST(server_all_keys_http)
{
    struct gw_config *c =
        load("version: 1\nservers:\n"
             "  api:\n"
             "    truely-stateless: true\n"
             "    transport: http\n"
             "    required: true\n"
             "    url: https://mcp.example.com/mcp\n"
             "    headers: {Authorization: 'Bearer ${GWT_TOKEN}', X-Client: mcpgw}\n"
             "    sessionId: abc\n"
             "    timeout: 3\n"
             "    sse_read_timeout: 2m\n"
             "    terminate_on_close: false\n"
             "    request_timeout: PT45S\n"
             "    config: {a: 1}\n"
             "    load_tools: true\n"
             "    load_prompts: false\n"
             "    load_resources: False\n"
             "    resource_namespace: true\n"
             "    tools: {whitelist: ['get_*'], blacklist: ['*_unsafe', 'rm']}\n"
             "    transform: [{prefix: 'api_'}]\n"
             "    mode: strict\n"
             "    tool_config: {get_x: {max_instances: 2}}\n");
    const struct gw_server_config *s = srv(c, "api");
    dump(c);
    ck_assert(c->ok && s->ok);
    ck_assert_uint_eq(c->ndiags, 0);
    ck_assert(s->truely_stateless && s->required);
    ck_assert_int_eq(s->transport, GW_TRANSPORT_STREAMABLE_HTTP);
    ck_assert_str_eq(s->url, "https://mcp.example.com/mcp");
    ck_assert_uint_eq(s->nheaders, 2);
    ck_assert_str_eq(s->headers[0].name, "Authorization");
    ck_assert_str_eq(s->headers[0].value, "Bearer s3cret-token");
    ck_assert_str_eq(s->headers[1].value, "mcpgw");
    ck_assert_str_eq(s->session_id, "abc");
    ck_assert_uint_eq(s->timeout_ms, 3000);
    ck_assert_uint_eq(s->sse_read_timeout_ms, 120000);
    ck_assert(!s->terminate_on_close);
    ck_assert_uint_eq(s->request_timeout_ms, 45000);
    ck_assert(s->load_tools && !s->load_prompts && !s->load_resources);
    ck_assert(s->resource_namespace);
    ck_assert_uint_eq(s->nwhitelist, 1);
    ck_assert_uint_eq(s->nblacklist, 2);
    ck_assert_str_eq(s->blacklist[1], "rm");
    ck_assert_int_eq(s->mode, GW_MODE_STRICT);
    ck_assert_uint_eq(s->ntool_configs, 1);
    ck_assert_ptr_null(s->command_path);
    gw_config_unref(c);
}
END_TEST

START_TEST(bad_bool_and_transport)
{
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  a:\n" OK_STDIO "    required: yes please\n"
                               "  b:\n    transport: carrier-pigeon\n"
                               "  w:\n    transport: websocket\n    url: ws://x.example/ws\n"
                               "  n:\n" OK_STDIO "    resource_namespace: prefix\n");
    expect_error(c, "'servers.a.required' must be true or false, not 'yes please'", 5);
    expect_error(c, "'servers.n.resource_namespace' must be true or false, not 'prefix'", 13);
    expect_error(c,
                 "unknown transport 'carrier-pigeon'; accepted: stdio, streamable_http (alias "
                 "http), sse",
                 7);
    expect_error(c, "'url' must use wss:// (or ws:// for localhost)", 10);
    ck_assert(c->ok);
    ck_assert(!srv(c, "a")->ok && !srv(c, "b")->ok && !srv(c, "w")->ok && !srv(c, "n")->ok);
    gw_config_unref(c);
    c = load("version: 1\nservers:\n"
             "  lo:\n    transport: websocket\n    url: ws://localhost:9/ws\n"
             "  far:\n    transport: websocket\n    url: wss://x.example/ws\n"
             "  http:\n    transport: websocket\n    url: https://x.example/ws\n");
    ck_assert(srv(c, "lo")->ok && srv(c, "far")->ok && !srv(c, "http")->ok);
    ck_assert_int_eq(srv(c, "lo")->transport, GW_TRANSPORT_WEBSOCKET);
    gw_config_unref(c);
}
END_TEST

START_TEST(env_value_forms)
{
    struct gw_config *c = load("version: 1\nservers:\n  a:\n" OK_STDIO "    env:\n"
                               "      LIT: 'plain value'\n"
                               "      NUM: 8080\n"
                               "      COPY: {env: GWT_TOKEN}\n"
                               "      SUB: 'Bearer ${GWT_TOKEN}!'\n"
                               "      DOLLAR: 'a$b $ ${'\n"
                               "      ESC: '$${GWT_TOKEN}'\n");
    const struct gw_server_config *s = srv(c, "a");
    dump(c);
    ck_assert(s->ok);
    ck_assert_uint_eq(s->nenv, 6);
    ck_assert_str_eq(s->env[0].value, "plain value");
    ck_assert_str_eq(s->env[1].value, "8080");
    ck_assert_str_eq(s->env[2].value, "s3cret-token");
    ck_assert_str_eq(s->env[3].value, "Bearer s3cret-token!");
    ck_assert_str_eq(s->env[4].value, "a$b $ ${");
    ck_assert_str_eq(s->env[5].value, "${GWT_TOKEN}");
    gw_config_unref(c);
}
END_TEST

START_TEST(env_missing_variable)
{
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  a:\n" OK_STDIO "    env:\n      K: {env: GWT_MISSING}\n"
                               "  b:\n" OK_STDIO "    headers: {H: 'x ${GWT_MISSING}'}\n"
                               "  ok:\n" OK_STDIO);
    const struct gw_diag *d =
        expect_error(c, "ConfigError: Environment variable 'GWT_MISSING' not found", 6);
    ck_assert_str_eq(d->message, "ConfigError: Environment variable 'GWT_MISSING' not found");
    ck_assert_str_eq(d->server, "a");
    ck_assert_str_eq(d->key, "servers.a.env.K");
    ck_assert_str_eq(srv(c, "a")->error, d->message);
    ck_assert_str_eq(srv(c, "b")->error,
                     "ConfigError: Environment variable 'GWT_MISSING' not found");
    ck_assert(c->ok);
    ck_assert(srv(c, "ok")->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(subst_is_not_recursive)
{
    char *out = NULL, *missing = NULL;
    struct gw_config *c = load("version: 1\nservers:\n  a:\n" OK_STDIO
                               "    env:\n      A: '${${GWT_X}}'\n      B: '${GWT_BRACES}'\n");
    const struct gw_server_config *s = srv(c, "a");
    ck_assert(s->ok);
    /* GWT_X is "GWT_TOKEN": the inner reference is replaced, the outer
     * "${" and "}" stay literal and the result is not scanned again. */
    ck_assert_str_eq(s->env[0].value, "${GWT_TOKEN}");
    ck_assert_str_eq(s->env[1].value, "${GWT_TOKEN}");
    gw_config_unref(c);
    (void)out;
    (void)missing;
}
END_TEST

START_TEST(env_file_parsing)
{
    write_file("sub.env",
               "# a comment\n"
               "\n"
               "PLAIN=hello world  # trailing comment\n"
               "export EXPORTED=yes\n"
               "  SPACED = spaced\n"
               "SQ='single ${GWT_TOKEN} # not a comment'\n"
               "DQ=\"double \\\"q\\\" \\\\ x\"\n"
               "HASH=a#b\n"
               "EMPTY=\n"
               "OVERRIDE=from-file\r\n",
               0600);
    struct gw_config *c =
        load("version: 1\nservers:\n  a:\n" OK_STDIO "    env: {OVERRIDE: from-yaml}\n"
             "    envFile: ./sub.env\n");
    const struct gw_server_config *s = srv(c, "a");
    dump(c);
    ck_assert(s->ok);
    char want[128];
    snprintf(want, sizeof(want), "%s/sub.env", dir);
    ck_assert_str_eq(s->env_file, want);
    ck_assert_uint_eq(s->nenv, 8);
    ck_assert_str_eq(s->env[0].name, "PLAIN");
    ck_assert_str_eq(s->env[0].value, "hello world");
    ck_assert_str_eq(s->env[1].name, "EXPORTED");
    ck_assert_str_eq(s->env[2].value, "spaced");
    ck_assert_str_eq(s->env[3].value, "single ${GWT_TOKEN} # not a comment");
    ck_assert_str_eq(s->env[4].value, "double \"q\" \\ x");
    ck_assert_str_eq(s->env[5].value, "a#b");
    ck_assert_str_eq(s->env[6].value, "");
    ck_assert_str_eq(s->env[7].name, "OVERRIDE");
    ck_assert_str_eq(s->env[7].value, "from-yaml");
    gw_config_unref(c);
}
END_TEST

START_TEST(env_file_errors)
{
    write_file("bad.env", "GOOD=1\nnot a line\nQ='open\n", 0600);
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  a:\n" OK_STDIO "    envFile: missing.env\n"
                               "  b:\n" OK_STDIO "    envFile: bad.env\n");
    const struct gw_diag *d = expect_error(c, "envFile '", 5);
    ck_assert_ptr_nonnull(strstr(d->message, "missing.env' cannot be read"));
    ck_assert(!srv(c, "a")->ok);
    d = find(c, "envFile line 2: expected NAME=VALUE");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->line, 2);
    ck_assert_ptr_nonnull(strstr(d->file, "bad.env"));
    ck_assert_str_eq(d->server, "b");
    ck_assert_ptr_nonnull(find(c, "envFile line 3: a quoted value is not closed"));
    ck_assert(!srv(c, "b")->ok);
    ck_assert(c->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(header_injection_refused)
{
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  a:\n    url: https://x.example/mcp\n    transport: http\n"
                               "    headers:\n      X-A: \"v\\r\\nInjected: 1\"\n"
                               "  b:\n    url: https://x.example/mcp\n    transport: http\n"
                               "    headers:\n      X-B: \"v\\0w\"\n"
                               "  c:\n    url: https://x.example/mcp\n    transport: http\n"
                               "    headers:\n      'Bad Name': v\n"
                               "  d:\n" OK_STDIO "    env: {E: \"line1\\nline2\"}\n");
    expect_error(c, "the value of 'servers.a.headers.X-A' contains a CR or LF", 7);
    expect_error(c, "'servers.b.headers.X-B' contains a NUL character", 12);
    expect_error(c, "header name 'Bad Name' is not a valid HTTP token", 17);
    expect_error(c, "the value of 'servers.d.env.E' contains a CR or LF", 20);
    ck_assert(!srv(c, "a")->ok && !srv(c, "b")->ok && !srv(c, "c")->ok && !srv(c, "d")->ok);
    ck_assert(c->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(url_required)
{
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  s:\n    transport: sse\n"
                               "  h:\n    transport: http\n"
                               "  q:\n    transport: streamable_http\n");
    const struct gw_diag *d = expect_error(c, "MCPConfigError: 'url' is required for sse", 3);
    ck_assert_str_eq(d->message, "MCPConfigError: 'url' is required for sse transport");
    ck_assert_str_eq(srv(c, "h")->error, "MCPConfigError: 'url' is required for http transport");
    ck_assert_str_eq(srv(c, "q")->error,
                     "MCPConfigError: 'url' is required for streamable_http transport");
    gw_config_unref(c);
}
END_TEST

START_TEST(url_scheme_rules)
{
    static const char *const good[] = {"https://mcp.example.com/x", "http://127.0.0.1:3000/mcp",
                                       "http://127.9.8.7/",         "http://localhost:8080/mcp",
                                       "http://LOCALHOST/",         "http://[::1]:3000/mcp",
                                       "HTTPS://a.example",         "http://user:pw@127.0.0.1/"};
    static const char *const bad[] = {
        "http://example.com/mcp", "http://10.0.0.1/",           "ftp://127.0.0.1/",
        "ws://localhost/",        "http://localhost.evil.com/", "http://128.0.0.1/",
        "http://[::2]/",          "http://127.0.0.1@evil.com/"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char y[256];
        snprintf(y, sizeof(y), "version: 1\nservers:\n  a:\n    transport: sse\n    url: '%s'\n",
                 good[i]);
        struct gw_config *c = load(y);
        if (!srv(c, "a")->ok)
            dump(c);
        ck_assert_msg(srv(c, "a")->ok, "%s refused", good[i]);
        gw_config_unref(c);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char y[256];
        snprintf(y, sizeof(y), "version: 1\nservers:\n  a:\n    transport: sse\n    url: '%s'\n",
                 bad[i]);
        struct gw_config *c = load(y);
        ck_assert_msg(!srv(c, "a")->ok, "%s accepted", bad[i]);
        const struct gw_diag *d = expect_error(
            c, "MCPConfigError: 'url' must use https:// (or http:// for localhost)", 5);
        ck_assert_str_eq(d->key, "servers.a.url");
        gw_config_unref(c);
    }
}
END_TEST

START_TEST(stdio_command_required)
{
    struct gw_config *c = load("version: 1\nservers:\n  a:\n    args: [x]\n");
    const struct gw_diag *d =
        expect_error(c, "MCPConfigError: 'command' is required for stdio transport", 3);
    ck_assert_str_eq(d->message, "MCPConfigError: 'command' is required for stdio transport");
    ck_assert_str_eq(d->key, "servers.a.command");
    gw_config_unref(c);
}
END_TEST

START_TEST(allowed_commands)
{
    struct gw_config *c = load("version: 1\n"
                               "gateway: {allowed_commands: [npx, uvx, docker]}\n"
                               "servers:\n"
                               "  a:\n    command: bash\n"
                               "  b:\n    command: npx\n");
    const struct gw_diag *d = expect_error(c, "MCPConfigError: Invalid command 'bash'", 5);
    ck_assert_str_eq(
        d->message, "MCPConfigError: Invalid command 'bash'. Supported commands: npx, uvx, docker");
    ck_assert(!srv(c, "a")->ok && srv(c, "b")->ok);
    gw_config_unref(c);
    c = load("version: 1\nservers:\n  a:\n    command: bash\n"
             "gateway: {allowed_commands: [npx]}\n");
    ck_assert_str_eq(srv(c, "a")->error,
                     "MCPConfigError: Invalid command 'bash'. Supported commands: npx");
    gw_config_unref(c);
}
END_TEST

START_TEST(command_resolution)
{
    write_file("tool.sh", "#!/bin/sh\nexit 0\n", 0755);
    write_file("noexec.sh", "#!/bin/sh\n", 0644);
    mkdir(strcat(strcpy((char[128]){0}, dir), "/bin"), 0755);
    write_file("bin/only-here", "#!/bin/sh\n", 0755);
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  rel:\n    command: ./tool.sh\n"
                               "  nox:\n    command: ./noexec.sh\n"
                               "  nf:\n    command: gw-no-such-command-xyz\n"
                               "  envpath:\n    command: only-here\n    env: {PATH: 'BIN'}\n");
    dump(c);
    char want[160];
    snprintf(want, sizeof(want), "%s/tool.sh", dir);
    ck_assert_str_eq(srv(c, "rel")->command_path, want);
    ck_assert(srv(c, "rel")->ok);
    expect_error(c, "command './noexec.sh' (", 6);
    ck_assert_ptr_nonnull(strstr(srv(c, "nox")->error, "is not an executable file"));
    const struct gw_diag *d = expect_error(c,
                                           "command 'gw-no-such-command-xyz' was not found "
                                           "in the daemon's PATH",
                                           8);
    ck_assert_str_eq(d->server, "nf");
    ck_assert(!srv(c, "envpath")->ok); /* PATH 'BIN' is relative: not searched */
    ck_assert_ptr_nonnull(strstr(srv(c, "envpath")->error, "the PATH set in its env"));
    gw_config_unref(c);
    char y[400];
    snprintf(
        y, sizeof(y),
        "version: 1\nservers:\n  envpath:\n    command: only-here\n    env: {PATH: '%s/bin'}\n",
        dir);
    c = load(y);
    ck_assert(srv(c, "envpath")->ok);
    snprintf(want, sizeof(want), "%s/bin/only-here", dir);
    ck_assert_str_eq(srv(c, "envpath")->command_path, want);
    gw_config_unref(c);
}
END_TEST

START_TEST(cwd_and_encoding)
{
    mkdir(strcat(strcpy((char[128]){0}, dir), "/work"), 0755);
    write_file("afile", "x", 0644);
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  a:\n" OK_STDIO "    cwd: work\n"
                               "  b:\n" OK_STDIO "    cwd: afile\n"
                               "  c:\n" OK_STDIO "    cwd: /\n    encoding: latin-1\n"
                               "  d:\n" OK_STDIO "    encoding: UTF-8\n");
    char want[128];
    snprintf(want, sizeof(want), "%s/work", dir);
    ck_assert_str_eq(srv(c, "a")->cwd, want);
    ck_assert(srv(c, "a")->ok);
    expect_error(c, "cwd '", 8);
    ck_assert_ptr_nonnull(strstr(srv(c, "b")->error, "afile' is not a directory"));
    expect_error(c, "encoding 'latin-1' is not supported", 12);
    ck_assert(srv(c, "d")->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(server_ids)
{
    struct gw_config *c =
        load("version: 1\nservers:\n"
             "  '':\n" OK_STDIO "  'has space':\n" OK_STDIO "  mcp_admin:\n" OK_STDIO
             "  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:\n" OK_STDIO
             "  good-id_1:\n" OK_STDIO);
    const struct gw_diag *d =
        expect_error(c, "ValidationError: 'server' must be a non-empty identifier", 3);
    ck_assert_str_eq(d->message, "ValidationError: 'server' must be a non-empty identifier");
    ck_assert_int_eq(d->scope, GW_SCOPE_SERVER);
    expect_error(c, "server id 'has space' is invalid: use 1 to 64 ASCII letters", 5);
    expect_error(c, "server id 'mcp_admin' is reserved", 7);
    expect_error(c, "server id 'aaaa", 9);
    ck_assert(c->ok);
    ck_assert_uint_eq(c->nservers, 1);
    ck_assert(srv(c, "good-id_1")->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(dynamic_mode_requires_default)
{
    struct gw_config *c =
        load("version: 1\nservers:\n  customers:\n" OK_STDIO "    mode: dynamic\n");
    const struct gw_diag *d = expect_error(c, "is configured with mode='dynamic'", 5);
    ck_assert_str_eq(d->message, "MCP server 'customers' is configured with mode='dynamic' but "
                                 "missing required field 'default_tool_config'");
    ck_assert(!srv(c, "customers")->ok);
    gw_config_unref(c);
    c = load("version: 1\nservers:\n  a:\n" OK_STDIO "    mode: lenient\n");
    expect_error(c, "'servers.a.mode' must be 'strict' or 'dynamic'", 5);
    gw_config_unref(c);
}
END_TEST

START_TEST(tool_policy)
{
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  d:\n" OK_STDIO "    mode: dynamic\n"
                               "    default_tool_config: {max_instances: 10}\n"
                               "    tool_config:\n"
                               "      get_customer: {max_instances: 50, timeout: P0DT0H1M0S}\n"
                               "      only_timeout: {timeout: 5s}\n"
                               "  s:\n" OK_STDIO "    mode: strict\n"
                               "    tool_config: {listed: {max_instances: 2}}\n"
                               "  u:\n" OK_STDIO);
    struct gw_tool_config t;
    const struct gw_server_config *d = srv(c, "d");
    dump(c);
    ck_assert(c->ok && d->ok);
    ck_assert(d->has_default_tool_config);
    ck_assert_int_eq(d->default_tool_config.max_instances, 10);
    ck_assert_uint_eq(d->default_tool_config.timeout_ms, 30000);
    ck_assert_int_eq(gw_config_tool_policy(d, "unlisted", &t), 0);
    ck_assert_int_eq(t.max_instances, 10);
    ck_assert_uint_eq(t.timeout_ms, 30000);
    ck_assert_ptr_null(t.name);
    ck_assert_int_eq(gw_config_tool_policy(d, "get_customer", &t), 0);
    ck_assert_int_eq(t.max_instances, 50);
    ck_assert_uint_eq(t.timeout_ms, 60000);
    ck_assert_str_eq(t.name, "get_customer");
    ck_assert_int_eq(gw_config_tool_policy(d, "only_timeout", &t), 0);
    ck_assert_int_eq(t.max_instances, 10);
    ck_assert_uint_eq(t.timeout_ms, 5000);
    const struct gw_server_config *s = srv(c, "s");
    ck_assert_int_eq(gw_config_tool_policy(s, "listed", &t), 0);
    ck_assert_int_eq(t.max_instances, 2);
    ck_assert_uint_eq(t.timeout_ms, 30000);
    ck_assert_int_eq(gw_config_tool_policy(s, "other", &t), UV_ENOENT);
    ck_assert_int_eq(gw_config_tool_policy(srv(c, "u"), "x", &t), UV_ENOENT);
    gw_config_unref(c);
}
END_TEST

START_TEST(tool_config_errors_and_warnings)
{
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  a:\n" OK_STDIO "    mode: strict\n"
                               "    tool_config:\n"
                               "      t1: {max_instance: 3}\n"
                               "      t2: {max_instances: 0}\n"
                               "      t3: {timeout: soon}\n"
                               "  b:\n" OK_STDIO "    tool_config: {x: {}}\n");
    const struct gw_diag *d = find(c, "unknown key 'max_instance' in servers.a.tool_config.t1");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->severity, GW_SEV_WARNING);
    ck_assert_int_eq(d->line, 7);
    ck_assert_ptr_nonnull(strstr(d->message, "did you mean 'max_instances'?"));
    expect_error(c, "'servers.a.tool_config.t2.max_instances' must be a positive whole number", 8);
    expect_error(c, "'servers.a.tool_config.t3.timeout' is not a positive duration", 9);
    d = find(c, "apply only with 'mode: strict' or 'mode: dynamic'");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->severity, GW_SEV_WARNING);
    ck_assert(srv(c, "b")->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(transforms)
{
    struct gw_config *c = load("version: 1\nservers:\n  a:\n" OK_STDIO "    transform:\n"
                               "      - prefix: 'playwright_'\n"
                               "      - prefix: {remove: 'stock_prefix_', add: 'my_prefix_'}\n"
                               "      - prefix: {remove: 'browser_'}\n"
                               "      - suffix: '_playwright'\n"
                               "      - suffix: ''\n");
    const struct gw_server_config *s = srv(c, "a");
    dump(c);
    ck_assert(s->ok);
    ck_assert_uint_eq(s->ntransforms, 5);
    ck_assert_int_eq(s->transforms[0].kind, GW_TRANSFORM_PREFIX);
    ck_assert_str_eq(s->transforms[0].add, "playwright_");
    ck_assert_int_eq(s->transforms[1].kind, GW_TRANSFORM_PREFIX_REPLACE);
    ck_assert_str_eq(s->transforms[1].remove, "stock_prefix_");
    ck_assert_str_eq(s->transforms[1].add, "my_prefix_");
    ck_assert_str_eq(s->transforms[2].add, "");
    ck_assert_int_eq(s->transforms[3].kind, GW_TRANSFORM_SUFFIX);
    ck_assert_str_eq(s->transforms[4].add, "");
    gw_config_unref(c);
}
END_TEST

START_TEST(transform_errors)
{
    struct gw_config *c =
        load("version: 1\nservers:\n"
             "  a:\n" OK_STDIO "    transform: [{prefix: a, suffix: b}]\n"
             "  b:\n" OK_STDIO "    transform: [{rename: x}]\n"
             "  c:\n" OK_STDIO "    transform: [{prefix: {add: x}}]\n"
             "  d:\n" OK_STDIO "    transform: [{suffix: [x]}]\n"
             "  e:\n" OK_STDIO "    transform: {prefix: x}\n"
             "  f:\n" OK_STDIO "    transform: [{prefix: {remove: a, mode: b}}]\n");
    expect_error(c, "each item of 'servers.a.transform' must be a map with exactly one key", 5);
    expect_error(c, "each item of 'servers.b.transform' must be a map with exactly one key", 8);
    expect_error(c, "'servers.c.transform': prefix {remove, add} needs 'remove'", 11);
    expect_error(c, "'servers.d.transform': suffix takes a string", 14);
    expect_error(c, "'servers.e.transform' must be a list", 17);
    expect_error(c, "'mode' is not one of its keys", 20);
    for (const char *id = "abcdef"; *id; id++) {
        char name[2] = {*id, 0};
        ck_assert_msg(!srv(c, name)->ok, "%s ok", name);
    }
    gw_config_unref(c);
}
END_TEST

START_TEST(tools_filters)
{
    struct gw_config *c = load("version: 1\nservers:\n  a:\n" OK_STDIO
                               "    tools:\n      whitelist: ['browser_*', 'page_*']\n"
                               "      blacklist: ['*_unsafe']\n      greylist: [x]\n"
                               "  b:\n" OK_STDIO "    tools: {whitelist: x}\n");
    const struct gw_server_config *s = srv(c, "a");
    ck_assert(s->ok);
    ck_assert_uint_eq(s->nwhitelist, 2);
    ck_assert_str_eq(s->whitelist[1], "page_*");
    ck_assert_str_eq(s->blacklist[0], "*_unsafe");
    const struct gw_diag *d = find(c, "unknown key 'greylist' in servers.a.tools is ignored");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->line, 8);
    expect_error(c, "'servers.b.tools.whitelist' must be a list of strings", 11);
    gw_config_unref(c);
}
END_TEST

START_TEST(init_config_to_json)
{
    struct gw_config *c = load("version: 1\nservers:\n  a:\n" OK_STDIO "    config:\n"
                               "      i: 42\n      f: 1.5\n      b: true\n      n: ~\n"
                               "      qs: '42'\n      s: hello\n      dirs: ['/data', 7]\n"
                               "      nested: {k: v}\n      tagged: !!str 12\n");
    const struct gw_server_config *s = srv(c, "a");
    ck_assert(s->ok);
    char *j = json_dumps(s->init_config, JSON_SORT_KEYS | JSON_COMPACT);
    ck_assert_str_eq(j,
                     "{\"b\":true,\"dirs\":[\"/data\",7],\"f\":1.5,\"i\":42,\"n\":null,"
                     "\"nested\":{\"k\":\"v\"},\"qs\":\"42\",\"s\":\"hello\",\"tagged\":\"12\"}");
    free(j);
    gw_config_unref(c);
}
END_TEST

START_TEST(unknown_keys_warn_with_suggestion)
{
    struct gw_config *c = load("version: 1\nextra: 1\ngateway:\n  listn: 1.2.3.4:5\n"
                               "servers:\n  a:\n" OK_STDIO "    truly-stateless: true\n"
                               "    comand: npx\n    zzzzzz: 1\n");
    const struct gw_diag *d = find(c, "unknown key 'truly-stateless'");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->severity, GW_SEV_WARNING);
    ck_assert_int_eq(d->line, 8);
    ck_assert_str_eq(d->key, "servers.a.truly-stateless");
    ck_assert_str_eq(d->message, "unknown key 'truly-stateless' in servers.a is ignored; did you "
                                 "mean 'truely-stateless'?");
    ck_assert_ptr_nonnull(find(c, "unknown key 'comand' in servers.a is ignored; did you mean "
                                  "'command'?"));
    ck_assert_ptr_nonnull(find(c, "unknown key 'listn' in gateway is ignored; did you mean "
                                  "'listen'?"));
    d = find(c, "unknown key 'zzzzzz'");
    ck_assert_ptr_null(strstr(d->message, "did you mean"));
    d = find(c, "unknown key 'extra' in the top level");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->scope, GW_SCOPE_WORKSPACE);
    ck_assert(c->ok && srv(c, "a")->ok);
    ck_assert(!srv(c, "a")->truely_stateless);
    ck_assert_uint_eq(count(c, GW_SEV_ERROR), 0);
    gw_config_unref(c);
}
END_TEST

START_TEST(holodeck_fields_warn)
{
    struct gw_config *c = load("version: 1\nservers:\n  files:\n"
                               "    name: files\n    description: d\n    type: mcp\n"
                               "    server: '@modelcontextprotocol/server-filesystem'\n" OK_STDIO);
    const struct gw_diag *d = find(c, "'type' is a HoloDeck agent.yaml field");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->severity, GW_SEV_WARNING);
    ck_assert_int_eq(d->line, 6);
    ck_assert_ptr_nonnull(strstr(d->message, "mcpgw import"));
    ck_assert_uint_eq(count(c, GW_SEV_WARNING), 4);
    ck_assert(srv(c, "files")->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(diag_format)
{
    struct gw_config *c = load("version: 1\nservers:\n  a:\n    transport: sse\n");
    char *s = gw_diag_format(&c->diags[0]);
    char want[256];
    snprintf(want, sizeof(want),
             "%s:3:3: error: [server a] MCPConfigError: 'url' is required for sse transport",
             cfgpath);
    ck_assert_str_eq(s, want);
    free(s);
    gw_config_unref(c);
    c = load("version: 3\n");
    s = gw_diag_format(&c->diags[0]);
    snprintf(want, sizeof(want),
             "%s:1:10: error: unsupported version '3'; this mcpgw reads 'version: 1'", cfgpath);
    ck_assert_str_eq(s, want);
    free(s);
    gw_config_unref(c);
}
END_TEST

static void hashes(const char *yaml, char spawn[17], char catalog[17])
{
    struct gw_config *c = load(yaml);
    const struct gw_server_config *s = srv(c, "a");
    memcpy(spawn, s->spawn_hash, 17);
    memcpy(catalog, s->catalog_hash, 17);
    gw_config_unref(c);
}

START_TEST(hashes_stable_and_scoped)
{
    char s0[17], c0[17], s1[17], c1[17];
    const char *base = "version: 1\nservers:\n  a:\n" OK_STDIO "    args: [x]\n"
                       "    tools: {whitelist: [a]}\n"
                       "    tool_config: {t1: {max_instances: 1}, t2: {timeout: 1s}}\n";
    hashes(base, s0, c0);
    hashes(base, s1, c1);
    ck_assert_str_eq(s0, s1);
    ck_assert_str_eq(c0, c1);
    hashes("version: 1\nservers:\n  a:\n" OK_STDIO "    args: [y]\n    tools: {whitelist: [a]}\n"
           "    tool_config: {t1: {max_instances: 1}, t2: {timeout: 1s}}\n",
           s1, c1);
    ck_assert_str_ne(s0, s1);
    ck_assert_str_eq(c0, c1);
    hashes("version: 1\nservers:\n  a:\n" OK_STDIO "    args: [x]\n    tools: {whitelist: [b]}\n"
           "    tool_config: {t1: {max_instances: 1}, t2: {timeout: 1s}}\n",
           s1, c1);
    ck_assert_str_eq(s0, s1);
    ck_assert_str_ne(c0, c1);
    /* reordering tool_config changes nothing */
    hashes("version: 1\nservers:\n  a:\n" OK_STDIO "    args: [x]\n    tools: {whitelist: [a]}\n"
           "    tool_config: {t2: {timeout: 1s}, t1: {max_instances: 1}}\n",
           s1, c1);
    ck_assert_str_eq(s0, s1);
    ck_assert_str_eq(c0, c1);
    /* the envFile's contents reach the spawn hash */
    write_file("h.env", "K=1\n", 0600);
    const char *ef = "version: 1\nservers:\n  a:\n" OK_STDIO "    envFile: h.env\n";
    hashes(ef, s0, c0);
    write_file("h.env", "K=2\n", 0600);
    hashes(ef, s1, c1);
    ck_assert_str_ne(s0, s1);
    ck_assert_str_eq(c0, c1);
    /* config and truely-stateless are spawn fields; load_tools a catalog one */
    hashes("version: 1\nservers:\n  a:\n" OK_STDIO "    config: {k: 1}\n", s0, c0);
    hashes("version: 1\nservers:\n  a:\n" OK_STDIO "    config: {k: 2}\n", s1, c1);
    ck_assert_str_ne(s0, s1);
    hashes("version: 1\nservers:\n  a:\n" OK_STDIO "    load_tools: false\n", s1, c1);
    hashes("version: 1\nservers:\n  a:\n" OK_STDIO "    load_tools: true\n", s0, c0);
    ck_assert_str_eq(s0, s1);
    ck_assert_str_ne(c0, c1);
    /* resource_namespace changes what is shown, not the server: catalog */
    hashes("version: 1\nservers:\n  a:\n" OK_STDIO "    resource_namespace: true\n", s1, c1);
    ck_assert_str_eq(s0, s1);
    ck_assert_str_ne(c0, c1);
}
END_TEST

START_TEST(public_view_has_no_secrets)
{
    write_file("s.env", "FILE_SECRET=filesecretvalue\n", 0600);
    struct gw_config *c =
        load("version: 1\n"
             "gateway: {auth_token: {env: GWT_TOKEN}}\n"
             "servers:\n"
             "  a:\n" OK_STDIO "    envFile: s.env\n"
             "    env: {API_KEY: '${GWT_TOKEN}', LIT: literalsecret}\n"
             "    config: {password: configsecret}\n"
             "  h:\n    transport: http\n"
             "    url: 'https://user:urlpass@mcp.example.com/mcp?key=querysecret'\n"
             "    headers: {Authorization: 'Bearer ${GWT_TOKEN}'}\n"
             "    sessionId: sessionsecret\n");
    dump(c);
    ck_assert(srv(c, "a")->ok && srv(c, "h")->ok);
    for (const char *id = "ah"; *id; id++) {
        char name[2] = {*id, 0};
        json_t *j = gw_server_config_to_json(srv(c, name));
        char *s = json_dumps(j, JSON_COMPACT);
        static const char *const secrets[] = {"s3cret",       "filesecretvalue", "literalsecret",
                                              "configsecret", "urlpass",         "querysecret",
                                              "sessionsecret"};
        for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
            ck_assert_msg(strstr(s, secrets[i]) == NULL, "%s leaks in %s", secrets[i], s);
        if (*id == 'a') {
            ck_assert_ptr_nonnull(strstr(s, "\"API_KEY\":\"***\""));
            ck_assert_ptr_nonnull(strstr(s, "\"FILE_SECRET\":\"***\""));
            ck_assert_ptr_nonnull(strstr(s, "\"command\":\"npx\""));
        } else {
            ck_assert_ptr_nonnull(strstr(s, "\"Authorization\":\"***\""));
            ck_assert_ptr_nonnull(strstr(s, "https://***@mcp.example.com/mcp?***"));
            ck_assert_ptr_nonnull(strstr(s, "\"transport\":\"streamable_http\""));
        }
        free(s);
        json_decref(j);
    }
    gw_config_unref(c);
}
END_TEST

START_TEST(every_directive_is_documented)
{
    FILE *f = fopen("docs/config.md", "r");
    ck_assert_msg(f != NULL, "docs/config.md not found (run from the repo root)");
    static char doc[256 * 1024];
    size_t n = fread(doc, 1, sizeof(doc) - 1, f);
    doc[n] = '\0';
    fclose(f);
    struct gw_config_directive_info info;
    size_t i = 0;
    for (; gw_config_directive(i, &info) == 0; i++) {
        char needle[160];
        snprintf(needle, sizeof(needle), "`%s`", info.key);
        ck_assert_msg(strstr(doc, needle) != NULL, "%s is not documented in docs/config.md",
                      needle);
        ck_assert_ptr_nonnull(info.type);
        ck_assert_ptr_nonnull(info.seed);
    }
    ck_assert_uint_ge(i, 50);
}
END_TEST

START_TEST(load_from_file_and_ref)
{
    write_file("mcp.yaml", "version: 1\nservers:\n  a:\n" OK_STDIO, 0600);
    char cwd[512];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    ck_assert_int_eq(chdir(dir), 0);
    struct gw_config *c = NULL;
    ck_assert_int_eq(gw_config_load("./mcp.yaml", &c), 0);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert(c->ok && c->exists);
    ck_assert_str_eq(c->path, cfgpath);
    ck_assert_str_eq(c->dir, dir);
    ck_assert_uint_eq(c->nservers, 1);
    ck_assert_ptr_eq(gw_config_ref(c), c);
    ck_assert_int_eq(c->refs, 2);
    gw_config_unref(c);
    ck_assert_ptr_null(gw_config_server(c, "nope"));
    gw_config_unref(c);
    ck_assert_int_eq(gw_config_load(dir, &c), 0); /* a directory */
    ck_assert(!c->ok);
    ck_assert_ptr_nonnull(find(c, "not a regular file"));
    gw_config_unref(c);
}
END_TEST

START_TEST(session_id_and_server_body)
{
    struct gw_config *c = load("version: 1\nservers:\n"
                               "  a:\n    transport: http\n    url: http://127.0.0.1:1/mcp\n"
                               "    sessionId: ''\n"
                               "  b:\n"
                               "  c: [1]\n");
    ck_assert(srv(c, "a")->ok);
    ck_assert_ptr_null(srv(c, "a")->session_id);
    expect_error(c, "server 'b' must be a map of its settings", 7);
    expect_error(c, "server 'c' must be a map of its settings", 8);
    ck_assert(c->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(examples_load_cleanly)
{
    setenv("GITHUB_TOKEN", "ghp_test", 1);
    setenv("DATABASE_URL", "postgres://localhost/db", 1);
    setenv("CLOUD_API_KEY", "k", 1);
    setenv("TOKEN", "t", 1);
    setenv("MCP_AUTH_TOKEN", "m", 1);
    setenv("MCPGW_TOKEN", "g", 1);
    glob_t g;
    ck_assert_int_eq(glob("conf/examples/*.yaml", 0, NULL, &g), 0);
    ck_assert_uint_ge(g.gl_pathc, 5);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct gw_config *c = NULL;
        ck_assert_int_eq(gw_config_load(g.gl_pathv[i], &c), 0);
        if (count(c, GW_SEV_ERROR) != 0 || count(c, GW_SEV_WARNING) != 0)
            dump(c);
        ck_assert_msg(c->ok && c->exists, "%s", g.gl_pathv[i]);
        ck_assert_msg(count(c, GW_SEV_ERROR) == 0, "%s has errors", g.gl_pathv[i]);
        ck_assert_uint_ge(c->nservers, 1);
        gw_config_unref(c);
    }
    globfree(&g);
}
END_TEST

/* A literal secret in a file every user can read is a warning; the same
 * file with mode 0600, or the secret taken from the environment, is not. */
START_TEST(secret_in_world_readable_file_warns)
{
    static const char lit[] = "version: 1\ngateway:\n  auth_token: 'abc123'\n";
    static const char env[] = "version: 1\ngateway:\n  auth_token: {env: GWT_TOKEN}\n";
    static const char hdr[] = "version: 1\nservers:\n  h:\n    transport: http\n"
                              "    url: https://example.com/mcp\n"
                              "    headers: {Authorization: 'Bearer xyz'}\n";
    struct gw_config *c;

    write_file("mcp.yaml", lit, 0644);
    ck_assert_int_eq(gw_config_load(cfgpath, &c), 0);
    ck_assert_ptr_nonnull(find(c, "readable by every user"));
    ck_assert_int_eq(find(c, "readable by every user")->line, 3);
    ck_assert(c->ok);
    gw_config_unref(c);
    write_file("mcp.yaml", lit, 0600);
    ck_assert_int_eq(gw_config_load(cfgpath, &c), 0);
    ck_assert_ptr_null(find(c, "readable by every user"));
    gw_config_unref(c);
    write_file("mcp.yaml", env, 0644);
    ck_assert_int_eq(gw_config_load(cfgpath, &c), 0);
    ck_assert_ptr_null(find(c, "readable by every user"));
    gw_config_unref(c);
    write_file("mcp.yaml", hdr, 0644);
    ck_assert_int_eq(gw_config_load(cfgpath, &c), 0);
    ck_assert_ptr_nonnull(find(c, "readable by every user"));
    ck_assert_int_eq(find(c, "readable by every user")->line, 6);
    gw_config_unref(c);
}
END_TEST

/* Seed 002: ${VAR} in args, url, cwd, sessionId and config, with the env
 * rules (once, no recursion, a missing one named once) and *** shown. */
START_TEST(vars_in_every_server_string)
{
    char y[1024];
    setenv("GWT_DIR", dir, 1);
    snprintf(y, sizeof(y),
             "version: 1\n"
             "servers:\n"
             "  s:\n"
             "    command: sh\n"
             "    args: ['--token=${GWT_TOKEN}', plain, '$${GWT_TOKEN}', '${GWT_BRACES}']\n"
             "    cwd: '${GWT_DIR}'\n"
             "    config: {key: '${GWT_TOKEN}', list: [a, 'x${GWT_TOKEN}'], n: 3}\n"
             "  h:\n"
             "    transport: streamable_http\n"
             "    url: 'https://example.com/mcp/${GWT_TOKEN}'\n"
             "    sessionId: 'sid-${GWT_TOKEN}'\n"
             "  bad:\n"
             "    command: sh\n"
             "    args: ['${GWT_MISSING}', '${GWT_MISSING}']\n"
             "    url: 'http://127.0.0.1/${GWT_MISSING}'\n");
    struct gw_config *c = load(y);
    const struct gw_server_config *s = gw_config_server(c, "s");
    const struct gw_server_config *h = gw_config_server(c, "h");

    ck_assert(s->ok);
    ck_assert_str_eq(s->args[0], "--token=s3cret-token");
    ck_assert_str_eq(s->args[1], "plain");
    ck_assert_str_eq(s->args[2], "${GWT_TOKEN}");
    ck_assert_str_eq(s->args[3], "${GWT_TOKEN}"); /* a value is not scanned again */
    ck_assert_str_eq(s->args_shown[0], "--token=***");
    ck_assert_str_eq(s->args_shown[1], "plain");
    ck_assert_str_eq(s->cwd, dir);
    ck_assert_str_eq(s->cwd_shown, "***");
    ck_assert_str_eq(json_string_value(json_object_get(s->init_config, "key")), "s3cret-token");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(s->init_config, "list"), 1)),
                     "xs3cret-token");
    ck_assert(h->ok);
    ck_assert_str_eq(h->url, "https://example.com/mcp/s3cret-token");
    ck_assert_str_eq(h->url_shown, "https://example.com/mcp/***");
    ck_assert_str_eq(h->session_id, "sid-s3cret-token");

    /* the public view shows *** wherever a value came in */
    json_t *vs = gw_server_config_to_json(s), *vh = gw_server_config_to_json(h);
    char *ts = json_dumps(vs, JSON_COMPACT), *th = json_dumps(vh, JSON_COMPACT);
    ck_assert_ptr_null(strstr(ts, "s3cret"));
    ck_assert_ptr_null(strstr(th, "s3cret"));
    ck_assert_ptr_nonnull(strstr(ts, "--token=***"));
    ck_assert_ptr_nonnull(strstr(th, "https://example.com/mcp/***"));
    free(ts);
    free(th);
    json_decref(vs);
    json_decref(vh);

    /* a missing variable: a per-server error naming it, said once */
    ck_assert(!gw_config_server(c, "bad")->ok);
    size_t said = 0;
    for (size_t i = 0; i < c->ndiags; i++)
        said += strstr(c->diags[i].message, "'GWT_MISSING' not found") != NULL;
    ck_assert_uint_eq(said, 1);
    ck_assert(gw_config_server(c, "s")->ok && gw_config_server(c, "h")->ok);
    gw_config_unref(c);
}
END_TEST

START_TEST(protocol_modes)
{
    struct gw_config *c = load("version: 1\n"
                               "servers:\n"
                               "  a:\n" OK_STDIO "  l:\n" OK_STDIO "    protocol: legacy\n"
                               "  m:\n" OK_STDIO "    protocol: modern\n"
                               "  s:\n"
                               "    transport: sse\n"
                               "    url: http://127.0.0.1:9/sse\n"
                               "    protocol: modern\n"
                               "  bad:\n" OK_STDIO "    protocol: newest\n");
    const struct gw_diag *w = find(c, "protocol 'modern' is ignored for an sse server");

    ck_assert_int_eq(srv(c, "a")->protocol, GW_PROTOCOL_AUTO);
    ck_assert_int_eq(srv(c, "l")->protocol, GW_PROTOCOL_LEGACY);
    ck_assert_int_eq(srv(c, "m")->protocol, GW_PROTOCOL_MODERN);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(w->severity, GW_SEV_WARNING);
    ck_assert_int_eq(w->line, 14);
    expect_error(c, "unknown protocol 'newest'; accepted: auto, legacy, modern", 17);
    /* the revision is a spawn input: another value replaces the instances */
    ck_assert_str_ne(srv(c, "l")->spawn_hash, srv(c, "m")->spawn_hash);
    ck_assert_str_eq(gw_protocol_name(srv(c, "m")->protocol), "modern");
    gw_config_unref(c);
}
END_TEST

/* servers.<id>.oauth and the gateway's OAuth keys: values, the secret
 * kept out of /v1/servers, the spawn hash, and each wrong value an error at
 * its line. */
START_TEST(oauth_keys)
{
    setenv("GW_TEST_OAUTH_SECRET", "s3cret-value", 1);
    struct gw_config *c = load("version: 1\n"
                               "gateway:\n"
                               "  state_dir: /var/lib/x\n"
                               "  oauth:\n"
                               "    redirect_uri: https://gw.example/oauth/callback\n"
                               "    client_metadata_url: https://gw.example/client.json\n"
                               "servers:\n"
                               "  a:\n"
                               "    transport: streamable_http\n"
                               "    url: http://127.0.0.1:9/mcp\n"
                               "    oauth:\n"
                               "      client_id: cid\n"
                               "      issuer: https://as.example/tenant\n"
                               "      client_secret: ${GW_TEST_OAUTH_SECRET}\n"
                               "      token_endpoint_auth_method: client_secret_post\n"
                               "      scopes: [a, b]\n"
                               "      resource: omit\n"
                               "  b:\n"
                               "    transport: streamable_http\n"
                               "    url: http://127.0.0.1:9/mcp\n"
                               "    oauth: {off: true, grant: client_credentials}\n");
    if (count(c, GW_SEV_ERROR))
        dump(c);
    ck_assert_uint_eq(count(c, GW_SEV_ERROR), 0);
    ck_assert_str_eq(c->gateway.state_dir, "/var/lib/x");
    ck_assert_str_eq(c->gateway.oauth_redirect_uri, "https://gw.example/oauth/callback");
    ck_assert_str_eq(c->gateway.oauth_client_metadata_url, "https://gw.example/client.json");
    const struct gw_server_config *a = srv(c, "a"), *b = srv(c, "b");
    ck_assert_str_eq(a->oauth_client_id, "cid");
    ck_assert_str_eq(a->oauth_issuer, "https://as.example/tenant");
    ck_assert_ptr_null(b->oauth_issuer);
    ck_assert_str_eq(a->oauth_client_secret, "s3cret-value");
    ck_assert_int_eq(a->oauth_method, GW_OAUTH_METHOD_POST);
    ck_assert(a->has_oauth_scopes);
    ck_assert_uint_eq(a->noauth_scopes, 2);
    ck_assert(a->oauth_omit_resource);
    ck_assert(!a->oauth_off);
    ck_assert(b->oauth_off);
    ck_assert(b->oauth_client_credentials);
    ck_assert(!a->oauth_client_credentials);
    ck_assert_str_ne(a->spawn_hash, b->spawn_hash);
    json_t *j = gw_server_config_to_json(a);
    char *text = json_dumps(j, 0);
    ck_assert_ptr_null(strstr(text, "s3cret-value"));
    ck_assert_ptr_nonnull(strstr(text, "\"client_secret\": \"***\""));
    ck_assert_ptr_nonnull(strstr(text, "\"issuer\": \"https://as.example/tenant\""));
    free(text);
    json_decref(j);
    gw_config_unref(c);

    c = load("version: 1\n"
             "gateway:\n"
             "  state_dir: relative/dir\n"
             "  oauth:\n"
             "    redirect_uri: ftp://x/\n"
             "    client_metadata_url: http://gw.example/c.json\n"
             "servers:\n"
             "  a:\n"
             "    transport: streamable_http\n"
             "    url: http://127.0.0.1:9/mcp\n"
             "    oauth:\n"
             "      token_endpoint_auth_method: tls_client_auth\n"
             "      resource: keep\n"
             "      scopes: ['a b']\n"
             "      grant: password\n"
             "      issuer: https://as.example/?a#b\n");
    expect_error(c, "'gateway.state_dir' must be an absolute path", 3);
    expect_error(c, "'gateway.oauth.redirect_uri' must be the http(s) URL", 5);
    expect_error(c, "'gateway.oauth.client_metadata_url' must be an https URL", 6);
    expect_error(c, "'servers.a.oauth.token_endpoint_auth_method' must be none", 12);
    expect_error(c, "'servers.a.oauth.resource' can only be 'omit'", 13);
    expect_error(c, "'servers.a.oauth.scopes': a scope is one word", 14);
    expect_error(c, "'servers.a.oauth.grant' must be authorization_code or client_credentials", 15);
    expect_error(c, "'servers.a.oauth.issuer' must be the authorization server's issuer", 16);
    gw_config_unref(c);
    unsetenv("GW_TEST_OAUTH_SECRET");
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    const TTest *const tests[] = {missing_file_is_empty,
                                  oauth_keys,
                                  gateway_defaults,
                                  gateway_all_keys,
                                  duration_forms,
                                  duration_rejects,
                                  size_forms,
                                  bad_duration_in_gateway_is_workspace_error,
                                  bad_size_and_ints,
                                  bad_gateway_values,
                                  listen_forms,
                                  invalid_yaml,
                                  version_missing_or_unsupported,
                                  file_too_large,
                                  fifo_and_directory_refused,
                                  alias_bomb,
                                  aliases_within_limits_work,
                                  nesting_too_deep,
                                  duplicate_top_and_gateway_keys,
                                  duplicate_server_id_is_workspace_error,
                                  duplicate_key_inside_server_is_per_server,
                                  server_defaults,
                                  server_all_keys_http,
                                  bad_bool_and_transport,
                                  env_value_forms,
                                  env_missing_variable,
                                  subst_is_not_recursive,
                                  env_file_parsing,
                                  env_file_errors,
                                  header_injection_refused,
                                  url_required,
                                  url_scheme_rules,
                                  stdio_command_required,
                                  allowed_commands,
                                  command_resolution,
                                  cwd_and_encoding,
                                  server_ids,
                                  dynamic_mode_requires_default,
                                  tool_policy,
                                  tool_config_errors_and_warnings,
                                  transforms,
                                  transform_errors,
                                  tools_filters,
                                  init_config_to_json,
                                  unknown_keys_warn_with_suggestion,
                                  holodeck_fields_warn,
                                  diag_format,
                                  hashes_stable_and_scoped,
                                  public_view_has_no_secrets,
                                  every_directive_is_documented,
                                  quoted_numbers_refused_for_every_number_key,
                                  load_from_file_and_ref,
                                  session_id_and_server_body,
                                  examples_load_cleanly,
                                  secret_in_world_readable_file_warns,
                                  vars_in_every_server_string,
                                  protocol_modes};
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
        tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(config_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
