/* The supervisor: server runtimes, their instances (slots), restarts,
 * problems and events, and shutdown.
 *
 * Each live instance sits in a slot whose role says what it is for (see
 * servers_internal.h). Discovery is servers_discovery.c's, the leases'
 * slot source servers_leases.c's (the lease table is lease.c's), reload
 * reconcile servers_reload.c's; calls are dispatch.c's. */
#include "gw/servers.h"

#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/oauth.h"
#include "gw/redact.h"
#include "gw/servers_internal.h"
#include "gw/toolsearch.h"
#include "gw/util.h"

#define BACKOFF_MIN_MS       500
#define BACKOFF_MAX_MS       30000
#define BACKOFF_RESET_MS     60000
#define SWEEP_MS             1000
#define SPARE_TOPUP_DELAY_MS 25

static const char *const server_state_names[] = {"starting", "ready",   "degraded",
                                                 "failed",   "stopped", "needs_authorization"};

/* ---- events ---- */

static const char *const event_names[] = {
    [GW_EV_SERVER] = "server",   [GW_EV_CATALOG] = "catalog",     [GW_EV_LEASE] = "lease",
    [GW_EV_PROMPTS] = "prompts", [GW_EV_RESOURCES] = "resources",
};

const char *gw_servers_event_name(enum gw_servers_event_kind kind)
{
    return event_names[kind];
}

json_t *gw_servers_event_json(const struct gw_servers_event *ev)
{
    switch (ev->kind) {
    case GW_EV_SERVER:
        return json_pack("{s:s, s:s, s:s?}", "server", ev->server, "state", ev->state, "lastError",
                         ev->last_error);
    case GW_EV_CATALOG:
        return json_pack("{s:I, s:s?, s:s}", "version", (json_int_t)ev->version, "server",
                         ev->server, "change", ev->change);
    case GW_EV_LEASE:
        if (strcmp(ev->action, "acquired") == 0)
            return json_pack("{s:s, s:s, s:s, s:I, s:b}", "dialog", ev->dialog, "server",
                             ev->server, "action", ev->action, "instance", (json_int_t)ev->instance,
                             "warm", ev->warm);
        return json_pack("{s:s, s:s, s:s, s:s?}", "dialog", ev->dialog, "server", ev->server,
                         "action", ev->action, "reason", ev->reason);
    case GW_EV_PROMPTS:
    case GW_EV_RESOURCES:
        return json_pack("{s:I, s:s}", "version", (json_int_t)ev->version, "server", ev->server);
    }
    return json_object();
}

void gw_server_emit(struct gw_servers *s, const struct gw_servers_event *ev)
{
    if (s->cbs.on_event != NULL)
        s->cbs.on_event(s->cbs.data, ev);
}

void gw_server_set_state(struct server *srv, enum server_state st)
{
    if (srv->state == st)
        return;
    srv->state = st;
    if (st == SRV_READY)
        srv->oauth_refreshed = false;
    if (srv->replaces != NULL)
        return; /* a replacement being prepared is not visible yet */
    gw_server_emit(srv->owner, &(struct gw_servers_event){.kind = GW_EV_SERVER,
                                                          .server = srv->cfg->id,
                                                          .state = server_state_names[st],
                                                          .last_error = srv->last_error});
}

/* Emits a catalog event when an operation changed the catalog version. */
void gw_server_catalog_event(struct server *srv, uint64_t before, const char *change)
{
    uint64_t v = gw_catalog_version(srv->owner->catalog);

    if (v != before)
        gw_server_emit(srv->owner, &(struct gw_servers_event){.kind = GW_EV_CATALOG,
                                                              .server = srv->cfg->id,
                                                              .version = v,
                                                              .change = change});
}

/* ---- problems ---- */

char *gw_servers_mask(const struct server *srv, const char *text)
{
    struct gw_redact *r = gw_redact_new();
    char *copy = gw_xstrdup(text);

    gw_redact_add_server(r, srv->cfg);
    gw_redact_add(r, srv->snap->gateway.auth_token);
    if (srv->oauth != NULL)
        gw_oauth_redact_add(srv->oauth, r);
    copy[gw_redact_line(r, copy, strlen(copy), false)] = '\0';
    gw_redact_free(r);
    return copy;
}

