/* Servers: the runtime of every configured server — its instances, its
 * discovery, its leases, its state and restarts — and the merged catalog
 * they feed. Calls are routed to them by dispatch (dispatch.h).
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
 */
#ifndef GW_SERVERS_H
#define GW_SERVERS_H

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

#include "gw/errors.h"
#include "gw/catalog.h"
#include "gw/catalog_prompts_resources.h"
#include "gw/config.h"
#include "gw/curl_uv.h"
#include "gw/instance.h"
#include "gw/mcp_client.h"
#include "gw/problems.h"

/* Error codes beside GW_MCP_E_*. */
enum {
    GW_SERVERS_E_NO_TOOL = GW_E_SERVERS_BASE - 1,   /* 404: no such tool */
    GW_SERVERS_E_NOT_READY = GW_E_SERVERS_BASE - 2, /* 503: no ready instance */
    GW_SERVERS_E_NEED_DIALOG =
        GW_E_SERVERS_BASE - 3,                     /* 400: a leased server's tool needs a dialog */
    GW_SERVERS_E_LIMIT = GW_E_SERVERS_BASE - 4,    /* 429: a concurrency limit stayed full */
    GW_SERVERS_E_SPAWN = GW_E_SERVERS_BASE - 5,    /* 502: the lease's instance failed to start */
    GW_SERVERS_E_RELEASED = GW_E_SERVERS_BASE - 6, /* 409: released or removed while waiting */
    GW_SERVERS_E_UNSUPPORTED =
        GW_E_SERVERS_BASE - 7, /* the upstream did not declare what the request needs */
    GW_SERVERS_E_SUBS_FULL =
        GW_E_SERVERS_BASE - 8, /* a subscription limit (subscriptions.h) is reached */
    GW_SERVERS_E_ROUNDS_FULL =
        GW_E_SERVERS_BASE - 9, /* 429: the input round caps (input_rounds.h) are reached */
    GW_SERVERS_E_AUTHORIZATION =
        GW_E_SERVERS_BASE - 10, /* 503: the server's OAuth grant stopped working */
    GW_SERVERS_E_RATE_LIMITED =
        GW_E_SERVERS_BASE - 11, /* 429: the client's rate or max_concurrent (issue 35) */
    GW_SERVERS_E_AUDIT = GW_E_SERVERS_BASE - 12, /* 503: gateway.audit.required and it fails */
};

struct gw_servers;
struct gw_call;
struct gw_subscriber;

/* What changed in the server set, as it is told to the daemon (which
 * hands it to /mcp and to GET /v1/events). Strings are borrowed for the
 * callback's duration. */
enum gw_servers_event_kind {
    GW_EV_SERVER,    /* a server's state: server, state, last_error */
    GW_EV_CATALOG,   /* the tool catalog: version, change, server (NULL for
                      * a change of gateway.reserved_tool_names) */
    GW_EV_LEASE,     /* dialog, server, action; acquired: instance, warm;
                      * released and lost: reason */
    GW_EV_PROMPTS,   /* the served prompts: version, server */
    GW_EV_RESOURCES, /* the served resources or templates: version, server */
};

struct gw_servers_event {
    enum gw_servers_event_kind kind;
    const char *server;
    const char *state;
    const char *last_error; /* may be NULL */
    uint64_t version;
    const char *change;
    const char *dialog;
    const char *action;
    const char *reason; /* may be NULL */
    uint64_t instance;
    bool warm;
};

/* The event's name on GET /v1/events ("server", "catalog", …). */
const char *gw_servers_event_name(enum gw_servers_event_kind kind);
/* The event's data on GET /v1/events (docs/api.md, "Events"). New
 * reference. */
json_t *gw_servers_event_json(const struct gw_servers_event *ev);

