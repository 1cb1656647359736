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
    gw_events_view view; /* NULL: every event as it is */
    void *view_data;
};

struct kept {
    uint64_t id;
    char *text; /* the whole event, framed */
    char *type;
    json_t *data; /* for the clients that see it through a view */
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

/* Kept event `k` to one client: as it is, or as its view shows it. */
static int send_kept(struct gw_events *ev, struct client *c, const struct kept *k)
{
    json_t *shown;
    char *body, *text;
    int rc;

    if (c->view == NULL)
        return send_to(ev, c, k->text, strlen(k->text));
    shown = c->view(c->view_data, c->req, k->type, k->data);
    if (shown == NULL)
        return 0;
    body = json_dumps(shown, JSON_COMPACT);
    text = gw_xasprintf("id: %llu\nevent: %s\ndata: %s\n\n", (unsigned long long)k->id, k->type,
                        body ? body : "null");
    rc = send_to(ev, c, text, strlen(text));
    free(text);
    free(body);
    json_decref(shown);
    return rc;
}

static void broadcast(struct gw_events *ev, const struct kept *k)
{
    struct client *c = ev->clients, *next;

    for (; c != NULL; c = next) {
        next = c->next;
        send_kept(ev, c, k);
    }
}

static void on_heartbeat(uv_timer_t *t)
{
    struct gw_events *ev = t->data;
    struct client *c = ev->clients, *next;

    for (; c != NULL; c = next) {
        next = c->next;
        send_to(ev, c, ": heartbeat\n\n", 13);
    }
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
    free(k->text);
    free(k->type);
    json_decref(k->data);
    k->id = id;
    k->text = text;
    k->type = gw_xstrdup(type);
    k->data = data;
    broadcast(ev, k);
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
        if (k->id == id && send_kept(ev, c, k) != 0)
            return -1;
    }
    return 0;
}

/* Whether a client that saw event `last` can be brought up to date from
 * the kept events alone: none it missed has been dropped, and the id is
 * one of this daemon's (ids start again at 1 with each start). */
static bool can_replay(const struct gw_events *ev, const char *last, uint64_t *id)
{
    uint64_t first = ev->next_id > GW_EVENTS_KEEP ? ev->next_id - GW_EVENTS_KEEP : 1;
    char *end;

    if (last == NULL || last[0] < '0' || last[0] > '9')
        return false;
    *id = strtoull(last, &end, 10);
    return *end == '\0' && *id < ev->next_id && *id + 1 >= first;
}

/* The state now, as event `snapshot`. It has no id of its own and is not
 * kept: a client that reconnects names the last event it saw, and what the
 * snapshot held came with events up to "eventId", which it then needs no
 * more of. */
static int send_snapshot(struct gw_events *ev, struct client *c, json_t *snapshot)
{
    char *body, *text;
    int rc;

    json_object_set_new(snapshot, "eventId", json_integer((json_int_t)(ev->next_id - 1)));
    body = json_dumps(snapshot, JSON_COMPACT);
    text = gw_xasprintf("event: snapshot\ndata: %s\n\n", body ? body : "null");
    rc = send_to(ev, c, text, strlen(text));
    free(body);
    free(text);
    return rc;
}

void gw_events_attach(struct gw_events *ev, struct gw_http_request *req, json_t *snapshot)
{
    gw_events_attach_view(ev, req, snapshot, NULL, NULL);
}

void gw_events_attach_view(struct gw_events *ev, struct gw_http_request *req, json_t *snapshot,
                           gw_events_view view, void *view_data)
{
    static const char *const headers[] = {"Cache-Control: no-store", NULL};
    const char *last = gw_http_header(req, "last-event-id");
    struct client *c = gw_xcalloc(1, sizeof *c);
    uint64_t last_id;

    c->ev = ev;
    c->req = req;
    c->view = view;
    c->view_data = view_data;
    c->next = ev->clients;
    ev->clients = c;
    gw_http_stream_begin(req, 200, "text/event-stream", headers);
    gw_http_on_abort(req, on_client_abort, c);
    if (send_to(ev, c, ": mcpgw events\n\n", 16) == 0) {
        if (can_replay(ev, last, &last_id))
            replay(ev, c, last_id);
        else
            send_snapshot(ev, c, snapshot);
    }
    json_decref(snapshot);
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

    for (size_t i = 0; i < GW_EVENTS_KEEP; i++) {
        free(ev->ring[i].text);
        free(ev->ring[i].type);
        json_decref(ev->ring[i].data);
    }
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
