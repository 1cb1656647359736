/* The supervisor's insides: shared by its files (servers.c: server
 * runtimes and instances; servers_discovery.c, servers_leases.c — the
 * slot source of the lease tables —, servers_reload.c, servers_prompts_resources.c)
 * and by the layer above, dispatch (dispatch_internal.h), which queues
 * its calls on the supervisor's servers, leases and slots. The supervisor
 * knows a call only as a pointer in those lists.
 *
 * Ownership:
 *   gw_servers ─┬─ servers (list, config order) ─┬─ slots (list): one per live instance
 *               │                                └─ leases (gw_leases, lease.c) → slot
 *               ├─ dying servers (list): removed, instances still closing
 *               └─ queue: calls waiting for a concurrency slot
 * A slot is freed when its instance has closed; a server when it is removed,
 * has no slot left and its timer has closed. A call is freed in its timer's
 * close callback, after its outcome was delivered. */
#ifndef GW_SERVERS_INTERNAL_H
#define GW_SERVERS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "gw/instance.h"
#include "gw/lease.h"
#include "gw/servers.h"

enum server_state {
    SRV_STARTING,
    SRV_READY,
    SRV_DEGRADED,
    SRV_FAILED,
    SRV_STOPPED,
    SRV_NEEDS_AUTH, /* answered 401 with a Bearer challenge: waits for authorization */
};

enum slot_role {
    ROLE_DISCOVERY, /* the first instance: lists the tools, then becomes a spare */
    ROLE_SPARE,     /* ready (or starting) and never called */
    ROLE_SHARED,    /* the one instance of a truely-stateless server */
    ROLE_LEASED,    /* a dialog's own instance */
    ROLE_RETIRED,   /* released, failed or replaced: draining and stopping */
};

struct gw_call;
struct gw_sub_topic;

struct slot {
    struct server *srv;
    struct slot *next;
    struct gw_instance *inst;
    enum slot_role role;
    bool ready;
    struct lease *lease;         /* ROLE_LEASED */
    struct gw_call *sent;        /* calls sent on this instance and not answered */
    struct gw_sub_topic *topics; /* URIs subscribed on this instance (subscriptions.c) */
    unsigned ntopics;
};

struct server {
    struct gw_servers *owner;
    struct server *next;
    struct gw_config *snap; /* reference; cfg points into it */
    const struct gw_server_config *cfg;
    enum server_state state;
    struct slot *slots;
    struct gw_leases leases;
    struct gw_call *waiting; /* calls retried after a lost session, waiting for the
                                shared instance to be back (truely-stateless) */
    uint64_t seq;
    uint64_t backoff_ms;
    uint64_t ready_at_ms;
    uv_timer_t timer; /* restart / spare top-up backoff */
    bool first_done;
    bool removed;
    struct server *replaces; /* a pending replacement: the server it will replace */
    bool listing, relist;
    unsigned extra_listing; /* prompts/resources lists in flight (bits by kind) */
    json_t *extensions;     /* capabilities.extensions of its last ready instance */
    unsigned extra_relist;  /* kinds to list again when those finish */
    bool timer_closed;
    /* The revision its server speaks, learnt by the first instance that
     * got ready (AUTO: not yet): later instances do not probe. A new
     * spawn hash is a new server, so the verdict goes with the old. */
    enum gw_mcp_era era;
    unsigned restarts;
    /* Its sandboxes' proxies: destinations allowed and refused, and the
     * refusals shown as Problems (at most GW_SANDBOX_NET_PROBLEMS). */
    uint64_t net_allowed, net_denied;
    unsigned net_problems;
    char *last_error;
    struct gw_oauth *oauth; /* HTTP and SSE servers: made at their first spawn (servers_oauth.c) */
    bool oauth_refreshed;   /* a refresh since it was last ready: a second 401 needs a person */
    json_t *stderr_tail;
    time_t loaded_at;
};

/* An upstream notification's handler, by method (gw_servers_route). */
typedef void (*gw_notify_fn)(struct slot *slot, const char *method, json_t *params);

struct gw_notify_route {
    const char *method;
    gw_notify_fn fn;
};

/* Room for the registrations: relay (progress, log), subscriptions
 * (resources/updated), extras (two list_changed). */
#define GW_NOTIFY_ROUTES_MAX 8

#define GW_TOOL_LOAD_BUCKETS 64

struct gw_tool_load {
    struct gw_tool_load *next;
    uint64_t hash;
    int n;
    char name[]; /* final tool name */
};

