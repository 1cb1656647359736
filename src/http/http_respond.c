/* HTTP/1.1 server: answers and streams. The connection side (parsing,
 * limits, writing, keep-alive) is in http.c. Each entry point first checks
 * the request's state, so a second answer, or an answer given from inside
 * the abort callback, is ignored rather than written to a dead socket. */
#include "gw/http_internal.h"

#include "gw/heap.h"
#include "gw/json_out.h"
#include "gw/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>

/* A response head is built from our own strings and from header values
 * the routes pass; this bound only catches a bug. */
#define HEAD_MAX (64 * 1024)

/* A JSON answer this long asks for a heap trim (gw_heap_trim_soon). */
#define BIG_ANSWER (64 * 1024)

struct sbuf {
    struct buf b;
    int overflow;
};

/* Appends one header line made of `parts` (NULL-terminated); a line of
 * 512 bytes or more, or a head past HEAD_MAX, marks the head as too large.
 * Plain copies: this runs for every answer, and vsnprintf into a
 * temporary was a tenth of a small call's cost. */
static void sbuf_line(struct sbuf *s, const char *const *parts)
{
    size_t n = 0, lens[8];

    for (size_t i = 0; parts[i] != NULL; i++)
        n += lens[i] = strlen(parts[i]);
    if (n >= 512 || s->b.len + n > HEAD_MAX) {
        s->overflow = 1;
        return;
    }
    for (size_t i = 0; parts[i] != NULL; i++)
        gw_http__buf_append(&s->b, parts[i], lens[i]);
}

#define SBUF_LINE(s, ...) sbuf_line((s), (const char *const[]){__VA_ARGS__, NULL})

/* Route code may echo client values into headers; a CR or LF would let
 * them split the response, so such a header is dropped and logged. */
static int header_ok(const char *h)
{
    return strchr(h, ':') != NULL && strpbrk(h, "\r\n") == NULL;
}

static void add_extra(struct sbuf *s, const char *const *extra)
{
    for (; extra && *extra; extra++) {
        if (!header_ok(*extra) || strlen(*extra) > 400) {
            gw_log(GW_LOG_WARN, "http response header dropped", "header", *extra, NULL);
            continue;
        }
        SBUF_LINE(s, *extra, "\r\n");
    }
}

char *gw_http__head(int status, const char *ctype, long long len, int chunked, int keep_alive,
                    const char *const *extra, const char *const *always, size_t *out_len)
{
    struct sbuf s = {{0}, 0};
    char code[24], clen[24];

    gw_fmt_int(code, status);
    SBUF_LINE(&s, "HTTP/1.1 ", code, " ", gw_http_status_text(status), "\r\n");
    if (ctype)
        SBUF_LINE(&s, "Content-Type: ", ctype, "\r\n");
    if (len >= 0) {
        gw_fmt_int(clen, len);
        SBUF_LINE(&s, "Content-Length: ", clen, "\r\n");
    } else if (chunked) {
        SBUF_LINE(&s, "Transfer-Encoding: chunked\r\n");
    }
    SBUF_LINE(&s, "Connection: ", keep_alive ? "keep-alive" : "close", "\r\n");
    add_extra(&s, extra);
    add_extra(&s, always);
    SBUF_LINE(&s, "\r\n");
    if (s.overflow) {
        gw_log(GW_LOG_ERROR, "http response head too large", NULL);
        free(s.b.data);
        return gw_http__head(500, NULL, 0, 0, 0, NULL, always, out_len);
    }
    *out_len = s.b.len;
    return s.b.data;
}

/* The connection that may still take an answer for `r`, or NULL after
 * freeing an orphan (its connection is gone and nobody else holds it). */
static struct conn *answerable(struct req *r, enum req_state want)
{
    if (r->state == RQ_ORPHAN) {
        if (want == RQ_HANDLER || want == RQ_STREAMING)
            gw_http__req_free(r);
        return NULL;
    }
    if (r->state != want) {
        if (r->state != RQ_ABORTED)
            gw_log(GW_LOG_ERROR, "http request answered twice", "path", r->pub.path, NULL);
        return NULL;
    }
    return r->conn;
}

