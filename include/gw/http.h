/* HTTP/1.1 server on libuv + llhttp (strict mode, no lenient flags).
 *
 * The server owns its listener and connections. It parses one request at a
 * time per connection (pipelined requests wait their turn), enforces the
 * limits below, and hands each complete request to the handler. The handler
 * answers at once or later (a tool call answers when the upstream does) with
 * exactly one gw_http_respond*() or a stream (gw_http_stream_*). A request
 * whose connection closes before it was answered gets its abort callback;
 * after that the handler must not touch it.
 *
 * Lifetime of a request (struct gw_http_request *req):
 * - The server owns it. The handler borrows it from the handler call until
 *   it answers: gw_http_respond*() or gw_http_stream_end(). After that call
 *   returns, the handler must not touch req again (it is freed once the
 *   answer is written, on a later loop turn).
 * - A handler that answers later must register gw_http_on_abort() before
 *   returning. If the client goes away first (hang-up, reset, write error,
 *   gw_http_server_abort_all), the abort callback runs exactly once, from
 *   the loop (never from inside a gw_http_* call the handler makes), and
 *   req is freed right after it returns: the callback must drop every
 *   pointer to req (cancel the timer/upstream call that would answer it).
 *   Answering from inside the abort callback is ignored.
 * - Without an abort callback a dead connection's request is orphaned: it
 *   stays valid, and the handler's eventual answer is dropped and frees it.
 *   Either way an answer never reaches a dead or reused connection.
 * - A second answer to the same request is ignored (and logged).
 * - While the handler holds a request the connection keeps reading (up to
 *   64 KiB of pipelined bytes are buffered, not parsed) so that a hang-up is
 *   noticed; EOF from the client at that point counts as a hang-up.
 *
 * Protocol notes for routes:
 * - HEAD reaches the handler as method "HEAD"; answer it like GET: the
 *   server sends the headers (Content-Length of the body given) and no
 *   body. Routes may instead answer 405.
 * - "Expect: 100-continue" is handled here: "100 Continue" is sent once the
 *   headers passed the limits (never when the answer is 413).
 * - 204, 304 and 1xx answers are sent without a body or Content-Length.
 * - Extra headers containing CR or LF, or no colon, are dropped (logged).
 * - Keep-alive follows HTTP/1.1 (Connection: close, HTTP/1.0 without
 *   keep-alive, Upgrade requests close after the answer). A stream to an
 *   HTTP/1.0 client is sent unchunked and ends with the connection.
 * - llhttp 8.1 runs in strict mode (CRLF checked after chunk data, chunk
 *   sizes and the header block; no tab, form feed or non-ASCII byte in the
 *   target); on top of it the server refuses (400) what 8.1 still accepts:
 *   bare LF, obs-fold, a header with no name, more than one Host, and HTTP
 *   versions other than 1.x.
 * - Chunk extensions, zeros before a chunk size and trailer fields are not
 *   kept; their bytes count toward max_header_bytes with the request line
 *   and headers (413 beyond).
 * - Limits of 0 turn a timeout off; max_connections 0 means no cap. */
#ifndef GW_HTTP_H
#define GW_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct gw_http_limits {
    uint64_t max_body;             /* 413 beyond */
    uint64_t max_header_bytes;     /* request line + headers; 431 beyond
                                    * (+ chunk extensions, trailers: 413) */
    unsigned max_headers;          /* 431 beyond; security.md C2: 100 */
    unsigned max_connections;      /* beyond: 503 and close */
    uint64_t header_timeout_ms;    /* 408 */
    uint64_t body_timeout_ms;      /* a body that stops progressing: 408 */
    uint64_t keepalive_timeout_ms; /* idle keep-alive connection closed */
};

struct gw_http_header {
    const char *name; /* lower-cased */
    const char *value;
    size_t name_len;
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
    const char *peer;     /* "127.0.0.1:5555", "[::1]:5555" or "unix" */
    int is_unix;          /* came over the unix socket listener */
    uint64_t received_ms; /* monotonic ms when the request was complete */
    void *user;           /* free for the handler */
    /* The client the handler authenticated (gw/policy.h), "" for none:
     * set by the gate, read by the routes, copied by what outlives it. */
    char client[65];
};

struct gw_http_server;

