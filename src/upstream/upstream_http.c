/* The HTTP upstream instance: lifecycle, the delivery queue, the timer and
 * the public API. Transfers live in upstream_http_xfer.c.
 *
 * Messages are parsed inside libcurl callbacks but delivered only from the
 * loop (the timer, or a transfer's done handler): the owner may send, stop
 * or kill from on_message, and libcurl refuses multi calls from inside its
 * own callbacks.
 *
 * Close order: every transfer is cancelled (or, for the DELETE, finishes),
 * then the timer closes; its close callback calls on_closed and frees the
 * instance. */
#include "gw/upstream_http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/log.h"
#include "gw/trace.h"
#include "gw/util.h"

/* ---- delivery ---- */

int gw_upstream_http__enqueue(struct gw_upstream_http *h, const char *data, size_t len)
{
    if (h->q_bytes + len > HTTP_QUEUE_MAX)
        return UV_ENOBUFS;
    struct msg *m = gw_xmalloc(sizeof(*m) + len + 1);
    m->next = NULL;
    m->len = len;
    memcpy(m->data, data, len);
    m->data[len] = '\0';
    if (h->q_tail)
        h->q_tail->next = m;
    else
        h->q_head = m;
    h->q_tail = m;
    h->q_bytes += len;
    gw_upstream_http__kick(h);
    return 0;
}

static void free_msgs(struct msg **head, struct msg **tail)
{
    while (*head) {
        struct msg *m = *head;
        *head = m->next;
        free(m);
    }
    *tail = NULL;
}

/* Delivers queued messages in order; stops once the instance is down (the
 * owner may have stopped it from on_message). */
void gw_upstream_http__flush(struct gw_upstream_http *h)
{
    if (h->flushing)
        return;
    h->flushing = 1;
    while (h->q_head && !h->down) {
        struct msg *m = h->q_head;
        h->q_head = m->next;
        if (!h->q_head)
            h->q_tail = NULL;
        h->q_bytes -= m->len;
        h->st.messages_in++;
        if (h->cbs.on_message)
            h->cbs.on_message(h->cbs.data, m->data, m->len);
        free(m);
    }
    if (h->down) {
        free_msgs(&h->q_head, &h->q_tail);
        h->q_bytes = 0;
    }
    h->flushing = 0;
}

/* ---- the timer: deliveries, retries, read timeouts, GET reconnects ---- */

static void on_tick(uv_timer_t *t);

/* Asks for a tick on the next loop turn; safe inside libcurl callbacks. */
void gw_upstream_http__kick(struct gw_upstream_http *h)
{
    if (h->closing || h->kicked)
        return;
    h->kicked = 1;
    uv_timer_start(&h->tick, on_tick, 0, 0);
}

static uint64_t next_deadline(struct gw_upstream_http *h)
{
    uint64_t next = UINT64_MAX;
    for (struct xfer *x = h->xfers; x; x = x->next) {
        if (x->due_ms && x->due_ms < next)
            next = x->due_ms;
        if (x->t.cx.added && h->read_ms && x->kind != XK_DELETE &&
            x->t.last_byte_ms + h->read_ms < next)
            next = x->t.last_byte_ms + h->read_ms;
    }
    if (h->get_state == GET_WAIT && h->get_due < next)
        next = h->get_due;
    return next;
}

void gw_upstream_http__reschedule(struct gw_upstream_http *h)
{
    if (h->closing)
        return;
    if (h->kicked) {
        uv_timer_start(&h->tick, on_tick, 0, 0);
        return;
    }
    uint64_t next = next_deadline(h), now = gw_now_ms();
    if (next == UINT64_MAX)
        uv_timer_stop(&h->tick);
    else
        uv_timer_start(&h->tick, on_tick, next > now ? next - now : 0, 0);
}

/* Starts due retries and fails silent transfers, one at a time: failing
 * one runs the owner's callbacks, which may change the list. */
static int tick_one(struct gw_upstream_http *h, uint64_t now)
{
    for (struct xfer *x = h->xfers; x; x = x->next) {
        if (x->due_ms && now >= x->due_ms) {
            if (gw_upstream_http__xfer_begin(x) < 0)
                gw_upstream_http__xfer_timeout(x);
            return 1;
        }
        if (x->t.cx.added && h->read_ms && x->kind != XK_DELETE &&
            now >= x->t.last_byte_ms + h->read_ms) {
            gw_upstream_http__xfer_timeout(x);
            return 1;
        }
    }
    return 0;
}

