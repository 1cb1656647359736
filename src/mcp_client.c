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

#define BUCKETS_MIN       8
#define BUCKETS_MAX       1024
#define CANCELLED_RING    64
#define WARN_PER_SECOND   10
#define SAMPLE_BYTES      120
#define TEXT_BYTES        512
#define JSONRPC_NO_METHOD -32601

static const char *const accepted_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                "2024-11-05"};

/* Notifications a 2025-11-25 server may send a client; others are counted as
 * unknown (they are still passed on). */
static const char *const known_notifications[] = {"notifications/cancelled",
                                                  "notifications/progress",
                                                  "notifications/message",
                                                  "notifications/resources/list_changed",
                                                  "notifications/resources/updated",
                                                  "notifications/prompts/list_changed",
                                                  "notifications/tools/list_changed",
                                                  "notifications/tasks/status",
                                                  "notifications/elicitation/complete"};

struct pending {
    struct gw_mcp_client *c;
    uint64_t id;
    gw_mcp_handle op; /* the handle the caller holds; pages of a list share one */
    struct pending *hnext;
    struct pending *prev, *next;
    gw_mcp_reply_cb cb;
    void *data;
    char *method; /* owned */
    uint64_t timeout_ms;
    uint64_t deadline; /* loop ms; 0 when the request has no timeout */
    struct pending *dprev, *dnext;
};

/* One paginated list in progress; owned by itself, freed when it reports. */
struct pager {
    struct gw_mcp_client *c;
    char *method;
    char *key;
    json_t *items;
    unsigned pages;
    uint64_t timeout_ms;
    gw_mcp_reply_cb cb;
    void *data;
    gw_mcp_handle op;
};

struct gw_mcp_client {
    uv_loop_t *loop;
    struct gw_redact *redact; /* owned; may be NULL */
    uv_timer_t anchor;        /* armed for the earliest deadline */
    uint64_t armed_due;       /* when it fires; 0 when it is not armed */
    struct pending *dhead, *dtail;
    unsigned open_handles;
    enum gw_mcp_state state;
    struct gw_mcp_client_opts cb; /* callbacks and data; string fields unused */
    char *server_id;
    char *client_version;
    json_t *config;
    uint64_t init_timeout_ms;
    uint64_t next_id;
    struct pending **buckets; /* nbuckets, a power of two */
    size_t nbuckets;
    struct pending *head;
    size_t n_pending;
    uint64_t *cancelled; /* CANCELLED_RING ids, allocated at the first cancel */
    unsigned cancelled_pos;
    char *version;
    json_t *server_info;
    json_t *capabilities;
    struct gw_mcp_client_stats stats;
    uint64_t warn_window;
    unsigned warn_count;
    const char *cur_msg; /* the message being received, for log samples */
    size_t cur_len;
};

const char *gw_mcp_strerror(int code)
{
    switch (code) {
    case 0:
        return "ok";
    case GW_MCP_E_RPC:
        return "upstream_error";
    case GW_MCP_E_TIMEOUT:
        return "timeout";
    case GW_MCP_E_CANCELLED:
        return "cancelled";
    case GW_MCP_E_TRANSPORT:
        return "transport_down";
    case GW_MCP_E_CLOSED:
        return "closed";
    case GW_MCP_E_PROTOCOL:
        return "protocol_error";
    case GW_MCP_E_LIMIT:
        return "limit_exceeded";
    case GW_MCP_E_NOT_READY:
        return "not_ready";
    case GW_MCP_E_NOT_RUN:
        return "not_run";
    default:
        /* uv_err_name() allocates (and leaks) a string for a code it does
         * not know, such as another module's own: those get a fixed name. */
        if (code > -4096)
            return uv_err_name(code);
        return "error";
    }
}

/* Logging. Warnings about hostile input are rate-limited per client so a
 * flood of garbage costs counters, not log volume. */

