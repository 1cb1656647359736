/* Transfers of the HTTP upstream: the POST of each message (with the retry
 * policy of design §9), the GET stream of streamable HTTP, the legacy SSE
 * stream and the DELETE of the session.
 *
 * libcurl callbacks (header, write, SSE events) only record: they parse,
 * queue messages and set x->fail. Every decision is taken in xfer_done(),
 * which runs from the loop once libcurl is done with the transfer. */
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
#define SESSION_ID_MAX   256
#define MIN_RECONNECT_MS 100

static void xfer_done(struct gw_curl_uv_xfer *cx, CURLcode rc);

/* ---- the transfer object ---- */

static void link_xfer(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    x->prev = NULL;
    x->next = h->xfers;
    if (h->xfers)
        h->xfers->prev = x;
    h->xfers = x;
    x->linked = 1;
}

static void unlink_xfer(struct xfer *x)
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
    x->h = h;
    x->kind = kind;
    link_xfer(x);
    return x;
}

static void reset_response(struct xfer *x)
{
    x->status = 0;
    x->started = x->sse = x->answered = x->events = 0;
    gw_sse_free(x->parser);
    x->parser = NULL;
    free(x->rbody);
    x->rbody = NULL;
    x->rlen = x->rcap = 0;
    free(x->sid);
    x->sid = NULL;
    x->ctype[0] = '\0';
    x->retry_after_ms = 0;
    x->fail = XF_NONE;
    x->why[0] = x->errbuf[0] = '\0';
}

/* The caller has removed it from the multi (or it was never added). */
void http_xfer_free(struct xfer *x)
{
    unlink_xfer(x);
    reset_response(x);
    if (x->cx.easy)
        curl_easy_cleanup(x->cx.easy);
    curl_slist_free_all(x->hdrs);
    json_decref(x->rpc_id);
    free(x->body);
    free(x);
}

/* ---- request headers and options ---- */

static struct curl_slist *hdr_add(struct curl_slist *l, const char *line)
{
    struct curl_slist *n = curl_slist_append(l, line);
    if (!n) {
        fputs("mcpgw: out of memory\n", stderr);
        abort();
    }
    return n;
}

static struct curl_slist *hdr_addf(struct curl_slist *l, const char *name, const char *value)
{
    char *line = gw_xasprintf("%s: %s", name, value);
    l = hdr_add(l, line);
    free(line);
    return l;
}

/* Visible ASCII only: what may go into a header we build from server data. */
static int header_safe(const char *s, size_t n, size_t max)
{
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 0x21 || s[i] > 0x7e)
            return 0;
    }
    return 1;
}

static struct curl_slist *build_headers(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    struct curl_slist *l = NULL;
    if (x->kind == XK_POST) {
        l = hdr_add(l, "Content-Type: application/json");
        l = hdr_add(l, "Accept: application/json, text/event-stream");
        l = hdr_add(l, "Expect:"); /* no 100-continue round trip */
    } else if (x->kind != XK_DELETE) {
        l = hdr_add(l, "Accept: text/event-stream");
        l = hdr_add(l, "Cache-Control: no-cache");
    }
    x->sent_session = h->legacy && x->kind == XK_POST; /* its URL names the session */
    if (!h->legacy && h->session) {
        l = hdr_addf(l, "Mcp-Session-Id", h->session);
        x->sent_session = 1;
    }
    if (!h->legacy && h->version[0])
        l = hdr_addf(l, "MCP-Protocol-Version", h->version);
    if (x->kind == XK_GET && h->last_event_id)
        l = hdr_addf(l, "Last-Event-ID", h->last_event_id);
    for (size_t i = 0; i < h->nhdr; i++)
        l = hdr_add(l, h->hdr_lines[i]);
    return l;
}

static size_t on_header(char *buf, size_t size, size_t n, void *ud);
static size_t on_write(char *buf, size_t size, size_t n, void *ud);

static void setup_easy(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    CURL *e = x->cx.easy;
    int legacy_post = h->legacy && x->kind == XK_POST;
    curl_easy_setopt(e, CURLOPT_URL, legacy_post ? h->post_url : h->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "mcpgw/" GW_VERSION);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)h->connect_ms);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    if (x->kind == XK_POST) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
    } else if (x->kind == XK_DELETE) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)h->o.delete_timeout_ms);
    } else {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    }
}

