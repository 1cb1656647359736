/* Servers: the runtime of every configured server — its instances, its
 * discovery, its state and restarts — and the merged catalog they feed.
 *
 * The daemon hands each loaded config snapshot to gw_servers_apply(); the
 * servers module holds a reference to it as long as any of its servers runs
 * on it. Discovery (initialize, tools/list) commits a server's toolset into
 * the catalog; nothing else writes the catalog. Problems about a server are
 * keyed "server:<id>:…" and cleared when the cause goes away.
 *
 * Until leasing lands every call uses the server's one shared instance.
 * A shared instance that dies is restarted with exponential backoff (0.5 s
 * doubling to 30 s, reset once an instance stayed ready for 60 s). */
#ifndef GW_SERVERS_H
#define GW_SERVERS_H

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

#include "gw/catalog.h"
#include "gw/config.h"
#include "gw/mcp_client.h"
#include "gw/problems.h"

/* Error codes beside GW_MCP_E_*: a tool name the catalog does not know, a
 * server with no ready instance. */
enum {
    GW_SERVERS_E_NO_TOOL = -5201,  /* 404 */
    GW_SERVERS_E_NOT_READY = -5202, /* 503 */
};

struct gw_servers;
struct gw_call;

struct gw_servers_cbs {
    /* Every server has finished its first attempt (ready or failed). */
    void (*on_settled)(void *data);
    /* A `required: true` server could not be made ready (seed 004): startup
     * must fail. `why` names the server and the cause. */
    void (*on_required_failed)(void *data, const char *why);
    void *data;
};

struct gw_servers *gw_servers_new(uv_loop_t *loop, struct gw_problems *problems,
                                  const struct gw_servers_cbs *cbs);

/* Starts, keeps or stops servers to match `config` (an ok snapshot; a
 * reference is taken). Servers whose spawn hash is unchanged keep their
 * instances; the others are replaced. */
void gw_servers_apply(struct gw_servers *s, struct gw_config *config);

/* Stops every instance (draining in-flight calls for up to `grace_ms`, then
 * killing) and calls `cb` once all are closed; then frees `s`. */
void gw_servers_close(struct gw_servers *s, uint64_t grace_ms, void (*cb)(void *data),
                      void *data);

bool gw_servers_settled(const struct gw_servers *s);
struct gw_catalog *gw_servers_catalog(struct gw_servers *s);

/* The body of GET /v1/servers ({"servers":[…]}). New reference. */
json_t *gw_servers_json(const struct gw_servers *s);

/* Calls the tool with this final name. `arguments` is borrowed;
 * `timeout_ms` 0 takes the tool's policy, else the server's, else the
 * gateway's request_timeout. On 0 the callback fires exactly once, later,
 * and *call (when non-NULL) is valid until it does. Else returns
 * GW_SERVERS_E_NO_TOOL, GW_SERVERS_E_NOT_READY or a GW_MCP_E_* code. */
int gw_servers_call(struct gw_servers *s, const char *tool, json_t *arguments,
                    uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, struct gw_call **call);

/* Cancels a call before its reply (a client that hung up): the upstream is
 * sent notifications/cancelled and the callback fires inside this call with
 * GW_MCP_E_CANCELLED. */
void gw_servers_cancel(struct gw_call *call, const char *reason);

/* The server id owning a call's tool (for logs), valid until the reply. */
const char *gw_call_server(const struct gw_call *call);

#endif
