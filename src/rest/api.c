/* REST routes of design §7. Handlers that need an upstream answer later;
 * the others answer at once. */
#include "gw/api.h"
#include "gw/api_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw/artifacts.h"
#include "gw/dispatch.h"
#include "gw/json_in.h"
#include "gw/lease.h"
#include "gw/log.h"
#include "gw/result.h"
#include "gw/toolsearch.h"
#include "gw/util.h"
#include "gw/version.h"

#define MAX_SEGMENTS 8
/* The largest artifact the route serves (tool output is capped at 16 MiB). */
#define GW_ARTIFACT_SERVE_MAX (64u << 20)

/* Path segments of a request; `arg` holds the segments matched by '*'. */
struct match {
    char *arg[2];
    size_t narg;
};

struct route {
    const char *method;
    const char *pattern; /* '/'-separated; a '*' segment matches one segment */
    void (*fn)(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m);
};

static void route_healthz(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_http_respond_json(req, 200, json_pack("{s:s}", "status", "ok"), NULL);
}

static void route_readyz(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    if (ctx->ready)
        gw_http_respond_json(req, 200, json_pack("{s:s}", "status", "ready"), NULL);
    else
        gw_http_respond_error(req, 503, "not_ready",
                              "the first load is not finished: servers are still starting", NULL);
}

static void route_problems(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_http_respond_json(req, 200, gw_problems_to_json(ctx->problems), NULL);
}

