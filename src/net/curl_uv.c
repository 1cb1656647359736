/* libcurl multi on the libuv loop.
 *
 * Close order: gw_curl_uv_close() detaches every transfer, stops libcurl
 * from calling back (socket and timer functions cleared), cleans the multi
 * handle up, then closes each socket's poll handle and the timer. The
 * object is freed in the last of those close callbacks. */
#include "gw/curl_uv.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gw/curl_lib.h"
#include "gw/netaddr.h"
#include "gw/util.h"

/* One socket libcurl asked us to watch; freed in its close callback. */
struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    struct gw_curl_uv *m;
    struct sock_ctx *next, *prev;
};

struct gw_curl_uv {
    uv_loop_t *loop;
    CURLM *multi; /* NULL until gw_curl_uv_open() */
    uv_timer_t timer;
    struct sock_ctx *socks;
    struct gw_curl_uv_xfer *xfers;
    size_t active;
    int open_handles; /* the timer and every poll not yet closed */
    int busy;         /* inside drain(): closing waits for it */
    int closing, torn_down;
    void (*close_cb)(void *data);
    void *close_data;
    struct sockaddr_storage own; /* the gateway's listen address; ss_family 0: none */
};

static void teardown(struct gw_curl_uv *m);

/* ---- handles ---- */

static void maybe_free(struct gw_curl_uv *m)
{
    if (!m->torn_down || m->open_handles > 0)
        return;
    if (m->close_cb)
        m->close_cb(m->close_data);
    free(m);
}

static void on_sock_closed(uv_handle_t *h)
{
    struct sock_ctx *c = h->data;
    struct gw_curl_uv *m = c->m;
    free(c);
    m->open_handles--;
    maybe_free(m);
}

static void sock_close(struct sock_ctx *c)
{
    struct gw_curl_uv *m = c->m;
    if (c->prev)
        c->prev->next = c->next;
    else
        m->socks = c->next;
    if (c->next)
        c->next->prev = c->prev;
    uv_poll_stop(&c->poll);
    uv_close((uv_handle_t *)&c->poll, on_sock_closed);
}

static void on_timer_closed(uv_handle_t *h)
{
    struct gw_curl_uv *m = h->data;
    m->open_handles--;
    maybe_free(m);
}

/* ---- driving libcurl ---- */

/* Hands every finished transfer to its owner. A `done` callback may add
 * or remove transfers, or close the multi (then teardown waits for us). */
static void drain(struct gw_curl_uv *m)
{
    CURLMsg *msg;
    int pending;
    m->busy++;
    while (!m->torn_down && (msg = curl_multi_info_read(m->multi, &pending)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct gw_curl_uv_xfer *x = NULL;
        CURLcode result = msg->data.result;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        gw_curl_uv_remove(m, x);
        x->done(x, result);
    }
    m->busy--;
    if (m->closing && !m->busy && !m->torn_down)
        teardown(m);
}

static void action(struct gw_curl_uv *m, curl_socket_t fd, int flags)
{
    int running;
    curl_multi_socket_action(m->multi, fd, flags, &running);
    drain(m);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    struct sock_ctx *c = h->data;
    int flags = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    action(c->m, c->fd, flags);
}

static void on_timeout(uv_timer_t *t)
{
    action(t->data, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_TIMERFUNCTION: libcurl wants to be called in `ms` (-1: never).
 * A zero delay still goes through the loop: calling libcurl from here
 * would be a recursive call. */
static int on_timer_set(CURLM *multi, long ms, void *userp)
{
    struct gw_curl_uv *m = userp;
    if (ms < 0)
        uv_timer_stop(&m->timer);
    else
        uv_timer_start(&m->timer, on_timeout, (uint64_t)ms, 0);
    return 0;
}

static struct sock_ctx *sock_new(struct gw_curl_uv *m, curl_socket_t fd)
{
    struct sock_ctx *c = gw_xcalloc(1, sizeof(*c));
    if (uv_poll_init_socket(m->loop, &c->poll, fd) < 0) {
        free(c);
        return NULL;
    }
    c->fd = fd;
    c->m = m;
    c->poll.data = c;
    c->next = m->socks;
    if (m->socks)
        m->socks->prev = c;
    m->socks = c;
    m->open_handles++;
    return c;
}

/* CURLMOPT_SOCKETFUNCTION: start, change or stop watching one socket. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    struct gw_curl_uv *m = userp;
    struct sock_ctx *c = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (c) {
            curl_multi_assign(m->multi, fd, NULL);
            sock_close(c);
        }
        return 0;
    }
    if (!c) {
        c = sock_new(m, fd);
        if (!c)
            return -1;
        curl_multi_assign(m->multi, fd, c);
    }
    int ev = 0;
    if (what & CURL_POLL_IN)
        ev |= UV_READABLE;
    if (what & CURL_POLL_OUT)
        ev |= UV_WRITABLE;
    uv_poll_start(&c->poll, ev, on_poll);
    return 0;
}

/* ---- sockets (S10, P1) ---- */

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

static void name_address(const struct sockaddr *sa, char *buf, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip, sizeof(ip));
        port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, ip, sizeof(ip));
        port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    }
    snprintf(buf, cap, "%s port %u", ip, port);
}

