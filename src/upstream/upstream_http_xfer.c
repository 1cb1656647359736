/* Transfers of the HTTP upstream: the POST of each message (with the retry
 * policy of design §9), the GET stream of streamable HTTP, the legacy SSE
 * stream and the DELETE of the session, each a gw_http_xfer.
 *
 * The transfer's callbacks (on_start, on_event) only record: they adopt
 * the session, queue messages and set x->fail. Every decision is taken in
 * xfer_done(), which runs from the loop once libcurl is done. */
#include "gw/upstream_http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/json_in.h"
#include "gw/log.h"
#include "gw/util.h"
#include "gw/version.h"

#define ENDPOINT_MAX     8192 /* bytes of a legacy endpoint URI */
#define MIN_RECONNECT_MS 100

static const struct gw_http_xfer_ops xfer_ops;

/* ---- the transfer object ---- */

void gw_upstream_http__link(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    x->prev = NULL;
    x->next = h->xfers;
    if (h->xfers)
        h->xfers->prev = x;
    h->xfers = x;
    x->linked = 1;
}

void gw_upstream_http__unlink(struct xfer *x)
{
    if (!x->linked)
        return;
    if (x->prev)
        x->prev->next = x->next;
    else
        x->h->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    x->linked = 0;
}

static struct xfer *xfer_new(struct gw_upstream_http *h, enum xkind kind)
{
    struct xfer *x = gw_xcalloc(1, sizeof(*x));
    x->t.ops = &xfer_ops;
    x->t.bytes_in = &h->st.bytes_in;
    x->h = h;
    x->kind = kind;
    gw_upstream_http__link(x);
    return x;
}

/* The caller has removed it from the multi (or it was never added). */
void gw_upstream_http__xfer_free(struct xfer *x)
{
    gw_upstream_http__unlink(x);
    gw_http_xfer_cleanup(&x->t);
    json_decref(x->rpc_id);
    curl_slist_free_all(x->mhdrs);
    free(x->body);
    free(x);
}

/* ---- request headers and options ---- */

static struct curl_slist *build_headers(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    struct curl_slist *l = NULL;
    if (x->kind == XK_POST) {
        l = gw_http_xfer_line(l, "Content-Type: application/json");
        l = gw_http_xfer_line(l, "Accept: application/json, text/event-stream");
        l = gw_http_xfer_line(l, "Expect:"); /* no 100-continue round trip */
    } else if (x->kind != XK_DELETE) {
        l = gw_http_xfer_line(l, "Accept: text/event-stream");
        l = gw_http_xfer_line(l, "Cache-Control: no-cache");
    }
    x->sent_session = h->legacy && x->kind == XK_POST; /* its URL names the session */
    if (!h->legacy && h->session && !x->modern) {
        l = gw_http_xfer_header(l, "Mcp-Session-Id", h->session);
        x->sent_session = 1;
    }
    for (const struct curl_slist *m = x->mhdrs; m != NULL; m = m->next) /* traceparent too */
        l = gw_http_xfer_line(l, m->data);
    if (!x->modern && !h->legacy && h->version[0])
        l = gw_http_xfer_header(l, "MCP-Protocol-Version", h->version);
    if (x->kind == XK_GET && h->last_event_id)
        l = gw_http_xfer_header(l, "Last-Event-ID", h->last_event_id);
    const char *token =
        h->o.oauth && !h->own_authorization ? gw_oauth_access_token(h->o.oauth) : NULL;
    x->had_token = token != NULL;
    if (token) {
        x->token_gen = gw_oauth_generation(h->o.oauth);
        char *v = gw_xasprintf("Bearer %s", token);
        l = gw_http_xfer_header(l, "Authorization", v);
        free(v);
    }
    for (size_t i = 0; i < h->nhdr; i++)
        l = gw_http_xfer_line(l, h->hdr_lines[i]);
    return l;
}

