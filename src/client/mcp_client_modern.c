/* The MCP client towards a 2026-07-28 server: the server/discover
 * handshake (and the AUTO probe that falls back to initialize), the
 * `_meta` envelope every request carries (narrowed to its caller's
 * capabilities and log level), the one subscriptions/listen that brings
 * list_changed and the updates of the resources subscribed through it,
 * and input rounds: an `input_required` result becomes server requests to
 * the owner, as a 2025-era server's elicitation would be, and the request
 * is sent again with the answers. The protocol facts are in
 * docs/architecture.md "Upstream revisions". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/mcp_client_internal.h"
#include "gw/util.h"

#define META_VERSION      "io.modelcontextprotocol/protocolVersion"
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_INFO         "io.modelcontextprotocol/clientInfo"
#define META_SERVER_INFO  "io.modelcontextprotocol/serverInfo"
#define META_LOG_LEVEL    "io.modelcontextprotocol/logLevel"
#define RPC_UNSUPPORTED   -32022
/* A listen that ends (answered, refused, or silent for sse_read_timeout)
 * is opened again, unless it lasted less than this: then the server does
 * not keep one, and asking again at once would loop. */
#define LISTEN_MIN_MS 1000

/* ---- the envelope ---- */

/* What the gateway can declare: it relays sampling, elicitation and roots
 * to the caller of each call, and MCP Apps as in its initialize. Each
 * request narrows it to what its caller can answer (gw_mcp__enveloped). */
static json_t *envelope_new(const struct gw_mcp_client *c)
{
    return json_pack("{s:s, s:{s:{}, s:{}, s:{}, s:{s:{s:[s]}}}, s:{s:s, s:s}}", META_VERSION,
                     GW_MCP_MODERN_VERSION, META_CAPABILITIES, "sampling", "elicitation", "roots",
                     "extensions", GW_MCP_EXT_UI, "mimeTypes", GW_MCP_EXT_UI_MIME, META_INFO,
                     "name", "mcpgw", "version", c->client_version);
}

static const char *const log_levels[] = {"debug", "info",     "notice", "warning",
                                         "error", "critical", "alert",  "emergency"};

unsigned gw_mcp_log_rank(const char *level)
{
    /* "": a request that set no level, the most common (eight strcmp) */
    for (size_t i = 0; level != NULL && level[0] != '\0' && i < GW_ARRAY_SIZE(log_levels); i++) {
        if (strcmp(level, log_levels[i]) == 0)
            return (unsigned)(i + 1);
    }
    return 0;
}

unsigned gw_mcp_log_bits(const char *level)
{
    return gw_mcp_log_rank(level) << GW_MCP_CAP_LOG_SHIFT;
}

static const struct {
    unsigned bit;
    const char *name;
} cap_names[] = {{GW_MCP_CAP_SAMPLING, "sampling"},
                 {GW_MCP_CAP_ELICITATION, "elicitation"},
                 {GW_MCP_CAP_ROOTS, "roots"}};

unsigned gw_mcp_caps_of(json_t *caps)
{
    unsigned bits = 0;

    for (size_t i = 0; i < GW_ARRAY_SIZE(cap_names); i++) {
        if (json_is_object(json_object_get(caps, cap_names[i].name)))
            bits |= cap_names[i].bit;
    }
    return bits;
}

json_t *gw_mcp_caps_json(unsigned caps)
{
    json_t *o = json_object();

    for (size_t i = 0; i < GW_ARRAY_SIZE(cap_names); i++) {
        if (caps & cap_names[i].bit)
            json_object_set_new(o, cap_names[i].name, json_object());
    }
    return o;
}

