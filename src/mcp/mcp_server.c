/* /mcp over HTTP: the streamable HTTP transport of MCP 2025-11-25 on the
 * server side. This file reads methods, headers and POST bodies, and
 * answers; sessions are mcp_session.c's, JSON-RPC methods mcp_methods.c's.
 *
 * Transport-level refusals carry a JSON-RPC error body with id null (as the
 * SDK servers send them), not the REST error shape: the reader is an MCP
 * client. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/json_in.h"
#include "gw/json_out.h"
#include "gw/log.h"
#include "gw/policy.h"
#include "gw/trace.h"
#include "gw/util.h"

static const char *const allow_header[] = {"Allow: GET, POST, DELETE", NULL};

/* Built member by member: json_pack parses its format on every call
 * (~2,000 instructions), and every answer of /mcp comes through here. */
json_t *gw_mcp__result(json_t *id, json_t *result)
{
    json_t *r;

    if (id == NULL || result == NULL) { /* as json_pack's "O" and "o" would */
        json_decref(result);
        return NULL;
    }
    r = json_object();
    json_object_set_new(r, "jsonrpc", json_string("2.0"));
    json_object_set(r, "id", id);
    json_object_set_new(r, "result", result);
    return r;
}

json_t *gw_mcp__error(json_t *id, int code, const char *message)
{
    return json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", code,
                     "message", message);
}

/* The id of the request a POST body holds (a new reference), or NULL when
 * it holds none: a refusal names the request it refuses whenever it can.
 * The body is read again only on this error path. */
static json_t *body_id(const struct gw_http_request *req)
{
    json_t *body, *id;

    if (req->body_len == 0 || strcmp(req->method, "POST") != 0)
        return NULL;
    body = gw_json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
    id = json_object_get(body, "id");
    id = json_is_string(id) || json_is_integer(id) ? json_incref(id) : NULL;
    json_decref(body);
    return id;
}

/* A transport-level refusal: HTTP `status` with a JSON-RPC error body. */
static void refuse(struct gw_http_request *req, int status, int code, const char *message,
                   const char *const *headers)
{
    json_t *id = body_id(req);

    gw_http_respond_json(req, status, gw_mcp__error(id, code, message), headers);
    json_decref(id);
}

/* ---- Accept and headers ---- */

/* Whether `h` holds `n` bytes equal to `w` (ASCII, any case) at some
 * position. strcasestr costs ~800 instructions on a short Accept header
 * (its two-way setup). */
static bool has_ci(const char *h, const char *w, size_t n)
{
    for (; *h != '\0'; h++)
        if ((*h | 0x20) == (*w | 0x20) && strncasecmp(h, w, n) == 0)
            return true;
    return false;
}

enum { ACCEPT_JSON = 1, ACCEPT_SSE = 2 };

/* Which of application/json and text/event-stream the Accept header
 * allows, both in one pass. A missing header allows everything (curl);
 * wildcards count. Parameters (q=…) are not weighed: a type listed at all
 * is taken as acceptable. */
static unsigned accepted(const char *accept)
{
    unsigned bits = 0;

    /* what the SDKs send, settled by one comparison (~180 instructions
     * fewer, twice per request) */
    if (accept == NULL || strcmp(accept, "application/json, text/event-stream") == 0 ||
        strstr(accept, "*/*") != NULL)
        return ACCEPT_JSON | ACCEPT_SSE;
    if (has_ci(accept, "application/json", 16))
        bits |= ACCEPT_JSON;
    if (has_ci(accept, "text/event-stream", 17))
        bits |= ACCEPT_SSE;
    /* "application/ *" and "text/ *" (written without the space) */
    for (const char *p = accept;
         bits != (ACCEPT_JSON | ACCEPT_SSE) && (p = strstr(p, "/*")) != NULL; p += 2) {
        if (p - accept >= 11 && strncasecmp(p - 11, "application", 11) == 0)
            bits |= ACCEPT_JSON;
        if (p - accept >= 4 && strncasecmp(p - 4, "text", 4) == 0)
            bits |= ACCEPT_SSE;
    }
    return bits;
}

/* Checks MCP-Protocol-Version when present (absent: the spec's 2025-03-26
 * assumption, which changes nothing here). Returns 0, or -1 after
 * answering 400. */
