/* The REST routes of design §7 over the HTTP server.
 *
 * The api reads the daemon's state through a gw_api_ctx that the daemon
 * owns and updates (a reload swaps `config`); the api never owns any of it.
 * Requests reach it through the gate (gate.h), which has checked Host,
 * Origin and the token and sent /mcp elsewhere. */
#ifndef GW_API_H
#define GW_API_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "gw/config.h"
#include "gw/events.h"
#include "gw/http.h"
#include "gw/input_rounds.h"
#include "gw/metrics.h"
#include "gw/problems.h"
#include "gw/servers.h"

struct gw_api_ctx {
    struct gw_config *config; /* current snapshot (not owned) */
    struct gw_problems *problems;
    bool ready; /* the first load has finished */
    time_t started_at;
    time_t loaded_at;
    json_t *last_reload; /* the last reload's summary and "at", or NULL; the api's own */
    struct gw_servers *servers;
    struct gw_events *events;
    struct gw_metrics *metrics;
    struct gw_rounds *rounds;        /* input rounds of REST calls (input_rounds.h) */
    struct gw_audit *audit;          /* the audit log, for /metrics (gw/audit.h) */
    struct tools_cache *tools_cache; /* the api's own; gw_api_ctx_release frees it */
    struct gw_artifacts *artifacts;  /* the api's own; gw_api_ctx_release frees it */
    /* POST /v1/reload: reloads now and returns the summary (new reference). */
    json_t *(*reload)(void *data);
    void *data;
};

/* Frees what the api keeps in `ctx` (the listing cache, the last reload). */
void gw_api_ctx_release(struct gw_api_ctx *ctx);

/* Keeps `summary` (a reload's, reference taken) with the time it ended,
 * for the "gateway" object of GET /v1/servers. */
void gw_api_note_reload(struct gw_api_ctx *ctx, json_t *summary);

/* Routes a request that passed the gate; `data` is the gw_api_ctx. */
void gw_api_handle(struct gw_http_request *req, void *data);

/* The http server's response hook: metrics and the access log line. */
void gw_api_on_response(const struct gw_http_request *req, int status, void *data);

#endif