static void warn_limited(struct gw_mcp_client *c, const char *msg, const char *detail)
{
    char sample[SAMPLE_BYTES + 1], said[256];
    uint64_t now = uv_now(c->loop);
    size_t n = 0;

    if (now - c->warn_window >= 1000) {
        c->warn_window = now;
        c->warn_count = 0;
    }
    if (++c->warn_count > WARN_PER_SECOND) {
        c->stats.log_suppressed++;
        return;
    }
    while (c->cur_msg && n < c->cur_len && n < SAMPLE_BYTES && c->cur_msg[n] != '\0') {
        sample[n] = c->cur_msg[n];
        n++;
    }
    /* the server's own bytes, in the sample and quoted by the parser's
     * complaint: its secrets are masked (security.md P6) */
    bool cut = n == SAMPLE_BYTES && n < c->cur_len;
    n = c->redact ? gw_redact_line(c->redact, sample, n, cut) : n;
    sample[n] = '\0';
    snprintf(said, sizeof said, "%s", detail ? detail : "");
    if (detail != NULL && c->redact != NULL)
        said[gw_redact_line(c->redact, said, strlen(said), false)] = '\0';
    gw_log(GW_LOG_WARN, msg, "server", c->server_id, "detail", detail ? said : NULL, "sample",
           c->cur_msg ? sample : NULL, NULL);
}

static void bad_shape(struct gw_mcp_client *c, const char *why)
{
    c->stats.bad_shape++;
    warn_limited(c, "upstream sent a malformed JSON-RPC message; dropped", why);
}

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

static struct pending *lookup(struct gw_mcp_client *c, uint64_t id)
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
}

static void maybe_free_client(struct gw_mcp_client *c)
{
    if (c->state != GW_MCP_CLOSING || c->open_handles > 0)
        return;
    json_decref(c->config);
    json_decref(c->server_info);
    json_decref(c->capabilities);
    free(c->buckets);
    free(c->cancelled);
    free(c->version);
    free(c->server_id);
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
    free(p->method);
    free(p);
}

/* Completes a request: out of the table first, so the callback may do
 * anything (send, cancel, close) without seeing it again. */
static void finish(struct pending *p, const struct gw_mcp_reply *r)
{
    gw_mcp_reply_cb cb = p->cb;
    void *data = p->data;

    detach(p->c, p);
    release(p);
    cb(data, r);
}

static void finish_error(struct pending *p, int code, const char *message, json_t *error)
{
    struct gw_mcp_reply r = {.code = code, .message = message, .error = error};

    finish(p, &r);
}

static void fail_all(struct gw_mcp_client *c, int code, const char *message)
{
    while (c->head)
        finish_error(c->head, code, message, NULL);
}

/* Sending. */

/* Serialises and sends `msg` (a reference is stolen). Compact jansson
 * output escapes control characters, so the text never holds a newline. */
static int send_json(struct gw_mcp_client *c, json_t *msg)
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

static int send_notification(struct gw_mcp_client *c, const char *method, json_t *params)
{
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);

    if (params)
        json_object_set(msg, "params", params);
    return send_json(c, msg);
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
    if (strcmp(p->method, "initialize") == 0)
        return;
    params = json_pack("{s:I}", "requestId", (json_int_t)p->id);
    if (reason)
        json_object_set_new(params, "reason", json_string(reason));
    rc = send_notification(c, "notifications/cancelled", params);
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
    finish_error(p, GW_MCP_E_TIMEOUT, msg, NULL);
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
                             gw_mcp_handle op, gw_mcp_handle *handle)
{
    struct pending *p;
    size_t len;
    char *text = gw_jbuf_take(b, &len);
    int rc;

    c->next_id = id;
    p = gw_xcalloc(1, sizeof *p);
    *p = (struct pending){.c = c, .id = id, .op = op ? op : id, .cb = cb, .data = data};
    p->method = gw_xstrdup(method);
    p->timeout_ms = timeout_ms;
    insert(c, p);
    rc = c->cb.send(c->cb.data, text, len);
    free(text);
    if (rc < 0) {
        if (lookup(c, id) != p)
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

static int send_request(struct gw_mcp_client *c, const char *method, json_t *params,
                        uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle op,
                        gw_mcp_handle *handle)
{
    struct gw_jbuf b = {0};
    uint64_t id;
    int rc = request_begin(c, &b, method, &id);

    if (rc == 0 && params != NULL) {
        gw_jbuf_lit(&b, ",\"params\":");
        if (gw_jbuf_value(&b, params) != 0)
            rc = UV_EINVAL;
    }
    if (rc != 0) {
        free(b.p);
        return rc;
    }
    gw_jbuf_lit(&b, "}");
    return send_request_text(c, id, method, &b, timeout_ms, cb, data, op, handle);
}

static int check_ready(const struct gw_mcp_client *c)
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
        warn_limited(c, "upstream answered a request twice; dropped", "duplicate id");
    } else {
        c->stats.unknown_ids++;
        warn_limited(c, "upstream answered an id mcpgw never sent; dropped", "unknown id");
    }
}

