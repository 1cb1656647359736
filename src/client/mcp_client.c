/* MCP client protocol layer: JSON-RPC ids, the in-flight table, the
 * initialize handshake, paginated lists, calls and cancellation.
 *
 * In-flight requests live in a hash table keyed by id (ids are sequential,
 * so `id % nbuckets` spreads them evenly) and in one doubly linked list for
 * failing them all at once. The table starts with a few buckets, as most
 * instances (a dialog's lease) have one or two requests in flight, and
 * doubles when the chains grow past two entries on average, up to
 * BUCKETS_MAX.
 * Requests with a timeout are also in a list ordered by deadline, watched
 * by the client's one timer, armed for the earliest deadline: a request
 * costs no timer handle of its own (no init, heap insert and close per
 * call). Closing that timer is also what frees the client, on a later loop
 * turn than gw_mcp_client_close(), never on the stack of a caller. */
#include "gw/mcp_client.h"
#include "gw/mcp_client_internal.h"

#include "gw/json_in.h"
#include "gw/json_out.h"
#include "gw/log.h"
#include "gw/util.h"
#include "gw/version.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS_MIN    8
#define BUCKETS_MAX    1024
#define CANCELLED_RING 64

/* The in-flight table. */

static struct pending **bucket(struct gw_mcp_client *c, uint64_t id)
{
    return &c->buckets[id & (c->nbuckets - 1)];
}

/* Doubles the table and re-hashes every entry from the pending list. */
static void grow(struct gw_mcp_client *c)
{
    free(c->buckets);
    c->nbuckets *= 2;
    c->buckets = gw_xcalloc(c->nbuckets, sizeof *c->buckets);
    for (struct pending *p = c->head; p; p = p->next) {
        struct pending **b = bucket(c, p->id);
        p->hnext = *b;
        *b = p;
    }
}

struct pending *gw_mcp__lookup(struct gw_mcp_client *c, uint64_t id)
{
    for (struct pending *p = *bucket(c, id); p; p = p->hnext) {
        if (p->id == id)
            return p;
    }
    return NULL;
}

static void insert(struct gw_mcp_client *c, struct pending *p)
{
    struct pending **b;

    if (c->n_pending >= 2 * c->nbuckets && c->nbuckets < BUCKETS_MAX)
        grow(c);
    b = bucket(c, p->id);
    p->hnext = *b;
    *b = p;
    p->prev = NULL;
    p->next = c->head;
    if (c->head)
        c->head->prev = p;
    c->head = p;
    c->n_pending++;
    c->n_calls += p->call;
}

static void detach(struct gw_mcp_client *c, struct pending *p)
{
    struct pending **pp = bucket(c, p->id);

    while (*pp != p)
        pp = &(*pp)->hnext;
    *pp = p->hnext;
    if (p->prev)
        p->prev->next = p->next;
    else
        c->head = p->next;
    if (p->next)
        p->next->prev = p->prev;
    c->n_pending--;
    c->n_calls -= p->call;
}

static void maybe_free_client(struct gw_mcp_client *c)
{
    if (c->state != GW_MCP_CLOSING || c->open_handles > 0)
        return;
    json_decref(c->config);
    gw_mcp__drop_handshake(c);
    json_decref(c->envelope);
    json_decref(c->listen_uris);
    free(c->buckets);
    free(c->cancelled);
    free(c->version);
    free(c->server_id);
    free(c->peer_address);
    gw_span_free(c->next_span);
    gw_span_free(c->peer_attrs);
    free(c->peer_attrs_version);
    free(c->client_version);
    gw_redact_free(c->redact);
    free(c);
}

static void deadline_unlink(struct gw_mcp_client *c, struct pending *p)
{
    if (p->deadline == 0)
        return;
    if (p->dprev)
        p->dprev->dnext = p->dnext;
    else
        c->dhead = p->dnext;
    if (p->dnext)
        p->dnext->dprev = p->dprev;
    else
        c->dtail = p->dprev;
    p->deadline = 0;
}

/* Frees a detached entry. The timer stops with the last deadline, so an
 * idle client holds no active handle. */