/* Starts (or restarts, for a retry) a linked transfer. */
int gw_upstream_http__xfer_begin(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    int legacy_post = h->legacy && x->kind == XK_POST;
    static const enum gw_http_xfer_method methods[] = {
        [XK_POST] = GW_HTTP_XFER_POST,
        [XK_GET] = GW_HTTP_XFER_GET,
        [XK_LEGACY] = GW_HTTP_XFER_GET,
        [XK_DELETE] = GW_HTTP_XFER_DELETE,
    };
    struct gw_http_xfer_request req = {
        .method = methods[x->kind],
        .url = legacy_post ? h->post_url : h->url,
        .hdrs = build_headers(x),
        .body = x->body,
        .body_len = x->body_len,
        .connect_ms = h->connect_ms,
        .timeout_ms = x->kind == XK_DELETE ? h->o.delete_timeout_ms : 0,
        .body_max = x->kind == XK_POST && !h->legacy ? GW_HTTP_MAX_BODY : 0,
        .event_max = GW_HTTP_MAX_BODY,
        .loopback_only = h->loopback_only,
        .user_agent = "mcpgw/" GW_VERSION,
    };

    x->answered = 0;
    x->bearer = 0;
    x->fail = XF_NONE;
    x->why[0] = '\0';
    x->tries++;
    x->due_ms = 0;
    int rc = gw_http_xfer_begin(&x->t, h->multi, &req);
    if (rc < 0)
        return rc;
    if (x->tries > 1)
        h->st.retries++;
    if (x->kind == XK_POST)
        h->st.posts++;
    else if (x->kind == XK_DELETE)
        h->st.deletes++;
    else
        h->st.gets++;
    return 0;
}

/* ---- the transfer's callbacks: record only ---- */

static int on_start(struct gw_http_xfer *t)
{
    struct xfer *x = (struct xfer *)t;
    struct gw_upstream_http *h = x->h;

    h->st.last_status = t->status;
    /* A 401 to an older token than the one held says nothing of the
     * grant: it is sent again with the new one. */
    if (t->status == 401 && h->o.oauth && t->www_auth)
        x->bearer = x->had_token && x->token_gen != gw_oauth_generation(h->o.oauth)
                        ? 1
                        : gw_oauth_challenged(h->o.oauth, t->www_auth) == 0;
    if (t->status == 403 && h->o.oauth && t->www_auth)
        x->step_up = gw_oauth_step_up(h->o.oauth, t->www_auth) == 0;
    if (!gw_http_xfer_ok(t))
        return 0;
    if (x->had_token)
        gw_oauth_accepted(h->o.oauth, x->token_gen);
    /* 2026-07-28 has no session: the header of an answer to one of its
     * requests means nothing, and a session kept from it would make a later
     * 404 look like a lost session and the call go again (design §9) */
    if (t->sid && !h->legacy && !h->session && !x->modern) {
        h->session = t->sid;
        t->sid = NULL;
        gw_log(GW_LOG_DEBUG, "upstream session established", "server", h->id, "session", h->session,
               NULL);
    }
    if (x->kind == XK_GET || x->kind == XK_LEGACY) {
        if (!t->sse) {
            x->fail = XF_NOT_SSE;
            return 1;
        }
        h->st.get_stream_open = 1;
    }
    return 0;
}

/* Marks x answered when `data` is the response to its request, and learns
 * the protocol version from an initialize result. */
static void note_answer(struct xfer *x, const char *data, size_t len)
{
    if (!x->rpc_id || x->answered)
        return;
    json_t *m = gw_json_loadb(data, len, 0, NULL);
    json_t *id = json_object_get(m, "id");
    json_t *result = json_object_get(m, "result");
    if (id && json_equal(id, x->rpc_id) && (result || json_object_get(m, "error"))) {
        x->answered = 1;
        const char *v = json_string_value(json_object_get(result, "protocolVersion"));
        if (x->is_init && v && !x->h->version[0])
            gw_upstream_http__set_version(x->h, v, strlen(v));
    }
    json_decref(m);
}

