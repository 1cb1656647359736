/* Metrics: counters kept as things happen, gauges read at scrape time, all
 * rendered as Prometheus text format 0.0.4 for GET /metrics.
 *
 * Label values are escaped per the format (backslash, quote, newline);
 * nothing secret is ever a label. */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <jansson.h>
#include <stdint.h>

struct gw_metrics;

struct gw_metrics *gw_metrics_new(void);
void gw_metrics_free(struct gw_metrics *m);

void gw_metrics_http(struct gw_metrics *m, const char *route, int code);
/* One tool call, counted once by the front end that took it (`front`:
 * "rest" or "mcp"). `m` may be NULL (a front end without metrics). */
void gw_metrics_call(struct gw_metrics *m, const char *front, const char *server, const char *tool,
                     const char *status, double seconds);
void gw_metrics_reload(struct gw_metrics *m, const char *result);

/* What the scrape reads from the rest of the daemon. */
struct gw_server_stats; /* servers.h */
struct gw_relay_stats;  /* servers.h */
struct gw_rounds_stats; /* input_rounds.h */

struct gw_metrics_view {
    const struct gw_server_stats *servers; /* borrowed */
    size_t nservers;
    uint64_t catalog_version;
    unsigned calls_in_flight;
    const struct gw_relay_stats *relay;   /* borrowed */
    const struct gw_rounds_stats *rounds; /* borrowed; NULL: not shown */
    size_t problems[3];                   /* by severity: error, warning, info */
    size_t event_clients;
    size_t search_index_bytes; /* the tool search index (toolsearch.h) */
};

/* The whole exposition as a new heap string. */
char *gw_metrics_render(const struct gw_metrics *m, const struct gw_metrics_view *v);

#endif
