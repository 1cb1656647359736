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
#include "gw/audit.h"
#include "gw/dispatch.h"
#include "gw/json_in.h"
#include "gw/lease.h"
#include "gw/log.h"
#include "gw/policy.h"
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
    bool admin; /* for admin clients only (gw_policy_admin) */
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
static json_t *gateway_json(const struct gw_api_ctx *ctx, const struct gw_http_request *req)
{
    time_t now = time(NULL);
    json_t *g =
        json_pack("{s:s, s:o, s:I, s:s?, s:o, s:b, s:O?}", "version", GW_VERSION, "startedAt",
                  rfc3339(ctx->started_at), "uptimeSeconds", (json_int_t)(now - ctx->started_at),
                  "configPath", ctx->config ? ctx->config->path : NULL, "loadedAt",
                  rfc3339(ctx->loaded_at), "ready", ctx->ready, "lastReload", ctx->last_reload);

    /* who asks, for the page: its admin actions are an admin's */
    json_object_set_new(g, "client", req->client[0] ? json_string(req->client) : json_null());
    json_object_set_new(g, "admin", json_boolean(gw_policy_admin(ctx->config, req->client)));
    return g;
}

/* Is the leases' dialog id `id` the caller's own? Its client's name is
 * left in `owner` ("" for `default` or none), and *shown is the dialog as
 * its client named it. */
static bool own_dialog(const struct gw_http_request *req, const char *id, char *owner,
                       const char **shown)
{
    *shown = gw_dialog_unscope(id, owner);
    if (owner[0] == '\0')
        return req->client[0] == '\0' || strcmp(req->client, GW_CLIENT_DEFAULT) == 0;
    return strcmp(owner, req->client) == 0;
}

/* GET /v1/dialogs as the caller may see it: its own dialogs as it named
 * them; an admin's, every client's with its `client`. */
static void dialogs_view(const struct gw_api_ctx *ctx, const struct gw_http_request *req,
                         json_t *list)
{
    bool admin = gw_policy_admin(ctx->config, req->client);
    char owner[GW_DIALOG_PART_MAX + 1];
    const char *shown;
    json_t *d;

    for (size_t i = 0; (d = json_array_get(list, i)) != NULL;) {
        char *id = gw_xstrdup(json_string_value(json_object_get(d, "dialog")));
        if (own_dialog(req, id, owner, &shown) || admin) {
            json_object_set_new(d, "dialog", json_string(shown));
            if (ctx->config->nclients > 0)
                json_object_set_new(d, "client", json_string(owner[0] ? owner : GW_CLIENT_DEFAULT));
            i++;
        } else {
            json_array_remove(list, i);
        }
        free(id);
    }
}

/* GET /v1/servers for a client that is no admin: its servers only, and of
 * their instances' dialogs its own only. */
static void servers_view(const struct gw_api_ctx *ctx, const struct gw_http_request *req,
                         json_t *list)
{
    char owner[GW_DIALOG_PART_MAX + 1];
    const char *shown;
    json_t *srv, *inst;
    size_t k;

    if (gw_policy_admin(ctx->config, req->client))
        return;
    for (size_t i = 0; (srv = json_array_get(list, i)) != NULL;) {
        if (!gw_policy_server(ctx->config, req->client,
                              json_string_value(json_object_get(srv, "id")))) {
            json_array_remove(list, i);
            continue;
        }
        json_array_foreach(json_object_get(srv, "instances"), k, inst)
        {
            char *id;
            if (json_object_get(inst, "dialog") == NULL)
                continue;
            id = gw_xstrdup(json_string_value(json_object_get(inst, "dialog")));
            if (own_dialog(req, id, owner, &shown))
                json_object_set_new(inst, "dialog", json_string(shown));
            else
                json_object_del(inst, "dialog");
            free(id);
        }
        i++;
    }
}

static void route_servers(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    json_t *body = gw_servers_json(ctx->servers);

    servers_view(ctx, req, json_object_get(body, "servers"));
    json_object_set_new(body, "gateway", gateway_json(ctx, req));
    gw_http_respond_json(req, 200, body, NULL);
}

static void route_tools(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_tools(ctx, req);
}

static void route_tool(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_tool(ctx, req, m->arg[0]);
}

static void route_toolsets(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_toolsets(ctx, req);
}

static void route_prompts(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_prompts(ctx, req);
}

