/* Internals of the /mcp endpoint, shared by its files and nothing else:
 *   mcp_server.c   the HTTP side: methods, headers, POST bodies, exchanges;
 *   mcp_session.c  sessions: ids, the table, expiry, the GET stream and the
 *                  events kept for Last-Event-ID;
 *   mcp_stream.c   the SSE answers of POSTs: their events, kept so that a
 *                  broken connection can be resumed with GET + Last-Event-ID;
 *   mcp_methods.c  the JSON-RPC methods over the servers module;
 *   mcp_modern.c   2026-07-28 requests: the envelope and header checks,
 *                  server/discover, and the session made per request;
 *   mcp_modern_call.c  their tools/call through the input rounds;
 *   mcp_dialog.c   their dialog: named, or gateway.mcp_default_dialog's;
 *   mcp_listen.c   subscriptions/listen streams.
 * The methods never look at HTTP and the sessions never parse JSON-RPC, so
 * the stateless 2026-07-28 revision (no initialize, no sessions) reuses
 * mcp_methods.c with a session made per request. */
#ifndef GW_MCP_SERVER_INTERNAL_H
#define GW_MCP_SERVER_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "gw/dispatch.h"
#include "gw/input_rounds.h"
#include "gw/lease.h"
#include "gw/mcp_server.h"
#include "gw/subscriptions.h"

#define MCP_SESSION_ID_LEN  32         /* hex characters: 128 bits (security.md C6) */
#define MCP_BUCKETS_MIN     16         /* the session table's least size; it doubles and halves */
#define MCP_KEEP_EVENTS     32         /* GET-stream events kept per session */
#define MCP_MAX_QUEUED      (1u << 20) /* bytes waiting on a stream; beyond, its connection ends */
#define MCP_MAX_CALLS       256        /* tools/call and routed requests in flight per session */
#define MCP_MAX_BATCH       100        /* messages in one 2025-03-26 batch */
#define MCP_SWEEP_MS        60000      /* idle-session sweep period */
#define MCP_NOTIFY_DELAY_MS 50         /* coalesces one reload's catalog commits */
#define MCP_VERSION_MAX     16

/* Resumable POST streams (docs/api.md, /mcp "Resumption"). Each stream keeps
 * its newest events within both bounds (the newest one is kept whatever its
 * size: it may be the response); a stream whose connection broke is kept
 * until its call ends and then MCP_STREAM_RETAIN_MS more, at most
 * MCP_STREAMS_KEPT such finished streams per session (oldest dropped). */
#define MCP_STREAM_KEEP_EVENTS 64
#define MCP_STREAM_KEEP_BYTES  (1u << 20)
#define MCP_STREAM_RETAIN_MS   (5u * 60u * 1000u)
#define MCP_STREAMS_KEPT       16
#define MCP_STREAM_RETRY_MS    1000 /* the SSE `retry:` sent in priming events */

/* JSON-RPC error codes (JSON-RPC 2.0; -32000/-32001 as the SDK servers use
 * them for transport-level refusals). */
enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_INTERNAL_ERROR = -32603,
    RPC_BAD_REQUEST = -32000,
    RPC_SESSION_NOT_FOUND = -32001,
    RPC_RESOURCE_NOT_FOUND = -32002, /* MCP resources/read before 2026-07-28 */
    RPC_HEADER_MISMATCH = -32020,    /* 2026-07-28: a header disagrees with the body */
    RPC_MISSING_CAPABILITY = -32021, /* 2026-07-28: the request did not declare it */
    RPC_URL_ELICITATION = -32042,    /* 2025-11-25: URLElicitationRequiredError */
    RPC_UNSUPPORTED_VERSION = -32022,
};

/* The revision without sessions, served next to the ones above. */
#define MCP_MODERN_VERSION "2026-07-28"
#define MCP_META_VERSION   "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS      "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define MCP_META_SERVER    "io.modelcontextprotocol/serverInfo"
#define MCP_META_SUB_ID    "io.modelcontextprotocol/subscriptionId"
#define MCP_META_INFO      "io.modelcontextprotocol/clientInfo"
#define MCP_META_DIALOG    "io.mcpgw/dialog"
/* Caching hints on 2026-07-28 results (docs/api.md): lists and discovery
 * change only on a reload, which listen streams hear of; a read's content
 * can change at any time and may be a leased instance's own. */
