/* /mcp for 2026-07-28 clients: no initialize and no session. Every
 * request carries its protocol version, the client's capabilities and log
 * level in params._meta, and the HTTP headers repeat what the body says
 * (MCP-Protocol-Version, Mcp-Method, Mcp-Name). This file checks that
 * envelope, answers server/discover, and runs every other method through
 * mcp_methods.c on a session made for the one request: its dialog is the
 * one the request names (X-Mcpgw-Dialog, the URL /mcp/d/{dialog} or
 * _meta["io.mcpgw/dialog"]), shared with REST calls and 2025-era sessions
 * naming it, else its client's (mcp_dialog.c).
 *
 * Refusals follow the revision's transport rules: 400 with -32602 (the
 * envelope), -32020 (a header that disagrees with the body), -32022 (an
 * unsupported version, with data.supported), 404 with -32601 (a method
 * this revision does not have); every error carries the request's id. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/base64.h"
#include "gw/json_in.h"
#include "gw/log.h"
#include "gw/policy.h"
#include "gw/util.h"

/* Methods earlier revisions had and 2026-07-28 removed: 404 -32601. */
static const char *const removed[] = {
    "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", NULL};

bool gw_mcp__listed(const char *const *list, const char *s)
{
    for (size_t i = 0; s != NULL && list[i] != NULL; i++) {
        if (strcmp(list[i], s) == 0)
            return true;
    }
    return false;
}

/* What the envelope checks read of a POST body, from its tree
 * (read_envelope) or straight from its text (gw_mcp__modern_call_text).
 * Strings are NULL when absent or not strings; the has_ flags tell a
 * member of another kind from an absent one where the checks answer
 * differently. */
struct envelope {
    json_t *id, *params, *caps, *args, *info;
    const char *method, *jsonrpc, *version, *level, *dialog, *name, *uri;
    bool object, params_object, meta_object, has_version, has_level, has_dialog;
    bool call;      /* the method is tools/call */
    bool text_call; /* read by gw_mcp__modern_call_text: no params tree */
    struct mcp_fields {
        const char *version, *session, *method, *name;
    } h; /* the MCP header fields (read_mcp_fields) */
};

/* The MCP header fields in one pass: five lookups by name walked every
 * field each (~120 instructions a lookup among eight fields). The parser
 * lower-cased the names and refused a repeated one. */
static void read_mcp_fields(const struct gw_http_request *req, struct mcp_fields *f)
{
    *f = (struct mcp_fields){0};
    for (size_t i = 0; i < req->nheaders; i++) {
        const struct gw_http_header *h = &req->headers[i];
        const char **to = NULL;

        if (h->name_len < 8 || memcmp(h->name, "mcp-", 4) != 0)
            continue;
        switch (h->name_len) {
        case 8:
            to = memcmp(h->name, "mcp-name", 8) == 0 ? &f->name : NULL;
            break;
        case 10:
            to = memcmp(h->name, "mcp-method", 10) == 0 ? &f->method : NULL;
            break;
        case 14:
            to = memcmp(h->name, "mcp-session-id", 14) == 0 ? &f->session : NULL;
            break;
        case 20:
            to = memcmp(h->name, "mcp-protocol-version", 20) == 0 ? &f->version : NULL;
            break;
        }
        if (to != NULL)
            *to = h->value;
    }
}

void gw_mcp__members(json_t *obj, const struct gw_mcp_member *want, json_t **out[], size_t n)
{
    for (size_t i = 0; i < n; i++)
        *out[i] = NULL;
    GW_MCP_EACH_MEMBER(obj, it)
    {
        const char *key = json_object_iter_key(it);
        size_t key_len = json_object_iter_key_len(it);

        for (size_t i = 0; i < n; i++) {
            if (want[i].len == key_len && memcmp(want[i].key, key, key_len) == 0) {
                *out[i] = json_object_iter_value(it);
                break;
            }
        }
    }
}

/* The envelope of a parsed body: each object's members found in one pass
 * (~20 json_object_get hashed the long io.modelcontextprotocol/ keys). */