static void post_pending(struct gw_upstream_http *h)
{
    while (h->p_head && h->post_url && !h->stopping) {
        struct msg *m = h->p_head;
        h->p_head = m->next;
        if (!h->p_head)
            h->p_tail = NULL;
        h->p_bytes -= m->len;
        if (gw_upstream_http__post(h, m->data, m->len) < 0)
            gw_log(GW_LOG_WARN, "upstream message dropped", "server", h->id, NULL);
        free(m);
    }
}

static void on_tick(uv_timer_t *t)
{
    struct gw_upstream_http *h = t->data;
    h->kicked = 0;
    gw_upstream_http__flush(h);
    post_pending(h);
    uint64_t now = gw_now_ms();
    int guard = 0;
    while (!h->stopping && guard++ < 1000 && tick_one(h, now))
        gw_upstream_http__flush(h);
    if (!h->stopping && h->get_state == GET_WAIT && now >= h->get_due && !h->stream)
        gw_upstream_http__open_stream(h);
    gw_upstream_http__flush(h);
    gw_upstream_http__maybe_finish(h);
    gw_upstream_http__reschedule(h);
}

/* ---- going down and closing ---- */

void gw_upstream_http__set_error(struct gw_upstream_http *h, const char *why)
{
    snprintf(h->last_error, sizeof(h->last_error), "%s", why);
}

static void cancel_all(struct gw_upstream_http *h)
{
    while (h->xfers) {
        struct xfer *x = h->xfers;
        gw_curl_uv_remove(h->multi, &x->t.cx);
        gw_upstream_http__xfer_free(x);
    }
    h->stream = NULL;
    free_msgs(&h->q_head, &h->q_tail);
    free_msgs(&h->p_head, &h->p_tail);
    h->q_bytes = h->p_bytes = 0;
}

static void free_instance(struct gw_upstream_http *h)
{
    for (size_t i = 0; i < h->nhdr; i++)
        free(h->hdr_lines[i]);
    free(h->hdr_lines);
    gw_span_end(h->auth_span);
    free(h->id);
    free(h->url);
    free(h->shown);
    gw_redact_free(h->redact);
    free(h->post_url);
    free(h->session);
    free(h->last_event_id);
    json_decref(h->param_marks);
    free(h);
}

static void on_tick_closed(uv_handle_t *handle)
{
    struct gw_upstream_http *h = handle->data;
    if (h->cbs.on_closed)
        h->cbs.on_closed(h->cbs.data);
    free_instance(h);
}

void gw_upstream_http__maybe_finish(struct gw_upstream_http *h)
{
    if (!h->stopping || h->xfers || h->closing)
        return;
    h->closing = 1;
    uv_close((uv_handle_t *)&h->tick, on_tick_closed);
}

static void begin_close(struct gw_upstream_http *h, int del)
{
    if (h->stopping)
        return;
    h->stopping = 1;
    if (h->auth_wait)
        gw_oauth_unwait(h->o.oauth, h);
    h->auth_wait = 0;
    cancel_all(h);
    if (del)
        gw_upstream_http__delete_session(h);
    gw_upstream_http__maybe_finish(h);
}

void gw_upstream_http__go_down(struct gw_upstream_http *h, int code, const char *why)
{
    if (h->down)
        return;
    h->down = 1;
    if (code != UV_ECANCELED) {
        gw_upstream_http__set_error(h, why);
        gw_log(GW_LOG_WARN, "upstream down", "server", h->id, "url", h->shown, "error", why, NULL);
    }
    if (h->cbs.on_down)
        h->cbs.on_down(h->cbs.data, code, why);
    int del = h->terminate && h->session && !h->legacy && !h->killed && !h->session_lost;
    begin_close(h, del);
}

void gw_upstream_http_stop(struct gw_upstream_http *h)
{
    gw_upstream_http__go_down(h, UV_ECANCELED, "the upstream HTTP transport was stopped");
}

void gw_upstream_http_kill(struct gw_upstream_http *h)
{
    if (h->killed)
        return;
    h->killed = 1;
    gw_upstream_http__go_down(h, UV_ECANCELED, "the upstream HTTP transport was killed");
    cancel_all(h); /* a DELETE still running, if stop came first */
    gw_upstream_http__maybe_finish(h);
}

/* ---- the transport interface ---- */

static int http_send(struct gw_transport *t, const char *msg, size_t len)
{
    struct gw_upstream_http *h = (struct gw_upstream_http *)t;
    if (h->down || h->stopping || h->session_lost)
        return UV_EPIPE;
    if (len > GW_HTTP_MAX_BODY)
        return UV_ENOBUFS;
    if (!h->legacy && gw_upstream_http__modern_cancel(h, msg, len))
        return 0;
    if (!h->legacy || h->post_url)
        return gw_upstream_http__post(h, msg, len);
    if (h->p_bytes + len > GW_HTTP_MAX_PENDING)
        return UV_ENOBUFS;
    struct msg *m = gw_xmalloc(sizeof(*m) + len);
    m->next = NULL;
    m->len = len;
    memcpy(m->data, msg, len);
    if (h->p_tail)
        h->p_tail->next = m;
    else
        h->p_head = m;
    h->p_tail = m;
    h->p_bytes += len;
    return 0;
}

