/* The MCP client protocol layer: JSON-RPC over whatever transport the owner
 * wires in, the initialize handshake, pings, paginated lists, tool calls and
 * cancellation, for one upstream instance.
 *
 * It never touches sockets or processes. The owner (the instance object)
 * gives it a send function (normally wrapping gw_transport_send), feeds each
 * incoming message to gw_mcp_client_receive() and reports a dead transport
 * with gw_mcp_client_transport_down().
 *
 * JSON-RPC ids are the client's own integers, unique per instance and never
 * reused, so a response can only reach the request this instance sent
 * (security.md S1). Hostile input (non-JSON, wrong shapes, unknown ids) is
 * counted and dropped, never fatal (S5). The client declares `sampling` and
 * `elicitation` (design §9): those server requests, and roots/list, go to
 * the owner's on_request, which answers them later with
 * gw_mcp_client_respond(); every other server request is answered -32601
 * at once (S9).
 *
 * Two revisions (docs/architecture.md "Upstream revisions"): a 2025-era
 * server is opened with `initialize` and then spoken to in one session; a
 * 2026-07-28 server is opened with `server/discover`, and every request
 * carries the `_meta` envelope (version, client info, and the capabilities
 * and log level of the request's caller: `caps`). `era` AUTO probes with
 * server/discover and falls back to `initialize` on any error or timeout
 * but -32022 naming 2026-07-28 (one more probe). Towards a 2026-07-28
 * server the client also:
 *   - keeps one `subscriptions/listen` open for the list_changed the
 *     server offers and the resources subscribed (resources/subscribe and
 *     unsubscribe change it and are answered by its acknowledgement),
 *     opened again when it ends unless it lasted under a second;
 *   - turns an `input_required` result of tools/call, prompts/get or
 *     resources/read into server requests to the owner (on_request, with
 *     the handle of the request that asked as their `origin`, ids of the
 *     client's own that mean something only with that origin, and the
 *     server's key in params._meta[GW_MCP_META_INPUT_KEY]), and once each
 *     is answered (gw_mcp_client_respond) retries the request with a new id,
 *     `inputResponses` and the server's `requestState`, under the same
 *     handle, at most GW_MCP_MAX_INPUT_ROUNDS times. So a caller never
 *     knows which revision its upstream speaks.
 *
 * Ownership: the owner owns the client from gw_mcp_client_new() until it
 * calls gw_mcp_client_close(); the client frees itself later, when its
 * last uv handle is closed. All callbacks run on the loop thread. */
#ifndef GW_MCP_CLIENT_H
#define GW_MCP_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "gw/errors.h"
#include "gw/redact.h"

struct gw_oauth;

/* Versions offered and accepted, newest first; the first is offered. */
#define GW_MCP_PROTOCOL_VERSION "2025-11-25"
/* The stateless revision, spoken after server/discover. */
#define GW_MCP_MODERN_VERSION "2026-07-28"
/* Input rounds of one 2026-07-28 request before it fails (the TS and
 * Python SDKs stop at 10 too). */
#define GW_MCP_MAX_INPUT_ROUNDS 10
/* Client capabilities a request's caller can answer (the 2026-07-28
 * envelope declares these per request; a 2025-era initialize declares
 * them all once). */
#define GW_MCP_CAP_SAMPLING    1u
#define GW_MCP_CAP_ELICITATION 2u
#define GW_MCP_CAP_ROOTS       4u
#define GW_MCP_CAPS_ALL        7u
/* The same `caps` also carry the log level its caller takes, from
 * gw_mcp_log_bits(): a 2026-07-28 request asks for log messages at it
 * (the envelope's logLevel), none without it. */
#define GW_MCP_CAP_LOG_SHIFT 8
#define GW_MCP_CAP_LOG_MASK  (15u << GW_MCP_CAP_LOG_SHIFT)

/* The GW_MCP_CAP_* a ClientCapabilities object declares (sampling,
 * elicitation, roots), and the object for some of them (new reference). */
unsigned gw_mcp_caps_of(json_t *caps);
json_t *gw_mcp_caps_json(unsigned caps);

/* An MCP log level's rank, 1 ("debug") to 8 ("emergency"); 0 for NULL, ""
 * or another word. */
unsigned gw_mcp_log_rank(const char *level);
/* The bits of GW_MCP_CAP_LOG_MASK for a log level (its rank); 0 for none. */
unsigned gw_mcp_log_bits(const char *level);

/* Where an input request turned into a server request carries its key. */
#define GW_MCP_META_INPUT_KEY "mcpgw/inputKey"
/* How long an AUTO probe waits for server/discover before trying
 * initialize: a 2025-era server may ignore a request before initialize. */