typedef void (*gw_http_handler)(struct gw_http_request *req, void *data);
typedef void (*gw_http_abort_cb)(struct gw_http_request *req, void *data);

/* Starts listening on `listen` ("host:port", "[v6]:port" or "unix:/path",
 * the socket created with mode 0660). Returns 0 and sets *out, or a negative
 * code with a sentence in *err (caller frees). */
int gw_http_server_start(uv_loop_t *loop, const char *listen, const struct gw_http_limits *limits,
                         gw_http_handler handler, void *data, struct gw_http_server **out,
                         char **err);

/* Called once for each request the handler answers, with the status (a
 * stream: when it begins), before the bytes go out: for access logs and
 * metrics. Requests the HTTP layer refuses itself (400, 408, 413, 431,
 * 503) do not reach it. */
typedef void (*gw_http_response_hook)(const struct gw_http_request *req, int status, void *data);
void gw_http_server_set_response_hook(struct gw_http_server *srv, gw_http_response_hook hook,
                                      void *data);

/* Headers written on every answer after the route's own, the HTTP
 * layer's refusals (400, 408, 413, 431, 503) included: NULL-terminated
 * "Name: value" strings that must outlive the server. */
void gw_http_server_set_headers(struct gw_http_server *srv, const char *const *headers);

/* Applies new limits to later connections and requests (reload). */
void gw_http_server_set_limits(struct gw_http_server *srv, const struct gw_http_limits *limits);

/* Stops accepting; open connections finish their current request and close.
 * `cb` runs once every handle is closed and the server is freed. */
void gw_http_server_close(struct gw_http_server *srv, void (*cb)(void *data), void *data);

/* Closes every connection now, answered or not: handlers get their abort
 * callbacks (from this call). For the end of a shutdown grace period,
 * after gw_http_server_close() or on its own. */
void gw_http_server_abort_all(struct gw_http_server *srv);

/* The address actually bound (port resolved when 0 was asked). */
const char *gw_http_server_address(const struct gw_http_server *srv);

/* The same as a socket address: 0, or UV_EINVAL for a unix socket. */
int gw_http_server_sockname(const struct gw_http_server *srv, struct sockaddr_storage *ss);

/* Open connections counted against max_connections (those being refused
 * with 503 are not counted). */
size_t gw_http_server_connections(const struct gw_http_server *srv);

/* Case-insensitive lookup; NULL when absent. */
const char *gw_http_header(const struct gw_http_request *req, const char *name);

/* Whether Content-Type names application/json (parameters allowed): a
 * browser sends that cross-site only after a CORS preflight. */
bool gw_http_body_is_json(const struct gw_http_request *req);

/* Registers the callback fired if the connection goes away before the
 * request is answered (a client that hangs up mid-call). */
void gw_http_on_abort(struct gw_http_request *req, gw_http_abort_cb cb, void *data);

/* Extra response headers: NULL-terminated array of "Name: value" strings. */
void gw_http_respond(struct gw_http_request *req, int status, const char *content_type,
                     const char *body, size_t len, const char *const *extra_headers);

/* Dumps `body` (reference stolen) as application/json; charset=utf-8. */
void gw_http_respond_json(struct gw_http_request *req, int status, json_t *body,
                          const char *const *extra_headers);
/* The same for JSON text already written (`text` borrowed). */
void gw_http_respond_json_text(struct gw_http_request *req, int status, const char *text,
                               size_t len, const char *const *extra_headers);

/* {"error":{"code":code,"message":message}} */
void gw_http_respond_error(struct gw_http_request *req, int status, const char *code,
                           const char *message, const char *const *extra_headers);

/* Streaming (Server-Sent Events and the like): sends the status line and
 * headers with chunked transfer encoding, then each write is one chunk.
 * gw_http_stream_write returns 0, or UV_ENOBUFS when more than `max_queued`
 * bytes are waiting for a slow client, in the gateway's queue or in the
 * kernel's send queue of the socket (the caller decides to drop it).
 * gw_http_stream_end finishes the response. */
void gw_http_stream_begin(struct gw_http_request *req, int status, const char *content_type,
                          const char *const *extra_headers);
int gw_http_stream_write(struct gw_http_request *req, const char *data, size_t len,
                         size_t max_queued);
void gw_http_stream_end(struct gw_http_request *req);

const char *gw_http_status_text(int status);

#endif
