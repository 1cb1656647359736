/* Dispatch: a call from a front end (REST or /mcp) to an upstream
 * instance, through the lease of its dialog and the call policy, and its
 * outcome back to the caller exactly once; and the one table that says
 * what each outcome code means to a caller.
 *
 * Call policy (seed 004): at most gateway.max_concurrent calls in flight in
 * all, and a tool's policy max_instances calls of that tool at once. A call
 * over a limit waits in one FIFO queue (bounded) until a slot frees or its
 * timeout passes; then it gets GW_SERVERS_E_LIMIT (429). */
#ifndef GW_DISPATCH_H
#define GW_DISPATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "gw/mcp_client.h"
#include "gw/servers.h"

/* Makes dispatch the taker of the server set's readiness and failures
 * (once, after gw_servers_new): before, no call can be made. */
void gw_dispatch_attach(struct gw_servers *s);

/* What the caller of a call can take from the upstream while it runs
 * (design §9). A call without hooks has progress and log notifications
 * dropped and counted, and server requests refused at once. */
#define GW_CLIENT_CAP_SAMPLING    GW_MCP_CAP_SAMPLING
#define GW_CLIENT_CAP_ELICITATION GW_MCP_CAP_ELICITATION
#define GW_CLIENT_CAP_ROOTS       GW_MCP_CAP_ROOTS

/* A sampling/createMessage, elicitation/create or roots/list from the
 * upstream, relayed to the caller. Owned by the servers module until gw_dispatch_answer() or
 * on_request_gone (the call ended, the instance died); never freed by the
 * caller. */
struct gw_server_request;

struct gw_call_hooks {
    /* notifications/progress for this call; params.progressToken is already
     * the caller's token. `params` is borrowed. */
    void (*on_progress)(void *data, json_t *params);
    /* notifications/message while this call is the instance's only one in
     * flight. May be NULL. */
    void (*on_log)(void *data, json_t *params);
    /* A server request this call caused and whose capability the caller
     * declared (client_caps). `params` is borrowed (NULL when the request
     * had none). Return 0 to answer later
     * with gw_dispatch_answer(); non-zero refuses it (the upstream gets a
     * JSON-RPC error at once). */
    int (*on_request)(void *data, struct gw_server_request *sr, const char *method, json_t *params);
    /* `sr` is gone before it was answered (the call ended first): forget it.
     * Fires before the call's outcome. */
    void (*on_request_gone)(void *data, struct gw_server_request *sr);
};

struct gw_call_request {
    const char *tool;  /* final name */
    const char *front; /* "rest", "mcp-2025-11-25" or "mcp-2026-07-28" (static): the audit's */
    /* The caller's client (gw/policy.h): a tool it may not use is no
     * tool (GW_SERVERS_E_NO_TOOL), decided against the newest config. */
    const char *client;
    const char *dialog;  /* canonical dialog id, or NULL */
    json_t *arguments;   /* borrowed object */
    uint64_t timeout_ms; /* 0: tool policy, else server, else gateway */
    /* The caller's params._meta.progressToken (string or integer,
     * borrowed), or NULL. The upstream gets a token of the gateway's own,
     * unique per daemon, and its progress comes back with this one. */
    json_t *progress_token;
    const struct gw_call_hooks *hooks; /* NULL: see gw_call_hooks */
    void *hooks_data;
    unsigned client_caps;  /* GW_CLIENT_CAP_* the caller declared */
    const char *log_level; /* the MCP log level the caller takes, or NULL for none */
    /* Input responses the caller gave before being asked (borrowed object,
     * or NULL): input_rounds answers a server request named by one of its
     * keys with it (input_rounds.h). Dispatch ignores it. */
    json_t *input_responses;
};

/* What a call came to. Pointers are borrowed for the callback's duration. */
struct gw_call_outcome {
    int code;            /* 0, GW_MCP_E_* or GW_SERVERS_E_* */
    json_t *result;      /* code 0: the CallToolResult (or the request's result) */
    json_t *error;       /* code GW_MCP_E_RPC: the upstream's JSON-RPC error object */
    const char *message; /* code != 0: a sentence */
    json_t *lease;       /* {"serverId","instance","reminder"?,"restarted"?} or NULL */
    const char *server;  /* server id */
    const char *tool;    /* ORIGINAL tool name */
    const char *dialog;  /* canonical dialog, or NULL */
    /* GW_CLIENT_CAP_* of server requests the call caused that were refused
     * because the caller had not declared them: the upstream needed them
     * (a 2026-07-28 front answers -32021 naming them). */
    unsigned missing_caps;
};

typedef void (*gw_call_cb)(void *data, const struct gw_call_outcome *o);