static void http_stop_op(struct gw_transport *t)
{
    gw_upstream_http_stop((struct gw_upstream_http *)t);
}

static void http_kill_op(struct gw_transport *t)
{
    gw_upstream_http_kill((struct gw_upstream_http *)t);
}

static json_t *http_stderr_op(const struct gw_transport *t)
{
    (void)t;
    return NULL;
}

static void http_describe_op(const struct gw_transport *t, json_t *o)
{
    const struct gw_upstream_http *h = (const struct gw_upstream_http *)t;
    const char *session = gw_upstream_http_session_id(h);
    const char *err = gw_upstream_http_last_error(h);

    json_object_set_new(o, "session", session ? json_string(session) : json_null());
    json_object_set_new(o, "url", json_string(gw_upstream_http_url(h)));
    if (err != NULL)
        json_object_set_new(o, "lastError", json_string(err));
}

static const char *http_session_op(const struct gw_transport *t)
{
    return gw_upstream_http_session_id((const struct gw_upstream_http *)t);
}

static int http_pid_op(const struct gw_transport *t)
{
    (void)t;
    return 0;
}

static const struct gw_transport_ops http_ops = {
    .send = http_send,
    .stop = http_stop_op,
    .kill = http_kill_op,
    .stderr_tail = http_stderr_op,
    .describe = http_describe_op,
    .session_id = http_session_op,
    .pid = http_pid_op,
};

struct gw_transport *gw_upstream_http_transport(struct gw_upstream_http *h)
{
    return &h->base;
}

/* ---- start ---- */

void gw_upstream_http_options_init(struct gw_upstream_http_options *o)
{
    memset(o, 0, sizeof(*o));
    o->delete_timeout_ms = 2000;
    o->get_stream = 1;
    o->max_tries = 3;
    o->retry_base_ms = 250;
    o->retry_max_ms = 5000;
    o->reconnect_max_ms = 30000;
}

/* Returns scheme://host[:port]/path of `url` (no userinfo, query or
 * fragment), or NULL when it does not parse; *scheme gets the scheme. */
static char *shown_url(const char *url, char **scheme)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *path = NULL, *shown = NULL;
    *scheme = NULL;
    if (!u)
        return NULL;
    if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        curl_url_get(u, CURLUPART_PORT, &port, 0);
        curl_url_get(u, CURLUPART_PATH, &path, 0);
        shown = gw_xasprintf("%s://%s%s%s%s", *scheme, host, port ? ":" : "", port ? port : "",
                             path ? path : "/");
    }
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_url_cleanup(u);
    return shown;
}

static int visible_ascii(const char *s)
{
    for (; *s; s++) {
        if (*s < 0x21 || *s > 0x7e)
            return 0;
    }
    return 1;
}

static int reserved_header(const char *name)
{
    static const char *const names[] = {
        "content-type",   "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id",
        "content-length", "host",   "expect",         "transfer-encoding"};
    for (size_t i = 0; i < GW_ARRAY_SIZE(names); i++) {
        if (strcasecmp(name, names[i]) == 0)
            return 1;
    }
    return 0;
}

/* "Name: value" lines; "Name;" sends an empty value (libcurl's rule). The
 * transport's own headers cannot be overridden. Values are never logged. */
static void copy_headers(struct gw_upstream_http *h, const struct gw_server_config *cfg)
{
    h->hdr_lines = gw_xcalloc(cfg->nheaders + 1, sizeof(char *));
    for (size_t i = 0; i < cfg->nheaders; i++) {
        const struct gw_kv *kv = &cfg->headers[i];
        if (reserved_header(kv->name)) {
            gw_log(GW_LOG_WARN, "configured header ignored: the transport sets it", "server", h->id,
                   "header", kv->name, NULL);
            continue;
        }
        h->hdr_lines[h->nhdr++] = kv->value[0] ? gw_xasprintf("%s: %s", kv->name, kv->value)
                                               : gw_xasprintf("%s;", kv->name);
        if (strcasecmp(kv->name, "Authorization") == 0)
            h->own_authorization = 1;
    }
}

