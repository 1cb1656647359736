/* Dispatch's insides: the call object and what works on calls in flight,
 * shared by dispatch.c (calls, limits, outcomes), dispatch_relay.c (the
 * upstream's requests and notifications relayed to the call's caller) and
 * subscriptions.c (resources/subscribe). Dispatch sits above the
 * supervisor: it includes servers_internal.h, never the reverse. */
#ifndef GW_DISPATCH_INTERNAL_H
#define GW_DISPATCH_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "gw/dispatch.h"
#include "gw/servers_internal.h"
#include "gw/trace.h"

/* A relayed server request (dispatch_relay.c): hangs on the call that
 * caused it; freed when answered or when the call ends. */
struct gw_server_request {
    struct gw_server_request *next;
    struct gw_call *call;
    json_t *id;           /* the request's id, in the space `origin` says */
    gw_mcp_handle origin; /* 0: the upstream's own request; else an input round's */
    struct gw_span *span; /* CLIENT, towards the caller, until it answers */
};

enum call_state { CALL_WAIT_INSTANCE, CALL_QUEUED, CALL_SENT, CALL_DONE };

struct gw_call {
    struct gw_servers *s;
    struct gw_call *next; /* in a lease's waiting list or the queue */
    uv_timer_t timer;     /* wait deadline; the call is freed in its close callback */
    enum call_state state;
    struct slot *slot;
    struct gw_call **waiting_on; /* the list it waits in (a lease's or a server's), or NULL */
    bool retried;                /* sent again after its session was lost (design §9) */
    bool parked;                 /* sent, and holding no slot (gw_dispatch_park) */
    char server[65];
    char client[65]; /* the caller's client, counted in flight (gw_policy_admit) */
    bool admitted;
    struct gw_call_audit *audit; /* what its audit line says (dispatch_audit.c), or NULL */
    char *tool;                  /* final name */
    char *original;              /* ORIGINAL name */
    char dialog[GW_DIALOG_MAX + 1];
    json_t *arguments;
    uint64_t timeout_ms;
    uint64_t deadline_ms; /* gw_now_ms() at arrival + timeout_ms: waits count against it */
    int max_instances;    /* per-tool cap, 0 = none */
    json_t *lease_info;
    gw_mcp_handle handle;
    gw_call_cb cb;
    void *data;
    bool deferred; /* an outcome waits for the next loop turn */
    int deferred_code;
    char *deferred_message;
    json_t *deferred_result; /* the gateway's own answer (mcp_release), or NULL */
    /* Routed requests (gw_dispatch_request): method and params to send;
     * NULL method: tools/call. */
    char *method;
    json_t *params;
    json_t *rpc_error;  /* borrowed while the outcome is delivered */
    size_t reply_bytes; /* the length of the server's message with the result */
    /* Relays. */
    json_t *progress_token; /* the caller's (a reference), or NULL */
    json_t *upstream_token; /* the gateway's own, sent upstream, or NULL */
    const struct gw_call_hooks *hooks;
    void *hooks_data;
    unsigned client_caps;
    unsigned log_bits;                     /* gw_mcp_log_bits of the caller's log level */
    unsigned missing_caps;                 /* refused server requests the caller did not declare */
    struct gw_call *sent_prev, *sent_next; /* the slot's sent list */
    struct gw_server_request *requests;
    /* resources/subscribe: its subscriber, until the outcome. */
    struct gw_subscriber *sub;
    /* resources/read of a resource_namespace server: contents' URIs are
     * namespaced on the way back. */
    bool ns_contents;
    bool ns_links;
    /* Traces: the context of the span it was called in (its front end's
     * SERVER span), kept by value since a parked call outlives that
     * request; the span of its wait for a lease or in the queue. */
    struct gw_trace_saved trace;
    struct gw_span *wait;
};

/* dispatch_trace.c */
/* Keeps the ambient context as the call's (nothing when not traced). */
void gw_call_trace_begin(struct gw_call *c);
void gw_call_trace_free(struct gw_call *c);
/* Starts the call's wait span (`name`: mcpgw.lease, mcpgw.queue) and makes
 * it the ambient context, so that an instance started for it is its child;
 * returns the context it replaced (gw_trace_leave). */
const struct gw_trace_ctx *gw_call_wait_begin(struct gw_call *c, const char *name);
/* Ends the wait span, as failed with `error` when that is not NULL. */
void gw_call_wait_end(struct gw_call *c, const char *error);

/* dispatch_relay.c */
/* A call was sent on its slot / is answered (ends its server requests). */
void gw_relay_sent(struct gw_call *call);
void gw_relay_done(struct gw_call *call);
/* A request from the slot's instance for the caller of a call in flight
 * (gw_slot_hooks.server_request). */
int gw_relay_request(struct slot *slot, const char *method, json_t *id, json_t *params,
                     gw_mcp_handle origin);
/* Registers the notifications the relay carries (progress, logging). */
void gw_relay_routes(struct gw_servers *s);

/* subscriptions.c */
/* Is there room for one more subscription of `sub`? */
bool gw_subs_room(const struct gw_subscriber *sub);
/* The call is a resources/subscribe of `sub` (counted until it ends). */
void gw_subs_begin(struct gw_call *call, struct gw_subscriber *sub);
/* Did the call's instance declare resources.subscribe? */
bool gw_subs_supported(const struct gw_call *call);
/* The subscribe call ends with `code`: on success the subscription is
 * recorded on the call's slot. Returns `code`, or the error that kept it
 * from being recorded (the slot was retired, a limit). */
int gw_subs_call_done(struct gw_call *call, int code);
/* The slot is retired: its subscriptions end (gw_slot_hooks.slot_gone). */
void gw_subs_slot_gone(struct slot *slot);
/* Registers notifications/resources/updated. */
void gw_subs_routes(struct gw_servers *s);

/* dispatch_audit.c: the audit line of a tool call (gw/audit.h). A refusal
 * is written at once; a call's line is begun when it is made (its
 * arguments' digest, the rule that let it through) and written with its
 * outcome; the instance and pid are noted when it is sent. */
struct gw_call_request;
void gw_dispatch__audit_refused(struct gw_servers *s, const struct gw_call_request *r,
                                const char *server, const char *outcome, const char *rule);
void gw_dispatch__audit_begin(struct gw_call *c, const struct gw_call_request *r, const char *rule);
void gw_dispatch__audit_sent(struct gw_call *c);
void gw_dispatch__audit_end(struct gw_call *c, int code, const json_t *result);
void gw_dispatch__audit_free(struct gw_call *c);

/* dispatch_release.c: mcp_release({"serverId"}) for `dialog`, as a
 * CallToolResult (new reference). */
json_t *gw_dispatch__release_result(struct gw_servers *s, const char *dialog, json_t *args);

#endif