static void release(struct pending *p)
{
    struct gw_mcp_client *c = p->c;

    deadline_unlink(c, p);
    if (c->dhead == NULL && c->armed_due != 0) {
        uv_timer_stop(&c->anchor);
        c->armed_due = 0;
    }
    gw_mcp__span_end(p, NULL);
    json_decref(p->params);
    gw_mcp__round_free(p->round);
    free(p->method);
    free(p);
}

/* Completes a request: out of the table first, so the callback may do
 * anything (send, cancel, close) without seeing it again. The owner hears
 * that the last call ended after that call's own callback. */
void gw_mcp__finish(struct pending *p, const struct gw_mcp_reply *r)
{
    struct gw_mcp_client *c = p->c;
    gw_mcp_reply_cb cb = p->cb;
    void *data = p->data;
    bool call = p->call;

    gw_mcp__span_end(p, r);
    detach(c, p);
    release(p);
    cb(data, r);
    if (call && c->n_calls == 0 && c->state != GW_MCP_CLOSING && c->cb.on_idle != NULL)
        c->cb.on_idle(c->cb.data);
}

void gw_mcp__finish_error(struct pending *p, int code, const char *message, json_t *error)
{
    struct gw_mcp_reply r = {.code = code, .message = message, .error = error};

    gw_mcp__finish(p, &r);
}

static void fail_all(struct gw_mcp_client *c, int code, const char *message)
{
    while (c->head)
        gw_mcp__finish_error(c->head, code, message, NULL);
}

/* Sending. */

/* Serialises and sends `msg` (a reference is stolen). Compact jansson
 * output escapes control characters, so the text never holds a newline. */
int gw_mcp__send_json(struct gw_mcp_client *c, json_t *msg)
{
    size_t len;
    char *s = gw_json_dump(msg, &len);
    int rc;

    json_decref(msg);
    if (s == NULL)
        return UV_ENOMEM;
    rc = c->cb.send(c->cb.data, s, len);
    free(s);
    return rc;
}

int gw_mcp__send_notification(struct gw_mcp_client *c, const char *method, json_t *params)
{
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);

    if (params)
        json_object_set(msg, "params", params);
    return gw_mcp__send_json(c, msg);
}

static void remember_cancelled(struct gw_mcp_client *c, uint64_t id)
{
    if (c->cancelled == NULL)
        c->cancelled = gw_xcalloc(CANCELLED_RING, sizeof *c->cancelled);
    c->cancelled[c->cancelled_pos++ % CANCELLED_RING] = id;
}

static int was_cancelled(const struct gw_mcp_client *c, uint64_t id)
{
    for (unsigned i = 0; c->cancelled != NULL && i < CANCELLED_RING; i++) {
        if (c->cancelled[i] == id)
            return 1;
    }
    return 0;
}

/* Tells the server to stop working on `p` (never for initialize: the spec
 * forbids cancelling it) and remembers the id so its late answer is known. */
static void cancel_upstream(struct gw_mcp_client *c, struct pending *p, const char *reason)
{
    json_t *params;
    int rc;

    remember_cancelled(c, p->id);
    if (strcmp(p->method, "initialize") == 0 || p->awaits_ack)
        return;
    params = json_pack("{s:I}", "requestId", (json_int_t)p->id);
    if (reason)
        json_object_set_new(params, "reason", json_string(reason));
    rc = gw_mcp__send_notification(c, "notifications/cancelled", params);
    json_decref(params);
    if (rc < 0)
        gw_log(GW_LOG_DEBUG, "could not send notifications/cancelled", "server", c->server_id,
               "error", uv_err_name(rc), NULL);
}

static void time_out(struct pending *p)
{
    char msg[TEXT_BYTES];

    snprintf(msg, sizeof msg, "the server did not answer %s within %" PRIu64 " ms", p->method,
             p->timeout_ms);
    cancel_upstream(p->c, p, "timed out");
    gw_mcp__finish_error(p, GW_MCP_E_TIMEOUT, msg, NULL);
}

static void on_deadline(uv_timer_t *t);

static void arm(struct gw_mcp_client *c, uint64_t due)
{
    uint64_t now = uv_now(c->loop);

    c->armed_due = due;
    uv_timer_start(&c->anchor, on_deadline, due > now ? due - now : 0, 0);
}

/* Times out what is due; a request answered since the timer was armed
 * may make it fire early, and it is armed again for the next deadline. */
