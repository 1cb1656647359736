/* subscriptions/listen (2026-07-28): a POST whose SSE answer stays open
 * and carries the list changes its client asked for, each tagged with the
 * listen request's id as its subscription id. They come from the same
 * coalesced catalog and extras events that 2025-era GET streams hear.
 *
 * `resourceSubscriptions` are made as a 2025 session's resources/subscribe
 * are (subscriptions.c, through dispatch: the URI's server, the listen's
 * dialog), with the stream as their subscriber: each
 * notifications/resources/updated comes tagged the same way. The
 * acknowledgement names the URIs some server offers and the gateway
 * subscribed to; an upstream that refuses later is not told (MCP has no
 * message for it), as for 2025 sessions.
 *
 * The stream ends when the client closes it, or at shutdown with the
 * request's result ({resultType: complete}); its subscriptions end with it. */
#include "gw/mcp_server_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/dispatch.h"
#include "gw/log.h"
#include "gw/subscriptions.h"
#include "gw/util.h"

enum { LISTEN_TOOLS = 1u, LISTEN_PROMPTS = 2u, LISTEN_RESOURCES = 4u };

static const struct {
    const char *param;  /* in params.notifications */
    const char *method; /* the notification */
    unsigned bit;
} kinds[] = {
    {"toolsListChanged", "notifications/tools/list_changed", LISTEN_TOOLS},
    {"promptsListChanged", "notifications/prompts/list_changed", LISTEN_PROMPTS},
    {"resourcesListChanged", "notifications/resources/list_changed", LISTEN_RESOURCES},
};

/* One open listen stream; owned by the server's list, freed when its
 * client goes away or the server closes. */
struct mcp_listener {
    struct mcp_listener *prev, *next;
    struct gw_mcp_server *ms;
    struct gw_http_request *req;
    json_t *id; /* the listen request's id: the subscription id */
    unsigned kinds;
    struct gw_subscriber *sub;      /* its resourceSubscriptions, or NULL */
    char dialog[GW_DIALOG_MAX + 1]; /* "" when the request named none */
};

static void unlink_listener(struct mcp_listener *l)
{
    if (l->prev != NULL)
        l->prev->next = l->next;
    else
        l->ms->listeners = l->next;
    if (l->next != NULL)
        l->next->prev = l->prev;
    l->ms->nlisteners--;
    if (l->sub != NULL)
        gw_subscriber_free(l->sub, !l->ms->closing);
    json_decref(l->id);
    free(l);
}

static void on_abort(struct gw_http_request *req, void *data)
{
    (void)req;
    unlink_listener(data);
}

/* Writes one message; a client that does not keep up loses the stream. */
static int send_msg(struct mcp_listener *l, json_t *msg)
{
    char *text = gw_mcp__sse_event(msg);
    int rc = gw_http_stream_write(l->req, text, strlen(text), MCP_MAX_QUEUED);

    free(text);
    if (rc != UV_ENOBUFS)
        return 0;
    gw_log(GW_LOG_WARN, "mcp listen stream too slow; ended", "peer", l->req->peer, NULL);
    gw_http_on_abort(l->req, NULL, NULL);
    gw_http_stream_end(l->req);
    unlink_listener(l);
    return -1;
}

static json_t *tagged(const struct mcp_listener *l, const char *method, json_t *extra)
{
    json_t *params = extra != NULL ? extra : json_object();

    json_object_set_new(params, "_meta", json_pack("{s:O}", MCP_META_SUB_ID, l->id));
    return json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params);
}

static void on_updated(void *data, json_t *params)
{
    struct mcp_listener *l = data;
    json_t *msg = tagged(l, "notifications/resources/updated", json_copy(params));

    send_msg(l, msg);
    json_decref(msg);
}

static const struct gw_subscriber_hooks listener_hooks = {on_updated};

/* The upstream's answer changes nothing here: a refusal is the server's,
 * and the subscriber may be gone (subscriptions.c lets go of it). */
static void on_subscribed(void *data, const struct gw_call_outcome *o)
{
    (void)data;
    if (o->code != 0)
        gw_log(GW_LOG_INFO, "listen resource subscription refused", "server", o->server, "uri",
               o->tool, "error", o->message, NULL);
}

/* Subscribes the listener to each URI it asked for; the array of those
 * taken (new reference). */
static json_t *subscribe_all(struct mcp_listener *l, json_t *uris, const char *dialog)
{
    json_t *taken = json_array(), *uri;
    size_t i;

    json_array_foreach(uris, i, uri)
    {
        json_t *params = json_pack("{s:O}", "uri", uri);
        struct gw_route_request r = {.method = "resources/subscribe",
                                     .client = l->req->client,
                                     .params = params,
                                     .dialog = dialog};

        if (l->sub == NULL)
            l->sub = gw_subscriber_new(l->ms->servers, &listener_hooks, l);
        r.subscriber = l->sub;
        if (json_is_string(uri) &&
            gw_dispatch_request(l->ms->servers, &r, on_subscribed, NULL, NULL) == 0)
            json_array_append(taken, uri);
        json_decref(params);
    }
    return taken;
}