static int check_version_header(struct gw_http_request *req)
{
    const char *v = gw_http_header(req, "mcp-protocol-version");
    char *msg;

    if (v == NULL || gw_mcp__version_supported(v))
        return 0;
    msg = gw_xasprintf("Bad Request: unsupported MCP-Protocol-Version; supported: %s, %s, %s, %s",
                       gw_mcp__versions[0], gw_mcp__versions[1], gw_mcp__versions[2],
                       gw_mcp__versions[3]);
    refuse(req, 400, RPC_BAD_REQUEST, msg, NULL);
    free(msg);
    return -1;
}

/* The dialog the URL names (/mcp/d/{dialog}): 0 with `canon` set ("" for
 * /mcp), or -1 after answering 400. */
static int url_dialog(struct gw_http_request *req, char *canon)
{
    const char *given = req->path + strlen(GW_MCP_DIALOG_PATH);
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1];

    canon[0] = '\0';
    if (strncmp(req->path, GW_MCP_DIALOG_PATH, strlen(GW_MCP_DIALOG_PATH)) != 0 ||
        gw_dialog_parse(given, root, self, canon) == 0)
        return 0;
    refuse(req, 400, RPC_BAD_REQUEST,
           "Bad Request: the URL must be /mcp/d/root or /mcp/d/root/self, each part 1-64 "
           "characters of A-Z a-z 0-9 _ . -",
           NULL);
    return -1;
}

/* Sets *out to the session the request names and returns 0, or returns -1
 * after answering 400 (no Mcp-Session-Id, or a URL naming a dialog that is
 * not the session's) or 404 (unknown or ended: the client must initialize
 * again). */
static int session_of(struct gw_mcp_server *ms, struct gw_http_request *req,
                      struct gw_mcp_session **out)
{
    const char *id = gw_http_header(req, "mcp-session-id");
    char in_url[GW_DIALOG_MAX + 1];
    struct gw_mcp_session *s;

    if (id == NULL) {
        refuse(req, 400, RPC_BAD_REQUEST,
               "Bad Request: Mcp-Session-Id header is required (initialize first)", NULL);
        return -1;
    }
    s = gw_mcp__session_find(ms, id);
    /* another client's session is none: its id says nothing to others */
    if (s != NULL && strcmp(s->client, req->client) != 0)
        s = NULL;
    if (s == NULL) {
        refuse(req, 404, RPC_SESSION_NOT_FOUND, "Session not found: initialize a new session",
               NULL);
        return -1;
    }
    if (url_dialog(req, in_url) != 0)
        return -1;
    if (in_url[0] != '\0')
        gw_dialog_scope(req->client, in_url, in_url);
    if (in_url[0] != '\0' && strcmp(in_url, s->dialog) != 0) {
        refuse(req, 400, RPC_BAD_REQUEST,
               "Bad Request: this session belongs to another dialog than the URL names", NULL);
        return -1;
    }
    s->last_used_ms = gw_now_ms();
    *out = s;
    return 0;
}

/* ---- exchanges ---- */

static void on_exchange_abort(struct gw_http_request *req, void *data)
{
    struct gw_mcp_exchange *x = data;

    /* A dropped connection is not a cancellation in 2025-era sessions: calls
     * run on, and an answer not yet begun as a stream gave the client no
     * event id to resume from, so it is dropped. A 2026-07-28 client
     * cancels a request by closing its stream. */
    x->req = NULL;
    if (x->own == NULL)
        return;
    x->waiting++; /* the last outcome must not free x inside the loop */
    gw_mcp__calls_cancel(x->own, "the client closed the request's stream");
    gw_mcp__exchange_done(x);
}

struct gw_mcp_exchange *gw_mcp__exchange_new(struct gw_http_request *req, bool batch)
{
    struct gw_mcp_exchange *x = gw_xcalloc(1, sizeof *x);
    unsigned bits = accepted(gw_http_header(req, "accept"));

    x->req = req;
    x->batch = batch;
    x->waiting = 1; /* released by the dispatcher once every message is read */
    x->sse = !(bits & ACCEPT_JSON);
    x->sse_ok = bits & ACCEPT_SSE;
    return x;
}

void gw_mcp__exchange_watch(struct gw_mcp_exchange *x)
{
    gw_http_on_abort(x->req, on_exchange_abort, x);
}