/* Starts (or restarts, for a retry) a linked transfer. */
int http_xfer_begin(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    reset_response(x);
    x->tries++;
    x->due_ms = 0;
    if (!x->cx.easy)
        x->cx.easy = curl_easy_init();
    if (!x->cx.easy)
        return UV_ENOMEM;
    curl_slist_free_all(x->hdrs);
    x->hdrs = build_headers(x);
    setup_easy(x);
    x->cx.done = xfer_done;
    x->cx.loopback_only = h->loopback_only;
    x->last_byte_ms = gw_now_ms();
    int rc = gw_curl_uv_add(h->multi, &x->cx);
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

/* ---- libcurl callbacks: record only ---- */

static int header_is(const char *name, size_t n, const char *want)
{
    return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

static void response_start(struct xfer *x);

static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = size * n;
    x->last_byte_ms = gw_now_ms();
    if ((len == 2 && buf[0] == '\r') || (len == 1 && buf[0] == '\n')) {
        /* The end of a head: a stream counts as open before its first event. */
        long status = 0;
        curl_easy_getinfo(x->cx.easy, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && !x->started)
            response_start(x);
        return len;
    }
    if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) { /* a new response (after a 1xx) */
        x->ctype[0] = '\0';
        free(x->sid);
        x->sid = NULL;
        x->retry_after_ms = 0;
        return len;
    }
    const char *colon = memchr(buf, ':', len);
    if (!colon)
        return len;
    size_t nlen = (size_t)(colon - buf);
    const char *v = colon + 1;
    size_t vlen = (size_t)(buf + len - v);
    while (vlen > 0 && (v[0] == ' ' || v[0] == '\t'))
        v++, vlen--;
    while (vlen > 0 && strchr(" \t\r\n", v[vlen - 1]))
        vlen--;
    if (header_is(buf, nlen, "content-type")) {
        size_t k = vlen < sizeof(x->ctype) - 1 ? vlen : sizeof(x->ctype) - 1;
        memcpy(x->ctype, v, k);
        x->ctype[k] = '\0';
    } else if (header_is(buf, nlen, "mcp-session-id") && header_safe(v, vlen, SESSION_ID_MAX)) {
        free(x->sid);
        x->sid = gw_xstrndup(v, vlen);
    } else if (header_is(buf, nlen, "retry-after") && vlen > 0 && vlen <= 6 &&
               strspn(v, "0123456789") >= vlen) {
        x->retry_after_ms = strtoull(v, NULL, 10) * 1000;
    }
    return len;
}

static int is_2xx(long s)
{
    return s >= 200 && s < 300;
}

static void response_start(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    x->started = 1;
    curl_easy_getinfo(x->cx.easy, CURLINFO_RESPONSE_CODE, &x->status);
    h->st.last_status = x->status;
    if (!is_2xx(x->status))
        return;
    x->sse = strncasecmp(x->ctype, "text/event-stream", 17) == 0;
    if (x->sse)
        x->parser = gw_sse_new(GW_HTTP_MAX_BODY);
    if (x->sid && !h->legacy && !h->session) {
        h->session = x->sid;
        x->sid = NULL;
        gw_log(GW_LOG_DEBUG, "upstream session established", "server", h->id, "session", h->session,
               NULL);
    }
    if (x->kind == XK_GET || x->kind == XK_LEGACY) {
        if (!x->sse)
            x->fail = XF_NOT_SSE;
        else
            h->st.get_stream_open = 1;
    }
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
            http_set_version(x->h, v, strlen(v));
    }
    json_decref(m);
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
    http_kick(h); /* posts what waited, from the loop */
    return 0;
}

static int on_event(void *ud, const struct gw_sse_event *ev)
{
    struct xfer *x = ud;
    x->events++;
    if (x->kind == XK_LEGACY && strcmp(ev->type, "endpoint") == 0)
        return endpoint_event(x, ev);
    /* Priming events (2025-11-25) carry an id and empty data: no message. */
    if (strcmp(ev->type, "message") != 0 || ev->data_len == 0)
        return 0;
    note_answer(x, ev->data, ev->data_len);
    if (http_enqueue(x->h, ev->data, ev->data_len) < 0) {
        x->fail = XF_EVENT_TOO_BIG;
        snprintf(x->why, sizeof(x->why),
                 "the upstream sent more than %u MiB of messages before they could be delivered",
                 HTTP_QUEUE_MAX >> 20);
        return 1;
    }
    return 0;
}