void gw_server_problem(struct server *srv, const char *what, enum gw_severity sev, const char *tool,
                       const char *message)
{
    char *id =
        gw_xasprintf("server:%s:%s%s%s", srv->cfg->id, what, tool ? ":" : "", tool ? tool : "");
    char *shown = gw_servers_mask(srv, message);
    struct gw_problem p = {.id = id,
                           .severity = sev,
                           .scope = tool ? GW_SCOPE_TOOL : GW_SCOPE_SERVER,
                           .server = srv->cfg->id,
                           .tool = tool,
                           .message = shown};
    gw_problems_set(srv->owner->problems, &p);
    free(shown);
    free(id);
}

void gw_server_clear_problems(struct server *srv, const char *what)
{
    char *prefix = gw_xasprintf("server:%s:%s", srv->cfg->id, what);

    gw_problems_clear_prefix(srv->owner->problems, prefix);
    free(prefix);
}

void gw_server_set_error(struct server *srv, const char *why)
{
    free(srv->last_error);
    srv->last_error = why ? gw_servers_mask(srv, why) : NULL;
}

/* Catalog diagnostics become Problems (warnings and errors) or log lines
 * (info: seed 004 logs those at INFO). A diagnostic about another server's
 * tool (one that lost a name, or got one back) is that server's Problem;
 * `srv` is the server whose commit caused them, or NULL. */
void gw_servers_publish_diags(struct gw_servers *s, struct server *srv,
                              const struct gw_cat_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        const struct gw_cat_diag *g = &d->v[i];
        struct server *to = srv;
        if (g->server != NULL && (srv == NULL || strcmp(g->server, srv->cfg->id) != 0))
            to = gw_servers_find(s, g->server);
        if (g->severity == GW_SEV_INFO) {
            gw_log(GW_LOG_INFO, g->message, "server", g->server, "tool", g->tool, NULL);
            if (g->kind == GW_CAT_REOFFERED && to != NULL && g->tool != NULL) {
                char *id = gw_xasprintf("server:%s:catalog:%s:%s", to->cfg->id,
                                        gw_cat_diag_kind_name(GW_CAT_COLLISION), g->tool);
                gw_problems_clear(s->problems, id);
                free(id);
            }
            continue;
        }
        if (to == NULL)
            continue;
        char *what = gw_xasprintf("catalog:%s", gw_cat_diag_kind_name(g->kind));
        gw_server_problem(to, what, g->severity, g->tool, g->message);
        free(what);
    }
}

/* An instance's death as a Problem: the reason and the last stderr lines. */
void gw_server_death_problem(struct server *srv, const char *what, enum gw_severity sev,
                             const char *why, json_t *tail)
{
    size_t n = json_array_size(tail), from = n > 5 ? n - 5 : 0;
    char *msg = gw_xasprintf("%s%s", why, n ? "; last stderr lines:" : "");

    for (size_t i = from; i < n; i++) {
        char *next = gw_xasprintf("%s\n%s", msg, json_string_value(json_array_get(tail, i)));
        free(msg);
        msg = next;
    }
    gw_server_problem(srv, what, sev, NULL, msg);
    free(msg);
}

/* ---- settling (readyz, required servers) ---- */

void gw_servers_check_settled(struct gw_servers *s)
{
    if (s->settled_told || !gw_servers_settled(s))
        return;
    s->settled_told = true;
    gw_catalog_settle(s->catalog);
    if (s->cbs.on_settled != NULL)
        s->cbs.on_settled(s->cbs.data);
}

void gw_server_first_attempt_done(struct server *srv, bool ok)
{
    if (srv->first_done || srv->replaces != NULL)
        return;
    srv->first_done = true;
    if (!ok && srv->cfg->required && srv->owner->cbs.on_required_failed != NULL) {
        char *why = gw_xasprintf("required server '%s' could not be made ready: %s", srv->cfg->id,
                                 srv->last_error ? srv->last_error : "unknown error");
        srv->owner->cbs.on_required_failed(srv->owner->cbs.data, why);
        free(why);
    }
    gw_servers_check_settled(srv->owner);
}

/* ---- slots ---- */

size_t gw_server_count_slots(const struct server *srv, int role, bool ready_only)
{
    size_t n = 0;

    for (const struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        if ((role < 0 ? sl->role != ROLE_RETIRED : sl->role == (enum slot_role)role) &&
            (!ready_only || sl->ready))
            n++;
    }
    return n;
}