void gw_mcp__exchange_add(struct gw_mcp_exchange *x, json_t *reply)
{
    if (reply == NULL) /* none yet (a call), or already written (x->answer) */
        return;
    if (x->replies == NULL) /* a call answered as text never needs one */
        x->replies = json_array();
    json_array_append_new(x->replies, reply);
}

char *gw_mcp__sse_event(json_t *msg)
{
    char *data = gw_json_dump(msg, NULL);
    char *text = gw_xasprintf("event: message\ndata: %s\n\n", data ? data : "null");

    free(data);
    return text;
}

static void send_sse(struct gw_http_request *req, json_t *body, const char *const *headers)
{
    char *text = gw_mcp__sse_event(body);

    gw_http_stream_begin(req, 200, "text/event-stream", headers);
    gw_http_stream_write(req, text, strlen(text), MCP_MAX_QUEUED);
    gw_http_stream_end(req);
    free(text);
    json_decref(body);
}

/* One event of a 2026-07-28 answer: no id (no resumption in that
 * revision). A client that does not keep up loses its stream; the call
 * runs to its end unheard (cancelling it here would free the call whose
 * progress is being written). */
static void modern_event(struct gw_mcp_exchange *x, json_t *msg)
{
    static const char *const headers[] = {"Cache-Control: no-store", NULL};
    char *text = gw_mcp__sse_event(msg);

    if (!x->streaming)
        gw_http_stream_begin(x->req, 200, "text/event-stream", headers);
    x->streaming = true;
    if (gw_http_stream_write(x->req, text, strlen(text), MCP_MAX_QUEUED) == UV_ENOBUFS) {
        gw_log(GW_LOG_WARN, "mcp stream client too slow; request ended", "peer", x->req->peer,
               NULL);
        gw_http_on_abort(x->req, NULL, NULL);
        gw_http_stream_end(x->req);
        x->req = NULL;
    }
    free(text);
}

int gw_mcp__exchange_stream(struct gw_mcp_exchange *x, struct gw_mcp_session *s, json_t *msg)
{
    if (x->own != NULL) {
        if (x->req == NULL || !x->sse_ok)
            return -1;
        modern_event(x, msg);
        return 0;
    }
    if (x->stream == NULL) {
        if (x->req == NULL || !x->sse_ok || x->session_header != NULL || s == NULL)
            return -1;
        x->stream = gw_mcp__stream_open(s, x, x->req);
        x->req = NULL; /* the stream's now */
    }
    gw_mcp__stream_send(x->stream, msg);
    return 0;
}

static void exchange_answer(struct gw_mcp_exchange *x)
{
    const char *headers[] = {x->session_header, NULL};
    json_t *body, *code;
    int status = 200;

    if (json_array_size(x->replies) == 0) {
        gw_http_respond(x->req, 202, NULL, NULL, 0, headers);
        return;
    }
    body = x->batch ? json_incref(x->replies) : json_incref(json_array_get(x->replies, 0));
    code = json_object_get(json_object_get(body, "error"), "code");
    if (x->own != NULL && json_is_integer(code))
        status = gw_mcp__modern_status((int)json_integer_value(code));
    if (x->sse && status == 200)
        send_sse(x->req, body, headers);
    else
        gw_http_respond_json(x->req, status, body, headers);
}

/* 2026-07-28: the answer goes on the stream begun for progress or logs,
 * or as the whole response. */
static void modern_done(struct gw_mcp_exchange *x)
{
    if (x->answer != NULL && x->req != NULL) {
        gw_http_on_abort(x->req, NULL, NULL);
        gw_http_respond_json_text(x->req, 200, x->answer, x->answer_len, NULL);
        x->req = NULL;
    }
    for (size_t i = 0; i < json_array_size(x->replies); i++) {
        json_t *reply = json_array_get(x->replies, i);
        json_t *result = json_object_get(reply, "result");

        if (!json_is_object(result))
            continue;
        /* It may be the upstream's own object, shared: decorated on a copy
         * unless the reply holds the only reference (a tools/call's reply
         * is already a copy). */
        if (result->refcount > 1) {
            result = json_copy(result);
            json_object_set_new(reply, "result", result);
        }
        gw_mcp__modern_decorate(x->method, result);
    }
    if (x->req != NULL && x->streaming) {
        gw_http_on_abort(x->req, NULL, NULL);
        for (size_t i = 0; i < json_array_size(x->replies); i++)
            modern_event(x, json_array_get(x->replies, i));
        if (x->req != NULL)
            gw_http_stream_end(x->req);
    } else if (x->req != NULL) {
        gw_http_on_abort(x->req, NULL, NULL);
        exchange_answer(x);
    }
    gw_mcp__modern_free(x->own);
    free(x->method);
}

