/* Internals shared by the HTTP server's files: src/http/http.c (connections),
 * src/http/http_listen.c (listener, accepting), src/http/http_parse.c (requests
 * from bytes, limits) and
 * src/http/http_respond.c (answers and streams), and by the fuzz targets that
 * drive them. */
#ifndef GW_HTTP_INTERNAL_H
#define GW_HTTP_INTERNAL_H

#include "gw/http.h"
#include "gw/util.h"

#include <llhttp.h>
#include <string.h>

/* What a request is doing. Only HANDLER and STREAMING belong to the
 * handler; those are the states a dying connection aborts. */
enum req_state {
    RQ_PARSING,   /* being received */
    RQ_HANDLER,   /* handed to the handler, not answered yet */
    RQ_STREAMING, /* stream begun, not ended */
    RQ_ANSWERED,  /* answer queued; freed when it is written */
    RQ_ABORTED,   /* abort callback ran or runs; freed with the connection */
    RQ_ORPHAN,    /* connection gone, no abort callback: freed by the answer */
};

struct buf {
    char *data;
    size_t len, cap;
};

struct req {
    struct gw_http_request pub; /* first: the handler's pointer is ours */
    struct conn *conn;          /* NULL once orphaned */
    enum req_state state;
    int head;       /* HEAD: answers carry headers only */
    int http_minor; /* 0: an HTTP/1.0 client, which cannot read chunks */
    int chunked;    /* a stream uses chunked encoding (HTTP/1.1 client) */
    gw_http_abort_cb abort_cb;
    void *abort_data;
    struct buf arena; /* target, header names and values, path, query */
    size_t mark;      /* start of the string being collected in arena */
    size_t nheaders;
    unsigned singles;     /* bit i: single_fields[i] of http_parse.c seen */
    const char *repeated; /* the first of those seen twice, or NULL */
    struct gw_http_header *headers;
    struct buf body;
    char peer[64];
};

/* Connection states; the comment names the timer running in each. */
enum conn_state {
    CS_HEADERS, /* request line and headers: header_timeout */
    CS_BODY,    /* body: body_timeout, restarted on every read */
    CS_BUSY,    /* the handler has the request or streams it: none */
    CS_SENDING, /* answered, last write pending: send timeout */
    CS_IDLE,    /* keep-alive between requests: keepalive_timeout */
    CS_FINAL,   /* last response (error or Connection: close) going out */
    CS_LINGER,  /* shut down for writing; draining the client: linger */
    CS_DEAD,    /* closes on the next loop turn (0 ms timer) */
};

/* Strictness llhttp 8.1 lacks even in strict mode without lenient flags:
 * it accepts a bare LF in the request line and at the end of the header
 * block, and obs-fold continuation lines. This scanner runs over header and trailer
 * bytes before llhttp sees them. */
struct scan {
    unsigned char prev_cr, line_start, lines;
};

/* Requests from bytes (http_parse.c). It never writes, arms no timer and
 * calls no handler: gw_http__parse reports, the connection acts. */
struct gw_http_parser {
    llhttp_t llhttp;
    const struct gw_http_limits *lim; /* borrowed; read as bytes arrive */
    const char *peer;                 /* borrowed; copied into each request */
    int is_unix;
    struct req *req; /* the request being received; owned until taken */
    struct scan scan;
    uint64_t head_bytes; /* request line + headers so far */
    uint64_t body_bytes; /* body data so far */
    uint64_t meta_bytes; /* bytes of a chunked body that are not data */
    uint64_t meta_free;  /* of those, the framing every chunk needs */
    size_t slice_body;   /* body data in the slice llhttp is parsing */
    int headers_done, msg_done, in_trailers, chunked;
    int keep_alive;                  /* of the complete request */
    int body_started, send_continue; /* set by the slice being parsed */
    int fail_status;                 /* set by a callback that refuses the request */
    const char *fail_code;
    char fail_msg[160];
};

enum gw_http_parse_event {
    GW_HTTP_PARSE_MORE,  /* every byte was consumed; the request is not complete */
    GW_HTTP_PARSE_READY, /* a request is complete: gw_http__parser_take() */
    GW_HTTP_PARSE_ERROR, /* refuse the request (status, code, message) and close */
};

struct gw_http_parse_result {
    enum gw_http_parse_event event;
    size_t used;       /* bytes consumed; after READY the rest belongs to the next request */
    int body_started;  /* the head is complete and a body follows: its clock starts */
    int send_continue; /* ... and the client waits for 100 Continue before sending it */
    int status;        /* ERROR: the answer's status, code and sentence */
    const char *code;
    const char *message; /* valid until the parser is used again */
};

