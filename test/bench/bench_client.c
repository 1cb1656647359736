/* bench_client: a closed-loop load generator for the benchmarks.
 *
 * Keeps N requests in flight for a time, then prints one JSON line:
 *   {"mode","conc","calls","errors","seconds","rps","p50_us","p99_us","mean_us",
 *    "total_sent","reconnects"}
 * `calls`, `rps` and the percentiles count only requests that started inside the
 * measured window (after --warmup); `total_sent` counts every request sent,
 * warm-up included (for CPU-per-call arithmetic).
 *
 *   bench_client stdio [opts] -- CMD ARGS...   JSON-RPC over the child's stdin/stdout
 *                                              (initialize, initialized, then tools/call)
 *   bench_client http  [opts] --port P --path /x [--method GET|POST] [--body JSON]
 *                                              [--header 'K: V']... [--expect-status N]
 *                                              plain HTTP/1.1 keep-alive, one request per
 *                                              connection at a time, N connections
 *   bench_client probe --port P --path X --kind rest|mcp [--expect STR] [--timeout S]
 *                                              poll each ms until a tool listing (GET X, or
 *                                              MCP tools/list on X) contains STR; prints the
 *                                              CLOCK_MONOTONIC ns of success ("ready_ns")
 *   bench_client mcp   [opts] --port P --path /mcp
 *                                              streamable HTTP: initialize (session id
 *                                              kept), notifications/initialized, then
 *                                              tools/call over N connections
 * opts: --conc N (1) --duration S (3) --warmup S (0.5) --tool NAME (echo)
 *       --text STR (hello)
 *
 * Success: stdio/mcp: the answer has "result" and no "error"; http: the status
 * is --expect-status (200) and the body has no "error" member.
 * Single-threaded (epoll / poll), so it uses at most one core. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int conc = 1;
static double duration = 3, warmup = 0.5;
static const char *tool = "echo", *text = "hello";
static int port;
static const char *path = "/", *method = "POST", *body;
static const char *headers[16];
static int nheaders, expect_status = 200;
static const char *expect = "echo", *kind = "rest";
static double probe_timeout = 30;
static char session[256];

static uint64_t *lat;
static size_t nlat, cap_lat;
static uint64_t errors, total_sent, reconnects;
static uint64_t t_start, t_measure, t_end;

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_client: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void record(uint64_t started, int ok)
{
    if (started < t_measure || started >= t_end)
        return;
    if (!ok) {
        errors++;
        return;
    }
    if (nlat == cap_lat) {
        cap_lat = cap_lat ? cap_lat * 2 : 65536;
        lat = realloc(lat, cap_lat * sizeof *lat);
        if (lat == NULL)
            die("out of memory");
    }
    lat[nlat++] = now_ns() - started;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *mode)
{
    double secs = (double)(t_end - t_measure) / 1e9, mean = 0;
    double p50 = 0, p99 = 0;

    qsort(lat, nlat, sizeof *lat, cmp_u64);
    for (size_t i = 0; i < nlat; i++)
        mean += (double)lat[i];
    if (nlat) {
        mean /= (double)nlat;
        p50 = (double)lat[(nlat - 1) * 50 / 100];
        p99 = (double)lat[(nlat - 1) * 99 / 100];
    }
    printf("{\"mode\":\"%s\",\"conc\":%d,\"calls\":%zu,\"errors\":%llu,\"seconds\":%.3f,"
           "\"rps\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"mean_us\":%.1f,\"total_sent\":%llu,"
           "\"reconnects\":%llu}\n",
           mode, conc, nlat, (unsigned long long)errors, secs, (double)nlat / secs, p50 / 1e3,
           p99 / 1e3, mean / 1e3, (unsigned long long)total_sent,
           (unsigned long long)reconnects);
}

static int call_body(char *buf, size_t cap, uint64_t id)
{
    return snprintf(buf, cap,
                    "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"%s\",\"arguments\":{\"text\":\"%s\"}}}",
                    (unsigned long long)id, tool, text);
}

/* ---------------------------------------------------------------- stdio */

#define RING 65536u