static void on_deadline(uv_timer_t *t)
{
    struct gw_mcp_client *c = t->data;
    uint64_t now = uv_now(c->loop);

    c->armed_due = 0;
    while (c->dhead != NULL && c->dhead->deadline <= now && c->state != GW_MCP_CLOSING)
        time_out(c->dhead);
    if (c->dhead != NULL && c->state != GW_MCP_CLOSING)
        arm(c, c->dhead->deadline);
}

/* Inserted from the tail: timeouts are mostly equal, so a new deadline is
 * mostly the latest. */
static void start_timer(struct gw_mcp_client *c, struct pending *p)
{
    struct pending *after = c->dtail;

    if (p->timeout_ms == 0)
        return;
    p->deadline = uv_now(c->loop) + p->timeout_ms;
    while (after != NULL && after->deadline > p->deadline)
        after = after->dprev;
    p->dprev = after;
    p->dnext = after ? after->dnext : c->dhead;
    if (p->dnext)
        p->dnext->dprev = p;
    else
        c->dtail = p;
    if (after)
        after->dnext = p;
    else
        c->dhead = p;
    if (c->armed_due == 0 || p->deadline < c->armed_due)
        arm(c, p->deadline);
}

/* Starts a request's text in `b`, {"jsonrpc":"2.0","id":N,"method":"…", for
 * the id the request will have; the caller appends ,"params":… and the
 * closing brace, and hands `b` to send_request_text. UV_ENOBUFS at the
 * in-flight limit, UV_EINVAL for a method that is not UTF-8. */
static int request_begin(struct gw_mcp_client *c, struct gw_jbuf *b, const char *method,
                         uint64_t *id)
{
    if (c->n_pending >= GW_MCP_MAX_IN_FLIGHT)
        return UV_ENOBUFS;
    *id = c->next_id + 1;
    gw_jbuf_lit(b, "{\"jsonrpc\":\"2.0\",\"id\":");
    gw_jbuf_int(b, (json_int_t)*id);
    gw_jbuf_lit(b, ",\"method\":");
    return gw_jbuf_string(b, method, strlen(method)) == 0 ? 0 : UV_EINVAL;
}

/* Records request `id` and sends `b`, its whole text (consumed); `op` 0
 * means a new operation whose handle is the request's own id. No tree is
 * built for the message. The entry is in the table before the send, so an
 * owner that answers synchronously still finds it. */
static int send_request_text(struct gw_mcp_client *c, uint64_t id, const char *method,
                             struct gw_jbuf *b, uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                             gw_mcp_handle op, bool call, gw_mcp_handle *handle)
{
    struct pending *p;
    size_t len;
    char *text = gw_jbuf_take(b, &len);
    int rc;

    c->next_id = id;
    p = gw_xcalloc(1, sizeof *p);
    *p = (struct pending){
        .c = c, .id = id, .op = op ? op : id, .cb = cb, .data = data, .call = call};
    p->method = gw_xstrdup(method);
    p->timeout_ms = timeout_ms;
    p->span = c->next_span, c->next_span = NULL;
    insert(c, p);
    const struct gw_trace_ctx *prev = gw_trace_enter(gw_trace_pick(p->span, gw_trace_current()));
    rc = c->cb.send(c->cb.data, text, len);
    gw_trace_leave(prev);
    free(text);
    if (rc < 0) {
        if (gw_mcp__lookup(c, id) != p)
            return 0; /* the owner already failed it (transport down inline) */
        detach(c, p);
        release(p);
        return rc;
    }
    start_timer(c, p);
    if (handle)
        *handle = p->op;
    return 0;
}

struct pending *gw_mcp__pending_add(struct gw_mcp_client *c, const char *method,
                                    uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                                    gw_mcp_handle *handle)
{
    struct pending *p = gw_xcalloc(1, sizeof *p);

    *p = (struct pending){.c = c, .id = ++c->next_id, .cb = cb, .data = data, .call = true};
    p->op = p->id;
    p->method = gw_xstrdup(method);
    p->timeout_ms = timeout_ms;
    insert(c, p);
    start_timer(c, p);
    if (handle)
        *handle = p->op;
    return p;
}

/* A 2026-07-28 request carries the envelope, and one that may ask for
 * input keeps its params for the retry. */
