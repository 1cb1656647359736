/* http_floor: the HTTP floor of the tool-call benchmark. A single-threaded
 * libuv HTTP/1.1 server (as mcpgw's front is) that answers every request
 * with the same 200 JSON body, a CallToolResult as mcpgw's REST answer is
 * shaped, without parsing JSON or calling anything. wrk drives it with the
 * same script as mcpgw REST, so "gateway p50 − this p50 − direct pipe p50"
 * is what mcpgw adds over the two floors it cannot go below.
 *
 *   http_floor PORT      (listens on 127.0.0.1:PORT; prints "listening")
 *
 * Requests are framed by the end of their headers and Content-Length (no
 * chunked bodies: wrk sends none); keep-alive, pipelining answered in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#define BUF_MAX (64 * 1024)

#define BODY "{\"contentItems\":[{\"type\":\"text\",\"text\":\"hello\"}],\"isError\":false}"

static char reply[256];
static size_t reply_len;

struct conn {
    uv_tcp_t tcp;
    char buf[BUF_MAX];
    size_t len;
};

static void on_close(uv_handle_t *h)
{
    free(h->data);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *out)
{
    struct conn *c = h->data;

    (void)hint;
    *out = uv_buf_init(c->buf + c->len, (unsigned)(BUF_MAX - c->len));
}

static void on_write(uv_write_t *w, int status)
{
    (void)status;
    free(w);
}

/* The length of the first complete request in buf, or 0. */
static size_t request_len(const char *buf, size_t len)
{
    const char *end = memmem(buf, len, "\r\n\r\n", 4);
    size_t head, body = 0;

    if (end == NULL)
        return 0;
    head = (size_t)(end - buf) + 4;
    for (const char *p = buf, *nl; p < end; p = nl + 1) {
        if (strncasecmp(p, "content-length:", 15) == 0)
            body = strtoul(p + 15, NULL, 10);
        if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
            break;
    }
    return head + body <= len ? head + body : 0;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct conn *c = s->data;
    size_t used, answers = 0;

    (void)b;
    if (n < 0) {
        uv_close((uv_handle_t *)s, on_close);
        return;
    }
    c->len += (size_t)n;
    while ((used = request_len(c->buf, c->len)) > 0) {
        memmove(c->buf, c->buf + used, c->len - used);
        c->len -= used;
        answers++;
    }
    if (answers > 0) {
        uv_write_t *w = malloc(sizeof *w + answers * sizeof(uv_buf_t));
        uv_buf_t *bufs = (uv_buf_t *)(w + 1);
        for (size_t i = 0; i < answers; i++)
            bufs[i] = uv_buf_init(reply, (unsigned)reply_len);
        uv_write(w, s, bufs, (unsigned)answers, on_write);
    }
    if (c->len == BUF_MAX)
        uv_close((uv_handle_t *)s, on_close);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct conn *c;

    if (status < 0)
        return;
    c = calloc(1, sizeof *c);
    uv_tcp_init(server->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_close);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

int main(int argc, char **argv)
{
    uv_tcp_t server;
    struct sockaddr_in addr;

    if (argc != 2) {
        fprintf(stderr, "usage: http_floor PORT\n");
        return 2;
    }
    reply_len = (size_t)snprintf(reply, sizeof reply,
                                 "HTTP/1.1 200 OK\r\nContent-Type: application/json; "
                                 "charset=utf-8\r\nContent-Length: %zu\r\n\r\n%s",
                                 strlen(BODY), BODY);
    uv_ip4_addr("127.0.0.1", atoi(argv[1]), &addr);
    uv_tcp_init(uv_default_loop(), &server);
    if (uv_tcp_bind(&server, (const struct sockaddr *)&addr, 0) != 0 ||
        uv_listen((uv_stream_t *)&server, 511, on_connection) != 0) {
        fprintf(stderr, "http_floor: cannot listen on 127.0.0.1:%s\n", argv[1]);
        return 1;
    }
    printf("listening\n");
    fflush(stdout);
    return uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}