/* Queues a message the server sent on x; a 2026-07-28 tools/list answer
 * loses the tools HTTP clients must drop. */
static int deliver(struct xfer *x, const char *data, size_t len)
{
    size_t n = 0;
    char *kept;
    int rc;

    note_answer(x, data, len);
    kept = x->lists_tools ? gw_upstream_http__modern_tools(x->h, data, len, &n) : NULL;
    rc = gw_upstream_http__enqueue(x->h, kept ? kept : data, kept ? n : len);
    free(kept);
    return rc;
}

static int same_origin(CURLU *a, CURLU *b)
{
    static const CURLUPart parts[] = {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT};
    int same = 1;
    for (size_t i = 0; i < GW_ARRAY_SIZE(parts) && same; i++) {
        char *pa = NULL, *pb = NULL;
        curl_url_get(a, parts[i], &pa, CURLU_DEFAULT_PORT);
        curl_url_get(b, parts[i], &pb, CURLU_DEFAULT_PORT);
        same = pa && pb && strcasecmp(pa, pb) == 0;
        curl_free(pa);
        curl_free(pb);
    }
    return same;
}

/* Resolves the legacy `endpoint` URI against the SSE URL; NULL (and a
 * sentence in x->why) when it is malformed or on another origin. */
static char *resolve_endpoint(struct xfer *x, const char *rel, size_t len)
{
    struct gw_upstream_http *h = x->h;
    CURLU *base = curl_url(), *u = curl_url();
    char *out = NULL;
    if (!base || !u || len == 0 || len > ENDPOINT_MAX || strlen(rel) != len ||
        curl_url_set(base, CURLUPART_URL, h->url, 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_URL, h->url, 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_URL, rel, 0) != CURLUE_OK) {
        snprintf(x->why, sizeof(x->why), "the endpoint event of %s is not a valid URI", h->shown);
    } else if (!same_origin(base, u)) {
        snprintf(x->why, sizeof(x->why), "the endpoint event of %s names another origin; refused",
                 h->shown);
    } else if (curl_url_get(u, CURLUPART_URL, &out, 0) != CURLUE_OK) {
        out = NULL;
        snprintf(x->why, sizeof(x->why), "the endpoint event of %s is not a valid URI", h->shown);
    }
    curl_url_cleanup(base);
    curl_url_cleanup(u);
    return out;
}

static int endpoint_event(struct xfer *x, const struct gw_sse_event *ev)
{
    struct gw_upstream_http *h = x->h;
    if (h->post_url)
        return 0; /* the first one counts */
    char *url = resolve_endpoint(x, ev->data, ev->data_len);
    if (!url) {
        x->fail = XF_ENDPOINT;
        return 1;
    }
    h->post_url = gw_xstrdup(url);
    curl_free(url);
    gw_upstream_http__kick(h); /* posts what waited, from the loop */
    return 0;
}

static int on_event(struct gw_http_xfer *t, const struct gw_sse_event *ev)
{
    struct xfer *x = (struct xfer *)t;

    if (x->kind == XK_LEGACY && strcmp(ev->type, "endpoint") == 0)
        return endpoint_event(x, ev);
    /* Priming events (2025-11-25) carry an id and empty data: no message. */
    if (strcmp(ev->type, "message") != 0 || ev->data_len == 0)
        return 0;
    if (deliver(x, ev->data, ev->data_len) < 0) {
        x->fail = XF_EVENT_TOO_BIG;
        snprintf(x->why, sizeof(x->why),
                 "the upstream sent more than %u MiB of messages before they could be delivered",
                 HTTP_QUEUE_MAX >> 20);
        return 1;
    }
    return 0;
}

/* ---- outcomes ---- */