static int send_request(struct gw_mcp_client *c, const char *method, json_t *params,
                        uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle op,
                        bool call, gw_mcp_handle *handle, unsigned caps)
{
    bool modern = c->era == GW_MCP_ERA_MODERN;
    json_t *sent = modern ? gw_mcp__enveloped(c, params, caps) : json_incref(params);
    struct gw_jbuf b = {0};

    sent = gw_trace_current() != NULL ? gw_mcp__span_params(c, method, params, sent) : sent;
    struct pending *p;
    uint64_t id;
    int rc = request_begin(c, &b, method, &id);

    if (rc == 0 && sent != NULL) {
        gw_jbuf_lit(&b, ",\"params\":");
        if (gw_jbuf_value(&b, sent) != 0)
            rc = UV_EINVAL;
    }
    json_decref(sent);
    if (rc != 0) {
        free(b.p);
        gw_span_free(c->next_span), c->next_span = NULL;
        return rc;
    }
    gw_jbuf_lit(&b, "}");
    rc = send_request_text(c, id, method, &b, timeout_ms, cb, data, op, call, handle);
    if (rc == 0 && modern && gw_mcp__may_ask(method) && (p = gw_mcp__lookup(c, id)) != NULL) {
        p->params = params ? json_incref(params) : json_object();
        p->caps = caps;
    }
    return rc;
}

void gw_mcp__resend(struct gw_mcp_client *c, struct pending *p, json_t *params)
{
    json_t *sent = gw_mcp__enveloped(c, params, p->caps);
    struct gw_jbuf b = {0};
    uint64_t id;
    size_t len;
    char *text;
    int rc = request_begin(c, &b, p->method, &id);

    gw_mcp__span_meta(json_object_get(sent, "_meta"), p->span);
    if (rc == 0) {
        gw_jbuf_lit(&b, ",\"params\":");
        rc = gw_jbuf_value(&b, sent) == 0 ? 0 : UV_EINVAL;
    }
    json_decref(sent);
    json_decref(p->params);
    p->params = params;
    if (rc != 0) {
        free(b.p);
        gw_mcp__finish_error(p, GW_MCP_E_PROTOCOL, "the retry after input could not be built",
                             NULL);
        return;
    }
    gw_jbuf_lit(&b, "}");
    text = gw_jbuf_take(&b, &len);
    detach(c, p); /* under its new id: the old one's late answer is unknown */
    c->next_id = p->id = id;
    insert(c, p);
    rc = c->cb.send(c->cb.data, text, len);
    free(text);
    if (rc < 0 && gw_mcp__lookup(c, id) == p)
        gw_mcp__finish_error(p, rc, "the retry after input could not be sent", NULL);
}

int gw_mcp__send_request(struct gw_mcp_client *c, const char *method, json_t *params,
                         uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle op,
                         gw_mcp_handle *handle)
{
    return send_request(c, method, params, timeout_ms, cb, data, op, false, handle,
                        GW_MCP_CAPS_ALL);
}

int gw_mcp__check_ready(const struct gw_mcp_client *c)
{
    switch (c->state) {
    case GW_MCP_READY:
        return 0;
    case GW_MCP_DOWN:
        return GW_MCP_E_TRANSPORT;
    case GW_MCP_CLOSING:
        return GW_MCP_E_CLOSED;
    default:
        return GW_MCP_E_NOT_READY;
    }
}

/* Receiving: responses. */

static void stale_response(struct gw_mcp_client *c, json_int_t v)
{
    uint64_t id = (uint64_t)v;

    if (v > 0 && was_cancelled(c, id)) {
        c->stats.late++;
        gw_log(GW_LOG_DEBUG, "dropped a late answer to a cancelled request", "server", c->server_id,
               NULL);
    } else if (v > 0 && id <= c->next_id) {
        c->stats.duplicate_ids++;
        gw_mcp__warn_limited(c, "upstream answered a request twice; dropped", "duplicate id");
    } else {
        c->stats.unknown_ids++;
        gw_mcp__warn_limited(c, "upstream answered an id mcpgw never sent; dropped", "unknown id");
    }
}