struct gw_servers {
    uv_loop_t *loop;
    const struct gw_slot_hooks *hooks; /* dispatch's; never NULL */
    struct gw_notify_route routes[GW_NOTIFY_ROUTES_MAX];
    size_t nroutes;
    struct gw_curl_uv *multi; /* shared by every HTTP instance; the daemon's */
    struct gw_problems *problems;
    struct gw_catalog *catalog;
    struct gw_toolsearch *search; /* follows `catalog` (toolsearch.h) */
    struct gw_ts_active *active;  /* /mcp's activations per dialog (servers_toolsearch.c) */
    uv_check_t ts_check;          /* steps `search` after each loop turn (servers_toolsearch.c) */
    uv_idle_t ts_idle;            /* keeps the loop turning while a step is left */
    struct gw_policy_limits *limits; /* each client's bucket and calls in flight (policy.c) */
    struct gw_audit *audit; /* the audit log (dispatch's, gw_dispatch_set_audit), or NULL */
    struct gw_servers_cbs cbs;
    struct server *head;
    struct server *pending; /* replacements being prepared (reload) */
    struct server *dying;
    bool settled_told;
    bool closing;
    uv_timer_t grace;
    uv_timer_t sweep; /* lease_idle_timeout */
    int timers_open;  /* while closing */
    void (*close_cb)(void *data);
    void *close_data;
    /* Call policy. */
    struct gw_config *config;           /* reference: the newest snapshot */
    const struct gw_gateway_config *gw; /* points into config */
    unsigned in_flight;
    /* Calls in flight per tool with a max_instances limit: a count per
     * final name, in buckets by hash (an entry goes when it reaches 0). */
    struct gw_tool_load *tool_loads[GW_TOOL_LOAD_BUCKETS];
    struct gw_call *queue_head, *queue_tail;
    unsigned queued;
    bool entering; /* inside gw_dispatch_call: outcomes are deferred */
    /* Prompts and resources (servers_prompts_resources.c). */
    struct gw_extras *extras;
    char *base_url; /* "http://<listen>" for the authorize and callback URLs; NULL: unknown */
    uint64_t extras_version;
    /* Relays (dispatch_relay.c; counted by the supervisor for its /metrics). */
    uint64_t next_token;
    struct gw_relay_stats relay;
    /* Subscriptions (subscriptions.c): one number per updated
     * notification, so that a subscriber hears it once. */
    uint64_t subs_round;
};

/* servers.c, for servers_discovery.c, servers_leases.c, servers_reload.c:
 * the supervisor's own steps. */
void gw_server_emit(struct gw_servers *s, const struct gw_servers_event *ev);
void gw_server_set_state(struct server *srv, enum server_state st);
/* A catalog event if the version moved past `before`. */
void gw_server_catalog_event(struct server *srv, uint64_t before, const char *change);
/* Problem "server:<id>:<what>[:<tool>]"; cleared by prefix. */
void gw_server_problem(struct server *srv, const char *what, enum gw_severity sev, const char *tool,
                       const char *message);
void gw_server_clear_problems(struct server *srv, const char *what);
/* servers_sandbox.c: the warning of a sandboxed server that runs without
 * one (raised or cleared before each spawn), and S.sandbox. */
void gw_server_sandbox_check(struct server *srv);
json_t *gw_server_sandbox_json(const struct server *srv);
/* An instance's proxy allowed or refused a destination (gw_instance_cbs's
 * on_netcheck, `data` the slot): counted, a refusal a warning naming the
 * line to add. */
void gw_server_sandbox_netcheck(struct gw_instance *inst, const char *entry, bool allowed,
                                const char *why, void *data);
void gw_server_set_error(struct server *srv, const char *why);
/* servers_oauth.c: the server's OAuth client for a new instance (made on
 * the first spawn of an HTTP or SSE server; NULL for others), and the
 * failure of an instance that met a Bearer challenge: true when it moved
 * the server to needs_authorization (nothing more to do then). */
struct gw_oauth *gw_server_oauth(struct server *srv);
bool gw_server_oauth_failed(struct server *srv);

/* What a person must do for a server in needs_authorization (heap), and
 * in *url its authorize URL (heap), or NULL when none is offered (the
 * gateway does not listen, or the authorization requests ran out). */
char *gw_server_authorization(const struct server *srv, char **url);

/* A reload kept the server: its counts of authorization requests begin
 * again (a server that ran out of them offers its link again). */
void gw_server_oauth_reloaded(struct server *srv);
/* An instance's death as a Problem: the reason and the last stderr lines. */
void gw_server_death_problem(struct server *srv, const char *what, enum gw_severity sev,
                             const char *why, json_t *tail);
/* Catalog diagnostics become Problems or log lines; `srv` is the server
 * whose commit caused them, or NULL. */
void gw_servers_publish_diags(struct gw_servers *s, struct server *srv,
                              const struct gw_cat_diags *d);
void gw_server_first_attempt_done(struct server *srv, bool ok);
/* Tells readiness once every server had its first attempt. */
void gw_servers_check_settled(struct gw_servers *s);
/* Slots of `role` (-1: any but retired), ready ones only if asked. */
size_t gw_server_count_slots(const struct server *srv, int role, bool ready_only);
struct slot *gw_server_find_slot(const struct server *srv, enum slot_role role, bool ready);
/* A new instance in a new slot, or NULL (the failure is the server's). */
struct slot *gw_slot_spawn(struct server *srv, enum slot_role role);
/* The slot stops taking work; its instance drains and stops. */
void gw_slot_retire(struct slot *sl);
void gw_server_schedule_restart(struct server *srv);
/* Spawns spares up to gateway.spares (leased servers). */
void gw_server_top_up_spares(struct server *srv);
/* Spares are topped up on the next turns, not from inside a call. */
void gw_server_top_up_soon(struct server *srv);
struct server *gw_server_alloc(struct gw_servers *s, struct gw_config *c,
                               const struct gw_server_config *cfg);