static json_t *rfc3339(time_t t)
{
    char buf[32];
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

void gw_api_note_reload(struct gw_api_ctx *ctx, json_t *summary)
{
    json_object_set_new(summary, "at", rfc3339(time(NULL)));
    json_decref(ctx->last_reload);
    ctx->last_reload = summary;
}

/* What the status page shows in its header and a script may want too. */
static json_t *gateway_json(const struct gw_api_ctx *ctx)
{
    time_t now = time(NULL);

    return json_pack("{s:s, s:o, s:I, s:s?, s:o, s:b, s:O?}", "version", GW_VERSION, "startedAt",
                     rfc3339(ctx->started_at), "uptimeSeconds", (json_int_t)(now - ctx->started_at),
                     "configPath", ctx->config ? ctx->config->path : NULL, "loadedAt",
                     rfc3339(ctx->loaded_at), "ready", ctx->ready, "lastReload", ctx->last_reload);
}

static void route_servers(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    json_t *body = gw_servers_json(ctx->servers);

    json_object_set_new(body, "gateway", gateway_json(ctx));
    gw_http_respond_json(req, 200, body, NULL);
}

/* The value of query parameter `key`, copied (no percent-decoding: the
 * values we take are names and keywords). NULL when absent. */
static char *query_param(const char *query, const char *key)
{
    size_t klen = strlen(key);
    const char *p = query;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, '&');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=')
            return gw_xstrndup(p + klen + 1, len - klen - 1);
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

/* Answers 304 when If-None-Match names the current version; returns 1 then. */
static int not_modified(struct gw_http_request *req, const char *etag)
{
    const char *inm = gw_http_header(req, "if-none-match");
    const char *const headers[] = {etag, NULL};

    if (inm == NULL || (strstr(inm, etag + strlen("ETag: ")) == NULL && strcmp(inm, "*") != 0))
        return 0;
    gw_http_respond(req, 304, NULL, NULL, 0, headers);
    return 1;
}

/* Serialised GET /v1/tools bodies of the current catalog version, by
 * format and toolset filter: building and dumping 10,000 tools costs tens
 * of milliseconds of loop time, and agents poll the same listing. The
 * cache empties whenever the version moves. */
#define TOOLS_CACHE_MAX 8

struct tools_cache {
    uint64_t version;
    size_t n;
    struct {
        char *key;
        char *body;
        size_t len;
    } e[TOOLS_CACHE_MAX];
};

static void tools_cache_clear(struct tools_cache *tc)
{
    for (size_t i = 0; i < tc->n; i++) {
        free(tc->e[i].key);
        free(tc->e[i].body);
    }
    tc->n = 0;
}

void gw_api_ctx_release(struct gw_api_ctx *ctx)
{
    if (ctx->tools_cache != NULL)
        tools_cache_clear(ctx->tools_cache);
    free(ctx->tools_cache);
    ctx->tools_cache = NULL;
    gw_artifacts_free(ctx->artifacts);
    ctx->artifacts = NULL;
    json_decref(ctx->last_reload);
    ctx->last_reload = NULL;
}

/* The body for (format, toolsets) at `version`, built once. Borrowed. */
static const char *tools_body(struct gw_api_ctx *ctx, struct gw_catalog *cat, uint64_t version,
                              enum gw_tool_format fmt, const char *toolsets, size_t *len)
{
    struct tools_cache *tc = ctx->tools_cache;
    char *key = gw_xasprintf("%d|%s", (int)fmt, toolsets ? toolsets : "");
    json_t *j;

    if (tc == NULL)
        tc = ctx->tools_cache = gw_xcalloc(1, sizeof *tc);
    if (tc->version != version) {
        tools_cache_clear(tc);
        tc->version = version;
    }
    for (size_t i = 0; i < tc->n; i++) {
        if (strcmp(tc->e[i].key, key) == 0) {
            free(key);
            *len = tc->e[i].len;
            return tc->e[i].body;
        }
    }
    if (tc->n == TOOLS_CACHE_MAX) {
        free(tc->e[0].key);
        free(tc->e[0].body);
        memmove(&tc->e[0], &tc->e[1], (TOOLS_CACHE_MAX - 1) * sizeof tc->e[0]);
        tc->n--;
    }
    j = gw_catalog_tools_json(cat, toolsets, fmt);
    tc->e[tc->n].key = key;
    tc->e[tc->n].body = json_dumps(j, JSON_COMPACT);
    tc->e[tc->n].len = strlen(tc->e[tc->n].body);
    json_decref(j);
    *len = tc->e[tc->n].len;
    return tc->e[tc->n++].body;
}

/* Query parameter `key` as text: percent-decoded, '+' a space. NULL when
 * absent. A %00 ends the text. */
static char *query_text(const char *query, const char *key)
{
    char *v = query_param(query, key);

    if (v != NULL)
        gw_percent_decode(v, false);
    return v;
}

/* GET /v1/tools's search parameters: q, limit, defer_loading. */
struct tools_args {
    char *q, *limit, *defer;
    size_t k;
};

#define DEFER_PATTERNS_MAX 64

/* Marks the tools `defer` selects ("all" or comma-separated globs)
 * "defer_loading": true, but those gateway.tool_search.always_loaded
 * matches. "true" is "all": the Messages API's field is a boolean, and a
 * caller writing it so would otherwise defer nothing, silently. */
static void mark_deferred(const struct gw_gateway_config *g, json_t *tools, char *defer)
{
    bool all = strcmp(defer, "all") == 0 || strcmp(defer, "true") == 0;
    char *pats[DEFER_PATTERNS_MAX], *save = NULL;
    size_t np = 0, i;
    json_t *t;

    for (char *p = strtok_r(defer, ",", &save); p != NULL && np < DEFER_PATTERNS_MAX;
         p = strtok_r(NULL, ",", &save))
        pats[np++] = p;
    json_array_foreach(tools, i, t)
    {
        const char *name = json_string_value(json_object_get(t, "name"));
        if ((all || gw_catalog_match_any(pats, np, name)) &&
            !gw_catalog_match_any(g->tool_search_always_loaded, g->ntool_search_always_loaded,
                                  name))
            json_object_set_new(t, "defer_loading", json_true());
    }
}

/* A sentence saying what is wrong with the search parameters, or NULL. */
static const char *tools_args_problem(struct tools_args *a, enum gw_tool_format fmt)
{
    char *end;
    unsigned long k;
    size_t n = 0;

    if (a->q != NULL && gw_toolsearch_query_problem(a->q) != NULL)
        return gw_toolsearch_query_problem(a->q);
    if (a->limit != NULL) {
        if (a->q == NULL)
            return "limit applies to a search: give q too";
        k = strtoul(a->limit, &end, 10);
        if (!isdigit((unsigned char)a->limit[0]) || *end != '\0' || k < 1 ||
            k > GW_TOOLSEARCH_LIMIT_MAX)
            return "limit must be an integer from 1 to 100";
        a->k = k;
    }
    if (a->defer != NULL && fmt != GW_TOOL_FORMAT_ANTHROPIC)
        return "defer_loading is a flag of format=anthropic";
    if (a->defer != NULL && a->defer[strspn(a->defer, ",")] == '\0')
        return "defer_loading must be 'all' or comma-separated name patterns";
    for (const char *p = a->defer; p != NULL && (p = strchr(p, ',')) != NULL; p++) {
        if (++n >= DEFER_PATTERNS_MAX)
            return "defer_loading holds more than 64 patterns";
    }
    return NULL;
}

/* The first name in `csv` that is no toolset, as a new string, or NULL.
 * A configured server whose tools are not listed yet (starting, waiting
 * for authorization) is a toolset with no tools, not an unknown one: a
 * filter that names it is right, only early. */
static char *unknown_toolset(const struct gw_api_ctx *ctx, const struct gw_catalog *cat,
                             const char *csv)
{
    for (const char *p = csv; p != NULL && *p != '\0'; p += *p == ',') {
        size_t l = strcspn(p, ",");
        char *name = gw_xstrndup(p, l);
        if (l > 0 && gw_catalog_toolset(cat, name) == NULL &&
            gw_config_server(ctx->config, name) == NULL)
            return name;
        free(name);
        p += l;
    }
    return NULL;
}

/* 404 unknown_toolset naming `name` (only when it has a toolset name's
 * shape: the query's bytes are the client's). */
static void respond_unknown_toolset(struct gw_http_request *req, const char *name)
{
    bool shown = gw_catalog_name_valid(name);
    char *msg = gw_xasprintf("no toolset is named %s%s%s: a toolset is a configured server's id "
                             "or mcp_admin (GET /v1/toolsets lists them)",
                             shown ? "'" : "", shown ? name : "in toolset=", shown ? "'" : "");

    gw_http_respond_error(req, 404, "unknown_toolset", msg, NULL);
    free(msg);
}

static void route_tools(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    struct gw_catalog *cat = gw_servers_catalog(ctx->servers);
    uint64_t version = gw_catalog_version(cat);
    char *format = query_param(req->query, "format");
    char *toolsets = query_param(req->query, "toolset");
    struct tools_args a = {query_text(req->query, "q"), query_param(req->query, "limit"),
                           query_text(req->query, "defer_loading"), GW_TOOLSEARCH_LIMIT_DEFAULT};
    enum gw_tool_format fmt = GW_TOOL_FORMAT_MCP;
    char *etag = gw_xasprintf("ETag: \"%llu\"", (unsigned long long)version);
    const char *const headers[] = {etag, NULL};
    const char *problem;
    char *unknown = NULL;
    size_t len;
    const char *body;
    json_t *j;

    if (format != NULL && gw_tool_format_parse(format, &fmt) != 0) {
        gw_http_respond_error(req, 400, "bad_format", "format must be mcp, openai or anthropic",
                              NULL);
    } else if ((problem = tools_args_problem(&a, fmt)) != NULL) {
        gw_http_respond_error(req, 400, "bad_query", problem, NULL);
    } else if ((unknown = unknown_toolset(ctx, cat, toolsets)) != NULL) {
        respond_unknown_toolset(req, unknown);
    } else if (a.defer == NULL && not_modified(req, etag)) {
        /* answered 304 */
    } else if (a.q == NULL && a.defer == NULL) {
        body = tools_body(ctx, cat, version, fmt, toolsets, &len);
        gw_http_respond(req, 200, "application/json; charset=utf-8", body, len, headers);
    } else {
        j = a.q != NULL ? gw_toolsearch_json(gw_servers_toolsearch(ctx->servers), cat, a.q,
                                             toolsets, fmt, a.k)
                        : gw_catalog_tools_json(cat, toolsets, fmt);
        if (a.defer != NULL)
            mark_deferred(&ctx->config->gateway, json_object_get(j, "tools"), a.defer);
        /* what defer_loading marks also follows always_loaded, which a
         * reload may change without a new catalog version: no ETag then */
        gw_http_respond_json(req, 200, j, a.defer == NULL ? headers : NULL);
    }
    free(a.q);
    free(a.limit);
    free(a.defer);
    free(format);
    free(toolsets);
    free(unknown);
    free(etag);
}

static void route_tool(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    const struct gw_cat_tool *t = gw_catalog_lookup(gw_servers_catalog(ctx->servers), m->arg[0]);

    if (t == NULL) {
        gw_http_respond_error(req, 404, "unknown_tool", "no tool has this name", NULL);
        return;
    }
    gw_http_respond_json(req, 200, gw_cat_tool_to_json(t, GW_TOOL_FORMAT_MCP), NULL);
}

static void route_toolsets(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    struct gw_catalog *cat = gw_servers_catalog(ctx->servers);
    char *etag = gw_xasprintf("ETag: \"%llu\"", (unsigned long long)gw_catalog_version(cat));
    const char *const headers[] = {etag, NULL};

    if (!not_modified(req, etag))
        gw_http_respond_json(req, 200, gw_catalog_toolsets_json(cat), headers);
    free(etag);
}

/* GET /v1/prompts and /v1/resources (design §7): what the servers offer
 * beside tools, as /mcp serves it, with the owning server. */
static void route_prompts(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_http_respond_json(req, 200,
                         json_pack("{s:I, s:o}", "version",
                                   (json_int_t)gw_servers_extras_version(ctx->servers), "prompts",
                                   gw_servers_extras_json(ctx->servers, GW_EXTRA_PROMPTS, true)),
                         NULL);
}

static void route_resources(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_http_respond_json(req, 200,
                         json_pack("{s:I, s:o, s:o}", "version",
                                   (json_int_t)gw_servers_extras_version(ctx->servers), "resources",
                                   gw_servers_extras_json(ctx->servers, GW_EXTRA_RESOURCES, true),
                                   "resourceTemplates",
                                   gw_servers_extras_json(ctx->servers, GW_EXTRA_TEMPLATES, true)),
                         NULL);
}

/* ---- bodies ---- */

int gw_api__bad_request(struct gw_http_request *req, const char *code, const char *msg)
{
    gw_http_respond_error(req, 400, code, msg, NULL);
    return -1;
}

static int parse_dialog(struct gw_http_request *req, json_t *d, struct gw_api_body *b)
{
    if (d == NULL)
        return 0;
    if (!json_is_string(d) ||
        gw_dialog_parse(json_string_value(d), b->root, b->self, b->dialog) != 0)
        return gw_api__bad_request(
            req, "bad_dialog",
            "dialog must be \"root\" or \"root/self\", each 1-64 characters of "
            "A-Z a-z 0-9 _ . -");
    b->has_dialog = true;
    return 0;
}

/* X-Mcpgw-Dialog names the dialog outside the body, so that a proxy in
 * front (HAProxy hashing on the header) can keep a dialog on one gateway.
 * It must agree with the body's dialog when both are given. */
static int dialog_header(struct gw_http_request *req, struct gw_api_body *b)
{
    const char *h = gw_http_header(req, "x-mcpgw-dialog");
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1], canon[GW_DIALOG_MAX + 1];

    if (h == NULL)
        return 0;
    if (gw_dialog_parse(h, root, self, canon) != 0)
        return gw_api__bad_request(req, "bad_dialog", "X-Mcpgw-Dialog must be root or root/self");
    if (b->has_dialog && strcmp(canon, b->dialog) != 0)
        return gw_api__bad_request(req, "bad_dialog",
                                   "the body's dialog and X-Mcpgw-Dialog name different dialogs");
    memcpy(b->dialog, canon, sizeof b->dialog);
    memcpy(b->root, root, sizeof b->root);
    memcpy(b->self, self, sizeof b->self);
    b->has_dialog = true;
    return 0;
}