struct slot *gw_server_find_slot(const struct server *srv, enum slot_role role, bool ready)
{
    for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        if (sl->role == role && (!ready || sl->ready))
            return sl;
    }
    return NULL;
}

/* The slot stops taking work; its instance drains and stops. */
void gw_slot_retire(struct slot *sl)
{
    if (sl->role == ROLE_RETIRED)
        return;
    sl->role = ROLE_RETIRED;
    sl->ready = false;
    sl->srv->owner->hooks->slot_gone(sl);
    gw_instance_stop(sl->inst, sl->srv->snap->gateway.shutdown_grace_ms);
}

static void server_free_if_done(struct server *srv)
{
    struct gw_servers *s = srv->owner;

    if (!srv->removed || srv->slots != NULL || !srv->timer_closed)
        return;
    for (struct server **link = &s->dying; *link != NULL; link = &(*link)->next) {
        if (*link == srv) {
            *link = srv->next;
            break;
        }
    }
    gw_config_unref(srv->snap);
    gw_leases_free(&srv->leases);
    free(srv->last_error);
    gw_oauth_free(srv->oauth);
    json_decref(srv->stderr_tail);
    json_decref(srv->extensions);
    free(srv);
    gw_servers_maybe_finish_close(s);
}

static void on_timer_closed(uv_handle_t *h)
{
    struct server *srv = h->data;

    srv->timer_closed = true;
    server_free_if_done(srv);
}

/* The timer brings back the discovery/shared instance, or the spares. */
static void on_restart_timer(uv_timer_t *t)
{
    struct server *srv = t->data;
    enum slot_role first = srv->cfg->truely_stateless ? ROLE_SHARED : ROLE_DISCOVERY;

    if (srv->state == SRV_READY && !srv->cfg->truely_stateless) {
        gw_server_top_up_spares(srv);
        return;
    }
    if (gw_server_find_slot(srv, first, false) == NULL) {
        srv->restarts++;
        gw_slot_spawn(srv, first);
    }
}

void gw_server_schedule_restart(struct server *srv)
{
    if (srv->removed || srv->replaces != NULL || srv->owner->closing ||
        uv_is_active((uv_handle_t *)&srv->timer))
        return;
    if (srv->ready_at_ms && gw_now_ms() - srv->ready_at_ms >= BACKOFF_RESET_MS)
        srv->backoff_ms = BACKOFF_MIN_MS;
    srv->ready_at_ms = 0;
    gw_log(GW_LOG_INFO, "restarting after backoff", "server", srv->cfg->id, NULL);
    uv_timer_start(&srv->timer, on_restart_timer, srv->backoff_ms, 0);
    srv->backoff_ms = srv->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : srv->backoff_ms * 2;
}

/* The replacement spare is spawned a little later: uv_spawn blocks the
 * loop for milliseconds (fork, then waiting for exec), and the call that
 * took a spare should be answered first. */
void gw_server_top_up_soon(struct server *srv)
{
    if (!uv_is_active((uv_handle_t *)&srv->timer))
        uv_timer_start(&srv->timer, on_restart_timer, SPARE_TOPUP_DELAY_MS, 0);
}

void gw_server_top_up_spares(struct server *srv)
{
    const struct gw_gateway_config *gw = &srv->snap->gateway;

    if (srv->cfg->truely_stateless || srv->state != SRV_READY || srv->removed ||
        srv->owner->closing)
        return;
    while (gw_server_count_slots(srv, ROLE_SPARE, false) < (size_t)gw->warm_spares &&
           gw_server_count_slots(srv, -1, false) < (size_t)gw->max_instances_per_server) {
        if (gw_slot_spawn(srv, ROLE_SPARE) == NULL)
            return;
    }
}

/* ---- instance events ---- */

static void inst_ready(struct gw_instance *inst, void *data)
{
    struct slot *slot = data;
    struct server *srv = slot->srv;

    if (slot->role == ROLE_RETIRED)
        return;
    slot->ready = true;
    if (srv->era == GW_MCP_ERA_AUTO && gw_instance_era(inst) != GW_MCP_ERA_AUTO) {
        srv->era = gw_instance_era(inst);
        gw_log(GW_LOG_INFO, "upstream revision learnt", "server", srv->cfg->id, "protocol",
               srv->era == GW_MCP_ERA_MODERN ? GW_MCP_MODERN_VERSION : "2025-era", NULL);
    }
    switch (slot->role) {
    case ROLE_DISCOVERY:
    case ROLE_SHARED:
        srv->ready_at_ms = gw_now_ms();
        gw_server_list_tools(srv, slot);
        if (slot->role == ROLE_SHARED)
            srv->owner->hooks->shared_ready(srv, slot);
        break;
    case ROLE_LEASED:
        srv->owner->hooks->lease_ready(slot->lease);
        break;
    default:
        break;
    }
}

