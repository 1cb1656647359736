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
#include "gw/json_out.h"
#include "gw/log.h"
#include "gw/util.h"
#include "gw/version.h"

/* Methods earlier revisions had and 2026-07-28 removed: 404 -32601. */
static const char *const removed[] = {
    "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", NULL};

static bool listed(const char *const *list, const char *s)
{
    for (size_t i = 0; s != NULL && list[i] != NULL; i++) {
        if (strcmp(list[i], s) == 0)
            return true;
    }
    return false;
}

/* The members of a POST body that the envelope checks read, found in one
 * pass over each object (gw_mcp__members): a request read them ~20 times
 * with json_object_get (~3,800 instructions). */
struct envelope {
    json_t *id, *method, *jsonrpc, *params, *meta, *version, *caps, *level;
    json_t *name, *args, *uri, *dialog, *info; /* params' and _meta's, for the checks */
};

/* Each member of `obj` in order, as json_object_keylen_foreach walks them
 * without its json_object_key_to_iter per step (~40 instructions a member). */
#define EACH_MEMBER(obj, it)                                                                       \
    for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it))

void gw_mcp__members(json_t *obj, const struct gw_mcp_member *want, json_t **out[], size_t n)
{
    for (size_t i = 0; i < n; i++)
        *out[i] = NULL;
    EACH_MEMBER(obj, it)
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
    json_t **top_out[] = {&e->id, &e->method, &e->jsonrpc, &e->params};
    json_t **params_out[] = {&e->meta, &e->name, &e->args, &e->uri};
    json_t **meta_out[] = {&e->version, &e->caps, &e->level, &e->dialog, &e->info};

    gw_mcp__members(body, top, top_out, GW_ARRAY_SIZE(top));
    gw_mcp__members(e->params, params, params_out, GW_ARRAY_SIZE(params));
    gw_mcp__members(e->meta, meta, meta_out, GW_ARRAY_SIZE(meta));
}

/* Is this POST a 2026-07-28 request (its _meta names a version, or its
 * MCP-Protocol-Version is not a 2025-era one)? An initialize without a
 * session never is. */