#define MCP_LIST_TTL_MS 5000
#define MCP_READ_TTL_MS 0

struct gw_mcp_call;
struct gw_mcp_exchange;
struct mcp_stream;

/* A GET-stream event kept for replay: `text` is the framed SSE event. */
struct mcp_kept {
    uint64_t seq;
    char *text;
};

/* One MCP session. Owned by the server's table; freed by
 * gw_mcp__session_end(). */
struct gw_mcp_session {
    struct gw_mcp_session *hnext;       /* bucket chain */
    struct gw_mcp_session *prev, *next; /* every session, oldest first */
    struct gw_mcp_server *ms;
    char id[MCP_SESSION_ID_LEN + 1];
    char client[65];               /* its client (gw/policy.h): only it uses the session */
    bool named_dialog;             /* X-Mcpgw-Dialog or the URL's, else "mcp-session:<hex>" */
    char version[MCP_VERSION_MAX]; /* negotiated protocol version */
    char log_level[16];            /* logging/setLevel; "info" until set; 2026-07-28: the
                                      request's logLevel, "" for none (no log messages) */
    bool modern;                   /* a 2026-07-28 request's own session (mcp_modern.c) */
    bool initialized;              /* notifications/initialized arrived */
    uint64_t last_used_ms;
    struct gw_http_request *get; /* the open GET stream, or NULL */
    bool had_get;                /* events are kept only once a GET stream was opened */
    struct mcp_kept *kept;       /* MCP_KEEP_EVENTS slots, allocated with the first event */
    uint64_t next_seq;           /* the next SSE event id of this session */
    struct gw_mcp_call *calls;   /* tools/call and routed requests in flight */
    unsigned ncalls;
    /* What is read of the client's capabilities, not their tree (a session
     * lives an hour, idle or abandoned): GW_CLIENT_CAP_* and URL-mode
     * elicitation (capabilities.elicitation.url). */
    unsigned caps;
    bool url_elicitation;
    uint64_t next_request_id;   /* ids of the requests relayed to the client */
    unsigned next_stream;       /* POST streams opened (SSE ids "<stream>.<seq>") */
    struct mcp_stream *streams; /* POST streams not yet delivered, newest first */
    struct gw_subscriber *sub;  /* resource subscriptions; made on first use */
    /* canonical, at most GW_DIALOG_MAX: allocated with the session, as long
     * as it is (a session lives an hour, idle or abandoned) */
    char dialog[];
};

/* One POST: the answers to the requests in it are gathered here and sent
 * together once the last one is in. Owned by itself: freed when answered. */
struct gw_mcp_exchange {
    struct gw_http_request *req; /* NULL once the client went away */
    json_t *replies;             /* JSON-RPC responses, in completion order; NULL: none */
    unsigned waiting;            /* requests not answered yet (+1 while dispatching) */
    bool batch;                  /* the body was an array: answer an array */
    bool sse;                    /* answer as text/event-stream */
    bool sse_ok;                 /* the client accepts text/event-stream */
    struct mcp_stream *stream;   /* the SSE answer once begun (progress, relays); it owns
                                    the connection then, and req is NULL */
    char *session_header;        /* "Mcp-Session-Id: …" on an initialize answer */
    /* 2026-07-28: the request's own session, freed with the exchange; its
     * SSE answer is written straight to req (no ids, no resumption), and
     * the client closing it cancels the calls. */
    struct gw_mcp_session *own;
    char *method; /* its request's method (results are decorated by it) */
    bool streaming;
    /* A call's whole answer already written as text (a 2026-07-28
     * tools/call's plain result, gw_mcp__modern_call_answer), set only
     * when it is the exchange's one answer and goes out at once. */
    char *answer;
    size_t answer_len;
};

/* A server request relayed to the client and not answered yet. Owned by
 * its call. */
