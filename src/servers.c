/* Server runtimes: spawn, discover, commit, restart, lease, stop.
 *
 * Each live instance sits in a slot whose role says what it is for (see
 * servers_internal.h). Calls are dispatch.c's; this file decides which
 * instances exist and who holds them. */
#include "gw/servers.h"

#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/redact.h"
#include "gw/servers_internal.h"
#include "gw/util.h"

#define BACKOFF_MIN_MS       500
#define BACKOFF_MAX_MS       30000
#define BACKOFF_RESET_MS     60000
#define SWEEP_MS             1000
#define SPARE_TOPUP_DELAY_MS 25

static const char *const server_state_names[] = {"starting", "ready", "degraded", "failed",
                                                 "stopped"};

static struct slot *slot_spawn(struct server *srv, enum slot_role role);
static void top_up_spares(struct server *srv);
static void maybe_finish_close(struct gw_servers *s);
static void list_tools(struct server *srv, struct slot *slot);
static void pending_failed(struct server *srv, const char *why);
static void swap_in(struct server *srv);

/* ---- events ---- */

static void emit(struct gw_servers *s, const char *type, json_t *payload)
{
    if (s->cbs.on_event != NULL)
        s->cbs.on_event(s->cbs.data, type, payload);
    else
        json_decref(payload);
}

static void set_state(struct server *srv, enum server_state st)
{
    if (srv->state == st)
        return;
    srv->state = st;
    if (srv->replaces != NULL)
        return; /* a replacement being prepared is not visible yet */
    emit(srv->owner, "server",
         json_pack("{s:s, s:s, s:s?}", "server", srv->cfg->id, "state", server_state_names[st],
                   "lastError", srv->last_error));
}

/* Emits a catalog event when an operation changed the catalog version. */
static void catalog_event(struct server *srv, uint64_t before, const char *change)
{
    uint64_t v = gw_catalog_version(srv->owner->catalog);

    if (v != before)
        emit(srv->owner, "catalog",
             json_pack("{s:I, s:s, s:s}", "version", (json_int_t)v, "server", srv->cfg->id,
                       "change", change));
}

/* ---- problems ---- */

char *gw_servers_mask(const struct server *srv, const char *text)
{
    struct gw_redact *r = gw_redact_new();
    char *copy = gw_xstrdup(text);

    gw_redact_add_server(r, srv->cfg);
    gw_redact_add(r, srv->snap->gateway.auth_token);
    copy[gw_redact_line(r, copy, strlen(copy), false)] = '\0';
    gw_redact_free(r);
    return copy;
}

static void server_problem(struct server *srv, const char *what, enum gw_severity sev,
                           const char *tool, const char *message)
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

static void server_clear_problems(struct server *srv, const char *what)
{
    char *prefix = gw_xasprintf("server:%s:%s", srv->cfg->id, what);

    gw_problems_clear_prefix(srv->owner->problems, prefix);
    free(prefix);
}

static void set_error(struct server *srv, const char *why)
{
    free(srv->last_error);
    srv->last_error = why ? gw_servers_mask(srv, why) : NULL;
}

/* Catalog diagnostics become Problems (warnings and errors) or log lines
 * (info: seed 004 logs those at INFO). A diagnostic about another server's
 * tool (one that lost a name, or got one back) is that server's Problem;
 * `srv` is the server whose commit caused them, or NULL. */
static void publish_cat_diags(struct gw_servers *s, struct server *srv,
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
        server_problem(to, what, g->severity, g->tool, g->message);
        free(what);
    }
}

/* An instance's death as a Problem: the reason and the last stderr lines. */
static void death_problem(struct server *srv, const char *what, enum gw_severity sev,
                          const char *why, json_t *tail)
{
    size_t n = json_array_size(tail), from = n > 5 ? n - 5 : 0;
    char *msg = gw_xasprintf("%s%s", why, n ? "; last stderr lines:" : "");

    for (size_t i = from; i < n; i++) {
        char *next = gw_xasprintf("%s\n%s", msg, json_string_value(json_array_get(tail, i)));
        free(msg);
        msg = next;
    }
    server_problem(srv, what, sev, NULL, msg);
    free(msg);
}

/* ---- settling (readyz, required servers) ---- */

