/* REST routes of design §7. Handlers that need an upstream answer later;
 * the others answer at once. */
#include "gw/api.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/log.h"
#include "gw/result.h"
#include "gw/util.h"

#define MAX_SEGMENTS 8

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

/* A tool call waiting for its upstream. Freed by the reply callback. */
struct pending_call {
    struct gw_http_request *req;
    struct gw_call *call;
    char *tool;
    uint64_t started_ms;
    bool aborted;
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

static void route_servers(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_http_respond_json(req, 200, gw_servers_json(ctx->servers), NULL);
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

static void route_tools(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    struct gw_catalog *cat = gw_servers_catalog(ctx->servers);
    char *format = query_param(req->query, "format");
    char *toolsets = query_param(req->query, "toolset");
    enum gw_tool_format fmt = GW_TOOL_FORMAT_MCP;
    char *etag = gw_xasprintf("ETag: \"%llu\"", (unsigned long long)gw_catalog_version(cat));
    const char *const headers[] = {etag, NULL};

    if (format != NULL && gw_tool_format_parse(format, &fmt) != 0)
        gw_http_respond_error(req, 400, "bad_format", "format must be mcp, openai or anthropic",
                              NULL);
    else if (!not_modified(req, etag))
        gw_http_respond_json(req, 200, gw_catalog_tools_json(cat, toolsets, fmt), headers);
    free(format);
    free(toolsets);
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

/* ---- tool calls ---- */

static void log_call(const struct pending_call *pc, const char *status)
{
    char ms[24];

    snprintf(ms, sizeof ms, "%llu", (unsigned long long)(gw_now_ms() - pc->started_ms));
    gw_log(GW_LOG_INFO, "tool call", "tool", pc->tool, "server",
           pc->call ? gw_call_server(pc->call) : NULL, "status", status, "duration_ms", ms, NULL);
}

static void reply_error(struct gw_http_request *req, const struct gw_mcp_reply *reply)
{
    char *msg;

    switch (reply->code) {
    case GW_MCP_E_TIMEOUT:
        gw_http_respond_error(req, 504, "call_timeout",
                              "the tool did not answer in time; the call was cancelled upstream",
                              NULL);
        return;
    case GW_MCP_E_TRANSPORT:
        msg = gw_xasprintf("the server died during the call: %s", reply->message);
        gw_http_respond_error(req, 502, "upstream_died", msg, NULL);
        break;
    case GW_MCP_E_CLOSED:
        gw_http_respond_error(req, 503, "shutting_down", "the gateway is stopping", NULL);
        return;
    default:
        msg = gw_xasprintf("the server answered with an error: %s", reply->message);
        gw_http_respond_error(req, 502, "upstream_error", msg, NULL);
        break;
    }
    free(msg);
}

static void on_call_reply(void *data, const struct gw_mcp_reply *reply)
{
    struct pending_call *pc = data;
    json_t *r;

    if (pc->aborted) {
        log_call(pc, "client_gone");
    } else if (reply->code != 0) {
        log_call(pc, gw_mcp_strerror(reply->code));
        reply_error(pc->req, reply);
    } else if ((r = gw_result_from_mcp(reply->result)) == NULL) {
        log_call(pc, "bad_result");
        gw_http_respond_error(pc->req, 502, "upstream_error",
                              "the server's answer is not a CallToolResult", NULL);
    } else {
        log_call(pc, json_is_true(json_object_get(r, "isError")) ? "tool_error" : "ok");
        gw_http_respond_json(pc->req, 200, r, NULL);
    }
    free(pc->tool);
    free(pc);
}

static void on_call_abort(struct gw_http_request *req, void *data)
{
    struct pending_call *pc = data;

    pc->aborted = true;
    gw_servers_cancel(pc->call, "the client disconnected");
}

/* Checks the call body; returns its arguments (borrowed from *body) or NULL
 * after answering the request. */
static json_t *call_arguments(struct gw_http_request *req, json_t **body, uint64_t *timeout_ms)
{
    const char *ctype = gw_http_header(req, "content-type");
    json_error_t err;
    json_t *args, *t;

    if (req->body_len > 0 && (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0)) {
        gw_http_respond_error(req, 415, "unsupported_media_type",
                              "the body must be application/json", NULL);
        return NULL;
    }
    *body = req->body_len ? json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &err)
                          : json_object();
    if (*body == NULL || !json_is_object(*body)) {
        char *msg = *body ? gw_xstrdup("the body must be a JSON object")
                          : gw_xasprintf("invalid JSON at line %d column %d: %s", err.line,
                                         err.column, err.text);
        gw_http_respond_error(req, 400, "bad_json", msg, NULL);
        free(msg);
        return NULL;
    }
    args = json_object_get(*body, "arguments");
    t = json_object_get(*body, "timeout_ms");
    if (args != NULL && !json_is_object(args)) {
        gw_http_respond_error(req, 400, "bad_arguments", "arguments must be a JSON object", NULL);
        return NULL;
    }
    if (t != NULL && (!json_is_integer(t) || json_integer_value(t) <= 0)) {
        gw_http_respond_error(req, 400, "bad_arguments",
                              "timeout_ms must be a positive integer (milliseconds)", NULL);
        return NULL;
    }
    *timeout_ms = t ? (uint64_t)json_integer_value(t) : 0;
    if (args == NULL) {
        args = json_object();
        json_object_set_new(*body, "arguments", args);
    }
    return args;
}

static void start_call_error(struct gw_http_request *req, int rc)
{
    static const char *const retry[] = {"Retry-After: 1", NULL};

    if (rc == GW_SERVERS_E_NO_TOOL)
        gw_http_respond_error(req, 404, "unknown_tool", "no tool has this name", NULL);
    else if (rc == GW_SERVERS_E_NOT_READY || rc == GW_MCP_E_NOT_READY)
        gw_http_respond_error(req, 503, "server_not_ready",
                              "the tool's server has no ready instance right now", retry);
    else
        gw_http_respond_error(req, 502, "upstream_failed", gw_mcp_strerror(rc), NULL);
}

static void route_call(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    json_t *body = NULL, *args;
    uint64_t timeout_ms = 0;
    struct pending_call *pc;
    int rc;

    args = call_arguments(req, &body, &timeout_ms);
    if (args == NULL) {
        json_decref(body);
        return;
    }
    pc = gw_xcalloc(1, sizeof *pc);
    pc->req = req;
    pc->tool = gw_xstrdup(m->arg[0]);
    pc->started_ms = gw_now_ms();
    rc = gw_servers_call(ctx->servers, m->arg[0], args, timeout_ms, on_call_reply, pc, &pc->call);
    json_decref(body);
    if (rc != 0) {
        free(pc->tool);
        free(pc);
        start_call_error(req, rc);
        return;
    }
    gw_http_on_abort(req, on_call_abort, pc);
}

static const struct route routes[] = {
    {"GET", "/healthz", route_healthz},
    {"GET", "/readyz", route_readyz},
    {"GET", "/v1/problems", route_problems},
    {"GET", "/v1/servers", route_servers},
    {"GET", "/v1/tools", route_tools},
    {"GET", "/v1/tools/*", route_tool},
    {"POST", "/v1/tools/*/call", route_call},
    {"GET", "/v1/toolsets", route_toolsets},
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

/* Does `pattern` match the segments? Fills m->arg with '*' segments. */
static bool route_matches(const char *pattern, char **seg, size_t n, struct match *m)
{
    char buf[64], *pseg[MAX_SEGMENTS];
    size_t pn;

    snprintf(buf, sizeof buf, "%s", pattern);
    pn = split_path(buf, pseg);
    if (pn != n)
        return false;
    m->narg = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(pseg[i], "*") == 0)
            m->arg[m->narg++] = seg[i];
        else if (strcmp(pseg[i], seg[i]) != 0)
            return false;
    }
    return true;
}

static void dispatch(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    char *path = gw_xstrdup(req->path), *seg[MAX_SEGMENTS];
    size_t n = split_path(path, seg);
    struct match m;
    const char *allowed = NULL;

    for (size_t i = 0; n <= MAX_SEGMENTS && i < GW_ARRAY_SIZE(routes); i++) {
        if (!route_matches(routes[i].pattern, seg, n, &m))
            continue;
        if (strcmp(routes[i].method, req->method) == 0) {
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

/* Strips an optional ":port" from a Host value; returns the host length. */
static size_t host_length(const char *host)
{
    if (host[0] == '[') {
        const char *end = strchr(host, ']');
        return end ? (size_t)(end - host) + 1 : strlen(host);
    }
    const char *colon = strchr(host, ':');
    return colon ? (size_t)(colon - host) : strlen(host);
}

bool gw_api_host_is_loopback(const char *host)
{
    size_t n = host_length(host);
    char name[64];
    unsigned a, b, c, d;
    char tail;

    if (n == 0 || n >= sizeof name)
        return false;
    memcpy(name, host, n);
    name[n] = '\0';
    if (strcasecmp(name, "localhost") == 0 || strcmp(name, "[::1]") == 0)
        return true;
    return sscanf(name, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 && b < 256 &&
           c < 256 && d < 256;
}

bool gw_api_origin_allowed(const char *origin, const struct gw_gateway_config *gw)
{
    const char *rest = NULL;

    for (size_t i = 0; i < gw->nallowed_origins; i++) {
        if (strcasecmp(origin, gw->allowed_origins[i]) == 0)
            return true;
    }
    if (strncasecmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncasecmp(origin, "https://", 8) == 0)
        rest = origin + 8;
    return rest != NULL && strchr(rest, '/') == NULL && gw_api_host_is_loopback(rest);
}

/* Returns 0 when the request may go on, else answers it and returns -1. */
static int check_host_origin(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    const char *host = gw_http_header(req, "host");
    const char *origin = gw_http_header(req, "origin");

    if (host == NULL && !req->is_unix) {
        gw_http_respond_error(req, 400, "bad_request", "an HTTP/1.1 request needs a Host header",
                              NULL);
        return -1;
    }
    if (ctx->loopback && !req->is_unix && !gw_api_host_is_loopback(host)) {
        gw_http_respond_error(req, 403, "forbidden_host",
                              "the Host header does not name a loopback address "
                              "(DNS rebinding protection)",
                              NULL);
        return -1;
    }
    if (origin != NULL && !gw_api_origin_allowed(origin, &ctx->config->gateway)) {
        gw_http_respond_error(req, 403, "forbidden_origin",
                              "this Origin is neither loopback nor in gateway.allowed_origins",
                              NULL);
        return -1;
    }
    return 0;
}

static int check_auth(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    static const char *const challenge[] = {"WWW-Authenticate: Bearer realm=\"mcpgw\"", NULL};
    const char *token = ctx->config->gateway.auth_token;
    const char *given = gw_http_header(req, "authorization");

    if (token == NULL || strcmp(req->path, "/healthz") == 0)
        return 0;
    if (given != NULL && strncasecmp(given, "Bearer ", 7) == 0) {
        given += 7;
        if (gw_secure_equal(given, strlen(given), token, strlen(token)))
            return 0;
    }
    gw_http_respond_error(req, 401, "unauthorized",
                          "this route needs an Authorization: Bearer token", challenge);
    return -1;
}

void gw_api_handle(struct gw_http_request *req, void *data)
{
    struct gw_api_ctx *ctx = data;

    if (check_host_origin(ctx, req) != 0 || check_auth(ctx, req) != 0)
        return;
    dispatch(ctx, req);
}