static int keep_alive(struct conn *c)
{
    if (c->srv->closing)
        c->keep_alive = 0;
    return c->keep_alive;
}

/* 204 and 304 carry no body and (for 204, must not) no Content-Length. */
static int bodiless(int status)
{
    return status == 204 || status == 304 || (status >= 100 && status < 200);
}

void gw_http_respond(struct gw_http_request *req, int status, const char *content_type,
                     const char *body, size_t len, const char *const *extra_headers)
{
    struct req *r = (struct req *)req;
    struct conn *c = answerable(r, RQ_HANDLER);
    if (c == NULL)
        return;
    if (c->srv->hook != NULL)
        c->srv->hook(req, status, c->srv->hook_data);
    r->state = RQ_ANSWERED;
    if (c->state == CS_DEAD)
        return; /* closing on the next loop turn; the request goes with it */
    if (bodiless(status))
        len = 0;
    size_t hlen;
    char *head = gw_http__head(status, content_type, bodiless(status) ? -1 : (long long)len, 0,
                               keep_alive(c), extra_headers, c->srv->always, &hlen);
    uv_buf_t bufs[2] = {uv_buf_init(head, (unsigned)hlen),
                        uv_buf_init((char *)body, r->head ? 0 : (unsigned)len)};
    c->state = CS_SENDING;
    if (gw_http__send(c, bufs, 2, 1) == 0)
        gw_http__arm_timer(c);
    free(head);
}

void gw_http_respond_json(struct gw_http_request *req, int status, json_t *body,
                          const char *const *extra_headers)
{
    size_t len;
    char *s = gw_json_dump(body, &len);
    json_decref(body);
    if (s == NULL) {
        gw_http_respond_error(req, 500, "internal_error", "The response could not be encoded.",
                              NULL);
        return;
    }
    gw_http_respond_json_text(req, status, s, len, extra_headers);
    free(s);
}

void gw_http_respond_json_text(struct gw_http_request *req, int status, const char *text,
                               size_t len, const char *const *extra_headers)
{
    gw_http_respond(req, status, "application/json; charset=utf-8", text, len, extra_headers);
    /* A large answer was a large tree (a /v1/servers listing of 1,000
     * instances is ~2.5 MB of nodes for 300 KB of text), freed among the
     * allocations made meanwhile: without a trim it stays resident. */
    if (len >= BIG_ANSWER)
        gw_heap_trim_soon();
}

void gw_http_respond_error(struct gw_http_request *req, int status, const char *code,
                           const char *message, const char *const *extra_headers)
{
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", message);
    gw_http_respond_json(req, status, j, extra_headers);
}

void gw_http_stream_begin(struct gw_http_request *req, int status, const char *content_type,
                          const char *const *extra_headers)
{
    struct req *r = (struct req *)req;
    if (r->state == RQ_ORPHAN)
        return; /* kept for gw_http_stream_end to free */
    struct conn *c = answerable(r, RQ_HANDLER);
    if (c == NULL)
        return;
    if (c->srv->hook != NULL)
        c->srv->hook(req, status, c->srv->hook_data);
    r->state = RQ_STREAMING;
    if (c->state == CS_DEAD)
        return;
    /* An HTTP/1.0 client cannot read chunks: the body ends at close. */
    r->chunked = r->http_minor >= 1;
    if (!r->chunked)
        c->keep_alive = 0;
    size_t hlen;
    char *head = gw_http__head(status, content_type, -1, r->chunked, keep_alive(c), extra_headers,
                               c->srv->always, &hlen);
    uv_buf_t b = uv_buf_init(head, (unsigned)hlen);
    gw_http__send(c, &b, 1, 0);
    free(head);
}

/* Bytes written to the connection that its peer has not taken yet:
 * libuv's queue and the kernel's send queue, which the kernel grows by
 * itself to megabytes when the peer does not read. */
static size_t unsent(struct conn *c)
{
    size_t n = uv_stream_get_write_queue_size(&c->h.stream);
    uv_os_fd_t fd;
    int queued = 0;

    if (uv_fileno(&c->h.handle, &fd) == 0 && ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0)
        n += (size_t)queued;
    return n;
}

