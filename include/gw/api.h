/* The REST routes of design §7 over the HTTP server.
 *
 * The api reads the daemon's state through a gw_api_ctx that the daemon
 * owns and updates (a reload swaps `config`); the api never owns any of it.
 * Every request passes the same gate first: Host and Origin checks (DNS
 * rebinding, security.md C1), then the bearer token when one is set (C8). */
#ifndef GW_API_H
#define GW_API_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "gw/config.h"
#include "gw/events.h"
#include "gw/http.h"
#include "gw/mcp_server.h"
#include "gw/metrics.h"
#include "gw/problems.h"
#include "gw/servers.h"

struct gw_api_ctx {
    struct gw_config *config; /* current snapshot (not owned) */
    struct gw_problems *problems;
    bool ready;    /* the first load has finished */
    bool loopback; /* listening on loopback or a unix socket: Host is checked */
    time_t loaded_at;
    struct gw_servers *servers;
    struct gw_events *events;
    struct gw_mcp_server *mcp; /* /mcp; NULL once the daemon is stopping */
    struct gw_metrics *metrics;
    struct tools_cache *tools_cache; /* the api's own; gw_api_ctx_release frees it */
    struct gw_artifacts *artifacts;  /* the api's own; gw_api_ctx_release frees it */
    /* POST /v1/reload: reloads now and returns the summary (new reference). */
    json_t *(*reload)(void *data);
    void *data;
};

/* Frees what the api keeps in `ctx` (the listing cache). */
void gw_api_ctx_release(struct gw_api_ctx *ctx);

/* The gw_http_handler for every request; `data` is the gw_api_ctx. */
void gw_api_handle(struct gw_http_request *req, void *data);

/* The http server's response hook: metrics and the access log line. */
void gw_api_on_response(const struct gw_http_request *req, int status, void *data);

/* True when `host` (a Host header value) is exactly "localhost", "[::1]"
 * or an address in 127.0.0.0/8 as four decimal octets, with an optional
 * ":port" of 1-5 digits and nothing else. */
bool gw_api_host_is_loopback(const char *host);

/* True when `origin` is a loopback origin or listed in allowed_origins. */
bool gw_api_origin_allowed(const char *origin, const struct gw_gateway_config *gw);

#endif
