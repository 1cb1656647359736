/* The sandbox's proxy on the loop (gw/netproxy.h): its socket, its
 * connections, each a head read, a destination checked, resolved and
 * connected, then two streams relayed.
 *
 * A connection holds the sandbox's pipe, a timer and, once connecting, a
 * TCP handle; it is freed when all of them have closed and no name lookup
 * is pending. The proxy is freed when its listener and its last
 * connection are gone. */
#include "gw/netproxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gw/log.h"
#include "gw/netaddr.h"
#include "gw/util.h"

#define READ_SIZE (64u << 10)
/* Read buffers kept for the next reads while a connection is open: what
 * one tunnel's queue holds (GW_NETPROXY_QUEUE_MAX) and one more. */
#define POOL_MAX 5

/* HANDED: the connected socket is the relay's; the connection stays as
 * its lease (handoff()). */
enum phase { HEAD, RESOLVING, CONNECTING, TUNNEL, HANDED, REFUSING, CLOSING };

struct conn {
    struct gw_netproxy *p;
    struct conn *prev, *next;
    uv_pipe_t down; /* the sandbox's side */
    uv_tcp_t *up;   /* the destination, once connecting: one per address tried */
    uv_timer_t timer;
    uv_getaddrinfo_t gai;
    uv_connect_t creq;
    struct addrinfo *ai, *try;
    enum phase phase;
    int open; /* handles not yet closed */
    bool gai_pending, exact;
    bool relay;              /* the peer is the sandbox's relay */
    bool reading[2], eof[2]; /* [0] down, [1] up */
    int shut_done;           /* half-closes passed on and completed */
    char head[GW_NETPROXY_HEAD_MAX];
    size_t head_len;
    struct gw_netproxy_req req;
    char entry[280];
};

struct gw_netproxy {
    uv_loop_t *loop;
    uv_pipe_t listener;
    struct gw_netproxy_cbs cbs;
    char **allow;
    size_t nallow;
    bool closing, listener_open;
    unsigned max_conns, nconns;
    pid_t relay_pid; /* the peer of the first connection, 0 before, -1 unknown */
    int relay_pidfd; /* that process, -1 if it could not be had */
    pid_t sandbox;   /* the relay's parent, 0 if not said */
    uint64_t idle_ms, head_ms;
    struct conn *conns;
    char *dir, *sock;
    char *pool[POOL_MAX]; /* read buffers written and free to read into */
    unsigned npool;
};

struct wreq {
    uv_write_t req;
    struct conn *c;
    int to;      /* the side written: 0 down, 1 up */
    char *buf;   /* freed when written; the bytes start at or after it */
    bool pooled; /* buf is a read buffer, back to the pool when written */
};

/* A bulk transfer reads into the same few buffers again and again, warm, not into
 * memory the allocator just gave back and takes again (page faults each time).
 * Emptied with the last connection: an idle proxy holds none. */
static char *pool_take(struct gw_netproxy *p)
{
    return p->npool ? p->pool[--p->npool] : gw_xmalloc(READ_SIZE);
}

static void pool_give(struct gw_netproxy *p, char *buf)
{
    if (buf && p->npool < POOL_MAX && p->conns)
        p->pool[p->npool++] = buf;
    else
        free(buf);
}

static void pool_empty(struct gw_netproxy *p)
{
    while (p->npool)
        free(p->pool[--p->npool]);
}

static void maybe_free_proxy(struct gw_netproxy *p)
{
    if (!p->closing || p->listener_open || p->conns)
        return;
    pool_empty(p);
    for (size_t i = 0; i < p->nallow; i++)
        free(p->allow[i]);
    free(p->allow);
    free(p->sock);
    free(p->dir);
    if (p->relay_pidfd >= 0)
        close(p->relay_pidfd);
    free(p);
}

static uv_stream_t *side(struct conn *c, int i)
{
    return i == 0 ? (uv_stream_t *)&c->down : (uv_stream_t *)c->up;
}

static void maybe_free_conn(struct conn *c)
{
    if (c->open > 0 || c->gai_pending)
        return;
    struct gw_netproxy *p = c->p;
    if (c->prev)
        c->prev->next = c->next;
    else
        p->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    p->nconns--;
    if (!p->conns)
        pool_empty(p);
    if (c->ai)
        uv_freeaddrinfo(c->ai);
    free(c->req.forward);
    free(c);
    maybe_free_proxy(p);
}