/* The start of an answer's body, for an error sentence: the server's own
 * bytes, so its configured secrets are masked (security.md P6), cut
 * between UTF-8 characters, a byte that is not UTF-8 shown as '?' (the
 * sentence goes into JSON). */
static void excerpt(const struct xfer *x, char *buf, size_t cap)
{
    size_t used, max = cap - 1 < 200 ? cap - 1 : 200;
    size_t n = gw_utf8_excerpt(buf, max, x->t.rbody, x->t.rlen, &used);
    bool cut = used < x->t.rlen;
    n = gw_redact_line(x->h->redact, buf, n, cut);
    if (x->h->o.oauth) /* the token the request carried may be echoed */
        n = gw_oauth_redact_line(x->h->o.oauth, buf, n, cut);
    buf[n] = '\0';
}

static int mentions_session(const struct xfer *x)
{
    return x->t.rbody && strcasestr(x->t.rbody, "session") != NULL;
}

/* A refusal that is a JSON-RPC response under the request's own id is the
 * server's answer to that request: it read it, and may have run it. */
static int answers_itself(const struct xfer *x)
{
    json_t *m, *id;
    int yes;

    if (x->rpc_id == NULL || x->t.rbody == NULL)
        return 0;
    m = gw_json_loadb(x->t.rbody, x->t.rlen, 0, NULL);
    id = json_object_get(m, "id");
    yes = id != NULL && json_equal(id, x->rpc_id);
    json_decref(m);
    return yes;
}

/* Only a refusal of the session itself says that the request did not run
 * (design §9): then, and only then, it may go again on a new session. */
static int session_lost(const struct xfer *x)
{
    return x->sent_session && (x->t.status == 404 || (x->t.status == 400 && mentions_session(x))) &&
           !answers_itself(x);
}

static void status_sentence(const struct xfer *x, char *buf, size_t cap)
{
    char ex[208];
    excerpt(x, ex, sizeof(ex));
    if (x->t.status >= 300 && x->t.status < 400)
        snprintf(buf, cap,
                 "the upstream answered HTTP %ld (a redirect); redirects are not followed",
                 x->t.status);
    else
        snprintf(buf, cap, "the upstream answered HTTP %ld%s%s", x->t.status, ex[0] ? ": " : "",
                 ex);
}

static void conn_sentence(const struct xfer *x, CURLcode rc, char *buf, size_t cap)
{
    const struct gw_upstream_http *h = x->h;
    if (x->t.cx.refused[0])
        snprintf(buf, cap,
                 "refusing plain http to %s (address %s): without TLS only loopback addresses "
                 "may be reached",
                 h->shown, x->t.cx.refused);
    else if (x->fail == XF_READ_TIMEOUT)
        snprintf(buf, cap, "no byte from %s for %llu ms (sse_read_timeout)", h->shown,
                 (unsigned long long)h->read_ms);
    else
        snprintf(buf, cap, "cannot reach %s: %s", h->shown,
                 x->t.errbuf[0] ? x->t.errbuf : curl_easy_strerror(rc));
}

/* True when the request provably never left: no connection was made. */
static int never_sent(const struct xfer *x, CURLcode rc)
{
    curl_off_t t = 0;
    if (x->t.cx.refused[0])
        return 1;
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
        return 1;
    case CURLE_OPERATION_TIMEDOUT:
        curl_easy_getinfo(x->t.cx.easy, CURLINFO_CONNECT_TIME_T, &t);
        return t == 0 && !x->t.started;
    default:
        return 0;
    }
}

/* The server refused x because it no longer knows the session (MCP: it
 * MUST answer 404 once a session is terminated), so x's request did not
 * run: the owner hears so before the instance goes down, and may send it
 * again on a new session (design §9). Nothing more is sent on this one,
 * not even the DELETE. */