static void lease_died(struct server *srv, struct slot *slot, const char *reason)
{
    char *why = gw_servers_mask(srv, reason);

    gw_lease_lost(slot->lease, why);
    free(why);
}

static void inst_failed(struct gw_instance *inst, const char *why, void *data)
{
    struct slot *slot = data;
    struct server *srv = slot->srv;
    enum slot_role role = slot->role;
    json_t *tail = gw_instance_stderr_tail(inst);

    if (slot->lease != NULL)
        lease_died(srv, slot, why);
    srv->owner->hooks->abandon(srv->owner, NULL, slot, GW_MCP_E_TRANSPORT, why);
    gw_slot_retire(slot);
    json_decref(srv->stderr_tail);
    srv->stderr_tail = tail;
    if (role == ROLE_RETIRED || srv->removed)
        return;
    if (srv->replaces != NULL) {
        gw_server_pending_failed(srv, why);
        return;
    }
    if (gw_server_oauth_failed(srv))
        return;
    gw_server_set_error(srv, why);
    if (role == ROLE_LEASED || (role == ROLE_SPARE && srv->state == SRV_READY)) {
        gw_server_death_problem(srv, "instance", GW_SEV_WARNING, why, tail);
        gw_server_schedule_restart(srv);
        return;
    }
    gw_server_death_problem(srv, "start", GW_SEV_ERROR, why, tail);
    gw_server_set_state(srv, srv->state == SRV_READY || srv->state == SRV_DEGRADED ? SRV_DEGRADED
                                                                                   : SRV_FAILED);
    gw_server_first_attempt_done(srv, false);
    gw_server_schedule_restart(srv);
}

static void inst_tools_changed(struct gw_instance *inst, void *data)
{
    struct slot *slot = data;

    if (slot->srv->state == SRV_READY && slot->ready)
        gw_server_list_tools(slot->srv, slot);
}

void gw_servers_route(struct gw_servers *s, const char *method, gw_notify_fn fn)
{
    /* Only the fixed registrations of gw_servers_new come here: more than
     * the table holds is a programming error, not an input. */
    if (s->nroutes == GW_NOTIFY_ROUTES_MAX)
        abort();
    s->routes[s->nroutes++] = (struct gw_notify_route){method, fn};
}

static void inst_notification(struct gw_instance *inst, const char *method, json_t *params,
                              void *data)
{
    struct slot *slot = data;
    struct gw_servers *s = slot->srv->owner;

    for (size_t i = 0; i < s->nroutes; i++) {
        if (strcmp(s->routes[i].method, method) == 0) {
            s->routes[i].fn(slot, method, params);
            return;
        }
    }
    /* Anything else (a list_changed of something not served, a method the
     * gateway does not know) concerns no caller: dropped. */
}

static int inst_request(struct gw_instance *inst, const char *method, json_t *id, json_t *params,
                        gw_mcp_handle origin, void *data)
{
    struct slot *slot = data;

    return slot->srv->owner->hooks->server_request(slot, method, id, params, origin);
}

static void inst_closed(struct gw_instance *inst, void *data)
{
    struct slot *slot = data;
    struct server *srv = slot->srv;
    struct slot **link = &srv->slots;

    while (*link != slot)
        link = &(*link)->next;
    *link = slot->next;
    free(slot);
    server_free_if_done(srv);
}

struct slot *gw_slot_spawn(struct server *srv, enum slot_role role)
{
    struct slot *slot = gw_xcalloc(1, sizeof *slot);
    struct gw_instance_cbs cbs = {
        inst_ready,   inst_failed, inst_tools_changed,        inst_closed, inst_notification,
        inst_request, slot,        gw_server_sandbox_netcheck};
    static const enum gw_mcp_era eras[] = {[GW_PROTOCOL_AUTO] = GW_MCP_ERA_AUTO,
                                           [GW_PROTOCOL_LEGACY] = GW_MCP_ERA_LEGACY,
                                           [GW_PROTOCOL_MODERN] = GW_MCP_ERA_MODERN};
    /* The HTTP+SSE transport exists only in 2024-11-05: no probe there. */
    enum gw_mcp_era era = srv->cfg->transport == GW_TRANSPORT_SSE ? GW_MCP_ERA_LEGACY
                          : srv->era != GW_MCP_ERA_AUTO           ? srv->era
                                                                  : eras[srv->cfg->protocol];
    char *why = NULL;