static void error_response(struct pending *p, json_t *error)
{
    json_t *code = json_object_get(error, "code");
    json_t *message = json_object_get(error, "message");
    char msg[TEXT_BYTES];

    if (!json_is_integer(code) || !json_is_string(message)) {
        gw_mcp__bad_shape(p->c, "error object without an integer code and a string message");
        gw_mcp__finish_error(p, GW_MCP_E_PROTOCOL,
                             "the server answered with a malformed error object", NULL);
        return;
    }
    /* masked here, before anything the error feeds can show it */
    error = gw_mcp__masked_error(p->c, error);
    snprintf(msg, sizeof msg, "the server answered %s with error %" JSON_INTEGER_FORMAT ": %s",
             p->method, json_integer_value(code),
             json_string_value(json_object_get(error, "message")));
    gw_utf8_trim(msg);
    gw_mcp__finish_error(p, GW_MCP_E_RPC, msg, error);
    json_decref(error);
}

static void handle_response(struct gw_mcp_client *c, json_t *m, json_t *id)
{
    json_t *result = json_object_get(m, "result");
    json_t *error = json_object_get(m, "error");
    struct pending *p;

    if (json_is_string(id) || json_is_real(id)) {
        c->stats.unknown_ids++;
        gw_mcp__warn_limited(c, "upstream answered an id mcpgw never sent; dropped", "unknown id");
        return;
    }
    if (!json_is_integer(id)) {
        gw_mcp__bad_shape(c, "response id is neither a string nor an integer");
        return;
    }
    p = json_integer_value(id) > 0 ? gw_mcp__lookup(c, (uint64_t)json_integer_value(id)) : NULL;
    if (p == NULL) {
        stale_response(c, json_integer_value(id));
    } else if ((result == NULL) == (error == NULL)) {
        gw_mcp__bad_shape(c, "response needs exactly one of result and error");
        gw_mcp__finish_error(p, GW_MCP_E_PROTOCOL,
                             "the server's response had both or neither of "
                             "result and error",
                             NULL);
    } else if (error) {
        if (json_is_object(error))
            error_response(p, error);
        else
            error_response(p, NULL);
    } else if (!json_is_object(result)) {
        gw_mcp__bad_shape(c, "result is not an object");
        gw_mcp__finish_error(p, GW_MCP_E_PROTOCOL, "the server's result is not a JSON object",
                             NULL);
    } else if (!gw_mcp__result_taken(c, p, result)) {
        struct gw_mcp_reply r = {.code = 0, .result = result, .bytes = c->cur_len};
        gw_mcp__finish(p, &r);
    }
}

static void handle_one(struct gw_mcp_client *c, json_t *m)
{
    json_t *jsonrpc, *method, *id;

    if (!json_is_object(m)) {
        gw_mcp__bad_shape(c, "message is not a JSON object");
        return;
    }
    jsonrpc = json_object_get(m, "jsonrpc");
    method = json_object_get(m, "method");
    id = json_object_get(m, "id");
    if (!json_is_string(jsonrpc) || strcmp(json_string_value(jsonrpc), "2.0") != 0)
        gw_mcp__bad_shape(c, "jsonrpc is not \"2.0\"");
    else if (method && !json_is_string(method))
        gw_mcp__bad_shape(c, "method is not a string");
    else if (method && id)
        gw_mcp__handle_server_request(c, json_string_value(method), id, m);
    else if (method)
        gw_mcp__handle_notification(c, json_string_value(method), m);
    else if (id)
        handle_response(c, m, id);
    else
        gw_mcp__bad_shape(c, "message has neither method nor id");
}

void gw_mcp_client_receive(struct gw_mcp_client *c, const char *msg, size_t len)
{
    json_error_t err;
    json_t *root;

    if (c->state == GW_MCP_CLOSING)
        return;
    c->cur_msg = msg;
    c->cur_len = len;
    root = gw_json_loadb(msg, len, JSON_DECODE_ANY, &err);
    if (root == NULL) {
        c->stats.non_json++;
        gw_mcp__warn_limited(c, "upstream sent a line that is not JSON; dropped", err.text);
    } else if (json_is_array(root)) {
        /* A batch (2025-03-26 only, but harmless to accept from anyone). */
        if (json_array_size(root) == 0)
            gw_mcp__bad_shape(c, "empty batch");
        for (size_t i = 0; i < json_array_size(root) && c->state != GW_MCP_CLOSING; i++)
            handle_one(c, json_array_get(root, i));
    } else {
        handle_one(c, root);
    }
    json_decref(root);
    c->cur_msg = NULL;
}