#define GW_MCP_PROBE_TIMEOUT_MS 10000
/* The MCP Apps extension (SEP-1865) and the UI resource type it names. */
#define GW_MCP_EXT_UI      "io.modelcontextprotocol/ui"
#define GW_MCP_EXT_UI_MIME "text/html;profile=mcp-app"

/* Discovery bounds (design §5): a list longer than this fails. */
#define GW_MCP_MAX_LIST_PAGES 100
#define GW_MCP_MAX_LIST_ITEMS 10000

/* Requests in flight at once on one instance; beyond, requests fail with
 * UV_ENOBUFS (callers' own limits are far lower). */
#define GW_MCP_MAX_IN_FLIGHT 8192

#define GW_MCP_DEFAULT_INIT_TIMEOUT_MS 30000

/* Error codes of this layer (range: errors.h). Functions return 0
 * or a negative code; a function that returns an error never calls its
 * callback. */
enum {
    GW_MCP_E_RPC = GW_E_MCP_BASE - 1,       /* the server answered with a JSON-RPC error */
    GW_MCP_E_TIMEOUT = GW_E_MCP_BASE - 2,   /* no answer in time; cancelled upstream (504) */
    GW_MCP_E_CANCELLED = GW_E_MCP_BASE - 3, /* gw_mcp_client_cancel() */
    GW_MCP_E_TRANSPORT = GW_E_MCP_BASE - 4, /* the transport went down (502) */
    GW_MCP_E_CLOSED = GW_E_MCP_BASE - 5,    /* gw_mcp_client_close() */
    GW_MCP_E_PROTOCOL = GW_E_MCP_BASE - 6,  /* the answer has the wrong shape (502) */
    GW_MCP_E_LIMIT = GW_E_MCP_BASE - 7,     /* a list exceeded the discovery bounds */
    GW_MCP_E_NOT_READY = GW_E_MCP_BASE - 8, /* the handshake has not succeeded */
    GW_MCP_E_NOT_RUN =
        GW_E_MCP_BASE - 9, /* refused unrun (session gone): may be sent again elsewhere */
};

/* A short name for a code ("timeout", "transport_down", …), for logs and
 * error bodies; libuv codes go to uv_err_name(). */
const char *gw_mcp_strerror(int code);

enum gw_mcp_era {
    GW_MCP_ERA_AUTO,   /* probe (opts); not decided yet (gw_mcp_client_era) */
    GW_MCP_ERA_LEGACY, /* initialize, 2025-11-25 and before */
    GW_MCP_ERA_MODERN, /* server/discover, 2026-07-28 */
};

enum gw_mcp_state {
    GW_MCP_NEW,          /* created, gw_mcp_client_start() not yet called */
    GW_MCP_INITIALIZING, /* initialize sent */
    GW_MCP_READY,        /* handshake done; requests allowed */
    GW_MCP_FAILED,       /* handshake failed; the owner should close */
    GW_MCP_DOWN,         /* the transport went down */
    GW_MCP_CLOSING,      /* gw_mcp_client_close() called */
};

/* The outcome of one request, passed to its callback exactly once. Every
 * pointer is borrowed and valid only during the callback (json_incref() or
 * strdup to keep). */
struct gw_mcp_reply {
    int code;            /* 0 or a GW_MCP_E_* code */
    json_t *result;      /* code 0: the JSON-RPC result (lists: the array) */
    const char *message; /* code != 0: a sentence for a person */
    json_t *error;       /* GW_MCP_E_RPC: the server's error, secrets masked; else NULL */
    size_t bytes;        /* code 0: the length of the server's message that
                          * carried the result, 0 when none did */
};

typedef void (*gw_mcp_reply_cb)(void *data, const struct gw_mcp_reply *reply);

/* Identifies an operation for gw_mcp_client_cancel(). Handles are never
 * reused within one client; 0 is never a valid handle. */
typedef uint64_t gw_mcp_handle;

