/* Reload reconcile: each server of a new configuration snapshot is kept
 * (same spawn inputs: it moves to the snapshot), replaced (a pending
 * server prepared beside it, swapped in when it lists), added or removed. */
#include "gw/servers.h"

#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/servers_internal.h"
#include "gw/util.h"

static void unlink_pending(struct server *srv)
{
    struct server **link = &srv->owner->pending;

    while (*link != NULL && *link != srv)
        link = &(*link)->next;
    if (*link == srv)
        *link = srv->next;
    srv->next = NULL;
}

/* A prepared replacement is ready: it takes the old one's place in the
 * list; the old one drains and stops. The catalog commit that follows
 * replaces the old toolset in one step. */
void gw_server_swap_in(struct server *srv)
{
    struct server *old = srv->replaces;
    struct server **link = &srv->owner->head;

    unlink_pending(srv);
    while (*link != old)
        link = &(*link)->next;
    *link = srv;
    srv->next = old->next;
    srv->replaces = NULL;
    srv->first_done = true;
    gw_leases_inherit(&srv->leases, &old->leases);
    gw_log(GW_LOG_INFO, "server replaced by its new configuration", "server", srv->cfg->id, NULL);
    gw_server_retire(old, "the server's configuration changed");
    gw_server_clear_problems(srv, "reload");
    gw_server_clear_problems(srv, "start");
}

void gw_server_discard_pending(struct server *srv)
{
    unlink_pending(srv);
    srv->replaces = NULL;
    gw_server_retire(srv, "the replacement was abandoned");
}

void gw_server_pending_failed(struct server *srv, const char *why)
{
    char *msg = gw_xasprintf("the new configuration of server '%s' could not be made ready: %s; "
                             "the last known good one keeps serving",
                             srv->cfg->id, why);

    gw_server_problem(srv, "reload", GW_SEV_ERROR, NULL, msg);
    free(msg);
    gw_server_discard_pending(srv);
}

static bool serving(const struct server *srv)
{
    return srv->state == SRV_READY || srv->state == SRV_DEGRADED;
}

/* Moves `srv` to the snapshot `c`, whose `cfg` is its configuration. */
static void server_move(struct server *srv, struct gw_config *c, const struct gw_server_config *cfg)
{
    struct gw_config *old = srv->snap;

    srv->snap = gw_config_ref(c);
    srv->cfg = cfg;
    gw_config_unref(old);
}

/* A replacement being prepared goes on when the new snapshot asks for the
 * same spawn inputs (a reload of an unchanged file, an editor's double
 * write): started again, it would never finish under a storm of reloads.
 * Any other is abandoned. */
static void keep_or_discard_pending(struct gw_servers *s, struct gw_config *c)
{
    struct server *p = s->pending, *next;

    for (; p != NULL; p = next) {
        const struct gw_server_config *cfg = gw_config_server(c, p->cfg->id);
        next = p->next;
        if (cfg != NULL && cfg->ok && serving(p->replaces) &&
            strcmp(cfg->spawn_hash, p->cfg->spawn_hash) == 0)
            server_move(p, c, cfg);
        else
            gw_server_discard_pending(p);
    }
}

static struct server *pending_for(const struct gw_servers *s, const struct server *old)
{
    for (struct server *p = s->pending; p != NULL; p = p->next) {
        if (p->replaces == old)
            return p;
    }
    return NULL;
}

/* Applies an unchanged spawn hash: the instances and leases stay; only the
 * catalog is derived again when its hash changed. Returns whether anything
 * changed. */
static bool server_adopt(struct server *srv, struct gw_config *c,
                         const struct gw_server_config *cfg)
{
    bool catalog_changed = strcmp(srv->cfg->catalog_hash, cfg->catalog_hash) != 0;

    server_move(srv, c, cfg);
    gw_server_clear_problems(srv, "reload");
    gw_server_oauth_reloaded(srv);
    if (catalog_changed && srv->state == SRV_READY) {
        json_t *listing = json_incref(gw_catalog_listing(srv->owner->catalog, cfg->id));
        gw_server_commit_listing(srv, listing);
        json_decref(listing);
        /* load_prompts, load_resources and transforms are catalog inputs */
        struct slot *sl =
            gw_server_find_slot(srv, srv->cfg->truely_stateless ? ROLE_SHARED : ROLE_SPARE, true);
        if (sl != NULL)
            gw_extra_discover(srv, sl, ~0u);
    }
    return catalog_changed;
}

