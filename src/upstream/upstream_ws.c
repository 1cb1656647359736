/* WebSocket upstream on libwebsockets with the caller's libuv loop.
 *
 * Phases of an instance: resolve (uv_getaddrinfo, off the loop) → connect
 * and upgrade (lws, bounded by the `deadline` timer) → open → closing. lws
 * calls back into this file from inside its own service; nothing here
 * destroys lws objects from there: that work is deferred to an idle handle.
 *
 * Every instance's connection lives in one lws context per process
 * (upstream_ws_context.c), which lives until the gateway stops.
 *
 * An instance closes on its own schedule: it detaches from its connection
 * (lws then finds no instance behind it), asks lws to kill it, and frees
 * itself once its two handles closed. */
#include "gw/upstream_ws.h"

#include <arpa/inet.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "gw/log.h"
#include "gw/oauth.h"
#include "gw/upstream_ws_internal.h"
#include "gw/util.h"

#define PING_SECS 30

enum phase { RESOLVING, CONNECTING, OPEN, CLOSING, DONE };

struct msg {
    struct msg *next;
    size_t len;
    unsigned char buf[]; /* LWS_PRE bytes for lws, then the message */
};

struct gw_upstream_ws {
    struct gw_transport base; /* first: the transport is the instance */
    uv_loop_t *loop;
    struct gw_transport_cbs cbs;
    char *id;                       /* server id, for logs */
    char *host;                     /* for getaddrinfo: no brackets */
    char *host_header;              /* Host: host[:port], brackets for IPv6 */
    char *path;                     /* path and query, at least "/" */
    char *shown;                    /* URL without userinfo or query */
    char **hdr_names, **hdr_values; /* "Name:" as lws wants it */
    size_t nhdr;
    struct gw_oauth *oauth; /* the server's, or NULL */
    bool own_authorization; /* cfg's headers set Authorization: no Bearer */
    int port, tls;
    uint64_t timeout_ms;
    lws_retry_bo_t idle_policy;
    struct lws *wsi;
    char address[64];        /* resolved, numeric */
    struct lws_context *ctx; /* the shared one (upstream_ws_context.c) */
    uv_getaddrinfo_t resolve;
    uv_timer_t deadline; /* connect + upgrade; then the close handshake */
    uv_idle_t later;     /* work deferred out of lws callbacks: the close */
    enum phase phase;
    int resolving;  /* the getaddrinfo request has not called back */
    int resolve_rc; /* uv_getaddrinfo() refused to start: reported by `deadline` */
    int down;       /* on_down has fired */
    int graceful;   /* stop: send a close frame first */
    int user;       /* counted as a user of the context */
    unsigned handles_open;
    struct msg *q_head, *q_tail;
    size_t q_bytes;
    char *rx;
    size_t rx_len, rx_cap;
    int rx_binary;
    char *error;
    struct gw_upstream_ws_stats st;
};

static void schedule(struct gw_upstream_ws *w);
static void connect_to(struct gw_upstream_ws *w);
static void fail(struct gw_upstream_ws *w, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const struct lws_protocols protocols[];

/* ---- addresses ---- */

static int is_loopback(const struct sockaddr *sa)
{
    static const unsigned char lo6[16] = {[15] = 1};
    static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family != AF_INET6)
        return 0;
    const unsigned char *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
    return memcmp(a, lo6, 16) == 0 || (memcmp(a, mapped, 12) == 0 && a[12] == 127);
}

static void addr_name(const struct sockaddr *sa, char *buf, size_t cap)
{
    if (sa->sa_family == AF_INET6)
        uv_ip6_name((const struct sockaddr_in6 *)sa, buf, cap);
    else if (sa->sa_family == AF_INET)
        uv_ip4_name((const struct sockaddr_in *)sa, buf, cap);
    else
        gw_strlcpy(buf, "?", cap);
}

/* The peer of the connected socket, before anything is sent on it. */
static int peer_allowed(struct gw_upstream_ws *w)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char name[64];
    if (w->tls)
        return 1;
    if (getpeername(lws_get_socket_fd(w->wsi), (struct sockaddr *)&ss, &len) != 0)
        return 0;
    if (is_loopback((struct sockaddr *)&ss))
        return 1;
    addr_name((struct sockaddr *)&ss, name, sizeof name);
    fail(w, GW_WS_E_REFUSED, "ws:// connects only to loopback addresses; %s was connected to %s",
         w->shown, name);
    return 0;
}

