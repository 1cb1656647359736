/* The OTLP/HTTP exporter of traces (JSON encoding): the sink of gw/trace.h.
 *
 * Ended spans wait in one bounded queue (GW_OTLP_QUEUE_MAX; spans beyond
 * it are dropped and counted), each as its JSON, written when it ended
 * (its memory is the next span's at once), and leave in batches of at most
 * GW_OTLP_BATCH_MAX, one request at a time, at most once a second unless a
 * full batch waits. The requests go through libcurl's multi on the loop
 * (gw/curl_uv.h), shared with the HTTP upstreams; nothing here blocks or
 * delays a call. A 429, 502, 503, 504 or a connection failure keeps the
 * batch and tries again after a backoff (1 s doubling to 32 s, or the
 * answer's Retry-After); any other failure drops the batch. A failure sets
 * the Problem "tracing:export", which the next success clears. */
#ifndef GW_OTLP_H
#define GW_OTLP_H

#include <stdint.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/curl_uv.h"
#include "gw/problems.h"
#include "gw/trace.h"

#define GW_OTLP_QUEUE_MAX 2048
/* Each request costs the loop its own work (libcurl's setup, the head, the
 * answer): under a flood, batches of 1,024 instead of 512 took 0.1 to 0.4
 * us off each traced call at 64 callers (docs/performance.md). */
#define GW_OTLP_BATCH_MAX  1024
#define GW_OTLP_TIMEOUT_MS 10000 /* one export request, connect included */
#define GW_OTLP_PROBLEM    "tracing:export"

struct gw_otlp;

struct gw_otlp *gw_otlp_new(uv_loop_t *loop, struct gw_curl_uv *multi,
                            struct gw_problems *problems);

/* Applies gateway.tracing (a reload too): turns tracing on with this
 * exporter as the sink, or off when there is no endpoint (what is queued
 * is still sent). */
void gw_otlp_configure(struct gw_otlp *o, const struct gw_gateway_config *g);

/* Turns tracing off, sends what is queued until `deadline_ms` (gw_now_ms
 * clock), then frees `o` and calls cb(data) on a later loop turn. The
 * multi must stay open until then. */
void gw_otlp_close(struct gw_otlp *o, uint64_t deadline_ms, void (*cb)(void *data), void *data);

/* Spans waiting in the queue. */
unsigned gw_otlp_queued(const struct gw_otlp *o);

/* The OTLP/JSON ExportTraceServiceRequest of `spans` (a list through
 * ->next, at most `max` of them); exposed for tests. New string. */
char *gw_otlp_encode(const struct gw_span *spans, unsigned max, const char *service_name,
                     size_t *len);

#endif