static void session_gone(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    char why[400];
    snprintf(why, sizeof(why),
             "the upstream %s no longer knows MCP session %s (HTTP %ld); a new session must be "
             "initialized",
             h->shown, h->session ? h->session : "(legacy)", x->t.status);
    h->session_lost = 1;
    if (x->rpc_id && h->cbs.on_not_run)
        h->cbs.on_not_run(h->cbs.data, x->rpc_id, why);
    gw_upstream_http__xfer_free(x);
    gw_upstream_http__go_down(h, GW_HTTP_E_SESSION_GONE, why);
}

/* Answers x's request with a JSON-RPC error (design: the client fails just
 * that request), then frees x. */
void gw_upstream_http__request_failed(struct xfer *x, long status, int reached, const char *why)
{
    struct gw_upstream_http *h = x->h;
    char full[480];
    if (x->tries > 1)
        snprintf(full, sizeof(full), "%s (after %d tries)", why, x->tries);
    else
        snprintf(full, sizeof(full), "%s", why);
    gw_utf8_trim(full); /* a character cut by the buffer would make it no JSON string */
    h->st.http_errors++;
    gw_upstream_http__set_error(h, full);
    gw_log(GW_LOG_WARN, "upstream request failed", "server", h->id, "method", x->method, "error",
           full, NULL);
    if (x->rpc_id) {
        json_t *m = json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:b}}}", "jsonrpc", "2.0", "id",
                              x->rpc_id, "error", "code", GW_HTTP_RPC_ERROR, "message", full,
                              "data", "reachedServer", reached);
        if (m && status)
            json_object_set_new(json_object_get(json_object_get(m, "error"), "data"), "httpStatus",
                                json_integer(status));
        char *s = m ? json_dumps(m, JSON_COMPACT) : NULL;
        if (s)
            gw_upstream_http__enqueue(h, s, strlen(s));
        free(s);
        json_decref(m);
    }
    gw_upstream_http__xfer_free(x);
}

/* Schedules another attempt; 0 when the tries are used up. */
static int retry(struct xfer *x, uint64_t after_ms)
{
    struct gw_upstream_http *h = x->h;
    if (h->stopping || x->tries >= h->o.max_tries)
        return 0;
    int shift = x->tries - 1 < 20 ? x->tries - 1 : 20;
    uint64_t d = after_ms ? after_ms : h->o.retry_base_ms << shift;
    if (d > h->o.retry_max_ms)
        d = h->o.retry_max_ms;
    x->due_ms = gw_now_ms() + d + 1;
    gw_upstream_http__link(x);
    char attempt[16];
    snprintf(attempt, sizeof(attempt), "%d", x->tries + 1);
    gw_log(GW_LOG_INFO, "upstream request will be retried", "server", h->id, "method", x->method,
           "attempt", attempt, NULL);
    return 1;
}

/* ---- POST ---- */

static int is_safe(const char *method)
{
    static const char *const safe[] = {"initialize",     "ping",
                                       "tools/list",     "prompts/list",
                                       "resources/list", "resources/templates/list"};
    for (size_t i = 0; i < GW_ARRAY_SIZE(safe); i++) {
        if (strcmp(method, safe[i]) == 0)
            return 1;
    }
    return 0;
}

/* Reads what the retry policy and the version watch need from the JSON. */
static void classify(struct xfer *x)
{
    json_t *m = gw_json_loadb(x->body, x->body_len, 0, NULL);
    const char *method = json_string_value(json_object_get(m, "method"));
    json_t *id = json_object_get(m, "id");
    snprintf(x->method, sizeof(x->method), "%s", method ? method : "");
    if (method && id && !json_is_null(id)) {
        x->rpc_id = json_incref(id);
        x->safe = is_safe(method);
        x->is_init = strcmp(method, "initialize") == 0;
    } else if (method) {
        x->is_initialized_note = strcmp(method, "notifications/initialized") == 0;
    }
    gw_upstream_http__modern_classify(x, m);
    json_decref(m);
}