static void route_resources(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_resources(ctx, req);
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

/* The dialog of the body or header, scoped by the caller's client. */
static int scoped_dialog(struct gw_http_request *req, struct gw_api_body *b)
{
    if (dialog_header(req, b) != 0)
        return -1;
    if (b->has_dialog)
        gw_dialog_scope(req->client, b->dialog, b->dialog);
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
    return scoped_dialog(req, b);
}

static void route_call(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    gw_api__route_call(ctx, req, m->arg[0]);
}

/* ---- metrics ---- */

/* The audit log's lines written and dropped, after `more` (taken). */
static char *audit_metrics(const struct gw_api_ctx *ctx, char *more)
{
    char *out;

    if (!gw_audit_on(ctx->audit))
        return more;
    out = gw_xasprintf("%s# HELP mcpgw_audit_lines_total Audit log lines written and dropped (a "
                       "write failed, or the queue was full)\n"
                       "# TYPE mcpgw_audit_lines_total counter\n"
                       "mcpgw_audit_lines_total{result=\"written\"} %llu\n"
                       "mcpgw_audit_lines_total{result=\"dropped\"} %llu\n",
                       more, (unsigned long long)gw_audit_written(ctx->audit),
                       (unsigned long long)gw_audit_dropped(ctx->audit));
    free(more);
    return out;
}

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
    char *text, *clients, *all;

    gw_dispatch_relay_stats(ctx->servers, &relay);
    if (ctx->rounds != NULL)
        gw_rounds_stats(ctx->rounds, &rounds);
    text = gw_metrics_render(ctx->metrics, &v);
    clients = audit_metrics(ctx, gw_policy_metrics(ctx->servers));
    all = gw_xasprintf("%s%s", text, clients);
    gw_http_respond(req, 200, "text/plain; version=0.0.4; charset=utf-8", all, strlen(all), NULL);
    free(all);
    free(clients);
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

/* An event as a client that is no admin sees it: of its servers only, a
 * lease of its own dialogs only (as it named them), a reload without the
 * other servers' names. */
static json_t *event_view(void *data, const struct gw_http_request *req, const char *type,
                          json_t *event)
{
    const struct gw_api_ctx *ctx = data;
    const char *server = json_string_value(json_object_get(event, "server"));
    const char *dialog = json_string_value(json_object_get(event, "dialog"));
    char owner[GW_DIALOG_PART_MAX + 1];
    const char *shown;
    json_t *copy;

    if (strcmp(type, "reload") == 0)
        return json_pack("{s:O?}", "ok", json_object_get(event, "ok"));
    if (server != NULL && !gw_policy_server(ctx->config, req->client, server))
        return NULL;
    if (dialog == NULL)
        return json_incref(event);
    if (!own_dialog(req, dialog, owner, &shown))
        return NULL;
    copy = json_copy(event);
    json_object_set_new(copy, "dialog", json_string(shown));
    return copy;
}

static void route_events(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    json_t *snap = gw_servers_json(ctx->servers);
    json_t *dialogs = gw_servers_dialogs_json(ctx->servers);

    if (gw_policy_admin(ctx->config, req->client)) {
        json_object_update_new(snap, dialogs);
        gw_events_attach(ctx->events, req, snap);
        return;
    }
    servers_view(ctx, req, json_object_get(snap, "servers"));
    dialogs_view(ctx, req, json_object_get(dialogs, "dialogs"));
    json_object_update_new(snap, dialogs);
    gw_events_attach_view(ctx->events, req, snap, event_view, ctx);
}

/* ---- dialogs ---- */

static void route_dialogs(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    json_t *j = gw_servers_dialogs_json(ctx->servers);

    dialogs_view(ctx, req, json_object_get(j, "dialogs"));
    gw_http_respond_json(req, 200, j, NULL);
}

static void route_release(struct gw_api_ctx *ctx, struct gw_http_request *req, struct match *m)
{
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1], canon[GW_DIALOG_MAX + 1];
    char *given =
        m->narg == 2 ? gw_xasprintf("%s/%s", m->arg[0], m->arg[1]) : gw_xstrdup(m->arg[0]);
    struct gw_api_body b = {0};
    const char *id, *owner;
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
    /* an admin names another client's dialog with its client */
    owner = json_string_value(json_object_get(b.json, "client"));
    if (json_object_get(b.json, "client") != NULL && owner == NULL) {
        json_decref(b.json);
        gw_api__bad_request(req, "bad_arguments", "client must be a string");
        return;
    }
    if (owner != NULL && strcmp(owner, req->client) != 0 &&
        !gw_policy_admin(ctx->config, req->client)) {
        json_decref(b.json);
        gw_http_respond_error(req, 403, "forbidden", "only an admin client names another client",
                              NULL);
        return;
    }
    gw_dialog_scope(owner != NULL ? owner : req->client, canon, canon);
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
    char *given = gw_xasprintf("%s/%s", m->arg[0], m->arg[1]), dir_root[GW_DIALOG_MAX + 1];
    char *path = gw_api__query_param(req->query, "path");
    int fd = -1;
    struct stat st;
    char *buf = NULL;

    if (gw_dialog_parse(given, root, self, canon) == 0 && path != NULL && gw_percent_decode(path, true) == 0)
        gw_dialog_scope(req->client, root, dir_root), /* the caller's own artifacts */
            fd = gw_artifact_open(ctx->config->gateway.artifacts_dir, dir_root, self, path);
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
    {"GET", "/healthz", route_healthz, false},
    {"GET", "/readyz", route_readyz, false},
    {"GET", "/v1/problems", route_problems, false},
    {"GET", "/v1/servers", route_servers, false},
    {"GET", "/v1/servers/*/authorize", route_authorize, true},
    {"POST", "/v1/servers/*/authorize", route_authorize_post, true},
    {"DELETE", "/v1/servers/*/authorize", route_deauthorize, true},
    {"GET", "/oauth/callback", route_callback, false},
    {"GET", "/v1/tools", route_tools, false},
    {"GET", "/v1/tools/*", route_tool, false},
    {"POST", "/v1/tools/*/call", route_call, false},
    {"GET", "/v1/toolsets", route_toolsets, false},
    {"GET", "/v1/prompts", route_prompts, false},
    {"GET", "/v1/resources", route_resources, false},
    {"GET", "/v1/dialogs", route_dialogs, false},
    {"POST", "/v1/reload", route_reload, true},
    {"GET", "/v1/events", route_events, false},
    {"GET", "/metrics", route_metrics, true},
    {"POST", "/v1/dialogs/*/release", route_release, false},
    {"POST", "/v1/dialogs/*/*/release", route_release, false},
    {"GET", "/api/dialogs/*/*/artifact", route_artifact, false},
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
            if (routes[i].admin && !gw_policy_admin(ctx->config, req->client))
                gw_http_respond_error(req, 403, "forbidden", "this route is for admin clients",
                                      NULL);
            else if (strcmp(req->method, "POST") == 0 && !gw_http_body_is_json(req))
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
