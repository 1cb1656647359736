/* Servers: the runtime of every configured server — its instances, its
 * discovery, its leases, its state and restarts — the merged catalog they
 * feed, and the calls routed to them.
 *
 * The daemon hands each loaded config snapshot to gw_servers_apply(); a
 * server holds a reference to the snapshot its config lives in. Discovery
 * (initialize, tools/list) commits a server's toolset into the catalog;
 * nothing else writes the catalog. Problems about a server are keyed
 * "server:<id>:…" and cleared when the cause goes away.
 *
 * Leasing (design §6, seed 000): a `truely-stateless: true` server has one
 * shared instance. Any other server gives each dialog its own instance on
 * its first call (a warm spare when one is ready, else a new spawn, within
 * gateway.max_instances_per_server); later calls of that dialog reuse it
 * until it is released (mcp_release, the release route, or
 * lease_idle_timeout). The instance that did discovery is the first spare.
 *
 * Call policy (seed 004): at most gateway.max_concurrent calls in flight in
 * all, and a tool's policy max_instances calls of that tool at once. A call
 * over a limit waits in one FIFO queue (bounded) until a slot frees or its
 * timeout passes; then it gets GW_SERVERS_E_LIMIT (429). */
#ifndef GW_SERVERS_H
#define GW_SERVERS_H

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

#include "gw/catalog.h"
#include "gw/catalog_extra.h"
#include "gw/config.h"
#include "gw/curl_uv.h"
#include "gw/mcp_client.h"
#include "gw/problems.h"

/* Error codes beside GW_MCP_E_*. */
enum {
    GW_SERVERS_E_NO_TOOL = -5201,     /* 404: no such tool */
    GW_SERVERS_E_NOT_READY = -5202,   /* 503: no ready instance */
    GW_SERVERS_E_NEED_DIALOG = -5203, /* 400: a leased server's tool needs a dialog */
    GW_SERVERS_E_LIMIT = -5204,       /* 429: a concurrency limit stayed full */
    GW_SERVERS_E_SPAWN = -5205,       /* 502: the lease's instance failed to start */
    GW_SERVERS_E_RELEASED = -5206,    /* 409: released or removed while waiting */
    GW_SERVERS_E_UNSUPPORTED = -5207, /* the upstream did not declare what the request needs */
    GW_SERVERS_E_SUBS_FULL = -5208,   /* a subscription limit (subscriptions.h) is reached */
};

struct gw_servers;
struct gw_call;
struct gw_subscriber;

struct gw_servers_cbs {
    /* Every server has finished its first attempt (ready or failed). */
    void (*on_settled)(void *data);
    /* A `required: true` server could not be made ready (seed 004): startup
     * must fail. `why` names the server and the cause. */
    void (*on_required_failed)(void *data, const char *why);
    /* Something changed: type "catalog", "server", "lease", "prompts" or
     * "resources" (the served prompts / resources or templates); `payload` is
     * a new reference the callee takes. May be NULL. */
    void (*on_event)(void *data, const char *type, json_t *payload);
    void *data;
};

/* `multi` (may be NULL: HTTP servers then fail to start) carries every
 * HTTP upstream; it must outlive the servers (close it after
 * gw_servers_close's callback). */
struct gw_servers *gw_servers_new(uv_loop_t *loop, struct gw_curl_uv *multi,
                                  struct gw_problems *problems, const struct gw_servers_cbs *cbs);

/* Starts, keeps or stops servers to match `config` (an ok snapshot; a
 * reference is taken), design §8:
 *   - a server whose spawn hash is unchanged keeps its instances and
 *     leases; when only its catalog hash changed, its catalog is derived
 *     again from the last listing, in place;
 *   - a server whose spawn inputs changed and that is serving gets a
 *     replacement prepared beside it (spawned, initialized, listed,
 *     derived); only when that succeeds is it swapped in, and the old
 *     instances drain and stop; if it fails, the old one keeps serving (last
 *     known good) and a Problem says why; a replacement already being
 *     prepared for the same spawn inputs goes on (a reload of an unchanged
 *     file does not start it again);
 *   - a server whose new configuration has errors keeps running on its old
 *     one (last known good); a removed server is stopped.
 * Dialogs that held leases on a replaced server get lease.restarted on
 * their next call. Returns {"added":[],"removed":[],"changed":[],
 * "refused":[],"unchanged":[]} (server ids). New reference. */
json_t *gw_servers_apply(struct gw_servers *s, struct gw_config *config);

/* Stops every instance (draining in-flight calls for up to `grace_ms`, then
 * killing) and calls `cb` once all are closed; then frees `s`. */
void gw_servers_close(struct gw_servers *s, uint64_t grace_ms, void (*cb)(void *data), void *data);

bool gw_servers_settled(const struct gw_servers *s);
struct gw_catalog *gw_servers_catalog(struct gw_servers *s);

/* GET /v1/servers and GET /v1/dialogs bodies. New references. */
json_t *gw_servers_json(const struct gw_servers *s);
json_t *gw_servers_dialogs_json(const struct gw_servers *s);