void gw_mcp__exchange_done(struct gw_mcp_exchange *x)
{
    if (--x->waiting > 0)
        return;
    if (x->own != NULL) {
        modern_done(x);
    } else if (x->stream != NULL) {
        for (size_t i = 0; i < json_array_size(x->replies); i++)
            gw_mcp__stream_send(x->stream, json_array_get(x->replies, i));
        gw_mcp__stream_finish(x->stream);
    } else if (x->req != NULL) {
        gw_http_on_abort(x->req, NULL, NULL);
        exchange_answer(x);
    }
    json_decref(x->replies);
    free(x->session_header);
    free(x->answer);
    free(x);
}

/* ---- POST ---- */

/* Whether the body says it is JSON; false after answering 415. */
static bool json_body(struct gw_http_request *req)
{
    if (gw_http_body_is_json(req))
        return true;
    refuse(req, 415, RPC_BAD_REQUEST, "Unsupported Media Type: the body must be application/json",
           NULL);
    return false;
}

/* Parses the body; returns it, or NULL after answering. */
static json_t *parse_body(struct gw_http_request *req)
{
    json_error_t err;
    json_t *body;
    char *msg;

    body = gw_json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
    if (body != NULL)
        return body;
    msg = gw_xasprintf("Parse error: invalid JSON at line %d column %d: %s", err.line, err.column,
                       err.text);
    refuse(req, 400, RPC_PARSE_ERROR, msg, NULL);
    free(msg);
    return NULL;
}

static bool is_initialize(json_t *msg)
{
    const char *method = json_string_value(json_object_get(msg, "method"));

    return method != NULL && strcmp(method, "initialize") == 0 &&
           json_object_get(msg, "id") != NULL;
}

int gw_mcp__named_dialog(struct gw_http_request *req, char *canon)
{
    const char *given = gw_http_header(req, "x-mcpgw-dialog");
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1], in_url[GW_DIALOG_MAX + 1];

    if (url_dialog(req, in_url) != 0)
        return -1;
    canon[0] = '\0';
    if (given != NULL && gw_dialog_parse(given, root, self, canon) != 0) {
        refuse(req, 400, RPC_BAD_REQUEST,
               "Bad Request: X-Mcpgw-Dialog must be \"root\" or \"root/self\", each 1-64 "
               "characters of A-Z a-z 0-9 _ . -",
               NULL);
        return -1;
    }
    if (given != NULL && in_url[0] != '\0' && strcmp(canon, in_url) != 0) {
        refuse(req, 400, RPC_BAD_REQUEST,
               "Bad Request: X-Mcpgw-Dialog and the URL name different dialogs", NULL);
        return -1;
    }
    if (given == NULL)
        memcpy(canon, in_url, sizeof in_url);
    return 0;
}

static int create_session(struct gw_mcp_server *ms, struct gw_http_request *req, const char *dialog,
                          struct gw_mcp_session **out)
{
    static const char *const retry[] = {"Retry-After: 5", NULL};
    int rc = gw_mcp__session_new(ms, req->client, dialog[0] ? dialog : NULL, out);

    if (rc == 0) {
        gw_strlcpy((*out)->client, req->client, sizeof(*out)->client);
        gw_mcp__view_note(ms, req->client);
    }
    if (rc == UV_EBUSY) {
        gw_log(GW_LOG_WARN, "mcp session refused: too many sessions", "peer", req->peer, NULL);
        refuse(req, 503, RPC_BAD_REQUEST,
               "Service Unavailable: too many MCP sessions; end unused ones with DELETE", retry);
    } else if (rc != 0) {
        gw_log(GW_LOG_ERROR, "cannot make a session id", "error", uv_strerror(rc), NULL);
        refuse(req, 500, RPC_INTERNAL_ERROR, "the gateway could not make a session id", NULL);
    }
    return rc;
}