static size_t feed_sse(struct xfer *x, const char *buf, size_t len)
{
    struct gw_upstream_http *h = x->h;
    int rc = gw_sse_feed(x->parser, buf, len, on_event, x);
    if (rc == GW_SSE_E_TOO_BIG) {
        x->fail = XF_EVENT_TOO_BIG;
        snprintf(x->why, sizeof(x->why),
                 "an SSE event from %s exceeded the %u MiB cap (security.md S2)", h->shown,
                 GW_HTTP_MAX_BODY >> 20);
    }
    if (rc != 0)
        return 0;
    if (x->kind == XK_GET) {
        const char *id = gw_sse_last_event_id(x->parser);
        if (header_safe(id, strlen(id), SESSION_ID_MAX) &&
            (!h->last_event_id || strcmp(id, h->last_event_id) != 0)) {
            free(h->last_event_id);
            h->last_event_id = gw_xstrdup(id);
        }
        if (gw_sse_retry_ms(x->parser) >= 0)
            h->retry_hint = gw_sse_retry_ms(x->parser);
    }
    return len;
}

static void keep_body(struct xfer *x, const char *buf, size_t len, size_t max)
{
    if (x->rlen + len > max)
        len = max - x->rlen;
    if (x->rlen + len + 1 > x->rcap) {
        size_t cap = x->rcap ? x->rcap : 4096;
        while (cap < x->rlen + len + 1)
            cap *= 2;
        x->rbody = gw_xrealloc(x->rbody, cap);
        x->rcap = cap;
    }
    memcpy(x->rbody + x->rlen, buf, len);
    x->rlen += len;
    x->rbody[x->rlen] = '\0';
}

static size_t on_write(char *buf, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = size * n;
    x->last_byte_ms = gw_now_ms();
    x->h->st.bytes_in += len;
    if (!x->started)
        response_start(x);
    if (x->fail)
        return 0;
    if (x->sse)
        return feed_sse(x, buf, len);
    if (!is_2xx(x->status)) {
        keep_body(x, buf, len, HTTP_EXCERPT_MAX); /* for the error sentence */
        return len;
    }
    if (x->kind != XK_POST || x->h->legacy)
        return len; /* a 202 body ("Accepted"), a DELETE's answer */
    if (x->rlen + len > GW_HTTP_MAX_BODY) {
        x->fail = XF_BODY_TOO_BIG;
        return 0;
    }
    keep_body(x, buf, len, GW_HTTP_MAX_BODY);
    return len;
}

/* ---- outcomes ---- */

/* The start of an answer's body, for an error sentence: the server's own
 * bytes, so its configured secrets are masked (security.md P6). */
static void excerpt(const struct xfer *x, char *buf, size_t cap)
{
    size_t n = x->rlen < 200 ? x->rlen : 200;
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)x->rbody[i];
        buf[i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    n = gw_redact_line(x->h->redact, buf, n, n < x->rlen);
    buf[n] = '\0';
}

static int mentions_session(const struct xfer *x)
{
    return x->rbody && strcasestr(x->rbody, "session") != NULL;
}

static int session_lost(const struct xfer *x)
{
    return x->sent_session && (x->status == 404 || (x->status == 400 && mentions_session(x)));
}

static void status_sentence(const struct xfer *x, char *buf, size_t cap)
{
    char ex[208];
    excerpt(x, ex, sizeof(ex));
    if (x->status >= 300 && x->status < 400)
        snprintf(buf, cap,
                 "the upstream answered HTTP %ld (a redirect); redirects are not followed",
                 x->status);
    else
        snprintf(buf, cap, "the upstream answered HTTP %ld%s%s", x->status, ex[0] ? ": " : "", ex);
}

