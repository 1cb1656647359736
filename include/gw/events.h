/* Events: GET /v1/events, a Server-Sent Events stream of what changes —
 * `catalog`, `problem`, `server`, `lease`, `reload` — after a `snapshot` of
 * the servers and dialogs, for dashboards and agent runtimes that cache the
 * catalog.
 *
 * Every event has an increasing id; the last GW_EVENTS_KEEP events are kept
 * so that a client reconnecting with Last-Event-ID gets what it missed. A
 * comment line goes out every 15 s so idle proxies keep the stream open.
 * A client that does not keep up (more than GW_EVENTS_MAX_QUEUED bytes
 * waiting) is dropped: it never blocks the loop or other clients. */
#ifndef GW_EVENTS_H
#define GW_EVENTS_H

#include <jansson.h>
#include <uv.h>

#include "gw/http.h"

#define GW_EVENTS_KEEP         256
#define GW_EVENTS_MAX_QUEUED   (1u << 20)
#define GW_EVENTS_HEARTBEAT_MS 15000

struct gw_events;

struct gw_events *gw_events_new(uv_loop_t *loop);

/* Sends `data` (reference stolen) as event `type` to every client. */
void gw_events_publish(struct gw_events *ev, const char *type, json_t *data);

/* Turns `req` into an event stream (200, text/event-stream). A client
 * resuming (Last-Event-ID) whose missed events are all kept gets them; any
 * other gets `snapshot` (an object, reference stolen; "eventId" is added:
 * the newest event it reflects) as event `snapshot` first. */
void gw_events_attach(struct gw_events *ev, struct gw_http_request *req, json_t *snapshot);

/* What one client may see of an event (issue 35): a new reference to send
 * (the event itself, or a copy rewritten for it), or NULL to send it
 * nothing. */
typedef json_t *(*gw_events_view)(void *data, const struct gw_http_request *req, const char *type,
                                  json_t *event);
/* gw_events_attach for a client that sees each event (kept ones replayed
 * too) through `view`; the snapshot is its own already. */
void gw_events_attach_view(struct gw_events *ev, struct gw_http_request *req, json_t *snapshot,
                           gw_events_view view, void *view_data);

size_t gw_events_clients(const struct gw_events *ev);

/* Ends every stream and closes the timer; `cb` runs when done and `ev` is
 * freed. */
void gw_events_close(struct gw_events *ev, void (*cb)(void *data), void *data);

#endif