/* initialize without Mcp-Session-Id: a new session, named in the answer. */
static void post_initialize(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    char dialog[GW_DIALOG_MAX + 1];
    const char *version = NULL;
    struct gw_mcp_session *s;
    struct gw_mcp_exchange *x;
    struct gw_trace_ctx remote; /* only .valid is read until a parse fills it */
    remote.valid = false;
    struct gw_span *span;
    json_t *reply, *err = gw_mcp__initialize_check(id, json_object_get(msg, "params"), &version);

    if (err != NULL) {
        gw_http_respond_json(req, 400, err, NULL);
        return;
    }
    if (gw_mcp__named_dialog(req, dialog) != 0 || create_session(ms, req, dialog, &s) != 0)
        return;
    snprintf(s->version, sizeof s->version, "%s", version);
    s->caps = gw_mcp__client_caps(json_object_get(json_object_get(msg, "params"), "capabilities"),
                                  &s->url_elicitation);
    gw_log(GW_LOG_INFO, "mcp session started", "dialog", s->dialog, "version", s->version, "peer",
           req->peer, NULL);
    x = gw_mcp__exchange_new(req, false);
    x->session_header = gw_xasprintf("Mcp-Session-Id: %s", s->id);
    span = gw_trace_on() ? gw_mcp__span_begin(s, x, "initialize", id,
                                              json_object_get(msg, "params"), NULL, &remote)
                         : NULL;
    reply = gw_mcp__result(id, gw_mcp__initialize_result(ms, version));
    gw_mcp__span_reply(span, reply);
    gw_mcp__exchange_add(x, reply);
    gw_mcp__exchange_done(x);
}

/* A 2025-03-26 batch, or one message, on an existing session. */
static void post_messages(struct gw_mcp_session *s, struct gw_http_request *req, json_t *body)
{
    bool batch = json_is_array(body);
    struct gw_mcp_exchange *x;

    if (batch && strcmp(s->version, "2025-03-26") != 0) {
        refuse(req, 400, RPC_INVALID_REQUEST,
               "Invalid Request: batches are accepted only in sessions that negotiated "
               "2025-03-26",
               NULL);
        return;
    }
    if (batch && (json_array_size(body) == 0 || json_array_size(body) > MCP_MAX_BATCH)) {
        refuse(req, 400, RPC_INVALID_REQUEST, "Invalid Request: a batch holds 1 to 100 messages",
               NULL);
        return;
    }
    x = gw_mcp__exchange_new(req, batch);
    gw_mcp__exchange_watch(x);
    for (size_t i = 0; i < (batch ? json_array_size(body) : 1); i++)
        gw_mcp__dispatch(s, x, batch ? json_array_get(body, i) : body);
    gw_mcp__exchange_done(x);
}

/* A POST of 2025-11-25 or earlier: initialize, or a session's messages. */
static void post_legacy(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *body)
{
    struct gw_mcp_session *s;

    if (!json_is_object(body) && !json_is_array(body))
        refuse(req, 400, RPC_INVALID_REQUEST,
               "Invalid Request: the body must be a JSON-RPC message (an object)", NULL);
    else if (gw_http_header(req, "mcp-session-id") == NULL && is_initialize(body))
        post_initialize(ms, req, body);
    else if (session_of(ms, req, &s) == 0)
        post_messages(s, req, body);
}

static void handle_post(struct gw_mcp_server *ms, struct gw_http_request *req)
{
    const char *accept = gw_http_header(req, "accept");
    json_t *body;

    if (accepted(accept) == 0) {
        refuse(req, 406, RPC_BAD_REQUEST,
               "Not Acceptable: accept application/json or text/event-stream", NULL);
        return;
    }
    if (!json_body(req) || gw_mcp__modern_call_text(ms, req))
        return;
    body = parse_body(req);
    if (body == NULL)
        return;
    if (!gw_mcp__modern_post(ms, req, body) && check_version_header(req) == 0)
        post_legacy(ms, req, body);
    json_decref(body);
}

/* ---- GET and DELETE ---- */