/* Checks the body; returns 0, or -1 after answering the request. */
int gw_api__parse_body(struct gw_http_request *req, struct gw_api_body *b)
{
    json_error_t err;
    json_t *t;

    b->json = req->body_len ? gw_json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &err)
                            : json_object();
    if (b->json == NULL) {
        char *msg =
            gw_xasprintf("invalid JSON at line %d column %d: %s", err.line, err.column, err.text);
        gw_api__bad_request(req, "bad_json", msg);
        free(msg);
        return -1;
    }
    if (!json_is_object(b->json))
        return gw_api__bad_request(req, "bad_json", "the body must be a JSON object");
    b->arguments = json_object_get(b->json, "arguments");
    t = json_object_get(b->json, "timeout_ms");
    if (b->arguments != NULL && !json_is_object(b->arguments))
        return gw_api__bad_request(req, "bad_arguments", "arguments must be a JSON object");
    if (t != NULL && (!json_is_integer(t) || json_integer_value(t) <= 0))
        return gw_api__bad_request(req, "bad_arguments",
                                   "timeout_ms must be a positive integer (milliseconds)");
    b->timeout_ms = t ? (uint64_t)json_integer_value(t) : 0;
    if (b->arguments == NULL) {
        b->arguments = json_object();
        json_object_set_new(b->json, "arguments", b->arguments);
    }
    if (parse_dialog(req, json_object_get(b->json, "dialog"), b) != 0)
        return -1;
    return dialog_header(req, b);
}

