/* HTTP/1.1 server: turning received bytes into requests. llhttp is
 * compiled in strict mode (LLHTTP_STRICT_MODE, see the Makefile) and runs
 * with no lenient flags; a scan in front of it refuses what llhttp 8.1
 * still lets through. Limits are enforced here as bytes arrive: request
 * line + headers (431), header count (431), body by Content-Length before
 * reading it and by count while reading chunks (413), and what a chunked
 * body carries besides data (chunk extensions, trailers) together with the
 * request line and headers (413). The parser only reports: a complete
 * request, a refusal with its status, or that it needs more bytes; the
 * connection (http.c) writes, arms timers and calls the handler. */
#include "gw/http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static int refuse_repeated(struct gw_http_parser *c, const char *field)
{
    c->fail_status = 400;
    c->fail_code = "bad_request";
    snprintf(c->fail_msg, sizeof c->fail_msg, "The request has more than one %s header field.",
             field);
    return HPE_USER;
}

static int on_message_begin(llhttp_t *p);
static int on_url(llhttp_t *p, const char *at, size_t len);
static int on_url_complete(llhttp_t *p);
static int on_header_field(llhttp_t *p, const char *at, size_t len);
/* Fields a request may carry once. Where a field decides who may do what
 * (Host, Origin, the token, the session, the dialog, the MCP headers the
 * body is checked against), two copies would let a proxy in front check
 * one while the gateway reads the other (RFC 9110 5.3: only list-valued
 * fields may repeat). */
#define FIELD(f)                                                                                   \
    {                                                                                              \
        f, sizeof(f) - 1                                                                           \
    }
static const struct {
    const char *name;
    size_t len;
} single_fields[] = {
    FIELD("host"),
    FIELD("origin"),
    FIELD("authorization"),
    FIELD("content-type"),
    FIELD("mcp-session-id"),
    FIELD("x-mcpgw-dialog"),
    FIELD("mcp-protocol-version"),
    FIELD("mcp-method"),
    FIELD("mcp-name"),
    FIELD("last-event-id"),
};

/* Every field of every request comes through here: lengths first, then
 * the first byte, then the rest (ten strcmp per field cost ~250
 * instructions; "mcp-method" and "user-agent" are as long). */
static void note_single(struct req *r, const char *name, size_t len)
{
    for (unsigned i = 0; i < GW_ARRAY_SIZE(single_fields); i++) {
        if (single_fields[i].len != len || single_fields[i].name[0] != name[0] ||
            memcmp(name, single_fields[i].name, len) != 0)
            continue;
        if (r->singles & (1u << i))
            r->repeated = single_fields[i].name;
        r->singles |= 1u << i;
        return;
    }
}

/* A field name in lower case, eight bytes at a time: names are tokens
 * (ASCII, no locale), and a byte loop cost ~5 instructions a byte over
 * names like "mcp-protocol-version". A byte gets 0x20 where it is at least
 * 'A' and at most 'Z' (bit 7 of each sum; no carry leaves a byte below
 * 0x80). */
static void lower_token(char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t w, low7, upper;
        memcpy(&w, s + i, 8);
        low7 = w & ~high;
        upper = (low7 + 0x3f * ones) & ~(low7 + 0x25 * ones) & ~w & high;
        w |= upper >> 2;
        memcpy(s + i, &w, 8);
    }
    for (; i < n; i++) {
        if (s[i] >= 'A' && s[i] <= 'Z')
            s[i] = (char)(s[i] - 'A' + 'a');
    }
}

static int on_header_field_complete(llhttp_t *p);
static int on_header_value(llhttp_t *p, const char *at, size_t len);
static int on_header_value_complete(llhttp_t *p);
static int on_headers_complete(llhttp_t *p);
static int on_body(llhttp_t *p, const char *at, size_t len);
static int on_chunk_header(llhttp_t *p);
static int on_message_complete(llhttp_t *p);

static const llhttp_settings_t settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_url_complete = on_url_complete,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_chunk_header = on_chunk_header,
    .on_message_complete = on_message_complete,
};

static struct req *req_new(const struct gw_http_parser *ps)
{
    struct req *r = gw_xrealloc(NULL, sizeof *r);
    memset(r, 0, sizeof *r);
    r->state = RQ_PARSING;
    gw_strlcpy(r->peer, ps->peer, sizeof r->peer);
    r->pub.peer = r->peer;
    r->pub.is_unix = ps->is_unix;
    return r;
}

static void req_free(struct req *r)
{
    if (r == NULL)
        return;
    free(r->arena.data);
    free(r->body.data);
    free(r->headers);
    free(r);
}