static void handle_get(struct gw_mcp_server *ms, struct gw_http_request *req)
{
    const char *accept = gw_http_header(req, "accept");
    const char *last = gw_http_header(req, "last-event-id");
    struct gw_mcp_session *s;

    if (accept == NULL || !(accepted(accept) & ACCEPT_SSE)) {
        refuse(req, 406, RPC_BAD_REQUEST,
               "Not Acceptable: GET /mcp opens a stream; send Accept: text/event-stream", NULL);
        return;
    }
    if (check_version_header(req) != 0 || session_of(ms, req, &s) != 0)
        return;
    if (gw_mcp__stream_named(last)) {
        gw_mcp__stream_resume(s, req, last); /* a POST's stream: the GET stream is not involved */
        return;
    }
    if (s->get != NULL) {
        refuse(req, 409, RPC_BAD_REQUEST, "Conflict: this session already has a GET stream open",
               NULL);
        return;
    }
    gw_mcp__session_attach(s, req, last);
}

static void handle_delete(struct gw_mcp_server *ms, struct gw_http_request *req)
{
    struct gw_mcp_session *s;

    if (check_version_header(req) != 0 || session_of(ms, req, &s) != 0)
        return;
    /* A dialog named by X-Mcpgw-Dialog or the URL is not the session's
     * own: REST calls and other sessions may hold its state, so it outlives
     * the session (mcp_release, /v1/dialogs/…/release or idle end it). */
    gw_mcp__session_end(s, !s->named_dialog, "deleted by the client");
    gw_http_respond(req, 204, NULL, NULL, 0, NULL);
}

/* A 2026-07-28 client has no session to stream from or end. */
static bool modern_non_post(const struct gw_http_request *req)
{
    const char *v = gw_http_header(req, "mcp-protocol-version");

    return strcmp(req->method, "POST") != 0 && v != NULL && strcmp(v, MCP_MODERN_VERSION) == 0;
}

void gw_mcp_server_handle(struct gw_mcp_server *ms, struct gw_http_request *req)
{
    static const char *const allow_post[] = {"Allow: POST", NULL};

    if (modern_non_post(req))
        refuse(req, 405, RPC_BAD_REQUEST,
               "Method Not Allowed: 2026-07-28 has no sessions; POST each request", allow_post);
    else if (ms->closing)
        refuse(req, 503, RPC_BAD_REQUEST, "Service Unavailable: the gateway is stopping", NULL);
    else if (strcmp(req->method, "POST") == 0)
        handle_post(ms, req);
    else if (strcmp(req->method, "GET") == 0)
        handle_get(ms, req);
    else if (strcmp(req->method, "DELETE") == 0)
        handle_delete(ms, req);
    else
        refuse(req, 405, RPC_BAD_REQUEST, "Method Not Allowed: use POST, GET or DELETE",
               allow_header);
}

/* ---- lifetime ---- */

static void on_sweep(uv_timer_t *t)
{
    gw_mcp__sessions_sweep(t->data);
}

/* Tells every session with a GET stream (or a kept history) that the tool
 * list changed, once per burst of catalog commits. */
static void notify_all(struct gw_mcp_server *ms, const char *method)
{
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);

    for (struct gw_mcp_session *s = ms->head; s != NULL; s = s->next) {
        if (s->had_get)
            gw_mcp__session_send(s, msg);
    }
    json_decref(msg);
    gw_mcp__listeners_notify(ms, method, NULL);
}

static void on_notify(uv_timer_t *t)
{
    struct gw_mcp_server *ms = t->data;
    uint64_t v = gw_catalog_version(gw_servers_catalog(ms->servers));
    unsigned extras = ms->extras_pending;
    bool clients = gw_policy_clients(ms->servers);

    ms->extras_pending = 0;
    if (v != ms->notified_version || (extras & 12u)) {
        ms->notified_version = v;
        /* with clients, each is told of its own view's change only; a
         * change of tool search changes every dialog's list */
        if (clients && !(extras & 4u)) {
            gw_mcp__views_announce(ms, 1u << GW_MCP_VIEW_TOOLS, true);
        } else {
            notify_all(ms, "notifications/tools/list_changed");
            gw_mcp__views_announce(ms, 1u << GW_MCP_VIEW_TOOLS, false);
        }
    }
    if (clients)
        gw_mcp__views_announce(ms,
                               (extras & 9u ? 1u << GW_MCP_VIEW_PROMPTS : 0) |
                                   (extras & 10u ? 1u << GW_MCP_VIEW_RESOURCES : 0),
                               true);
    if (!clients && (extras & 1u))
        notify_all(ms, "notifications/prompts/list_changed");
    if (!clients && (extras & 2u))
        notify_all(ms, "notifications/resources/list_changed");
}