static void route_call(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_call(ctx, req, m->arg[0]);
}

/* ---- metrics ---- */

static void route_metrics(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    size_t n = gw_servers_stats(ctx->servers, NULL, 0);
    struct gw_server_stats *servers = gw_xcalloc(n ? n : 1, sizeof *servers);
    struct gw_relay_stats relay;
    struct gw_rounds_stats rounds = {0};
    struct gw_metrics_view v = {
        .servers = servers,
        .nservers = gw_servers_stats(ctx->servers, servers, n),
        .catalog_version = gw_catalog_version(gw_servers_catalog(ctx->servers)),
        .calls_in_flight = gw_servers_in_flight(ctx->servers),
        .relay = &relay,
        .rounds = ctx->rounds != NULL ? &rounds : NULL,
        .problems = {gw_problems_count(ctx->problems, GW_SEV_ERROR),
                     gw_problems_count(ctx->problems, GW_SEV_WARNING),
                     gw_problems_count(ctx->problems, GW_SEV_INFO)},
        .event_clients = gw_events_clients(ctx->events),
        .search_index_bytes = gw_toolsearch_in_use(gw_servers_toolsearch(ctx->servers))
                                  ? gw_toolsearch_memory(gw_servers_toolsearch(ctx->servers))
                                  : 0,
    };
    char *text;

    gw_dispatch_relay_stats(ctx->servers, &relay);
    if (ctx->rounds != NULL)
        gw_rounds_stats(ctx->rounds, &rounds);
    text = gw_metrics_render(ctx->metrics, &v);
    gw_http_respond(req, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text), NULL);
    free(text);
    free(servers);
}

