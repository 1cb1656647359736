/* mcpgw import: every example in test/import/ converts and loads back with
 * gw_config_load_buffer with no diagnostic but the expected ones; quoting
 * survives hostile strings; what cannot be expressed is reported. */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/import.h"

static char dir[64];
static char cfgpath[128];

struct run {
    int rc;
    char *out, *err;
};

static void setup(void)
{
    static const char *const vars[] = {"GITHUB_TOKEN",  "DATABASE_URL",  "CUSTOM_CONFIG",
                                       "API_KEY",       "CLOUD_API_KEY", "TOKEN",
                                       "BRAVE_API_KEY", "API_TOKEN"};
    strcpy(dir, "/tmp/gwimpXXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cfgpath, sizeof cfgpath, "%s/mcp.yaml", dir);
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        setenv(vars[i], "secret-value", 1);
    setenv("HOME", "/root", 1);
    /* HoloDeck (seed 002) substitutes ${VAR} in every string, as mcp.yaml
     * does: its example's config names this one */
    setenv("workspaceFolder", "/workspace", 1);
    /* mcpServers JSON: "${X}" in args is the variable X */
    setenv("X", "value of X", 1);
}

static void teardown(void)
{
    rmdir(dir);
}

static struct run run_buf(const char *name, const char *text)
{
    struct run r;
    size_t no, ne;
    FILE *out = open_memstream(&r.out, &no), *err = open_memstream(&r.err, &ne);

    r.rc = gw_import_buffer(name, text, strlen(text), out, err);
    fclose(out);
    fclose(err);
    return r;
}

static struct run run_file(const char *path)
{
    struct run r;
    size_t no, ne;
    FILE *out = open_memstream(&r.out, &no), *err = open_memstream(&r.err, &ne);

    r.rc = gw_import(path, out, err);
    fclose(out);
    fclose(err);
    return r;
}

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

static struct gw_config *load(const char *yaml)
{
    struct gw_config *c = NULL;

    ck_assert_int_eq(gw_config_load_buffer(cfgpath, yaml, strlen(yaml), &c), 0);
    ck_assert_ptr_nonnull(c);
    return c;
}

/* Errors a seed example may keep once loaded: commands that are not
 * installed on every machine (only this error, nothing else), and seed
 * 004's plain-http non-loopback URL, which mcpgw refuses on purpose
 * (security.md S10) and which must always show. */
static const struct {
    const char *file, *server, *message;
} expected[] = {
    {"holodeck-4-uvx.yaml", "python_mcp", "command 'uvx' was not found"},
    {"holodeck-5-docker.yaml", "docker_mcp", "command 'docker' was not found"},
    {"vscode-mcp.json", "fetch", "command 'uvx' was not found"},
    {"chatagent-a3-mixed.yaml", "external-api", "'url' must use https://"},
};

static bool is_expected(const char *file, const struct gw_diag *d)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;

    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (strcmp(base, expected[i].file) == 0 && d->server != NULL &&
            strcmp(d->server, expected[i].server) == 0 && d->severity == GW_SEV_ERROR &&
            strstr(d->message, expected[i].message) != NULL)
            return true;
    }
    return false;
}

START_TEST(every_example_round_trips)
{
    glob_t g;
    size_t expected_seen = 0;

    ck_assert_int_eq(glob("test/import/*", 0, NULL, &g), 0);
    ck_assert_uint_ge(g.gl_pathc, 12);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct run r = run_file(g.gl_pathv[i]);
        ck_assert_msg(r.rc == 0, "%s: %s", g.gl_pathv[i], r.err);
        struct gw_config *c = load(r.out);
        ck_assert_msg(c->ok, "%s did not load:\n%s", g.gl_pathv[i], r.out);
        ck_assert_uint_ge(c->nservers, 1);
        for (size_t j = 0; j < c->ndiags; j++) {
            char *line = gw_diag_format(&c->diags[j]);
            bool ok = is_expected(g.gl_pathv[i], &c->diags[j]);
            ck_assert_msg(ok, "%s: unexpected diagnostic %s\n%s", g.gl_pathv[i], line, r.out);
            expected_seen++;
            free(line);
        }
        for (size_t j = 0; j < c->nservers; j++) {
            const struct gw_server_config *s = &c->servers[j];
            ck_assert_msg(s->ok || s->error != NULL, "%s", s->id);
        }
        gw_config_unref(c);
        run_free(&r);
    }
    ck_assert_uint_ge(expected_seen, 1);
    globfree(&g);
}
END_TEST