static void conn_sentence(const struct xfer *x, CURLcode rc, char *buf, size_t cap)
{
    const struct gw_upstream_http *h = x->h;
    if (x->cx.refused[0])
        snprintf(buf, cap,
                 "refusing plain http to %s (address %s): without TLS only loopback addresses "
                 "may be reached",
                 h->shown, x->cx.refused);
    else if (x->fail == XF_READ_TIMEOUT)
        snprintf(buf, cap, "no byte from %s for %llu ms (sse_read_timeout)", h->shown,
                 (unsigned long long)h->read_ms);
    else
        snprintf(buf, cap, "cannot reach %s: %s", h->shown,
                 x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
}

/* True when the request provably never left: no connection was made. */
static int never_sent(const struct xfer *x, CURLcode rc)
{
    curl_off_t t = 0;
    if (x->cx.refused[0])
        return 1;
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
        return 1;
    case CURLE_OPERATION_TIMEDOUT:
        curl_easy_getinfo(x->cx.easy, CURLINFO_CONNECT_TIME_T, &t);
        return t == 0 && !x->started;
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
             h->shown, h->session ? h->session : "(legacy)", x->status);
    h->session_lost = 1;
    if (x->rpc_id && h->cbs.on_not_run)
        h->cbs.on_not_run(h->cbs.data, x->rpc_id, why);
    http_xfer_free(x);
    http_go_down(h, GW_HTTP_E_SESSION_GONE, why);
}

/* Answers x's request with a JSON-RPC error (design: the client fails just
 * that request), then frees x. */
static void request_failed(struct xfer *x, long status, int reached, const char *why)
{
    struct gw_upstream_http *h = x->h;
    char full[480];
    if (x->tries > 1)
        snprintf(full, sizeof(full), "%s (after %d tries)", why, x->tries);
    else
        snprintf(full, sizeof(full), "%s", why);
    h->st.http_errors++;
    http_set_error(h, full);
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
            http_enqueue(h, s, strlen(s));
        free(s);
        json_decref(m);
    }
    http_xfer_free(x);
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
    link_xfer(x);
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
    json_decref(m);
}

int http_post(struct gw_upstream_http *h, const char *msg, size_t len)
{
    struct xfer *x = xfer_new(h, XK_POST);
    x->body = gw_xmalloc(len + 1);
    memcpy(x->body, msg, len);
    x->body[len] = '\0';
    x->body_len = len;
    classify(x);
    int rc = http_xfer_begin(x);
    if (rc < 0) {
        http_xfer_free(x);
        return rc;
    }
    h->st.messages_out++;
    h->st.bytes_out += len;
    http_reschedule(h);
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
    if (!h->legacy && !x->sse && x->rlen > 0) {
        note_answer(x, x->rbody, x->rlen);
        http_enqueue(h, x->rbody, x->rlen);
    }
    if (!h->legacy && x->rpc_id && !x->answered) {
        if (x->sse)
            snprintf(why, sizeof(why), "the upstream's event stream ended before the response");
        else
            snprintf(why, sizeof(why), "the upstream answered HTTP %ld without a response",
                     x->status);
        request_failed(x, x->status, 1, why);
        return;
    }
    if (x->is_initialized_note)
        want_get(h);
    http_xfer_free(x);
}

static void post_failed(struct xfer *x, CURLcode rc)
{
    struct gw_upstream_http *h = x->h;
    char why[400];
    if (x->fail == XF_EVENT_TOO_BIG) {
        snprintf(why, sizeof(why), "%s", x->why);
        http_xfer_free(x);
        http_go_down(h, GW_HTTP_E_TOO_BIG, why);
        return;
    }
    if (x->fail == XF_BODY_TOO_BIG) {
        snprintf(why, sizeof(why), "the response of %s exceeded the %u MiB cap (security.md S3)",
                 h->shown, GW_HTTP_MAX_BODY >> 20);
        request_failed(x, x->status, 1, why);
        return;
    }
    int never = never_sent(x, rc);
    if (!x->cx.refused[0] && (never || x->safe) && retry(x, 0))
        return;
    conn_sentence(x, rc, why, sizeof(why));
    request_failed(x, 0, !never, why);
}

static void post_done(struct xfer *x, CURLcode rc)
{
    char why[400];
    if (rc != CURLE_OK || x->fail) {
        post_failed(x, rc);
        return;
    }
    if (is_2xx(x->status)) {
        post_ok(x);
        return;
    }
    if (session_lost(x)) {
        session_gone(x);
        return;
    }
    if ((x->status == 429 || x->status >= 500) && x->safe && retry(x, x->retry_after_ms))
        return;
    status_sentence(x, why, sizeof(why));
    request_failed(x, x->status, 1, why);
}

/* ---- streams ---- */