/* `sa` into `out`, an IPv4-mapped IPv6 address as the IPv4 one it reaches. */
static void unmap(const struct sockaddr *sa, struct sockaddr_storage *out)
{
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    memset(out, 0, sizeof(*out));
    if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
        struct sockaddr_in *in = (struct sockaddr_in *)out;
        in->sin_family = AF_INET;
        in->sin_port = in6->sin6_port;
        memcpy(&in->sin_addr, in6->sin6_addr.s6_addr + 12, 4);
    } else if (sa->sa_family == AF_INET6) {
        memcpy(out, sa, sizeof(struct sockaddr_in6));
    } else if (sa->sa_family == AF_INET) {
        memcpy(out, sa, sizeof(struct sockaddr_in));
    }
}

/* The same family and host (ports aside). */
static int same_host(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family)
        return 0;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

static int unspecified(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
    return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* Is `sa` one of this machine's addresses? Asked only of a guarded
 * transfer's connection to the port of a wildcard listener. */
static int local_host(const struct sockaddr *sa)
{
    struct ifaddrs *all, *i;
    int yes = 0;
    if (is_loopback(sa))
        return 1;
    if (getifaddrs(&all) != 0)
        return 1; /* unknown counts as ours: refusing is the safe side */
    for (i = all; i && !yes; i = i->ifa_next) {
        struct sockaddr_storage a;
        if (i->ifa_addr &&
            (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6)) {
            unmap(i->ifa_addr, &a);
            yes = same_host((struct sockaddr *)&a, sa);
        }
    }
    freeifaddrs(all);
    return yes;
}

static unsigned port_of(const struct sockaddr *sa)
{
    return ntohs(sa->sa_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port
                                          : ((const struct sockaddr_in6 *)sa)->sin6_port);
}

/* Would connecting to `sa` reach the gateway's own listener? A listener on
 * 0.0.0.0 (or ::) is reached at every local address of its family (the
 * daemon's IPv6 listener is IPv6-only). */
static int is_own(const struct gw_curl_uv *m, const struct sockaddr *sa)
{
    const struct sockaddr *own = (const struct sockaddr *)&m->own;
    struct sockaddr_storage a;
    if (own->sa_family == 0)
        return 0;
    unmap(sa, &a);
    sa = (const struct sockaddr *)&a;
    if (sa->sa_family != own->sa_family || port_of(sa) != port_of(own))
        return 0;
    return unspecified(own) ? local_host(sa) : same_host(sa, own);
}

/* CURLOPT_OPENSOCKETFUNCTION: every upstream socket is created here, so it
 * is close-on-exec from birth and its address is checked before any byte
 * leaves. Refusing returns CURL_SOCKET_BAD: libcurl tries the next address
 * and finally fails with CURLE_COULDNT_CONNECT. */
static curl_socket_t open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct gw_curl_uv_xfer *x = clientp;
    int own = x->addr_ok && is_own(x->m, &a->addr);
    if (own || (x->loopback_only && !is_loopback(&a->addr)) ||
        (x->addr_ok && !x->addr_ok(x->addr_data, &a->addr))) {
        name_address(&a->addr, x->refused, sizeof(x->refused));
        x->refused_own = own;
        return CURL_SOCKET_BAD;
    }
    int fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    /* Not paced over loopback (an HTTP upstream, the trace collector): under
     * BBR that took about 0.2 us off a traced call at 64 callers. */
    if (fd >= 0)
        gw_netaddr_set_unpaced(fd, &a->addr);
    return fd;
}

static void secure(struct gw_curl_uv_xfer *x)
{
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
    /* A proxy from the environment would make the connected address the
     * proxy's and defeat the address rules; loopback needs no proxy. */
    if (x->loopback_only || x->addr_ok)
        curl_easy_setopt(e, CURLOPT_PROXY, "");
    /* Only a connection opened here went through open_socket's check. */
    curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, x->addr_ok ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, x->addr_ok ? 1L : 0L);
}

