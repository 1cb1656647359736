/* What each outcome code means to a caller, for both front ends: the REST
 * status and code (docs/api.md, "Calls"), the /mcp JSON-RPC code, the
 * metrics label and a sentence. Codes of the MCP client are translated here
 * too, so that none reaches a caller as a bare number. */
#include <stddef.h>

#include "gw/dispatch.h"
#include "gw/mcp_client.h"
#include "gw/util.h"

#define RPC_INVALID_PARAMS (-32602)
#define RPC_INTERNAL_ERROR (-32603)
#define RPC_RATE_LIMITED   (-32029) /* docs/api.md: the client's rate or max_concurrent */

struct row {
    int code;
    struct gw_dispatch_error e;
};

static const struct row rows[] = {
    {0, {200, "ok", 0, "ok", "ok", false}},
    {GW_SERVERS_E_NO_TOOL,
     {404, "unknown_tool", RPC_INVALID_PARAMS, "unknown_tool", "no tool has this name", false}},
    {GW_SERVERS_E_RATE_LIMITED,
     {429, "rate_limited", RPC_RATE_LIMITED, "rate_limited",
      "this client's rate or max_concurrent (clients.<name>) is used up; try again after "
      "Retry-After seconds",
      true}},
    {GW_SERVERS_E_AUDIT,
     {503, "audit_unavailable", RPC_INTERNAL_ERROR, "audit_unavailable",
      "the audit log cannot be written and gateway.audit.required refuses calls until it can "
      "(the Problem audit:write says why)",
      true}},
    {GW_SERVERS_E_NEED_DIALOG,
     {400, "dialog_required", RPC_INVALID_PARAMS, "dialog_required",
      "this tool's server leases an instance per dialog: give \"dialog\": \"root\" or "
      "\"root/self\" in the body",
      false}},
    {GW_SERVERS_E_LIMIT,
     {429, "limit_reached", 0, "limit",
      "the gateway's concurrency limit for this tool stayed full "
      "(gateway.max_instances_per_server, max_concurrent or the tool's max_instances); try "
      "again shortly",
      true}},
    {GW_SERVERS_E_NOT_READY,
     {503, "server_not_ready", 0, "not_ready",
      "the tool's server has no ready instance right now (starting or restarting); try again "
      "in a few seconds",
      true}},
    {GW_MCP_E_NOT_READY,
     {503, "server_not_ready", 0, "not_ready",
      "the tool's server has no ready instance right now (starting or restarting); try again "
      "in a few seconds",
      true}},
    {GW_SERVERS_E_SPAWN,
     {502, "upstream_died", 0, "spawn_failed",
      "the tool's server instance died or failed to start; the next call gets a new one", false}},
    {GW_MCP_E_TRANSPORT,
     {502, "upstream_died", 0, "transport_down",
      "the tool's server instance died or failed to start; the next call gets a new one", false}},
    {GW_SERVERS_E_RELEASED,
     {409, "released", 0, "released",
      "the server's lease was released or the tool removed before the call was sent", false}},
    {GW_SERVERS_E_UNSUPPORTED,
     {400, "unsupported", RPC_INVALID_PARAMS, "unsupported",
      "the server did not declare what the request needs", false}},
    {GW_SERVERS_E_SUBS_FULL,
     {429, "limit_reached", RPC_INTERNAL_ERROR, "subscriptions_full",
      "the session holds as many resource subscriptions as the gateway keeps", false}},
    {GW_SERVERS_E_ROUNDS_FULL,
     {429, "limit_reached", 0, "rounds_full",
      "as many input rounds as the gateway keeps (64 per dialog, 4,096 in all) wait for their "
      "callers; the server's request for input was refused and the call cancelled: answer "
      "those rounds or let them expire, then call again",
      true}},
    {GW_SERVERS_E_AUTHORIZATION,
     {503, "authorization_required", 0, "authorization_required",
      "the tool's server needs a person to authorize the gateway again", false}},
    {GW_MCP_E_TIMEOUT,
     {504, "call_timeout", 0, "timeout",
      "the tool did not answer in time; the call was cancelled upstream", false}},
    {GW_MCP_E_CLOSED,
     {503, "shutting_down", RPC_INTERNAL_ERROR, "closed", "the gateway is stopping", false}},
    {GW_MCP_E_CANCELLED,
     {499, "cancelled", RPC_INTERNAL_ERROR, "cancelled", "the request was cancelled", false}},
    {GW_MCP_E_RPC,
     {502, "upstream_error", RPC_INTERNAL_ERROR, "upstream_error",
      "the server answered with an error", false}},
    {GW_MCP_E_PROTOCOL,
     {502, "upstream_error", RPC_INTERNAL_ERROR, "protocol_error",
      "the server's answer does not have the shape MCP gives it", false}},
    {GW_MCP_E_LIMIT,
     {502, "upstream_error", RPC_INTERNAL_ERROR, "limit_exceeded",
      "the server's answer exceeds the gateway's bounds", false}},
    {GW_MCP_E_NOT_RUN,
     {502, "upstream_died", RPC_INTERNAL_ERROR, "not_run",
      "the server lost its session before the call ran", false}},
};

struct gw_dispatch_error gw_dispatch_error(int code)
{
    struct gw_dispatch_error other = {
        502, "upstream_error", RPC_INTERNAL_ERROR, NULL, "the server could not be reached", false};

    for (size_t i = 0; i < GW_ARRAY_SIZE(rows); i++) {
        if (rows[i].code == code)
            return rows[i].e;
    }
    other.label = gw_mcp_strerror(code); /* the MCP client's or libuv's name */
    return other;
}

uint64_t gw_dispatch_timeout(uint64_t asked, uint64_t policy, uint64_t server, uint64_t gateway)
{
    if (asked > 0)
        return asked;
    if (policy > 0)
        return policy;
    return server > 0 ? server : gateway;
}