struct conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    uv_timer_t timer;
    uv_shutdown_t shutdown;
    struct gw_http_server *srv;
    struct conn *prev, *next;
    struct gw_http_limits lim; /* snapshot taken as each request starts */
    enum conn_state state;
    struct gw_http_parser parser;
    struct req *req; /* the request being answered */
    char *in;        /* received bytes; [in_off, in_len) not parsed yet */
    size_t in_off, in_len, in_cap;
    int keep_alive;
    int rejected, closing, reading, eof, open_handles;
    int sent_all;               /* the last write of an answer completed at once */
    struct conn *fprev, *fnext; /* in the server's finish list while sent_all */
    uint64_t due;               /* loop ms when the current state times out; 0: never */
    uint64_t timer_due;         /* loop ms the timer is armed for; 0: not armed */
    char peer[64];
};

struct gw_http_server {
    uv_loop_t *loop;
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } lis;
    int is_unix, closing, lis_closed;
    char *unix_path; /* set once we created the socket file */
    char address[320];
    struct gw_http_limits lim;
    gw_http_handler handler;
    void *data;
    gw_http_response_hook hook;
    void *hook_data;
    const char *const *always; /* headers of every answer (gw_http_server_set_headers) */
    struct conn *conns;
    size_t nconns, nrejected;
    /* Every read of a connection that holds no unparsed bytes goes here;
     * what a read leaves unparsed is copied to the connection's own
     * buffer. So a keep-alive connection between requests owns no buffer,
     * and a request costs no allocation for its bytes. */
    char *rbuf;
    /* Answers written whole are finished (the request freed, the next one
     * parsed) from here at the next loop turn, off the handler's stack. */
    uv_idle_t finisher;
    struct conn *finish_head;
    int has_finisher, finisher_closed;
    void (*close_cb)(void *data);
    void *close_data;
};

void gw_http__buf_reserve(struct buf *b, size_t n);

/* Appends and keeps a NUL after the data. Callers check their hard
 * maximum (header bytes, max_body) before appending. `p` must not point
 * into `b` (it may move). Inline: the parser appends four times per
 * header field. */
static inline void gw_http__buf_append(struct buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap)
        gw_http__buf_reserve(b, n);
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void gw_http__req_free(struct req *r);

/* Sets up a parser (llhttp strict: no lenient flags) for requests from
 * `peer` under the limits `*lim`; all three are borrowed. */
void gw_http__parser_init(struct gw_http_parser *ps, const char *peer, int is_unix,
                          const struct gw_http_limits *lim);

/* Before each request. */
void gw_http__parser_reset(struct gw_http_parser *ps);

/* Parses `n` bytes of one request; stops at its end (READY: the bytes
 * after it are the next request's), at a refusal (ERROR: nothing more may
 * be parsed), or when every byte is consumed (MORE). */
void gw_http__parse(struct gw_http_parser *ps, const char *data, size_t n,
                    struct gw_http_parse_result *out);

/* The complete request (state RQ_PARSING, no connection); the caller owns it. */
struct req *gw_http__parser_take(struct gw_http_parser *ps);

/* Frees a request still being received. */
void gw_http__parser_free(struct gw_http_parser *ps);

/* Writes `n` buffers as one write (copied). `last` marks the end of an
 * answer: its completion finishes the response. Returns 0 or a libuv error,
 * after which the connection closes on the next loop turn. */
int gw_http__send(struct conn *c, const uv_buf_t *bufs, unsigned n, int last);

/* http.c */
void gw_http__conn_close(struct conn *c);
void gw_http__conn_read_start(struct conn *c);
/* Takes the server's limits for the next request and resets the parser. */
void gw_http__conn_reset_request(struct conn *c);
void gw_http__debug(const struct conn *c, const char *msg, const char *err);

/* http_listen.c: frees the server once it is closing and nothing is left. */
void gw_http__srv_maybe_done(struct gw_http_server *srv);

/* (Re)starts the connection's timer for its current state. */
void gw_http__arm_timer(struct conn *c);

/* Sends an error answer with Connection: close, then shuts down. */
void gw_http__final_error(struct conn *c, int status, const char *code, const char *msg);

/* Formats the status line and headers: `extra`, then the server's
 * `always`. len < 0: chunked (or, when `chunked` is 0, no length: the body
 * ends with the connection). */
char *gw_http__head(int status, const char *ctype, long long len, int chunked, int keep_alive,
                    const char *const *extra, const char *const *always, size_t *out_len);

#endif