void gw_server_start(struct server *srv);
/* To the dying list: leases end, instances stop; close callbacks free it. */
void gw_server_retire(struct server *srv, const char *why);
/* A removed server: its tools leave the catalog, its problems go. */
void gw_server_remove(struct server *srv);
void gw_servers_maybe_finish_close(struct gw_servers *s);

/* Notifications of `method` from any instance go to `fn` (registered by
 * the modules that own them, at start); the others are dropped. */
void gw_servers_route(struct gw_servers *s, const char *method, gw_notify_fn fn);
/* servers_prompts_resources.c's registrations; dispatch's are made when it attaches. */
void gw_extra_routes(struct gw_servers *s);

/* servers_discovery.c */
void gw_server_list_tools(struct server *srv, struct slot *slot);
/* Derives the toolset of `listing` (NULL: no tools, load_tools false) and
 * commits it; a pending replacement is swapped in first. False when the
 * server cannot serve it (refused on the first listing). */
bool gw_server_commit_listing(struct server *srv, json_t *listing);

/* servers_reload.c */
/* A pending replacement failed to start or list: it is dropped. */
void gw_server_pending_failed(struct server *srv, const char *why);
/* A pending replacement listed: it takes the place of the old server. */
void gw_server_swap_in(struct server *srv);
/* A pending replacement is dropped unused. */
void gw_server_discard_pending(struct server *srv);

/* servers_leases.c */
extern const struct gw_lease_source gw_server_lease_source;
void gw_servers_on_sweep(uv_timer_t *t);
/* Starts the search index's steps on the loop (servers_toolsearch.c). */
void gw_servers_ts_init(struct gw_servers *s);

/* servers.c, for dispatch.c */
struct server *gw_servers_find(const struct gw_servers *s, const char *id);

/* servers_prompts_resources.c, for servers.c and dispatch.c */
/* Lists prompts/resources/templates on `slot` as the server declared and
 * configured (load_prompts, load_resources); kinds by mask. */
/* A copy of `text` (caller frees) with the server's configured secrets and
 * the gateway's token masked: Problems, errors, events and logs quote what
 * a server said (an initialize error, a listing error, an HTTP error body),
 * and a server may say its own key (security.md P6). */
char *gw_servers_mask(const struct server *srv, const char *text);

void gw_extra_discover(struct server *srv, struct slot *slot, unsigned kinds);
/* The server went away: its prompts and resources too. */
void gw_extra_forget(struct server *srv);
/* The server offering what a routed request names; sets *params to the
 * params to send (a new reference, names made ORIGINAL) and *what to a
 * borrowed name for the outcome. NULL if nothing offers it. */
struct server *gw_extra_route(struct gw_servers *s, const char *method, json_t *params,
                              json_t **out_params, const char **what);
/* A resources/read result of a resource_namespace server as the client
 * sees it: each contents[].uri namespaced (gw_catalog_ns_uri). `result` is
 * borrowed; new reference. */
json_t *gw_extra_contents(const char *server, json_t *result);
/* A tools/call result of a resource_namespace server as the client sees it:
 * the URIs of its resource links and embedded resources namespaced, so
 * that they name what resources/list serves. Borrowed; new reference. */
json_t *gw_extra_links(const char *server, json_t *result);

/* What the supervisor tells the calls that wait on its instances: one
 * became ready, or what they wait on went away and they fail. Dispatch
 * registers these (gw_dispatch_attach); the supervisor never calls into
 * dispatch, and until dispatch is attached nothing waits. */
struct gw_slot_hooks {
    /* A leased slot's instance is ready: the lease's waiting calls go on. */
    void (*lease_ready)(struct lease *l);
    /* A shared slot's instance is ready: the server's waiting calls go to it. */
    void (*shared_ready)(struct server *srv, struct slot *slot);
    /* Fails every call waiting on `l` (may be NULL), and the queued calls
     * bound for `slot` (may be NULL). */
    void (*abandon)(struct gw_servers *s, struct lease *l, struct slot *slot, int code,
                    const char *why);
    /* Fails every call waiting for the server's shared instance. */
    void (*abandon_shared)(struct server *srv, int code, const char *why);
    /* A request from the slot's instance (sampling, elicitation, roots)
     * for the caller of a call in flight: gw_instance_cbs.on_request. */
    int (*server_request)(struct slot *slot, const char *method, json_t *id, json_t *params,
                          gw_mcp_handle origin);
    /* The slot is retired: what hangs on it (subscriptions) ends. */
    void (*slot_gone)(struct slot *slot);
};

/* policy.c: frees the clients' limits state (gw_servers.limits). */
void gw_policy_limits_free(struct gw_policy_limits *l);

#endif