static void check_settled(struct gw_servers *s)
{
    if (s->settled_told || !gw_servers_settled(s))
        return;
    s->settled_told = true;
    gw_catalog_settle(s->catalog);
    if (s->cbs.on_settled != NULL)
        s->cbs.on_settled(s->cbs.data);
}

static void first_attempt_done(struct server *srv, bool ok)
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
    check_settled(srv->owner);
}

/* ---- slots ---- */

static size_t count_slots(const struct server *srv, int role, bool ready_only)
{
    size_t n = 0;

    for (const struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        if ((role < 0 ? sl->role != ROLE_RETIRED : sl->role == (enum slot_role)role) &&
            (!ready_only || sl->ready))
            n++;
    }
    return n;
}

static struct slot *find_slot(const struct server *srv, enum slot_role role, bool ready)
{
    for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        if (sl->role == role && (!ready || sl->ready))
            return sl;
    }
    return NULL;
}

/* The slot stops taking work; its instance drains and stops. */
static void slot_retire(struct slot *sl)
{
    if (sl->role == ROLE_RETIRED)
        return;
    sl->role = ROLE_RETIRED;
    sl->ready = false;
    gw_subs_slot_gone(sl);
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
    json_decref(srv->stderr_tail);
    json_decref(srv->extensions);
    free(srv);
    maybe_finish_close(s);
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
        top_up_spares(srv);
        return;
    }
    if (find_slot(srv, first, false) == NULL) {
        srv->restarts++;
        slot_spawn(srv, first);
    }
}

static void schedule_restart(struct server *srv)
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

static void top_up_spares(struct server *srv)
{
    const struct gw_gateway_config *gw = &srv->snap->gateway;

    if (srv->cfg->truely_stateless || srv->state != SRV_READY || srv->removed ||
        srv->owner->closing)
        return;
    while (count_slots(srv, ROLE_SPARE, false) < (size_t)gw->warm_spares &&
           count_slots(srv, -1, false) < (size_t)gw->max_instances_per_server) {
        if (slot_spawn(srv, ROLE_SPARE) == NULL)
            return;
    }
}

/* ---- discovery ---- */

static const char *first_error(const struct gw_toolset_build *b)
{
    for (size_t i = 0; i < b->diags.n; i++) {
        if (b->diags.v[i].severity == GW_SEV_ERROR)
            return b->diags.v[i].message;
    }
    return "its tool listing was refused";
}

static bool commit_listing(struct server *srv, json_t *listing)
{
    struct gw_catalog *cat = srv->owner->catalog;
    struct gw_toolset_build *b = gw_catalog_derive(srv->cfg, listing);
    struct gw_cat_diags diags = {0};
    uint64_t before = gw_catalog_version(cat);
    char *prefix = gw_xasprintf("server:%s:catalog:", srv->cfg->id);
    bool ok = b->ok, existed;

    if (!ok && srv->replaces != NULL) {
        pending_failed(srv, first_error(b));
        gw_toolset_build_free(b);
        free(prefix);
        return false;
    }
    if (srv->replaces != NULL)
        swap_in(srv);
    existed = gw_catalog_toolset(cat, srv->cfg->id) != NULL;
    gw_problems_mark(srv->owner->problems, prefix);
    publish_cat_diags(srv->owner, srv, &b->diags);
    b->rank = (size_t)(srv->cfg - srv->snap->servers);
    gw_catalog_commit(cat, b, srv->snap->gateway.tool_changes, &diags);
    publish_cat_diags(srv->owner, srv, &diags);
    gw_cat_diags_free(&diags);
    gw_problems_sweep(srv->owner->problems, prefix);
    free(prefix);
    catalog_event(srv, before, existed ? "changed" : "added");
    if (!ok && srv->state == SRV_READY) {
        /* A re-listing refused: the last known good tools stay served. */
        set_error(srv, "the new tool listing was refused; serving the last known good one");
        return true;
    }
    if (!ok) {
        set_error(srv, "the tool listing was refused (see problems)");
        set_state(srv, SRV_FAILED);
        for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next)
            slot_retire(sl);
        first_attempt_done(srv, false);
        return false;
    }
    set_error(srv, NULL);
    /* Cleared here rather than when an instance initializes, so that a
     * server whose every attempt fails at tools/list keeps its Problem while
     * the next attempt waits for an answer. */
    server_clear_problems(srv, "start");
    set_state(srv, SRV_READY);
    first_attempt_done(srv, true);
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
        pending_failed(srv, why);
        free(why);
        free(msg);
        return;
    }
    set_error(srv, why);
    server_problem(srv, "start", GW_SEV_ERROR, NULL, msg);
    free(why);
    free(msg);
    if (srv->state == SRV_READY)
        return; /* a re-listing: keep serving the last known good tools */
    slot_retire(slot);
    set_state(srv, SRV_FAILED);
    first_attempt_done(srv, false);
    schedule_restart(srv);
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
    if (!commit_listing(srv, reply->result))
        return;
    gw_extra_discover(srv, slot, ~0u);
    if (slot->role == ROLE_DISCOVERY)
        slot->role = ROLE_SPARE;
    top_up_spares(srv);
    if (srv->relist) {
        srv->relist = false;
        list_tools(srv, slot);
    }
}