static void error_response(struct pending *p, json_t *error)
{
    json_t *code = json_object_get(error, "code");
    json_t *message = json_object_get(error, "message");
    char msg[TEXT_BYTES];

    if (!json_is_integer(code) || !json_is_string(message)) {
        bad_shape(p->c, "error object without an integer code and a string message");
        finish_error(p, GW_MCP_E_PROTOCOL, "the server answered with a malformed error object",
                     NULL);
        return;
    }
    snprintf(msg, sizeof msg, "the server answered %s with error %" JSON_INTEGER_FORMAT ": %s",
             p->method, json_integer_value(code), json_string_value(message));
    gw_utf8_trim(msg);
    finish_error(p, GW_MCP_E_RPC, msg, error);
}

static void handle_response(struct gw_mcp_client *c, json_t *m, json_t *id)
{
    json_t *result = json_object_get(m, "result");
    json_t *error = json_object_get(m, "error");
    struct pending *p;

    if (json_is_string(id) || json_is_real(id)) {
        c->stats.unknown_ids++;
        warn_limited(c, "upstream answered an id mcpgw never sent; dropped", "unknown id");
        return;
    }
    if (!json_is_integer(id)) {
        bad_shape(c, "response id is neither a string nor an integer");
        return;
    }
    p = json_integer_value(id) > 0 ? lookup(c, (uint64_t)json_integer_value(id)) : NULL;
    if (p == NULL) {
        stale_response(c, json_integer_value(id));
    } else if ((result == NULL) == (error == NULL)) {
        bad_shape(c, "response needs exactly one of result and error");
        finish_error(p, GW_MCP_E_PROTOCOL,
                     "the server's response had both or neither of "
                     "result and error",
                     NULL);
    } else if (error) {
        if (json_is_object(error))
            error_response(p, error);
        else
            error_response(p, NULL);
    } else if (!json_is_object(result)) {
        bad_shape(c, "result is not an object");
        finish_error(p, GW_MCP_E_PROTOCOL, "the server's result is not a JSON object", NULL);
    } else {
        struct gw_mcp_reply r = {.code = 0, .result = result};
        finish(p, &r);
    }
}

/* Receiving: server requests and notifications. */

static void send_no_method(struct gw_mcp_client *c, json_t *id, const char *method, const char *why)
{
    char text[TEXT_BYTES];
    json_t *msg;
    int rc;

    snprintf(text, sizeof text, "Method not found: %.200s", method);
    gw_utf8_trim(text);
    snprintf(text + strlen(text), sizeof text - strlen(text), " (%s)", why);
    gw_utf8_trim(text);
    msg = json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", id, "error",
                    "code", JSONRPC_NO_METHOD, "message", text, "data", "method", method);
    if (msg == NULL) /* never leave a server request unanswered (S9) */
        msg = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
                        JSONRPC_NO_METHOD, "message", "Method not found");
    gw_log(GW_LOG_INFO, "refused a server request", "server", c->server_id, "method", method, NULL);
    rc = send_json(c, msg);
    if (rc < 0)
        gw_log(GW_LOG_DEBUG, "could not answer a server request", "server", c->server_id, "error",
               uv_err_name(rc), NULL);
}

/* The requests the gateway declared a capability for (sampling,
 * elicitation) go to the owner, who answers them with
 * gw_mcp_client_respond(); `ping` is answered {} here; anything else gets
 * -32601 at once (S9). */
