/* A trace collector for the benchmark's traced rows: answers every OTLP/HTTP
 * export 200 `{}` and counts the requests and their spans, at as little CPU
 * as the bytes allow, so that what the rows measure is the gateway's cost,
 * not a collector's parsing competing with it for the same cores.
 *
 *   otlp_sink STATS   listens on a free port of 127.0.0.1 and prints it;
 *                     after each request, STATS holds "POSTS SPANS" (the
 *                     requests and spans so far); SIGTERM ends it
 *
 * One connection at a time (the exporter sends one request at a time over
 * one kept-alive connection); a body is chunked (what the gateway sends) or
 * has a Content-Length. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static unsigned long posts, spans;
static int stats = -1;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

/* Spans in [p, p + n): each has one "spanId" member. A key cut at the end
 * of one read is counted by keeping the last bytes for the next. */
static void count(const char *p, size_t n, char *tail, size_t *tail_len)
{
    static const char key[] = "\"spanId\"";
    char buf[2 * sizeof key + 65536];
    size_t len = 0;

    while (n > 0) {
        size_t take = n < 65536 ? n : 65536;
        memcpy(buf, tail, *tail_len);
        memcpy(buf + *tail_len, p, take);
        len = *tail_len + take;
        for (const char *q = buf; (q = memmem(q, (size_t)(buf + len - q), key, sizeof key - 1));
             q += sizeof key - 1)
            spans++;
        *tail_len = len < sizeof key - 2 ? len : sizeof key - 2;
        memcpy(tail, buf + len - *tail_len, *tail_len);
        p += take;
        n -= take;
    }
}

/* The last five bytes of what was read, past this piece. */
static void roll(char win[5], size_t *len, const char *p, size_t n)
{
    char t[10];
    size_t k;

    if (n >= 5) {
        memcpy(win, p + n - 5, 5);
        *len = 5;
        return;
    }
    memcpy(t, win, *len);
    memcpy(t + *len, p, n);
    k = *len + n;
    if (k > 5) {
        memmove(t, t + k - 5, 5);
        k = 5;
    }
    memcpy(win, t, k);
    *len = k;
}

static void serve(int c)
{
    static char buf[1 << 20];
    static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             "Content-Length: 2\r\n\r\n{}";
    size_t have = 0;
    char tail[16];
    size_t tail_len = 0;

    while (!stop) {
        ssize_t r = read(c, buf + have, sizeof buf - have);
        char *end, *body;
        if (r <= 0)
            return;
        have += (size_t)r;
        /* the head */
        end = memmem(buf, have, "\r\n\r\n", 4);
        if (end == NULL) {
            if (have == sizeof buf)
                return;
            continue;
        }
        body = end + 4;
        *end = '\0';
        char *cl = strcasestr(buf, "\r\ncontent-length:");
        size_t want = cl != NULL ? strtoul(cl + 17, NULL, 10) : 0;
        bool chunked = cl == NULL;
        size_t got = have - (size_t)(body - buf);
        char win[5];
        size_t win_len = 0;
        /* the body, counted as it streams (the chunks' framing holds no
         * "spanId"); a chunked one ends with the zero-length chunk */
        for (;;) {
            count(body, got, tail, &tail_len);
            roll(win, &win_len, body, got);
            if (chunked ? win_len == 5 && memcmp(win, "0\r\n\r\n", 5) == 0 : got >= want)
                break;
            if (!chunked)
                want -= got;
            r = read(c, buf, sizeof buf);
            if (r <= 0)
                return;
            body = buf;
            got = (size_t)r;
        }
        posts++;
        tail_len = 0;
        char line[48];
        int n = snprintf(line, sizeof line, "%20lu %20lu\n", posts, spans);
        if (pwrite(stats, line, (size_t)n, 0) != n)
            return;
        have = 0;
        if (write(c, ok, sizeof ok - 1) != (ssize_t)(sizeof ok - 1))
            return;
    }
}

int main(int argc, char **argv)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    struct sigaction sa = {.sa_handler = on_term};
    socklen_t alen = sizeof a;
    int l;

    if (argc != 2) {
        fprintf(stderr, "usage: otlp_sink STATS\n");
        return 2;
    }
    sigaction(SIGTERM, &sa, NULL);    /* no SA_RESTART: a blocked read returns */
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the bench gone, so is its collector */
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l = socket(AF_INET, SOCK_STREAM, 0);
    stats = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (l < 0 || stats < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 16) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &alen) != 0) {
        perror("otlp_sink");
        return 1;
    }
    printf("%u\n", ntohs(a.sin_port));
    fflush(stdout);
    while (!stop) {
        int c = accept(l, NULL, NULL);
        if (c < 0)
            continue;
        serve(c);
        close(c);
    }
    return 0;
}