static const struct gw_server_config *server(const struct gw_config *c, const char *id)
{
    const struct gw_server_config *s = gw_config_server(c, id);

    ck_assert_msg(s != NULL, "no server %s", id);
    return s;
}

static const char *env_of(const struct gw_server_config *s, const char *name, bool headers)
{
    const struct gw_kv *kv = headers ? s->headers : s->env;
    size_t n = headers ? s->nheaders : s->nenv;

    for (size_t i = 0; i < n; i++) {
        if (strcmp(kv[i].name, name) == 0)
            return kv[i].value;
    }
    return NULL;
}

START_TEST(holodeck_legacy_becomes_npx)
{
    struct run r = run_file("test/import/holodeck-legacy.yaml");
    struct gw_config *c = load(r.out);
    const struct gw_server_config *s = server(c, "old_mcp_tool");
    char *cfg = json_dumps(s->init_config, JSON_COMPACT);

    ck_assert(s->ok);
    ck_assert_str_eq(s->command, "npx");
    ck_assert_uint_eq(s->nargs, 2);
    ck_assert_str_eq(s->args[0], "-y");
    ck_assert_str_eq(s->args[1], "@modelcontextprotocol/server-memory");
    ck_assert_str_eq(cfg, "{\"key\":\"value\"}");
    ck_assert_ptr_nonnull(strstr(r.err, "deprecated legacy format"));
    ck_assert_ptr_nonnull(
        strstr(r.err, "imported as 'npx -y @modelcontextprotocol/server-memory'"));
    ck_assert_uint_eq(c->gateway.nallowed_commands, 3);
    free(cfg);
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

START_TEST(holodeck_agent_names_fields_and_comments)
{
    struct run r = run_file("test/import/holodeck-agent.yaml");
    struct gw_config *c = load(r.out);
    const struct gw_server_config *fs = server(c, "File_system");
    const struct gw_server_config *h = server(c, "http_mcp");
    char *cfg = json_dumps(fs->init_config, JSON_COMPACT | JSON_SORT_KEYS);

    ck_assert_uint_eq(c->nservers, 3);
    server(c, "File_system-2");
    /* PyYAML reads `follow: yes` as true; the output must say true. */
    ck_assert_str_eq(
        cfg, "{\"allowed_directories\":[\"/workspace/data\"],\"follow\":true,\"max_depth\":3}");
    ck_assert_str_eq(env_of(fs, "ALLOWED_PATHS", false), "/workspace");
    ck_assert_uint_eq(fs->request_timeout_ms, 60000);
    ck_assert_int_eq(h->transport, GW_TRANSPORT_STREAMABLE_HTTP);
    ck_assert(!h->load_prompts);
    ck_assert(h->terminate_on_close);
    ck_assert_uint_eq(h->timeout_ms, 30000);
    ck_assert_uint_eq(h->sse_read_timeout_ms, 120000);
    ck_assert_str_eq(env_of(h, "Authorization", true), "Bearer secret-value");
    ck_assert_ptr_nonnull(strstr(r.out,
                                 "  # File system operations via MCP.\n"
                                 "  # Second line of the description.\n"
                                 "  # HoloDeck server: @modelcontextprotocol/server-filesystem\n"
                                 "  File_system:\n"));
    ck_assert_ptr_nonnull(strstr(r.err, "tool name 'File system' became server id 'File_system'"));
    ck_assert_ptr_nonnull(strstr(r.err, "became server id 'File_system-2'"));
    ck_assert_ptr_nonnull(strstr(r.err, "tool 'search docs' (type vectorstore) was not imported"));
    free(cfg);
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

/* HoloDeck substitutes ${VAR} in every string of a server (seed 002), and
 * so does mcp.yaml: the reference carries over and means the same. */
START_TEST(holodeck_substitutions_carry_over)
{
    struct run r = run_file("test/import/holodeck-1-filesystem.yaml");

    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_null(strstr(r.err, "passed as written"));
    ck_assert_ptr_nonnull(strstr(r.out, "${workspaceFolder}/data"));
    struct gw_config *c = load(r.out);
    json_t *dirs = json_object_get(server(c, "files")->init_config, "allowed_directories");
    ck_assert_str_eq(json_string_value(json_array_get(dirs, 0)), "/workspace/data");
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

START_TEST(holodeck_oddities)
{
    struct run r = run_buf("a.yaml", "tools:\n"
                                     "  - {name: ws, type: mcp, server: x, transport: websocket,"
                                     " url: 'wss://h/ws'}\n"
                                     "  - {name: leg, type: mcp, server: 'Not An Npm Name'}\n"
                                     "  - {name: extra, type: mcp, server: s, command: npx,"
                                     " retries: 3, load_tools: 'maybe'}\n"
                                     "  - {type: mcp}\n"
                                     "  - 42\n");

    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_null(strstr(r.err, "tool 'ws'"));
    ck_assert_ptr_nonnull(strstr(r.err, "tool 'leg' was not imported: it uses HoloDeck's legacy"));
    ck_assert_ptr_nonnull(strstr(r.err, "'retries' of server 'extra' was not imported"));
    ck_assert_ptr_nonnull(strstr(r.err, "servers.extra.load_tools was not imported: it must be a "
                                        "boolean"));
    ck_assert_ptr_nonnull(strstr(r.err, "tools[3] was not imported: it has no name"));
    ck_assert_ptr_nonnull(strstr(r.err, "tools[4] was not imported: it is not a map"));
    ck_assert_ptr_null(strstr(r.out, "leg:"));
    ck_assert_ptr_nonnull(strstr(r.out, "transport: websocket"));
    run_free(&r);
}
END_TEST

START_TEST(chatagent_tools_go_to_every_server)
{
    struct run r = run_file("test/import/chatagent-config.yaml");
    struct gw_config *c = load(r.out);
    const struct gw_server_config *cu = server(c, "customers");
    const struct gw_server_config *it = server(c, "internal-tools");
    struct gw_tool_config tc;

    ck_assert_int_eq(c->gateway.max_concurrent, 10);
    ck_assert(cu->required && it->required);
    /* chatagent's `prompts: []`: no prompt, and the server is not asked */
    ck_assert(cu->has_prompts && cu->nprompts == 0 && !cu->load_prompts);
    ck_assert(it->has_prompts && it->nprompts == 0 && !it->load_prompts);
    ck_assert_int_eq(cu->mode, GW_MODE_DYNAMIC);
    ck_assert_int_eq(it->mode, GW_MODE_STRICT);
    ck_assert_int_eq(cu->default_tool_config.max_instances, 10);
    ck_assert_uint_eq(cu->ntool_configs, 3);
    ck_assert_uint_eq(it->ntool_configs, 3);
    /* dynamic: explicit max_instances over the default timeout (seed 004 §3.2) */
    ck_assert_int_eq(gw_config_tool_policy(cu, "get_customer", &tc), 0);
    ck_assert_int_eq(tc.max_instances, 10);
    ck_assert_uint_eq(tc.timeout_ms, 30000);
    ck_assert_int_eq(gw_config_tool_policy(it, "multiply_numbers", &tc), 0);
    ck_assert_int_eq(tc.max_instances, 15);
    ck_assert_int_eq(gw_config_tool_policy(it, "unlisted", &tc), UV_ENOENT);
    ck_assert_ptr_nonnull(strstr(r.err, "copied into the tool_config of all 2 servers"));
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

START_TEST(chatagent_oddities)
{
    struct run r = run_buf("box.yaml", "toolbox:\n"
                                       "  retries: 2\n"
                                       "  tools: [{name: t1, max_instances: 2, bogus: 1}, {}]\n"
                                       "  mcps:\n"
                                       "    - name: only one\n"
                                       "      url: https://h.example/mcp\n"
                                       "      transport: sse\n"
                                       "      prompts: [greet]\n"
                                       "      headers: {A: b}\n"
                                       "      default_tool_config: {name: d, max_instances: 1}\n");
    struct gw_config *c = load(r.out);
    const struct gw_server_config *s = server(c, "only_one");

    ck_assert_int_eq(s->transport, GW_TRANSPORT_SSE);
    ck_assert_int_eq(s->mode, GW_MODE_STRICT);
    ck_assert_uint_eq(s->ntool_configs, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "mcp 'only one' has no mode: imported as strict"));
    /* chatagent's prompt list is the server's */
    ck_assert(s->has_prompts);
    ck_assert_uint_eq(s->nprompts, 1);
    ck_assert_str_eq(s->prompts[0], "greet");
    ck_assert(s->load_prompts);
    ck_assert_ptr_null(strstr(r.err, "prompts"));
    ck_assert_ptr_nonnull(strstr(r.err, "'headers' of mcp 'only one' was not imported"));
    ck_assert_ptr_nonnull(strstr(r.err, "default_tool_config.name was not imported"));
    ck_assert_ptr_nonnull(strstr(r.err, "toolbox.tools[0].bogus was not imported"));
    ck_assert_ptr_nonnull(strstr(r.err, "toolbox.tools[1] was not imported: it has no name"));
    ck_assert_ptr_nonnull(strstr(r.err, "toolbox.retries was not imported"));
    /* one server: no ambiguity to report */
    ck_assert_ptr_null(strstr(r.err, "copied into"));
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

START_TEST(claude_desktop_and_cursor)
{
    struct run r = run_file("test/import/claude_desktop_config.json");
    struct gw_config *c = load(r.out);

    ck_assert_str_eq(env_of(server(c, "memory"), "DEBUG", false), "1");
    ck_assert_str_eq(env_of(server(c, "brave_search"), "BRAVE_API_KEY", false), "secret-value");
    ck_assert_str_eq(env_of(server(c, "remote"), "Authorization", true), "Bearer secret-value");
    ck_assert_int_eq(server(c, "legacy-sse")->transport, GW_TRANSPORT_SSE);
    ck_assert_int_eq(server(c, "remote")->transport, GW_TRANSPORT_STREAMABLE_HTTP);
    ck_assert_uint_eq(server(c, "filesystem")->nargs, 4);
    ck_assert_ptr_nonnull(strstr(r.err, "server name 'brave search' became server id "
                                        "'brave_search'"));
    ck_assert_ptr_nonnull(strstr(r.err, "the default of '${API_TOKEN:-none}'"));
    ck_assert_ptr_nonnull(strstr(r.err, "transport sse was chosen from its URL"));
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

START_TEST(client_entries_oddities)
{
    struct run r = run_buf("c.json", "{\"mcpServers\": {"
                                     "\"off\": {\"command\": \"npx\", \"disabled\": true},"
                                     "\"ws\": {\"type\": \"ws\", \"url\": \"wss://h\"},"
                                     "\"none\": {\"env\": {}},"
                                     "\"list\": [1],"
                                     "\"mcp_admin\": {\"command\": \"npx\", \"autoApprove\": [],"
                                     " \"args\": \"-y\", \"env\": {\"A\": {\"x\": 1}, "
                                     "\"B\": \"${weird thing}\", \"C\": \"${env:HOME}\"}}}}");

    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "server 'off' was not imported: it is disabled"));
    ck_assert_ptr_nonnull(strstr(r.err, "server 'ws' was not imported: type 'ws'"));
    ck_assert_ptr_nonnull(strstr(r.err, "server 'none' was not imported: it has neither"));
    ck_assert_ptr_nonnull(strstr(r.err, "server 'list' was not imported: its entry is not"));
    ck_assert_ptr_nonnull(strstr(r.err, "server name 'mcp_admin' became server id 'mcp_admin-2'"));
    ck_assert_ptr_nonnull(strstr(r.err, "'autoApprove' of server 'mcp_admin-2' was not imported"));
    ck_assert_ptr_nonnull(strstr(r.err, "servers.mcp_admin-2.args is one string"));
    ck_assert_ptr_nonnull(strstr(r.err, "servers.mcp_admin-2.env.A was not imported"));
    ck_assert_ptr_nonnull(strstr(r.err, "'${weird thing}' in servers.mcp_admin-2.env.B is not a "
                                        "variable"));
    struct gw_config *c = load(r.out);
    const struct gw_server_config *s = server(c, "mcp_admin-2");
    ck_assert_uint_eq(c->nservers, 1);
    ck_assert_str_eq(env_of(s, "B", false), "${weird thing}");
    ck_assert_str_eq(env_of(s, "C", false), "/root");
    ck_assert_str_eq(s->args[0], "-y");
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

START_TEST(vscode_inputs_and_jsonc)
{
    struct run r = run_file("test/import/vscode-mcp.json");
    struct gw_config *c = load(r.out);

    ck_assert_str_eq(env_of(server(c, "github"), "Authorization", true), "Bearer secret-value");
    ck_assert_str_eq(env_of(server(c, "playwright"), "HOME_DIR", false), "/root");
    ck_assert_ptr_nonnull(strstr(r.err, "inputs (1) were not imported"));
    ck_assert_ptr_nonnull(strstr(r.err, "'${input:github-token}' in "
                                        "servers.github.headers.Authorization was not imported"));
    ck_assert_ptr_nonnull(strstr(r.err, "reads ${GITHUB_TOKEN}"));
    gw_config_unref(c);
    run_free(&r);

    /* settings.json's "mcp": {"servers": …} form */
    r = run_buf("settings.json", "{\"editor.fontSize\": 12, \"mcp\": {\"servers\": "
                                 "{\"a\": {\"command\": \"npx\"}}}}");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "  a:\n    transport: stdio\n    command: npx\n"));
    run_free(&r);
}
END_TEST

/* Strings a careless emitter would turn into something else. */
static const char *const nasty[] = {"yes",
                                    "No",
                                    "~",
                                    "null",
                                    "",
                                    "-y",
                                    "@scope/pkg",
                                    "a: b",
                                    "a #b",
                                    "#c",
                                    "it's",
                                    "\"dq\"",
                                    "back\\slash",
                                    "line\nbreak",
                                    "tab\there",
                                    "cr\rx",
                                    "123",
                                    "0x1F",
                                    "1e3",
                                    "-1",
                                    ".inf",
                                    "\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
                                    "\001ctl",
                                    "\x7f",
                                    "{x}",
                                    "[y]",
                                    "a,b",
                                    "*ref",
                                    "&anchor",
                                    "!tag",
                                    "%pct",
                                    "`bt`",
                                    "|pipe",
                                    ">gt",
                                    "? q",
                                    " lead",
                                    "trail ",
                                    "bom\xef\xbb\xbf",
                                    "nel\xc2\x85",
                                    "c1\xc2\x80",
                                    "y",
                                    "true",
                                    "=",
                                    "- x",
                                    "a\\nb",
                                    "--- doc",
                                    "...",
                                    "/abs/path",
                                    "${X}",
                                    "0o17",
                                    "1_000",
                                    "2024-01-01",
                                    "<<",
                                    "\xf0\x9f\x98\x80"};

START_TEST(quoting_survives_a_reload)
{
    json_t *root = json_object(), *args = json_array(), *env = json_object();
    const size_t n = sizeof nasty / sizeof nasty[0];

    for (size_t i = 0; i < n; i++) {
        char name[16];
        json_array_append_new(args, json_string(nasty[i]));
        snprintf(name, sizeof name, "V%zu", i);
        /* env values may not hold CR or LF (security.md P8) */
        if (strpbrk(nasty[i], "\r\n") == NULL && strstr(nasty[i], "${") == NULL)
            json_object_set_new(env, name, json_string(nasty[i]));
    }
    json_object_set_new(
        root, "mcpServers",
        json_pack("{s:{s:s,s:o,s:o}}", "q", "command", "npx", "args", args, "env", env));
    char *text = json_dumps(root, 0);
    struct run r = run_buf("q.json", text);
    ck_assert_int_eq(r.rc, 0);
    struct gw_config *c = load(r.out);
    const struct gw_server_config *s = server(c, "q");
    ck_assert_msg(c->ndiags == 0, "%s", r.out);
    ck_assert_uint_eq(s->nargs, n);
    for (size_t i = 0; i < n; i++) {
        char name[16];
        const char *want = strcmp(nasty[i], "${X}") == 0 ? "value of X" : nasty[i];
        ck_assert_msg(strcmp(s->args[i], want) == 0, "arg %zu: '%s' came back as '%s'", i, want,
                      s->args[i]);
        snprintf(name, sizeof name, "V%zu", i);
        if (json_object_get(env, name) != NULL)
            ck_assert_str_eq(env_of(s, name, false), nasty[i]);
    }
    gw_config_unref(c);
    run_free(&r);
    free(text);
    json_decref(root);
}
END_TEST

START_TEST(yaml_typing_and_duplicates)
{
    struct run r = run_buf("t.yaml", "tools:\n"
                                     "  - name: a\n"
                                     "    type: mcp\n"
                                     "    server: s\n"
                                     "    command: npx\n"
                                     "    command: npx\n"
                                     "    load_tools: off\n"
                                     "    request_timeout: '1.5'\n"
                                     "    config: {n: 1.5, q: '1.5', big: 12345678901, nul: ~, "
                                     "s: !!str 7, neg: -3}\n");
    struct gw_config *c = load(r.out);
    const struct gw_server_config *s = server(c, "a");
    char *cfg = json_dumps(s->init_config, JSON_COMPACT | JSON_SORT_KEYS);

    ck_assert(!s->load_tools);
    /* a quoted number becomes the number, which mcp.yaml takes only bare */
    ck_assert_msg(s->ok, "%s", r.out);
    ck_assert_uint_eq(s->request_timeout_ms, 1500);
    ck_assert_str_eq(cfg, "{\"big\":12345678901,\"n\":1.5,\"neg\":-3,\"nul\":null,\"q\":\"1.5\","
                          "\"s\":\"7\"}");
    ck_assert_ptr_nonnull(strstr(r.err, "line 6: duplicate key 'command'"));
    free(cfg);
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

START_TEST(failures_write_nothing)
{
    static const struct {
        const char *name, *text, *err;
    } cases[] = {
        {"x.json", "{\"mcpServers\": {\"a\": }", "x.json:1:"},
        {"x.yaml", "tools: [\n", "x.yaml:2:1: error: "},
        {"x.yaml", "", "x.yaml: error: the file is empty"},
        {"x.yaml", "- a\n", "x.yaml: error: the document is not a map"},
        {"x.yaml", "name: agent\nmodel: gpt\n", "error: not a format mcpgw import knows"},
        {"x.yaml", "version: 1\nservers: {}\n", "error: this is already an mcp.yaml"},
        {"x.json", "{\"a\": 1, \"a\": 2}", "x.json: warning: line 1: duplicate key 'a'"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct run r = run_buf(cases[i].name, cases[i].text);
        ck_assert_int_eq(r.rc, 1);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strstr(r.err, cases[i].err) != NULL, "case %zu: %s", i, r.err);
        run_free(&r);
    }
    struct run r = run_file("/nonexistent/agent.yaml");
    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/agent.yaml: error: cannot open"));
    run_free(&r);
}
END_TEST

START_TEST(empty_lists_give_an_empty_config)
{
    struct run r = run_buf("e.json", "{\"mcpServers\": {}}");
    struct gw_config *c = load(r.out);

    ck_assert_int_eq(r.rc, 0);
    ck_assert(c->ok);
    ck_assert_uint_eq(c->nservers, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "no MCP server was found"));
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

START_TEST(file_name_cannot_break_the_header_comment)
{
    struct run r = run_buf("evil\nservers: {x: 1}\n", "{\"mcpServers\": {}}");
    struct gw_config *c = load(r.out);

    ck_assert(c->ok);
    ck_assert_uint_eq(c->ndiags, 0);
    gw_config_unref(c);
    run_free(&r);
}
END_TEST

/* The output sandboxes every stdio server; launchers that install on first
 * start keep the network, container runtimes run outside (their container
 * is the sandbox); HTTP servers say nothing. */
START_TEST(stdio_servers_come_out_sandboxed)
{
    struct run r =
        run_buf("c.json", "{\"mcpServers\": {"
                          "\"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"]},"
                          "\"b\": {\"command\": \"/usr/bin/docker\", \"args\": [\"run\"]},"
                          "\"c\": {\"command\": \"cat\"},"
                          "\"d\": {\"url\": \"https://mcp.example.com/mcp\"}}}");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "gateway:\n  sandbox:\n    default: 'on'\n"));
    struct gw_config *c = load(r.out);
    ck_assert_uint_eq(c->nservers, 4);
    ck_assert(c->servers[0].sandbox.enabled);
    ck_assert_int_eq(c->servers[0].sandbox.network, GW_SANDBOX_NET_HOST);
    ck_assert(!c->servers[1].sandbox.enabled);
    ck_assert(c->servers[2].sandbox.enabled);
    ck_assert_int_eq(c->servers[2].sandbox.network, GW_SANDBOX_NET_NONE);
    ck_assert(!c->servers[3].sandbox.enabled);
    gw_config_unref(c);
    run_free(&r);

    r = run_buf("h.json", "{\"mcpServers\": {\"d\": {\"url\": \"https://mcp.example.com/mcp\"}}}");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_null(strstr(r.out, "sandbox"));
    run_free(&r);
}
END_TEST

static Suite *import_suite(void)
{
    Suite *s = suite_create("import");
    TCase *tc = tcase_create("import");
    const TTest *const tests[] = {every_example_round_trips,
                                  holodeck_legacy_becomes_npx,
                                  holodeck_agent_names_fields_and_comments,
                                  holodeck_substitutions_carry_over,
                                  holodeck_oddities,
                                  chatagent_tools_go_to_every_server,
                                  chatagent_oddities,
                                  claude_desktop_and_cursor,
                                  client_entries_oddities,
                                  vscode_inputs_and_jsonc,
                                  quoting_survives_a_reload,
                                  yaml_typing_and_duplicates,
                                  failures_write_nothing,
                                  empty_lists_give_an_empty_config,
                                  file_name_cannot_break_the_header_comment,
                                  stdio_servers_come_out_sandboxed};

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(import_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