struct gw_mcp_client_opts {
    /* Sends one JSON text (no trailing newline, never containing one); the
     * bytes are valid only during the call. Returns 0 or a negative code. */
    int (*send)(void *data, const char *msg, size_t len);
    /* The handshake succeeded. Arguments are borrowed from the client and
     * stay valid until it is closed (see the accessors below). */
    void (*on_ready)(void *data, const char *version, json_t *server_info, json_t *capabilities);
    /* The handshake failed (error answer, unsupported version, timeout,
     * transport down during it). The owner should close the client. */
    void (*on_failed)(void *data, int code, const char *why);
    /* notifications/tools/list_changed arrived. May be NULL. */
    void (*on_tools_changed)(void *data);
    /* Any other notification (progress, logging, other list_changed…);
     * `msg` is the whole message, borrowed. May be NULL. */
    void (*on_notification)(void *data, const char *method, json_t *msg);
    /* sampling/createMessage, elicitation/create or roots/list for the
     * owner. `origin` 0: the server sent it, `id` is the server's and the
     * request may belong to any call; else it is one of a 2026-07-28
     * input round, asked by the request whose handle is `origin` (and no
     * other), and `id` is the client's own, in a space apart from the
     * server's. `id` and `params` (an object or NULL) are borrowed. Return
     * 0 to answer later with gw_mcp_client_respond(), non-zero to have it
     * answered -32601 now. May be NULL (everything -32601). */
    int (*on_request)(void *data, const char *method, json_t *id, json_t *params,
                      gw_mcp_handle origin);
    /* The last call in flight (gw_mcp_client_request, _call_tool) ended;
     * runs after that call's callback. Lists and the handshake do not
     * count. May be NULL. */
    void (*on_idle)(void *data);
    void *data;
    const char *server_id;      /* for logs; copied */
    json_t *config;             /* sent as initialize params.config when non-NULL; borrowed */
    uint64_t init_timeout_ms;   /* 0: GW_MCP_DEFAULT_INIT_TIMEOUT_MS */
    const char *client_version; /* clientInfo.version; NULL: GW_VERSION */
    enum gw_mcp_era era;        /* what to speak; AUTO probes */
    /* Masks the server's secrets in what the client logs of the server's
     * own bytes (a sample of a dropped line, the parser's complaint) and
     * in its JSON-RPC errors (gw_mcp_reply.error and .message).
     * Taken in every case, even when gw_mcp_client_new fails. NULL:
     * nothing is masked. */
    struct gw_redact *redact;
    /* Its secrets as they are now (the tokens change with each refresh)
     * are masked too in the server's JSON-RPC errors. Borrowed: it
     * outlives the client. NULL: none. */
    const struct gw_oauth *oauth;
};

struct gw_mcp_client_stats {
    uint64_t non_json;              /* messages that were not JSON */
    uint64_t bad_shape;             /* JSON but not a valid JSON-RPC message */
    uint64_t unknown_ids;           /* responses to ids this client never sent */
    uint64_t duplicate_ids;         /* second responses to answered requests */
    uint64_t late;                  /* responses after a timeout or cancel */
    uint64_t notifications;         /* every notification received */
    uint64_t unknown_notifications; /* notifications of unknown methods */
    uint64_t server_requests;       /* server → client requests (all answered) */
    uint64_t log_suppressed;        /* warnings not logged by the rate limit */
    uint64_t in_flight;             /* requests currently awaiting an answer */
    uint64_t calls_in_flight;       /* of those, the owner's calls (on_idle) */
    uint64_t tool_calls;            /* tools/call sent */
};

struct gw_mcp_client;

/* Creates a client in state GW_MCP_NEW; nothing is sent yet. Copies what it
 * keeps from `opts` (server_id; config gets a reference). Returns 0 and sets
 * *out, or UV_EINVAL (no send function). */
int gw_mcp_client_new(uv_loop_t *loop, const struct gw_mcp_client_opts *opts,
                      struct gw_mcp_client **out);

/* Sends `initialize`. on_ready or on_failed follows, later (never from
 * inside this call). Returns 0, UV_EINVAL if already started, or the send
 * function's error. */
int gw_mcp_client_start(struct gw_mcp_client *c);

/* Feeds one incoming message (a JSON object or, from 2025-03-26 servers, an
 * array of them). Never fails: bad input is counted and logged. Callbacks
 * may run inside this call, and may close the client. */
void gw_mcp_client_receive(struct gw_mcp_client *c, const char *msg, size_t len);

/* The transport died: every request in flight fails at once with
 * GW_MCP_E_TRANSPORT (on_failed instead during the handshake), and later
 * requests fail with it. `why` may be NULL. */
void gw_mcp_client_transport_down(struct gw_mcp_client *c, const char *why);

/* The transport learnt that the request with JSON-RPC id `id` (borrowed;
 * one this client sent) did not run upstream (gw_transport_cbs.on_not_run):
 * that request fails now with GW_MCP_E_NOT_RUN and `why`; a page of a
 * list fails the whole list. Unknown or answered ids are ignored. */
void gw_mcp_client_not_run(struct gw_mcp_client *c, json_t *id, const char *why);

/* Sends a request. `params` is borrowed (NULL: none). timeout_ms 0 means no
 * timeout; on timeout the callback gets GW_MCP_E_TIMEOUT and the server
 * gets notifications/cancelled. `caps` (GW_MCP_CAP_*, with the log bits)
 * is what its caller can answer and take, declared to a 2026-07-28
 * server; such a request that may ask for input (tools/call, prompts/get,
 * resources/read) keeps a reference to `params` for its retry, so the
 * caller must not change them afterwards. Returns 0 (sets *handle
 * when non-NULL, the callback fires exactly once later), GW_MCP_E_NOT_READY,
 * GW_MCP_E_TRANSPORT, GW_MCP_E_CLOSED, UV_ENOBUFS, or the send function's
 * error. */
