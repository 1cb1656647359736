/* The REST routes that list what a client may use: GET /v1/tools (its
 * formats, search and defer_loading; the listing cache), /v1/tools/{name},
 * /v1/toolsets, /v1/prompts and /v1/resources. Each shows the caller's
 * view (gw/policy.h): what it may not use is not there. */
#include "gw/api.h"
#include "gw/api_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gw/artifacts.h"
#include "gw/policy.h"
#include "gw/toolsearch.h"
#include "gw/util.h"

/* The value of query parameter `key`, copied (no percent-decoding: the
 * values we take are names and keywords). NULL when absent. */
char *gw_api__query_param(const char *query, const char *key)
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
    unsigned char policy[32]; /* the clients' digest the bodies were built under */
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
static const char *tools_body(struct gw_api_ctx *ctx, const struct gw_http_request *req,
                              struct gw_catalog *cat, uint64_t version, enum gw_tool_format fmt,
                              const char *toolsets, size_t *len)
{
    struct tools_cache *tc = ctx->tools_cache;
    const unsigned char *policy = ctx->config->clients_sha256;
    char *key = gw_xasprintf("%d|%s|%s", (int)fmt, req->client, toolsets ? toolsets : "");
    json_t *j;

    if (tc == NULL)
        tc = ctx->tools_cache = gw_xcalloc(1, sizeof *tc);
    if (tc->version != version || memcmp(tc->policy, policy, sizeof tc->policy) != 0) {
        tools_cache_clear(tc);
        tc->version = version;
        memcpy(tc->policy, policy, sizeof tc->policy);
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
    gw_policy_filter_tools(ctx->config, req->client, cat, json_object_get(j, "tools"), fmt);
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
    char *v = gw_api__query_param(query, key);

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
static char *unknown_toolset(const struct gw_api_ctx *ctx, const struct gw_http_request *req,
                             const struct gw_catalog *cat, const char *csv)
{
    for (const char *p = csv; p != NULL && *p != '\0'; p += *p == ',') {
        size_t l = strcspn(p, ",");
        char *name = gw_xstrndup(p, l);
        const struct gw_cat_toolset *ts = gw_catalog_toolset(cat, name);
        const char *server = ts != NULL ? gw_cat_toolset_server(ts) : name;
        if (l > 0 && ((ts == NULL && gw_config_server(ctx->config, name) == NULL) ||
                      (server != NULL && !gw_policy_server(ctx->config, req->client, server))))
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

/* The listing's ETag: the catalog's version, and with clients the
 * policy's digest too, since a reload may change a client's view of the
 * same catalog. */
static char *listing_etag(const struct gw_api_ctx *ctx, uint64_t version)
{
    const unsigned char *p = ctx->config->clients_sha256;

    if (ctx->config->nclients == 0)
        return gw_xasprintf("ETag: \"%llu\"", (unsigned long long)version);
    return gw_xasprintf("ETag: \"%llu-%02x%02x%02x%02x%02x%02x\"", (unsigned long long)version,
                        p[0], p[1], p[2], p[3], p[4], p[5]);
}

/* A search over the client's view: the index knows no clients, so it is
 * asked for the most it gives and the hits the client may not see are
 * left out before the limit is applied; what it could not search yet is
 * counted over the client's toolsets only. */
static json_t *search(struct gw_api_ctx *ctx, const struct gw_http_request *req,
                      const struct gw_catalog *cat, const struct tools_args *a,
                      const char *toolsets, enum gw_tool_format fmt)
{
    bool clients = ctx->config->nclients > 0;
    struct gw_policy_view view = {ctx->servers, req->client};
    json_t *j =
        gw_toolsearch_json(gw_servers_toolsearch(ctx->servers), cat, a->q, toolsets, fmt,
                           clients ? GW_TOOLSEARCH_LIMIT_MAX : a->k, gw_policy_view_toolset, &view);
    json_t *tools = json_object_get(j, "tools");

    gw_policy_filter_tools(ctx->config, req->client, cat, tools, fmt);
    while (json_array_size(tools) > a->k)
        json_array_remove(tools, json_array_size(tools) - 1);
    return j;
}

void gw_api__route_tools(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    struct gw_catalog *cat = gw_servers_catalog(ctx->servers);
    uint64_t version = gw_catalog_version(cat);
    char *format = gw_api__query_param(req->query, "format");
    char *toolsets = gw_api__query_param(req->query, "toolset");
    struct tools_args a = {query_text(req->query, "q"), gw_api__query_param(req->query, "limit"),
                           query_text(req->query, "defer_loading"), GW_TOOLSEARCH_LIMIT_DEFAULT};
    enum gw_tool_format fmt = GW_TOOL_FORMAT_MCP;
    char *etag = listing_etag(ctx, version);
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
    } else if ((unknown = unknown_toolset(ctx, req, cat, toolsets)) != NULL) {
        respond_unknown_toolset(req, unknown);
    } else if (a.defer == NULL && not_modified(req, etag)) {
        /* answered 304 */
    } else if (a.q == NULL && a.defer == NULL) {
        body = tools_body(ctx, req, cat, version, fmt, toolsets, &len);
        gw_http_respond(req, 200, "application/json; charset=utf-8", body, len, headers);
    } else {
        j = a.q != NULL ? search(ctx, req, cat, &a, toolsets, fmt)
                        : gw_catalog_tools_json(cat, toolsets, fmt);
        gw_policy_filter_tools(ctx->config, req->client, cat, json_object_get(j, "tools"), fmt);
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

void gw_api__route_tool(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *name)
{
    const struct gw_cat_tool *t = gw_catalog_lookup(gw_servers_catalog(ctx->servers), name);

    if (t == NULL || !gw_policy_tool(ctx->config, req->client, t->server, t->name, NULL)) {
        gw_http_respond_error(req, 404, "unknown_tool", "no tool has this name", NULL);
        return;
    }
    gw_http_respond_json(req, 200, gw_cat_tool_to_json(t, GW_TOOL_FORMAT_MCP), NULL);
}

void gw_api__route_toolsets(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    struct gw_catalog *cat = gw_servers_catalog(ctx->servers);
    char *etag = listing_etag(ctx, gw_catalog_version(cat));
    const char *const headers[] = {etag, NULL};

    if (!not_modified(req, etag))
        gw_http_respond_json(req, 200, gw_policy_toolsets_json(ctx->config, req->client, cat),
                             headers);
    free(etag);
}

/* GET /v1/prompts and /v1/resources (design §7): what the servers offer
 * beside tools, as /mcp serves it, with the owning server. */
void gw_api__route_prompts(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    gw_http_respond_json(
        req, 200,
        json_pack("{s:I, s:o}", "version", (json_int_t)gw_servers_extras_version(ctx->servers),
                  "prompts",
                  gw_policy_extras_json(ctx->servers, req->client, GW_EXTRA_PROMPTS, true)),
        NULL);
}

void gw_api__route_resources(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    gw_http_respond_json(
        req, 200,
        json_pack("{s:I, s:o, s:o}", "version", (json_int_t)gw_servers_extras_version(ctx->servers),
                  "resources",
                  gw_policy_extras_json(ctx->servers, req->client, GW_EXTRA_RESOURCES, true),
                  "resourceTemplates",
                  gw_policy_extras_json(ctx->servers, req->client, GW_EXTRA_TEMPLATES, true)),
        NULL);
}