static int run_stdio(char **argv)
{
    int in[2], outp[2];
    pid_t pid;
    static uint64_t started[RING];
    char *rbuf, wbuf[1 << 16];
    size_t rcap = 1 << 20, rlen = 0, wlen = 0;
    uint64_t next_id = 10, inflight = 0;
    int initialized = 0;

    if (pipe2(in, O_CLOEXEC) || pipe2(outp, O_CLOEXEC))
        die("pipe: %s", strerror(errno));
    pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(outp[1], 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(outp[1]);
    rbuf = malloc(rcap);
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                       "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                       "\"name\":\"bench_client\",\"version\":\"1\"}}}\n";
    if (write(in[1], init, strlen(init)) < 0)
        die("write: %s", strerror(errno));

    uint64_t deadline_init = now_ns() + 30000000000ull;
    for (;;) {
        uint64_t t = now_ns();
        if (!initialized && t > deadline_init)
            die("no initialize answer in 30 s");
        if (initialized && t >= t_end && inflight == 0)
            break;
        if (initialized && t >= t_end + 5000000000ull)
            break; /* answers lost: give up */
        /* keep conc requests in flight */
        while (initialized && t < t_end && inflight < (uint64_t)conc &&
               wlen + 512 < sizeof wbuf) {
            int n = call_body(wbuf + wlen, sizeof wbuf - wlen - 1, next_id);
            wbuf[wlen + n] = '\n';
            wlen += (size_t)n + 1;
            started[next_id % RING] = t;
            next_id++;
            inflight++;
            total_sent++;
        }
        size_t off = 0;
        while (off < wlen) {
            ssize_t w = write(in[1], wbuf + off, wlen - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                die("write to child: %s", strerror(errno));
            off += (size_t)w;
        }
        wlen = 0;
        struct pollfd p = {.fd = outp[0], .events = POLLIN};
        int pr = poll(&p, 1, 100);
        if (pr < 0 && errno != EINTR)
            die("poll: %s", strerror(errno));
        if (pr <= 0)
            continue;
        if (rlen == rcap) {
            rcap *= 2;
            rbuf = realloc(rbuf, rcap);
        }
        ssize_t r = read(outp[0], rbuf + rlen, rcap - rlen);
        if (r <= 0)
            die("the child closed its stdout");
        rlen += (size_t)r;
        size_t start = 0;
        char *nl;
        while ((nl = memchr(rbuf + start, '\n', rlen - start)) != NULL) {
            char *line = rbuf + start;
            size_t n = (size_t)(nl - line);
            *nl = 0;
            start += n + 1;
            char *idp = strstr(line, "\"id\":");
            if (idp == NULL)
                continue; /* notification */
            uint64_t id = strtoull(idp + 5, NULL, 10);
            if (id == 1) {
                const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
                if (write(in[1], note, strlen(note)) < 0)
                    die("write: %s", strerror(errno));
                initialized = 1;
                t_start = now_ns();
                t_measure = t_start + (uint64_t)(warmup * 1e9);
                t_end = t_measure + (uint64_t)(duration * 1e9);
                continue;
            }
            if (id < 10)
                continue;
            int ok = strstr(line, "\"result\"") != NULL && strstr(line, "\"error\"") == NULL;
            record(started[id % RING], ok);
            inflight--;
        }
        memmove(rbuf, rbuf + start, rlen - start);
        rlen -= start;
    }
    close(in[1]);
    for (int i = 0; i < 50; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            goto done;
        usleep(20000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
done:
    report("stdio");
    return 0;
}

/* ---------------------------------------------------------------- http */

struct conn {
    int fd;
    int busy;
    uint64_t started;
    char *req;
    size_t req_len, req_off;
    char *buf;
    size_t len, cap;
};

static int connect_to(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        die("socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        die("connect 127.0.0.1:%d: %s", port, strerror(errno));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static size_t build_request(char **out, const char *meth, const char *b, int mcp_session)
{
    size_t cap = 4096 + (b ? strlen(b) : 0);
    char *r = malloc(cap);
    size_t n = (size_t)snprintf(r, cap, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n", meth, path,
                                port);

    for (int i = 0; i < nheaders; i++)
        n += (size_t)snprintf(r + n, cap - n, "%s\r\n", headers[i]);
    if (mcp_session) {
        n += (size_t)snprintf(r + n, cap - n,
                              "Accept: application/json, text/event-stream\r\n"
                              "MCP-Protocol-Version: 2025-11-25\r\n");
        if (session[0])
            n += (size_t)snprintf(r + n, cap - n, "Mcp-Session-Id: %s\r\n", session);
    }
    if (b)
        n += (size_t)snprintf(r + n, cap - n,
                              "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                              strlen(b), b);
    else
        n += (size_t)snprintf(r + n, cap - n, "\r\n");
    *out = r;
    return n;
}

/* Parses one response in buf[0..len). Returns its total length when complete
 * (0 when more bytes are needed, -1 when malformed); *status, *body, *body_len,
 * *close_after are set; chunked bodies are decoded in place. */
static long parse_response(char *buf, size_t len, int *status, char **body, size_t *body_len,
                           int *close_after, int eof)
{
    char *end = memmem(buf, len, "\r\n\r\n", 4);
    long clen = -1;
    int chunked = 0;

    if (end == NULL)
        return 0;
    if (len < 12 || strncmp(buf, "HTTP/1.", 7) != 0)
        return -1;
    *status = atoi(buf + 9);
    *close_after = buf[7] == '0';
    for (char *h = memchr(buf, '\n', (size_t)(end - buf)) + 1; h < end;) {
        char *e = memmem(h, (size_t)(end + 2 - h), "\r\n", 2);
        if (e == NULL)
            break;
        if (strncasecmp(h, "content-length:", 15) == 0)
            clen = strtol(h + 15, NULL, 10);
        else if (strncasecmp(h, "transfer-encoding:", 18) == 0 && memmem(h, (size_t)(e - h), "chunked", 7))
            chunked = 1;
        else if (strncasecmp(h, "connection:", 11) == 0 && memmem(h, (size_t)(e - h), "close", 5))
            *close_after = 1;
        else if (strncasecmp(h, "mcp-session-id:", 15) == 0) {
            char *v = h + 15;
            while (*v == ' ')
                v++;
            size_t n = (size_t)(e - v);
            if (n < sizeof session) {
                memcpy(session, v, n);
                session[n] = 0;
            }
        }
        h = e + 2;
    }
    char *b = end + 4;
    size_t avail = len - (size_t)(b - buf);
    if (*status == 204 || *status == 304 || (*status >= 100 && *status < 200))
        clen = 0;
    if (clen >= 0) {
        if (avail < (size_t)clen)
            return 0;
        *body = b;
        *body_len = (size_t)clen;
        return (long)(b - buf) + clen;
    }
    if (chunked) {
        char *p = b, *w = b, *lim = buf + len;
        for (;;) {
            char *e = memmem(p, (size_t)(lim - p), "\r\n", 2);
            if (e == NULL)
                return 0;
            unsigned long sz = strtoul(p, NULL, 16);
            if ((size_t)(lim - (e + 2)) < sz + 2)
                return 0;
            if (sz == 0) {
                char *t = memmem(e + 2, (size_t)(lim - (e + 2)), "\r\n", 2);
                if (t == NULL)
                    return 0;
                /* decode only once complete: copy chunks over the framing */
                size_t total = (size_t)(t + 2 - buf);
                char *q = b;
                for (;;) {
                    char *qe = strstr(q, "\r\n");
                    unsigned long s2 = strtoul(q, NULL, 16);
                    if (s2 == 0)
                        break;
                    memmove(w, qe + 2, s2);
                    w += s2;
                    q = qe + 2 + s2 + 2;
                }
                *body = b;
                *body_len = (size_t)(w - b);
                return (long)total;
            }
            p = e + 2 + sz + 2;
        }
    }
    /* no length: read until the server closes */
    if (!eof)
        return 0;
    *body = b;
    *body_len = avail;
    *close_after = 1;
    return (long)len;
}

static int body_ok(int status, const char *b, size_t n, int mcp)
{
    if (status != expect_status)
        return 0;
    if (memmem(b, n, "\"error\"", 7) != NULL)
        return 0;
    return !mcp || memmem(b, n, "\"result\"", 8) != NULL;
}

/* A blocking round trip used for the MCP handshake. Returns the status. */
static void end_session(void);

/* One blocking round trip on a fresh connection. Returns the status, or -1
 * when the connection or the answer failed; the body (NUL-terminated) goes to
 * *out when out is not NULL (caller frees). */
static int try_roundtrip(const char *meth, const char *b, int mcp, char **out)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = -1, close_after;
    size_t cap = 1 << 16, len = 0, rbl;
    char *req = NULL, *resp = malloc(cap + 1), *rb;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        goto out;
    size_t n = build_request(&req, meth, b, mcp);
    if (write(fd, req, n) != (ssize_t)n)
        goto out;
    for (;;) {
        if (len == cap) {
            cap *= 2;
            resp = realloc(resp, cap + 1);
        }
        ssize_t r = read(fd, resp + len, cap - len);
        int eof = r <= 0;
        if (r > 0)
            len += (size_t)r;
        resp[len] = 0;
        long done = parse_response(resp, len, &status, &rb, &rbl, &close_after, eof);
        if (done < 0 || (done == 0 && eof)) {
            status = -1;
            goto out;
        }
        if (done > 0) {
            if (out) {
                *out = malloc(rbl + 1);
                memcpy(*out, rb, rbl);
                (*out)[rbl] = 0;
            }
            break;
        }
    }
out:
    if (fd >= 0)
        close(fd);
    free(req);
    free(resp);
    return status;
}

static int roundtrip(const char *b)
{
    int status = try_roundtrip("POST", b, 1, NULL);

    if (status != 200 && status != 202)
        die("handshake answered %d", status);
    return status;
}

static const char init_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
    "\"name\":\"bench_client\",\"version\":\"1\"}}}";

/* probe: poll every millisecond until a tool listing answers and contains
 * --expect; print the CLOCK_MONOTONIC time of success (ns), to be compared
 * with the caller's clock before it spawned the gateway. --kind rest (GET
 * --path), or mcp (initialize, initialized, tools/list on --path). */
static int run_probe(const char *kind, const char *expect, double timeout_s)
{
    uint64_t deadline = now_ns() + (uint64_t)(timeout_s * 1e9);
    int mcp = strcmp(kind, "mcp") == 0;

    for (int i = 0; i < 1000000 && now_ns() < deadline; i++) {
        char *b = NULL;
        int st;
        if (mcp) {
            session[0] = 0;
            st = try_roundtrip("POST", init_body, 1, NULL);
            if (st == 200) {
                try_roundtrip("POST", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 1, NULL);
                st = try_roundtrip("POST", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", 1, &b);
            }
        } else {
            st = try_roundtrip("GET", NULL, 0, &b);
        }
        if (st == 200 && b && strstr(b, expect)) {
            uint64_t t = now_ns();
            free(b);
            if (mcp && session[0])
                end_session();
            printf("{\"mode\":\"probe\",\"ready_ns\":%llu,\"attempts\":%d}\n", (unsigned long long)t, i + 1);
            return 0;
        }
        free(b);
        usleep(1000);
    }
    die("probe: no tool listing with %s in %.0f s", expect, timeout_s);
}

/* DELETE the MCP session; the answer does not matter. */
static void end_session(void)
{
    int fd = connect_to();
    char *req, resp[4096];
    size_t n = build_request(&req, "DELETE", NULL, 1);
    struct pollfd p = {.fd = fd, .events = POLLIN};

    if (write(fd, req, n) == (ssize_t)n && poll(&p, 1, 2000) == 1 && read(fd, resp, sizeof resp) < 0)
        fprintf(stderr, "bench_client: DELETE: %s\n", strerror(errno));
    close(fd);
    free(req);
}

static void conn_send(struct conn *c, uint64_t *next_id, int mcp)
{
    if (mcp) {
        char b[512];
        free(c->req);
        call_body(b, sizeof b, (*next_id)++);
        c->req_len = build_request(&c->req, "POST", b, 1);
    }
    c->req_off = 0;
    c->started = now_ns();
    c->busy = 1;
    total_sent++;
    while (c->req_off < c->req_len) {
        ssize_t w = write(c->fd, c->req + c->req_off, c->req_len - c->req_off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            die("write: %s", strerror(errno)); /* small requests: the socket buffer takes them */
        c->req_off += (size_t)w;
    }
}

static void conn_reopen(int ep, struct conn *c)
{
    struct epoll_event ev = {.events = EPOLLIN};

    if (c->fd >= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = connect_to();
    c->len = 0;
    ev.data.ptr = c;
    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
}

static int run_http(int mcp)
{
    struct conn *cs = calloc((size_t)conc, sizeof *cs);
    int ep = epoll_create1(EPOLL_CLOEXEC), busy = 0;
    uint64_t next_id = 10;
    struct epoll_event evs[256];

    if (mcp) {
        roundtrip(init_body);
        roundtrip("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    }
    t_start = now_ns();
    t_measure = t_start + (uint64_t)(warmup * 1e9);
    t_end = t_measure + (uint64_t)(duration * 1e9);
    for (int i = 0; i < conc; i++) {
        cs[i].fd = -1;
        cs[i].cap = 1 << 16;
        cs[i].buf = malloc(cs[i].cap + 1);
        if (!mcp)
            cs[i].req_len = build_request(&cs[i].req, method, body, 0);
        conn_reopen(ep, &cs[i]);
        conn_send(&cs[i], &next_id, mcp);
        busy++;
    }
    while (busy > 0) {
        uint64_t t = now_ns();
        if (t > t_end + 5000000000ull)
            break;
        int n = epoll_wait(ep, evs, 256, 100);
        if (n < 0 && errno != EINTR)
            die("epoll_wait: %s", strerror(errno));
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            for (;;) {
                if (c->len == c->cap) {
                    c->cap *= 2;
                    c->buf = realloc(c->buf, c->cap + 1);
                }
                ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len);
                int eof = r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR);
                if (r > 0)
                    c->len += (size_t)r;
                c->buf[c->len] = 0;
                int status = 0, close_after = 0;
                char *b = NULL;
                size_t bl = 0;
                long done = c->busy ? parse_response(c->buf, c->len, &status, &b, &bl,
                                                     &close_after, eof)
                                    : 0;
                if (done < 0 || (done == 0 && eof)) {
                    /* the server closed or garbled: count an error, reconnect */
                    if (c->busy)
                        record(c->started, 0);
                    reconnects++;
                    c->busy = 0;
                    busy--;
                    if (now_ns() < t_end) {
                        conn_reopen(ep, c);
                        conn_send(c, &next_id, mcp);
                        busy++;
                    } else {
                        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                    }
                    break;
                }
                if (done == 0)
                    break; /* wait for more (socket is blocking: one read per event) */
                record(c->started, body_ok(status, b, bl, mcp));
                memmove(c->buf, c->buf + done, c->len - (size_t)done);
                c->len -= (size_t)done;
                c->busy = 0;
                busy--;
                if (now_ns() < t_end) {
                    if (close_after) {
                        reconnects++;
                        conn_reopen(ep, c);
                    }
                    conn_send(c, &next_id, mcp);
                    busy++;
                } else {
                    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                }
                break;
            }
        }
    }
    if (mcp && session[0])
        end_session(); /* stateful peers keep a child per session */
    report(mcp ? "mcp" : "http");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode;
    int i;

    if (argc < 2)
        die("usage: bench_client stdio|http|mcp [opts] [-- CMD ARGS]");
    signal(SIGPIPE, SIG_IGN);
    mode = argv[1];
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc)
            die("%s needs a value", a);
        const char *v = argv[++i];
        if (strcmp(a, "--conc") == 0)
            conc = atoi(v);
        else if (strcmp(a, "--duration") == 0)
            duration = atof(v);
        else if (strcmp(a, "--warmup") == 0)
            warmup = atof(v);
        else if (strcmp(a, "--tool") == 0)
            tool = v;
        else if (strcmp(a, "--text") == 0)
            text = v;
        else if (strcmp(a, "--port") == 0)
            port = atoi(v);
        else if (strcmp(a, "--path") == 0)
            path = v;
        else if (strcmp(a, "--method") == 0)
            method = v;
        else if (strcmp(a, "--body") == 0)
            body = v;
        else if (strcmp(a, "--expect-status") == 0)
            expect_status = atoi(v);
        else if (strcmp(a, "--expect") == 0)
            expect = v;
        else if (strcmp(a, "--kind") == 0)
            kind = v;
        else if (strcmp(a, "--timeout") == 0)
            probe_timeout = atof(v);
        else if (strcmp(a, "--header") == 0 && nheaders < 16)
            headers[nheaders++] = v;
        else
            die("unknown option %s", a);
    }
    if (conc < 1 || conc > 4096)
        die("--conc must be 1..4096");
    if (strcmp(mode, "stdio") == 0) {
        if (i >= argc)
            die("stdio needs -- CMD ARGS");
        return run_stdio(argv + i);
    }
    if (port <= 0)
        die("--port is required");
    if (strcmp(mode, "http") == 0)
        return run_http(0);
    if (strcmp(mode, "mcp") == 0)
        return run_http(1);
    if (strcmp(mode, "probe") == 0)
        return run_probe(kind, expect, probe_timeout);
    die("unknown mode %s", mode);
}