struct mcp_relay {
    struct mcp_relay *next;
    struct gw_server_request *sr;
    json_t *id; /* the id the client sees: the session's own */
};

/* A tools/call in flight. Owned by itself: freed by its outcome callback. */
struct gw_mcp_call {
    struct gw_mcp_call *next;  /* the session's list */
    struct gw_mcp_session *s;  /* NULL once the session ended */
    struct gw_mcp_exchange *x; /* gets the answer */
    struct gw_call *call;
    struct gw_round *round;     /* 2026-07-28 tools/call: through the input rounds */
    json_t *id;                 /* the client's request id */
    char *tool;                 /* tool name, or the method of a routed request */
    bool routed;                /* prompts/get, resources/read, completion/complete */
    struct gw_metrics *metrics; /* borrowed: tool calls are counted on it */
    uint64_t started_ms;
    struct mcp_relay *relays;
    /* the revision of its session or request, kept for the log line: the
     * session may be gone by the time the call ends (a DELETE, a client
     * that hung up) */
    char version[MCP_VERSION_MAX];
    struct gw_span *span; /* its request's SERVER span, when traced (mcp_trace.c) */
};

/* Default dialogs whose first lease was logged with the way to name one
 * (a ring: the oldest is forgotten). */
#define MCP_ANNOUNCED_MAX 64
struct mcp_announced {
    char dialogs[MCP_ANNOUNCED_MAX][GW_DIALOG_MAX + 1];
    size_t n, next;
};

struct gw_mcp_server {
    uv_loop_t *loop;
    struct gw_servers *servers;
    struct gw_metrics *metrics; /* borrowed, may be NULL */
    struct gw_rounds *rounds;   /* borrowed, may be NULL: 2026-07-28 calls cannot ask input */
    struct gw_mcp_server_limits lim;
    struct gw_mcp_session **buckets; /* nbuckets (a power of two, or 0): sessions by id */
    size_t nbuckets;
    struct gw_mcp_session *head, *tail;
    size_t nsessions;
    uv_timer_t sweep;  /* idle sessions */
    uv_timer_t notify; /* coalesced list_changed */
    unsigned open_handles;
    uint64_t notified_version;      /* the catalog version sessions were told about */
    uint64_t extras_notified;       /* the extras version sessions were told about */
    unsigned extras_pending;        /* kinds (1 prompts, 2 resources; 4 tool search and 8
                                       the clients changed: tools) to notify */
    struct gw_mcp_session *modern;  /* sessions of 2026-07-28 requests not answered yet: each
                                       owned by its exchange, listed here for shutdown */
    struct mcp_listener *listeners; /* open subscriptions/listen streams, owned here
                                       (mcp_listen.c) until their client leaves or close */
    size_t nlisteners;
    struct mcp_view *views; /* each client's tools/list as announced (mcp_views.c) */
    size_t nviews;
    enum gw_mcp_default_dialog default_dialog;
    struct mcp_announced announced;
    void (*close_cb)(void *data);
    void *close_data;
    bool closing;
};

/* ---- mcp_server.c ---- */

/* {"jsonrpc":"2.0","id":id,"result":result}; `result` is stolen, `id`
 * borrowed. New reference. */
json_t *gw_mcp__result(json_t *id, json_t *result);
/* {"jsonrpc":"2.0","id":id|null,"error":{"code","message"}}. New reference. */
json_t *gw_mcp__error(json_t *id, int code, const char *message);
/* Sends `msg` (borrowed) as an event of the POST's own SSE answer, which
 * begins (200, priming event) on first use; the responses follow on it.
 * Once begun, the stream takes every message, its connection broken or
 * not (they are kept for resumption). Returns 0, or -1 when the exchange
 * cannot begin a stream (its client went away or does not accept
 * text/event-stream, or `s` is NULL). */
int gw_mcp__exchange_stream(struct gw_mcp_exchange *x, struct gw_mcp_session *s, json_t *msg);
/* `msg` (borrowed) as one SSE event without an id: "event: message" and
 * its JSON. New string. */
