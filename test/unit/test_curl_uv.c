/* A guarded transfer of gw_curl_uv (gw/curl_uv.h) against a keep-alive
 * responder on loopback, run by the test's own loop: it never reuses a
 * connection another transfer opened (which its address rule never saw),
 * keeps none for others, never connects to the gateway's own listen address
 * (one bound to a wildcard included), and ignores a proxy named by the
 * environment. A connection over loopback is not paced. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/curl_uv.h"
#include "gw/http_xfer.h"

/* ---- a responder: "HTTP/1.1 200" with keep-alive, or a counting proxy ---- */

struct responder {
    uv_tcp_t server;
    int port;
    int accepted, requests;
};

struct conn {
    uv_tcp_t tcp;
    struct responder *r;
    char buf[8192];
    size_t len;
};

static void on_closed(uv_handle_t *h)
{
    free(h->data);
}

static void on_written(uv_write_t *w, int status)
{
    free(w);
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *b)
{
    struct conn *c = h->data;
    *b = uv_buf_init(c->buf + c->len, (unsigned)(sizeof(c->buf) - c->len - 1));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    static char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                       "Content-Length: 2\r\n\r\n{}";
    struct conn *c = s->data;
    if (n < 0) {
        uv_close((uv_handle_t *)s, on_closed);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = 0;
    char *end = strstr(c->buf, "\r\n\r\n");
    if (!end)
        return;
    c->r->requests++;
    size_t rest = c->len - (size_t)(end + 4 - c->buf);
    memmove(c->buf, end + 4, rest);
    c->len = rest;
    uv_write_t *w = malloc(sizeof(*w));
    uv_buf_t out = uv_buf_init(ok, sizeof(ok) - 1);
    uv_write(w, s, &out, 1, on_written);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct responder *r = server->data;
    struct conn *c = calloc(1, sizeof(*c));
    c->r = r;
    uv_tcp_init(server->loop, &c->tcp);
    c->tcp.data = c;
    uv_accept(server, (uv_stream_t *)&c->tcp);
    r->accepted++;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void responder_start(uv_loop_t *loop, struct responder *r)
{
    struct sockaddr_in a;
    int len = sizeof(a);
    memset(r, 0, sizeof(*r));
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_init(loop, &r->server);
    r->server.data = r;
    ck_assert_int_eq(uv_tcp_bind(&r->server, (struct sockaddr *)&a, 0), 0);
    ck_assert_int_eq(uv_listen((uv_stream_t *)&r->server, 16, on_connection), 0);
    uv_tcp_getsockname(&r->server, (struct sockaddr *)&a, &len);
    r->port = ntohs(a.sin_port);
}

/* ---- transfers ---- */

struct fetch {
    struct gw_http_xfer x;
    int done;
    CURLcode rc;
};

static int x_start(struct gw_http_xfer *x)
{
    return 0;
}

static int x_event(struct gw_http_xfer *x, const struct gw_sse_event *ev)
{
    return 0;
}

static void x_done(struct gw_http_xfer *x, CURLcode rc)
{
    struct fetch *f = (struct fetch *)x;
    f->done = 1;
    f->rc = rc;
}

static const struct gw_http_xfer_ops ops = {x_start, x_event, x_done};

static int allow_all(void *data, const struct sockaddr *sa)
{
    ++*(int *)data;
    return 1;
}

static int refuse_all(void *data, const struct sockaddr *sa)
{
    ++*(int *)data;
    return 0;
}

struct bed {
    uv_loop_t loop;
    uv_timer_t tick;
    struct gw_curl_uv *multi;
    struct responder r;
};

static void on_tick(uv_timer_t *t) {}

static void bed_up(struct bed *b)
{
    char why[200];
    uv_loop_init(&b->loop);
    /* A transfer can end in a loop turn's timer phase: the tick keeps
     * that turn's poll from waiting for ever before the test looks. */
    uv_timer_init(&b->loop, &b->tick);
    b->tick.data = NULL;
    uv_timer_start(&b->tick, on_tick, 10, 10);
    uv_unref((uv_handle_t *)&b->tick);
    responder_start(&b->loop, &b->r);
    b->multi = gw_curl_uv_new(&b->loop);
    ck_assert_int_eq(gw_curl_uv_open(b->multi, why, sizeof(why)), 0);
}

static void multi_closed(void *data)
{
    *(int *)data = 1;
}

static void close_one(uv_handle_t *h, void *arg)
{
    if (uv_is_closing(h))
        return;
    uv_close(h, h == arg ? NULL : on_closed);
}

static void bed_down(struct bed *b)
{
    int closed = 0;
    gw_curl_uv_close(b->multi, multi_closed, &closed);
    for (int i = 0; i < 100000 && !closed; i++)
        uv_run(&b->loop, UV_RUN_ONCE);
    ck_assert(closed);
    uv_walk(&b->loop, close_one, &b->r.server);
    uv_run(&b->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&b->loop), 0);
}

/* GET http://127.0.0.1:<port>/ to the end; addr_ok NULL: unguarded. */
static void get(struct bed *b, struct fetch *f, int port,
                int (*addr_ok)(void *, const struct sockaddr *), void *data)
{
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
    struct gw_http_xfer_request req = {
        .method = GW_HTTP_XFER_GET,
        .url = url,
        .connect_ms = 2000,
        .timeout_ms = 5000,
        .body_max = 1024,
        .addr_ok = addr_ok,
        .addr_data = data,
    };
    f->done = 0;
    f->x.ops = &ops;
    ck_assert_int_eq(gw_http_xfer_begin(&f->x, b->multi, &req), 0);
    for (int i = 0; i < 100000 && !f->done; i++)
        uv_run(&b->loop, UV_RUN_ONCE);
    ck_assert(f->done);
}

START_TEST(test_no_reuse)
{
    struct bed b;
    struct fetch plain = {0}, guarded = {0};
    int asked = 0;
    bed_up(&b);

    /* The plain transfer leaves its connection in the pool. */
    get(&b, &plain, b.r.port, NULL, NULL);
    ck_assert_int_eq(plain.rc, CURLE_OK);
    get(&b, &plain, b.r.port, NULL, NULL);
    ck_assert_int_eq(b.r.accepted, 1);
    ck_assert_int_eq(b.r.requests, 2);

    /* A guarded one whose rule refuses the address is refused, not sent
     * over the pooled connection. */
    get(&b, &guarded, b.r.port, refuse_all, &asked);
    ck_assert_int_ne(guarded.rc, CURLE_OK);
    ck_assert_int_eq(asked, 1);
    char where[64];
    snprintf(where, sizeof(where), "127.0.0.1 port %d", b.r.port);
    ck_assert_str_eq(guarded.x.cx.refused, where);
    ck_assert_int_eq(guarded.x.cx.refused_own, 0);
    ck_assert_int_eq(b.r.requests, 2);

    /* One it allows opens a connection of its own, and keeps none. */
    asked = 0;
    get(&b, &guarded, b.r.port, allow_all, &asked);
    ck_assert_int_eq(guarded.rc, CURLE_OK);
    ck_assert_int_eq(asked, 1);
    ck_assert_int_eq(b.r.accepted, 2);
    get(&b, &guarded, b.r.port, allow_all, &asked);
    ck_assert_int_eq(asked, 2);
    ck_assert_int_eq(b.r.accepted, 3);
    ck_assert_int_eq(b.r.requests, 4);

    gw_http_xfer_cleanup(&plain.x);
    gw_http_xfer_cleanup(&guarded.x);
    bed_down(&b);
}
END_TEST

/* Reno, whatever the host's congestion control: the kernel would pace a
 * BBR connection with a timer per segment. */
START_TEST(test_loopback_unpaced)
{
    struct bed b;
    struct fetch f = {0};
    int found = 0;
    bed_up(&b);

    get(&b, &f, b.r.port, NULL, NULL);
    ck_assert_int_eq(f.rc, CURLE_OK);
    /* the pooled connection: the socket whose peer is the responder */
    for (int fd = 3; fd < 1024; fd++) {
        struct sockaddr_in peer;
        socklen_t plen = sizeof(peer);
        char cc[16] = "";
        socklen_t n = sizeof(cc);
        if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0 || peer.sin_family != AF_INET ||
            ntohs(peer.sin_port) != b.r.port)
            continue;
        ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &n), 0);
        ck_assert_str_eq(cc, "reno");
        found++;
    }
    ck_assert_int_eq(found, 1);

    gw_http_xfer_cleanup(&f.x);
    bed_down(&b);
}
END_TEST