    slot->srv = srv;
    slot->role = role;
    gw_server_sandbox_check(srv);
    if (gw_instance_start(srv->owner->loop, srv->owner->multi, srv->snap, srv->cfg,
                          gw_server_oauth(srv), era, &cbs, ++srv->seq, &slot->inst, &why) != 0) {
        free(slot);
        if (srv->replaces != NULL) {
            gw_server_pending_failed(srv, why);
            free(why);
            return NULL;
        }
        gw_server_set_error(srv, why);
        gw_server_problem(srv, "start", GW_SEV_ERROR, NULL, why);
        free(why);
        if (srv->state == SRV_STARTING)
            gw_server_set_state(srv, SRV_FAILED);
        gw_server_first_attempt_done(srv, false);
        gw_server_schedule_restart(srv);
        return NULL;
    }
    slot->next = srv->slots;
    srv->slots = slot;
    return slot;
}

/* ---- the set of servers ---- */

static void no_lease_ready(struct lease *l) {}

static void no_shared_ready(struct server *srv, struct slot *slot) {}

static void no_abandon(struct gw_servers *s, struct lease *l, struct slot *slot, int code,
                       const char *why)
{
}

static void no_abandon_shared(struct server *srv, int code, const char *why) {}

/* Refused: the instance's client answers it -32601. */
static int no_server_request(struct slot *slot, const char *method, json_t *id, json_t *params,
                             gw_mcp_handle origin)
{
    return -1;
}

static void no_slot_gone(struct slot *slot) {}

/* Before dispatch is attached no call exists, so nothing waits. */
static const struct gw_slot_hooks no_hooks = {
    .lease_ready = no_lease_ready,
    .shared_ready = no_shared_ready,
    .abandon = no_abandon,
    .abandon_shared = no_abandon_shared,
    .server_request = no_server_request,
    .slot_gone = no_slot_gone,
};

struct gw_servers *gw_servers_new(uv_loop_t *loop, struct gw_curl_uv *multi,
                                  struct gw_problems *problems, const struct gw_servers_cbs *cbs)
{
    struct gw_servers *s = gw_xcalloc(1, sizeof *s);

    s->loop = loop;
    s->hooks = &no_hooks;
    s->multi = multi;
    s->problems = problems;
    s->catalog = gw_catalog_new();
    s->search = gw_toolsearch_new();
    s->active = gw_ts_active_new();
    s->cbs = *cbs;
    s->extras = gw_extras_new();
    gw_extra_routes(s);
    uv_timer_init(loop, &s->grace);
    s->grace.data = s;
    uv_timer_init(loop, &s->sweep);
    s->sweep.data = s;
    uv_timer_start(&s->sweep, gw_servers_on_sweep, SWEEP_MS, SWEEP_MS);
    uv_unref((uv_handle_t *)&s->sweep);
    gw_servers_ts_init(s);
    return s;
}

struct server *gw_servers_find(const struct gw_servers *s, const char *id)
{
    for (struct server *srv = s->head; srv != NULL; srv = srv->next) {
        if (strcmp(srv->cfg->id, id) == 0)
            return srv;
    }
    return NULL;
}

struct server *gw_server_alloc(struct gw_servers *s, struct gw_config *c,
                               const struct gw_server_config *cfg)
{
    struct server *srv = gw_xcalloc(1, sizeof *srv);

    srv->owner = s;
    srv->snap = gw_config_ref(c);
    srv->cfg = cfg;
    srv->backoff_ms = BACKOFF_MIN_MS;
    srv->loaded_at = time(NULL);
    uv_timer_init(s->loop, &srv->timer);
    srv->timer.data = srv;
    gw_leases_init(&srv->leases, &gw_server_lease_source, srv, srv);
    return srv;
}