int gw_mcp_client_new(uv_loop_t *loop, const struct gw_mcp_client_opts *opts,
                      struct gw_mcp_client **out)
{
    struct gw_mcp_client *c;

    if (loop == NULL || opts == NULL || opts->send == NULL) {
        gw_redact_free(opts ? opts->redact : NULL);
        return UV_EINVAL;
    }
    c = gw_xcalloc(1, sizeof *c);
    c->loop = loop;
    c->cb = *opts;
    c->cb.redact = NULL;
    c->cb.server_id = NULL;
    c->cb.config = NULL;
    c->cb.client_version = NULL;
    c->server_id = gw_xstrdup(opts->server_id ? opts->server_id : "?");
    c->redact = opts->redact;
    c->client_version = gw_xstrdup(opts->client_version ? opts->client_version : GW_VERSION);
    c->config = opts->config ? json_incref(opts->config) : NULL;
    c->init_timeout_ms =
        opts->init_timeout_ms ? opts->init_timeout_ms : GW_MCP_DEFAULT_INIT_TIMEOUT_MS;
    c->state = GW_MCP_NEW;
    c->want = opts->era;
    c->nbuckets = BUCKETS_MIN;
    c->buckets = gw_xcalloc(c->nbuckets, sizeof *c->buckets);
    uv_timer_init(loop, &c->anchor);
    c->anchor.data = c;
    c->open_handles = 1;
    *out = c;
    return 0;
}

static void anchor_closed(uv_handle_t *h)
{
    struct gw_mcp_client *c = h->data;

    c->open_handles--;
    maybe_free_client(c);
}

void gw_mcp_client_close(struct gw_mcp_client *c)
{
    if (c->state == GW_MCP_CLOSING)
        return;
    c->state = GW_MCP_CLOSING;
    fail_all(c, GW_MCP_E_CLOSED, "the upstream instance is closing");
    uv_close((uv_handle_t *)&c->anchor, anchor_closed);
}

void gw_mcp_client_transport_down(struct gw_mcp_client *c, const char *why)
{
    char msg[TEXT_BYTES];
    enum gw_mcp_state was = c->state;

    if (was == GW_MCP_CLOSING || was == GW_MCP_DOWN)
        return;
    c->state = GW_MCP_DOWN;
    snprintf(msg, sizeof msg, "the upstream transport went down: %s",
             why ? why : "no reason given");
    gw_utf8_trim(msg);
    fail_all(c, GW_MCP_E_TRANSPORT, msg);
}

void gw_mcp_client_not_run(struct gw_mcp_client *c, json_t *id, const char *why)
{
    struct pending *p = json_is_integer(id) && json_integer_value(id) > 0
                            ? gw_mcp__lookup(c, (uint64_t)json_integer_value(id))
                            : NULL;

    if (p != NULL)
        gw_mcp__finish_error(p, GW_MCP_E_NOT_RUN, why, NULL);
}

/* Requests. */

int gw_mcp_client_request(struct gw_mcp_client *c, const char *method, json_t *params,
                          uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                          gw_mcp_handle *handle, unsigned caps)
{
    int rc = gw_mcp__check_ready(c);

    if (rc < 0)
        return rc;
    if (method == NULL || cb == NULL || (params && !json_is_object(params)))
        return UV_EINVAL;
    if (c->era == GW_MCP_ERA_MODERN && (strcmp(method, "resources/subscribe") == 0 ||
                                        strcmp(method, "resources/unsubscribe") == 0))
        return gw_mcp__subscribe(c, method, params, timeout_ms, cb, data, handle);
    return send_request(c, method, params, timeout_ms, cb, data, 0, true, handle, caps);
}

int gw_mcp_client_notify(struct gw_mcp_client *c, const char *method, json_t *params)
{
    int rc = gw_mcp__check_ready(c);

    if (rc < 0)
        return rc;
    if (method == NULL || (params && !json_is_object(params)))
        return UV_EINVAL;
    return gw_mcp__send_notification(c, method, params);
}