/* Routes a call. Returns 0 and the callback fires exactly once later (*out,
 * when non-NULL, stays valid until then); or returns GW_SERVERS_E_NO_TOOL,
 * _NEED_DIALOG, _NOT_READY or _LIMIT at once, with no callback. */
/* The audit log the calls are written to (gw/audit.h; NULL: none). */
struct gw_audit;
void gw_dispatch_set_audit(struct gw_servers *s, struct gw_audit *a);

int gw_dispatch_call(struct gw_servers *s, const struct gw_call_request *r, gw_call_cb cb,
                     void *data, struct gw_call **out);

/* A request routed to the server that offers what it names (design §5):
 * prompts/get by final prompt name (sent with the ORIGINAL name),
 * resources/read and resources/subscribe by URI (a listed URI, else a
 * matching template), completion/complete by params.ref (a prompt or a
 * resource template). It goes through the same leases and limits as a tool
 * call: a leased server needs a dialog and uses the dialog's instance.
 * resources/subscribe needs a subscriber (subscriptions.h): it fails with
 * GW_SERVERS_E_UNSUPPORTED when the instance did not declare
 * resources.subscribe, and on success the subscription is recorded before
 * the outcome fires. */
struct gw_route_request {
    const char *method;
    const char *client; /* as gw_call_request's: its servers only */
    json_t *params;     /* borrowed object */
    const char *dialog;
    uint64_t timeout_ms;              /* 0: server, else gateway request timeout */
    struct gw_subscriber *subscriber; /* resources/subscribe only */
    /* As gw_call_request's: who answers the server requests it causes. */
    const struct gw_call_hooks *hooks;
    void *hooks_data;
    unsigned client_caps;
    const char *log_level;
};

/* Same contract as gw_dispatch_call; GW_SERVERS_E_NO_TOOL means nothing
 * offers what the request names (or the method is not routable), and
 * GW_SERVERS_E_SUBS_FULL that the subscriber holds GW_SUBS_PER_SUBSCRIBER
 * subscriptions. The outcome's `tool` is the ORIGINAL prompt name or the
 * URI. */
int gw_dispatch_request(struct gw_servers *s, const struct gw_route_request *r, gw_call_cb cb,
                        void *data, struct gw_call **out);

/* Answers a relayed server request with exactly one of `result` and
 * `error` (borrowed), sent upstream under the upstream's own id; frees
 * `sr`. */
void gw_dispatch_answer(struct gw_server_request *sr, json_t *result, json_t *error);

/* A client that hung up: cancels the call (notifications/cancelled upstream
 * when it was sent); the callback fires inside with GW_MCP_E_CANCELLED. */
void gw_dispatch_cancel(struct gw_call *call, const char *reason);

/* The call's caller was asked for input and the call waits for its
 * answer (an input round is parked, input_rounds.h). While parked a call
 * that was sent holds no concurrency slot (gateway.max_concurrent, its
 * tool's max_instances): calls queued behind the limit take it. Unparked
 * (the caller answered), it takes its slot back at once, over the limit
 * if need be: it was admitted when it was sent, and its upstream waits
 * for the answers it is about to get. */
void gw_dispatch_park(struct gw_call *call, bool parked);

/* What an outcome code means to a caller: the one table both front ends
 * answer from. */
struct gw_dispatch_error {
    int http_status;       /* REST */
    const char *rest_code; /* REST "error.code" (docs/api.md) */
    int rpc_code;          /* /mcp: the JSON-RPC error code; 0 when a tool call that
                            * fails so is answered with an isError result instead
                            * (a failure on the way to a tool that exists) */
    const char *label;     /* metrics and logs "status" */
    const char *sentence;  /* for people: a REST message, an /mcp tool error */
    bool retry;            /* REST answers with Retry-After: 1 */
};

/* The row of `code` (0, GW_SERVERS_E_*, GW_MCP_E_* or a libuv code); a
 * code without a row is an upstream failure labelled with its name. */
struct gw_dispatch_error gw_dispatch_error(int code);

/* A call's timeout: the caller's, else the tool's policy, else the
 * server's, else the gateway's (0 means not set). */
uint64_t gw_dispatch_timeout(uint64_t asked, uint64_t policy, uint64_t server, uint64_t gateway);

/* Tool calls sent upstream and not yet answered, in all: dispatch counts
 * them on the server set. */
unsigned gw_servers_in_flight(const struct gw_servers *s);

/* The relays' counters (struct gw_relay_stats, servers.h) since start. */
void gw_dispatch_relay_stats(const struct gw_servers *s, struct gw_relay_stats *out);

#endif