int gw_upstream_http__post(struct gw_upstream_http *h, const char *msg, size_t len)
{
    struct xfer *x = xfer_new(h, XK_POST);
    x->body = gw_xmalloc(len + 1);
    memcpy(x->body, msg, len);
    x->body[len] = '\0';
    x->body_len = len;
    classify(x);
    int rc = gw_upstream_http__xfer_begin(x);
    if (rc < 0) {
        gw_upstream_http__xfer_free(x);
        return rc;
    }
    h->st.messages_out++;
    h->st.bytes_out += len;
    gw_upstream_http__reschedule(h);
    return 0;
}

static void want_get(struct gw_upstream_http *h)
{
    if (!h->o.get_stream || h->legacy || h->stream || h->get_state != GET_IDLE || h->stopping)
        return;
    h->get_state = GET_WAIT;
    h->get_due = gw_now_ms();
}

static void post_ok(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    char why[128];
    if (!h->legacy && !x->t.sse && x->t.rlen > 0)
        deliver(x, x->t.rbody, x->t.rlen);
    if (!h->legacy && x->rpc_id && !x->answered) {
        if (x->t.sse)
            snprintf(why, sizeof(why), "the upstream's event stream ended before the response");
        else
            snprintf(why, sizeof(why), "the upstream answered HTTP %ld without a response",
                     x->t.status);
        gw_upstream_http__request_failed(x, x->t.status, 1, why);
        return;
    }
    if (x->is_initialized_note)
        want_get(h);
    gw_upstream_http__xfer_free(x);
}

static void post_failed(struct xfer *x, CURLcode rc)
{
    struct gw_upstream_http *h = x->h;
    char why[400];
    if (x->fail == XF_EVENT_TOO_BIG) {
        snprintf(why, sizeof(why), "%s", x->why);
        gw_upstream_http__xfer_free(x);
        gw_upstream_http__go_down(h, GW_HTTP_E_TOO_BIG, why);
        return;
    }
    if (x->fail == XF_BODY_TOO_BIG) {
        snprintf(why, sizeof(why), "the response of %s exceeded the %u MiB cap (security.md S3)",
                 h->shown, GW_HTTP_MAX_BODY >> 20);
        gw_upstream_http__request_failed(x, x->t.status, 1, why);
        return;
    }
    int never = never_sent(x, rc);
    if (!x->t.cx.refused[0] && (never || x->safe) && retry(x, 0))
        return;
    conn_sentence(x, rc, why, sizeof(why));
    gw_upstream_http__request_failed(x, 0, !never, why);
}

static void post_done(struct xfer *x, CURLcode rc)
{
    char why[400];
    if (rc != CURLE_OK || x->fail) {
        post_failed(x, rc);
        return;
    }
    if (gw_http_xfer_ok(&x->t)) {
        post_ok(x);
        return;
    }
    if (session_lost(x)) {
        session_gone(x);
        return;
    }
    if (x->t.status == 401 && x->bearer && x->had_token) {
        struct gw_upstream_http *h = x->h;
        if (gw_upstream_http__auth_retry(x))
            return;
        status_sentence(x, why, sizeof(why));
        gw_upstream_http__request_failed(x, x->t.status, 1, why);
        gw_upstream_http__flush(h); /* its own error first */
        gw_upstream_http__go_down(h, GW_HTTP_E_UNAUTHORIZED,
                                  "the upstream refused the OAuth access token (HTTP 401)");
        return;
    }
    if (x->step_up) {
        struct gw_upstream_http *h = x->h;
        status_sentence(x, why, sizeof(why));
        gw_upstream_http__request_failed(x, x->t.status, 1, why);
        gw_upstream_http__go_down(h, GW_HTTP_E_STEP_UP,
                                  "the upstream needs more OAuth scopes (403 insufficient_scope)");
        return;
    }
    if ((x->t.status == 429 || x->t.status >= 500) && x->safe && retry(x, x->t.retry_after))
        return;
    if (gw_upstream_http__modern_error(x)) {
        gw_upstream_http__xfer_free(x);
        return;
    }
    status_sentence(x, why, sizeof(why));
    gw_upstream_http__request_failed(x, x->t.status, 1, why);
}