static void list_tools(struct server *srv, struct slot *slot)
{
    uint64_t timeout = srv->cfg->request_timeout_ms ? srv->cfg->request_timeout_ms
                                                    : srv->snap->gateway.request_timeout_ms;
    if (srv->listing) {
        srv->relist = true;
        return;
    }
    if (!srv->cfg->load_tools) {
        bool ok = commit_listing(srv, NULL);
        if (ok)
            gw_extra_discover(srv, slot, ~0u);
        if (ok && slot->role == ROLE_DISCOVERY)
            slot->role = ROLE_SPARE;
        top_up_spares(srv);
        return;
    }
    if (gw_instance_list_tools(slot->inst, timeout, on_listing, slot) == 0)
        srv->listing = true;
}

/* ---- instance events ---- */

static void inst_ready(struct gw_instance *inst, void *data)
{
    struct slot *slot = data;
    struct server *srv = slot->srv;

    if (slot->role == ROLE_RETIRED)
        return;
    slot->ready = true;
    switch (slot->role) {
    case ROLE_DISCOVERY:
    case ROLE_SHARED:
        srv->ready_at_ms = gw_now_ms();
        list_tools(srv, slot);
        if (slot->role == ROLE_SHARED)
            gw_dispatch_shared_ready(srv, slot);
        break;
    case ROLE_LEASED:
        gw_dispatch_lease_ready(slot->lease);
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
    gw_dispatch_abandon(srv->owner, NULL, slot, GW_MCP_E_TRANSPORT, why);
    slot_retire(slot);
    json_decref(srv->stderr_tail);
    srv->stderr_tail = tail;
    if (role == ROLE_RETIRED || srv->removed)
        return;
    if (srv->replaces != NULL) {
        pending_failed(srv, why);
        return;
    }
    set_error(srv, why);
    if (role == ROLE_LEASED || (role == ROLE_SPARE && srv->state == SRV_READY)) {
        death_problem(srv, "instance", GW_SEV_WARNING, why, tail);
        schedule_restart(srv);
        return;
    }
    death_problem(srv, "start", GW_SEV_ERROR, why, tail);
    set_state(srv,
              srv->state == SRV_READY || srv->state == SRV_DEGRADED ? SRV_DEGRADED : SRV_FAILED);
    first_attempt_done(srv, false);
    schedule_restart(srv);
}

static void inst_tools_changed(struct gw_instance *inst, void *data)
{
    struct slot *slot = data;

    if (slot->srv->state == SRV_READY && slot->ready)
        list_tools(slot->srv, slot);
}

/* prompts/resources list_changed re-list; resources/updated goes to the
 * subscribers; progress and logs go to calls. */
static void inst_notification(struct gw_instance *inst, const char *method, json_t *params,
                              void *data)
{
    struct slot *slot = data;
    bool ready = slot->srv->state == SRV_READY && slot->ready;

    if (strcmp(method, "notifications/resources/updated") == 0)
        gw_subs_updated(slot, params);
    else if (strcmp(method, "notifications/prompts/list_changed") == 0 && ready)
        gw_extra_discover(slot->srv, slot, 1u << GW_EXTRA_PROMPTS);
    else if (strcmp(method, "notifications/resources/list_changed") == 0 && ready)
        gw_extra_discover(slot->srv, slot, (1u << GW_EXTRA_RESOURCES) | (1u << GW_EXTRA_TEMPLATES));
    else
        gw_relay_notification(slot, method, params);
}

static int inst_request(struct gw_instance *inst, const char *method, json_t *id, json_t *params,
                        void *data)
{
    return gw_relay_request(data, method, id, params);
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

static struct slot *slot_spawn(struct server *srv, enum slot_role role)
{
    struct slot *slot = gw_xcalloc(1, sizeof *slot);
    struct gw_instance_cbs cbs = {inst_ready,  inst_failed,       inst_tools_changed,
                                  inst_closed, inst_notification, inst_request,
                                  slot};
    char *why = NULL;

    slot->srv = srv;
    slot->role = role;
    if (gw_instance_start(srv->owner->loop, srv->owner->multi, srv->snap, srv->cfg, &cbs,
                          ++srv->seq, &slot->inst, &why) != 0) {
        free(slot);
        if (srv->replaces != NULL) {
            pending_failed(srv, why);
            free(why);
            return NULL;
        }
        set_error(srv, why);
        server_problem(srv, "start", GW_SEV_ERROR, NULL, why);
        free(why);
        if (srv->state == SRV_STARTING)
            set_state(srv, SRV_FAILED);
        first_attempt_done(srv, false);
        schedule_restart(srv);
        return NULL;
    }
    slot->next = srv->slots;
    srv->slots = slot;
    return slot;
}

/* ---- the lease table's slot source ---- */

/* A ready spare first, then one still starting, then a new instance.
 * `fresh` (a call sent again after its session was lost): a new instance
 * first while there is room, as the spares may hold sessions the upstream
 * lost too (it restarted). */
static struct slot *lease_slot(struct server *srv, bool fresh, int *code)
{
    bool room = count_slots(srv, -1, false) < (size_t)srv->snap->gateway.max_instances_per_server;
    struct slot *sl = NULL;

    if (!fresh || !room) {
        sl = find_slot(srv, ROLE_SPARE, true);
        if (sl == NULL)
            sl = find_slot(srv, ROLE_SPARE, false);
    }
    if (sl != NULL)
        return sl;
    if (!room) {
        *code = GW_SERVERS_E_LIMIT;
        return NULL;
    }
    sl = slot_spawn(srv, ROLE_LEASED);
    if (sl == NULL)
        *code = GW_SERVERS_E_NOT_READY;
    return sl;
}

static int lease_take(void *ctx, struct lease *l, bool fresh)
{
    struct server *srv = ctx;
    struct slot *sl;
    int code = 0;

    if (srv->state != SRV_READY)
        return GW_SERVERS_E_NOT_READY;
    if ((sl = lease_slot(srv, fresh, &code)) == NULL)
        return code;
    sl->role = ROLE_LEASED;
    sl->lease = l;
    l->slot = sl;
    /* The replacement spare is spawned a little later: uv_spawn blocks the
     * loop for milliseconds (fork, then waiting for exec), and the call
     * that took this spare should be answered first. */
    if (!uv_is_active((uv_handle_t *)&srv->timer))
        uv_timer_start(&srv->timer, on_restart_timer, SPARE_TOPUP_DELAY_MS, 0);
    return 0;
}

static void lease_unbind(void *ctx, struct lease *l, bool retire)
{
    struct slot *sl = l->slot;

    sl->lease = NULL;
    l->slot = NULL;
    if (retire)
        slot_retire(sl);
}

static bool lease_busy(void *ctx, const struct lease *l)
{
    return l->waiting != NULL || l->slot == NULL || gw_instance_in_flight(l->slot->inst) > 0;
}

static void lease_event(void *ctx, struct lease *l, enum gw_lease_event ev, const char *why)
{
    struct server *srv = ctx;
    const char *id = srv->cfg->id;

    switch (ev) {
    case GW_LEASE_ACQUIRED:
        gw_log(GW_LOG_INFO, "lease", "server", id, "dialog", l->dialog, "instance_ready",
               l->slot->ready ? "yes" : "no", NULL);
        emit(srv->owner, "lease",
             json_pack("{s:s, s:s, s:s, s:I, s:b}", "dialog", l->dialog, "server", id, "action",
                       "acquired", "instance", (json_int_t)gw_instance_seq(l->slot->inst), "warm",
                       l->slot->ready));
        return;
    case GW_LEASE_RELEASED:
        gw_log(GW_LOG_INFO, "lease released", "server", id, "dialog", l->dialog, "reason", why,
               NULL);
        emit(srv->owner, "lease",
             json_pack("{s:s, s:s, s:s, s:s}", "dialog", l->dialog, "server", id, "action",
                       "released", "reason", why));
        gw_dispatch_abandon(srv->owner, l, NULL, GW_SERVERS_E_RELEASED, why);
        return;
    case GW_LEASE_LOST:
        emit(srv->owner, "lease",
             json_pack("{s:s, s:s, s:s, s:s}", "dialog", l->dialog, "server", id, "action", "lost",
                       "reason", why));
        gw_log(GW_LOG_WARN, "leased instance died; the dialog's next call gets a new one", "server",
               id, "dialog", l->dialog, "reason", why, NULL);
        gw_dispatch_abandon(srv->owner, l, l->slot, GW_SERVERS_E_SPAWN, why);
        return;
    case GW_LEASE_ENDED:
        emit(srv->owner, "lease",
             json_pack("{s:s, s:s, s:s}", "dialog", l->dialog, "server", id, "action", "ended"));
        gw_dispatch_abandon(srv->owner, l, NULL, GW_SERVERS_E_RELEASED, why);
        return;
    }
}

static void lease_describe(void *ctx, const struct lease *l, json_t *o)
{
    struct server *srv = ctx;
    struct gw_instance *inst = l->slot->inst;
    const char *session = gw_instance_session(inst);

    json_object_set_new(o, "server", json_string(srv->cfg->id));
    json_object_set_new(o, "instance", json_integer((json_int_t)gw_instance_seq(inst)));
    json_object_set_new(o, "inFlight", json_integer((json_int_t)gw_instance_in_flight(inst)));
    json_object_set_new(o, "ready", json_boolean(l->slot->ready));
    if (srv->cfg->transport == GW_TRANSPORT_STDIO)
        json_object_set_new(o, "pid", json_integer(gw_instance_pid(inst)));
    else
        json_object_set_new(o, "session", session ? json_string(session) : json_null());
}

static const struct gw_lease_source lease_source = {
    .take = lease_take,
    .unbind = lease_unbind,
    .busy = lease_busy,
    .event = lease_event,
    .describe = lease_describe,
};

int gw_servers_release(struct gw_servers *s, const char *dialog, const char *server,
                       json_t *released)
{
    for (struct server *srv = s->head; srv != NULL; srv = srv->next) {
        struct lease *l;
        if (server != NULL && strcmp(srv->cfg->id, server) != 0)
            continue;
        l = gw_lease_find(&srv->leases, dialog);
        if (l != NULL) {
            gw_lease_release(l, "released by the dialog");
            json_array_append_new(released, json_string(srv->cfg->id));
        }
        if (server != NULL)
            return 0;
    }
    return server != NULL ? UV_ENOENT : 0;
}

bool gw_servers_dialog_known(const struct gw_servers *s, const char *dialog)
{
    for (struct server *srv = s->head; srv != NULL; srv = srv->next) {
        if (gw_lease_find(&srv->leases, dialog) != NULL)
            return true;
    }
    return false;
}

static void on_sweep(uv_timer_t *t)
{
    struct gw_servers *s = t->data;
    uint64_t now = gw_now_ms();

    for (struct server *srv = s->head; srv != NULL; srv = srv->next)
        gw_leases_sweep(&srv->leases, now, srv->snap->gateway.lease_idle_timeout_ms);
}

/* ---- the set of servers ---- */

struct gw_servers *gw_servers_new(uv_loop_t *loop, struct gw_curl_uv *multi,
                                  struct gw_problems *problems, const struct gw_servers_cbs *cbs)
{
    struct gw_servers *s = gw_xcalloc(1, sizeof *s);

    s->loop = loop;
    s->multi = multi;
    s->problems = problems;
    s->catalog = gw_catalog_new();
    s->cbs = *cbs;
    s->tool_in_flight = json_object();
    s->extras = gw_extras_new();
    uv_timer_init(loop, &s->grace);
    s->grace.data = s;
    uv_timer_init(loop, &s->sweep);
    s->sweep.data = s;
    uv_timer_start(&s->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
    uv_unref((uv_handle_t *)&s->sweep);
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

static struct server *server_alloc(struct gw_servers *s, struct gw_config *c,
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
    gw_leases_init(&srv->leases, &lease_source, srv, srv);
    return srv;
}

static void server_start(struct server *srv)
{
    if (!srv->cfg->ok) {
        srv->state = SRV_FAILED;
        set_error(srv, srv->cfg->error ? srv->cfg->error : "invalid configuration");
        first_attempt_done(srv, false);
        return;
    }
    srv->state = SRV_STARTING;
    slot_spawn(srv, srv->cfg->truely_stateless ? ROLE_SHARED : ROLE_DISCOVERY);
}

/* Moves `srv` (already unlinked) to the dying list, ends its leases and
 * stops its instances; the close callbacks free it. Its tools and problems
 * are the caller's business. */
static void server_retire(struct server *srv, const char *why)
{
    srv->removed = true;
    srv->next = srv->owner->dying;
    srv->owner->dying = srv;
    gw_leases_end_all(&srv->leases, why);
    for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        gw_dispatch_abandon(srv->owner, NULL, sl, GW_SERVERS_E_RELEASED, why);
        slot_retire(sl);
    }
    gw_dispatch_abandon_shared(srv, GW_SERVERS_E_RELEASED, why);
    uv_close((uv_handle_t *)&srv->timer, on_timer_closed);
}

/* A removed server: its tools leave the catalog, its problems go. */
static void server_remove(struct server *srv)
{
    struct gw_cat_diags diags = {0};
    uint64_t before = gw_catalog_version(srv->owner->catalog);

    server_retire(srv, "the server was removed or replaced");
    gw_extra_forget(srv);
    gw_catalog_remove(srv->owner->catalog, srv->cfg->id, &diags);
    publish_cat_diags(srv->owner, NULL, &diags);
    gw_cat_diags_free(&diags);
    catalog_event(srv, before, "removed");
    if (!srv->owner->closing)
        server_clear_problems(srv, "");
}

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
static void swap_in(struct server *srv)
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
    server_retire(old, "the server's configuration changed");
    server_clear_problems(srv, "reload");
    server_clear_problems(srv, "start");
}

static void discard_pending(struct server *srv)
{
    unlink_pending(srv);
    srv->replaces = NULL;
    server_retire(srv, "the replacement was abandoned");
}

static void pending_failed(struct server *srv, const char *why)
{
    char *msg = gw_xasprintf("the new configuration of server '%s' could not be made ready: %s; "
                             "the last known good one keeps serving",
                             srv->cfg->id, why);

    server_problem(srv, "reload", GW_SEV_ERROR, NULL, msg);
    free(msg);
    discard_pending(srv);
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
            discard_pending(p);
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
    server_clear_problems(srv, "reload");
    if (catalog_changed && srv->state == SRV_READY) {
        json_t *listing = json_incref(gw_catalog_listing(srv->owner->catalog, cfg->id));
        commit_listing(srv, listing);
        json_decref(listing);
        /* load_prompts, load_resources and transforms are catalog inputs */
        struct slot *sl =
            find_slot(srv, srv->cfg->truely_stateless ? ROLE_SHARED : ROLE_SPARE, true);
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
            server_problem(srv, "reload", GW_SEV_WARNING, NULL,
                           "the new configuration of this server has errors (see the config "
                           "problems); the last known good one keeps serving");
            note(sum, "refused", cfg->id);
            return srv;
        }
        if (pending_for(srv->owner, srv) != NULL) {
            note(sum, "changed", cfg->id);
            return srv;
        }
        n = server_alloc(srv->owner, c, cfg);
        n->replaces = srv;
        n->next = srv->owner->pending;
        srv->owner->pending = n;
        server_start(n);
        note(sum, "changed", cfg->id);
        return srv;
    }
    n = server_alloc(srv->owner, c, cfg);
    gw_leases_inherit(&n->leases, &srv->leases);
    n->next = srv->next;
    server_remove(srv);
    server_start(n);
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
        emit(s, "catalog",
             json_pack("{s:I, s:s}", "version", (json_int_t)v, "change", "reserved_tool_names"));
    }
    publish_cat_diags(s, NULL, &diags);
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
            server_remove(srv);
            continue;
        }
        *link = reconcile(srv, c, cfg, sum);
        link = &(*link)->next;
    }
    for (size_t i = 0; i < c->nservers; i++) {
        if (gw_servers_find(s, c->servers[i].id) != NULL)
            continue;
        *link = server_alloc(s, c, &c->servers[i]);
        server_start(*link);
        note(sum, "added", c->servers[i].id);
        link = &(*link)->next;
    }
    apply_catalog_order(s, c);
    check_settled(s);
    return sum;
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

