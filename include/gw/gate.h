/* The gate: every HTTP request passes it before a front end sees it.
 *
 * It checks Host and Origin (DNS rebinding, security.md C1: on a loopback
 * or unix-socket listener the Host must name loopback; an Origin must be
 * the gateway's own, not another port's, or in gateway.allowed_origins),
 * then the bearer token when one is set (C8; /healthz is exempt), and
 * splits: /mcp goes to the MCP front end (mcp_server), everything else to
 * the REST routes (api). The two are siblings behind it and never check
 * Host, Origin or the token themselves. The status page's files (ui, when
 * gateway.ui is on) are answered after Host and Origin but before the
 * token: they hold no data. */
#ifndef GW_GATE_H
#define GW_GATE_H

#include <stdbool.h>

#include "gw/api.h"
#include "gw/config.h"
#include "gw/http.h"
#include "gw/mcp_server.h"

/* Owned by the daemon, which updates it: `config` on each reload, `mcp`
 * set to NULL when the stop begins (/mcp then answers 503). */
struct gw_gate {
    struct gw_config *config; /* current snapshot (not owned) */
    bool loopback;            /* listening on loopback or a unix socket: Host is checked */
    const char *address;      /* the bound address (gw_http_server_address), or NULL */
    struct gw_api_ctx *api;
    struct gw_mcp_server *mcp;
};

/* The gw_http_handler for every request; `data` is the gw_gate. */
void gw_gate_handle(struct gw_http_request *req, void *data);

/* True when `host` (a Host header value) is exactly "localhost", "[::1]"
 * or an address in 127.0.0.0/8 as four decimal octets, with an optional
 * ":port" of 1-5 digits and nothing else. */
bool gw_gate_host_is_loopback(const char *host);

/* True when `origin` is listed in allowed_origins or is the gateway's own:
 * http(s)://`host` when `host` (the Host header, or NULL) is a loopback name
 * or `address`, or http:// and a spelling of `address` (the bound address,
 * or NULL): its own host and port, and localhost, 127.0.0.1 and [::1] with
 * its port when it is a loopback or wildcard address. A page on another
 * port is another origin. */
bool gw_gate_origin_allowed(const char *origin, const char *host, const char *address,
                            const struct gw_gateway_config *gw);

#endif
