/* HTTP/1.1 server on libuv + llhttp (strict mode, no lenient flags).
 *
 * The server owns its listener and connections. It parses one request at a
 * time per connection (pipelined requests wait their turn), enforces the
 * limits below, and hands each complete request to the handler. The handler
 * answers at once or later (a tool call answers when the upstream does) with
 * exactly one gw_http_respond*() or a stream (gw_http_stream_*). A request
 * whose connection closes before it was answered gets its abort callback;
 * after that the handler must not touch it. */
#ifndef GW_HTTP_H
#define GW_HTTP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct gw_http_limits {
    uint64_t max_body;             /* 413 beyond */
    uint64_t max_header_bytes;     /* request line + headers; 431 beyond */
    unsigned max_headers;          /* 431 beyond; security.md C2: 100 */
    unsigned max_connections;      /* beyond: 503 and close */
    uint64_t header_timeout_ms;    /* 408 */
    uint64_t body_timeout_ms;      /* a body that stops progressing: 408 */
    uint64_t keepalive_timeout_ms; /* idle keep-alive connection closed */
};

struct gw_http_header {
    const char *name; /* lower-cased */
    const char *value;
};

struct gw_http_request {
    const char *method; /* "GET", "POST", … */
    const char *target; /* raw request target, e.g. "/v1/tools?x=1" */
    const char *path;   /* target up to '?', not decoded */
    const char *query;  /* after '?', "" if none */
    const struct gw_http_header *headers;
    size_t nheaders;
    const char *body; /* NUL-terminated for convenience; may contain NULs */
    size_t body_len;
    const char *peer; /* "127.0.0.1:5555", "[::1]:5555" or "unix" */
    int is_unix;      /* came over the unix socket listener */
    void *user;       /* free for the handler */
};

struct gw_http_server;

typedef void (*gw_http_handler)(struct gw_http_request *req, void *data);
typedef void (*gw_http_abort_cb)(struct gw_http_request *req, void *data);

/* Starts listening on `listen` ("host:port", "[v6]:port" or "unix:/path",
 * the socket created with mode 0660). Returns 0 and sets *out, or a negative
 * code with a sentence in *err (caller frees). */
int gw_http_server_start(uv_loop_t *loop, const char *listen,
                         const struct gw_http_limits *limits, gw_http_handler handler,
                         void *data, struct gw_http_server **out, char **err);

/* Applies new limits to later connections and requests (reload). */
void gw_http_server_set_limits(struct gw_http_server *srv, const struct gw_http_limits *limits);

/* Stops accepting; open connections finish their current request and close.
 * `cb` runs once every handle is closed and the server is freed. */
void gw_http_server_close(struct gw_http_server *srv, void (*cb)(void *data), void *data);

/* The address actually bound (port resolved when 0 was asked). */
const char *gw_http_server_address(const struct gw_http_server *srv);

size_t gw_http_server_connections(const struct gw_http_server *srv);

/* Case-insensitive lookup; NULL when absent. */
const char *gw_http_header(const struct gw_http_request *req, const char *name);

/* Registers the callback fired if the connection goes away before the
 * request is answered (a client that hangs up mid-call). */
void gw_http_on_abort(struct gw_http_request *req, gw_http_abort_cb cb, void *data);

/* Extra response headers: NULL-terminated array of "Name: value" strings. */
void gw_http_respond(struct gw_http_request *req, int status, const char *content_type,
                     const char *body, size_t len, const char *const *extra_headers);

/* Dumps `body` (reference stolen) as application/json; charset=utf-8. */
void gw_http_respond_json(struct gw_http_request *req, int status, json_t *body,
                          const char *const *extra_headers);

/* {"error":{"code":code,"message":message}} */
void gw_http_respond_error(struct gw_http_request *req, int status, const char *code,
                           const char *message, const char *const *extra_headers);

/* Streaming (Server-Sent Events and the like): sends the status line and
 * headers with chunked transfer encoding, then each write is one chunk.
 * gw_http_stream_write returns 0, or UV_ENOBUFS when more than `max_queued`
 * bytes are waiting for a slow client (the caller decides to drop it).
 * gw_http_stream_end finishes the response. */
void gw_http_stream_begin(struct gw_http_request *req, int status, const char *content_type,
                          const char *const *extra_headers);
int gw_http_stream_write(struct gw_http_request *req, const char *data, size_t len,
                         size_t max_queued);
void gw_http_stream_end(struct gw_http_request *req);

const char *gw_http_status_text(int status);

#endif