int gw_mcp_client_request(struct gw_mcp_client *c, const char *method, json_t *params,
                          uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                          gw_mcp_handle *handle, unsigned caps);

/* Sends a notification (no answer). Returns 0 or an error as above. */
int gw_mcp_client_notify(struct gw_mcp_client *c, const char *method, json_t *params);

/* Answers a server request taken by on_request, named by its `id` and
 * `origin` as given: exactly one of `result` and `error` (borrowed).
 * Returns 0, GW_MCP_E_TRANSPORT/_CLOSED/_NOT_READY (the answer is
 * dropped), or UV_EINVAL. */
int gw_mcp_client_respond(struct gw_mcp_client *c, json_t *id, gw_mcp_handle origin, json_t *result,
                          json_t *error);

/* `ping`; the result is {}. Same contract as gw_mcp_client_request(). */
int gw_mcp_client_ping(struct gw_mcp_client *c, uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                       gw_mcp_handle *handle);

/* `tools/call` with `arguments` (borrowed object; NULL: {}) and, when
 * `progress_token` is non-NULL (string or integer), params._meta.progressToken.
 * The callback gets the raw CallToolResult. Contract as gw_mcp_client_request. */
int gw_mcp_client_call_tool(struct gw_mcp_client *c, const char *name, json_t *arguments,
                            json_t *progress_token, uint64_t timeout_ms, gw_mcp_reply_cb cb,
                            void *data, gw_mcp_handle *handle, unsigned caps);

/* A paginated list (`tools/list`, `prompts/list`, `resources/list`, …):
 * follows nextCursor and collects every element of result[`key`] into one
 * array (reply.result). At most GW_MCP_MAX_LIST_PAGES pages and
 * GW_MCP_MAX_LIST_ITEMS elements (else GW_MCP_E_LIMIT); a page that is not
 * an object with a `key` array fails with GW_MCP_E_PROTOCOL. `timeout_ms`
 * applies to each page. One handle covers every page. */
int gw_mcp_client_list_all(struct gw_mcp_client *c, const char *method, const char *key,
                           uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                           gw_mcp_handle *handle);

/* gw_mcp_client_list_all(c, "tools/list", "tools", …). */
int gw_mcp_client_list_tools(struct gw_mcp_client *c, uint64_t timeout_ms, gw_mcp_reply_cb cb,
                             void *data, gw_mcp_handle *handle);

/* Cancels an operation in flight: sends notifications/cancelled {requestId,
 * reason} (reason may be NULL) and calls its callback with
 * GW_MCP_E_CANCELLED, before returning. A later answer is dropped and
 * counted as late. Returns 0 or UV_ENOENT (unknown or already finished). */
int gw_mcp_client_cancel(struct gw_mcp_client *c, gw_mcp_handle handle, const char *reason);

/* Fails everything in flight with GW_MCP_E_CLOSED (callbacks run inside
 * this call), then no callback fires again. The client is freed on a later
 * loop turn, once its timers are closed; `c` must not be used after this
 * call. Safe from inside any of the client's callbacks. */
void gw_mcp_client_close(struct gw_mcp_client *c);

enum gw_mcp_state gw_mcp_client_state(const struct gw_mcp_client *c);

/* From on_ready on: the negotiated version, serverInfo and capabilities
 * (borrowed, valid until close; kept after the transport goes down); NULL
 * before the handshake succeeded. */
const char *gw_mcp_client_version(const struct gw_mcp_client *c);

/* How the client's CLIENT spans describe the peer (mcp_client_trace.c):
 * network.transport ("pipe", "tcp"; static), server.address and
 * server.port from `url` (NULL: none), mcpgw.instance, and mcp.session.id
 * as a digest of what `session` (may be NULL) answers for the client's
 * data when a span starts: the upstream's session id, NULL while none. */
void gw_mcp_client_trace_peer(struct gw_mcp_client *c, const char *transport, const char *url,
                              uint64_t instance, const char *(*session)(void *data));
json_t *gw_mcp_client_server_info(const struct gw_mcp_client *c);
json_t *gw_mcp_client_capabilities(const struct gw_mcp_client *c);

void gw_mcp_client_stats(const struct gw_mcp_client *c, struct gw_mcp_client_stats *out);

/* The revision spoken: AUTO until the handshake decided it. */
enum gw_mcp_era gw_mcp_client_era(const struct gw_mcp_client *c);

/* True while an AUTO probe (server/discover) awaits its answer: a
 * transport that dies now may be a 2025-era server that exits on any
 * request before initialize (servers on the Rust SDK do). */
bool gw_mcp_client_probing(const struct gw_mcp_client *c);

/* The owner's calls awaiting an answer (stats' calls_in_flight). */
unsigned gw_mcp_client_calls_in_flight(const struct gw_mcp_client *c);

#endif
