/* Discovery: an instance lists its tools, the listing becomes the server's
 * toolset in the catalog (or its failure a Problem), and a replacement
 * prepared by a reload is swapped in when its listing commits. */
#include "gw/servers.h"

#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/oauth.h"
#include "gw/servers_internal.h"
#include "gw/util.h"

/* ---- discovery ---- */

static const char *first_error(const struct gw_toolset_build *b)
{
    for (size_t i = 0; i < b->diags.n; i++) {
        if (b->diags.v[i].severity == GW_SEV_ERROR)
            return b->diags.v[i].message;
    }
    return "its tool listing was refused";
}

bool gw_server_commit_listing(struct server *srv, json_t *listing)
{
    struct gw_catalog *cat = srv->owner->catalog;
    struct gw_toolset_build *b = gw_catalog_derive(srv->cfg, listing);
    struct gw_cat_diags diags = {0};
    uint64_t before = gw_catalog_version(cat);
    char *prefix = gw_xasprintf("server:%s:catalog:", srv->cfg->id);
    bool ok = b->ok, existed;

    if (!ok && srv->replaces != NULL) {
        gw_server_pending_failed(srv, first_error(b));
        gw_toolset_build_free(b);
        free(prefix);
        return false;
    }
    if (srv->replaces != NULL)
        gw_server_swap_in(srv);
    existed = gw_catalog_toolset(cat, srv->cfg->id) != NULL;
    gw_problems_mark(srv->owner->problems, prefix);
    gw_servers_publish_diags(srv->owner, srv, &b->diags);
    b->rank = (size_t)(srv->cfg - srv->snap->servers);
    gw_catalog_commit(cat, b, srv->snap->gateway.tool_changes, &diags);
    gw_servers_publish_diags(srv->owner, srv, &diags);
    gw_cat_diags_free(&diags);
    gw_problems_sweep(srv->owner->problems, prefix);
    free(prefix);
    gw_server_catalog_event(srv, before, existed ? "changed" : "added");
    if (!ok && srv->state == SRV_READY) {
        /* A re-listing refused: the last known good tools stay served. */
        gw_server_set_error(srv,
                            "the new tool listing was refused; serving the last known good one");
        return true;
    }
    if (!ok) {
        gw_server_set_error(srv, "the tool listing was refused (see problems)");
        gw_server_set_state(srv, SRV_FAILED);
        for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next)
            gw_slot_retire(sl);
        gw_server_first_attempt_done(srv, false);
        return false;
    }
    if (srv->state == SRV_NEEDS_AUTH && srv->oauth != NULL &&
        gw_oauth_step_up_pending(srv->oauth)) {
        /* An instance that started on the token the server refused for a
         * call (a step-up) lists its tools, but the calls stay refused
         * until a person grants the scopes: the server keeps saying so,
         * and keeps its link or its reason, instead of showing ready. */
        gw_server_first_attempt_done(srv, true);
        return true;
    }
    gw_server_set_error(srv, NULL);
    /* Cleared here rather than when an instance initializes, so that a
     * server whose every attempt fails at tools/list keeps its Problem while
     * the next attempt waits for an answer. */
    gw_server_clear_problems(srv, "start");
    gw_server_set_state(srv, SRV_READY);
    if (srv->oauth != NULL)
        gw_oauth_started(srv->oauth);
    gw_server_first_attempt_done(srv, true);
    return true;
}

/* What an unanswered listing may be explained by: lines the server sent
 * that the client dropped. "" when there were none. */
static char *dropped_lines(const struct slot *slot)
{
    json_t *j = gw_instance_to_json(slot->inst), *c = json_object_get(j, "counters");
    json_int_t nj = json_integer_value(json_object_get(c, "nonJson"));
    json_int_t bad = json_integer_value(json_object_get(c, "badShape"));
    char *s = nj + bad > 0 ? gw_xasprintf("; it sent %lld message(s) that were not JSON and %lld "
                                          "that were not valid JSON-RPC",
                                          (long long)nj, (long long)bad)
                           : gw_xstrdup("");

    json_decref(j);
    return s;
}

static void listing_failed(struct server *srv, struct slot *slot, const char *message)
{
    char *hint = dropped_lines(slot);
    char *why = gw_xasprintf("tools/list failed: %s%s", message, hint);
    char *msg =
        gw_xasprintf("MCP server '%s' could not list its tools: %s%s", srv->cfg->id, message, hint);

    free(hint);
    if (srv->replaces != NULL) {
        gw_server_pending_failed(srv, why);
        free(why);
        free(msg);
        return;
    }
    /* A 401 on the listing (a grant that stopped working, a new
     * authorization server): refresh or ask for a person, not a restart. */
    if (srv->state != SRV_READY && gw_server_oauth_failed(srv)) {
        gw_slot_retire(slot);
        free(why);
        free(msg);
        return;
    }
    gw_server_set_error(srv, why);
    gw_server_problem(srv, "start", GW_SEV_ERROR, NULL, msg);
    free(why);
    free(msg);
    if (srv->state == SRV_READY)
        return; /* a re-listing: keep serving the last known good tools */
    gw_slot_retire(slot);
    gw_server_set_state(srv, SRV_FAILED);
    gw_server_first_attempt_done(srv, false);
    gw_server_schedule_restart(srv);
}

static void on_listing(void *data, const struct gw_mcp_reply *reply)
{
    struct slot *slot = data;
    struct server *srv = slot->srv;

    srv->listing = false;
    if (srv->removed || slot->role == ROLE_RETIRED)
        return;
    if (reply->code != 0) {
        listing_failed(srv, slot, reply->message);
        return;
    }
    if (!gw_server_commit_listing(srv, reply->result))
        return;
    gw_extra_discover(srv, slot, ~0u);
    if (slot->role == ROLE_DISCOVERY)
        slot->role = ROLE_SPARE;
    gw_server_top_up_spares(srv);
    if (srv->relist) {
        srv->relist = false;
        gw_server_list_tools(srv, slot);
    }
}

void gw_server_list_tools(struct server *srv, struct slot *slot)
{
    uint64_t timeout = srv->cfg->request_timeout_ms ? srv->cfg->request_timeout_ms
                                                    : srv->snap->gateway.request_timeout_ms;
    if (srv->listing) {
        srv->relist = true;
        return;
    }
    if (!srv->cfg->load_tools) {
        bool ok = gw_server_commit_listing(srv, NULL);
        if (ok)
            gw_extra_discover(srv, slot, ~0u);
        if (ok && slot->role == ROLE_DISCOVERY)
            slot->role = ROLE_SPARE;
        gw_server_top_up_spares(srv);
        return;
    }
    if (gw_instance_list_tools(slot->inst, timeout, on_listing, slot) == 0)
        srv->listing = true;
}