static void on_conn_handle_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    c->open--;
    maybe_free_conn(c);
}

static void on_up_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    free(h);
    c->open--;
    maybe_free_conn(c);
}

static void close_up(struct conn *c)
{
    uv_close((uv_handle_t *)c->up, on_up_closed);
    c->up = NULL;
}

static void conn_close(struct conn *c)
{
    if (c->phase == CLOSING)
        return;
    /* The relay holds the socket too: shut down, it ends for both. */
    uv_os_fd_t fd;
    if (c->phase == HANDED && uv_fileno((uv_handle_t *)c->up, &fd) == 0)
        shutdown(fd, SHUT_RDWR);
    c->phase = CLOSING;
    if (c->gai_pending)
        uv_cancel((uv_req_t *)&c->gai);
    uv_close((uv_handle_t *)&c->down, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
    if (c->up)
        close_up(c);
}

static void on_timeout(uv_timer_t *t)
{
    struct conn *c = t->data;
    /* A socket handed over: the daemon no longer sees its bytes. */
    uv_os_fd_t fd;
    uint64_t quiet = c->phase == HANDED && uv_fileno((uv_handle_t *)c->up, &fd) == 0
                         ? gw_netproxy_quiet_ms(fd)
                         : UINT64_MAX;
    if (quiet < c->p->idle_ms) {
        uv_timer_start(&c->timer, on_timeout, c->p->idle_ms - quiet, 0);
        return;
    }
    conn_close(c);
}

static void arm(struct conn *c, uint64_t ms)
{
    uv_timer_start(&c->timer, on_timeout, ms, 0);
}

static void decide(struct conn *c, bool allowed, const char *why)
{
    struct gw_netproxy *p = c->p;
    if (!p->closing && p->cbs.on_decision)
        p->cbs.on_decision(p->cbs.data, c->entry, allowed, why);
}

/* ---- writing ---- */

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void start_reading(struct conn *c, int i);

/* The side that fills the one written may read again once that one has
 * drained. */
static void on_written(uv_write_t *w, int status)
{
    struct wreq *r = (struct wreq *)w;
    struct conn *c = r->c;
    int to = r->to;
    if (r->pooled)
        pool_give(c->p, r->buf);
    else
        free(r->buf);
    free(r);
    if (c->phase == CLOSING)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (c->phase == TUNNEL && side(c, to)->write_queue_size <= GW_NETPROXY_QUEUE_MAX)
        start_reading(c, 1 - to);
}

/* Queues `len` bytes at `buf + off` to side `to`; `buf` is taken over and
 * freed (or pooled) when written. */
static void send_at(struct conn *c, int to, char *buf, size_t off, size_t len, bool pooled)
{
    struct wreq *r = gw_xcalloc(1, sizeof(*r));
    r->c = c;
    r->to = to;
    r->buf = buf;
    r->pooled = pooled;
    uv_buf_t b = uv_buf_init(buf + off, (unsigned)len);
    if (uv_write(&r->req, side(c, to), &b, 1, on_written) != 0) {
        free(buf);
        free(r);
        conn_close(c);
    }
}

static void send_to(struct conn *c, int to, char *buf, size_t len)
{
    send_at(c, to, buf, 0, len, false);
}

static void on_refusal_written(uv_write_t *w, int status)
{
    struct wreq *r = (struct wreq *)w;
    struct conn *c = r->c;
    free(r->buf);
    free(r);
    (void)status;
    conn_close(c);
}

/* Answers `status` inside and closes once it is written. */
static void refuse(struct conn *c, int status, const char *text)
{
    static const struct {
        int code;
        const char *reason;
    } reasons[] = {{400, "Bad Request"},
                   {403, "Forbidden"},
                   {405, "Method Not Allowed"},
                   {414, "URI Too Long"},
                   {431, "Request Header Fields Too Large"},
                   {502, "Bad Gateway"},
                   {503, "Service Unavailable"}};
    const char *reason = "Error";
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        if (reasons[i].code == status)
            reason = reasons[i].reason;
    uv_read_stop((uv_stream_t *)&c->down);
    c->phase = REFUSING;
    struct wreq *r = gw_xcalloc(1, sizeof(*r));
    r->c = c;
    r->to = 0;
    r->buf = gw_xasprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                          "Content-Length: %zu\r\n\r\n%s\n",
                          status, reason, strlen(text) + 1, text);
    uv_buf_t b = uv_buf_init(r->buf, (unsigned)strlen(r->buf));
    arm(c, c->p->head_ms);
    if (uv_write(&r->req, (uv_stream_t *)&c->down, &b, 1, on_refusal_written) != 0) {
        free(r->buf);
        free(r);
        conn_close(c);
    }
}