json_t *gw_mcp__enveloped(const struct gw_mcp_client *c, json_t *params, unsigned caps)
{
    unsigned level = (caps & GW_MCP_CAP_LOG_MASK) >> GW_MCP_CAP_LOG_SHIFT;
    json_t *out = params != NULL ? json_copy(params) : json_object();
    json_t *meta = json_object_get(out, "_meta"), *declared;

    meta = json_is_object(meta) ? json_copy(meta) : json_object();
    json_object_update(meta, c->envelope);
    if (level > 0 && level <= GW_ARRAY_SIZE(log_levels))
        json_object_set_new(meta, META_LOG_LEVEL, json_string(log_levels[level - 1]));
    if ((caps & GW_MCP_CAPS_ALL) != GW_MCP_CAPS_ALL) { /* what this request's caller can answer */
        declared = json_copy(json_object_get(c->envelope, META_CAPABILITIES));
        for (size_t i = 0; i < GW_ARRAY_SIZE(cap_names); i++) {
            if (!(caps & cap_names[i].bit))
                json_object_del(declared, cap_names[i].name);
        }
        json_object_set_new(meta, META_CAPABILITIES, declared);
    }
    json_object_set_new(out, "_meta", meta);
    return out;
}

bool gw_mcp__may_ask(const char *method)
{
    return strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0 ||
           strcmp(method, "resources/read") == 0;
}

/* ---- subscriptions/listen ---- */

static void listen_open(struct gw_mcp_client *c);

/* Answers the subscribe and unsubscribe requests waiting for the listen:
 * from its acknowledgement `ack` (its params), or with the listen's
 * failure `r`. */
static void settle_acks(struct gw_mcp_client *c, json_t *ack, const struct gw_mcp_reply *r)
{
    json_t *taken = json_object_get(json_object_get(ack, "notifications"), "resourceSubscriptions");
    struct pending *p = c->head;

    while (p != NULL) {
        json_t *uri = json_object_get(p->params, "uri"), *v, *ok = NULL;
        struct gw_mcp_reply done = {.code = 0};
        size_t i;

        if (!p->awaits_ack) {
            p = p->next;
            continue;
        }
        if (r != NULL) {
            gw_mcp__finish_error(p, r->code, r->message, r->error);
            p = c->head;
            continue;
        }
        json_array_foreach(taken, i, v)
        {
            if (json_equal(v, uri))
                ok = v;
        }
        if (ok == NULL && strcmp(p->method, "resources/subscribe") == 0) {
            gw_mcp__finish_error(p, GW_MCP_E_PROTOCOL,
                                 "the server's subscriptions/listen did not take the URI", NULL);
        } else {
            done.result = json_object();
            gw_mcp__finish(p, &done);
            json_decref(done.result);
        }
        p = c->head;
    }
}

void gw_mcp__listen_acked(struct gw_mcp_client *c, json_t *params)
{
    json_t *sub =
        json_object_get(json_object_get(params, "_meta"), "io.modelcontextprotocol/subscriptionId");

    if (c->era == GW_MCP_ERA_MODERN && c->listen_since != 0 && json_is_integer(sub) &&
        (gw_mcp_handle)json_integer_value(sub) == c->listen_op)
        settle_acks(c, params, NULL);
}

static void listen_done(void *data, const struct gw_mcp_reply *r)
{
    struct gw_mcp_client *c = data;
    uint64_t lasted = uv_now(c->loop) - c->listen_since;

    c->listen_since = 0;
    if (r->code == GW_MCP_E_CLOSED || r->code == GW_MCP_E_CANCELLED || c->state != GW_MCP_READY)
        return; /* closing, or replaced by a listen for other URIs */
    if (r->code != 0)
        settle_acks(c, NULL, r);
    if (lasted >= LISTEN_MIN_MS) { /* ended by the server, or silent too long */
        listen_open(c);
        return;
    }
    gw_log(GW_LOG_INFO, "upstream list changes not heard: subscriptions/listen ended", "server",
           c->server_id, "error", r->code ? r->message : "it ended at once", NULL);
}

static bool offers(const struct gw_mcp_client *c, const char *kind)
{
    return json_is_true(json_object_get(json_object_get(c->capabilities, kind), "listChanged"));
}

static bool awaiting_ack(const struct gw_mcp_client *c)
{
    for (const struct pending *p = c->head; p != NULL; p = p->next) {
        if (p->awaits_ack)
            return true;
    }
    return false;
}

/* The list_changed the server offers and the resources subscribed, on one
 * long request whose notifications come like a 2025-era server's. */