void gw_server_start(struct server *srv)
{
    if (!srv->cfg->ok) {
        srv->state = SRV_FAILED;
        gw_server_set_error(srv, srv->cfg->error ? srv->cfg->error : "invalid configuration");
        gw_server_first_attempt_done(srv, false);
        return;
    }
    srv->state = SRV_STARTING;
    gw_slot_spawn(srv, srv->cfg->truely_stateless ? ROLE_SHARED : ROLE_DISCOVERY);
}

/* Moves `srv` (already unlinked) to the dying list, ends its leases and
 * stops its instances; the close callbacks free it. Its tools and problems
 * are the caller's business. */
void gw_server_retire(struct server *srv, const char *why)
{
    srv->removed = true;
    srv->next = srv->owner->dying;
    srv->owner->dying = srv;
    gw_leases_end_all(&srv->leases, why);
    for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        srv->owner->hooks->abandon(srv->owner, NULL, sl, GW_SERVERS_E_RELEASED, why);
        gw_slot_retire(sl);
    }
    srv->owner->hooks->abandon_shared(srv, GW_SERVERS_E_RELEASED, why);
    uv_close((uv_handle_t *)&srv->timer, on_timer_closed);
}

/* A removed server: its tools leave the catalog, its problems go. */
void gw_server_remove(struct server *srv)
{
    struct gw_cat_diags diags = {0};
    uint64_t before = gw_catalog_version(srv->owner->catalog);

    gw_server_retire(srv, "the server was removed or replaced");
    gw_extra_forget(srv);
    gw_catalog_remove(srv->owner->catalog, srv->cfg->id, &diags);
    gw_servers_publish_diags(srv->owner, NULL, &diags);
    gw_cat_diags_free(&diags);
    gw_server_catalog_event(srv, before, "removed");
    if (!srv->owner->closing)
        gw_server_clear_problems(srv, "");
}

bool gw_servers_settled(const struct gw_servers *s)
{
    for (const struct server *srv = s->head; srv != NULL; srv = srv->next) {
        if (!srv->first_done)
            return false;
    }
    return true;
}

struct gw_catalog *gw_servers_catalog(struct gw_servers *s)
{
    return s->catalog;
}

struct gw_toolsearch *gw_servers_toolsearch(struct gw_servers *s)
{
    return s->search;
}

static const char *const role_names[] = {"discovery", "spare", "shared", "leased", "retired"};

/* Every dialog reaches the same server state: a truely-stateless server,
 * or a 2026-07-28 one over HTTP, which has no session to keep dialogs
 * apart on (its instances are connections, not copies of its state). */
static bool server_shared_upstream(const struct server *srv)
{
    return srv->cfg->truely_stateless ||
           (srv->era == GW_MCP_ERA_MODERN && srv->cfg->transport != GW_TRANSPORT_STDIO);
}

static json_t *server_json(const struct server *srv)
{
    const struct gw_cat_toolset *ts = gw_catalog_toolset(srv->owner->catalog, srv->cfg->id);
    json_t *insts = json_array();
    char loaded[32];

    for (const struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        json_t *o = gw_instance_to_json(sl->inst);
        json_object_set_new(o, "role", json_string(role_names[sl->role]));
        if (sl->lease != NULL)
            json_object_set_new(o, "dialog", json_string(sl->lease->dialog));
        json_array_append_new(insts, o);
    }
    gw_format_time(srv->loaded_at, loaded, sizeof loaded);
    json_t *j = json_pack(
        "{s:s, s:s, s:s, s:s?, s:b, s:s, s:b, s:i, s:o, s:i, s:s?, s:s, s:s, s:s, "
        "s:i, s:O?, s:o}",
        "id", srv->cfg->id, "transport", gw_transport_name(srv->cfg->transport), "protocol",
        gw_protocol_name(srv->cfg->protocol), "protocolVersion",
        srv->era == GW_MCP_ERA_MODERN   ? GW_MCP_MODERN_VERSION
        : srv->era == GW_MCP_ERA_LEGACY ? "2025-era"
                                        : NULL,
        "sharedUpstream", server_shared_upstream(srv), "state", server_state_names[srv->state],
        "leased", !srv->cfg->truely_stateless, "tools", ts ? (int)gw_cat_toolset_ntools(ts) : 0,
        "instances", insts, "leases", (int)gw_server_count_slots(srv, ROLE_LEASED, false),
        "lastError", srv->last_error, "configHash", srv->cfg->spawn_hash, "catalogHash",
        srv->cfg->catalog_hash, "loadedAt", loaded, "restarts", (int)srv->restarts, "lastStderr",
        srv->stderr_tail, "config", gw_server_config_to_json(srv->cfg));
    if (srv->state == SRV_NEEDS_AUTH) {
        char *url;
        free(gw_server_authorization(srv, &url));
        if (url)
            json_object_set_new(j, "authorize", json_string(url));
        free(url);
    }
    if (srv->cfg->transport == GW_TRANSPORT_STDIO)
        json_object_set_new(j, "sandbox", gw_server_sandbox_json(srv));
    json_t *grant = srv->oauth ? gw_oauth_grant_json(srv->oauth) : NULL;
    if (grant)
        json_object_set_new(j, "grant", grant);
    return j;
}