char *gw_mcp__sse_event(json_t *msg);
/* A new exchange for the POST `req` (one message unless `batch`). */
struct gw_mcp_exchange *gw_mcp__exchange_new(struct gw_http_request *req, bool batch);
/* Registers the exchange's abort callback: a 2025-era client hanging up
 * lets its calls run on; a 2026-07-28 one cancels them. */
void gw_mcp__exchange_watch(struct gw_mcp_exchange *x);
/* The dialog named by X-Mcpgw-Dialog or the URL: 0 with `canon` set (""
 * if neither), or -1 after answering 400 (malformed, or the two differ). */
int gw_mcp__named_dialog(struct gw_http_request *req, char *canon);
/* Appends a response (stolen; NULL adds nothing) to the exchange. */
void gw_mcp__exchange_add(struct gw_mcp_exchange *x, json_t *reply);
/* One request of the exchange is answered; the last one sends the answer
 * and frees `x`. */
void gw_mcp__exchange_done(struct gw_mcp_exchange *x);

/* ---- mcp_session.c ---- */

/* A new session in the table with `dialog` (canonical; NULL: a fresh
 * "mcp-session:<hex>" name of its own, never its id).
 * Returns 0 and sets *out, UV_EBUSY when max_sessions are live, or
 * uv_random's error. */
int gw_mcp__session_new(struct gw_mcp_server *ms, const char *client, const char *dialog,
                        struct gw_mcp_session **out);
/* The live session with this id, or NULL (any string is safe to pass). */
struct gw_mcp_session *gw_mcp__session_find(struct gw_mcp_server *ms, const char *id);
/* Ends a session: its GET stream is ended, its calls are cancelled (their
 * POSTs get an error), its dialog's leases are released when `release`,
 * its resource subscriptions end (upstreams told, unless the gateway is
 * stopping), and it is freed. */
void gw_mcp__session_end(struct gw_mcp_session *s, bool release, const char *why);
/* Makes `req` the session's GET stream (the caller checked there is none)
 * and replays kept events after `last_event_id` (may be NULL). */
void gw_mcp__session_attach(struct gw_mcp_session *s, struct gw_http_request *req,
                            const char *last_event_id);
/* Sends a notification (borrowed) on the session's GET stream, keeping it
 * for replay when the session ever opened one. */
void gw_mcp__session_send(struct gw_mcp_session *s, json_t *msg);
/* Ends sessions idle for lim.idle_ms (the sweep timer). */
void gw_mcp__sessions_sweep(struct gw_mcp_server *ms);

/* Checks an initialize request's params; returns NULL and sets *version to
 * the version to answer (the client's when supported, else ours), or
 * returns a JSON-RPC error message (new reference) for `id`. */
json_t *gw_mcp__initialize_check(json_t *id, json_t *params, const char **version);
/* The InitializeResult for `version`: prompts, resources and completions
 * are declared when some server offers them now. New reference. */
json_t *gw_mcp__initialize_result(struct gw_mcp_server *ms, const char *version);
/* GW_CLIENT_CAP_* of a client's initialize capabilities. */
unsigned gw_mcp__client_caps(json_t *caps, bool *url_elicitation);

/* ---- mcp_stream.c ---- */

/* Begins the answer to the POST `req` of exchange `x` as a new stream of
 * session `s`: 200 text/event-stream and, for 2025-11-25 sessions, a
 * priming event with `retry:`. The stream takes over req (and its abort
 * callback); the caller must not touch req again. */
struct mcp_stream *gw_mcp__stream_open(struct gw_mcp_session *s, struct gw_mcp_exchange *x,
                                       struct gw_http_request *req);
/* Sends `msg` (borrowed) as the stream's next event and keeps it (bounded)
 * for a later resumption; with no connection it is only kept. */
void gw_mcp__stream_send(struct mcp_stream *st, json_t *msg);
/* The exchange added its last event (the responses). A stream still
 * connected ends and is freed; a broken one is kept for
 * MCP_STREAM_RETAIN_MS, or freed when its session has ended. */