static void listen_open(struct gw_mcp_client *c)
{
    json_t *want = json_object(), *params, *v;
    const char *uri;
    int rc;
    static const char *const kinds[][2] = {{"tools", "toolsListChanged"},
                                           {"prompts", "promptsListChanged"},
                                           {"resources", "resourcesListChanged"}};

    for (size_t i = 0; i < GW_ARRAY_SIZE(kinds); i++) {
        if (offers(c, kinds[i][0]))
            json_object_set_new(want, kinds[i][1], json_true());
    }
    if (json_object_size(c->listen_uris) > 0) {
        json_t *uris = json_array();
        json_object_foreach(c->listen_uris, uri, v)
        {
            json_array_append_new(uris, json_string(uri));
        }
        json_object_set_new(want, "resourceSubscriptions", uris);
    }
    if (json_object_size(want) == 0 && !awaiting_ack(c)) {
        json_decref(want);
        return;
    }
    params = json_pack("{s:o}", "notifications", want);
    c->listen_since = uv_now(c->loop);
    rc = gw_mcp__send_request(c, "subscriptions/listen", params, 0, listen_done, c, 0,
                              &c->listen_op);
    json_decref(params);
    if (rc < 0) {
        struct gw_mcp_reply failed = {.code = rc,
                                      .message = "subscriptions/listen could not be sent"};
        c->listen_since = 0;
        settle_acks(c, NULL, &failed);
    }
}

int gw_mcp__subscribe(struct gw_mcp_client *c, const char *method, json_t *params,
                      uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle *handle)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));
    struct pending *p;

    if (uri == NULL)
        return UV_EINVAL;
    if (c->listen_uris == NULL)
        c->listen_uris = json_object();
    if (strcmp(method, "resources/subscribe") == 0)
        json_object_set_new(c->listen_uris, uri, json_true());
    else
        json_object_del(c->listen_uris, uri);
    p = gw_mcp__pending_add(c, method, timeout_ms, cb, data, handle);
    p->awaits_ack = true;
    p->params = json_pack("{s:s}", "uri", uri);
    if (c->listen_since != 0) /* the open one asks for other URIs: its end is not told */
        gw_mcp_client_cancel(c, c->listen_op, "listening for other resources");
    listen_open(c);
    return 0;
}

/* ---- the handshake ---- */

static bool lists_modern(json_t *versions)
{
    size_t i;
    json_t *v;

    json_array_foreach(versions, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), GW_MCP_MODERN_VERSION) == 0)
            return true;
    }
    return false;
}

static void discover_failed(struct gw_mcp_client *c, const struct gw_mcp_reply *r)
{
    json_t *code = json_object_get(r->error, "code");
    json_t *data = json_object_get(r->error, "data");
    char buf[TEXT_BYTES];

    if (json_integer_value(code) == RPC_UNSUPPORTED &&
        lists_modern(json_object_get(data, "supported")) && !c->reprobed) {
        c->reprobed = true; /* the server names our version after all: once more */
        if (gw_mcp__discover(c) == 0)
            return;
    }
    c->probing = false;
    if (c->want == GW_MCP_ERA_AUTO && r->code != GW_MCP_E_TRANSPORT) {
        gw_log(GW_LOG_DEBUG, "upstream does not serve 2026-07-28; trying initialize", "server",
               c->server_id, "error", r->message, NULL);
        if (gw_mcp__initialize(c) == 0)
            return;
    }
    snprintf(buf, sizeof buf, "server/discover failed: %s", r->message);
    gw_mcp__handshake_failed(c, r->code, buf);
}