static void handle_server_request(struct gw_mcp_client *c, const char *method, json_t *id,
                                  json_t *m)
{
    json_t *params = json_object_get(m, "params");
    bool relayable =
        strcmp(method, "sampling/createMessage") == 0 || strcmp(method, "elicitation/create") == 0;

    if (!json_is_string(id) && !json_is_integer(id)) {
        bad_shape(c, "request id is neither a string nor an integer");
        return;
    }
    c->stats.server_requests++;
    if (strcmp(method, "ping") == 0) {
        send_json(c, json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", id, "result"));
        return;
    }
    if (relayable && (params == NULL || json_is_object(params)) && c->cb.on_request != NULL &&
        c->cb.on_request(c->cb.data, method, id, params) == 0)
        return;
    send_no_method(c, id, method, "mcpgw does not serve it");
}

int gw_mcp_client_respond(struct gw_mcp_client *c, json_t *id, json_t *result, json_t *error)
{
    json_t *msg;
    int rc = check_ready(c);

    if (rc < 0)
        return rc;
    if (id == NULL || (result == NULL) == (error == NULL))
        return UV_EINVAL;
    msg = json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", id);
    json_object_set(msg, result ? "result" : "error", result ? result : error);
    return send_json(c, msg);
}

static int is_known_notification(const char *method)
{
    for (size_t i = 0; i < GW_ARRAY_SIZE(known_notifications); i++) {
        if (strcmp(method, known_notifications[i]) == 0)
            return 1;
    }
    return 0;
}

static void handle_notification(struct gw_mcp_client *c, const char *method, json_t *m)
{
    json_t *params = json_object_get(m, "params");

    if (params && !json_is_object(params)) {
        bad_shape(c, "notification params is not an object");
        return;
    }
    c->stats.notifications++;
    if (!is_known_notification(method)) {
        c->stats.unknown_notifications++;
        gw_log(GW_LOG_DEBUG, "upstream sent an unknown notification", "server", c->server_id,
               "method", method, NULL);
    }
    if (strcmp(method, "notifications/tools/list_changed") == 0) {
        if (c->cb.on_tools_changed)
            c->cb.on_tools_changed(c->cb.data);
    } else if (c->cb.on_notification) {
        c->cb.on_notification(c->cb.data, method, m);
    }
}

static void handle_one(struct gw_mcp_client *c, json_t *m)
{
    json_t *jsonrpc, *method, *id;

    if (!json_is_object(m)) {
        bad_shape(c, "message is not a JSON object");
        return;
    }
    jsonrpc = json_object_get(m, "jsonrpc");
    method = json_object_get(m, "method");
    id = json_object_get(m, "id");
    if (!json_is_string(jsonrpc) || strcmp(json_string_value(jsonrpc), "2.0") != 0)
        bad_shape(c, "jsonrpc is not \"2.0\"");
    else if (method && !json_is_string(method))
        bad_shape(c, "method is not a string");
    else if (method && id)
        handle_server_request(c, json_string_value(method), id, m);
    else if (method)
        handle_notification(c, json_string_value(method), m);
    else if (id)
        handle_response(c, m, id);
    else
        bad_shape(c, "message has neither method nor id");
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
        warn_limited(c, "upstream sent a line that is not JSON; dropped", err.text);
    } else if (json_is_array(root)) {
        /* A batch (2025-03-26 only, but harmless to accept from anyone). */
        if (json_array_size(root) == 0)
            bad_shape(c, "empty batch");
        for (size_t i = 0; i < json_array_size(root) && c->state != GW_MCP_CLOSING; i++)
            handle_one(c, json_array_get(root, i));
    } else {
        handle_one(c, root);
    }
    json_decref(root);
    c->cur_msg = NULL;
}

/* The handshake. */

static int accepted_version(const char *v)
{
    for (size_t i = 0; i < GW_ARRAY_SIZE(accepted_versions); i++) {
        if (strcmp(v, accepted_versions[i]) == 0)
            return 1;
    }
    return 0;
}

/* `reason` may quote the server (its initialize error): masked here, so
 * the log and everything on_failed feeds (Problems, /v1/servers) see the
 * masked text only. */
static void handshake_failed(struct gw_mcp_client *c, int code, const char *reason)
{
    char *why = gw_xstrdup(reason);

    if (c->redact != NULL)
        why[gw_redact_line(c->redact, why, strlen(why), false)] = '\0';
    if (c->state == GW_MCP_INITIALIZING)
        c->state = GW_MCP_FAILED;
    gw_log(GW_LOG_WARN, "initialize failed", "server", c->server_id, "error", why, NULL);
    if (c->cb.on_failed)
        c->cb.on_failed(c->cb.data, code, why);
    free(why);
}