int http_open_stream(struct gw_upstream_http *h)
{
    struct xfer *x = xfer_new(h, h->legacy ? XK_LEGACY : XK_GET);
    int rc = http_xfer_begin(x);
    if (rc < 0) {
        http_xfer_free(x);
        h->get_state = GET_NONE;
        if (h->legacy)
            http_go_down(h, GW_HTTP_E_STREAM, "the SSE stream could not be started");
        return rc;
    }
    h->stream = x;
    h->get_state = GET_IDLE;
    return 0;
}

static void get_done(struct xfer *x, CURLcode rc)
{
    struct gw_upstream_http *h = x->h;
    long s = x->started ? x->status : 0;
    if (x->fail == XF_EVENT_TOO_BIG) {
        char why[256];
        snprintf(why, sizeof(why), "%s", x->why);
        http_xfer_free(x);
        http_go_down(h, GW_HTTP_E_TOO_BIG, why);
        return;
    }
    if (session_lost(x)) {
        session_gone(x);
        return;
    }
    if (s == 405 || s == 409 || x->fail == XF_NOT_SSE) {
        gw_log(GW_LOG_DEBUG, "upstream offers no GET stream", "server", h->id, NULL);
        h->get_state = GET_NONE;
        http_xfer_free(x);
        return;
    }
    if (x->events > 0)
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
    http_xfer_free(x);
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
                 h->shown, x->ctype);
    else if (x->fail == XF_READ_TIMEOUT)
        snprintf(buf, cap, "the SSE stream of %s stayed silent for %llu ms (sse_read_timeout)",
                 h->shown, (unsigned long long)h->read_ms);
    else if (x->cx.refused[0] || (rc != CURLE_OK && !x->started))
        conn_sentence(x, rc, buf, cap);
    else if (!is_2xx(x->status))
        status_sentence(x, buf, cap);
    else if (rc != CURLE_OK)
        snprintf(buf, cap, "the SSE stream of %s failed: %s", h->shown,
                 x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
    else
        snprintf(buf, cap, "the SSE stream of %s ended", h->shown);
}

static void legacy_done(struct xfer *x, CURLcode rc)
{
    struct gw_upstream_http *h = x->h;
    char why[400];
    legacy_sentence(x, rc, why, sizeof(why));
    int code = x->fail == XF_EVENT_TOO_BIG ? GW_HTTP_E_TOO_BIG : GW_HTTP_E_STREAM;
    http_xfer_free(x);
    http_go_down(h, code, why);
}

/* ---- DELETE ---- */

void http_delete_session(struct gw_upstream_http *h)
{
    struct xfer *x = xfer_new(h, XK_DELETE);
    if (http_xfer_begin(x) < 0)
        http_xfer_free(x);
}

static void delete_done(struct xfer *x, CURLcode rc)
{
    char status[16];
    snprintf(status, sizeof(status), "%ld", x->started ? x->status : 0L);
    gw_log(GW_LOG_DEBUG, "upstream session deleted", "server", x->h->id, "status", status, "error",
           rc == CURLE_OK ? NULL : curl_easy_strerror(rc), NULL);
    http_xfer_free(x);
}

/* ---- completion ---- */

static void xfer_done(struct gw_curl_uv_xfer *cx, CURLcode rc)
{
    struct xfer *x = (struct xfer *)cx;
    struct gw_upstream_http *h = x->h;
    unlink_xfer(x);
    if (h->stream == x)
        h->stream = NULL;
    if (x->kind == XK_GET || x->kind == XK_LEGACY)
        h->st.get_stream_open = 0;
    if (!x->started && rc == CURLE_OK)
        response_start(x);
    http_flush(h); /* what the stream carried comes before the outcome */
    if (h->down && x->kind != XK_DELETE)
        http_xfer_free(x);
    else if (x->kind == XK_POST)
        post_done(x, rc);
    else if (x->kind == XK_GET)
        get_done(x, rc);
    else if (x->kind == XK_LEGACY)
        legacy_done(x, rc);
    else
        delete_done(x, rc);
    http_flush(h);
    http_maybe_finish(h);
    http_reschedule(h);
}

/* The timer found x silent for sse_read_timeout (or unable to restart). */
void http_xfer_timeout(struct xfer *x)
{
    if (x->cx.added) {
        gw_curl_uv_remove(x->h->multi, &x->cx);
        if (!x->fail)
            x->fail = XF_READ_TIMEOUT;
    }
    xfer_done(&x->cx, CURLE_OPERATION_TIMEDOUT);
}
