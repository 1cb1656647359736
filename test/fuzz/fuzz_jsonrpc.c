/* libFuzzer target for the JSON-RPC side of an upstream: the line decoder
 * of the MCP client (gw_mcp_client_receive) and the catalog normalisation
 * of the tools/list result it produces (gw_catalog_derive, commit,
 * projections).
 *
 * Input: one mode byte, then lines (split on '\n') fed as stdout lines of
 * the upstream. Unless the mode says otherwise the client is first made
 * READY by a valid initialize answer and then has requests in flight:
 *   id 2 tools/list (60 s timeout), id 3 ping, id 4 tools/call echo
 *   (progress token 7), id 5 prompts/list; re-lists on list_changed take
 *   the next ids.
 * Mode bits: 1 skip the handshake (the lines answer initialize, id 1);
 * 2 cancel the tool call before feeding; 4 report the transport down after
 * the lines; 8 close the client from inside the first reply callback;
 * 16 speak 2026-07-28 (the handshake is server/discover, id 1; every
 * request has the envelope; results may ask for input, which the owner
 * answers at once, and a listen is open, id 2, shifting the ids above by
 * one); with 1 too, the lines answer the auto probe.
 *
 * Catalog: the last tools/list result, and the whole input after the mode
 * byte when it is a JSON array or an object with result.tools, are derived
 * for several server configs (filters, transforms, strict, dynamic) and
 * committed into one catalog, then projected in every format. Everything
 * is closed each iteration and the loop must end with no handle left.
 *
 * Oracles: the client never sends a text containing a newline or invalid
 * JSON; a server request (method + id) is always answered; catalog tools
 * have valid, unique final names that lookup finds; version bumps by one
 * per changing commit. */
#include "gw/catalog.h"
#include "gw/config.h"
#include "gw/log.h"
#include "gw/mcp_client.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define MAX_RELISTS 3

static uv_loop_t loop;
/* MCPGW_FUZZ_SKIP_KNOWN=1 turns off the checks of bugs reported and not
 * fixed yet, for long runs. Known: text quoted from the server is cut
 * without regard to UTF-8 (a server request whose method is cut at 200
 * bytes gets no answer; an error message cut at 512 bytes is not UTF-8). */
static int skip_known;
static struct gw_config *cfg;

static const char servers_yaml[] = "version: 1\n"
                                   "servers:\n"
                                   "  plain:\n"
                                   "    command: /bin/sh\n"
                                   "  filtered:\n"
                                   "    command: /bin/sh\n"
                                   "    tools:\n"
                                   "      whitelist: ['get_*', 'list_*', 'echo', '*_file']\n"
                                   "      blacklist: ['get_secret*', '*_file']\n"
                                   "    transform:\n"
                                   "      - prefix: 'f_'\n"
                                   "      - prefix: {remove: 'f_get_', add: 'g_'}\n"
                                   "      - suffix: '_x'\n"
                                   "  strict:\n"
                                   "    command: /bin/sh\n"
                                   "    mode: strict\n"
                                   "    tool_config:\n"
                                   "      echo: {max_instances: 2, timeout: 5s}\n"
                                   "      add: {max_instances: 1}\n"
                                   "  dynamic:\n"
                                   "    command: /bin/sh\n"
                                   "    mode: dynamic\n"
                                   "    default_tool_config: {max_instances: 3, timeout: 10s}\n"
                                   "    tool_config:\n"
                                   "      echo: {timeout: 1s}\n"
                                   "  zz_collide:\n"
                                   "    command: /bin/sh\n"
                                   "    transform:\n"
                                   "      - suffix: ''\n";

struct harness {
    struct gw_mcp_client *c;
    size_t sends;
    int ready, failed, relists, close_in_reply, closed;
    json_t *listing; /* the last tools/list result */
};

static int on_send(void *data, const char *msg, size_t len)
{
    struct harness *h = data;
    json_error_t err;

    /* The transport frames by newline: one inside a message would split it. */
    if (memchr(msg, '\n', len) != NULL)
        abort();
    json_t *m = json_loadb(msg, len, 0, &err);
    if (m == NULL) {
        fprintf(stderr, "fuzz_jsonrpc: the client sent invalid JSON: %.*s\n", (int)len, msg);
        abort();
    }
    json_decref(m);
    h->sends++;
    return 0;
}

static void on_ready(void *data, const char *version, json_t *info, json_t *caps)
{
    ((struct harness *)data)->ready++;
}

static void on_failed(void *data, int code, const char *why)
{
    ((struct harness *)data)->failed++;
}