/* ---- streams ---- */

int gw_upstream_http__open_stream(struct gw_upstream_http *h)
{
    struct xfer *x = xfer_new(h, h->legacy ? XK_LEGACY : XK_GET);
    int rc = gw_upstream_http__xfer_begin(x);
    if (rc < 0) {
        gw_upstream_http__xfer_free(x);
        h->get_state = GET_NONE;
        if (h->legacy)
            gw_upstream_http__go_down(h, GW_HTTP_E_STREAM, "the SSE stream could not be started");
        return rc;
    }
    h->stream = x;
    h->get_state = GET_IDLE;
    return 0;
}

static void get_done(struct xfer *x, CURLcode rc)
{
    struct gw_upstream_http *h = x->h;
    long s = x->t.started ? x->t.status : 0;
    if (x->fail == XF_EVENT_TOO_BIG) {
        char why[256];
        snprintf(why, sizeof(why), "%s", x->why);
        gw_upstream_http__xfer_free(x);
        gw_upstream_http__go_down(h, GW_HTTP_E_TOO_BIG, why);
        return;
    }
    if (session_lost(x)) {
        session_gone(x);
        return;
    }
    if (s == 405 || s == 409 || x->fail == XF_NOT_SSE) {
        gw_log(GW_LOG_DEBUG, "upstream offers no GET stream", "server", h->id, NULL);
        h->get_state = GET_NONE;
        gw_upstream_http__xfer_free(x);
        return;
    }
    if (x->t.events > 0)
        h->get_backoff = 1000;
    uint64_t d = h->retry_hint >= 0 ? (uint64_t)h->retry_hint : h->get_backoff;
    if (h->retry_hint < 0 && h->get_backoff < h->o.reconnect_max_ms)
        h->get_backoff *= 2;
    if (d > h->o.reconnect_max_ms)
        d = h->o.reconnect_max_ms;
    if (d < MIN_RECONNECT_MS)
        d = MIN_RECONNECT_MS;
    h->get_state = GET_WAIT;
    h->get_due = gw_now_ms() + d;
    gw_upstream_http__xfer_free(x);
}

static void legacy_sentence(const struct xfer *x, CURLcode rc, char *buf, size_t cap)
{
    const struct gw_upstream_http *h = x->h;
    if (x->fail == XF_EVENT_TOO_BIG || x->fail == XF_ENDPOINT)
        snprintf(buf, cap, "%s", x->why);
    else if (x->fail == XF_NOT_SSE)
        snprintf(buf, cap,
                 "the SSE endpoint %s answered with Content-Type \"%s\", not "
                 "text/event-stream",
                 h->shown, x->t.ctype);
    else if (x->fail == XF_READ_TIMEOUT)
        snprintf(buf, cap, "the SSE stream of %s stayed silent for %llu ms (sse_read_timeout)",
                 h->shown, (unsigned long long)h->read_ms);
    else if (x->t.cx.refused[0] || (rc != CURLE_OK && !x->t.started))
        conn_sentence(x, rc, buf, cap);
    else if (!gw_http_xfer_ok(&x->t))
        status_sentence(x, buf, cap);
    else if (rc != CURLE_OK)
        snprintf(buf, cap, "the SSE stream of %s failed: %s", h->shown,
                 x->t.errbuf[0] ? x->t.errbuf : curl_easy_strerror(rc));
    else
        snprintf(buf, cap, "the SSE stream of %s ended", h->shown);
}

static void legacy_done(struct xfer *x, CURLcode rc)
{
    struct gw_upstream_http *h = x->h;
    char why[400];
    legacy_sentence(x, rc, why, sizeof(why));
    int code = x->fail == XF_EVENT_TOO_BIG ? GW_HTTP_E_TOO_BIG : GW_HTTP_E_STREAM;
    gw_upstream_http__xfer_free(x);
    gw_upstream_http__go_down(h, code, why);
}

