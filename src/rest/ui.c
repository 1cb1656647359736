/* The status page's files, served from memory (see gw/ui.h). */
#include "gw/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The page loads only its own files and talks only to its own origin;
 * images and audio of a tool's result are fetched with the token and shown
 * from blob: URLs the page made itself. No inline script or style. */
const char *const gw_ui_headers[] = {
    "Content-Security-Policy: default-src 'self'; img-src 'self' blob:; media-src 'self' blob:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options: nosniff", NULL};

/* Does Accept-Encoding take gzip? A "gzip" coding not given q=0. */
static bool accepts_gzip(const char *ae)
{
    for (const char *p = ae; p != NULL && *p != '\0';) {
        const char *end = strchrnul(p, ',');
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (end - p >= 4 && strncasecmp(p, "gzip", 4) == 0 &&
            (p + 4 == end || p[4] == ';' || p[4] == ' ')) {
            const char *q = strstr(p, "q=");
            return q == NULL || q > end || strtod(q + 2, NULL) > 0;
        }
        p = *end ? end + 1 : end;
    }
    return false;
}

/* Does If-None-Match name `etag` (quoted, as sent), or "*"? */
static bool etag_matches(const char *inm, const char *etag)
{
    size_t n = strlen(etag);

    if (inm == NULL)
        return false;
    for (const char *p = inm; (p = strstr(p, etag)) != NULL; p += n) {
        if (p[n] == '\0' || p[n] == ',' || p[n] == ' ')
            return true;
    }
    return strcmp(inm, "*") == 0;
}

static void serve(struct gw_http_request *req, const struct gw_ui_file *f)
{
    bool gz = accepts_gzip(gw_http_header(req, "accept-encoding"));
    char etag[96], header[128];
    const char *const headers[] = {header,
                                   "Cache-Control: no-cache",
                                   "Vary: Accept-Encoding",
                                   "Referrer-Policy: no-referrer",
                                   gz ? "Content-Encoding: gzip" : NULL,
                                   NULL};

    /* A strong ETag names one representation: the gzip one gets its own. */
    snprintf(etag, sizeof etag, "%.*s%s\"", (int)strlen(f->etag) - 1, f->etag, gz ? "-gz" : "");
    snprintf(header, sizeof header, "ETag: %s", etag);
    if (etag_matches(gw_http_header(req, "if-none-match"), etag)) {
        gw_http_respond(req, 304, NULL, NULL, 0, headers);
        return;
    }
    gw_http_respond(req, 200, f->content_type, (const char *)(gz ? f->gz : f->data),
                    gz ? f->gzlen : f->len, headers);
}

bool gw_ui_handle(struct gw_http_request *req)
{
    static const char *const allow[] = {"Allow: GET, HEAD", NULL};

    if (strcmp(req->path, "/") != 0 && strncmp(req->path, "/ui/", 4) != 0)
        return false;
    req->user = (void *)(req->path[1] == '\0' ? "/" : "/ui/*"); /* the metrics' route label */
    if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
        gw_http_respond_error(req, 405, "method_not_allowed", "the page is read with GET", allow);
        return true;
    }
    for (size_t i = 0; i < gw_ui_nfiles; i++) {
        if (strcmp(gw_ui_files[i].path, req->path) == 0) {
            serve(req, &gw_ui_files[i]);
            return true;
        }
    }
    gw_http_respond_error(req, 404, "not_found", "no such file of the status page", NULL);
    return true;
}
