/* What the HTTP parser promises of every request it hands on (gw/http.h),
 * checked by the fuzz targets that reach it: lower-cased header names
 * without whitespace, at most one Host, values without CR/LF or trailing
 * whitespace, path a prefix of the target, counts and body within the
 * limits, body NUL-terminated. Aborts on a broken promise. `skip_empty_name`
 * passes an empty header name (": x", accepted by llhttp 8.1) — known and
 * reported, for long runs only. */
#ifndef FUZZ_HTTP_REQUEST_CHECK_H
#define FUZZ_HTTP_REQUEST_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "gw/http.h"

static void check_request(const struct gw_http_request *req, const struct gw_http_limits *lim,
                          int skip_empty_name)
{
    size_t plen = strlen(req->path);

    if (req->method == NULL || strncmp(req->target, req->path, plen) != 0 ||
        (req->target[plen] != '\0' && req->target[plen] != '?'))
        abort();
    if (req->nheaders > lim->max_headers || req->body_len > lim->max_body ||
        req->body[req->body_len] != '\0')
        abort();
    for (size_t i = 0, hosts = 0; i < req->nheaders; i++) {
        const char *n = req->headers[i].name, *v = req->headers[i].value;
        size_t vlen = strlen(v);
        if (strcmp(n, "host") == 0 && ++hosts > 1)
            abort();
        if ((*n == '\0' && !skip_empty_name) ||
            strpbrk(n, " \t:\r\nABCDEFGHIJKLMNOPQRSTUVWXYZ") != NULL)
            abort();
        if (strpbrk(v, "\r\n") != NULL || (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t')))
            abort();
    }
}

#endif
