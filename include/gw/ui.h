/* The status page: HTML, CSS, JavaScript and a favicon from src/ui/,
 * compiled into the binary (the Makefile generates the table from the
 * files: each one with its gzip -9n copy and a strong ETag, the SHA-256 of
 * its bytes). The gate hands it `GET /` and `/ui/...` before the token
 * check: the files hold no data, and a browser cannot send a bearer token
 * on navigation; the page sends it from JavaScript to the data routes. */
#ifndef GW_UI_H
#define GW_UI_H

#include <stdbool.h>
#include <stddef.h>

#include "gw/http.h"

struct gw_ui_file {
    const char *path; /* "/" for index.html, else "/ui/<name>" */
    const char *content_type;
    const unsigned char *data;
    size_t len;
    const unsigned char *gz; /* the same bytes, gzip -9n */
    size_t gzlen;
    const char *etag; /* "\"<hex>\"", quoted; the gzip copy adds "-gz" inside */
};

/* The generated table (build/gen/ui_files.c). */
extern const struct gw_ui_file gw_ui_files[];
extern const size_t gw_ui_nfiles;

/* The headers of every answer of the gateway, not only the page's files:
 * its Content-Security-Policy (an error page or a JSON answer opened in a
 * tab is framed by nobody and runs nothing) and nosniff. */
extern const char *const gw_ui_headers[];

/* True when `req->path` is "/" or under "/ui/": the request is answered
 * (the file, 304, 404, or 405 for a method other than GET and HEAD). False
 * leaves it to the other routes. */
bool gw_ui_handle(struct gw_http_request *req);

#endif