/* ---- DELETE ---- */

void gw_upstream_http__delete_session(struct gw_upstream_http *h)
{
    struct xfer *x = xfer_new(h, XK_DELETE);
    if (gw_upstream_http__xfer_begin(x) < 0)
        gw_upstream_http__xfer_free(x);
}

static void delete_done(struct xfer *x, CURLcode rc)
{
    char status[16];
    snprintf(status, sizeof(status), "%ld", x->t.started ? x->t.status : 0L);
    gw_log(GW_LOG_DEBUG, "upstream session deleted", "server", x->h->id, "status", status, "error",
           rc == CURLE_OK ? NULL : curl_easy_strerror(rc), NULL);
    gw_upstream_http__xfer_free(x);
}

/* ---- completion ---- */

/* The transfer's own failures, in the terms of this instance. */
static void fold_fail(struct xfer *x)
{
    if (x->fail != XF_NONE)
        return;
    if (x->t.fail == GW_HTTP_XFER_BODY_TOO_BIG) {
        x->fail = XF_BODY_TOO_BIG;
    } else if (x->t.fail == GW_HTTP_XFER_EVENT_TOO_BIG) {
        x->fail = XF_EVENT_TOO_BIG;
        snprintf(x->why, sizeof(x->why),
                 "an SSE event from %s exceeded the %u MiB cap (security.md S2)", x->h->shown,
                 GW_HTTP_MAX_BODY >> 20);
    }
}

/* What the next GET must say (Last-Event-ID) and when it may come. */
static void keep_stream_position(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    const char *id;

    if (x->kind != XK_GET || x->t.parser == NULL)
        return;
    id = gw_sse_last_event_id(x->t.parser);
    if (gw_http_xfer_header_safe(id, strlen(id), GW_HTTP_XFER_SESSION_MAX) &&
        (!h->last_event_id || strcmp(id, h->last_event_id) != 0)) {
        free(h->last_event_id);
        h->last_event_id = gw_xstrdup(id);
    }
    if (gw_sse_retry_ms(x->t.parser) >= 0)
        h->retry_hint = gw_sse_retry_ms(x->t.parser);
}

static void xfer_done(struct gw_http_xfer *t, CURLcode rc)
{
    struct xfer *x = (struct xfer *)t;
    struct gw_upstream_http *h = x->h;
    gw_upstream_http__unlink(x);
    if (h->stream == x)
        h->stream = NULL;
    if (x->kind == XK_GET || x->kind == XK_LEGACY)
        h->st.get_stream_open = 0;
    fold_fail(x);
    keep_stream_position(x);
    gw_upstream_http__flush(h); /* what the stream carried comes before the outcome */
    if (h->down && x->kind != XK_DELETE)
        gw_upstream_http__xfer_free(x);
    else if (x->kind == XK_POST)
        post_done(x, rc);
    else if (x->kind == XK_GET)
        get_done(x, rc);
    else if (x->kind == XK_LEGACY)
        legacy_done(x, rc);
    else
        delete_done(x, rc);
    gw_upstream_http__flush(h);
    gw_upstream_http__maybe_finish(h);
    gw_upstream_http__reschedule(h);
}

static const struct gw_http_xfer_ops xfer_ops = {
    .on_start = on_start,
    .on_event = on_event,
    .on_done = xfer_done,
};

/* The timer found x silent for sse_read_timeout (or unable to restart). */
void gw_upstream_http__xfer_timeout(struct xfer *x)
{
    if (x->t.cx.added && x->fail == XF_NONE && x->t.fail == GW_HTTP_XFER_OK)
        x->fail = XF_READ_TIMEOUT;
    gw_http_xfer_end(&x->t, x->h->multi, CURLE_OPERATION_TIMEDOUT);
}