static bool is_modern(const struct gw_http_request *req, const struct envelope *e)
{
    const char *v = gw_http_header(req, "mcp-protocol-version");
    const char *method = json_string_value(e->method);

    if (method != NULL && strcmp(method, "initialize") == 0 &&
        gw_http_header(req, "mcp-session-id") == NULL &&
        (v == NULL || gw_mcp__version_supported(v)))
        return false; /* a 2025-era session begins, whatever its _meta holds */
    /* The envelope makes it one whatever the header says: a 2025-era
     * header is then a mismatch (-32020), not a request of no session. */
    if (e->version != NULL)
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

/* Does header `name` say `want`? A missing header says nothing. The
 * plain form is compared where it stands. */
static bool header_says(const struct gw_http_request *req, const char *name, const char *want)
{
    const char *raw = gw_http_header(req, name), *plain;
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
    if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
        return json_string_value(e->name);
    if (strcmp(method, "resources/read") == 0)
        return json_string_value(e->uri);
    return NULL;
}

/* The envelope and the headers; 0, or -1 after answering. */
static int check_request(struct gw_http_request *req, json_t *id, const char *method,
                         const struct envelope *e)
{
    json_t *params = e->params, *meta = e->meta, *caps = e->caps, *level = e->level;
    const char *version = json_string_value(e->version);
    const char *name;
    char *msg;

    if (!json_is_object(params) || !json_is_object(meta) || version == NULL ||
        !json_is_object(caps)) {
        respond_error(req, 400, id, RPC_INVALID_PARAMS,
                      "Invalid params: 2026-07-28 requests carry params._meta with "
                      "\"" MCP_META_VERSION "\" (a string) and \"" MCP_META_CAPS "\" (an object)",
                      NULL);
        return -1;
    }
    if (!header_says(req, "mcp-protocol-version", version)) {
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
    if (!header_says(req, "mcp-method", method)) {
        respond_error(req, 400, id, RPC_HEADER_MISMATCH,
                      "Header mismatch: Mcp-Method must be sent and equal the method", NULL);
        return -1;
    }
    name = named(method, e);
    if (name != NULL && !header_says(req, "mcp-name", name)) {
        respond_error(req, 400, id, RPC_HEADER_MISMATCH,
                      "Header mismatch: Mcp-Name must be sent and equal params.name (params.uri "
                      "for resources/read)",
                      NULL);
        return -1;
    }
    if (level != NULL && gw_mcp_log_rank(json_string_value(level)) == 0) {
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
                               const char *method, const struct envelope *e)
{
    const struct gw_cat_tool *t;
    json_t *args = e->args, *prop, *v;
    const char *key;

    if (strcmp(method, "tools/call") != 0)
        return 0;
    t = gw_catalog_lookup(gw_servers_catalog(ms->servers), json_string_value(e->name));
    if (t == NULL)
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
        ok = header_says(req, hname, json_is_string(v) ? json_string_value(v) : want);
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
    struct gw_mcp_session *s = gw_xcalloc(1, sizeof *s);
    json_t *caps = e->caps;
    const char *level = json_string_value(e->level);

    s->ms = ms;
    s->modern = true;
    gw_strlcpy(s->dialog, dialog, sizeof s->dialog);
    gw_strlcpy(s->version, MCP_MODERN_VERSION, sizeof s->version);
    gw_strlcpy(s->log_level, level ? level : "", sizeof s->log_level);
    s->client_caps = json_incref(caps);
    /* most clients declare none: three lookups of nothing spared */
    s->caps = json_object_size(caps) != 0 ? gw_mcp_caps_of(caps) : 0;
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
    json_decref(s->client_caps);
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

/* The results of this revision say what they are, who answered, and how
 * long they may be kept. `method` is the request's; `result` is changed in
 * place (it belongs to the reply). */
/* The gateway's serverInfo, built once and shared by every result (only
 * ever serialised): a json_pack per answer cost ~2,500 instructions. */
static json_t *gateway_info(void)
{
    static json_t *info;

    if (info == NULL)
        info = json_pack("{s:s, s:s, s:s}", "name", "mcpgw", "title", "mcpgw MCP gateway",
                         "version", GW_VERSION);
    return info;
}

void gw_mcp__modern_decorate(const char *method, json_t *result)
{
    static const char *const lists[] = {"tools/list", "prompts/list", "resources/list",
                                        "resources/templates/list", NULL};
    json_t *meta = json_object_get(result, "_meta");
    const char *type;

    if (!json_is_object(result))
        return;
    if (json_object_get(result, "resultType") == NULL)
        json_object_set_new(result, "resultType", json_string("complete"));
    /* The result's members may be an upstream's objects, shared: _meta is
     * replaced by a copy before it changes. */
    meta = json_is_object(meta) ? json_copy(meta) : json_object();
    json_object_set_new(result, "_meta", meta);
    /* the client's server is the gateway, whoever answered behind it */
    json_object_set(meta, MCP_META_SERVER, gateway_info());
    type = json_string_value(json_object_get(result, "resultType"));
    if (type == NULL || strcmp(type, "complete") != 0) /* the gateway's own input round */
        return;
    if (listed(lists, method) && json_object_get(result, "cacheScope") == NULL) {
        json_object_set_new(result, "ttlMs", json_integer(MCP_LIST_TTL_MS));
        json_object_set_new(result, "cacheScope", json_string("public"));
    } else if (strcmp(method, "resources/read") == 0) {
        json_object_set_new(result, "ttlMs", json_integer(MCP_READ_TTL_MS));
        json_object_set_new(result, "cacheScope", json_string("private"));
    }
}

/* The gateway's serverInfo as text, rendered at the first answer and kept
 * for the life of the process, like gateway_info()'s tree it comes from. */
static const char *gateway_info_text(size_t *len)
{
    static char *text;
    static size_t n;

    if (text == NULL)
        text = gw_json_dump(gateway_info(), &n);
    *len = n;
    return text;
}

static void put_key(struct gw_jbuf *b, bool *first, const char *lit, size_t n)
{
    if (!*first)
        gw_jbuf_lit(b, ",");
    *first = false;
    gw_jbuf_put(b, lit, n);
}

/* put_key for a literal: its length is counted by the compiler */
#define PUT_KEY_LIT(b, first, lit) put_key((b), (first), lit, sizeof(lit) - 1)

#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), lit, (n)) == 0)

/* The result's _meta as the tree path leaves it: the upstream's members in
 * their order, "mcpgw/lease" and the serverInfo replaced where they stand,
 * else added in that order. 0, or -1 (not UTF-8). */
static int put_meta(struct gw_jbuf *b, json_t *meta, json_t *lease)
{
    bool first = true, had_lease = false, had_info = false;
    size_t key_len, info_len;
    const char *key, *info = gateway_info_text(&info_len);
    json_t *v;

    gw_jbuf_lit(b, "{");
    EACH_MEMBER(meta, it)
    {
        key = json_object_iter_key(it);
        key_len = json_object_iter_key_len(it);
        v = json_object_iter_value(it);
        if (!first)
            gw_jbuf_lit(b, ",");
        first = false;
        if (gw_jbuf_string(b, key, key_len) != 0)
            return -1;
        gw_jbuf_lit(b, ":");
        if (KEY_IS(key, key_len, MCP_META_SERVER)) {
            had_info = true;
            gw_jbuf_put(b, info, info_len);
            continue;
        }
        if (lease != NULL && KEY_IS(key, key_len, "mcpgw/lease")) {
            had_lease = true;
            v = lease;
        }
        if (gw_jbuf_value(b, v) != 0)
            return -1;
    }
    if (lease != NULL && !had_lease) {
        PUT_KEY_LIT(b, &first, "\"mcpgw/lease\":");
        if (gw_jbuf_value(b, lease) != 0)
            return -1;
    }
    if (!had_info) {
        PUT_KEY_LIT(b, &first, "\"" MCP_META_SERVER "\":");
        gw_jbuf_put(b, info, info_len);
    }
    gw_jbuf_lit(b, "}");
    return 0;
}

/* The tree path: gw_mcp__call_reply's copy of the result (the lease in
 * _meta), gw_mcp__modern_decorate, gw_json_dump. Here the upstream's
 * members are written where they stand and only the envelope and _meta
 * are the gateway's text, which spares ~12,000 instructions per call. */
char *gw_mcp__modern_call_answer(json_t *id, json_t *result, json_t *lease, size_t *len)
{
    static const struct gw_mcp_member keys[] = {GW_MCP_MEMBER("resultType"),
                                                GW_MCP_MEMBER("_meta")};
    json_t *type, *meta, **out[] = {&type, &meta}, *v;
    const char *key, *t;
    struct gw_jbuf b = {0};
    bool first = true;
    size_t key_len;

    gw_mcp__members(result, keys, out, GW_ARRAY_SIZE(keys));
    t = json_string_value(type);
    if (!json_is_object(result) || (type != NULL && (t == NULL || strcmp(t, "complete") != 0)) ||
        (meta != NULL && !json_is_object(meta)) || (!json_is_string(id) && !json_is_integer(id)))
        return NULL;
    gw_jbuf_lit(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    if (gw_jbuf_value(&b, id) != 0)
        goto fail;
    gw_jbuf_lit(&b, ",\"result\":{");
    EACH_MEMBER(result, it)
    {
        key = json_object_iter_key(it);
        key_len = json_object_iter_key_len(it);
        v = json_object_iter_value(it);
        if (!first)
            gw_jbuf_lit(&b, ",");
        first = false;
        if (gw_jbuf_string(&b, key, key_len) != 0)
            goto fail;
        gw_jbuf_lit(&b, ":");
        if ((KEY_IS(key, key_len, "_meta") ? put_meta(&b, meta, lease) : gw_jbuf_value(&b, v)) != 0)
            goto fail;
    }
    /* what the tree path appends, in its order: call_reply's _meta (with
     * a lease), decorate's resultType, then decorate's _meta */
    if (meta == NULL && lease != NULL) {
        PUT_KEY_LIT(&b, &first, "\"_meta\":");
        if (put_meta(&b, NULL, lease) != 0)
            goto fail;
    }
    if (type == NULL)
        PUT_KEY_LIT(&b, &first, "\"resultType\":\"complete\"");
    if (meta == NULL && lease == NULL) {
        PUT_KEY_LIT(&b, &first, "\"_meta\":");
        if (put_meta(&b, NULL, NULL) != 0)
            goto fail;
    }
    gw_jbuf_lit(&b, "}}");
    return gw_jbuf_take(&b, len);
fail:
    free(b.p);
    return NULL;
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

    if (!listed(removed, method))
        return NULL;
    msg = gw_xasprintf("Method not found: %s is not part of %s (2025-11-25 sessions have it)",
                       method, MCP_MODERN_VERSION);
    e = gw_mcp__error(id, RPC_METHOD_NOT_FOUND, msg);
    free(msg);
    return e;
}

/* ---- POST ---- */

bool gw_mcp__modern_post(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *body)
{
    struct envelope e;
    json_t *id, *params;
    const char *method, *jsonrpc;
    char dialog[GW_DIALOG_MAX + 1];
    struct gw_mcp_exchange *x;
    struct gw_mcp_session *s;

    read_envelope(body, &e);
    if (!is_modern(req, &e))
        return false;
    id = e.id;
    params = e.params;
    method = json_string_value(e.method);
    jsonrpc = json_string_value(e.jsonrpc);
    if (!json_is_string(id) && !json_is_integer(id))
        id = NULL;
    if (!json_is_object(body) || jsonrpc == NULL || strcmp(jsonrpc, "2.0") != 0 || method == NULL) {
        respond_error(req, 400, id, RPC_INVALID_REQUEST,
                      "Invalid Request: one JSON-RPC 2.0 request or notification per POST", NULL);
        return true;
    }
    if (e.id == NULL) { /* a notification: nothing to do over HTTP */
        gw_http_respond(req, 202, NULL, NULL, 0, NULL);
        return true;
    }
    if (id == NULL) {
        respond_error(req, 400, NULL, RPC_INVALID_REQUEST,
                      "Invalid Request: the id must be a string or an integer", NULL);
        return true;
    }
    if (check_request(req, id, method, &e) != 0 ||
        check_param_headers(ms, req, id, method, &e) != 0 ||
        gw_mcp__request_dialog(ms, req, id, e.dialog, e.info, dialog) != 0)
        return true;
    if (strcmp(method, "subscriptions/listen") == 0) {
        gw_mcp__listen(ms, req, id, params, dialog[0] ? dialog : NULL);
        return true;
    }
    s = session_new(ms, dialog, &e);
    x = gw_mcp__exchange_new(req, false);
    x->own = s;
    x->method = gw_xstrdup(method);
    gw_mcp__exchange_watch(x);
    gw_mcp__dispatch_request(s, x, method, id, params); /* the envelope is checked */
    gw_mcp__exchange_done(x);
    return true;
}