/* ---- relaying ---- */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct conn *c = h->data;
    (void)hint;
    if (c->phase == HEAD && h == (uv_handle_t *)&c->down) {
        *buf = uv_buf_init(c->head + c->head_len, (unsigned)(sizeof(c->head) - c->head_len));
        return;
    }
    *buf = uv_buf_init(pool_take(c->p), READ_SIZE);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct conn *c = req->data;
    free(req);
    if (c->phase == CLOSING)
        return;
    /* Closed once both ways have ended and their queues are written. */
    if (status < 0 || ++c->shut_done == 2)
        conn_close(c);
}

static void start_reading(struct conn *c, int i)
{
    if (c->reading[i] || c->eof[i] || c->phase != TUNNEL)
        return;
    if (uv_read_start(side(c, i), on_alloc, on_read) == 0)
        c->reading[i] = true;
}

static void stop_reading(struct conn *c, int i)
{
    if (c->reading[i])
        uv_read_stop(side(c, i));
    c->reading[i] = false;
}

static void tunnel_read(struct conn *c, int from, ssize_t n, const uv_buf_t *buf)
{
    int to = 1 - from;
    if (n > 0) {
        arm(c, c->p->idle_ms);
        /* Written at once when the socket takes it (uv_try_write refuses
         * while anything is queued, so the order holds): the buffer is
         * read into again, with no request and no callback. */
        uv_buf_t b = uv_buf_init(buf->base, (unsigned)n);
        int w = uv_try_write(side(c, to), &b, 1);
        if (w == n) {
            pool_give(c->p, buf->base);
            return;
        }
        if (w < 0 && w != UV_EAGAIN) {
            free(buf->base);
            conn_close(c);
            return;
        }
        size_t done = w > 0 ? (size_t)w : 0;
        send_at(c, to, buf->base, done, (size_t)n - done, true);
        if (c->phase == TUNNEL && side(c, to)->write_queue_size > GW_NETPROXY_QUEUE_MAX)
            stop_reading(c, from);
        return;
    }
    pool_give(c->p, buf->base);
    if (n == 0)
        return;
    if (n != UV_EOF) {
        conn_close(c);
        return;
    }
    /* A half-close goes on to the other side once what came before it is
     * written (uv_shutdown waits for the queue). */
    stop_reading(c, from);
    c->eof[from] = true;
    uv_shutdown_t *sh = gw_xcalloc(1, sizeof(*sh));
    sh->data = c;
    if (uv_shutdown(sh, side(c, to), on_shutdown) != 0) {
        free(sh);
        conn_close(c);
    }
}

static void tunnel(struct conn *c)
{
    c->phase = TUNNEL;
    arm(c, c->p->idle_ms);
    size_t extra = c->head_len - c->req.head_len;
    if (c->req.connect) {
        const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
        send_to(c, 0, gw_xstrdup(ok), sizeof(ok) - 1);
    } else {
        size_t n = strlen(c->req.forward);
        send_to(c, 1, c->req.forward, n);
        c->req.forward = NULL;
    }
    if (extra > 0 && c->phase == TUNNEL) {
        char *b = gw_xmalloc(extra);
        memcpy(b, c->head + c->req.head_len, extra);
        send_to(c, 1, b, extra);
    }
    start_reading(c, 0);
    start_reading(c, 1);
}

/* A CONNECT from the relay, connected: the socket goes to the relay with
 * the 200 (SCM_RIGHTS) and the daemon leaves the data path
 * (docs/hardening.md weighs it). The connection stays as a lease, read
 * only to see it end: it counts against max_conns until the relay closes
 * it, and closing it (ended, idle by TCP_INFO, the proxy closed) shuts
 * the socket down for the relay too. Any byte the relay sends on it ends
 * it. false: nothing sent, tunnel as before. */