/* ---- going down ---- */

static void set_error(struct gw_upstream_ws *w, const char *why)
{
    free(w->error);
    w->error = gw_xstrdup(why);
}

static void go_down(struct gw_upstream_ws *w, int code, const char *why)
{
    if (w->down)
        return;
    w->down = 1;
    w->st.connected = 0;
    if (code != UV_ECANCELED) {
        set_error(w, why);
        gw_log(GW_LOG_WARN, "upstream down", "server", w->id, "url", w->shown, "error", why, NULL);
    }
    w->cbs.on_down(w->cbs.data, code, why);
    if (w->phase < CLOSING)
        w->phase = CLOSING;
    schedule(w);
}

static void free_queue(struct gw_upstream_ws *w)
{
    while (w->q_head) {
        struct msg *m = w->q_head;
        w->q_head = m->next;
        free(m);
    }
    w->q_tail = NULL;
    w->q_bytes = 0;
}

/* ---- closing ---- */

static void free_instance(struct gw_upstream_ws *w)
{
    free_queue(w);
    for (size_t i = 0; i < w->nhdr; i++) {
        free(w->hdr_names[i]);
        free(w->hdr_values[i]);
    }
    free(w->hdr_names);
    free(w->hdr_values);
    free(w->id);
    free(w->host);
    free(w->host_header);
    free(w->path);
    free(w->shown);
    free(w->rx);
    free(w->error);
    free(w);
}

static void on_handle_closed(uv_handle_t *h)
{
    struct gw_upstream_ws *w = h->data;
    if (--w->handles_open > 0)
        return;
    w->cbs.on_closed(w->cbs.data);
    free_instance(w);
}

