/* Resource subscriptions (see subscriptions.h).
 *
 * Each slot keeps the URIs subscribed on its instance as topics; a topic
 * lists its holders, one entry per subscriber, and each subscriber lists
 * its entries too, so that both an instance going away and a subscriber
 * going away unlink in time proportional to what they hold. Topics are a
 * plain list: GW_SUBS_URIS_PER_INSTANCE bounds the scans. */
#include "gw/subscriptions.h"

#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/dispatch_internal.h"
#include "gw/util.h"

/* One URI subscribed on one instance. Owned by its slot; freed with its
 * last holder or with the slot. */
struct gw_sub_topic {
    struct gw_sub_topic *next; /* the slot's topics */
    struct slot *slot;
    struct sub_entry *holders;
    char *uri; /* as the upstream knows it */
};

/* One subscriber holding one topic; in both their lists. */
struct sub_entry {
    struct gw_sub_topic *topic;
    struct gw_subscriber *sub;
    struct sub_entry *tprev, *tnext; /* the topic's holders */
    struct sub_entry *sprev, *snext; /* the subscriber's entries */
};

struct gw_subscriber {
    struct gw_servers *s;
    const struct gw_subscriber_hooks *hooks;
    void *data;
    struct sub_entry *entries;
    size_t n;       /* entries */
    size_t pending; /* subscribe calls in flight */
    size_t held;    /* deliveries of an update that will reach it */
    uint64_t round; /* the last updated notification it heard */
    bool closed;    /* freed by its owner; freed here once nothing holds it */
};

/* A subscriber its owner let go of is freed when no subscribe call and no
 * delivery holds it any more. */
static void sub_release(struct gw_subscriber *sub)
{
    if (sub->closed && sub->pending == 0 && sub->held == 0)
        free(sub);
}

/* ---- upstream ---- */

static void on_unsubscribed(void *data, const struct gw_mcp_reply *reply)
{
    char *server = data;

    if (reply->code != 0 && reply->code != GW_MCP_E_CLOSED)
        gw_log(GW_LOG_INFO, "resources/unsubscribe failed upstream", "server", server, "error",
               reply->message ? reply->message : gw_mcp_strerror(reply->code), NULL);
    free(server);
}

/* Tells a serving instance that nobody holds `uri` there any more. Its
 * answer changes nothing (the gateway stopped relaying already), so it is
 * only logged when it is an error. */
static void tell_upstream(struct slot *sl, const char *uri)
{
    const struct server *srv = sl->srv;
    uint64_t timeout = srv->cfg->request_timeout_ms ? srv->cfg->request_timeout_ms
                                                    : srv->snap->gateway.request_timeout_ms;
    json_t *params;
    char *server;

    if (sl->role == ROLE_RETIRED || !sl->ready)
        return;
    params = json_pack("{s:s}", "uri", uri);
    server = gw_xstrdup(srv->cfg->id);
    if (gw_instance_request(sl->inst, "resources/unsubscribe", params, timeout, on_unsubscribed,
                            server, NULL, 0) != 0)
        free(server);
    json_decref(params);
}

/* ---- topics and entries ---- */

static struct gw_sub_topic *topic_find(const struct slot *sl, const char *uri)
{
    for (struct gw_sub_topic *t = sl->topics; t != NULL; t = t->next) {
        if (strcmp(t->uri, uri) == 0)
            return t;
    }
    return NULL;
}

static void topic_free(struct gw_sub_topic *t)
{
    struct gw_sub_topic **link = &t->slot->topics;

    while (*link != t)
        link = &(*link)->next;
    *link = t->next;
    t->slot->ntopics--;
    free(t->uri);
    free(t);
}

/* Unlinks and frees an entry; returns its topic when that is left with no
 * holder (still linked: the caller decides what to tell and frees it). */
static struct gw_sub_topic *entry_free(struct sub_entry *e)
{
    struct gw_sub_topic *t = e->topic;

    if (e->tprev != NULL)
        e->tprev->tnext = e->tnext;
    else
        t->holders = e->tnext;
    if (e->tnext != NULL)
        e->tnext->tprev = e->tprev;
    if (e->sprev != NULL)
        e->sprev->snext = e->snext;
    else
        e->sub->entries = e->snext;
    if (e->snext != NULL)
        e->snext->sprev = e->sprev;
    e->sub->n--;
    free(e);
    return t->holders == NULL ? t : NULL;
}