/* `ip`:`port` as the gateway's own listen address. */
static void set_own(struct bed *b, const char *ip, int port)
{
    struct sockaddr_storage ss;
    if (strchr(ip, ':'))
        uv_ip6_addr(ip, port, (struct sockaddr_in6 *)&ss);
    else
        uv_ip4_addr(ip, port, (struct sockaddr_in *)&ss);
    gw_curl_uv_set_own(b->multi, (struct sockaddr *)&ss);
}

START_TEST(test_own_address)
{
    struct bed b;
    struct fetch f = {0};
    int asked = 0;
    bed_up(&b);

    /* The listener's own address and port: refused whatever addr_ok says;
     * an unguarded transfer is not concerned. */
    set_own(&b, "127.0.0.1", b.r.port);
    get(&b, &f, b.r.port, allow_all, &asked);
    ck_assert_int_ne(f.rc, CURLE_OK);
    ck_assert_int_eq(f.x.cx.refused_own, 1);
    ck_assert_int_eq(b.r.accepted, 0);
    get(&b, &f, b.r.port, NULL, NULL);
    ck_assert_int_eq(f.rc, CURLE_OK);
    ck_assert_int_eq(f.x.cx.refused_own, 0);

    /* A wildcard listener is every local address at its port. */
    set_own(&b, "0.0.0.0", b.r.port);
    get(&b, &f, b.r.port, allow_all, &asked);
    ck_assert_int_eq(f.x.cx.refused_own, 1);

    /* Another port, another host, or an IPv6-only listener: not ours. */
    set_own(&b, "127.0.0.1", b.r.port == 65535 ? 1 : b.r.port + 1);
    get(&b, &f, b.r.port, allow_all, &asked);
    ck_assert_int_eq(f.rc, CURLE_OK);
    set_own(&b, "127.0.0.2", b.r.port);
    get(&b, &f, b.r.port, allow_all, &asked);
    ck_assert_int_eq(f.rc, CURLE_OK);
    set_own(&b, "::", b.r.port);
    get(&b, &f, b.r.port, allow_all, &asked);
    ck_assert_int_eq(f.rc, CURLE_OK);
    ck_assert_int_eq(f.x.cx.refused_own, 0);

    gw_http_xfer_cleanup(&f.x);
    bed_down(&b);
}
END_TEST