static struct gw_upstream_http *instance_new(uv_loop_t *loop, struct gw_curl_uv *multi,
                                             const struct gw_server_config *cfg,
                                             const struct gw_upstream_http_options *o,
                                             const struct gw_transport_cbs *cbs)
{
    struct gw_upstream_http *h = gw_xcalloc(1, sizeof(*h));
    h->base.ops = &http_ops;
    h->loop = loop;
    h->multi = multi;
    h->cbs = *cbs;
    h->o = *o;
    h->redact = gw_redact_new();
    gw_redact_add_server(h->redact, cfg);
    if (h->o.max_tries < 1)
        h->o.max_tries = 1;
    h->legacy = cfg->transport == GW_TRANSPORT_SSE;
    h->id = gw_xstrdup(cfg->id ? cfg->id : "");
    h->url = gw_xstrdup(cfg->url);
    h->connect_ms = cfg->timeout_ms;
    h->read_ms = cfg->sse_read_timeout_ms;
    h->terminate = cfg->terminate_on_close;
    h->retry_hint = -1;
    h->get_backoff = 1000;
    if (cfg->session_id && cfg->session_id[0] && !h->legacy)
        h->session = gw_xstrdup(cfg->session_id);
    copy_headers(h, cfg);
    uv_timer_init(loop, &h->tick);
    h->tick.data = h;
    return h;
}

int gw_upstream_http_start(uv_loop_t *loop, struct gw_curl_uv *multi,
                           const struct gw_server_config *cfg,
                           const struct gw_upstream_http_options *opts,
                           const struct gw_transport_cbs *cbs, struct gw_upstream_http **out,
                           char *why, size_t whylen)
{
    struct gw_upstream_http_options defaults;
    gw_upstream_http_options_init(&defaults);
    if (cfg->transport != GW_TRANSPORT_STREAMABLE_HTTP && cfg->transport != GW_TRANSPORT_SSE) {
        gw_say(why, whylen, "transport %s is not an HTTP transport",
               gw_transport_name(cfg->transport));
        return UV_EINVAL;
    }
    int rc = gw_curl_uv_open(multi, why, whylen);
    if (rc != 0)
        return rc;
    char *scheme = NULL;
    char *shown = cfg->url ? shown_url(cfg->url, &scheme) : NULL;
    if (shown != NULL && cfg->url_shown != NULL) {
        /* a variable in the URL: what is shown comes from the *** form */
        char *unused = NULL, *masked = shown_url(cfg->url_shown, &unused);
        curl_free(unused);
        free(shown);
        shown = masked ? masked : gw_xstrdup("***");
    }
    if (!shown || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
        gw_say(why, whylen, "url must be an http:// or https:// URL");
        free(shown);
        curl_free(scheme);
        return UV_EINVAL;
    }
    if (cfg->session_id && cfg->session_id[0] && !visible_ascii(cfg->session_id)) {
        gw_say(why, whylen, "sessionId must be visible ASCII");
        free(shown);
        curl_free(scheme);
        return UV_EINVAL;
    }
    struct gw_upstream_http *h = instance_new(loop, multi, cfg, opts ? opts : &defaults, cbs);
    h->shown = shown;
    h->loopback_only = strcmp(scheme, "http") == 0;
    curl_free(scheme);
    if (h->legacy) { /* connect from the loop: a failure then goes through on_down */
        h->get_state = GET_WAIT;
        h->get_due = gw_now_ms();
        gw_upstream_http__reschedule(h);
    }
    gw_log(GW_LOG_INFO, "upstream HTTP transport started", "server", h->id, "url", h->shown,
           "transport", gw_transport_name(cfg->transport), NULL);
    *out = h;
    return 0;
}

/* ---- accessors ---- */

const char *gw_upstream_http_session_id(const struct gw_upstream_http *h)
{
    return h->session;
}

const char *gw_upstream_http_protocol_version(const struct gw_upstream_http *h)
{
    return h->version[0] ? h->version : NULL;
}

void gw_upstream_http__set_version(struct gw_upstream_http *h, const char *v, size_t n)
{
    if (n == 0 || n >= sizeof(h->version))
        return;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < 0x21 || v[i] > 0x7e)
            return;
    }
    memcpy(h->version, v, n);
    h->version[n] = '\0';
}

int gw_upstream_http_set_protocol_version(struct gw_upstream_http *h, const char *version)
{
    size_t n = strlen(version);
    gw_upstream_http__set_version(h, version, n);
    return h->version[0] && strcmp(h->version, version) == 0 ? 0 : UV_EINVAL;
}

const char *gw_upstream_http_url(const struct gw_upstream_http *h)
{
    return h->shown;
}

const char *gw_upstream_http_last_error(const struct gw_upstream_http *h)
{
    return h->last_error;
}

void gw_upstream_http_get_stats(const struct gw_upstream_http *h,
                                struct gw_upstream_http_stats *out)
{
    *out = h->st;
}