static void discover_done(void *data, const struct gw_mcp_reply *r)
{
    struct gw_mcp_client *c = data;
    json_t *caps, *info, *versions;

    if (r->code == GW_MCP_E_CLOSED)
        return;
    if (r->code != 0) {
        discover_failed(c, r);
        return;
    }
    c->probing = false;
    caps = json_object_get(r->result, "capabilities");
    versions = json_object_get(r->result, "supportedVersions");
    info = json_object_get(json_object_get(r->result, "_meta"), META_SERVER_INFO);
    if (!json_is_object(info))
        info = json_object_get(r->result, "serverInfo");
    if ((caps != NULL && !json_is_object(caps)) || !lists_modern(versions)) {
        struct gw_mcp_reply bad = {.code = GW_MCP_E_PROTOCOL,
                                   .message =
                                       "the server's server/discover result names no 2026-07-28 in "
                                       "supportedVersions, or its capabilities are not an object"};
        discover_failed(c, &bad); /* auto: a 2025 server may answer anything */
        return;
    }
    c->era = GW_MCP_ERA_MODERN;
    c->version = gw_xstrdup(GW_MCP_MODERN_VERSION);
    gw_mcp__keep_handshake(c, caps, json_is_object(info) ? info : NULL);
    gw_mcp__ready(c);
    if (c->state == GW_MCP_READY)
        listen_open(c);
}

int gw_mcp__discover(struct gw_mcp_client *c)
{
    json_t *params;
    uint64_t timeout = c->init_timeout_ms;
    int rc;

    if (c->envelope == NULL)
        c->envelope = envelope_new(c);
    if (c->want == GW_MCP_ERA_AUTO && timeout > GW_MCP_PROBE_TIMEOUT_MS)
        timeout = GW_MCP_PROBE_TIMEOUT_MS;
    params = gw_mcp__enveloped(c, NULL, GW_MCP_CAPS_ALL);
    c->probing = c->want == GW_MCP_ERA_AUTO;
    rc = gw_mcp__send_request(c, "server/discover", params, timeout, discover_done, c, 0, NULL);
    json_decref(params);
    if (rc < 0) {
        c->probing = false;
        c->state = GW_MCP_FAILED;
    }
    return rc;
}

/* ---- input rounds ---- */

void gw_mcp__round_free(struct input_round *r)
{
    if (r == NULL)
        return;
    json_decref(r->keys);
    json_decref(r->responses);
    json_decref(r->state);
    json_decref(r->error);
    free(r);
}

/* The request with the round's answers, its round over. */
static void round_retry(struct gw_mcp_client *c, struct pending *p)
{
    struct input_round *r = p->round;
    json_t *params = json_copy(p->params);

    json_object_del(params, "inputResponses");
    json_object_del(params, "requestState");
    if (json_array_size(r->keys) > 0)
        json_object_set(params, "inputResponses", r->responses);
    if (r->state != NULL)
        json_object_set(params, "requestState", r->state);
    json_decref(r->keys);
    json_decref(r->responses);
    json_decref(r->state);
    r->keys = r->responses = r->state = NULL;
    gw_mcp__resend(c, p, params);
}

/* Every key answered, or one refused: the request goes on or fails. */
static void round_settle(struct gw_mcp_client *c, struct pending *p)
{
    struct input_round *r = p->round;
    char msg[TEXT_BYTES];

    if (r->issuing || (r->waiting > 0 && r->error == NULL))
        return;
    if (r->error != NULL) {
        json_t *error = json_incref(r->error);
        snprintf(msg, sizeof msg,
                 "the server asked for input during %s that mcpgw could not get: %s", p->method,
                 json_string_value(json_object_get(error, "message")));
        gw_utf8_trim(msg);
        gw_mcp__finish_error(p, GW_MCP_E_RPC, msg, error);
        json_decref(error);
        return;
    }
    round_retry(c, p);
}

/* Asks the owner each input request as if the server had sent it. */
static void round_ask(struct gw_mcp_client *c, struct pending *p, json_t *requests)
{
    struct input_round *r = p->round;
    gw_mcp_handle origin = p->op;
    size_t n = json_array_size(r->keys);

    r->issuing = true;
    for (size_t i = 0; i < n && r->error == NULL; i++) {
        const char *key = json_string_value(json_array_get(r->keys, i));
        json_t *req = json_object_get(requests, key);
        const char *method = json_string_value(json_object_get(req, "method"));
        json_t *params = json_object_get(req, "params");
        char idbuf[64];
        json_t *id, *asked;

        /* the round's number tells a late answer to an earlier round */
        snprintf(idbuf, sizeof idbuf, "%u-%zu", r->rounds, i);
        id = json_string(idbuf);
        asked = json_is_object(params) ? json_copy(params) : json_object();
        /* the input rounds name the request by the server's key; its
         * origin, not a token, says whose it is */
        json_object_set_new(asked, "_meta", json_pack("{s:s}", GW_MCP_META_INPUT_KEY, key));
        c->stats.server_requests++;
        if (method == NULL || !gw_mcp__relayable(method) || c->cb.on_request == NULL ||
            c->cb.on_request(c->cb.data, method, id, asked, origin) != 0) {
            json_t *no = json_pack("{s:i, s:s}", "code", -32601, "message",
                                   "mcpgw cannot relay this input request");
            gw_mcp__input_respond(c, id, origin, NULL, no);
            json_decref(no);
        }
        json_decref(id);
        json_decref(asked);
    }
    r->issuing = false;
    round_settle(c, p);
}