static bool handoff(struct conn *c)
{
    static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
    uv_os_fd_t down, up;
    if (uv_fileno((uv_handle_t *)&c->down, &down) != 0 || uv_fileno((uv_handle_t *)c->up, &up) != 0)
        return false;
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct iovec iov = {(void *)ok, sizeof(ok) - 1};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &up, sizeof(int));
    ssize_t n;
    do
        n = sendmsg(down, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return false;
    if ((size_t)n != iov.iov_len) {
        conn_close(c);
        return true;
    }
    c->phase = HANDED;
    arm(c, c->p->idle_ms);
    uv_read_start((uv_stream_t *)&c->down, on_alloc, on_read);
    return true;
}

/* ---- the head, the checks, connecting ---- */

static void try_connect(struct conn *c);

static void on_connected(uv_connect_t *req, int status)
{
    struct conn *c = req->data;
    if (c->phase == CLOSING)
        return;
    if (status < 0) {
        c->try = c->try->ai_next;
        close_up(c);
        try_connect(c);
        return;
    }
    decide(c, true, NULL);
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)c->up, &fd) == 0)
        gw_netaddr_set_unpaced(fd, c->try->ai_addr);
    /* Bytes after the head would have to go first: only the relay, which
     * holds them until the answer, is handed the socket. */
    if (c->req.connect && c->relay && gw_netproxy_pidfd_alive(c->p->relay_pidfd) &&
        c->head_len == c->req.head_len && handoff(c))
        return;
    tunnel(c);
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family)
        return false;
    if (a->sa_family == AF_INET)
        return memcmp(&((const struct sockaddr_in *)a)->sin_addr,
                      &((const struct sockaddr_in *)b)->sin_addr, 4) == 0;
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

/* The gateway's own address: its port on its address, or on any local one
 * when it listens on all of them or on loopback. */
static struct sockaddr_storage own_addr;
static bool has_own;

static bool is_own(const struct sockaddr *sa)
{
    if (!has_own)
        return false;
    const struct sockaddr *own = (const struct sockaddr *)&own_addr;
    unsigned short op = own->sa_family == AF_INET ? ((const struct sockaddr_in *)own)->sin_port
                                                  : ((const struct sockaddr_in6 *)own)->sin6_port;
    unsigned short dp = sa->sa_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port
                                                 : ((const struct sockaddr_in6 *)sa)->sin6_port;
    if (op != dp)
        return false;
    enum gw_netaddr_class oc = gw_netaddr_class(own), dc = gw_netaddr_class(sa);
    return same_addr(own, sa) || oc == GW_NETADDR_PRIVATE /* unspecified */ ||
           (oc == GW_NETADDR_LOOPBACK && dc == GW_NETADDR_LOOPBACK);
}

/* Why `sa` may not be connected for this request, or NULL. */
static const char *address_refused(const struct conn *c, const struct sockaddr *sa)
{
    static const char *const names[] = {[GW_NETADDR_LOOPBACK] = "a loopback",
                                        [GW_NETADDR_PRIVATE] = "a private",
                                        [GW_NETADDR_LINK_LOCAL] = "a link-local",
                                        [GW_NETADDR_METADATA] = "a cloud metadata"};
    if (is_own(sa))
        return "the gateway's own address";
    enum gw_netaddr_class k = gw_netaddr_class(sa);
    if (k == GW_NETADDR_PUBLIC || c->exact)
        return NULL;
    return names[k];
}

static void try_connect(struct conn *c)
{
    const char *why = NULL;
    for (; c->try; c->try = c->try->ai_next) {
        const struct sockaddr *sa = c->try->ai_addr;
        if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
            continue;
        why = address_refused(c, sa);
        if (why)
            continue;
        c->up = gw_xcalloc(1, sizeof(*c->up));
        uv_tcp_init(c->p->loop, c->up);
        c->up->data = c;
        c->open++;
        c->creq.data = c;
        /* The address checked is the one connected: no second lookup. */
        if (uv_tcp_connect(&c->creq, c->up, sa, on_connected) == 0)
            return;
        close_up(c);
    }
    if (why) {
        char msg[400];
        snprintf(msg, sizeof(msg),
                 "%s resolves to %s address, which only an entry naming it "
                 "exactly may reach",
                 c->req.host, why);
        if (strcmp(why, "the gateway's own address") == 0)
            snprintf(msg, sizeof(msg), "%s is the gateway's own address, never reachable",
                     c->entry);
        decide(c, false, msg);
        refuse(c, 403, msg);
        return;
    }
    refuse(c, 502, "mcpgw: the destination could not be reached");
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *ai)
{
    struct conn *c = req->data;
    c->gai_pending = false;
    c->ai = ai;
    if (c->phase == CLOSING) {
        maybe_free_conn(c);
        return;
    }
    if (status < 0) {
        refuse(c, 502, "mcpgw: the destination's name does not resolve");
        return;
    }
    c->phase = CONNECTING;
    c->try = ai;
    try_connect(c);
}

