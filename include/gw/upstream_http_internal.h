/* Internals shared by src/upstream/upstream_http.c (the instance: lifecycle, the
 * delivery queue, the timer, the public API), src/upstream/upstream_http_xfer.c
 * (transfers: POST, GET stream, legacy stream, DELETE) and
 * src/upstream/upstream_http_modern.c (2026-07-28's headers and tool marks).
 * Nothing outside those files may include this header. */
#ifndef GW_UPSTREAM_HTTP_INTERNAL_H
#define GW_UPSTREAM_HTTP_INTERNAL_H

#include <jansson.h>

#include "gw/http_xfer.h"
#include "gw/redact.h"
#include "gw/upstream_http.h"

#define HTTP_QUEUE_MAX (64u << 20) /* messages parsed, not yet delivered */

enum xkind { XK_POST, XK_GET, XK_LEGACY, XK_DELETE };

/* Failures noticed inside libcurl callbacks, acted on when the transfer ends. */
enum xfail {
    XF_NONE,
    XF_BODY_TOO_BIG,  /* a JSON body over GW_HTTP_MAX_BODY: its request fails */
    XF_EVENT_TOO_BIG, /* an SSE event over the cap, or the queue full: down */
    XF_READ_TIMEOUT,  /* no byte for sse_read_timeout */
    XF_NOT_SSE,       /* a stream answered 2xx without text/event-stream */
    XF_ENDPOINT,      /* a legacy endpoint event was refused; why says how */
};

enum get_state { GET_IDLE, GET_WAIT, GET_NONE };

struct msg {
    struct msg *next;
    size_t len;
    char data[];
};

/* One HTTP exchange, owned by its instance (in h->xfers) or, while its
 * done handler runs, by that handler. */
struct xfer {
    struct gw_http_xfer t; /* first: the transfer's callbacks get this */
    struct gw_upstream_http *h;
    struct xfer *next, *prev;
    int linked; /* in h->xfers */
    enum xkind kind;
    char *body; /* the message POSTed, owned */
    size_t body_len;
    json_t *rpc_id;  /* the id of the request it carries, or NULL */
    char method[48]; /* for logs; "" when unknown */
    int safe;        /* may be retried after it reached the server (design §9) */
    int step_up;     /* answered 403 insufficient_scope (OAuth) */
    int bearer;      /* answered 401 with a Bearer challenge (OAuth) */
    int had_token;   /* sent with the access token of token_gen */
    unsigned token_gen;
    int auth_retried; /* already sent again after a 401: never twice */
    int auth_parked;  /* waiting for the refresh h->auth_wait joined */
    int is_init, is_initialized_note;
    int tries;
    uint64_t due_ms; /* waiting for a retry until then; 0 when running */
    int sent_session;
    int answered; /* the response to rpc_id was seen */
    int modern;   /* a 2026-07-28 request (its _meta names the version) */
    int lists_tools;
    struct curl_slist *mhdrs; /* its MCP-Protocol-Version, Mcp-Method, …; owned */
    enum xfail fail;
    char why[256];
};

struct gw_upstream_http {
    struct gw_transport base; /* first: a gw_transport * is this instance */
    uv_loop_t *loop;
    struct gw_redact *redact; /* the server's secrets, masked in error excerpts */
    struct gw_curl_uv *multi;
    struct gw_transport_cbs cbs;
    struct gw_upstream_http_options o;
    int own_authorization; /* cfg->headers sets Authorization: no bearer token added */
    int legacy;
    char *id;
    char *url;      /* as configured; may hold credentials: never shown */
    char *shown;    /* scheme://host[:port]/path */
    char *post_url; /* legacy: the endpoint once known */
    int loopback_only;
    char **hdr_lines; /* "Name: value" from cfg->headers: secrets */
    size_t nhdr;
    uint64_t connect_ms, read_ms;
    int terminate;
    char *session;
    char version[32];
    json_t *param_marks; /* 2026-07-28: tool name → [[property, header], …] */

    struct xfer *xfers;
    struct xfer *stream; /* the GET or legacy stream, when running */
    enum get_state get_state;
    int get_wanted; /* notifications/initialized was accepted */
    uint64_t get_due, get_backoff;
    char *last_event_id;
    int64_t retry_hint;

    struct msg *q_head, *q_tail; /* to deliver */
    size_t q_bytes;
    struct msg *p_head, *p_tail; /* legacy: sent before the endpoint was known */
    size_t p_bytes;

    uv_timer_t tick;
    int kicked, flushing;
    int stopping, down, killed, closing;
    int session_lost;          /* the server forgot the session: send nothing more */
    int auth_wait;             /* waits for an OAuth refresh (parked transfers) */
    struct gw_span *auth_span; /* that refresh, in the trace of the request refused */
    char last_error[256];
    struct gw_upstream_http_stats st;
};

/* upstream_http.c */
void gw_upstream_http__kick(struct gw_upstream_http *h);
void gw_upstream_http__reschedule(struct gw_upstream_http *h);
int gw_upstream_http__enqueue(struct gw_upstream_http *h, const char *data, size_t len);
void gw_upstream_http__flush(struct gw_upstream_http *h);
void gw_upstream_http__go_down(struct gw_upstream_http *h, int code, const char *why);
void gw_upstream_http__maybe_finish(struct gw_upstream_http *h);
void gw_upstream_http__set_error(struct gw_upstream_http *h, const char *why);
void gw_upstream_http__set_version(struct gw_upstream_http *h, const char *v, size_t n);

/* upstream_http_modern.c */
/* Reads a request's _meta: a 2026-07-28 one gets x->modern and its
 * headers. `m` is the parsed message. */
void gw_upstream_http__modern_classify(struct xfer *x, json_t *m);
/* A tools/list answer with the tools whose x-mcp-header marks are
 * invalid dropped (a new text, *outlen its length), or NULL when all stay;
 * the valid marks are remembered for the calls. */
char *gw_upstream_http__modern_tools(struct gw_upstream_http *h, const char *data, size_t len,
                                     size_t *outlen);
/* A refusal (HTTP 4xx/5xx) of a 2026-07-28 request whose body is the
 * JSON-RPC error for it: delivered as the answer (1), else 0. */
int gw_upstream_http__modern_error(struct xfer *x);
/* notifications/cancelled for a 2026-07-28 request still running: its
 * transfer is closed instead (1); else 0 and the message is posted. */
int gw_upstream_http__modern_cancel(struct gw_upstream_http *h, const char *msg, size_t len);

/* upstream_http_auth.c */
/* x (unlinked, done) got a 401 with a Bearer challenge: sends it again
 * after the refresh (1), or 0 when it may not go again. */
int gw_upstream_http__auth_retry(struct xfer *x);

/* upstream_http_xfer.c */
void gw_upstream_http__link(struct xfer *x);
void gw_upstream_http__unlink(struct xfer *x);
/* Answers x's request with a JSON-RPC error, then frees x. */
void gw_upstream_http__request_failed(struct xfer *x, long status, int reached, const char *why);
int gw_upstream_http__post(struct gw_upstream_http *h, const char *msg, size_t len);
int gw_upstream_http__open_stream(struct gw_upstream_http *h);
void gw_upstream_http__delete_session(struct gw_upstream_http *h);
void gw_upstream_http__xfer_free(struct xfer *x);
int gw_upstream_http__xfer_begin(struct xfer *x);
void gw_upstream_http__xfer_timeout(struct xfer *x);

#endif