void gw_http__req_free(struct req *r)
{
    req_free(r);
}

void gw_http__parser_init(struct gw_http_parser *ps, const char *peer, int is_unix,
                          const struct gw_http_limits *lim)
{
    memset(ps, 0, sizeof *ps);
    llhttp_init(&ps->llhttp, HTTP_REQUEST, &settings);
    ps->llhttp.data = ps;
    ps->peer = peer;
    ps->is_unix = is_unix;
    ps->lim = lim;
}

void gw_http__parser_reset(struct gw_http_parser *ps)
{
    ps->head_bytes = ps->body_bytes = ps->meta_bytes = ps->meta_free = 0;
    ps->headers_done = ps->msg_done = ps->in_trailers = ps->chunked = 0;
    ps->scan = (struct scan){0};
    ps->fail_status = 0;
}

struct req *gw_http__parser_take(struct gw_http_parser *ps)
{
    struct req *r = ps->req;

    ps->req = NULL;
    return r;
}

void gw_http__parser_free(struct gw_http_parser *ps)
{
    req_free(ps->req);
    ps->req = NULL;
}

/* Turns the arena "target\0name\0value\0…" into the public fields. Path
 * and query are copied from the target inside the arena, so the room is
 * made first; pointers are taken once nothing more is appended. */
static void req_finish_head(struct req *r, const llhttp_t *p)
{
    gw_http__buf_reserve(&r->arena, strlen(r->arena.data) + 2);
    const char *target = r->arena.data;
    size_t tlen = strlen(target);
    const char *q = memchr(target, '?', tlen);
    size_t plen = q ? (size_t)(q - target) : tlen;
    size_t first = tlen + 1;
    size_t path_off = r->arena.len;

    gw_http__buf_append(&r->arena, target, plen);
    gw_http__buf_append(&r->arena, "", 1);
    size_t query_off = r->arena.len;
    if (q)
        gw_http__buf_append(&r->arena, q + 1, tlen - plen - 1);
    gw_http__buf_append(&r->arena, "", 1);

    r->headers = gw_xrealloc(NULL, (r->nheaders ? r->nheaders : 1) * sizeof *r->headers);
    const char *s = r->arena.data + first;
    for (size_t i = 0; i < r->nheaders; i++) {
        r->headers[i].name = s;
        r->headers[i].name_len = strlen(s);
        s += r->headers[i].name_len + 1;
        r->headers[i].value = s;
        s += strlen(s) + 1;
    }
    r->pub.method = llhttp_method_name((llhttp_method_t)p->method);
    r->pub.target = r->arena.data;
    r->pub.path = r->arena.data + path_off;
    r->pub.query = r->arena.data + query_off;
    r->pub.headers = r->headers;
    r->pub.nheaders = r->nheaders;
    r->head = p->method == HTTP_HEAD;
    r->http_minor = p->http_minor;
}

/* ---- parser callbacks ---- */

static int refuse(struct gw_http_parser *c, int status, const char *code, const char *msg)
{
    c->fail_status = status;
    c->fail_code = code;
    snprintf(c->fail_msg, sizeof c->fail_msg, "%s", msg);
    return HPE_USER;
}

static int on_message_begin(llhttp_t *p)
{
    struct gw_http_parser *c = p->data;
    req_free(c->req);
    c->req = req_new(c);
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
    struct gw_http_parser *c = p->data;
    gw_http__buf_append(&c->req->arena, at, len);
    return 0;
}

static int end_string(struct req *r)
{
    gw_http__buf_append(&r->arena, "", 1);
    r->mark = r->arena.len;
    return 0;
}

static int on_url_complete(llhttp_t *p)
{
    struct gw_http_parser *c = p->data;
    return end_string(c->req);
}

/* Trailer fields are not kept; their bytes are counted with the rest of
 * the chunk framing (count_meta). */
static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    struct gw_http_parser *c = p->data;
    if (c->headers_done)
        return 0;
    gw_http__buf_append(&c->req->arena, at, len);
    return 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    struct gw_http_parser *c = p->data;
    struct req *r = c->req;
    if (c->headers_done)
        return 0;
    if (++r->nheaders > c->lim->max_headers)
        return refuse(c, 431, "headers_too_large", "The request has too many header fields.");
    /* ": x" is accepted by llhttp 8.1; a field name must be a token. */
    if (r->arena.len == r->mark)
        return refuse(c, 400, "bad_request", "The request has a header field with no name.");
    char *name = r->arena.data + r->mark;
    size_t len = r->arena.len - r->mark;
    lower_token(name, len);
    note_single(r, name, len);
    return end_string(r);
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    struct gw_http_parser *c = p->data;
    if (c->headers_done)
        return 0;
    gw_http__buf_append(&c->req->arena, at, len);
    return 0;
}

