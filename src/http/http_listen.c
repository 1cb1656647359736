/* HTTP/1.1 server: the listener (TCP or a unix socket), accepting
 * connections, refusing those over max_connections, and closing. */
#include "gw/http_internal.h"

#include "gw/log.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Connections being told 503 at once; beyond, they are closed silently. */
#define REJECT_MAX 64
#define BACKLOG    511

static void format_addr(const struct sockaddr_storage *ss, char *out, size_t n)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(a, ip, sizeof ip);
        snprintf(out, n, "[%s]:%u", ip, (unsigned)ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        uv_ip4_name(a, ip, sizeof ip);
        snprintf(out, n, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
    }
}

static void set_peer(struct conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (c->srv->is_unix)
        snprintf(c->peer, sizeof c->peer, "unix");
    else if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0)
        format_addr(&ss, c->peer, sizeof c->peer);
    else
        snprintf(c->peer, sizeof c->peer, "unknown");
}

static struct conn *conn_new(struct gw_http_server *srv)
{
    struct conn *c = gw_xrealloc(NULL, sizeof *c);
    memset(c, 0, sizeof *c);
    int rc =
        srv->is_unix ? uv_pipe_init(srv->loop, &c->h.pipe, 0) : uv_tcp_init(srv->loop, &c->h.tcp);
    if (rc < 0) {
        free(c);
        return NULL;
    }
    uv_timer_init(srv->loop, &c->timer);
    c->h.handle.data = c;
    c->timer.data = c;
    c->open_handles = 2;
    c->srv = srv;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    gw_http__parser_init(&c->parser, c->peer, srv->is_unix, &c->lim);
    return c;
}

/* Over max_connections: told 503 and closed, but not counted, so the
 * listener keeps accepting and the queue never starves. */
static void conn_reject(struct conn *c)
{
    c->rejected = 1;
    c->srv->nrejected++;
    c->lim = c->srv->lim;
    if (c->srv->nrejected > REJECT_MAX) {
        gw_http__conn_close(c);
        return;
    }
    gw_http__conn_read_start(c);
    gw_http__final_error(c, 503, "too_many_connections",
                         "The gateway has too many open connections; try again later.");
}

static void on_connection(uv_stream_t *lis, int status)
{
    struct gw_http_server *srv = lis->data;
    if (status < 0) {
        gw_log(GW_LOG_DEBUG, "http accept failed", "error", uv_strerror(status), NULL);
        return;
    }
    struct conn *c = conn_new(srv);
    if (c == NULL)
        return;
    srv->nconns++;
    int rc = uv_accept(lis, &c->h.stream);
    if (rc == 0)
        set_peer(c);
    /* Every write is a whole answer or event: Nagle would hold an event
     * behind an unacknowledged one until the peer's delayed ACK. */
    if (rc == 0 && !srv->is_unix)
        uv_tcp_nodelay(&c->h.tcp, 1);
    if (rc < 0) {
        gw_http__debug(c, "http accept failed", uv_strerror(rc));
        gw_http__conn_close(c);
        return;
    }
    if (srv->lim.max_connections && srv->nconns > srv->lim.max_connections) {
        srv->nconns--;
        conn_reject(c);
        return;
    }
    gw_http__conn_reset_request(c);
    c->state = CS_HEADERS; /* the header clock starts at accept */
    gw_http__arm_timer(c);
    gw_http__conn_read_start(c);
}

/* ---- the listener ---- */

static void on_finisher_closed(uv_handle_t *h)
{
    struct gw_http_server *srv = h->data;
    srv->finisher_closed = 1;
    gw_http__srv_maybe_done(srv);
}

void gw_http__srv_maybe_done(struct gw_http_server *srv)
{
    if (!srv->closing || !srv->lis_closed || srv->conns)
        return;
    if (srv->has_finisher && !srv->finisher_closed) {
        if (!uv_is_closing((uv_handle_t *)&srv->finisher))
            uv_close((uv_handle_t *)&srv->finisher, on_finisher_closed);
        return;
    }
    if (srv->unix_path)
        unlink(srv->unix_path);
    void (*cb)(void *) = srv->close_cb;
    void *data = srv->close_data;
    free(srv->unix_path);
    free(srv->rbuf);
    free(srv);
    if (cb)
        cb(data);
}

static void on_listener_closed(uv_handle_t *h)
{
    struct gw_http_server *srv = h->data;
    srv->lis_closed = 1;
    gw_http__srv_maybe_done(srv);
}

/* "host:port" or "[v6]:port" into *ss. */
static int parse_inet(const char *listen, struct sockaddr_storage *ss)
{
    char host[64];
    const char *colon = strrchr(listen, ':');
    if (colon == NULL || colon == listen || colon[1] == '\0')
        return UV_EINVAL;
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || errno || port > 65535 || !isdigit((unsigned char)colon[1]))
        return UV_EINVAL;
    size_t hlen = (size_t)(colon - listen);
    if (listen[0] == '[') {
        if (hlen < 3 || listen[hlen - 1] != ']' || hlen - 2 >= sizeof host)
            return UV_EINVAL;
        memcpy(host, listen + 1, hlen - 2);
        host[hlen - 2] = '\0';
        return uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)ss);
    }
    if (hlen >= sizeof host)
        return UV_EINVAL;
    memcpy(host, listen, hlen);
    host[hlen] = '\0';
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof host, "127.0.0.1");
    return uv_ip4_addr(host, (int)port, (struct sockaddr_in *)ss);
}