static void note(json_t *sum, const char *what, const char *id)
{
    json_array_append_new(json_object_get(sum, what), json_string(id));
}

/* Decides the fate of one configured server; returns the server now in
 * its place in the list (itself, or its immediate replacement). */
static struct server *reconcile(struct server *srv, struct gw_config *c,
                                const struct gw_server_config *cfg, json_t *sum)
{
    struct server *n;

    if (cfg->ok && srv->cfg->ok && strcmp(cfg->spawn_hash, srv->cfg->spawn_hash) == 0) {
        note(sum, server_adopt(srv, c, cfg) ? "changed" : "unchanged", cfg->id);
        return srv;
    }
    if (serving(srv)) {
        if (!cfg->ok) {
            gw_server_problem(srv, "reload", GW_SEV_WARNING, NULL,
                              "the new configuration of this server has errors (see the config "
                              "problems); the last known good one keeps serving");
            note(sum, "refused", cfg->id);
            return srv;
        }
        if (pending_for(srv->owner, srv) != NULL) {
            note(sum, "changed", cfg->id);
            return srv;
        }
        n = gw_server_alloc(srv->owner, c, cfg);
        n->replaces = srv;
        n->next = srv->owner->pending;
        srv->owner->pending = n;
        gw_server_start(n);
        note(sum, "changed", cfg->id);
        return srv;
    }
    n = gw_server_alloc(srv->owner, c, cfg);
    gw_leases_inherit(&n->leases, &srv->leases);
    n->next = srv->next;
    gw_server_remove(srv);
    gw_server_start(n);
    note(sum, "changed", cfg->id);
    return n;
}

/* What the catalog takes from a new configuration as a whole: each
 * server's place in the file (who wins a freed name) and the reserved
 * names. */
static void apply_catalog_order(struct gw_servers *s, const struct gw_config *c)
{
    struct gw_cat_diags diags = {0};
    uint64_t v;

    for (size_t i = 0; i < c->nservers; i++)
        gw_catalog_set_rank(s->catalog, c->servers[i].id, i);
    if (gw_catalog_set_reserved(s->catalog, c->gateway.reserved_tool_names,
                                c->gateway.nreserved_tool_names, &diags) > 0) {
        v = gw_catalog_version(s->catalog);
        gw_server_emit(s, &(struct gw_servers_event){.kind = GW_EV_CATALOG,
                                                     .version = v,
                                                     .change = "reserved_tool_names"});
    }
    gw_servers_publish_diags(s, NULL, &diags);
    gw_cat_diags_free(&diags);
}

json_t *gw_servers_apply(struct gw_servers *s, struct gw_config *c)
{
    json_t *sum = json_pack("{s:[], s:[], s:[], s:[], s:[]}", "added", "removed", "changed",
                            "refused", "unchanged");
    struct server **link = &s->head;

    gw_config_unref(s->config);
    s->config = gw_config_ref(c);
    s->gw = &c->gateway;
    keep_or_discard_pending(s, c);
    while (*link != NULL) {
        struct server *srv = *link;
        const struct gw_server_config *cfg = gw_config_server(c, srv->cfg->id);
        if (cfg == NULL) {
            *link = srv->next;
            note(sum, "removed", srv->cfg->id);
            gw_server_remove(srv);
            continue;
        }
        *link = reconcile(srv, c, cfg, sum);
        link = &(*link)->next;
    }
    for (size_t i = 0; i < c->nservers; i++) {
        if (gw_servers_find(s, c->servers[i].id) != NULL)
            continue;
        *link = gw_server_alloc(s, c, &c->servers[i]);
        gw_server_start(*link);
        note(sum, "added", c->servers[i].id);
        link = &(*link)->next;
    }
    apply_catalog_order(s, c);
    gw_servers_check_settled(s);
    return sum;
}
