/* The sandbox proxy on a real loop (gw/netproxy.h): an allowed CONNECT
 * from the relay (the peer of the first connection, here this process) is
 * answered with the connected socket itself; the connection stays as its
 * lease, whose end shuts the socket down; a socket quiet for idle_ms is
 * shut down, one that carries bytes is not, though the daemon sees none of
 * them; another process gets no socket, only a tunnel through the proxy.
 *
 * The loop runs in the main thread; a second thread plays the relay and
 * the destination with blocking sockets, and notes what it saw. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "gw/netproxy.h"

#define IDLE_MS 1000

struct run {
    char sock[108];
    int listener;
    unsigned port;
    uv_async_t done;
    /* what the relay's thread saw */
    int fds_first, fds_other;
    bool answered_first, echoed, alive_while_busy, shut_when_idle, shut_with_lease, other_tunnel;
    int allowed;
    char up_cc[16]; /* the handed socket's congestion control */
};

static int unix_connect(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A CONNECT to the test's listener; the answer's bytes into buf, a
 * descriptor that came with them into *fd (-1 if none): how many came. */
static int ask(struct run *r, int c, char *buf, size_t cap, int *fd)
{
    char req[96];
    snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", r->port);
    *fd = -1;
    if (send(c, req, strlen(req), MSG_NOSIGNAL) < 0)
        return -1;
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(4 * sizeof(int))];
    } ctl;
    struct iovec iov = {buf, cap - 1};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b)};
    ssize_t n = recvmsg(c, &m, MSG_CMSG_CLOEXEC);
    buf[n > 0 ? n : 0] = '\0';
    int nfd = 0;
    for (struct cmsghdr *h = n > 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h))
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
            nfd += (int)((h->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            memcpy(fd, CMSG_DATA(h), sizeof(int));
        }
    return nfd;
}

/* Whether `fd` reads its end (0) within `ms`. */
static bool ends_within(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b[16];
    return poll(&p, 1, ms) == 1 && recv(fd, b, sizeof(b), MSG_DONTWAIT) <= 0;
}

/* One byte each way between the relay's socket and the destination's. */
static bool exchange(int a, int b)
{
    char x = 'x', y;
    return send(a, &x, 1, MSG_NOSIGNAL) == 1 && recv(b, &y, 1, 0) == 1 && y == 'x' &&
           send(b, &x, 1, MSG_NOSIGNAL) == 1 && recv(a, &y, 1, 0) == 1 && y == 'x';
}

static void *relay(void *arg)
{
    struct run *r = arg;
    char buf[256];
    /* The first connection, kept open as the relay keeps it. */
    int hello = unix_connect(r->sock);

    /* Handed over; the bytes go between the two sockets alone. */
    int lease = unix_connect(r->sock), up;
    r->fds_first = ask(r, lease, buf, sizeof(buf), &up);
    r->answered_first = strcmp(buf, "HTTP/1.1 200 Connection Established\r\n\r\n") == 0;
    socklen_t cc_len = sizeof(r->up_cc);
    if (up >= 0)
        getsockopt(up, IPPROTO_TCP, TCP_CONGESTION, r->up_cc, &cc_len);
    int dest = accept(r->listener, NULL, NULL);
    if (up >= 0 && dest >= 0) {
        r->echoed = exchange(up, dest);
        /* Busy for twice the idle time, never quiet for long: kept. */
        bool alive = true;
        for (int i = 0; i < 10 && alive; i++) {
            usleep(IDLE_MS * 200);
            alive = exchange(up, dest);
        }
        r->alive_while_busy = alive;
        /* Quiet: shut down, both ends see it. */
        r->shut_when_idle = ends_within(up, 10 * IDLE_MS) && ends_within(dest, 5000);
    }
    if (up >= 0)
        close(up);
    if (dest >= 0)
        close(dest);
    close(lease);

    /* The lease closed: the socket is shut down for the relay too. */
    lease = unix_connect(r->sock);
    ask(r, lease, buf, sizeof(buf), &up);
    dest = accept(r->listener, NULL, NULL);
    close(lease);
    r->shut_with_lease = up >= 0 && dest >= 0 && ends_within(up, 5000) && ends_within(dest, 5000);
    if (up >= 0)
        close(up);
    if (dest >= 0)
        close(dest);

    /* Another process: no descriptor, a tunnel through the proxy. */
    int pfd[2];
    if (pipe(pfd) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            int c = unix_connect(r->sock), fd;
            char b[256];
            int n = ask(r, c, b, sizeof(b), &fd);
            int d = accept(r->listener, NULL, NULL);
            char res[2] = {(char)('0' + n), exchange(c, d) ? 'y' : 'n'};
            (void)!write(pfd[1], res, 2);
            _exit(0);
        }
        close(pfd[1]);
        char res[2] = {0};
        if (read(pfd[0], res, 2) == 2) {
            r->fds_other = res[0] - '0';
            r->other_tunnel = res[1] == 'y';
        }
        close(pfd[0]);
        waitpid(pid, NULL, 0);
    }
    if (hello >= 0)
        close(hello);
    uv_async_send(&r->done);
    return NULL;
}