void gw_api_on_response(const struct gw_http_request *req, int status, void *data)
{
    struct gw_api_ctx *ctx = data;
    const char *route = req->user ? req->user : "other";
    char code[8], ms[24];

    gw_metrics_http(ctx->metrics, route, status);
    if (!gw_log_enabled(GW_LOG_INFO))
        return;
    snprintf(code, sizeof code, "%d", status);
    snprintf(ms, sizeof ms, "%llu", (unsigned long long)(gw_now_ms() - req->received_ms));
    gw_log(GW_LOG_INFO, "http", "method", req->method, "path", req->path, "status", code,
           "duration_ms", ms, "peer", req->peer, NULL);
}

/* ---- reload and events ---- */

static void route_reload(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    json_t *sum = ctx->reload(ctx->data);
    int status = json_is_true(json_object_get(sum, "ok")) ? 200 : 422;

    gw_http_respond_json(req, status, sum, NULL);
}

static void route_events(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    json_t *snap = gw_servers_json(ctx->servers);

    json_object_update_new(snap, gw_servers_dialogs_json(ctx->servers));
    gw_events_attach(ctx->events, req, snap);
}

/* ---- dialogs ---- */

static void route_dialogs(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_http_respond_json(req, 200, gw_servers_dialogs_json(ctx->servers), NULL);
}