/* What the caller of a call can take from the upstream while it runs
 * (design §9). A call without hooks (REST) has progress and log
 * notifications dropped and counted, and server requests refused at once. */
#define GW_CLIENT_CAP_SAMPLING    1u
#define GW_CLIENT_CAP_ELICITATION 2u

/* A sampling/createMessage or elicitation/create from the upstream, relayed
 * to the caller. Owned by the servers module until gw_servers_answer() or
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
     * declared (client_caps). `params` is borrowed. Return 0 to answer later
     * with gw_servers_answer(); non-zero refuses it (the upstream gets a
     * JSON-RPC error at once). */
    int (*on_request)(void *data, struct gw_server_request *sr, const char *method, json_t *params);
    /* `sr` is gone before it was answered (the call ended first): forget it.
     * Fires before the call's outcome. */
    void (*on_request_gone)(void *data, struct gw_server_request *sr);
};

struct gw_call_request {
    const char *tool;    /* final name */
    const char *dialog;  /* canonical dialog id, or NULL */
    json_t *arguments;   /* borrowed object */
    uint64_t timeout_ms; /* 0: tool policy, else server, else gateway */
    /* The caller's params._meta.progressToken (string or integer,
     * borrowed), or NULL. The upstream gets a token of the gateway's own,
     * unique per daemon, and its progress comes back with this one. */
    json_t *progress_token;
    const struct gw_call_hooks *hooks; /* NULL: see gw_call_hooks */
    void *hooks_data;
    unsigned client_caps; /* GW_CLIENT_CAP_* the caller declared */
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
};

typedef void (*gw_call_cb)(void *data, const struct gw_call_outcome *o);

/* A call's outcome code as a metrics label ("limit", "released", …, or the
 * MCP client's word for its own codes), the same for every front end. */
const char *gw_servers_status_label(int code);

/* Routes a call. Returns 0 and the callback fires exactly once later (*out,
 * when non-NULL, stays valid until then); or returns GW_SERVERS_E_NO_TOOL,
 * _NEED_DIALOG, _NOT_READY or _LIMIT at once, with no callback. */
int gw_servers_call(struct gw_servers *s, const struct gw_call_request *r, gw_call_cb cb,
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
    json_t *params; /* borrowed object */
    const char *dialog;
    uint64_t timeout_ms;              /* 0: server, else gateway request timeout */
    struct gw_subscriber *subscriber; /* resources/subscribe only */
};

/* Same contract as gw_servers_call; GW_SERVERS_E_NO_TOOL means nothing
 * offers what the request names (or the method is not routable), and
 * GW_SERVERS_E_SUBS_FULL that the subscriber holds GW_SUBS_PER_SUBSCRIBER
 * subscriptions. The outcome's `tool` is the ORIGINAL prompt name or the
 * URI. */
int gw_servers_request(struct gw_servers *s, const struct gw_route_request *r, gw_call_cb cb,
                       void *data, struct gw_call **out);

/* Answers a relayed server request with exactly one of `result` and
 * `error` (borrowed), sent upstream under the upstream's own id; frees
 * `sr`. */
void gw_servers_answer(struct gw_server_request *sr, json_t *result, json_t *error);

/* The served prompts, resources or templates (catalog_extra.h kinds): for
 * /mcp (`rest` false: MCP objects) or REST (`rest` true: with "server" and,
 * for prompts, "originalName"). New reference. */
json_t *gw_servers_extras_json(const struct gw_servers *s, enum gw_extra_kind kind, bool rest);
bool gw_servers_offers(const struct gw_servers *s, enum gw_extra_kind kind);
/* The protocol extensions the servers declare (capabilities.extensions of
 * their instances, e.g. MCP Apps' "io.modelcontextprotocol/ui"), for /mcp's
 * own capabilities: a key declared by several keeps the first server's
 * value, in file order. New reference. */
json_t *gw_servers_extensions(const struct gw_servers *s);
/* +1 on every change of the served prompts or resources. */
uint64_t gw_servers_extras_version(const struct gw_servers *s);

/* Progress and log notifications dropped (no hooks, unknown token), and
 * server requests refused, since start. */
struct gw_relay_stats {
    uint64_t progress_relayed, progress_dropped;
    uint64_t requests_relayed, requests_refused;
};
void gw_servers_relay_stats(const struct gw_servers *s, struct gw_relay_stats *out);

/* A client that hung up: cancels the call (notifications/cancelled upstream
 * when it was sent); the callback fires inside with GW_MCP_E_CANCELLED. */
void gw_servers_cancel(struct gw_call *call, const char *reason);

/* Releases `dialog`'s lease on `server` (NULL: every lease of the dialog).
 * Appends the released server ids to `released` (a JSON array). Returns 0,
 * or UV_ENOENT when `server` names no configured server. */
int gw_servers_release(struct gw_servers *s, const char *dialog, const char *server,
                       json_t *released);

/* Tool calls sent upstream and not yet answered, in all. */
unsigned gw_servers_in_flight(const struct gw_servers *s);

/* Does the dialog hold any lease? */
bool gw_servers_dialog_known(const struct gw_servers *s, const char *dialog);

#endif