int gw_mcp_client_ping(struct gw_mcp_client *c, uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                       gw_mcp_handle *handle)
{
    return gw_mcp_client_request(c, "ping", NULL, timeout_ms, cb, data, handle, GW_MCP_CAPS_ALL);
}

int gw_mcp_client_call_tool(struct gw_mcp_client *c, const char *name, json_t *arguments,
                            json_t *progress_token, uint64_t timeout_ms, gw_mcp_reply_cb cb,
                            void *data, gw_mcp_handle *handle, unsigned caps)
{
    struct gw_jbuf b = {0};
    uint64_t id;
    int rc;

    if (name == NULL || (arguments && !json_is_object(arguments)))
        return UV_EINVAL;
    if (progress_token && !json_is_string(progress_token) && !json_is_integer(progress_token))
        return UV_EINVAL;
    rc = gw_mcp__check_ready(c);
    if (rc < 0)
        return rc;
    if (cb == NULL)
        return UV_EINVAL;
    if (c->era == GW_MCP_ERA_MODERN) {
        json_t *params = json_pack("{s:s, s:o}", "name", name, "arguments",
                                   arguments ? json_incref(arguments) : json_object());
        if (params == NULL)
            return UV_EINVAL;
        if (progress_token != NULL)
            json_object_set_new(params, "_meta",
                                json_pack("{s:O}", "progressToken", progress_token));
        rc = send_request(c, "tools/call", params, timeout_ms, cb, data, 0, true, handle, caps);
        json_decref(params);
        c->stats.tool_calls += rc == 0;
        return rc;
    }
    /* params {"name", "arguments", "_meta"?}, in the order a tree would give */
    rc = request_begin(c, &b, "tools/call", &id);
    if (rc == 0) {
        gw_jbuf_lit(&b, ",\"params\":{\"name\":");
        if (gw_jbuf_string(&b, name, strlen(name)) != 0)
            rc = UV_EINVAL;
    }
    if (rc == 0) {
        gw_jbuf_lit(&b, ",\"arguments\":");
        if (arguments == NULL)
            gw_jbuf_lit(&b, "{}");
        else if (gw_jbuf_value(&b, arguments) != 0)
            rc = UV_EINVAL;
    }
    if (rc == 0 && (progress_token != NULL || gw_trace_current() != NULL)) {
        gw_jbuf_lit(&b, ",\"_meta\":{");
        gw_mcp__span_call_text(c, &b, name, progress_token != NULL);
        if (progress_token != NULL)
            gw_jbuf_lit(&b, "\"progressToken\":");
        if (progress_token != NULL && gw_jbuf_value(&b, progress_token) != 0)
            rc = UV_EINVAL;
        gw_jbuf_lit(&b, "}");
    }
    if (rc != 0) {
        free(b.p);
        gw_span_free(c->next_span), c->next_span = NULL;
        return rc;
    }
    gw_jbuf_lit(&b, "}}");
    rc = send_request_text(c, id, "tools/call", &b, timeout_ms, cb, data, 0, true, handle);
    if (rc == 0)
        c->stats.tool_calls++;
    return rc;
}

struct pending *gw_mcp__find_op(struct gw_mcp_client *c, gw_mcp_handle op)
{
    struct pending *p = op != 0 ? gw_mcp__lookup(c, op) : NULL;

    if (p == NULL || p->op != op) {
        p = op != 0 ? c->head : NULL;
        while (p && p->op != op)
            p = p->next;
    }
    return p;
}

int gw_mcp_client_cancel(struct gw_mcp_client *c, gw_mcp_handle handle, const char *reason)
{
    struct pending *p = gw_mcp__find_op(c, handle);
    char msg[TEXT_BYTES];

    if (p == NULL || strcmp(p->method, "initialize") == 0)
        return UV_ENOENT;
    const char *why = reason ? reason : "";
    snprintf(msg, sizeof msg, "%s was cancelled%s%.*s", p->method, reason ? ": " : "",
             gw_utf8_cut(why, 200), why);
    gw_utf8_trim(msg);
    if (p->round == NULL || p->round->keys == NULL) /* else nothing runs upstream */
        cancel_upstream(c, p, reason);
    gw_mcp__finish_error(p, GW_MCP_E_CANCELLED, msg, NULL);
    return 0;
}
