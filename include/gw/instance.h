/* An instance: one running upstream (any transport: upstream.h) with the MCP
 * client above it. It owns its transport and its client, and a stop waits
 * for the client's calls in flight (seed 000's draining).
 *
 * Lifetime: gw_instance_start() gives the caller an instance it owns until
 * on_closed; the instance is freed right after on_closed returns. on_ready
 * or on_failed fires once for the handshake; on_failed also fires when the
 * instance dies later (its in-flight calls have then already failed with
 * GW_MCP_E_TRANSPORT). After on_failed the owner calls gw_instance_stop(). */
#ifndef GW_INSTANCE_H
#define GW_INSTANCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/curl_uv.h"
#include "gw/mcp_client.h"
#include "gw/oauth.h"

struct gw_instance;

enum gw_instance_state {
    GW_INSTANCE_STARTING, /* spawned, handshake under way */
    GW_INSTANCE_READY,    /* takes calls */
    GW_INSTANCE_FAILED,   /* handshake failed or the process died */
    GW_INSTANCE_DRAINING, /* stopped taking calls; stops when none are in flight */
    GW_INSTANCE_STOPPING, /* the transport's stop sequence runs */
    GW_INSTANCE_NSTATES
};

struct gw_instance_cbs {
    void (*on_ready)(struct gw_instance *inst, void *data);
    void (*on_failed)(struct gw_instance *inst, const char *why, void *data);
    void (*on_tools_changed)(struct gw_instance *inst, void *data);
    void (*on_closed)(struct gw_instance *inst, void *data);
    /* Any other notification while READY (progress, logging, prompts or
     * resources list_changed…); `params` is borrowed (may be NULL). May be
     * NULL. */
    void (*on_notification)(struct gw_instance *inst, const char *method, json_t *params,
                            void *data);
    /* sampling/createMessage, elicitation/create or roots/list (mcp_client's on_request
     * contract: `origin` names the call that asked, when the client knows
     * it): 0 = answered later with gw_instance_respond(). May be NULL. */
    int (*on_request)(struct gw_instance *inst, const char *method, json_t *id, json_t *params,
                      gw_mcp_handle origin, void *data);
    void *data;
    /* A sandboxed instance's proxy allowed or refused a destination
     * (transport.h's on_netcheck). May be NULL. */
    void (*on_netcheck)(struct gw_instance *inst, const char *entry, bool allowed, const char *why,
                        void *data);
};

/* Starts the server of `cfg`, one of `snap`'s servers — spawns a stdio
 * process, or opens an HTTP session through `multi` (shared by every HTTP
 * instance of the loop) — and the handshake, with `snap`'s gateway
 * settings. The instance holds a reference to `snap` until it is freed, so
 * `cfg` stays valid whatever snapshot its owner moves on to. Returns 0 and
 * sets *out, or a negative code with a sentence in *why (caller frees);
 * then no callback fires and no reference is kept. `era` is the revision
 * to speak (AUTO probes). A probe whose transport dies (a server that
 * exits on a request before initialize) is not a failure: the instance
 * starts its transport again and speaks 2025-era to it, once; on_ready or
 * on_failed follows as usual. `oauth` (may be NULL) is the server's OAuth
 * client, handed to an HTTP or SSE transport; it must outlive the
 * instance. */
int gw_instance_start(uv_loop_t *loop, struct gw_curl_uv *multi, struct gw_config *snap,
                      const struct gw_server_config *cfg, struct gw_oauth *oauth,
                      enum gw_mcp_era era, const struct gw_instance_cbs *cbs, uint64_t seq,
                      struct gw_instance **out, char **why);

/* Stops taking calls; once none is in flight — or after `grace_ms` (0:
 * no deadline), when the calls still in flight fail — runs the transport's
 * stop sequence (design §6). on_closed follows. Idempotent. */
void gw_instance_stop(struct gw_instance *inst, uint64_t grace_ms);

/* Kills at once (daemon shutdown past its grace). on_closed follows. */
void gw_instance_kill(struct gw_instance *inst);

/* Sends tools/call with the ORIGINAL name (and `progress_token`, the
 * gateway's own, when non-NULL; `caps`, what the caller can answer). Same
 * contract as gw_mcp_client_call_tool();
 * fails with GW_MCP_E_NOT_READY unless READY. */
int gw_instance_call(struct gw_instance *inst, const char *name, json_t *arguments,
                     json_t *progress_token, uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                     gw_mcp_handle *handle, unsigned caps);

/* Any other request (prompts/get, resources/read, completion/complete),
 * counted in flight like a call. Contract as gw_mcp_client_request(). */
int gw_instance_request(struct gw_instance *inst, const char *method, json_t *params,
                        uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle *handle,
                        unsigned caps);

/* Answers a server request taken by on_request, named by its id and
 * origin (gw_mcp_client_respond). */
int gw_instance_respond(struct gw_instance *inst, json_t *id, gw_mcp_handle origin, json_t *result,
                        json_t *error);

/* A paginated list (prompts/list, resources/list…): gw_mcp_client_list_all. */
int gw_instance_list(struct gw_instance *inst, const char *method, const char *key,
                     uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data);

/* The server's initialize capabilities (borrowed), or NULL before ready. */
json_t *gw_instance_capabilities(const struct gw_instance *inst);

/* Cancels a call made through gw_instance_call (its callback runs inside). */
int gw_instance_cancel(struct gw_instance *inst, gw_mcp_handle handle, const char *reason);

/* tools/list with every page (discovery and re-listing). */
int gw_instance_list_tools(struct gw_instance *inst, uint64_t timeout_ms, gw_mcp_reply_cb cb,
                           void *data);

enum gw_instance_state gw_instance_state(const struct gw_instance *inst);
/* The revision its server speaks: AUTO until the handshake decided. */
enum gw_mcp_era gw_instance_era(const struct gw_instance *inst);
const char *gw_instance_state_name(enum gw_instance_state s);
uint64_t gw_instance_seq(const struct gw_instance *inst);
int gw_instance_pid(const struct gw_instance *inst); /* 0 for HTTP */
/* The upstream Mcp-Session-Id of an HTTP instance, else NULL. */
const char *gw_instance_session(const struct gw_instance *inst);
unsigned gw_instance_in_flight(const struct gw_instance *inst);

/* {"id","state","pid","since","inFlight","calls","protocolVersion",
 *  "serverInfo","stderrTail":[…],"counters":{…}}. New reference. */
json_t *gw_instance_to_json(const struct gw_instance *inst);

/* The last stderr lines as a JSON array. New reference. */
json_t *gw_instance_stderr_tail(const struct gw_instance *inst);

#endif