struct gw_servers_cbs {
    /* Every server has finished its first attempt (ready or failed). */
    void (*on_settled)(void *data);
    /* A `required: true` server could not be made ready (seed 004): startup
     * must fail. `why` names the server and the cause. */
    void (*on_required_failed)(void *data, const char *why);
    /* Something changed. May be NULL. */
    void (*on_event)(void *data, const struct gw_servers_event *ev);
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
/* The search index over the catalog (gw/toolsearch.h); it syncs itself at
 * each query. */
struct gw_toolsearch;
struct gw_toolsearch *gw_servers_toolsearch(struct gw_servers *s);

/* gateway.tool_search for /mcp (servers_toolsearch.c). Whether it is
 * enabled, with its max_results. */
bool gw_servers_tool_search(const struct gw_servers *s, int *max_results);
/* A dialog's tools/list when it is (MCP wire format, catalog order): the
 * built-in tools, always_loaded and what `dialog` (NULL: none) activated.
 * New reference. */
json_t *gw_servers_ts_listing(struct gw_servers *s, const char *dialog);
/* Activates the tool for the dialog (a tool always listed is not
 * activated); 1 when its tools/list changed. Renews the dialog's use. */
int gw_servers_ts_activate(struct gw_servers *s, const char *dialog, const char *name);
/* Deactivates `name` (NULL: all); returns how many went. */
size_t gw_servers_ts_forget(struct gw_servers *s, const char *dialog, const char *name);
/* The dialog's activated names (new array), or NULL when none. */
json_t *gw_servers_ts_active(const struct gw_servers *s, const char *dialog);

/* One server's figures for /metrics. */
struct gw_server_stats {
    const char *id; /* borrowed: valid until the next gw_servers_apply */
    unsigned leases;
    unsigned restarts;
    uint64_t net_allowed, net_denied;        /* its sandboxes' proxies' destinations */
    bool needs_authorization;                /* state needs_authorization (OAuth) */
    unsigned instances[GW_INSTANCE_NSTATES]; /* by enum gw_instance_state */
};

/* Fills `out` with the figures of up to `cap` servers, in file order, and
 * returns how many servers there are. */
size_t gw_servers_stats(const struct gw_servers *s, struct gw_server_stats *out, size_t cap);

/* ---- OAuth (servers_oauth.c) ----
 * An HTTP or SSE server whose instance fails after a 401 with a Bearer
 * challenge goes to state needs_authorization: no restart, a Problem and
 * an event saying where to authorize, counted as started by /readyz. */

/* "http://<listen>" as the daemon listens (copied); the authorize URL and
 * the default redirect_uri are built on it. */
void gw_servers_set_base_url(struct gw_servers *s, const char *url);

/* The OAuth client of server `id`, or NULL (no such server, not HTTP or
 * SSE, or never started). */
struct gw_oauth *gw_servers_oauth(struct gw_servers *s, const char *id);

/* The id of the server whose pending authorization has the `state` in
 * this query, or NULL. Borrowed until the next reload. */
const char *gw_servers_oauth_state_owner(struct gw_servers *s, const char *query);

/* For a call to server `id` that failed with GW_SERVERS_E_AUTHORIZATION
 * (it is in needs_authorization, or its last word was a challenge): a sentence saying what to do
 * (heap) and in *url the authorize URL (heap), or NULL when none is offered. NULL (and *url NULL)
 * for a server that does not need authorization. */
char *gw_servers_authorization(struct gw_servers *s, const char *id, char **url);

/* Server `id` now holds a grant: a server in needs_authorization starts
 * (state starting, then its tools appear). */
void gw_servers_authorized(struct gw_servers *s, const char *id);

/* An authorization of server `id` came back and failed (refused by the
 * person or the authorization server, a bad code): a server still waiting
 * for one says why in its lastError and Problem, with the link to try again,
 * so whoever waits on it (`mcpgw auth login`, the page) hears of it. */
void gw_servers_authorization_failed(struct gw_servers *s, const char *id, const char *why);

/* Server `id`'s grant was forgotten (DELETE): its leases end, its
 * instances stop (their calls fail) and it waits in needs_authorization
 * rather than meeting the 401 on its next request. */
void gw_servers_signed_out(struct gw_servers *s, const char *id);

/* GET /v1/servers and GET /v1/dialogs bodies. New references. */
json_t *gw_servers_json(const struct gw_servers *s);
json_t *gw_servers_dialogs_json(const struct gw_servers *s);

/* The served prompts, resources or templates (catalog_prompts_resources.h kinds): for
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

/* Since start: upstream progress notifications relayed to their caller or
 * dropped (no caller listens, unknown token), and upstream requests
 * (sampling, elicitation, roots) relayed or refused. /metrics shows them
 * (gw_dispatch_relay_stats). */
struct gw_relay_stats {
    uint64_t progress_relayed, progress_dropped;
    uint64_t requests_relayed, requests_refused;
};

/* Releases `dialog`'s lease on `server` (NULL: every lease of the dialog).
 * Appends the released server ids to `released` (a JSON array). Returns 0,
 * or UV_ENOENT when `server` names no configured server. */
int gw_servers_release(struct gw_servers *s, const char *dialog, const char *server,
                       json_t *released);

/* Does the dialog hold any lease, or any tool search activation? */
bool gw_servers_dialog_known(const struct gw_servers *s, const char *dialog);

#endif