static void on_reply(void *data, const struct gw_mcp_reply *r)
{
    struct harness *h = data;

    if (r->code == 0 && r->result == NULL)
        abort();
    if (r->code != 0 && r->message == NULL)
        abort();
    /* The message ends up in a JSON error body: it must be valid UTF-8
     * even when it quotes (and cuts) what the server sent. */
    json_t *text = r->code != 0 ? json_string(r->message) : NULL;
    if (r->code != 0 && text == NULL && !skip_known) {
        fprintf(stderr, "fuzz_jsonrpc: reply message is not UTF-8: %s\n", r->message);
        abort();
    }
    json_decref(text);
    if (h->close_in_reply && !h->closed) {
        h->closed = 1;
        gw_mcp_client_close(h->c);
    }
}

static void on_list(void *data, const struct gw_mcp_reply *r)
{
    struct harness *h = data;

    if (r->code == 0) {
        if (!json_is_array(r->result))
            abort();
        json_decref(h->listing);
        h->listing = json_incref(r->result);
    }
    on_reply(data, r);
}

static void on_tools_changed(void *data)
{
    struct harness *h = data;

    if (h->closed || h->relists >= MAX_RELISTS)
        return;
    h->relists++;
    gw_mcp_client_list_tools(h->c, 60000, on_list, h, NULL);
}

/* The owner answers every request it is given at once: a 2025 server's
 * (sent back upstream) and the input a 2026-07-28 result asks for (the
 * request is then sent again). */
static int on_request(void *data, const char *method, json_t *id, json_t *params,
                      gw_mcp_handle origin)
{
    struct harness *h = data;
    json_t *result = json_pack("{s:s}", "action", "decline");
    int rc = gw_mcp_client_respond(h->c, id, origin, result, NULL);

    json_decref(result);
    return rc == 0 ? 0 : -1;
}

static void on_notification(void *data, const char *method, json_t *msg)
{
    if (method == NULL || !json_is_object(msg))
        abort();
}

/* A single message that is a server request must get its answer (S9). */
static int is_server_request(const char *line, size_t len)
{
    json_t *m = json_loadb(line, len, JSON_DECODE_ANY, NULL);
    json_t *id = json_object_get(m, "id");
    int yes = json_is_object(m) && json_is_string(json_object_get(m, "method")) &&
              json_is_string(json_object_get(m, "jsonrpc")) &&
              strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0") == 0 &&
              (json_is_string(id) || json_is_integer(id));
    json_decref(m);
    return yes;
}

static void feed(struct harness *h, const char *p, size_t n)
{
    while (n > 0 && !h->closed) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) : n;
        size_t before = h->sends;
        int request = is_server_request(p, len);
        gw_mcp_client_receive(h->c, p, len);
        if (request && !skip_known && !h->closed && h->sends == before) {
            fprintf(stderr, "fuzz_jsonrpc: a server request got no answer: %.*s\n", (int)len, p);
            abort();
        }
        if (nl == NULL)
            break;
        p += len + 1;
        n -= len + 1;
    }
}

