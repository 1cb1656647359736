/* libFuzzer target for the HTTP request parser alone (src/http/http_parse.c:
 * llhttp strict, the strictness scan, the limits), with no loop, socket
 * or handler: the bytes go to gw_http__parse as a connection's reads
 * would, and each event is checked.
 *
 * Input: fuzz_http's (its corpus is this target's): one mode byte, then
 * the bytes of one connection.
 *   bit 2      tight limits (body 512, head 512 bytes, 8 headers)
 *   bits 3-5   read sizes (0: one read; else 1, 2, 3, 7, 16, 64, 512)
 *
 * Checks, besides ASan/UBSan: every complete request keeps the parser's
 * promises (http_request_check.h); a parse never consumes more than it
 * was given and, short of an event, consumes it all; a refusal is 400,
 * 413 or 431 with a code and a sentence; and the requests parsed from
 * the input in pieces are the ones parsed from it whole (the limit on a
 * chunked body's framing counts per read, so the piecewise parse may stop
 * earlier: only the requests both parses completed are compared). */
#include "gw/http_internal.h"
#include "http_request_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQUESTS 64

static const struct gw_http_limits lim_normal = {
    .max_body = 1 << 20,
    .max_header_bytes = 64 << 10,
    .max_headers = 100,
};
static const struct gw_http_limits lim_tight = {
    .max_body = 512,
    .max_header_bytes = 512,
    .max_headers = 8,
};

/* What a parse produced: a fingerprint of each request, then how it ended. */
struct run {
    size_t n;
    uint64_t sums[MAX_REQUESTS];
    int status; /* 0: the input ended without a refusal */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

static uint64_t fingerprint(const struct gw_http_request *req)
{
    uint64_t h = fnv(14695981039346656037u, req->method, strlen(req->method) + 1);

    h = fnv(h, req->target, strlen(req->target) + 1);
    for (size_t i = 0; i < req->nheaders; i++) {
        h = fnv(h, req->headers[i].name, strlen(req->headers[i].name) + 1);
        h = fnv(h, req->headers[i].value, strlen(req->headers[i].value) + 1);
    }
    return fnv(h, req->body, req->body_len);
}

static void check_refusal(const struct gw_http_parse_result *res)
{
    if ((res->status != 400 && res->status != 413 && res->status != 431) || res->code == NULL ||
        res->message == NULL || res->message[0] == '\0')
        abort();
}

/* Parses `data` delivered in reads of `piece` bytes (0: one read). Like a
 * connection, bytes a complete request leaves go to the next request. */
static void parse(const uint8_t *data, size_t size, size_t piece, const struct gw_http_limits *lim,
                  struct run *out)
{
    struct gw_http_parser ps;
    size_t off = 0, avail = 0;

    memset(out, 0, sizeof *out);
    gw_http__parser_init(&ps, "fuzz", 0, lim);
    gw_http__parser_reset(&ps);
    while (off < size && out->n < MAX_REQUESTS) {
        struct gw_http_parse_result res;

        if (avail == off)
            avail = piece && piece < size - avail ? avail + piece : size;
        gw_http__parse(&ps, (const char *)data + off, avail - off, &res);
        if (res.used > avail - off || (res.event == GW_HTTP_PARSE_MORE && res.used != avail - off))
            abort();
        off += res.used;
        if (res.event == GW_HTTP_PARSE_ERROR) {
            check_refusal(&res);
            out->status = res.status;
            break;
        }
        if (res.event == GW_HTTP_PARSE_READY) {
            struct req *r = gw_http__parser_take(&ps);
            check_request(&r->pub, lim, 0);
            out->sums[out->n++] = fingerprint(&r->pub);
            gw_http__req_free(r);
            if (!ps.keep_alive)
                break;
            gw_http__parser_reset(&ps);
        }
    }
    gw_http__parser_free(&ps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t pieces[8] = {0, 1, 2, 3, 7, 16, 64, 512};
    struct run whole, split;

    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    const struct gw_http_limits *lim = (mode & 4) ? &lim_tight : &lim_normal;
    size_t piece = pieces[(mode >> 3) & 7];
    data++, size--;

    parse(data, size, 0, lim, &whole);
    if (piece == 0)
        return 0;
    parse(data, size, piece, lim, &split);
    for (size_t i = 0; i < whole.n && i < split.n; i++)
        if (whole.sums[i] != split.sums[i]) {
            fprintf(stderr, "fuzz_http_parse: request %zu differs when read in %zu-byte pieces\n",
                    i, piece);
            abort();
        }
    return 0;
}