void gw_mcp__stream_finish(struct mcp_stream *st);
/* Whether `last_event_id` names a POST stream ("<no>.<seq>", no >= 1):
 * then GET /mcp resumes it with gw_mcp__stream_resume(). */
bool gw_mcp__stream_named(const char *last_event_id);
/* GET /mcp with such a Last-Event-ID: replays that stream's kept events
 * after the id and goes on delivering it until its response, then ends;
 * answers 400 when the session keeps no such stream (unknown or expired).
 * A stream still connected elsewhere moves to this request. */
void gw_mcp__stream_resume(struct gw_mcp_session *s, struct gw_http_request *req,
                           const char *last_event_id);
/* The session ends: streams still fed by an exchange pass to it, the
 * others are ended and freed. */
void gw_mcp__streams_end(struct gw_mcp_session *s);
/* Frees the session's finished streams whose retention passed. */
void gw_mcp__streams_sweep(struct gw_mcp_session *s, uint64_t now_ms);

/* ---- mcp_methods.c ---- */

/* The protocol versions accepted, newest (offered) first. */
extern const char *const gw_mcp__versions[];
bool gw_mcp__version_supported(const char *v);

/* Handles one message of a POST on session `s`: a request's answer is added
 * to `x` now or, for tools/call, later (x->waiting counts it); a
 * notification or a response adds nothing. `msg` is borrowed. */
void gw_mcp__dispatch(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *msg);
/* The same for a request whose envelope the caller has checked (a JSON-RPC
 * 2.0 request with a string method and a string or integer id). */
void gw_mcp__dispatch_request(struct gw_mcp_session *s, struct gw_mcp_exchange *x,
                              const char *method, json_t *id, json_t *params);
/* The same for a checked tools/call read without a params tree: `name`
 * (NULL when absent) and `args` (NULL when absent), with no progress token
 * and no retry's fields. */
void gw_mcp__dispatch_call(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                           const char *name, json_t *args);

/* Cancels the session's call with this JSON-RPC id (notifications/cancelled). */
void gw_mcp__cancel(struct gw_mcp_session *s, json_t *request_id, const char *reason);
/* Cancels every call of the session; their outcomes answer their POSTs
 * (maybe before this returns). The session stays. */
void gw_mcp__calls_cancel(struct gw_mcp_session *s, const char *why);

/* The parts of a tools/call that mcp_modern_call.c shares. */
struct gw_mcp_call *gw_mcp__call_new(struct gw_mcp_session *s, struct gw_mcp_exchange *x,
                                     json_t *id, const char *name);
void gw_mcp__call_track(struct gw_mcp_session *s, struct gw_mcp_exchange *x, struct gw_mcp_call *c);
void gw_mcp__call_drop(struct gw_mcp_call *c);
/* The call ended (`reply` stolen: its answer, or NULL when x->answer
 * holds it already; `status` for the log and metrics): unlinked, answered
 * and freed. */
void gw_mcp__call_end(struct gw_mcp_call *c, const char *server, const char *dialog,
                      const char *status, json_t *reply);
/* The answer to a finished call, and its status label. */
json_t *gw_mcp__call_reply(const struct gw_mcp_call *c, const struct gw_call_outcome *o);
const char *gw_mcp__call_status(const struct gw_call_outcome *o);
/* A call refused before it started (dispatch's code `rc`), counted. */
json_t *gw_mcp__call_refused(struct gw_mcp_session *s, json_t *id, const char *name, int rc);

/* mcp_authorize.c: the answer to a tools/call of `tool` whose server
 * (`server`, or NULL: the tool's) needs a person to authorize the gateway
 * (GW_SERVERS_E_AUTHORIZATION): a URL elicitation of the authorize URL
 * for a client that declared URL-mode elicitation (2025-11-25: error
 * -32042; 2026-07-28: an input_required result), else a tool error with
 * the sentence and the link. `s` may be NULL (the session ended). */
json_t *gw_mcp__authorization_reply(struct gw_mcp_server *ms, const struct gw_mcp_session *s,
                                    json_t *id, const char *tool, const char *server);
void gw_mcp__call_progress(void *data, json_t *params);
void gw_mcp__call_log(void *data, json_t *params);