/* The descriptors open now, as a bitmap indexed by fd (caller frees). */
static unsigned char *open_fds(size_t *nbits)
{
    size_t cap = 1024;
    unsigned char *bits = gw_xcalloc(cap / 8, 1);
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        size_t fd = (size_t)atoi(e->d_name);
        if ((int)fd == dirfd(d))
            continue; /* our own, closed below: it may be reused */
        while (fd >= cap) {
            bits = gw_xrealloc(bits, cap / 4);
            memset(bits + cap / 8, 0, cap / 8);
            cap *= 2;
        }
        bits[fd / 8] |= (unsigned char)(1u << (fd % 8));
    }
    if (d)
        closedir(d);
    *nbits = cap;
    return bits;
}

/* curl_multi_init() opens a wakeup socketpair without SOCK_CLOEXEC
 * (libcurl 7.88); every descriptor it added is marked here (P1). */
static CURLM *multi_init_cloexec(void)
{
    size_t nbefore, nafter;
    unsigned char *before = open_fds(&nbefore);
    CURLM *multi = curl_multi_init();
    unsigned char *after = open_fds(&nafter);
    for (size_t fd = 0; fd < nafter; fd++) {
        int now = after[fd / 8] & (1u << (fd % 8));
        int was = fd < nbefore && (before[fd / 8] & (1u << (fd % 8)));
        int fl = now && !was ? fcntl((int)fd, F_GETFD) : -1;
        if (fl >= 0 && !(fl & FD_CLOEXEC))
            fcntl((int)fd, F_SETFD, fl | FD_CLOEXEC);
    }
    free(before);
    free(after);
    return multi;
}

/* ---- public ---- */

struct gw_curl_uv *gw_curl_uv_new(uv_loop_t *loop)
{
    struct gw_curl_uv *m = gw_xcalloc(1, sizeof(*m));
    m->loop = loop;
    uv_timer_init(loop, &m->timer);
    m->timer.data = m;
    m->open_handles = 1;
    return m;
}

int gw_curl_uv_open(struct gw_curl_uv *m, char *why, size_t cap)
{
    if (m->multi)
        return 0;
    if (m->closing) {
        if (cap > 0)
            snprintf(why, cap, "the HTTP client is shutting down");
        return UV_EINVAL;
    }
    int rc = gw_curl_lib_load(why, cap);
    if (rc != 0)
        return rc;
    m->multi = multi_init_cloexec();
    if (!m->multi) {
        if (cap > 0)
            snprintf(why, cap, "curl_multi_init failed");
        return UV_ENOMEM;
    }
    curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
    curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, on_timer_set);
    curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
    return 0;
}

int gw_curl_uv_add(struct gw_curl_uv *m, struct gw_curl_uv_xfer *x)
{
    if (x->added || m->closing || !m->multi)
        return UV_EINVAL;
    x->refused[0] = '\0';
    x->refused_own = 0;
    x->m = m;
    secure(x);
    if (curl_multi_add_handle(m->multi, x->easy) != CURLM_OK)
        return UV_EIO;
    x->added = 1;
    x->prev = NULL;
    x->next = m->xfers;
    if (m->xfers)
        m->xfers->prev = x;
    m->xfers = x;
    m->active++;
    return 0;
}

void gw_curl_uv_remove(struct gw_curl_uv *m, struct gw_curl_uv_xfer *x)
{
    if (!x->added)
        return;
    curl_multi_remove_handle(m->multi, x->easy);
    if (x->prev)
        x->prev->next = x->next;
    else
        m->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    x->added = 0;
    m->active--;
}

void gw_curl_uv_set_own(struct gw_curl_uv *m, const struct sockaddr *sa)
{
    unmap(sa, &m->own);
}

size_t gw_curl_uv_active(const struct gw_curl_uv *m)
{
    return m->active;
}

static void teardown(struct gw_curl_uv *m)
{
    m->torn_down = 1;
    if (m->multi) {
        while (m->xfers)
            gw_curl_uv_remove(m, m->xfers);
        curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, NULL);
        curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, NULL);
        while (m->socks)
            sock_close(m->socks);
        curl_multi_cleanup(m->multi);
        m->multi = NULL;
    }
    uv_close((uv_handle_t *)&m->timer, on_timer_closed);
}

void gw_curl_uv_close(struct gw_curl_uv *m, void (*cb)(void *data), void *data)
{
    if (m->closing)
        return;
    m->closing = 1;
    m->close_cb = cb;
    m->close_data = data;
    if (!m->busy)
        teardown(m);
}
