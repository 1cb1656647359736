/* One HTTP exchange of an MCP client through libcurl on the loop
 * (curl_uv.h): the request as its owner describes it, and the answer's
 * head (status, Content-Type, Mcp-Session-Id, Retry-After) and body — a
 * JSON body kept up to a cap, an error body's first bytes, or an SSE body
 * parsed into events.
 *
 * The owner embeds struct gw_http_xfer first in its own transfer object,
 * which it allocates and frees. libcurl's callbacks only record: the
 * owner's on_start and on_event may stop the transfer, and every decision
 * is the owner's, in on_done, which runs from the loop. */
#ifndef GW_HTTP_XFER_H
#define GW_HTTP_XFER_H

#include <stddef.h>
#include <stdint.h>

#include "gw/curl_uv.h"
#include "gw/sse.h"

#define GW_HTTP_XFER_EXCERPT_MAX   1024 /* bytes of an error body kept */
#define GW_HTTP_XFER_SESSION_MAX   256  /* an Mcp-Session-Id (and event id) we keep */
#define GW_HTTP_XFER_CHALLENGE_MAX 2048 /* a WWW-Authenticate value we keep */

enum gw_http_xfer_method { GW_HTTP_XFER_POST, GW_HTTP_XFER_GET, GW_HTTP_XFER_DELETE };

/* Why the transfer stopped reading before libcurl was done. */
enum gw_http_xfer_fail {
    GW_HTTP_XFER_OK,
    GW_HTTP_XFER_BODY_TOO_BIG,  /* a 2xx JSON body over body_max */
    GW_HTTP_XFER_EVENT_TOO_BIG, /* an SSE event over event_max */
    GW_HTTP_XFER_STOPPED,       /* on_start or on_event said stop */
};

struct gw_http_xfer;

struct gw_http_xfer_ops {
    /* The final answer's head is in (after any 1xx), or the transfer ended
     * without one reaching on_write. Non-zero stops the transfer. */
    int (*on_start)(struct gw_http_xfer *x);
    /* One event of a 2xx text/event-stream answer (ev borrowed for the
     * call). Non-zero stops the transfer. */
    int (*on_event)(struct gw_http_xfer *x, const struct gw_sse_event *ev);
    /* libcurl is done with it (rc), or the owner ended it with
     * gw_http_xfer_end(). The transfer is out of the multi. */
    void (*on_done)(struct gw_http_xfer *x, CURLcode rc);
};

/* What to send; read by gw_http_xfer_begin. */
struct gw_http_xfer_request {
    enum gw_http_xfer_method method;
    const char *url;         /* copied by libcurl */
    struct curl_slist *hdrs; /* taken: freed with the transfer */
    const char *body;        /* POST: borrowed until on_done */
    size_t body_len;
    /* POST instead of `body`: the body written by read() straight into
     * libcurl's upload buffer as it sends (chunked), so that it is never
     * copied; read returns the bytes written, 0 at its end, and rewind
     * starts it again (libcurl resends on a fresh connection). */
    size_t (*read)(void *data, char *buf, size_t room);
    void (*rewind)(void *data);
    void *read_data;
    uint64_t connect_ms; /* 0: libcurl's default */
    uint64_t timeout_ms; /* the whole exchange; 0: none */
    size_t body_max;     /* a 2xx non-SSE body kept up to this; 0: discarded */
    size_t event_max;    /* one SSE event, at most */
    int loopback_only;   /* refuse to connect anywhere but loopback */
    int (*addr_ok)(void *addr_data, const struct sockaddr *sa); /* gw_curl_uv_xfer's; NULL: none */
    void *addr_data;
    const char *user_agent;
};

struct gw_http_xfer {
    struct gw_curl_uv_xfer cx; /* first: libcurl's done callback gets this */
    const struct gw_http_xfer_ops *ops;
    uint64_t *bytes_in; /* when set, counts every body byte received */
    /* ---- set by this module ---- */
    struct curl_slist *hdrs;
    size_t (*read)(void *data, char *buf, size_t room);
    void (*rewind)(void *data);
    void *read_data;
    size_t body_max, event_max;
    long status;
    int started; /* on_start ran */
    int sse;     /* a 2xx text/event-stream answer */
    struct gw_sse *parser;
    char *rbody; /* the kept body, NUL-terminated; NULL when none */
    size_t rlen, rcap;
    unsigned events;      /* SSE events received */
    char *sid;            /* the answer's Mcp-Session-Id (visible ASCII), or NULL */
    char *www_auth;       /* its WWW-Authenticate (printable ASCII, bounded), or NULL */
    char ctype[64];       /* its Content-Type, truncated */
    uint64_t retry_after; /* its Retry-After in ms; 0 when none */
    uint64_t last_byte_ms;
    enum gw_http_xfer_fail fail;
    char errbuf[CURL_ERROR_SIZE];
};

/* Starts x (or starts it again, for a retry: the last answer is dropped)
 * on `multi`. Returns 0, UV_ENOMEM, or gw_curl_uv_add's error; req->hdrs
 * is taken in every case. */
int gw_http_xfer_begin(struct gw_http_xfer *x, struct gw_curl_uv *multi,
                       const struct gw_http_xfer_request *req);

/* Takes x out of the multi when it runs and calls on_done with `rc`. */
void gw_http_xfer_end(struct gw_http_xfer *x, struct gw_curl_uv *multi, CURLcode rc);

/* Frees what x holds (not x itself). It must not be in the multi. */
void gw_http_xfer_cleanup(struct gw_http_xfer *x);

/* True for 2xx. */
int gw_http_xfer_ok(const struct gw_http_xfer *x);

/* Appends a header line, or "name: value" (both abort on out-of-memory,
 * like gw_xmalloc). A line "Name:" with nothing after the colon removes a
 * header libcurl would send. */
struct curl_slist *gw_http_xfer_line(struct curl_slist *l, const char *line);
struct curl_slist *gw_http_xfer_header(struct curl_slist *l, const char *name, const char *value);

/* Visible ASCII, 1 to `max` bytes: what may go into a header built from
 * an upstream's data. */
int gw_http_xfer_header_safe(const char *s, size_t n, size_t max);

#endif