static int listen_tcp(struct gw_http_server *srv, const struct sockaddr_storage *ss)
{
    int rc = uv_tcp_bind(&srv->lis.tcp, (const struct sockaddr *)ss,
                         ss->ss_family == AF_INET6 ? UV_TCP_IPV6ONLY : 0);
    if (rc == 0)
        rc = uv_listen(&srv->lis.stream, BACKLOG, on_connection);
    if (rc < 0)
        return rc;
    struct sockaddr_storage bound;
    int len = sizeof bound;
    rc = uv_tcp_getsockname(&srv->lis.tcp, (struct sockaddr *)&bound, &len);
    if (rc == 0)
        format_addr(&bound, srv->address, sizeof srv->address);
    return rc;
}

/* A stale socket from a previous run is removed; anything else in the way
 * is an error. Mode 0660 is set between bind and listen, when nobody can
 * connect yet. */
static int listen_unix(struct gw_http_server *srv, const char *path, const char **why)
{
    struct stat st;
    if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        *why = "the socket path is too long";
        return UV_ENAMETOOLONG;
    }
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            *why = "a file that is not a socket is in the way";
            return UV_EEXIST;
        }
        unlink(path);
    }
    int rc = uv_pipe_bind(&srv->lis.pipe, path);
    if (rc < 0)
        return rc;
    srv->unix_path = strdup(path);
    if (srv->unix_path == NULL)
        gw_xrealloc(NULL, SIZE_MAX); /* reports and aborts */
    if (chmod(path, 0660) < 0)
        return -errno;
    snprintf(srv->address, sizeof srv->address, "unix:%s", path);
    return uv_listen(&srv->lis.stream, BACKLOG, on_connection);
}

static int start_listening(struct gw_http_server *srv, const char *listen, const char **why)
{
    struct sockaddr_storage ss;
    int rc;
    if (strncmp(listen, "unix:", 5) == 0) {
        srv->is_unix = 1;
        if (listen[5] == '\0') {
            *why = "the socket path is empty";
            return UV_EINVAL;
        }
        rc = uv_pipe_init(srv->loop, &srv->lis.pipe, 0);
        if (rc < 0)
            return rc;
        srv->lis.handle.data = srv; /* also marks the handle as needing uv_close */
        return listen_unix(srv, listen + 5, why);
    }
    memset(&ss, 0, sizeof ss);
    if (parse_inet(listen, &ss) < 0) {
        *why = "expected IPv4:port, [IPv6]:port or unix:/path";
        return UV_EINVAL;
    }
    rc = uv_tcp_init(srv->loop, &srv->lis.tcp);
    if (rc < 0)
        return rc;
    srv->lis.handle.data = srv;
    return listen_tcp(srv, &ss);
}

int gw_http_server_start(uv_loop_t *loop, const char *listen, const struct gw_http_limits *limits,
                         gw_http_handler handler, void *data, struct gw_http_server **out,
                         char **err)
{
    struct gw_http_server *srv = gw_xrealloc(NULL, sizeof *srv);
    memset(srv, 0, sizeof *srv);
    srv->loop = loop;
    srv->lim = *limits;
    srv->handler = handler;
    srv->data = data;
    const char *why = NULL;
    int rc = start_listening(srv, listen, &why);
    if (rc == 0) {
        uv_idle_init(loop, &srv->finisher);
        srv->finisher.data = srv;
        srv->has_finisher = 1;
        *out = srv;
        return 0;
    }
    if (err && asprintf(err, "cannot listen on %s: %s", listen, why ? why : uv_strerror(rc)) < 0)
        *err = NULL;
    srv->closing = 1;
    if (srv->lis.handle.data) {
        uv_close(&srv->lis.handle, on_listener_closed); /* frees srv */
    } else {
        free(srv);
    }
    return rc;
}

void gw_http_server_set_limits(struct gw_http_server *srv, const struct gw_http_limits *limits)
{
    srv->lim = *limits;
}

/* Idle and half-received connections close now; those whose request is
 * with the handler, or whose answer is being written, close after it. */
void gw_http_server_close(struct gw_http_server *srv, void (*cb)(void *data), void *data)
{
    if (srv->closing)
        return;
    srv->closing = 1;
    srv->close_cb = cb;
    srv->close_data = data;
    uv_close(&srv->lis.handle, on_listener_closed);
    for (struct conn *c = srv->conns, *next; c; c = next) {
        next = c->next;
        if (c->state != CS_BUSY && c->state != CS_SENDING)
            gw_http__conn_close(c);
    }
}

void gw_http_server_abort_all(struct gw_http_server *srv)
{
    for (struct conn *c = srv->conns, *next; c; c = next) {
        next = c->next;
        gw_http__conn_close(c);
    }
}

void gw_http_server_set_response_hook(struct gw_http_server *srv, gw_http_response_hook hook,
                                      void *data)
{
    srv->hook = hook;
    srv->hook_data = data;
}

void gw_http_server_set_headers(struct gw_http_server *srv, const char *const *headers)
{
    srv->always = headers;
}

const char *gw_http_server_address(const struct gw_http_server *srv)
{
    return srv->address;
}

int gw_http_server_sockname(const struct gw_http_server *srv, struct sockaddr_storage *ss)
{
    int len = sizeof(*ss);
    if (srv->is_unix)
        return UV_EINVAL;
    return uv_tcp_getsockname(&srv->lis.tcp, (struct sockaddr *)ss, &len);
}

size_t gw_http_server_connections(const struct gw_http_server *srv)
{
    return srv->nconns;
}