START_TEST(test_no_proxy_from_environment)
{
    struct bed b;
    struct responder proxy;
    struct fetch f = {0};
    int asked = 0;
    char url[64];
    bed_up(&b);
    responder_start(&b.loop, &proxy);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", proxy.port);
    setenv("http_proxy", url, 1);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");

    /* The environment's proxy is real: an unguarded transfer uses it. */
    get(&b, &f, b.r.port, NULL, NULL);
    ck_assert_int_eq(proxy.requests, 1);
    ck_assert_int_eq(b.r.requests, 0);
    /* A guarded one goes straight to the address it checked. */
    get(&b, &f, b.r.port, allow_all, &asked);
    ck_assert_int_eq(f.rc, CURLE_OK);
    ck_assert_int_eq(proxy.requests, 1);
    ck_assert_int_eq(b.r.requests, 1);

    unsetenv("http_proxy");
    gw_http_xfer_cleanup(&f.x);
    uv_close((uv_handle_t *)&proxy.server, NULL);
    bed_down(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("curl_uv");
    TCase *tc = tcase_create("guarded");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_no_reuse);
    tcase_add_test(tc, test_own_address);
    tcase_add_test(tc, test_no_proxy_from_environment);
    tcase_add_test(tc, test_loopback_unpaced);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