static void read_envelope(json_t *body, struct envelope *e)
{
    static const struct gw_mcp_member top[] = {GW_MCP_MEMBER("id"), GW_MCP_MEMBER("method"),
                                               GW_MCP_MEMBER("jsonrpc"), GW_MCP_MEMBER("params")};
    static const struct gw_mcp_member meta[] = {
        GW_MCP_MEMBER(MCP_META_VERSION), GW_MCP_MEMBER(MCP_META_CAPS),
        GW_MCP_MEMBER(MCP_META_LOG_LEVEL), GW_MCP_MEMBER(MCP_META_DIALOG),
        GW_MCP_MEMBER(MCP_META_INFO)};
    static const struct gw_mcp_member params[] = {GW_MCP_MEMBER("_meta"), GW_MCP_MEMBER("name"),
                                                  GW_MCP_MEMBER("arguments"), GW_MCP_MEMBER("uri")};
    json_t *id, *method, *jsonrpc, *par, *m, *version, *caps, *level, *dialog, *info, *name, *args,
        *uri;
    json_t **top_out[] = {&id, &method, &jsonrpc, &par};
    json_t **params_out[] = {&m, &name, &args, &uri};
    json_t **meta_out[] = {&version, &caps, &level, &dialog, &info};

    gw_mcp__members(body, top, top_out, GW_ARRAY_SIZE(top));
    gw_mcp__members(par, params, params_out, GW_ARRAY_SIZE(params));
    gw_mcp__members(m, meta, meta_out, GW_ARRAY_SIZE(meta));
    *e = (struct envelope){
        .id = id,
        .params = par,
        .caps = caps,
        .args = args,
        .info = info,
        .method = json_string_value(method),
        .call = json_is_string(method) && strcmp(json_string_value(method), "tools/call") == 0,
        .jsonrpc = json_string_value(jsonrpc),
        .version = json_string_value(version),
        .level = json_string_value(level),
        .dialog = json_string_value(dialog),
        .name = json_string_value(name),
        .uri = json_string_value(uri),
        .object = json_is_object(body),
        .params_object = json_is_object(par),
        .meta_object = json_is_object(m),
        .has_version = version != NULL,
        .has_level = level != NULL,
        .has_dialog = dialog != NULL,
    };
}

/* Is this POST a 2026-07-28 request (its _meta names a version, or its
 * MCP-Protocol-Version is not a 2025-era one)? An initialize without a
 * session never is. */
static bool is_modern(const struct envelope *e)
{
    const char *v = e->h.version;
    const char *method = e->method;

    if (method != NULL && strcmp(method, "initialize") == 0 && e->h.session == NULL &&
        (v == NULL || gw_mcp__version_supported(v)))
        return false; /* a 2025-era session begins, whatever its _meta holds */
    /* The envelope makes it one whatever the header says: a 2025-era
     * header is then a mismatch (-32020), not a request of no session. */
    if (e->has_version)
        return true;
    return v != NULL && !gw_mcp__version_supported(v);
}

/* An error answer: `status` with a JSON-RPC error for `id` (borrowed, may
 * be NULL); `data` is stolen (may be NULL). */
static void respond_error(struct gw_http_request *req, int status, json_t *id, int code,
                          const char *message, json_t *data)
{
    json_t *e = gw_mcp__error(id, code, message);

    if (data != NULL)
        json_object_set_new(json_object_get(e, "error"), "data", data);
    gw_http_respond_json(req, status, e, NULL);
}

int gw_mcp__modern_status(int code)
{
    switch (code) {
    case RPC_METHOD_NOT_FOUND:
        return 404;
    case RPC_PARSE_ERROR:
    case RPC_INVALID_REQUEST:
    case RPC_INVALID_PARAMS:
    case RPC_HEADER_MISMATCH:
    case RPC_MISSING_CAPABILITY:
    case RPC_UNSUPPORTED_VERSION:
        return 400;
    default:
        return 200;
    }
}

/* ---- headers ---- */

/* A header value as the revision defines it: surrounding whitespace is not
 * part of it, and "=?base64?…?=" carries UTF-8 the plain form cannot.
 * Returns a new string, or NULL when the encoded form does not decode. */
static const char *trimmed(const char *raw, size_t *len)
{
    while (*raw == ' ' || *raw == '\t')
        raw++;
    *len = strlen(raw);
    while (*len > 0 && (raw[*len - 1] == ' ' || raw[*len - 1] == '\t'))
        (*len)--;
    return raw;
}