void gw_mcp__listen(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *id,
                    json_t *params, const char *dialog)
{
    static const char *const headers[] = {"Cache-Control: no-store", NULL};
    json_t *asked = json_object_get(params, "notifications"), *honored, *ack;
    struct mcp_listener *l;

    json_t *uris = json_object_get(asked, "resourceSubscriptions");

    if (asked != NULL && !json_is_object(asked)) {
        gw_http_respond_json(
            req, 400,
            gw_mcp__error(id, RPC_INVALID_PARAMS, "params.notifications must be an object"), NULL);
        return;
    }
    if (uris != NULL && (!json_is_array(uris) || json_array_size(uris) > GW_SUBS_PER_SUBSCRIBER)) {
        gw_http_respond_json(req, 400,
                             gw_mcp__error(id, RPC_INVALID_PARAMS,
                                           "params.notifications.resourceSubscriptions must be an "
                                           "array of at most 1000 URIs"),
                             NULL);
        return;
    }
    if (ms->nlisteners >= MCP_MAX_LISTENERS || ms->closing) {
        gw_http_respond_json(req, 503,
                             gw_mcp__error(id, RPC_INTERNAL_ERROR,
                                           "Service Unavailable: too many subscriptions/listen "
                                           "streams are open"),
                             NULL);
        return;
    }
    l = gw_xcalloc(1, sizeof *l);
    l->ms = ms;
    l->req = req;
    l->id = json_incref(id);
    gw_mcp__view_note(ms, req->client);
    snprintf(l->dialog, sizeof l->dialog, "%s", dialog ? dialog : "");
    honored = json_object();
    for (size_t i = 0; i < GW_ARRAY_SIZE(kinds); i++) {
        if (json_is_true(json_object_get(asked, kinds[i].param))) {
            l->kinds |= kinds[i].bit;
            json_object_set_new(honored, kinds[i].param, json_true());
        }
    }
    l->next = ms->listeners;
    if (ms->listeners != NULL)
        ms->listeners->prev = l;
    ms->listeners = l;
    ms->nlisteners++;
    if (json_array_size(uris) > 0)
        json_object_set_new(honored, "resourceSubscriptions", subscribe_all(l, uris, dialog));
    gw_http_stream_begin(req, 200, "text/event-stream", headers);
    gw_http_on_abort(req, on_abort, l);
    ack = tagged(l, "notifications/subscriptions/acknowledged",
                 json_pack("{s:o}", "notifications", honored));
    send_msg(l, ack);
    json_decref(ack);
}

void gw_mcp__listeners_notify(struct gw_mcp_server *ms, const char *method, const char *dialog)
{
    struct mcp_listener *l, *next;
    unsigned bit = 0;

    for (size_t i = 0; i < GW_ARRAY_SIZE(kinds); i++) {
        if (strcmp(kinds[i].method, method) == 0)
            bit = kinds[i].bit;
    }
    for (l = ms->listeners; l != NULL; l = next) {
        next = l->next;
        if ((l->kinds & bit) && (dialog == NULL || strcmp(l->dialog, dialog) == 0)) {
            json_t *msg = tagged(l, method, NULL);
            send_msg(l, msg);
            json_decref(msg);
        }
    }
}

void gw_mcp__listeners_notify_client(struct gw_mcp_server *ms, const char *method,
                                     const char *client)
{
    struct mcp_listener *l, *next;
    unsigned bit = 0;

    for (size_t i = 0; i < GW_ARRAY_SIZE(kinds); i++) {
        if (strcmp(kinds[i].method, method) == 0)
            bit = kinds[i].bit;
    }
    for (l = ms->listeners; l != NULL; l = next) {
        next = l->next;
        if ((l->kinds & bit) && strcmp(l->req->client, client) == 0) {
            json_t *msg = tagged(l, method, NULL);
            send_msg(l, msg);
            json_decref(msg);
        }
    }
}

void gw_mcp__listeners_end(struct gw_mcp_server *ms)
{
    while (ms->listeners != NULL) {
        struct mcp_listener *l = ms->listeners;
        json_t *done = gw_mcp__result(l->id, json_pack("{s:s, s:{s:O}}", "resultType", "complete",
                                                       "_meta", MCP_META_SUB_ID, l->id));

        if (send_msg(l, done) == 0) {
            gw_http_on_abort(l->req, NULL, NULL);
            gw_http_stream_end(l->req);
            unlink_listener(l);
        }
        json_decref(done);
    }
}