static void head_done(struct conn *c)
{
    struct gw_netproxy *p = c->p;
    gw_netproxy_entry(c->req.host, c->req.port, c->entry, sizeof(c->entry));
    uv_read_stop((uv_stream_t *)&c->down);
    if (gw_netproxy_match(p->allow, p->nallow, c->req.host, c->req.port, &c->exact) < 0) {
        char msg[400];
        snprintf(msg, sizeof(msg), "mcpgw: %s is not in this server's sandbox.network", c->entry);
        decide(c, false, "not in the list");
        refuse(c, 403, msg);
        return;
    }
    char port[8];
    snprintf(port, sizeof(port), "%u", c->req.port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    c->phase = RESOLVING;
    c->gai.data = c;
    if (uv_getaddrinfo(p->loop, &c->gai, on_resolved, c->req.host, port, &hints) != 0) {
        refuse(c, 502, "mcpgw: the destination's name could not be looked up");
        return;
    }
    c->gai_pending = true;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    int from = s == (uv_stream_t *)&c->down ? 0 : 1;
    if (c->phase == TUNNEL) {
        tunnel_read(c, from, n, buf);
        return;
    }
    if (c->phase == HANDED) {
        pool_give(c->p, buf->base);
        if (n != 0)
            conn_close(c);
        return;
    }
    if (c->phase != HEAD) {
        if (buf->base && (buf->base < c->head || buf->base >= c->head + sizeof(c->head)))
            free(buf->base);
        return;
    }
    if (n < 0) {
        conn_close(c);
        return;
    }
    c->head_len += (size_t)n;
    int rc = gw_netproxy_parse(c->head, c->head_len, &c->req);
    if (rc == 1 && c->head_len < sizeof(c->head))
        return;
    if (rc == 0)
        head_done(c);
    else
        refuse(c, rc == 1 ? 431 : rc, "mcpgw: the proxy refused this request");
}

static void on_connection(uv_stream_t *server, int status)
{
    struct gw_netproxy *p = server->data;
    /* A first connection lost (the daemon out of descriptors) leaves the
     * relay unknown: the next one may be the server's. libuv may also
     * close it unseen (its EMFILE trick): expect_relay's check then. */
    if (status < 0 && !p->relay_pid)
        p->relay_pid = -1;
    if (status < 0 || p->closing)
        return;
    struct conn *c = gw_xcalloc(1, sizeof(*c));
    c->p = p;
    uv_pipe_init(p->loop, &c->down, 0);
    uv_timer_init(p->loop, &c->timer);
    c->down.data = c->timer.data = c;
    c->open = 2;
    c->next = p->conns;
    if (p->conns)
        p->conns->prev = c;
    p->conns = c;
    p->nconns++;
    if (uv_accept(server, (uv_stream_t *)&c->down) != 0) {
        if (!p->relay_pid)
            p->relay_pid = -1;
        conn_close(c);
        return;
    }
    /* Over the bound a connection is taken and closed at once, so the
     * backlog never holds the sandbox's flood. */
    if (p->nconns > p->max_conns) {
        conn_close(c);
        return;
    }
    /* The relay makes the first connection, before the server exists
     * (gw_sandbox_relay): its process alone is ever handed a socket. */
    struct ucred cr = {0};
    socklen_t crl = sizeof(cr);
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)&c->down, &fd) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) != 0 || cr.pid <= 0)
        cr.pid = -1;
    if (!p->relay_pid) {
        p->relay_pid = cr.pid;
        p->relay_pidfd = cr.pid > 0 ? gw_netproxy_peer_pidfd(fd, cr.pid) : -1;
        if (p->sandbox && p->relay_pidfd >= 0 &&
            !gw_netproxy_is_child(cr.pid, p->relay_pidfd, p->sandbox))
            p->relay_pid = -1;
        /* It carries no request and would count against max_conns. */
        conn_close(c);
        return;
    }
    c->relay = cr.pid > 0 && cr.pid == p->relay_pid;
    arm(c, p->head_ms);
    uv_read_start((uv_stream_t *)&c->down, on_alloc, on_read);
}