static void on_decision(void *data, const char *entry, bool allowed, const char *why)
{
    struct run *r = data;
    (void)entry;
    (void)why;
    r->allowed += allowed;
}

static void on_done(uv_async_t *a)
{
    uv_stop(a->loop);
}

START_TEST(test_handoff)
{
    struct run r = {0};
    r.listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    ck_assert_int_eq(bind(r.listener, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(r.listener, 8), 0);
    getsockname(r.listener, (struct sockaddr *)&a, &al);
    r.port = ntohs(a.sin_port);

    char dir[] = "/tmp/netproxy-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char entry[32], *allow[1] = {entry}, why[256];
    snprintf(entry, sizeof(entry), "127.0.0.1:%u", r.port);
    struct gw_netproxy_options o = {.allow = allow, .nallow = 1, .idle_ms = IDLE_MS};
    struct gw_netproxy_cbs cbs = {on_decision, &r};
    struct gw_netproxy *p;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ck_assert_int_eq(gw_netproxy_start(&loop, dir, &o, &cbs, &p, why, sizeof(why)), 0);
    snprintf(r.sock, sizeof(r.sock), "%s/proxy.sock", gw_netproxy_dir(p));
    uv_async_init(&loop, &r.done, on_done);
    pthread_t t;
    pthread_create(&t, NULL, relay, &r);
    uv_run(&loop, UV_RUN_DEFAULT);
    pthread_join(t, NULL);
    gw_netproxy_close(p);
    uv_close((uv_handle_t *)&r.done, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    close(r.listener);
    rmdir(dir);

    ck_assert_int_eq(r.fds_first, 1);
    ck_assert(r.answered_first);
    /* a destination on loopback: not paced, whatever the host's default */
    ck_assert_str_eq(r.up_cc, "reno");
    ck_assert(r.echoed);
    ck_assert(r.alive_while_busy);
    ck_assert(r.shut_when_idle);
    ck_assert(r.shut_with_lease);
    ck_assert_int_eq(r.fds_other, 0);
    ck_assert(r.other_tunnel);
    ck_assert_int_eq(r.allowed, 3);
}
END_TEST

/* ---- leases count against max_conns ---- */

struct bound {
    struct run r;
    char sock[108];
    uv_async_t done;
    int fds[2], fds_over, fds_after;
};

static void *bound_thread(void *arg)
{
    struct bound *b = arg;
    char buf[256];
    int up[2] = {-1, -1}, fd;
    int hello = unix_connect(b->sock);
    /* Two tunnels handed over and held: the bound of two reached. */
    int lease[2];
    for (int i = 0; i < 2; i++) {
        lease[i] = unix_connect(b->sock);
        b->fds[i] = ask(&b->r, lease[i], buf, sizeof(buf), &up[i]);
    }
    int over = unix_connect(b->sock);
    b->fds_over = ask(&b->r, over, buf, sizeof(buf), &fd);
    close(over);
    /* One let go: room again, once the proxy has seen it end. */
    close(lease[0]);
    for (int i = 0; i < 100 && b->fds_after != 1; i++) {
        usleep(20000);
        int again = unix_connect(b->sock);
        b->fds_after = ask(&b->r, again, buf, sizeof(buf), &fd);
        if (fd >= 0)
            close(fd);
        close(again);
    }
    close(lease[1]);
    for (int i = 0; i < 2; i++)
        if (up[i] >= 0)
            close(up[i]);
    if (hello >= 0)
        close(hello);
    uv_async_send(&b->done);
    return NULL;
}

/* A tunnel handed to the relay holds its place among max_conns until the
 * relay lets it go. */
START_TEST(test_lease_bound)
{
    struct bound b = {0};
    b.r.listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    ck_assert_int_eq(bind(b.r.listener, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(b.r.listener, 128), 0);
    getsockname(b.r.listener, (struct sockaddr *)&a, &al);
    b.r.port = ntohs(a.sin_port);
    char dir[] = "/tmp/netproxy-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char entry[32], *allow[1] = {entry}, why[256];
    snprintf(entry, sizeof(entry), "127.0.0.1:%u", b.r.port);
    struct gw_netproxy_options o = {.allow = allow, .nallow = 1, .max_conns = 2};
    struct gw_netproxy_cbs cbs = {on_decision, &b.r};
    struct gw_netproxy *p;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ck_assert_int_eq(gw_netproxy_start(&loop, dir, &o, &cbs, &p, why, sizeof(why)), 0);
    snprintf(b.sock, sizeof(b.sock), "%s/proxy.sock", gw_netproxy_dir(p));
    uv_async_init(&loop, &b.done, on_done);
    pthread_t t;
    pthread_create(&t, NULL, bound_thread, &b);
    uv_run(&loop, UV_RUN_DEFAULT);
    pthread_join(t, NULL);
    gw_netproxy_close(p);
    uv_close((uv_handle_t *)&b.done, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    close(b.r.listener);
    rmdir(dir);
    ck_assert_int_eq(b.fds[0], 1);
    ck_assert_int_eq(b.fds[1], 1);
    /* over the bound nothing is handed: 0 when the proxy's close comes
     * after the request was sent, -1 when it comes first (EPIPE) */
    ck_assert_int_le(b.fds_over, 0);
    ck_assert_int_eq(b.fds_after, 1);
}
END_TEST

/* ---- the first connection not the relay's ---- */

static int read_count(int fd)
{
    char n = 0;
    return read(fd, &n, 1) == 1 ? n - '0' : -1;
}

/* This process plays bubblewrap: it forks the relay, which forks the
 * server. */
struct lineage {
    struct run r;
    char sock[108];
    uv_async_t done;
    bool server_first;
    int fds_server, fds_relay;
};

/* A first connection, as the relay makes, then a CONNECT on a new one;
 * how many descriptors came, as one byte on `out`. */
static void ask_once(struct lineage *l, int out)
{
    char b[256];
    int hello = unix_connect(l->sock);
    int fd, c = unix_connect(l->sock);
    char n = (char)('0' + (c >= 0 ? ask(&l->r, c, b, sizeof(b), &fd) : 9));
    (void)!write(out, &n, 1);
    if (hello >= 0)
        close(hello);
}

/* The relay: its server connects first when server_first (the relay's
 * own first connection lost), else after the relay. */
static void relay_proc(struct lineage *l, int out)
{
    int go[2];
    if (pipe(go) != 0)
        _exit(1);
    pid_t server = fork();
    if (server == 0) {
        char x;
        if (!l->server_first && read(go[0], &x, 1) != 1)
            _exit(1);
        ask_once(l, out);
        _exit(0);
    }
    if (l->server_first)
        waitpid(server, NULL, 0);
    ask_once(l, out);
    (void)!write(go[1], "x", 1);
    waitpid(server, NULL, 0);
    _exit(0);
}

static void *lineage_thread(void *arg)
{
    struct lineage *l = arg;
    int out[2];
    if (pipe(out) == 0) {
        pid_t relay = fork();
        if (relay == 0)
            relay_proc(l, out[1]);
        int first = read_count(out[0]), second = read_count(out[0]);
        l->fds_server = l->server_first ? first : second;
        l->fds_relay = l->server_first ? second : first;
        waitpid(relay, NULL, 0);
        close(out[0]);
        close(out[1]);
    }
    uv_async_send(&l->done);
    return NULL;
}

static void run_lineage(struct lineage *l)
{
    l->r.listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    ck_assert_int_eq(bind(l->r.listener, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(l->r.listener, 8), 0);
    getsockname(l->r.listener, (struct sockaddr *)&a, &al);
    l->r.port = ntohs(a.sin_port);
    char dir[] = "/tmp/netproxy-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char entry[32], *allow[1] = {entry}, why[256];
    snprintf(entry, sizeof(entry), "127.0.0.1:%u", l->r.port);
    struct gw_netproxy_options o = {.allow = allow, .nallow = 1};
    struct gw_netproxy_cbs cbs = {on_decision, &l->r};
    struct gw_netproxy *p;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ck_assert_int_eq(gw_netproxy_start(&loop, dir, &o, &cbs, &p, why, sizeof(why)), 0);
    gw_netproxy_expect_relay(p, getpid());
    snprintf(l->sock, sizeof(l->sock), "%s/proxy.sock", gw_netproxy_dir(p));
    uv_async_init(&loop, &l->done, on_done);
    pthread_t t;
    pthread_create(&t, NULL, lineage_thread, l);
    uv_run(&loop, UV_RUN_DEFAULT);
    pthread_join(t, NULL);
    gw_netproxy_close(p);
    uv_close((uv_handle_t *)&l->done, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    close(l->r.listener);
    rmdir(dir);
}

/* The relay first, as it connects before it starts the server: its
 * sockets, none for the server. The server first (the relay's connection
 * lost, e.g. the daemon out of descriptors and libuv closing what it
 * could not take): none for either. */
START_TEST(test_first_not_relay)
{
    struct lineage l = {0};
    run_lineage(&l);
    ck_assert_int_eq(l.fds_relay, 1);
    ck_assert_int_eq(l.fds_server, 0);
    struct lineage m = {.server_first = true};
    run_lineage(&m);
    ck_assert_int_eq(m.fds_server, 0);
    ck_assert_int_eq(m.fds_relay, 0);
}
END_TEST

/* ---- the relay's pid number in another process's hands ---- */

/* clone3's arguments up to set_tid (CLONE_ARGS_SIZE_VER1). */
struct clone_args_v1 {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size;
};

struct reuse {
    char sock[108];
    struct run r; /* the listener, its port */
    uv_async_t done;
    int fds_relay, fds_impostor;
    pid_t relay, impostor;
};

/* In a child: a CONNECT on a new connection, how many descriptors came,
 * as one byte on `out`. `hello` first: the proxy's first connection, kept
 * open, as the relay does. */
static void ask_child(struct reuse *u, bool hello, int out)
{
    if (hello && unix_connect(u->sock) < 0)
        _exit(1);
    char b[256];
    int fd, c = unix_connect(u->sock);
    char n = (char)('0' + (c >= 0 ? ask(&u->r, c, b, sizeof(b), &fd) : 9));
    (void)!write(out, &n, 1);
    pause();
    _exit(0);
}

static void *reuse_thread(void *arg)
{
    struct reuse *u = arg;
    int pfd[2];
    if (pipe(pfd) != 0)
        goto out;
    /* The relay: the first connection, then a socket handed to it. */
    u->relay = fork();
    if (u->relay == 0)
        ask_child(u, true, pfd[1]);
    u->fds_relay = read_count(pfd[0]);
    int d = accept(u->r.listener, NULL, NULL);
    if (d >= 0)
        close(d);
    /* Killed, as the server may (its parent, same uid); its number then
     * given to a new process, as the server may by forking until it
     * comes round. */
    kill(u->relay, SIGKILL);
    waitpid(u->relay, NULL, 0);
    uint64_t want = (uint64_t)u->relay;
    struct clone_args_v1 ca = {
        .exit_signal = SIGCHLD, .set_tid = (uintptr_t)&want, .set_tid_size = 1};
    u->impostor = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
    if (u->impostor == 0)
        ask_child(u, false, pfd[1]);
    if (u->impostor > 0) {
        u->fds_impostor = read_count(pfd[0]);
        kill(u->impostor, SIGKILL);
        waitpid(u->impostor, NULL, 0);
    }
    close(pfd[0]);
    close(pfd[1]);
out:
    uv_async_send(&u->done);
    return NULL;
}

/* Pid 1 of the namespace: the proxy on its loop, the thread playing the
 * relay, its killer and the impostor. Writes what it saw to `out`. */
static int reuse_init(int out)
{
    struct reuse u = {0};
    u.r.listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    if (bind(u.r.listener, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(u.r.listener, 8) != 0)
        return 1;
    getsockname(u.r.listener, (struct sockaddr *)&a, &al);
    u.r.port = ntohs(a.sin_port);
    char dir[] = "/tmp/netproxy-test-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char entry[32], *allow[1] = {entry}, why[256];
    snprintf(entry, sizeof(entry), "127.0.0.1:%u", u.r.port);
    struct gw_netproxy_options o = {.allow = allow, .nallow = 1};
    struct gw_netproxy_cbs cbs = {on_decision, &u.r};
    struct gw_netproxy *p;
    uv_loop_t loop;
    uv_loop_init(&loop);
    if (gw_netproxy_start(&loop, dir, &o, &cbs, &p, why, sizeof(why)) != 0)
        return 1;
    snprintf(u.sock, sizeof(u.sock), "%s/proxy.sock", gw_netproxy_dir(p));
    uv_async_init(&loop, &u.done, on_done);
    pthread_t t;
    pthread_create(&t, NULL, reuse_thread, &u);
    uv_run(&loop, UV_RUN_DEFAULT);
    pthread_join(t, NULL);
    gw_netproxy_close(p);
    uv_close((uv_handle_t *)&u.done, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    close(u.r.listener);
    rmdir(dir);
    char res[64];
    int n =
        snprintf(res, sizeof(res), "%d %d %d", u.fds_relay, u.fds_impostor, u.impostor == u.relay);
    return write(out, res, (size_t)n) == n ? 0 : 1;
}

static bool put_file(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s);
    if (fd >= 0)
        close(fd);
    return ok;
}

START_TEST(test_reused_pid)
{
    int res[2];
    ck_assert_int_eq(pipe(res), 0);
    uid_t uid = getuid();
    gid_t gid = getgid();
    pid_t outer = fork();
    if (outer == 0) {
        /* A user namespace of our own, to own a pid namespace where
         * clone3 may choose the pid. */
        char map[64];
        if (unshare(CLONE_NEWUSER) != 0)
            _exit(77);
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
        put_file("/proc/self/setgroups", "deny");
        if (!put_file("/proc/self/uid_map", map))
            _exit(77);
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
        if (!put_file("/proc/self/gid_map", map) || unshare(CLONE_NEWPID) != 0)
            _exit(77);
        pid_t init = fork();
        if (init == 0)
            _exit(reuse_init(res[1]));
        int st = 0;
        waitpid(init, &st, 0);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
    }
    close(res[1]);
    int st = 0;
    waitpid(outer, &st, 0);
    char buf[64] = {0};
    ssize_t n = read(res[0], buf, sizeof(buf) - 1);
    close(res[0]);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        fprintf(stderr, "test_reused_pid: skipped, no user namespace here\n");
        return;
    }
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0 && n > 0, "namespace run failed");
    int fds_relay = -1, fds_impostor = -1, same = 0;
    ck_assert_int_eq(sscanf(buf, "%d %d %d", &fds_relay, &fds_impostor, &same), 3);
    ck_assert_int_eq(fds_relay, 1);
    ck_assert_msg(same, "the impostor did not get the relay's pid");
    ck_assert_int_eq(fds_impostor, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("netproxy_handoff");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_handoff);
    tcase_add_test(tc, test_reused_pid);
    tcase_add_test(tc, test_first_not_relay);
    tcase_add_test(tc, test_lease_bound);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