/* Ends one entry; an abandoned topic is told upstream (when asked) and
 * freed. */
static void entry_end(struct sub_entry *e, bool tell)
{
    struct gw_sub_topic *t = entry_free(e);

    if (t == NULL)
        return;
    if (tell)
        tell_upstream(t->slot, t->uri);
    topic_free(t);
}

/* Records that `sub` holds `uri` on `sl`. Returns 0 (also when it held it
 * already) or GW_SERVERS_E_SUBS_FULL (the instance's topics are full). */
static int entry_add(struct gw_subscriber *sub, struct slot *sl, const char *uri)
{
    struct gw_sub_topic *t = topic_find(sl, uri);
    struct sub_entry *e;

    for (e = t ? t->holders : NULL; e != NULL; e = e->tnext) {
        if (e->sub == sub)
            return 0;
    }
    if (t == NULL) {
        if (sl->ntopics >= GW_SUBS_URIS_PER_INSTANCE)
            return GW_SERVERS_E_SUBS_FULL;
        t = gw_xcalloc(1, sizeof *t);
        t->slot = sl;
        t->uri = gw_xstrdup(uri);
        t->next = sl->topics;
        sl->topics = t;
        sl->ntopics++;
    }
    e = gw_xcalloc(1, sizeof *e);
    e->topic = t;
    e->sub = sub;
    e->tnext = t->holders;
    if (t->holders != NULL)
        t->holders->tprev = e;
    t->holders = e;
    e->snext = sub->entries;
    if (sub->entries != NULL)
        sub->entries->sprev = e;
    sub->entries = e;
    sub->n++;
    return 0;
}

/* ---- for servers.c and dispatch.c ---- */

bool gw_subs_room(const struct gw_subscriber *sub)
{
    return sub->n + sub->pending < GW_SUBS_PER_SUBSCRIBER;
}

void gw_subs_begin(struct gw_call *c, struct gw_subscriber *sub)
{
    c->sub = sub;
    sub->pending++;
}

bool gw_subs_supported(const struct gw_call *c)
{
    json_t *caps = gw_instance_capabilities(c->slot->inst);

    return json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe"));
}

int gw_subs_call_done(struct gw_call *c, int code)
{
    struct gw_subscriber *sub = c->sub;
    const char *uri = json_string_value(json_object_get(c->params, "uri"));

    c->sub = NULL;
    sub->pending--;
    if (code == 0 && c->slot->role == ROLE_RETIRED) {
        code = GW_SERVERS_E_RELEASED; /* its instance is stopping: nothing will come */
    } else if (code == 0 && (sub->closed || (code = entry_add(sub, c->slot, uri)) != 0)) {
        /* The upstream subscribed, but nobody holds it here (the subscriber
         * went away meanwhile, or a limit): undone unless others hold it. */
        if (topic_find(c->slot, uri) == NULL)
            tell_upstream(c->slot, uri);
    }
    sub_release(sub);
    return code;
}

void gw_subs_slot_gone(struct slot *sl)
{
    while (sl->topics != NULL) {
        struct gw_sub_topic *t = sl->topics;
        while (t->holders != NULL)
            entry_free(t->holders);
        topic_free(t);
    }
}

/* Does a subscription to `topic` cover an update of `uri`? MCP lets the
 * update name a sub-resource of what was subscribed: `uri` below `topic`
 * in the path counts. */
static bool covers(const char *topic, const char *uri)
{
    size_t n = strlen(topic);

    if (strncmp(topic, uri, n) != 0)
        return false;
    return uri[n] == '\0' || (n > 0 && topic[n - 1] == '/') || uri[n] == '/';
}

/* The subscribers an update of `uri` reaches, each once (marked with
 * `round`) and held: gathered before any hears it, because a hook may end
 * any subscriber (a listen stream too slow to keep up ends its own), and
 * with it entries and topics of this slot. Returns how many are in `*out`
 * (`buf` when they fit, else an allocation). */
