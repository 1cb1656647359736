#include "gw/events.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/util.h"

struct client {
    struct client *next;
    struct gw_events *ev;
    struct gw_http_request *req;
};

struct kept {
    uint64_t id;
    char *text; /* the whole event, framed */
};

struct gw_events {
    uv_timer_t heartbeat;
    struct client *clients;
    struct kept ring[GW_EVENTS_KEEP];
    uint64_t next_id;
    void (*close_cb)(void *data);
    void *close_data;
};

static void drop(struct gw_events *ev, struct client *c, bool end)
{
    struct client **link = &ev->clients;

    while (*link != c)
        link = &(*link)->next;
    *link = c->next;
    if (end)
        gw_http_stream_end(c->req);
    free(c);
}

/* Writes to one client; a slow one is dropped. Returns 0 if still there. */
static int send_to(struct gw_events *ev, struct client *c, const char *text, size_t len)
{
    if (gw_http_stream_write(c->req, text, len, GW_EVENTS_MAX_QUEUED) == 0)
        return 0;
    gw_log(GW_LOG_WARN, "events client too slow; dropped", "peer", c->req->peer, NULL);
    drop(ev, c, true);
    return -1;
}

static void broadcast(struct gw_events *ev, const char *text)
{
    size_t len = strlen(text);
    struct client *c = ev->clients, *next;

    for (; c != NULL; c = next) {
        next = c->next;
        send_to(ev, c, text, len);
    }
}

static void on_heartbeat(uv_timer_t *t)
{
    broadcast(t->data, ": heartbeat\n\n");
}

struct gw_events *gw_events_new(uv_loop_t *loop)
{
    struct gw_events *ev = gw_xcalloc(1, sizeof *ev);

    ev->next_id = 1;
    uv_timer_init(loop, &ev->heartbeat);
    ev->heartbeat.data = ev;
    uv_timer_start(&ev->heartbeat, on_heartbeat, GW_EVENTS_HEARTBEAT_MS, GW_EVENTS_HEARTBEAT_MS);
    uv_unref((uv_handle_t *)&ev->heartbeat);
    return ev;
}

void gw_events_publish(struct gw_events *ev, const char *type, json_t *data)
{
    char *body = json_dumps(data, JSON_COMPACT);
    uint64_t id = ev->next_id++;
    struct kept *k = &ev->ring[id % GW_EVENTS_KEEP];
    char *text = gw_xasprintf("id: %llu\nevent: %s\ndata: %s\n\n", (unsigned long long)id, type,
                              body ? body : "null");

    free(body);
    json_decref(data);
    free(k->text);
    k->id = id;
    k->text = text;
    broadcast(ev, text);
}

static void on_client_abort(struct gw_http_request *req, void *data)
{
    struct client *c = data;

    drop(c->ev, c, false);
}

/* Sends the kept events after `last` (Last-Event-ID), oldest first. */
static int replay(struct gw_events *ev, struct client *c, uint64_t last)
{
    uint64_t first = ev->next_id > GW_EVENTS_KEEP ? ev->next_id - GW_EVENTS_KEEP : 1;

    for (uint64_t id = last + 1 > first ? last + 1 : first; id < ev->next_id; id++) {
        struct kept *k = &ev->ring[id % GW_EVENTS_KEEP];
        if (k->id == id && send_to(ev, c, k->text, strlen(k->text)) != 0)
            return -1;
    }
    return 0;
}

void gw_events_attach(struct gw_events *ev, struct gw_http_request *req)
{
    static const char *const headers[] = {"Cache-Control: no-store", NULL};
    const char *last = gw_http_header(req, "last-event-id");
    struct client *c = gw_xcalloc(1, sizeof *c);

    c->ev = ev;
    c->req = req;
    c->next = ev->clients;
    ev->clients = c;
    gw_http_stream_begin(req, 200, "text/event-stream", headers);
    gw_http_on_abort(req, on_client_abort, c);
    if (send_to(ev, c, ": mcpgw events\n\n", 16) == 0 && last != NULL)
        replay(ev, c, strtoull(last, NULL, 10));
}

size_t gw_events_clients(const struct gw_events *ev)
{
    size_t n = 0;

    for (const struct client *c = ev->clients; c != NULL; c = c->next)
        n++;
    return n;
}

static void on_closed(uv_handle_t *h)
{
    struct gw_events *ev = h->data;

    for (size_t i = 0; i < GW_EVENTS_KEEP; i++)
        free(ev->ring[i].text);
    ev->close_cb(ev->close_data);
    free(ev);
}

void gw_events_close(struct gw_events *ev, void (*cb)(void *data), void *data)
{
    while (ev->clients != NULL)
        drop(ev, ev->clients, true);
    ev->close_cb = cb;
    ev->close_data = data;
    uv_close((uv_handle_t *)&ev->heartbeat, on_closed);
}