/* llhttp keeps trailing whitespace in values; the field value does not
 * include it (RFC 9110 5.5). */
static int on_header_value_complete(llhttp_t *p)
{
    struct gw_http_parser *c = p->data;
    struct req *r = c->req;
    if (c->headers_done)
        return 0;
    while (r->arena.len > r->mark &&
           (r->arena.data[r->arena.len - 1] == ' ' || r->arena.data[r->arena.len - 1] == '\t'))
        r->arena.len--;
    return end_string(r);
}

static int wants_continue(const struct gw_http_parser *c, const llhttp_t *p)
{
    const char *expect = gw_http_header(&c->req->pub, "expect");
    return expect != NULL && strcasecmp(expect, "100-continue") == 0 && p->http_minor > 0;
}

static int on_headers_complete(llhttp_t *p)
{
    struct gw_http_parser *c = p->data;
    c->headers_done = 1;
    req_finish_head(c->req, p);
    if (p->http_major != 1)
        return refuse(c, 400, "bad_request", "Only HTTP/1.0 and HTTP/1.1 are served.");
    /* llhttp 8.1 passes a second Host (RFC 9112 3.2: 400) and any other
     * repeated field. */
    if (c->req->repeated != NULL)
        return refuse_repeated(c, c->req->repeated);
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > c->lim->max_body)
        return refuse(c, 413, "payload_too_large", "The request body is too large.");
    if ((p->flags & F_CHUNKED) || p->content_length > 0) {
        c->body_started = 1;
        c->send_continue = wants_continue(c, p);
    }
    if (!(p->flags & F_CHUNKED))
        return 0;
    /* The head ends here exactly, so that head_bytes is exact and every
     * later byte is the chunked body's (count_meta). */
    c->chunked = 1;
    return HPE_PAUSED;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    struct gw_http_parser *c = p->data;
    c->body_bytes += len;
    c->slice_body += len;
    if (c->body_bytes > c->lim->max_body)
        return refuse(c, 413, "payload_too_large", "The request body is too large.");
    gw_http__buf_append(&c->req->body, at, len);
    return 0;
}

/* Hex digits of a chunk size written without leading zeros. */
static unsigned hex_digits(uint64_t n)
{
    unsigned d = 1;
    while (n >>= 4)
        d++;
    return d;
}

/* The chunk's framing is free: its size in hex without leading zeros and
 * two CRLFs (after the size and after the data; for the last chunk, after
 * "0" and at the end of the trailer section). The last chunk starts the
 * trailer section, which gets the same scan as the headers; pausing here
 * makes the scan start at its exact first byte. */
static int on_chunk_header(llhttp_t *p)
{
    struct gw_http_parser *c = p->data;
    c->meta_free += 4 + hex_digits(p->content_length);
    if (p->content_length != 0)
        return 0;
    c->in_trailers = 1;
    c->scan = (struct scan){.prev_cr = 0, .line_start = 1, .lines = 1};
    return HPE_PAUSED;
}

/* One request at a time: pausing leaves pipelined bytes unparsed. */
static int on_message_complete(llhttp_t *p)
{
    struct gw_http_parser *c = p->data;
    c->msg_done = 1;
    c->keep_alive = llhttp_should_keep_alive(p) && !p->upgrade;
    return HPE_PAUSED;
}

/* ---- the strictness scan ---- */

static bool fold_start(const struct scan *s, unsigned char ch)
{
    return s->line_start && s->lines > 0 && (ch == ' ' || ch == '\t');
}

/* Offset of the first byte strict HTTP/1.1 forbids (bare LF, or a line
 * after the first starting with SP/HT: obs-fold), or n. Both are found at
 * an LF or just after one, so the scan jumps from LF to LF. */
static size_t scan_find(const struct scan *from, const char *p, size_t n, const char **why)
{
    const char *q, *end = p + n;

    if (n > 0 && fold_start(from, (unsigned char)p[0])) {
        *why = "The request folds a header line (obs-fold).";
        return 0;
    }
    for (const char *at = p; (q = memchr(at, '\n', (size_t)(end - at))) != NULL; at = q + 1) {
        if (q == p ? !from->prev_cr : q[-1] != '\r') {
            *why = "The request has a bare LF where CRLF is required.";
            return (size_t)(q - p);
        }
        if (q + 1 < end && (q[1] == ' ' || q[1] == '\t')) {
            *why = "The request folds a header line (obs-fold).";
            return (size_t)(q + 1 - p);
        }
    }
    return n;
}