/* Checks the initialize result; returns NULL or a sentence in `buf`. */
static const char *check_init_result(json_t *r, char *buf, size_t cap)
{
    json_t *v = json_object_get(r, "protocolVersion");
    json_t *caps = json_object_get(r, "capabilities");
    json_t *info = json_object_get(r, "serverInfo");

    if (!json_is_string(v))
        return "the server's initialize result has no protocolVersion string";
    if (!accepted_version(json_string_value(v))) {
        snprintf(buf, cap,
                 "the server answered protocol version \"%.64s\", which mcpgw does not support "
                 "(supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
                 json_string_value(v));
        return buf;
    }
    if (caps && !json_is_object(caps))
        return "the server's initialize result has capabilities that are not an object";
    if (info && !json_is_object(info))
        return "the server's initialize result has serverInfo that is not an object";
    return NULL;
}

static void init_done(void *data, const struct gw_mcp_reply *r)
{
    struct gw_mcp_client *c = data;
    char buf[TEXT_BYTES];
    const char *why;
    json_t *caps, *info;
    int rc;

    if (r->code == GW_MCP_E_CLOSED)
        return; /* no callbacks after close */
    if (r->code != 0) {
        snprintf(buf, sizeof buf, "initialize failed: %s", r->message);
        handshake_failed(c, r->code, buf);
        return;
    }
    why = check_init_result(r->result, buf, sizeof buf);
    if (why) {
        handshake_failed(c, GW_MCP_E_PROTOCOL, why);
        return;
    }
    caps = json_object_get(r->result, "capabilities");
    info = json_object_get(r->result, "serverInfo");
    c->version = gw_xstrdup(json_string_value(json_object_get(r->result, "protocolVersion")));
    c->capabilities = caps ? json_incref(caps) : json_object();
    c->server_info = info ? json_incref(info) : json_object();
    rc = send_notification(c, "notifications/initialized", NULL);
    if (rc < 0) {
        handshake_failed(c, rc, "could not send notifications/initialized");
        return;
    }
    c->state = GW_MCP_READY;
    gw_log(GW_LOG_DEBUG, "upstream initialized", "server", c->server_id, "version", c->version,
           NULL);
    if (c->cb.on_ready)
        c->cb.on_ready(c->cb.data, c->version, c->server_info, c->capabilities);
}

int gw_mcp_client_start(struct gw_mcp_client *c)
{
    json_t *params;
    int rc;

    if (c->state != GW_MCP_NEW)
        return UV_EINVAL;
    /* sampling and elicitation are relayed to the /mcp session whose call
     * caused them (design §9). MCP Apps is declared because the gateway
     * passes its `_meta` and ui:// resources on to hosts that render them:
     * some servers offer their UI only to a client that declares it. */
    params = json_pack("{s:s, s:{s:{}, s:{}, s:{s:{s:[s]}}}, s:{s:s, s:s}}", "protocolVersion",
                       GW_MCP_PROTOCOL_VERSION, "capabilities", "sampling", "elicitation",
                       "extensions", GW_MCP_EXT_UI, "mimeTypes", GW_MCP_EXT_UI_MIME, "clientInfo",
                       "name", "mcpgw", "version", c->client_version);
    if (c->config)
        json_object_set(params, "config", c->config);
    c->state = GW_MCP_INITIALIZING;
    rc = send_request(c, "initialize", params, c->init_timeout_ms, init_done, c, 0, NULL);
    json_decref(params);
    if (rc < 0 && c->state == GW_MCP_INITIALIZING)
        c->state = GW_MCP_FAILED;
    return rc;
}

/* Lifetime. */

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
                            ? lookup(c, (uint64_t)json_integer_value(id))
                            : NULL;

    if (p != NULL)
        finish_error(p, GW_MCP_E_NOT_RUN, why, NULL);
}

/* Requests. */

int gw_mcp_client_request(struct gw_mcp_client *c, const char *method, json_t *params,
                          uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                          gw_mcp_handle *handle)
{
    int rc = check_ready(c);

    if (rc < 0)
        return rc;
    if (method == NULL || cb == NULL || (params && !json_is_object(params)))
        return UV_EINVAL;
    return send_request(c, method, params, timeout_ms, cb, data, 0, handle);
}