/* ---- mcp_modern.c ---- */

/* Answers a POST that is a 2026-07-28 request (its _meta names a version,
 * or its MCP-Protocol-Version is not a 2025-era one; an initialize without
 * a session never is) and returns true; false for any other (`body`
 * borrowed). */
bool gw_mcp__modern_post(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *body);
/* The same for a 2026-07-28 tools/call of the common shape, read from the
 * body's text without its tree; false (nothing answered) for any other
 * body, which then goes to gw_mcp__modern_post. */
bool gw_mcp__modern_call_text(struct gw_mcp_server *ms, struct gw_http_request *req);
/* The HTTP status of a 2026-07-28 error answer with this JSON-RPC code. */
int gw_mcp__modern_status(int code);
/* Whether `s` is one of the NULL-terminated `list`. */
bool gw_mcp__listed(const char *const *list, const char *s);
/* Members of `obj` (borrowed; NULL when absent or `obj` is no object),
 * found in one pass over it: json_object_get hashes its key on every call
 * (~170 instructions for the long io.modelcontextprotocol/ keys), a pass
 * over a few members compares lengths first. A key matches as
 * json_object_get matches it: the same bytes, the same length. */
struct gw_mcp_member {
    const char *key;
    size_t len;
};
struct gw_trace_ctx;
/* mcp_trace.c: the SERVER span of a request (`tool`: its tool when known
 * apart from params), made adoptable by the call it starts; NULL when
 * not traced. *remote gets the incoming context (valid or not). */
struct gw_span *gw_mcp__span_begin(struct gw_mcp_session *s, struct gw_mcp_exchange *x,
                                   const char *method, json_t *id, json_t *params, const char *tool,
                                   struct gw_trace_ctx *remote);
/* A call takes the request's span (NULL: none), or gives it back when
 * it is dropped before it started. */
struct gw_span *gw_mcp__span_adopt(void);
void gw_mcp__span_unadopt(struct gw_span *span);
/* Ends the span with the request's answer, unless a call adopted it. */
void gw_mcp__span_reply(struct gw_span *span, json_t *reply);
/* Ends a call's span with its outcome's status label. */
void gw_mcp__span_call_end(struct gw_mcp_call *c, const char *server, const char *dialog,
                           const char *status);

#define GW_MCP_MEMBER(k)                                                                           \
    {                                                                                              \
        k, sizeof(k) - 1                                                                           \
    }
void gw_mcp__members(json_t *obj, const struct gw_mcp_member *want, json_t **out[], size_t n);
/* Each member of `obj` in order, as json_object_keylen_foreach walks them
 * without its json_object_key_to_iter per step (~40 instructions a member). */
#define GW_MCP_EACH_MEMBER(obj, it)                                                                \
    for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it))
/* -32601 for a method 2026-07-28 removed, or NULL. New reference. */
json_t *gw_mcp__modern_removed(json_t *id, const char *method);
json_t *gw_mcp__discover_result(struct gw_mcp_server *ms);
/* A request's params as the next hop gets them: a copy without the
 * envelope's io.modelcontextprotocol/ keys, which describe this hop (the
 * upstream has a revision and capabilities of its own), nor the gateway's
 * own io.mcpgw/ ones (the dialog), and without the
 * inputResponses and requestState that answer the gateway's rounds. */
json_t *gw_mcp__hop_params(json_t *params);
/* Frees a request's session once its exchange is answered. */
void gw_mcp__modern_free(struct gw_mcp_session *s);
/* Shutdown: the requests' sessions leave the server and their calls are
 * cancelled. */
void gw_mcp__modern_close_all(struct gw_mcp_server *ms);

/* ---- mcp_modern_answer.c ---- */

/* Adds resultType, the gateway's serverInfo and caching hints to a
 * result of `method`, in place (`result` must be the caller's own object;
 * its _meta is replaced by a copy). */