/* ---- the proxy ---- */

void gw_netproxy_set_own(const char *listen)
{
    has_own = false;
    if (!listen || strncmp(listen, "unix:", 5) == 0)
        return;
    struct gw_netproxy_req r = {0};
    const char *colon = strrchr(listen, ':');
    if (!colon)
        return;
    char host[INET6_ADDRSTRLEN + 2];
    size_t hl = (size_t)(colon - listen);
    if (hl >= sizeof(host))
        return;
    memcpy(host, listen, hl);
    host[hl] = '\0';
    if (host[0] == '[' && hl > 2) {
        host[hl - 1] = '\0';
        memmove(host, host + 1, hl);
    }
    r.port = (unsigned)atoi(colon + 1);
    if (uv_ip4_addr(host, (int)r.port, (struct sockaddr_in *)&own_addr) == 0 ||
        uv_ip6_addr(host, (int)r.port, (struct sockaddr_in6 *)&own_addr) == 0)
        has_own = true;
}

int gw_netproxy_start(uv_loop_t *loop, const char *parent, const struct gw_netproxy_options *o,
                      const struct gw_netproxy_cbs *cbs, struct gw_netproxy **out, char *why,
                      size_t cap)
{
    if (mkdir(parent, 0700) != 0 && errno != EEXIST) {
        gw_say(why, cap, "cannot make %s for the sandbox's proxy: %s", parent, strerror(errno));
        return -errno;
    }
    char *dir = gw_xasprintf("%s/proxy.XXXXXX", parent);
    if (!mkdtemp(dir)) {
        int e = errno;
        gw_say(why, cap, "cannot make a directory for the sandbox's proxy in %s: %s", parent,
               strerror(e));
        free(dir);
        return -e;
    }
    char *sock = gw_xasprintf("%s/proxy.sock", dir);
    if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        gw_say(why, cap, "the sandbox proxy's socket path %s is too long for a unix socket", sock);
        rmdir(dir);
        free(dir);
        free(sock);
        return UV_ENAMETOOLONG;
    }
    struct gw_netproxy *p = gw_xcalloc(1, sizeof(*p));
    p->loop = loop;
    p->cbs = *cbs;
    p->dir = dir;
    p->sock = sock;
    p->max_conns = o->max_conns ? o->max_conns : 256;
    p->idle_ms = o->idle_ms ? o->idle_ms : 300000;
    p->head_ms = o->head_ms ? o->head_ms : 10000;
    p->relay_pidfd = -1;
    p->allow = gw_xcalloc(o->nallow + 1, sizeof(*p->allow));
    for (size_t i = 0; i < o->nallow; i++)
        p->allow[i] = gw_xstrdup(o->allow[i]);
    p->nallow = o->nallow;
    uv_pipe_init(loop, &p->listener, 0);
    p->listener.data = p;
    p->listener_open = true;
    int rc = uv_pipe_bind(&p->listener, sock);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&p->listener, 128, on_connection);
    if (rc != 0) {
        gw_say(why, cap, "the sandbox's proxy cannot listen on %s: %s", sock, uv_strerror(rc));
        gw_netproxy_close(p);
        return rc;
    }
    *out = p;
    return 0;
}

const char *gw_netproxy_dir(const struct gw_netproxy *p)
{
    return p->dir;
}

void gw_netproxy_expect_relay(struct gw_netproxy *p, pid_t sandbox)
{
    p->sandbox = sandbox;
}

static void on_listener_closed(uv_handle_t *h)
{
    struct gw_netproxy *p = h->data;
    p->listener_open = false;
    maybe_free_proxy(p);
}

void gw_netproxy_close(struct gw_netproxy *p)
{
    if (p->closing)
        return;
    p->closing = true;
    unlink(p->sock);
    rmdir(p->dir);
    for (struct conn *c = p->conns; c; c = c->next)
        conn_close(c);
    uv_close((uv_handle_t *)&p->listener, on_listener_closed);
}