bool gw_mcp__result_taken(struct gw_mcp_client *c, struct pending *p, json_t *result)
{
    json_t *type = json_object_get(result, "resultType");
    json_t *requests = json_object_get(result, "inputRequests");
    json_t *state = json_object_get(result, "requestState");
    const char *t = json_string_value(type);
    struct input_round *r;
    const char *key;
    json_t *v;

    /* the server's identity is the handshake's to learn, not something a
     * result carries on to the gateway's callers */
    if (strcmp(p->method, "server/discover") != 0)
        json_object_del(json_object_get(result, "_meta"), META_SERVER_INFO);
    if (type == NULL || (t != NULL && strcmp(t, "complete") == 0))
        return false;
    /* p->params is kept exactly for the 2026-07-28 requests that may ask */
    if (t == NULL || strcmp(t, "input_required") != 0 || p->params == NULL) {
        gw_mcp__bad_shape(c, "result with an invalid resultType");
        gw_mcp__finish_error(p, GW_MCP_E_PROTOCOL,
                             "the server's result is malformed: its resultType is neither "
                             "\"complete\" nor an input_required this request may have",
                             NULL);
        return true;
    }
    if ((requests != NULL && !json_is_object(requests)) ||
        (state != NULL && !json_is_string(state)) || (requests == NULL && state == NULL)) {
        gw_mcp__finish_error(p, GW_MCP_E_PROTOCOL,
                             "the server's input_required result has neither inputRequests nor "
                             "a string requestState",
                             NULL);
        return true;
    }
    r = p->round ? p->round : gw_xcalloc(1, sizeof *r);
    p->round = r;
    if (++r->rounds > GW_MCP_MAX_INPUT_ROUNDS) {
        char msg[TEXT_BYTES];
        snprintf(msg, sizeof msg, "the server asked for input more than %d times in one request",
                 GW_MCP_MAX_INPUT_ROUNDS);
        gw_mcp__finish_error(p, GW_MCP_E_PROTOCOL, msg, NULL);
        return true;
    }
    r->keys = json_array();
    r->responses = json_object();
    r->state = json_incref(state);
    json_object_foreach(requests, key, v)
    {
        json_array_append_new(r->keys, json_string(key));
    }
    r->waiting = (unsigned)json_array_size(r->keys);
    if (r->waiting > 0)
        round_ask(c, p, requests);
    else
        round_retry(c, p);
    return true;
}

void gw_mcp__input_respond(struct gw_mcp_client *c, json_t *id, gw_mcp_handle origin,
                           json_t *result, json_t *error)
{
    const char *s = json_string_value(id);
    unsigned round;
    size_t i;
    struct pending *p;
    struct input_round *r;
    const char *key;

    if (s == NULL || sscanf(s, "%u-%zu", &round, &i) != 2 ||
        (p = gw_mcp__find_op(c, origin)) == NULL || (r = p->round) == NULL || r->rounds != round ||
        (key = json_string_value(json_array_get(r->keys, i))) == NULL ||
        json_object_get(r->responses, key) != NULL)
        return; /* a round that ended meanwhile */
    if (error != NULL && r->error == NULL)
        r->error = json_incref(error);
    if (result != NULL)
        json_object_set(r->responses, key, result);
    else
        json_object_set_new(r->responses, key, json_null());
    r->waiting--;
    round_settle(c, p);
}