int gw_http_stream_write(struct gw_http_request *req, const char *data, size_t len,
                         size_t max_queued)
{
    struct req *r = (struct req *)req;
    if (r->state == RQ_ORPHAN)
        return UV_EPIPE;
    if (r->state != RQ_STREAMING)
        return UV_EINVAL;
    struct conn *c = r->conn;
    if (c->state == CS_DEAD)
        return UV_EPIPE;
    if (len == 0 || r->head)
        return 0; /* an empty chunk would end the stream */
    if (unsent(c) > max_queued)
        return UV_ENOBUFS;
    char size[32];
    int n = snprintf(size, sizeof size, "%zx\r\n", len);
    uv_buf_t bufs[3] = {uv_buf_init(size, (unsigned)n), uv_buf_init((char *)data, (unsigned)len),
                        uv_buf_init((char *)"\r\n", 2)};
    if (!r->chunked)
        return gw_http__send(c, bufs + 1, 1, 0);
    return gw_http__send(c, bufs, 3, 0);
}

void gw_http_stream_end(struct gw_http_request *req)
{
    struct req *r = (struct req *)req;
    struct conn *c = answerable(r, RQ_STREAMING);
    if (c == NULL)
        return;
    r->state = RQ_ANSWERED;
    if (c->state == CS_DEAD)
        return;
    uv_buf_t b = uv_buf_init((char *)"0\r\n\r\n", r->chunked && !r->head ? 5 : 0);
    c->state = CS_SENDING;
    if (gw_http__send(c, &b, 1, 1) == 0)
        gw_http__arm_timer(c);
}

void gw_http_on_abort(struct gw_http_request *req, gw_http_abort_cb cb, void *data)
{
    struct req *r = (struct req *)req;
    r->abort_cb = cb;
    r->abort_data = data;
}

/* The parser stored every name in lower case with its length, so a length
 * or first byte that differs rules a header out without a strcasecmp call:
 * a 2026-07-28 request looks up some twenty names among eight headers,
 * three of them beginning "mcp-". */
const char *gw_http_header(const struct gw_http_request *req, const char *name)
{
    char first = name[0] >= 'A' && name[0] <= 'Z' ? (char)(name[0] - 'A' + 'a') : name[0];
    size_t len = strlen(name);

    for (size_t i = 0; i < req->nheaders; i++) {
        const struct gw_http_header *h = &req->headers[i];
        if (h->name_len == len && h->name[0] == first && strcasecmp(h->name, name) == 0)
            return h->value;
    }
    return NULL;
}

bool gw_http_body_is_json(const struct gw_http_request *req)
{
    const char *t = gw_http_header(req, "content-type");

    return t != NULL && strncasecmp(t, "application/json", 16) == 0 &&
           (t[16] == '\0' || t[16] == ';' || t[16] == ' ' || t[16] == '\t');
}

const char *gw_http_status_text(int status)
{
    static const struct {
        int code;
        const char *text;
    } table[] = {
        {100, "Continue"},
        {200, "OK"},
        {201, "Created"},
        {202, "Accepted"},
        {204, "No Content"},
        {206, "Partial Content"},
        {301, "Moved Permanently"},
        {302, "Found"},
        {304, "Not Modified"},
        {307, "Temporary Redirect"},
        {400, "Bad Request"},
        {401, "Unauthorized"},
        {403, "Forbidden"},
        {404, "Not Found"},
        {405, "Method Not Allowed"},
        {406, "Not Acceptable"},
        {408, "Request Timeout"},
        {409, "Conflict"},
        {410, "Gone"},
        {411, "Length Required"},
        {413, "Content Too Large"},
        {414, "URI Too Long"},
        {415, "Unsupported Media Type"},
        {416, "Range Not Satisfiable"},
        {417, "Expectation Failed"},
        {422, "Unprocessable Content"},
        {429, "Too Many Requests"},
        {431, "Request Header Fields Too Large"},
        {500, "Internal Server Error"},
        {501, "Not Implemented"},
        {502, "Bad Gateway"},
        {503, "Service Unavailable"},
        {504, "Gateway Timeout"},
        {505, "HTTP Version Not Supported"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].code == status)
            return table[i].text;
    }
    return "Unknown";
}
