/* The gateway as one MCP server: POST, GET and DELETE /mcp over the merged
 * catalog, MCP streamable HTTP (2025-11-25 offered; 2025-06-18, 2025-03-26
 * and 2024-11-05 accepted), and the session-less 2026-07-28 next to them
 * (a POST with its _meta envelope; mcp_modern.c). Errors and refusals are
 * described in mcp_server.c (transport), mcp_modern.c (2026-07-28) and
 * mcp_methods.c (methods).
 *
 * The api module runs its gate (Host, Origin, bearer token; security.md C1,
 * C8) and then hands every request for the path /mcp, whatever its method,
 * to gw_mcp_server_handle(). This module answers it: JSON-RPC over POST,
 * the session's server-to-client stream over GET, the end of a session over
 * DELETE, 405 for anything else.
 *
 * Sessions: an `initialize` POST without Mcp-Session-Id creates one; its id
 * is 128 bits from the OS CSPRNG (uv_random) written as 32 hex characters
 * (security.md C6) and is sent only in that initialize answer. The session's
 * dialog (design §6) is its own "mcp-session:<16 hex>" name (below), unless
 * the initialize request carried `X-Mcpgw-Dialog: <dialog>` or went to
 * /mcp/d/<dialog> (fixed for the session's life). At most `max_sessions`
 * live at once (503 beyond); a session that has had no request for
 * `idle_ms`, no GET stream open and no call in flight is ended as if
 * DELETEd. Ending a session releases the leases of its own dialog only: a
 * named dialog's are left to mcp_release, /v1/dialogs/<d>/release and
 * lease_idle_timeout (REST calls and other sessions may share them).
 *
 * A 2026-07-28 request has no session: its dialog is the one it names, or
 * gateway.mcp_default_dialog's (its client's "mcp-client:<name>",
 * "mcp-default", or none).
 *
 * Ownership: the daemon owns the gw_mcp_server from gw_mcp_server_new()
 * until gw_mcp_server_close(), which frees it in its close callback. The
 * servers module must outlive it (close this first). Every session, its
 * streams and its calls are this module's. */
#ifndef GW_MCP_SERVER_H
#define GW_MCP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "gw/http.h"
#include "gw/servers.h"

#define GW_MCP_SERVER_MAX_SESSIONS 10000
#define GW_MCP_SERVER_IDLE_MS      (60u * 60u * 1000u) /* one hour */
#define GW_MCP_SERVER_PAGE_SIZE    100                 /* tools/list page */

struct gw_mcp_server_limits {
    size_t max_sessions; /* 0: GW_MCP_SERVER_MAX_SESSIONS */
    uint64_t idle_ms;    /* 0: GW_MCP_SERVER_IDLE_MS */
    size_t page_size;    /* 0: GW_MCP_SERVER_PAGE_SIZE */
};

/* /mcp/d/{dialog}: the endpoint of one dialog ("root" or "root/self"), for
 * clients that can be given a URL per conversation but no header. A
 * session opened there belongs to that dialog, as with X-Mcpgw-Dialog. */
#define GW_MCP_DIALOG_PATH "/mcp/d/"

struct gw_mcp_server;

/* A server with no sessions; `servers`, `metrics` (may be NULL: calls
 * are not counted) and `rounds` (may be NULL: a 2026-07-28 call whose
 * server asks for input fails) are borrowed and must outlive it. Starts
 * an unreferenced sweep timer (it never keeps the loop alive). */
struct gw_metrics;
struct gw_rounds;
struct gw_mcp_server *gw_mcp_server_new(uv_loop_t *loop, struct gw_servers *servers,
                                        struct gw_metrics *metrics, struct gw_rounds *rounds);

/* Replaces the limits (tests, a future config key); applies to later
 * requests and the next sweep. */
void gw_mcp_server_set_limits(struct gw_mcp_server *ms, const struct gw_mcp_server_limits *l);

/* The dialog of a 2026-07-28 request that names none (the config's
 * gateway.mcp_default_dialog; GW_MCP_DIALOG_CLIENT until set); applies to
 * later requests. */
void gw_mcp_server_set_default_dialog(struct gw_mcp_server *ms, enum gw_mcp_default_dialog mode);

/* The servers' "lease" event with action "acquired": the first lease of a
 * default dialog (mcp-client:…, mcp-default) logs how to name one. */
void gw_mcp_server_lease_acquired(struct gw_mcp_server *ms, const char *dialog, const char *server);

/* Answers one request for /mcp (any method), now or later; registers its
 * own abort callbacks. The caller must have run the Host/Origin/token gate. */
void gw_mcp_server_handle(struct gw_mcp_server *ms, struct gw_http_request *req);

/* The catalog's version changed (the servers' "catalog" event). Sessions
 * with a GET stream get notifications/tools/list_changed; a burst of
 * changes (one reload committing several servers) gives one notification. */
void gw_mcp_server_catalog_changed(struct gw_mcp_server *ms, uint64_t version);

/* The servers' "prompts" or "resources" event (`type`): sessions with a
 * GET stream get notifications/prompts/list_changed or
 * notifications/resources/list_changed, coalesced like the tools'. */
void gw_mcp_server_extras_changed(struct gw_mcp_server *ms, const char *type);

/* gateway.tool_search changed (enabled, always_loaded): every dialog's
 * tools/list may have, with no new catalog version, so sessions with a GET
 * stream and toolsListChanged listeners get notifications/tools/list_changed,
 * coalesced like the catalog's. */
void gw_mcp_server_tool_search_changed(struct gw_mcp_server *ms);

/* The clients section changed (gw_config.clients_sha256): each client
 * whose tools/list reads differently now is told so (list_changed). */
void gw_mcp_server_policy_changed(struct gw_mcp_server *ms);

/* Live sessions (for /metrics and tests). */
size_t gw_mcp_server_sessions(const struct gw_mcp_server *ms);

/* Daemon shutdown: ends every GET stream, cancels every call in flight (its
 * POST gets a JSON-RPC error), frees every session without releasing leases
 * (the servers module is stopping them anyway), closes the timers, then
 * calls `cb` and frees `ms`. Requests for /mcp must not be handed over
 * after this call. */
void gw_mcp_server_close(struct gw_mcp_server *ms, void (*cb)(void *data), void *data);

#endif