int gw_mcp_client_notify(struct gw_mcp_client *c, const char *method, json_t *params)
{
    int rc = check_ready(c);

    if (rc < 0)
        return rc;
    if (method == NULL || (params && !json_is_object(params)))
        return UV_EINVAL;
    return send_notification(c, method, params);
}

int gw_mcp_client_ping(struct gw_mcp_client *c, uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                       gw_mcp_handle *handle)
{
    return gw_mcp_client_request(c, "ping", NULL, timeout_ms, cb, data, handle);
}

int gw_mcp_client_call_tool(struct gw_mcp_client *c, const char *name, json_t *arguments,
                            json_t *progress_token, uint64_t timeout_ms, gw_mcp_reply_cb cb,
                            void *data, gw_mcp_handle *handle)
{
    struct gw_jbuf b = {0};
    uint64_t id;
    int rc;

    if (name == NULL || (arguments && !json_is_object(arguments)))
        return UV_EINVAL;
    if (progress_token && !json_is_string(progress_token) && !json_is_integer(progress_token))
        return UV_EINVAL;
    rc = check_ready(c);
    if (rc < 0)
        return rc;
    if (cb == NULL)
        return UV_EINVAL;
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
    if (rc == 0 && progress_token != NULL) {
        gw_jbuf_lit(&b, ",\"_meta\":{\"progressToken\":");
        if (gw_jbuf_value(&b, progress_token) != 0)
            rc = UV_EINVAL;
        gw_jbuf_lit(&b, "}");
    }
    if (rc != 0) {
        free(b.p);
        return rc;
    }
    gw_jbuf_lit(&b, "}}");
    return send_request_text(c, id, "tools/call", &b, timeout_ms, cb, data, 0, handle);
}

/* Paginated lists. */

static void pager_report(struct pager *pg, const struct gw_mcp_reply *r)
{
    pg->cb(pg->data, r);
    json_decref(pg->items);
    free(pg->method);
    free(pg->key);
    free(pg);
}

static void pager_fail(struct pager *pg, int code, const char *why, json_t *error)
{
    struct gw_mcp_reply r = {.code = code, .message = why, .error = error};

    pager_report(pg, &r);
}

static void page_done(void *data, const struct gw_mcp_reply *r);

/* Checks one page and appends its items; returns 0 or a code with `buf`. */
static int pager_take(struct pager *pg, json_t *result, char *buf, size_t cap)
{
    json_t *arr = json_object_get(result, pg->key);

    if (!json_is_array(arr)) {
        snprintf(buf, cap, "%s page %u is not an object with a \"%s\" array", pg->method, pg->pages,
                 pg->key);
        return GW_MCP_E_PROTOCOL;
    }
    if (json_array_size(pg->items) + json_array_size(arr) > GW_MCP_MAX_LIST_ITEMS) {
        snprintf(buf, cap, "%s returned more than %d %s; mcpgw reads at most that many", pg->method,
                 GW_MCP_MAX_LIST_ITEMS, pg->key);
        return GW_MCP_E_LIMIT;
    }
    json_array_extend(pg->items, arr);
    return 0;
}

/* The cursor of the next page, or NULL at the end. A null or empty
 * nextCursor also ends the list: some servers send one instead of leaving
 * it out, and following "" would start over at the first page. */
static int next_cursor(struct pager *pg, json_t *result, const char **out, char *buf, size_t cap)
{
    json_t *cur = json_object_get(result, "nextCursor");

    *out = NULL;
    if (cur == NULL || json_is_null(cur))
        return 0;
    if (!json_is_string(cur)) {
        snprintf(buf, cap, "%s page %u has a nextCursor that is not a string", pg->method,
                 pg->pages);
        return GW_MCP_E_PROTOCOL;
    }
    if (json_string_length(cur) == 0)
        return 0;
    if (pg->pages >= GW_MCP_MAX_LIST_PAGES) {
        snprintf(buf, cap, "%s still had a nextCursor after %d pages; mcpgw reads at most %d",
                 pg->method, GW_MCP_MAX_LIST_PAGES, GW_MCP_MAX_LIST_PAGES);
        return GW_MCP_E_LIMIT;
    }
    *out = json_string_value(cur);
    return 0;
}