size_t gw_servers_stats(const struct gw_servers *s, struct gw_server_stats *out, size_t cap)
{
    size_t n = 0;

    for (const struct server *srv = s->head; srv != NULL; srv = srv->next, n++) {
        struct gw_server_stats *st = n < cap ? &out[n] : NULL;
        if (st == NULL)
            continue;
        *st = (struct gw_server_stats){.id = srv->cfg->id,
                                       .restarts = srv->restarts,
                                       .net_allowed = srv->net_allowed,
                                       .net_denied = srv->net_denied,
                                       .needs_authorization = srv->state == SRV_NEEDS_AUTH};
        st->leases = (unsigned)gw_server_count_slots(srv, ROLE_LEASED, false);
        for (const struct slot *sl = srv->slots; sl != NULL; sl = sl->next)
            st->instances[gw_instance_state(sl->inst)]++;
    }
    return n;
}

json_t *gw_servers_json(const struct gw_servers *s)
{
    json_t *list = json_array();

    for (const struct server *srv = s->head; srv != NULL; srv = srv->next)
        json_array_append_new(list, server_json(srv));
    return json_pack("{s:o}", "servers", list);
}

/* ---- shutdown ---- */

/* The grace and sweep timers and the search's handles close last; the
 * last close frees `s`. */
static void on_last_timer_closed(uv_handle_t *h)
{
    struct gw_servers *s = h->data;

    if (--s->timers_open > 0)
        return;
    gw_catalog_free(s->catalog);
    gw_toolsearch_free(s->search);
    gw_ts_active_free(s->active);
    gw_policy_limits_free(s->limits);
    gw_extras_free(s->extras);
    free(s->base_url);
    for (size_t i = 0; i < GW_TOOL_LOAD_BUCKETS; i++) {
        while (s->tool_loads[i] != NULL) {
            struct gw_tool_load *t = s->tool_loads[i];
            s->tool_loads[i] = t->next;
            free(t);
        }
    }
    gw_config_unref(s->config);
    s->close_cb(s->close_data);
    free(s);
}

void gw_servers_maybe_finish_close(struct gw_servers *s)
{
    if (!s->closing || s->dying != NULL || uv_is_closing((uv_handle_t *)&s->grace))
        return;
    s->timers_open = 4;
    uv_close((uv_handle_t *)&s->grace, on_last_timer_closed);
    uv_close((uv_handle_t *)&s->sweep, on_last_timer_closed);
    uv_close((uv_handle_t *)&s->ts_check, on_last_timer_closed);
    uv_close((uv_handle_t *)&s->ts_idle, on_last_timer_closed);
}

static void on_grace(uv_timer_t *t)
{
    struct gw_servers *s = t->data;

    gw_log(GW_LOG_WARN, "shutdown grace over; killing the remaining instances", NULL);
    for (struct server *srv = s->dying; srv != NULL; srv = srv->next) {
        for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next)
            gw_instance_kill(sl->inst);
    }
}

void gw_servers_close(struct gw_servers *s, uint64_t grace_ms, void (*cb)(void *data), void *data)
{
    s->closing = true;
    s->close_cb = cb;
    s->close_data = data;
    uv_timer_stop(&s->sweep);
    while (s->pending != NULL)
        gw_server_discard_pending(s->pending);
    while (s->head != NULL) {
        struct server *srv = s->head;
        s->head = srv->next;
        gw_server_remove(srv);
    }
    uv_timer_start(&s->grace, on_grace, grace_ms, 0);
    uv_unref((uv_handle_t *)&s->grace);
    gw_servers_maybe_finish_close(s);
}