static void route_release(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1], canon[GW_DIALOG_MAX + 1];
    char *given =
        m->narg == 2 ? gw_xasprintf("%s/%s", m->arg[0], m->arg[1]) : gw_xstrdup(m->arg[0]);
    struct gw_api_body b = {0};
    const char *id;
    json_t *released;

    /* An /mcp session's or client's own dialog may be released here (an
     * operator freeing its instances); it is never accepted where a call
     * names a dialog (gw_dialog_parse refuses it). The name may come
     * percent-encoded (encodeURIComponent and Python's quote() write its
     * ':' as %3A): what decodes to a dialog is one. */
    if (gw_percent_decode(given, true) != 0) {
        free(given);
        gw_http_respond_error(req, 400, "bad_dialog", "the dialog must be root or root/self", NULL);
        return;
    }
    if (gw_dialog_is_session(given) || gw_dialog_is_client(given)) {
        snprintf(canon, sizeof canon, "%s", given);
    } else if (gw_dialog_parse(given, root, self, canon) != 0) {
        free(given);
        gw_http_respond_error(req, 400, "bad_dialog", "the dialog must be root or root/self", NULL);
        return;
    }
    free(given);
    if (gw_api__parse_body(req, &b) != 0) {
        json_decref(b.json);
        return;
    }
    id = json_string_value(json_object_get(b.json, "serverId"));
    if (json_object_get(b.json, "serverId") != NULL && id == NULL) {
        json_decref(b.json);
        gw_api__bad_request(req, "bad_arguments", "serverId must be a string");
        return;
    }
    released = json_array();
    if (!gw_servers_dialog_known(ctx->servers, canon) && id == NULL)
        gw_http_respond_error(req, 404, "unknown_dialog", "this dialog holds no lease", NULL);
    else if (gw_servers_release(ctx->servers, canon, id, released) != 0)
        gw_http_respond_error(req, 404, "unknown_server", "no server has this id", NULL);
    else
        gw_http_respond_json(req, 200, json_pack("{s:O}", "released", released), NULL);
    json_decref(released);
    json_decref(b.json);
}

/* ---- artifacts ---- */

static void route_artifact(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1], canon[GW_DIALOG_MAX + 1];
    char *given = gw_xasprintf("%s/%s", m->arg[0], m->arg[1]);
    char *path = query_param(req->query, "path");
    int fd = -1;
    struct stat st;
    char *buf = NULL;

    if (gw_dialog_parse(given, root, self, canon) == 0 && path != NULL &&
        gw_percent_decode(path, true) == 0)
        fd = gw_artifact_open(ctx->config->gateway.artifacts_dir, root, self, path);
    if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size <= GW_ARTIFACT_SERVE_MAX) {
        buf = gw_xmalloc((size_t)st.st_size + 1);
        if (read(fd, buf, (size_t)st.st_size) == st.st_size)
            gw_http_respond(req, 200, gw_mime_for_path(path), buf, (size_t)st.st_size, NULL);
        else
            gw_http_respond_error(req, 500, "read_failed", "the artifact could not be read", NULL);
    } else {
        gw_http_respond_error(req, 404, "not_found", "no such artifact in this dialog", NULL);
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    free(path);
    free(given);
}

static void route_authorize(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_authorize(ctx, req, m->arg[0]);
}

static void route_authorize_post(struct gw_api_ctx *ctx, struct gw_http_request *req,
                                 struct match *m)
{
    gw_api__route_authorize_post(ctx, req, m->arg[0]);
}

static void route_deauthorize(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_deauthorize(ctx, req, m->arg[0]);
}

static void route_callback(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_callback(ctx, req);
}