static size_t gather(struct slot *sl, const char *uri, uint64_t round, struct gw_subscriber **buf,
                     size_t cap, struct gw_subscriber ***out)
{
    size_t n = 0;

    for (const struct gw_sub_topic *t = sl->topics; t != NULL; t = t->next) {
        for (const struct sub_entry *e = covers(t->uri, uri) ? t->holders : NULL; e != NULL;
             e = e->tnext)
            n++;
    }
    *out = n <= cap ? buf : gw_xcalloc(n, sizeof **out);
    n = 0;
    for (const struct gw_sub_topic *t = sl->topics; t != NULL; t = t->next) {
        for (const struct sub_entry *e = covers(t->uri, uri) ? t->holders : NULL; e != NULL;
             e = e->tnext) {
            if (e->sub->round == round)
                continue;
            e->sub->round = round;
            e->sub->held++;
            (*out)[n++] = e->sub;
        }
    }
    return n;
}

static void on_updated(struct slot *sl, const char *method, json_t *params)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));
    uint64_t round = ++sl->srv->owner->subs_round;
    struct gw_subscriber *buf[8], **subs;
    json_t *shown;
    size_t n;

    if (uri == NULL)
        return;
    shown = json_incref(params);
    if (sl->srv->cfg->resource_namespace) {
        char *ns = gw_catalog_ns_uri(sl->srv->cfg->id, uri);
        json_decref(shown);
        shown = json_copy(params);
        json_object_set_new(shown, "uri", json_string(ns));
        free(ns);
    }
    n = gather(sl, uri, round, buf, GW_ARRAY_SIZE(buf), &subs);
    /* From here on only `subs` is read: the slot's topics and their
     * entries may be gone after any hook. */
    for (size_t i = 0; i < n; i++) {
        if (!subs[i]->closed)
            subs[i]->hooks->on_updated(subs[i]->data, shown);
    }
    for (size_t i = 0; i < n; i++) {
        subs[i]->held--;
        sub_release(subs[i]);
    }
    if (subs != buf)
        free(subs);
    json_decref(shown);
}

void gw_subs_routes(struct gw_servers *s)
{
    gw_servers_route(s, "notifications/resources/updated", on_updated);
}

/* ---- subscribers ---- */

struct gw_subscriber *gw_subscriber_new(struct gw_servers *s,
                                        const struct gw_subscriber_hooks *hooks, void *data)
{
    struct gw_subscriber *sub = gw_xcalloc(1, sizeof *sub);

    sub->s = s;
    sub->hooks = hooks;
    sub->data = data;
    return sub;
}

void gw_subscriber_free(struct gw_subscriber *sub, bool tell_upstream)
{
    while (sub->entries != NULL)
        entry_end(sub->entries, tell_upstream);
    sub->closed = true;
    sub_release(sub);
}

/* Is `e` a subscription to `uri` as the client knows it? `ns` is the
 * server id when `uri` is namespaced ("mcpgw:<ns>/<rest>"), else "". */
static bool names(const struct sub_entry *e, const char *uri, const char *ns, const char *rest)
{
    const struct gw_server_config *cfg = e->topic->slot->srv->cfg;

    if (cfg->resource_namespace)
        return strcmp(cfg->id, ns) == 0 && strcmp(e->topic->uri, rest) == 0;
    return strcmp(e->topic->uri, uri) == 0;
}

int gw_subscriber_drop(struct gw_subscriber *sub, const char *uri)
{
    char ns[GW_CATALOG_NS_ID_MAX + 1] = "";
    char *rest = NULL;
    bool held = false;

    (void)gw_catalog_ns_split(uri, ns, &rest); /* not namespaced: ns stays "" */
    for (struct sub_entry *e = sub->entries, *next; e != NULL; e = next) {
        next = e->snext;
        if (names(e, uri, ns, rest ? rest : uri)) {
            entry_end(e, true);
            held = true;
        }
    }
    free(rest);
    if (held || gw_extras_resource(sub->s->extras, uri) != NULL)
        return 0;
    return GW_SERVERS_E_NO_TOOL;
}

size_t gw_subscriber_count(const struct gw_subscriber *sub)
{
    return sub->n;
}