static void scan_update(struct scan *s, const char *p, size_t n)
{
    const char *q, *end = p + n;

    if (n == 0)
        return;
    for (const char *at = p; s->lines < 2 && (q = memchr(at, '\n', (size_t)(end - at))) != NULL;
         at = q + 1)
        s->lines++;
    s->prev_cr = p[n - 1] == '\r';
    s->line_start = p[n - 1] == '\n';
}

/* Everything in a chunked body that is not data nor free framing (see
 * on_chunk_header): chunk extensions, zeros before a size, trailer fields.
 * None of it is kept, but a client must not make us parse it without end:
 * it counts toward max_header_bytes with the request line and headers.
 * Counted per parsed slice, so it may pass the limit by one read before it
 * is refused. */
static int count_meta(struct gw_http_parser *c, size_t n)
{
    c->meta_bytes += n;
    if (c->meta_bytes <= c->meta_free ||
        c->meta_bytes - c->meta_free <= c->lim->max_header_bytes - c->head_bytes)
        return 0;
    return refuse(c, 413, "payload_too_large",
                  "The request's chunk extensions and trailer fields are too large.");
}

static void parse_failed(struct gw_http_parser *c, llhttp_errno_t e)
{
    if (c->fail_status)
        return;
    const char *why = llhttp_get_error_reason(&c->llhttp);
    char msg[160];
    snprintf(msg, sizeof msg, "The request is not valid HTTP/1.1: %s.",
             why ? why : llhttp_errno_name(e));
    refuse(c, 400, "bad_request", msg);
}

/* Feeds one slice to llhttp. Header bytes are fed at most up to one past
 * max_header_bytes, and only up to the first byte the scan refuses, so
 * both limits hit exactly. Returns bytes consumed, or -1 once refused. */
static long parse_slice(struct gw_http_parser *c, const char *p, size_t n)
{
    int scanning = !c->headers_done || c->in_trailers;
    int chunk_body = c->headers_done && c->chunked;
    uint64_t room = c->lim->max_header_bytes - c->head_bytes;
    if (!c->headers_done && n > room)
        n = (size_t)room + 1;
    if (scanning) {
        const char *why = NULL;
        n = scan_find(&c->scan, p, n, &why);
        if (n == 0) {
            refuse(c, 400, "bad_request", why);
            return -1;
        }
    }
    c->slice_body = 0;
    llhttp_errno_t e = llhttp_execute(&c->llhttp, p, n);
    size_t used = n;
    if (e == HPE_PAUSED) {
        used = (size_t)(llhttp_get_error_pos(&c->llhttp) - p);
        llhttp_resume(&c->llhttp);
    } else if (e != HPE_OK) {
        parse_failed(c, e);
        return -1;
    }
    if (scanning)
        scan_update(&c->scan, p, used);
    if (chunk_body && count_meta(c, used - c->slice_body) != 0)
        return -1;
    return (long)used;
}

static void finish_request(struct req *r)
{
    if (r->body.data == NULL)
        gw_http__buf_append(&r->body, "", 0);
    r->pub.body = r->body.data;
    r->pub.body_len = r->body.len;
}

static void refused(const struct gw_http_parser *c, struct gw_http_parse_result *out)
{
    out->event = GW_HTTP_PARSE_ERROR;
    out->status = c->fail_status;
    out->code = c->fail_code;
    out->message = c->fail_msg;
}

void gw_http__parse(struct gw_http_parser *c, const char *data, size_t n,
                    struct gw_http_parse_result *out)
{
    *out = (struct gw_http_parse_result){.event = GW_HTTP_PARSE_MORE};
    while (out->used < n) {
        int was_head = !c->headers_done;
        c->body_started = c->send_continue = 0;
        long used = parse_slice(c, data + out->used, n - out->used);
        out->body_started |= c->body_started;
        out->send_continue |= c->send_continue;
        if (used < 0) {
            refused(c, out);
            return;
        }
        out->used += (size_t)used;
        /* a chunked request's head ended the slice (on_headers_complete) */
        if (was_head && (!c->headers_done || c->chunked)) {
            c->head_bytes += (uint64_t)used;
            if (c->head_bytes > c->lim->max_header_bytes) {
                refuse(c, 431, "headers_too_large", "The request line and headers are too large.");
                refused(c, out);
                return;
            }
        }
        if (c->msg_done) {
            finish_request(c->req);
            out->event = GW_HTTP_PARSE_READY;
            return;
        }
    }
}