static void page_done(void *data, const struct gw_mcp_reply *r)
{
    struct pager *pg = data;
    char buf[TEXT_BYTES];
    const char *cursor;
    json_t *params;
    int rc;

    pg->pages++;
    if (r->code != 0) {
        snprintf(buf, sizeof buf, "%s page %u: %s", pg->method, pg->pages, r->message);
        pager_fail(pg, r->code, buf, r->error);
        return;
    }
    rc = pager_take(pg, r->result, buf, sizeof buf);
    if (rc == 0)
        rc = next_cursor(pg, r->result, &cursor, buf, sizeof buf);
    if (rc < 0) {
        gw_log(GW_LOG_WARN, "list rejected", "server", pg->c->server_id, "error", buf, NULL);
        pager_fail(pg, rc, buf, NULL);
        return;
    }
    if (cursor == NULL) {
        struct gw_mcp_reply ok = {.code = 0, .result = pg->items};
        pager_report(pg, &ok);
        return;
    }
    params = json_pack("{s:s}", "cursor", cursor);
    rc = send_request(pg->c, pg->method, params, pg->timeout_ms, page_done, pg, pg->op, NULL);
    json_decref(params);
    if (rc < 0) {
        snprintf(buf, sizeof buf, "could not request %s page %u: %s", pg->method, pg->pages + 1,
                 gw_mcp_strerror(rc));
        pager_fail(pg, rc, buf, NULL);
    }
}

int gw_mcp_client_list_all(struct gw_mcp_client *c, const char *method, const char *key,
                           uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                           gw_mcp_handle *handle)
{
    struct pager *pg;
    int rc = check_ready(c);

    if (rc < 0)
        return rc;
    if (method == NULL || key == NULL || cb == NULL)
        return UV_EINVAL;
    pg = gw_xcalloc(1, sizeof *pg);
    *pg = (struct pager){.c = c, .timeout_ms = timeout_ms, .cb = cb, .data = data};
    pg->method = gw_xstrdup(method);
    pg->key = gw_xstrdup(key);
    pg->items = json_array();
    rc = send_request(c, method, NULL, timeout_ms, page_done, pg, 0, &pg->op);
    if (rc < 0) {
        json_decref(pg->items);
        free(pg->method);
        free(pg->key);
        free(pg);
        return rc;
    }
    if (handle)
        *handle = pg->op;
    return 0;
}

int gw_mcp_client_list_tools(struct gw_mcp_client *c, uint64_t timeout_ms, gw_mcp_reply_cb cb,
                             void *data, gw_mcp_handle *handle)
{
    return gw_mcp_client_list_all(c, "tools/list", "tools", timeout_ms, cb, data, handle);
}

/* Cancellation: the handle is the id of the operation's first request;
 * later pages of a list carry it in `op`, so fall back to a walk. */
int gw_mcp_client_cancel(struct gw_mcp_client *c, gw_mcp_handle handle, const char *reason)
{
    struct pending *p = lookup(c, handle);
    char msg[TEXT_BYTES];

    if (p == NULL || p->op != handle) {
        p = c->head;
        while (p && p->op != handle)
            p = p->next;
    }
    if (p == NULL || strcmp(p->method, "initialize") == 0)
        return UV_ENOENT;
    snprintf(msg, sizeof msg, "%s was cancelled%s%.200s", p->method, reason ? ": " : "",
             reason ? reason : "");
    gw_utf8_trim(msg);
    cancel_upstream(c, p, reason);
    finish_error(p, GW_MCP_E_CANCELLED, msg, NULL);
    return 0;
}

/* Accessors. */

enum gw_mcp_state gw_mcp_client_state(const struct gw_mcp_client *c)
{
    return c->state;
}

const char *gw_mcp_client_version(const struct gw_mcp_client *c)
{
    return c->version;
}

json_t *gw_mcp_client_server_info(const struct gw_mcp_client *c)
{
    return c->server_info;
}

json_t *gw_mcp_client_capabilities(const struct gw_mcp_client *c)
{
    return c->capabilities;
}

void gw_mcp_client_stats(const struct gw_mcp_client *c, struct gw_mcp_client_stats *out)
{
    *out = c->stats;
    out->in_flight = c->n_pending;
}