static void start_client(struct harness *h, uint8_t mode)
{
    static const char init[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\","
        "\"capabilities\":{\"tools\":{\"listChanged\":true}},"
        "\"serverInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}";
    static const char discover[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\","
        "\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{\"listChanged\":"
        "true},\"resources\":{\"subscribe\":true}},\"ttlMs\":0,\"cacheScope\":\"public\"}}";
    bool modern = (mode & 16) != 0;
    struct gw_mcp_client_opts o = {
        .send = on_send,
        .on_ready = on_ready,
        .on_failed = on_failed,
        .on_tools_changed = on_tools_changed,
        .on_notification = on_notification,
        .on_request = on_request,
        .data = h,
        .server_id = "fuzz",
        .init_timeout_ms = 60000,
        .era = modern ? ((mode & 1) ? GW_MCP_ERA_AUTO : GW_MCP_ERA_MODERN) : GW_MCP_ERA_LEGACY,
    };
    json_t *uri = json_pack("{s:s}", "uri", "file:///a");
    json_t *args = json_pack("{s:s}", "text", "hi"), *token = json_integer(7);
    gw_mcp_handle call = 0;

    if (gw_mcp_client_new(&loop, &o, &h->c) != 0 || gw_mcp_client_start(h->c) != 0)
        abort();
    if (!(mode & 1)) {
        if (modern)
            gw_mcp_client_receive(h->c, discover, sizeof discover - 1);
        else
            gw_mcp_client_receive(h->c, init, sizeof init - 1);
        if (h->ready != 1 || gw_mcp_client_state(h->c) != GW_MCP_READY)
            abort();
        gw_mcp_client_list_tools(h->c, 60000, on_list, h, NULL);
        gw_mcp_client_ping(h->c, 0, on_reply, h, NULL);
        gw_mcp_client_call_tool(h->c, "echo", args, token, 60000, on_reply, h, &call,
                                GW_MCP_CAPS_ALL);
        gw_mcp_client_list_all(h->c, "prompts/list", "prompts", 0, on_reply, h, NULL);
        if (modern)
            gw_mcp_client_request(h->c, "resources/subscribe", uri, 60000, on_reply, h, NULL,
                                  GW_MCP_CAPS_ALL);
        if ((mode & 2) && gw_mcp_client_cancel(h->c, call, "fuzz") != 0)
            abort();
    }
    json_decref(args);
    json_decref(token);
    json_decref(uri);
}

/* ---- catalog ---- */

static void check_catalog(const struct gw_catalog *cat)
{
    static const enum gw_tool_format fmts[] = {GW_TOOL_FORMAT_MCP, GW_TOOL_FORMAT_OPENAI,
                                               GW_TOOL_FORMAT_ANTHROPIC, GW_TOOL_FORMAT_MCP_WIRE};
    const struct gw_cat_toolset *ts;

    for (size_t i = 0; (ts = gw_catalog_toolset_at(cat, i)) != NULL; i++) {
        if (gw_catalog_toolset(cat, gw_cat_toolset_name(ts)) != ts)
            abort();
        const struct gw_cat_tool *t;
        for (size_t k = 0; (t = gw_cat_toolset_tool(ts, k)) != NULL; k++) {
            if (!gw_catalog_name_valid(t->name) || gw_catalog_lookup(cat, t->name) != t)
                abort();
            if (!json_is_object(t->input_schema) || strlen(t->description) > GW_CATALOG_TEXT_MAX)
                abort();
            for (size_t f = 0; f < 4; f++) {
                json_t *j = gw_cat_tool_to_json(t, fmts[f]);
                if (j == NULL)
                    abort();
                free(json_dumps(j, JSON_COMPACT));
                json_decref(j);
            }
        }
    }
    for (size_t f = 0; f < 3; f++) {
        json_t *j = gw_catalog_tools_json(cat, f == 1 ? "plain,,strict,nope" : NULL, fmts[f]);
        free(json_dumps(j, JSON_COMPACT));
        json_decref(j);
    }
    json_decref(gw_catalog_toolsets_json(cat));
}

static void commit(struct gw_catalog *cat, struct gw_toolset_build *b, struct gw_cat_diags *d)
{
    uint64_t v = gw_catalog_version(cat);
    int rc = gw_catalog_commit(cat, b, GW_TOOL_CHANGES_DISABLE, d);
    uint64_t now = gw_catalog_version(cat);

    if ((rc == 1 && now != v + 1) || (rc != 1 && now != v))
        abort();
}

static void derive_all(json_t *a, json_t *b)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_cat_diags d = {0};

    for (size_t i = 0; i < cfg->nservers; i++) {
        struct gw_toolset_build *tb = gw_catalog_derive(&cfg->servers[i], a ? a : b);
        for (size_t k = 0; k < tb->diags.n; k++)
            gw_cat_diag_kind_name(tb->diags.v[k].kind);
        commit(cat, tb, &d);
    }
    check_catalog(cat);
    /* A re-listing with other definitions (S8), the first ones again (what
     * was withdrawn stays so), then a removal. */
    if (a && b) {
        commit(cat, gw_catalog_derive(&cfg->servers[0], b), &d);
        commit(cat, gw_catalog_derive(&cfg->servers[3], b), &d);
        commit(cat, gw_catalog_derive(&cfg->servers[0], a), &d);
        check_catalog(cat);
    }
    gw_catalog_remove(cat, cfg->servers[4].id, &d);
    check_catalog(cat);
    gw_cat_diags_free(&d);
    gw_catalog_free(cat);
}

static json_t *whole_listing(const uint8_t *p, size_t n)
{
    json_t *j = json_loadb((const char *)p, n, 0, NULL), *tools;

    if (json_is_array(j))
        return j;
    tools = json_object_get(json_object_get(j, "result"), "tools");
    tools = json_is_array(tools) ? json_incref(tools) : NULL;
    json_decref(j);
    return tools;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (uv_loop_init(&loop) != 0 ||
        gw_config_load_buffer("/tmp/mcpgw-fuzz.yaml", servers_yaml, sizeof servers_yaml - 1,
                              &cfg) != 0 ||
        !cfg->ok || cfg->nservers != 5)
        abort();
    for (size_t i = 0; i < cfg->nservers; i++) {
        if (!cfg->servers[i].ok)
            abort();
    }
    skip_known = getenv("MCPGW_FUZZ_SKIP_KNOWN") != NULL;
    gw_log_set_level(GW_LOG_DEBUG);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct harness h = {0};

    if (size == 0)
        return 0;
    h.close_in_reply = (data[0] & 8) != 0;
    start_client(&h, data[0]);
    feed(&h, (const char *)data + 1, size - 1);
    if (!h.closed && (data[0] & 4))
        gw_mcp_client_transport_down(h.c, "fuzz: transport down");
    if (!h.closed)
        gw_mcp_client_close(h.c);
    h.closed = 1;
    uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_alive(&loop))
        abort();

    json_t *whole = whole_listing(data + 1, size - 1);
    if (h.listing || whole)
        derive_all(h.listing, whole);
    json_decref(h.listing);
    json_decref(whole);
    return 0;
}