/* One step of the close; runs from `later`, never inside lws. */
static void close_step(struct gw_upstream_ws *w)
{
    if (w->resolving)
        return; /* its callback schedules the next step */
    if (w->graceful && w->wsi != NULL && uv_is_active((uv_handle_t *)&w->deadline))
        return; /* the close handshake runs; WSI_DESTROY or the deadline wakes us */
    if (w->wsi != NULL) {
        lws_set_opaque_user_data(w->wsi, NULL);
        lws_set_timeout(w->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
        w->wsi = NULL;
    }
    if (w->user) {
        w->user = 0;
        gw_ws__ctx_release();
    }
    w->phase = DONE;
    uv_timer_stop(&w->deadline);
    uv_idle_stop(&w->later);
    uv_close((uv_handle_t *)&w->deadline, on_handle_closed);
    uv_close((uv_handle_t *)&w->later, on_handle_closed);
}

/* An idle handle: see upstream_ws_context.c. */
static void on_later(uv_idle_t *h)
{
    struct gw_upstream_ws *w = h->data;
    uv_idle_stop(h);
    if (w->phase == CLOSING)
        close_step(w);
}

static void schedule(struct gw_upstream_ws *w)
{
    if (w->phase == CLOSING)
        uv_idle_start(&w->later, on_later);
}

static void on_deadline(uv_timer_t *t);

static void begin_close(struct gw_upstream_ws *w, int graceful)
{
    if (w->phase >= CLOSING && w->down)
        return;
    free_queue(w);
    if (w->resolving)
        uv_cancel((uv_req_t *)&w->resolve);
    if (graceful && w->wsi != NULL && w->phase == OPEN) {
        w->graceful = 1;
        uv_timer_start(&w->deadline, on_deadline, GW_WS_CLOSE_GRACE_MS, 0);
        lws_callback_on_writable(w->wsi);
    }
}

void gw_upstream_ws_stop(struct gw_upstream_ws *w)
{
    if (w->down)
        return;
    begin_close(w, 1);
    go_down(w, UV_ECANCELED, "the upstream WebSocket transport was stopped");
}

void gw_upstream_ws_kill(struct gw_upstream_ws *w)
{
    w->graceful = 0;
    uv_timer_stop(&w->deadline);
    if (w->down) {
        schedule(w);
        return;
    }
    begin_close(w, 0);
    go_down(w, UV_ECANCELED, "the upstream WebSocket transport was killed");
}

static void fail(struct gw_upstream_ws *w, int code, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    uv_timer_stop(&w->deadline);
    begin_close(w, 0);
    go_down(w, code, why);
}

/* ---- lws protocol callback ---- */

static int add_headers(struct gw_upstream_ws *w, unsigned char **p, unsigned char *end)
{
    for (size_t i = 0; i < w->nhdr; i++) {
        const char *v = w->hdr_values[i];
        if (lws_add_http_header_by_name(w->wsi, (const unsigned char *)w->hdr_names[i],
                                        (const unsigned char *)v, (int)strlen(v), p, end) != 0) {
            fail(w, GW_WS_E_CLOSED,
                 "the headers of %s do not fit in the upgrade request (at most %u bytes)", w->shown,
                 GW_WS_HEADER_BUF);
            return -1;
        }
    }
    const char *token = w->oauth && !w->own_authorization ? gw_oauth_access_token(w->oauth) : NULL;
    if (token) {
        char *v = gw_xasprintf("Bearer %s", token);
        int rc = lws_add_http_header_by_name(w->wsi, (const unsigned char *)"Authorization:",
                                             (const unsigned char *)v, (int)strlen(v), p, end);
        memset(v, 0, strlen(v));
        free(v);
        if (rc != 0) {
            fail(w, GW_WS_E_CLOSED, "the access token for %s does not fit in the upgrade request",
                 w->shown);
            return -1;
        }
    }
    return 0;
}

/* A refused upgrade: a 401's Bearer challenge guides the OAuth client (the
 * server then waits in needs_authorization, as over HTTP). lws keeps the
 * answer's headers until this callback returns. */
static void upgrade_refused(struct gw_upstream_ws *w, struct lws *wsi)
{
    char challenge[2048];
    if (!w->oauth || lws_http_client_http_response(wsi) != 401)
        return;
    if (lws_hdr_copy(wsi, challenge, sizeof(challenge), WSI_TOKEN_HTTP_WWW_AUTHENTICATE) > 0)
        gw_oauth_challenged(w->oauth, challenge);
}

static int receive(struct gw_upstream_ws *w, const void *in, size_t len)
{
    if (lws_is_first_fragment(w->wsi)) {
        w->rx_len = 0;
        w->rx_binary = lws_frame_is_binary(w->wsi);
    }
    if (w->rx_binary) {
        if (lws_is_final_fragment(w->wsi) && lws_remaining_packet_payload(w->wsi) == 0)
            w->st.binary_dropped++;
        return 0;
    }
    if (len > GW_WS_MAX_MESSAGE - w->rx_len) {
        fail(w, GW_WS_E_TOO_BIG, "a WebSocket message from the server exceeded %u MiB",
             GW_WS_MAX_MESSAGE >> 20);
        return -1;
    }
    if (w->rx_len + len > w->rx_cap) {
        size_t cap = w->rx_cap ? w->rx_cap : 4096;
        while (cap < w->rx_len + len)
            cap *= 2;
        w->rx = gw_xrealloc(w->rx, cap);
        w->rx_cap = cap;
    }
    memcpy(w->rx + w->rx_len, in, len);
    w->rx_len += len;
    w->st.bytes_in += len;
    if (!lws_is_final_fragment(w->wsi) || lws_remaining_packet_payload(w->wsi) != 0)
        return 0;
    w->st.messages_in++;
    w->cbs.on_message(w->cbs.data, w->rx, w->rx_len);
    w->rx_len = 0;
    if (w->rx_cap > (1u << 20)) { /* a large message's buffer is not kept */
        free(w->rx);
        w->rx = NULL;
        w->rx_cap = 0;
    }
    return w->down ? -1 : 0;
}

static int writeable(struct gw_upstream_ws *w)
{
    if (w->graceful) {
        lws_close_reason(w->wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
        return -1;
    }
    struct msg *m = w->q_head;
    if (m == NULL || w->down)
        return 0;
    w->q_head = m->next;
    if (w->q_head == NULL)
        w->q_tail = NULL;
    w->q_bytes -= m->len;
    int n = lws_write(w->wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);
    size_t len = m->len;
    free(m);
    if (n < 0 || (size_t)n < len) {
        fail(w, GW_WS_E_CLOSED, "writing to %s failed", w->shown);
        return -1;
    }
    w->st.messages_out++;
    w->st.bytes_out += len;
    if (w->q_head != NULL)
        lws_callback_on_writable(w->wsi);
    return 0;
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len)
{
    struct gw_upstream_ws *w = lws_get_opaque_user_data(wsi);

    /* lws's own connections, and ours once their instance let go. */
    if (w == NULL)
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
        if (w->down || !peer_allowed(w))
            return -1;
        return add_headers(w, in, (unsigned char *)*(char **)in + len);
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        uv_timer_stop(&w->deadline);
        w->phase = OPEN;
        w->st.connected = 1;
        gw_log(GW_LOG_DEBUG, "websocket open", "server", w->id, "url", w->shown, NULL);
        if (w->q_head != NULL)
            lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_CLIENT_RECEIVE:
        return w->down ? -1 : receive(w, in, len);
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        return writeable(w);
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        upgrade_refused(w, wsi);
        w->wsi = NULL;
        lws_set_opaque_user_data(wsi, NULL);
        fail(w, GW_WS_E_CLOSED, "cannot open a WebSocket to %s: %s", w->shown,
             in ? (const char *)in : "connection failed");
        return 0;
    case LWS_CALLBACK_CLIENT_CLOSED:
        fail(w, GW_WS_E_CLOSED, "the WebSocket to %s was closed", w->shown);
        return 0;
    case LWS_CALLBACK_WSI_DESTROY:
        w->wsi = NULL;
        lws_set_opaque_user_data(wsi, NULL);
        uv_timer_stop(&w->deadline);
        if (!w->down)
            fail(w, GW_WS_E_CLOSED, "the WebSocket to %s was closed", w->shown);
        schedule(w);
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols protocols[] = {
    {"mcp", ws_callback, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* ---- connecting ---- */

static void on_deadline(uv_timer_t *t)
{
    struct gw_upstream_ws *w = t->data;
    if (w->phase >= CLOSING) {
        schedule(w); /* the close handshake took too long */
        return;
    }
    if (w->resolve_rc != 0) {
        fail(w, GW_WS_E_CLOSED, "cannot resolve the host of %s: %s", w->shown,
             uv_strerror(w->resolve_rc));
        return;
    }
    fail(w, UV_ETIMEDOUT, "no WebSocket connection to %s within %llu ms", w->shown,
         (unsigned long long)w->timeout_ms);
}

static void connect_to(struct gw_upstream_ws *w)
{
    struct lws_client_connect_info ci;

    memset(&ci, 0, sizeof ci);
    ci.context = w->ctx;
    ci.address = w->address;
    ci.port = w->port;
    ci.ssl_connection = w->tls ? LCCSCF_USE_SSL : 0;
    ci.path = w->path;
    ci.host = w->host_header;
    ci.protocol = "mcp";
    ci.local_protocol_name = "mcp";
    ci.ietf_version_or_minus_one = -1;
    ci.retry_and_idle_policy = &w->idle_policy;
    ci.opaque_user_data = w;
    w->phase = CONNECTING;
    /* A failure inside this call has already come as CONNECTION_ERROR. */
    struct lws *wsi = lws_client_connect_via_info(&ci);
    if (!w->down && wsi == NULL)
        fail(w, GW_WS_E_CLOSED, "cannot open a WebSocket to %s", w->shown);
    else if (!w->down)
        w->wsi = wsi;
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct gw_upstream_ws *w = req->data;
    const struct addrinfo *ai = res;
    char name[64] = "";

    w->resolving = 0;
    if (w->down) {
        uv_freeaddrinfo(res);
        schedule(w);
        return;
    }
    if (status != 0) {
        fail(w, GW_WS_E_CLOSED, "cannot resolve the host of %s: %s", w->shown, uv_strerror(status));
        return;
    }
    while (ai != NULL && !w->tls && !is_loopback(ai->ai_addr))
        ai = ai->ai_next;
    if (ai == NULL) {
        addr_name(res->ai_addr, name, sizeof name);
        uv_freeaddrinfo(res);
        fail(w, GW_WS_E_REFUSED,
             "ws:// connects only to loopback addresses; the host of %s resolves to %s (use "
             "wss://)",
             w->shown, name);
        return;
    }
    addr_name(ai->ai_addr, w->address, sizeof w->address);
    uv_freeaddrinfo(res);
    connect_to(w);
}

/* ---- setup ---- */

/* ws://[userinfo@]host[:port][/path][?query][#fragment] */
static int parse_url(struct gw_upstream_ws *w, const char *url, char *why, size_t whylen)
{
    size_t skip;
    if (strncasecmp(url, "wss://", 6) == 0) {
        w->tls = 1;
        skip = 6;
    } else if (strncasecmp(url, "ws://", 5) == 0) {
        skip = 5;
    } else {
        gw_say(why, whylen, "a websocket url must start with ws:// or wss://");
        return UV_EINVAL;
    }
    const char *auth = url + skip;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memrchr(auth, '@', alen);
    const char *h = at ? at + 1 : auth, *aend = auth + alen, *hend, *colon;
    if (h < aend && *h == '[') {
        hend = memchr(h, ']', (size_t)(aend - h));
        if (hend == NULL)
            goto bad;
        w->host = gw_xstrndup(h + 1, (size_t)(hend - h - 1));
        colon = hend + 1 < aend && hend[1] == ':' ? hend + 1 : NULL;
        hend++;
    } else {
        colon = memchr(h, ':', (size_t)(aend - h));
        hend = colon ? colon : aend;
        w->host = gw_xstrndup(h, (size_t)(hend - h));
    }
    if (w->host[0] == '\0')
        goto bad;
    w->port = w->tls ? 443 : 80;
    if (colon != NULL) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (end != aend || p < 1 || p > 65535)
            goto bad;
        w->port = (int)p;
    }
    const char *rest = aend;
    size_t plen = strcspn(rest, "#"), shown_len = strcspn(rest, "?#");
    w->path = rest[0] == '/' ? gw_xstrndup(rest, plen) : gw_xasprintf("/%.*s", (int)plen, rest);
    w->host_header = gw_xstrndup(h, (size_t)(aend - h));
    w->shown = gw_xasprintf("%s%.*s%.*s", w->tls ? "wss://" : "ws://", (int)(aend - h), h,
                            (int)shown_len, rest);
    return 0;
bad:
    gw_say(why, whylen, "the websocket url has no valid host and port");
    return UV_EINVAL;
}

static void copy_headers(struct gw_upstream_ws *w, const struct gw_server_config *cfg)
{
    w->nhdr = cfg->nheaders;
    w->hdr_names = gw_xcalloc(w->nhdr + 1, sizeof(char *));
    w->hdr_values = gw_xcalloc(w->nhdr + 1, sizeof(char *));
    for (size_t i = 0; i < w->nhdr; i++) {
        w->hdr_names[i] = gw_xasprintf("%s:", cfg->headers[i].name);
        w->hdr_values[i] = gw_xstrdup(cfg->headers[i].value);
        if (strcasecmp(cfg->headers[i].name, "Authorization") == 0)
            w->own_authorization = true;
    }
}

/* A connection silent this long (our pings unanswered) is down. */
static void set_idle_policy(struct gw_upstream_ws *w, uint64_t read_timeout_ms)
{
    uint64_t hangup = read_timeout_ms ? (read_timeout_ms + 999) / 1000 : 300;
    if (hangup > 65535)
        hangup = 65535;
    if (hangup < 2)
        hangup = 2;
    w->idle_policy.secs_since_valid_hangup = (uint16_t)hangup;
    w->idle_policy.secs_since_valid_ping =
        (uint16_t)(hangup > 2 * PING_SECS ? PING_SECS : hangup / 2);
}

/* ---- the transport interface ---- */

static int ws_send(struct gw_transport *t, const char *msg, size_t len)
{
    struct gw_upstream_ws *w = (struct gw_upstream_ws *)t;
    if (w->down || w->phase >= CLOSING)
        return UV_EPIPE;
    if (len > GW_WS_MAX_MESSAGE || w->q_bytes + len > GW_WS_MAX_PENDING)
        return UV_ENOBUFS;
    struct msg *m = gw_xmalloc(sizeof(*m) + LWS_PRE + len);
    m->next = NULL;
    m->len = len;
    memcpy(m->buf + LWS_PRE, msg, len);
    if (w->q_tail)
        w->q_tail->next = m;
    else
        w->q_head = m;
    w->q_tail = m;
    w->q_bytes += len;
    if (w->phase == OPEN && w->wsi != NULL)
        lws_callback_on_writable(w->wsi);
    return 0;
}

static void ws_stop(struct gw_transport *t)
{
    gw_upstream_ws_stop((struct gw_upstream_ws *)t);
}

static void ws_kill(struct gw_transport *t)
{
    gw_upstream_ws_kill((struct gw_upstream_ws *)t);
}

static json_t *ws_stderr(const struct gw_transport *t)
{
    (void)t;
    return NULL;
}

static void ws_describe(const struct gw_transport *t, json_t *o)
{
    const struct gw_upstream_ws *w = (const struct gw_upstream_ws *)t;
    const char *err = gw_upstream_ws_last_error(w);

    json_object_set_new(o, "url", json_string(gw_upstream_ws_url(w)));
    if (err != NULL)
        json_object_set_new(o, "lastError", json_string(err));
}

static const char *ws_session(const struct gw_transport *t)
{
    (void)t;
    return NULL;
}

static int ws_pid(const struct gw_transport *t)
{
    (void)t;
    return 0;
}

static const struct gw_transport_ops ws_ops = {
    .send = ws_send,
    .stop = ws_stop,
    .kill = ws_kill,
    .stderr_tail = ws_stderr,
    .describe = ws_describe,
    .session_id = ws_session,
    .pid = ws_pid,
};

int gw_upstream_ws_start(uv_loop_t *loop, const struct gw_server_config *cfg,
                         struct gw_oauth *oauth, const struct gw_transport_cbs *cbs,
                         struct gw_upstream_ws **out, char *why, size_t whylen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    int rc;

    if (cfg->transport != GW_TRANSPORT_WEBSOCKET || cfg->url == NULL) {
        gw_say(why, whylen, "not a websocket server, or no url");
        return UV_EINVAL;
    }
    struct gw_upstream_ws *w = gw_xcalloc(1, sizeof *w);
    w->base.ops = &ws_ops;
    w->loop = loop;
    w->cbs = *cbs;
    w->oauth = oauth;
    w->id = gw_xstrdup(cfg->id);
    w->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 10000;
    rc = parse_url(w, cfg->url, why, whylen);
    if (rc == 0)
        rc = gw_ws__ctx_acquire(loop, protocols, &w->ctx, why, whylen);
    if (rc != 0) {
        free_instance(w);
        return rc;
    }
    w->user = 1;
    copy_headers(w, cfg);
    set_idle_policy(w, cfg->sse_read_timeout_ms);
    w->phase = RESOLVING;
    uv_timer_init(loop, &w->deadline);
    uv_idle_init(loop, &w->later);
    w->deadline.data = w->later.data = w;
    w->handles_open = 2;
    w->resolve.data = w;
    /* From here on the lws context closes only through the loop: a
     * resolver that cannot start fails the instance on the next turn. */
    w->resolve_rc = uv_getaddrinfo(loop, &w->resolve, on_resolved, w->host, NULL, &hints);
    w->resolving = w->resolve_rc == 0;
    uv_timer_start(&w->deadline, on_deadline, w->resolving ? w->timeout_ms : 0, 0);
    *out = w;
    return 0;
}

struct gw_transport *gw_upstream_ws_transport(struct gw_upstream_ws *w)
{
    return &w->base;
}

const char *gw_upstream_ws_url(const struct gw_upstream_ws *w)
{
    return w->shown;
}

const char *gw_upstream_ws_last_error(const struct gw_upstream_ws *w)
{
    return w->error;
}

void gw_upstream_ws_get_stats(const struct gw_upstream_ws *w, struct gw_upstream_ws_stats *out)
{
    *out = w->st;
}