void gw_mcp__modern_decorate(const char *method, json_t *result);
/* The JSON-RPC answer to a tools/call whose upstream result is `result`
 * (`lease` may be NULL), byte for byte what gw_mcp__call_reply,
 * gw_mcp__modern_decorate and gw_json_dump give, written without a tree;
 * its length in *len. NULL where that path must run instead: a result not
 * an object, a resultType other than "complete", a _meta not an object,
 * text that is not UTF-8. */
char *gw_mcp__modern_call_answer(json_t *id, json_t *result, json_t *lease, size_t *len);

/* ---- mcp_modern_call.c ---- */

/* tools/call of a 2026-07-28 request (`name`, `args` and `token` as
 * mcp_methods.c checked them; `params` for the retry's requestState and
 * inputResponses), through the input rounds: the answer now (an error),
 * or NULL when it comes later. */
json_t *gw_mcp__modern_call(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                            const char *name, json_t *args, json_t *token, json_t *params);

/* prompts/get or resources/read of a 2026-07-28 request through the input
 * rounds, for call `c` (new, routed); `hop` is what goes upstream. 0 (the
 * answer comes later), dispatch's code, or -1 with an error answer in
 * *err (new reference). */
int gw_mcp__modern_route(struct gw_mcp_session *s, struct gw_mcp_call *c, json_t *params,
                         json_t *hop, json_t **err);

/* ---- mcp_dialog.c ---- */

/* The dialog of a 2026-07-28 request whose params._meta has
 * "io.mcpgw/dialog" (`has_named`; `named` is its value, NULL when not a
 * string) and `info` (its client's clientInfo, NULL when absent): the one
 * X-Mcpgw-Dialog, the URL or `named` names, else the default
 * (gateway.mcp_default_dialog; "" for none). 0 with `canon` set
 * (GW_DIALOG_MAX + 1 bytes), or -1 after answering 400 (malformed, or two
 * of them differ). */
int gw_mcp__request_dialog(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *id,
                           bool has_named, const char *named, json_t *info, char *canon);

/* ---- mcp_listen.c ---- */

#define MCP_MAX_LISTENERS 10000 /* subscriptions/listen streams open at once */

/* subscriptions/listen: the request's stream stays open and carries the
 * list changes it asked for. */
void gw_mcp__listen(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *id,
                    json_t *params, const char *dialog);
/* Sends notifications/<kind>/list_changed to the listeners that asked for
 * it (`method` is the notification's): those of `dialog`, or every one
 * when it is NULL. */
void gw_mcp__listeners_notify(struct gw_mcp_server *ms, const char *method, const char *dialog);
/* The same to the listen streams of one client. */
void gw_mcp__listeners_notify_client(struct gw_mcp_server *ms, const char *method,
                                     const char *client);

/* ---- mcp_views.c: each client's view, for its list_changed ---- */

enum { GW_MCP_VIEW_TOOLS, GW_MCP_VIEW_PROMPTS, GW_MCP_VIEW_RESOURCES, GW_MCP_VIEWS };
/* Notes the client's current views if it has none yet (with clients only). */
void gw_mcp__view_note(struct gw_mcp_server *ms, const char *client);
/* For each kind of `kinds` (bits 1 << GW_MCP_VIEW_*): tells each client
 * whose view of it changed since it was noted (unless !tell) with its
 * list_changed, and notes the new one. */
void gw_mcp__views_announce(struct gw_mcp_server *ms, unsigned kinds, bool tell);
void gw_mcp__views_free(struct gw_mcp_server *ms);
/* Shutdown: every listen stream gets its final result and ends. */
void gw_mcp__listeners_end(struct gw_mcp_server *ms);

/* ---- mcp_toolsearch.c (gateway.tool_search) ---- */

/* tools/list's tools for the session when tool search is on (new
 * reference), or NULL when it is off. */
json_t *gw_mcp__ts_tools(struct gw_mcp_session *s);
/* Before a tools/call when tool search is on: the answer of the built-ins
 * find_tools and forget_tools; for any other name, activates the tool for
 * the session's dialog and returns NULL (the call goes on). NULL when tool
 * search is off. */
json_t *gw_mcp__ts_call(struct gw_mcp_session *s, json_t *id, const char *name, json_t *args);

#endif