static const struct route routes[] = {
    {"GET", "/healthz", route_healthz},
    {"GET", "/readyz", route_readyz},
    {"GET", "/v1/problems", route_problems},
    {"GET", "/v1/servers", route_servers},
    {"GET", "/v1/servers/*/authorize", route_authorize},
    {"POST", "/v1/servers/*/authorize", route_authorize_post},
    {"DELETE", "/v1/servers/*/authorize", route_deauthorize},
    {"GET", "/oauth/callback", route_callback},
    {"GET", "/v1/tools", route_tools},
    {"GET", "/v1/tools/*", route_tool},
    {"POST", "/v1/tools/*/call", route_call},
    {"GET", "/v1/toolsets", route_toolsets},
    {"GET", "/v1/prompts", route_prompts},
    {"GET", "/v1/resources", route_resources},
    {"GET", "/v1/dialogs", route_dialogs},
    {"POST", "/v1/reload", route_reload},
    {"GET", "/v1/events", route_events},
    {"GET", "/metrics", route_metrics},
    {"POST", "/v1/dialogs/*/release", route_release},
    {"POST", "/v1/dialogs/*/*/release", route_release},
    {"GET", "/api/dialogs/*/*/artifact", route_artifact},
};

/* Splits `path` in place into at most MAX_SEGMENTS segments. */
static size_t split_path(char *path, char **seg)
{
    size_t n = 0;

    for (char *p = strtok(path, "/"); p != NULL; p = strtok(NULL, "/")) {
        if (n == MAX_SEGMENTS)
            return MAX_SEGMENTS + 1;
        seg[n++] = p;
    }
    return n;
}

/* Does `pattern` match the segments? Fills m->arg with '*' segments.
 * Walks the pattern in place (every request tries several routes). The
 * patterns are ours: '/'-led, no empty segments. */
static bool route_matches(const char *pattern, char **seg, size_t n, struct match *m)
{
    const char *p = pattern;
    size_t i = 0;

    m->narg = 0;
    while (*p == '/') {
        const char *end = strchrnul(++p, '/');
        size_t len = (size_t)(end - p);
        if (i == n)
            return false;
        if (len == 1 && *p == '*')
            m->arg[m->narg++] = seg[i];
        else if (strncmp(p, seg[i], len) != 0 || seg[i][len] != '\0')
            return false;
        i++;
        p = end;
    }
    return i == n;
}

/* Every POST says it is JSON, an empty one too: a page of another site
 * may POST text/plain, a form or nothing without asking first (a form, a
 * no-cors fetch, sendBeacon), and it does not need the answer. */
static void unsupported_media_type(struct gw_http_request *req)
{
    gw_http_respond_error(req, 415, "unsupported_media_type",
                          "a POST must carry Content-Type: application/json, even with no body",
                          NULL);
}

static void route(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    char *path, *seg[MAX_SEGMENTS];
    size_t n;
    struct match m;
    const char *allowed = NULL;

    path = gw_xstrdup(req->path);
    n = split_path(path, seg);
    for (size_t i = 0; n <= MAX_SEGMENTS && i < GW_ARRAY_SIZE(routes); i++) {
        if (!route_matches(routes[i].pattern, seg, n, &m))
            continue;
        req->user = (void *)routes[i].pattern;
        if (strcmp(routes[i].method, req->method) == 0) {
            if (strcmp(req->method, "POST") == 0 && !gw_http_body_is_json(req))
                unsupported_media_type(req);
            else
                routes[i].fn(ctx, req, &m);
            free(path);
            return;
        }
        allowed = routes[i].method;
    }
    if (allowed != NULL) {
        char *msg = gw_xasprintf("%s is not allowed here; use %s", req->method, allowed);
        char *allow = gw_xasprintf("Allow: %s", allowed);
        const char *const headers[] = {allow, NULL};
        gw_http_respond_error(req, 405, "method_not_allowed", msg, headers);
        free(allow);
        free(msg);
    } else {
        gw_http_respond_error(req, 404, "not_found", "no such route", NULL);
    }
    free(path);
}

void gw_api_handle(struct gw_http_request *req, void *data)
{
    route(data, req);
}