static const char *const role_names[] = {"discovery", "spare", "shared", "leased", "retired"};

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
    return json_pack("{s:s, s:s, s:s, s:b, s:i, s:o, s:i, s:s?, s:s, s:s, s:s, s:i, s:O?, s:o}",
                     "id", srv->cfg->id, "transport", gw_transport_name(srv->cfg->transport),
                     "state", server_state_names[srv->state], "leased", !srv->cfg->truely_stateless,
                     "tools", ts ? (int)gw_cat_toolset_ntools(ts) : 0, "instances", insts, "leases",
                     (int)count_slots(srv, ROLE_LEASED, false), "lastError", srv->last_error,
                     "configHash", srv->cfg->spawn_hash, "catalogHash", srv->cfg->catalog_hash,
                     "loadedAt", loaded, "restarts", (int)srv->restarts, "lastStderr",
                     srv->stderr_tail, "config", gw_server_config_to_json(srv->cfg));
}

json_t *gw_servers_json(const struct gw_servers *s)
{
    json_t *list = json_array();

    for (const struct server *srv = s->head; srv != NULL; srv = srv->next)
        json_array_append_new(list, server_json(srv));
    return json_pack("{s:o}", "servers", list);
}

json_t *gw_servers_dialogs_json(const struct gw_servers *s)
{
    json_t *by_dialog = json_object(), *list = json_array(), *leases;
    const char *dialog;

    for (const struct server *srv = s->head; srv != NULL; srv = srv->next) {
        for (const struct lease *l = srv->leases.head; l != NULL; l = l->next) {
            leases = json_object_get(by_dialog, l->dialog);
            if (leases == NULL) {
                leases = json_array();
                json_object_set_new(by_dialog, l->dialog, leases);
            }
            json_array_append_new(leases, gw_lease_json(l));
        }
    }
    json_object_foreach(by_dialog, dialog, leases)
    {
        json_array_append_new(list, json_pack("{s:s, s:O}", "dialog", dialog, "leases", leases));
    }
    json_decref(by_dialog);
    return json_pack("{s:o}", "dialogs", list);
}

/* ---- shutdown ---- */

/* The grace and sweep timers close last; the second close frees `s`. */
static void on_last_timer_closed(uv_handle_t *h)
{
    struct gw_servers *s = h->data;

    if (--s->timers_open > 0)
        return;
    gw_catalog_free(s->catalog);
    gw_extras_free(s->extras);
    json_decref(s->tool_in_flight);
    gw_config_unref(s->config);
    s->close_cb(s->close_data);
    free(s);
}

static void maybe_finish_close(struct gw_servers *s)
{
    if (!s->closing || s->dying != NULL || uv_is_closing((uv_handle_t *)&s->grace))
        return;
    s->timers_open = 2;
    uv_close((uv_handle_t *)&s->grace, on_last_timer_closed);
    uv_close((uv_handle_t *)&s->sweep, on_last_timer_closed);
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
        discard_pending(s->pending);
    while (s->head != NULL) {
        struct server *srv = s->head;
        s->head = srv->next;
        server_remove(srv);
    }
    uv_timer_start(&s->grace, on_grace, grace_ms, 0);
    uv_unref((uv_handle_t *)&s->grace);
    maybe_finish_close(s);
}