struct gw_mcp_server *gw_mcp_server_new(uv_loop_t *loop, struct gw_servers *servers,
                                        struct gw_metrics *metrics, struct gw_rounds *rounds)
{
    struct gw_mcp_server *ms = gw_xcalloc(1, sizeof *ms);
    static const struct gw_mcp_server_limits defaults = {0};

    ms->loop = loop;
    ms->servers = servers;
    ms->metrics = metrics;
    ms->rounds = rounds;
    gw_mcp_server_set_limits(ms, &defaults);
    ms->notified_version = gw_catalog_version(gw_servers_catalog(servers));
    uv_timer_init(loop, &ms->sweep);
    uv_timer_init(loop, &ms->notify);
    ms->sweep.data = ms->notify.data = ms;
    ms->open_handles = 2;
    uv_timer_start(&ms->sweep, on_sweep, MCP_SWEEP_MS, MCP_SWEEP_MS);
    uv_unref((uv_handle_t *)&ms->sweep);
    uv_unref((uv_handle_t *)&ms->notify);
    return ms;
}

void gw_mcp_server_set_limits(struct gw_mcp_server *ms, const struct gw_mcp_server_limits *l)
{
    ms->lim.max_sessions = l->max_sessions ? l->max_sessions : GW_MCP_SERVER_MAX_SESSIONS;
    ms->lim.idle_ms = l->idle_ms ? l->idle_ms : GW_MCP_SERVER_IDLE_MS;
    ms->lim.page_size = l->page_size ? l->page_size : GW_MCP_SERVER_PAGE_SIZE;
}

void gw_mcp_server_catalog_changed(struct gw_mcp_server *ms, uint64_t version)
{
    if (ms->closing || version == ms->notified_version || uv_is_active((uv_handle_t *)&ms->notify))
        return;
    uv_timer_start(&ms->notify, on_notify, MCP_NOTIFY_DELAY_MS, 0);
}

void gw_mcp_server_extras_changed(struct gw_mcp_server *ms, const char *type)
{
    if (ms->closing)
        return;
    ms->extras_pending |= strcmp(type, "prompts") == 0 ? 1u : 2u;
    if (!uv_is_active((uv_handle_t *)&ms->notify))
        uv_timer_start(&ms->notify, on_notify, MCP_NOTIFY_DELAY_MS, 0);
}

void gw_mcp_server_tool_search_changed(struct gw_mcp_server *ms)
{
    if (ms->closing)
        return;
    ms->extras_pending |= 4u;
    if (!uv_is_active((uv_handle_t *)&ms->notify))
        uv_timer_start(&ms->notify, on_notify, MCP_NOTIFY_DELAY_MS, 0);
}

void gw_mcp_server_policy_changed(struct gw_mcp_server *ms)
{
    if (ms->closing)
        return;
    ms->extras_pending |= 8u;
    if (!uv_is_active((uv_handle_t *)&ms->notify))
        uv_timer_start(&ms->notify, on_notify, MCP_NOTIFY_DELAY_MS, 0);
}

size_t gw_mcp_server_sessions(const struct gw_mcp_server *ms)
{
    return ms->nsessions;
}

static void on_closed(uv_handle_t *h)
{
    struct gw_mcp_server *ms = h->data;

    if (--ms->open_handles > 0)
        return;
    if (ms->close_cb != NULL)
        ms->close_cb(ms->close_data);
    gw_mcp__views_free(ms);
    free(ms->buckets);
    free(ms);
}

void gw_mcp_server_close(struct gw_mcp_server *ms, void (*cb)(void *data), void *data)
{
    ms->closing = true;
    ms->close_cb = cb;
    ms->close_data = data;
    while (ms->head != NULL)
        gw_mcp__session_end(ms->head, false, "the gateway is stopping");
    gw_mcp__modern_close_all(ms);
    gw_mcp__listeners_end(ms);
    uv_close((uv_handle_t *)&ms->sweep, on_closed);
    uv_close((uv_handle_t *)&ms->notify, on_closed);
}