static bool encoded(const char *v, size_t len)
{
    return len >= 12 && strncmp(v, "=?base64?", 9) == 0 && strncmp(v + len - 2, "?=", 2) == 0;
}

static char *header_value(const char *raw)
{
    size_t len;
    unsigned char *out;
    long n;

    raw = trimmed(raw, &len);
    if (!encoded(raw, len))
        return gw_xstrndup(raw, len);
    if ((len - 11) % 4 != 0) /* padding is not optional in this encoding */
        return NULL;
    out = gw_xmalloc(len);
    n = gw_base64_decode(raw + 9, len - 11, out);
    if (n < 0 || memchr(out, '\0', (size_t)n) != NULL) {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    return (char *)out;
}

/* Does a header field's value `raw` say `want`? A missing one (NULL) says
 * nothing. The plain form is compared where it stands. */
static bool says(const char *raw, const char *want)
{
    const char *plain;
    size_t len;
    char *v;
    bool same;

    if (raw == NULL)
        return false;
    plain = trimmed(raw, &len);
    if (!encoded(plain, len))
        return strlen(want) == len && memcmp(plain, want, len) == 0;
    v = header_value(raw);
    same = v != NULL && strcmp(v, want) == 0;
    free(v);
    return same;
}

/* The name a tools/call, prompts/get or resources/read names in its
 * params, which Mcp-Name must repeat; NULL for other methods. */
static const char *named(const char *method, const struct envelope *e)
{
    if (e->call || strcmp(method, "prompts/get") == 0)
        return e->name;
    if (strcmp(method, "resources/read") == 0)
        return e->uri;
    return NULL;
}

/* The envelope and the headers; 0, or -1 after answering. */
static int check_request(struct gw_http_request *req, json_t *id, const char *method,
                         const struct envelope *e)
{
    const char *version = e->version, *name;
    char *msg;

    if (!e->params_object || !e->meta_object || version == NULL || !json_is_object(e->caps)) {
        respond_error(req, 400, id, RPC_INVALID_PARAMS,
                      "Invalid params: 2026-07-28 requests carry params._meta with "
                      "\"" MCP_META_VERSION "\" (a string) and \"" MCP_META_CAPS "\" (an object)",
                      NULL);
        return -1;
    }
    if (!says(e->h.version, version)) {
        respond_error(req, 400, id, RPC_HEADER_MISMATCH,
                      "Header mismatch: MCP-Protocol-Version must be sent and equal "
                      "params._meta[\"" MCP_META_VERSION "\"]",
                      NULL);
        return -1;
    }
    if (strcmp(version, MCP_MODERN_VERSION) != 0) {
        msg = gw_xasprintf("Unsupported protocol version %s: this endpoint serves %s without a "
                           "session, and 2025-11-25 and earlier through initialize",
                           version, MCP_MODERN_VERSION);
        respond_error(
            req, 400, id, RPC_UNSUPPORTED_VERSION, msg,
            json_pack("{s:[s], s:s}", "supported", MCP_MODERN_VERSION, "requested", version));
        free(msg);
        return -1;
    }
    if (!says(e->h.method, method)) {
        respond_error(req, 400, id, RPC_HEADER_MISMATCH,
                      "Header mismatch: Mcp-Method must be sent and equal the method", NULL);
        return -1;
    }
    name = named(method, e);
    if (name != NULL && !says(e->h.name, name)) {
        respond_error(req, 400, id, RPC_HEADER_MISMATCH,
                      "Header mismatch: Mcp-Name must be sent and equal params.name (params.uri "
                      "for resources/read)",
                      NULL);
        return -1;
    }
    if (e->has_level && gw_mcp_log_rank(e->level) == 0) {
        respond_error(req, 400, id, RPC_INVALID_PARAMS,
                      "Invalid params: _meta[\"" MCP_META_LOG_LEVEL
                      "\"] must be one of debug, info, notice, warning, error, critical, alert, "
                      "emergency",
                      NULL);
        return -1;
    }
    return 0;
}

/* Mcp-Param-{Name} for each argument whose property in the tool's schema
 * says "x-mcp-header": "Name": a value the body holds must be in the
 * header too, so that what an HTTP hop routes on is what the tool gets.
 * 0, or -1 after answering. */
static int check_param_headers(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *id,
                               const struct envelope *e)
{
    const struct gw_cat_tool *t;
    json_t *args = e->args, *prop, *v;
    const char *key;

    if (!e->call || e->name == NULL) /* no name: tools/call answers -32602 */
        return 0;
    t = gw_policy_lookup(ms->servers, req->client, e->name);
    if (t == NULL || !t->param_headers)
        return 0;
    json_object_foreach(json_object_get(t->input_schema, "properties"), key, prop)
    {
        const char *h = json_string_value(json_object_get(prop, "x-mcp-header"));
        char want[32], *hname, *msg;
        bool ok;

        v = json_object_get(args, key);
        if (h == NULL || v == NULL || json_is_null(v))
            continue;
        if (json_is_integer(v))
            snprintf(want, sizeof want, "%lld", (long long)json_integer_value(v));
        else if (json_is_boolean(v))
            snprintf(want, sizeof want, "%s", json_is_true(v) ? "true" : "false");
        else if (!json_is_string(v))
            continue;
        hname = gw_xasprintf("mcp-param-%s", h);
        ok = says(gw_http_header(req, hname), json_is_string(v) ? json_string_value(v) : want);
        free(hname);
        if (ok)
            continue;
        msg = gw_xasprintf("Header mismatch: Mcp-Param-%s must be sent and equal arguments.%s", h,
                           key);
        respond_error(req, 400, id, RPC_HEADER_MISMATCH, msg, NULL);
        free(msg);
        return -1;
    }
    return 0;
}

/* ---- the request's session ---- */

static struct gw_mcp_session *session_new(struct gw_mcp_server *ms, const char *dialog,
                                          const struct envelope *e)
{
    size_t dialog_len = strnlen(dialog, GW_DIALOG_MAX);
    struct gw_mcp_session *s = gw_xcalloc(1, sizeof *s + dialog_len + 1);
    json_t *caps = e->caps;
    const char *level = e->level;

    s->ms = ms;
    s->modern = true;
    memcpy(s->dialog, dialog, dialog_len);
    gw_strlcpy(s->version, MCP_MODERN_VERSION, sizeof s->version);
    gw_strlcpy(s->log_level, level ? level : "", sizeof s->log_level);
    /* most clients declare none: three lookups of nothing spared */
    if (json_object_size(caps) != 0) {
        s->caps = gw_mcp_caps_of(caps);
        gw_mcp__client_caps(caps, &s->url_elicitation);
    }
    s->next = ms->modern;
    if (ms->modern != NULL)
        ms->modern->prev = s;
    ms->modern = s;
    return s;
}

void gw_mcp__modern_free(struct gw_mcp_session *s)
{
    struct gw_mcp_server *ms = s->ms;

    if (s->prev != NULL)
        s->prev->next = s->next;
    else if (ms != NULL)
        ms->modern = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    free(s);
}

void gw_mcp__modern_close_all(struct gw_mcp_server *ms)
{
    while (ms->modern != NULL) {
        struct gw_mcp_session *s = ms->modern;
        struct gw_mcp_exchange *x = s->calls != NULL ? s->calls->x : NULL;

        ms->modern = s->next;
        s->prev = s->next = NULL;
        s->ms = NULL; /* the server goes first: the last outcome frees s without it */
        if (x == NULL)
            continue;
        x->waiting++; /* every call of a request's session is its exchange's */
        gw_mcp__calls_cancel(s, "the gateway is stopping");
        gw_mcp__exchange_done(x);
    }
}

/* ---- methods of this revision ---- */

json_t *gw_mcp__discover_result(struct gw_mcp_server *ms)
{
    json_t *init = gw_mcp__initialize_result(ms, MCP_MODERN_VERSION);
    json_t *r = json_pack(
        "{s:s, s:[s], s:O, s:O, s:i, s:s, s:{s:O}}", "resultType", "complete", "supportedVersions",
        MCP_MODERN_VERSION, "capabilities", json_object_get(init, "capabilities"), "instructions",
        json_object_get(init, "instructions"), "ttlMs", MCP_LIST_TTL_MS, "cacheScope", "public",
        "_meta", MCP_META_SERVER, json_object_get(init, "serverInfo"));

    /* Resource updates reach 2026-07-28 clients through
     * subscriptions/listen, which takes no resourceSubscriptions here. */
    json_object_del(json_object_get(json_object_get(r, "capabilities"), "resources"), "subscribe");
    json_decref(init);
    return r;
}

json_t *gw_mcp__hop_params(json_t *params)
{
    json_t *out = json_copy(params), *meta = json_object_get(params, "_meta"), *kept, *v;
    const char *key;

    /* the answers to the gateway's own rounds, not the upstream's */
    json_object_del(out, "inputResponses");
    json_object_del(out, "requestState");
    if (!json_is_object(meta))
        return out;
    kept = json_object();
    json_object_foreach(meta, key, v)
    {
        if (strncmp(key, "io.modelcontextprotocol/", 24) != 0 && strncmp(key, "io.mcpgw/", 9) != 0)
            json_object_set(kept, key, v);
    }
    if (json_object_size(kept) > 0)
        json_object_set_new(out, "_meta", kept);
    else {
        json_object_del(out, "_meta");
        json_decref(kept);
    }
    return out;
}

json_t *gw_mcp__modern_removed(json_t *id, const char *method)
{
    char *msg;
    json_t *e;

    if (!gw_mcp__listed(removed, method))
        return NULL;
    msg = gw_xasprintf("Method not found: %s is not part of %s (2025-11-25 sessions have it)",
                       method, MCP_MODERN_VERSION);
    e = gw_mcp__error(id, RPC_METHOD_NOT_FOUND, msg);
    free(msg);
    return e;
}

/* ---- POST ---- */

/* A checked request on a session made for it, in `dialog`. */
static void run(struct gw_mcp_server *ms, struct gw_http_request *req, const struct envelope *e,
                json_t *id, const char *dialog)
{
    struct gw_mcp_session *s = session_new(ms, dialog, e);
    struct gw_mcp_exchange *x = gw_mcp__exchange_new(req, false);

    gw_strlcpy(s->client, req->client, sizeof s->client);
    x->own = s;
    x->method = gw_xstrdup(e->method);
    gw_mcp__exchange_watch(x);
    if (e->text_call)
        gw_mcp__dispatch_call(s, x, id, e->name, e->args);
    else
        gw_mcp__dispatch_request(s, x, e->method, id, e->params);
    gw_mcp__exchange_done(x);
}

/* A request whose envelope says it is of this revision. */
static void serve(struct gw_mcp_server *ms, struct gw_http_request *req, const struct envelope *e)
{
    json_t *id = e->id;
    const char *method = e->method;
    char dialog[GW_DIALOG_MAX + 1];

    if (!json_is_string(id) && !json_is_integer(id))
        id = NULL;
    if (!e->object || e->jsonrpc == NULL || strcmp(e->jsonrpc, "2.0") != 0 || method == NULL) {
        respond_error(req, 400, id, RPC_INVALID_REQUEST,
                      "Invalid Request: one JSON-RPC 2.0 request or notification per POST", NULL);
        return;
    }
    if (e->id == NULL) { /* a notification: nothing to do over HTTP */
        gw_http_respond(req, 202, NULL, NULL, 0, NULL);
        return;
    }
    if (id == NULL) {
        respond_error(req, 400, NULL, RPC_INVALID_REQUEST,
                      "Invalid Request: the id must be a string or an integer", NULL);
        return;
    }
    if (check_request(req, id, method, e) != 0 || check_param_headers(ms, req, id, e) != 0 ||
        gw_mcp__request_dialog(ms, req, id, e->has_dialog, e->dialog, e->info, dialog) != 0)
        return;
    /* 2025-era sessions log theirs when they start; these have no start */
    if (gw_log_enabled(GW_LOG_DEBUG))
        gw_log(GW_LOG_DEBUG, "mcp request", "version", MCP_MODERN_VERSION, "method", method,
               "dialog", dialog[0] ? dialog : NULL, "peer", req->peer, NULL);
    if (!e->call && strcmp(method, "subscriptions/listen") == 0) {
        gw_mcp__listen(ms, req, id, e->params, dialog[0] ? dialog : NULL);
        return;
    }
    run(ms, req, e, id, dialog);
}

bool gw_mcp__modern_post(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *body)
{
    struct envelope e;

    read_envelope(body, &e);
    read_mcp_fields(req, &e.h);
    if (!is_modern(&e))
        return false;
    serve(ms, req, &e);
    return true;
}

/* A tools/call read from the body's text: the envelope's strings in
 * place, and as trees only the id, arguments, clientCapabilities and
 * clientInfo; no tree of params either (gw_mcp__dispatch_call). ~5,000
 * instructions fewer than the body's whole tree. Any other shape
 * (another method, another member such as a progressToken or a retry's
 * fields, a member of another kind, an error) is left to the parse. */
enum {
    F_JSONRPC,
    F_ID,
    F_METHOD,
    F_PARAMS,
    F_NAME,
    F_ARGS,
    F_META,
    F_VERSION,
    F_CAPS,
    F_LEVEL,
    F_DIALOG,
    F_INFO,
    F_COUNT
};

static const struct gw_json_field call_meta[] = {
    GW_JSON_FIELD(MCP_META_VERSION, GW_JSON_STRING, F_VERSION),
    GW_JSON_FIELD(MCP_META_CAPS, GW_JSON_TREE, F_CAPS),
    GW_JSON_FIELD(MCP_META_LOG_LEVEL, GW_JSON_STRING, F_LEVEL),
    GW_JSON_FIELD(MCP_META_DIALOG, GW_JSON_STRING, F_DIALOG),
    GW_JSON_FIELD(MCP_META_INFO, GW_JSON_TREE, F_INFO),
};
static const struct gw_json_field call_params[] = {
    GW_JSON_FIELD("name", GW_JSON_STRING, F_NAME),
    GW_JSON_FIELD("arguments", GW_JSON_TREE, F_ARGS),
    GW_JSON_FIELD_OBJECT("_meta", F_META, call_meta),
};
static const struct gw_json_field call_body[] = {
    GW_JSON_FIELD("jsonrpc", GW_JSON_STRING, F_JSONRPC),
    GW_JSON_FIELD("id", GW_JSON_TREE, F_ID),
    GW_JSON_FIELD("method", GW_JSON_STRING, F_METHOD),
    GW_JSON_FIELD_OBJECT("params", F_PARAMS, call_params),
};

bool gw_mcp__modern_call_text(struct gw_mcp_server *ms, struct gw_http_request *req)
{
    struct gw_json_slot v[F_COUNT];
    char room[1024];
    struct mcp_fields h;
    struct envelope e;

    /* a modern tools/call says so in Mcp-Method: other requests (2025
     * sessions' among them) are not read twice */
    read_mcp_fields(req, &h);
    if (h.method == NULL || strcmp(h.method, "tools/call") != 0 ||
        gw_json_read_fields(req->body, req->body_len, call_body, GW_ARRAY_SIZE(call_body), v,
                            F_COUNT, room, sizeof room) != 0)
        return false;
    e = (struct envelope){
        .h = h,
        .id = v[F_ID].tree,
        .caps = v[F_CAPS].tree,
        .args = v[F_ARGS].tree,
        .info = v[F_INFO].tree,
        .method = v[F_METHOD].str,
        .jsonrpc = v[F_JSONRPC].str,
        .version = v[F_VERSION].str,
        .level = v[F_LEVEL].str,
        .dialog = v[F_DIALOG].str,
        .name = v[F_NAME].str,
        .object = true,
        .params_object = v[F_PARAMS].seen,
        .meta_object = v[F_META].seen,
        .has_version = v[F_VERSION].seen,
        .has_level = v[F_LEVEL].seen,
        .has_dialog = v[F_DIALOG].seen,
        .call = true, /* checked below */
        .text_call = true,
    };
    if (e.method == NULL || strcmp(e.method, "tools/call") != 0 || !is_modern(&e)) {
        gw_json_slots_release(v, F_COUNT);
        return false;
    }
    if (gw_log_enabled(GW_LOG_DEBUG)) /* which of the two paths took it */
        gw_log(GW_LOG_DEBUG, "mcp call read from its text", "peer", req->peer, NULL);
    serve(ms, req, &e);
    gw_json_slots_release(v, F_COUNT);
    return true;
}
