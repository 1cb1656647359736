/* Server runtimes: spawn, discover, commit, restart, stop.
 *
 * Ownership: gw_servers owns its servers (a list); a server owns its
 * instances (an array) and its restart timer, and holds a reference to the
 * config snapshot its cfg points into. A removed server is unlinked at
 * once and freed when its last instance and its timer have closed. */
#include "gw/servers.h"

#include <stdlib.h>
#include <string.h>

#include "gw/instance.h"
#include "gw/log.h"
#include "gw/util.h"

#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
#define BACKOFF_RESET_MS 60000

enum server_state { SRV_STARTING, SRV_READY, SRV_DEGRADED, SRV_FAILED, SRV_STOPPED };
static const char *const server_state_names[] = {"starting", "ready", "degraded", "failed",
                                                 "stopped"};

struct server {
    struct gw_servers *owner;
    struct server *next;
    struct gw_config *snap; /* reference; cfg points into it */
    const struct gw_server_config *cfg;
    enum server_state state;
    struct gw_instance *shared; /* the instance taking calls, or NULL */
    struct gw_instance **insts; /* every live instance, shared included */
    size_t ninsts, cap;
    uint64_t seq;
    uint64_t backoff_ms;
    uint64_t ready_at_ms;
    uv_timer_t timer; /* restart backoff */
    bool first_done;
    bool removed;
    bool listing, relist;
    bool timer_closed;
    unsigned restarts;
    char *last_error;
    json_t *stderr_tail;
    time_t loaded_at;
};

struct gw_servers {
    uv_loop_t *loop;
    struct gw_problems *problems;
    struct gw_catalog *catalog;
    struct gw_servers_cbs cbs;
    struct server *head;  /* configured servers, in config order */
    struct server *dying; /* removed servers whose instances still close */
    bool settled_told;
    bool closing;
    uv_timer_t grace;
    void (*close_cb)(void *data);
    void *close_data;
};

struct gw_call {
    struct gw_instance *inst;
    gw_mcp_handle handle;
    gw_mcp_reply_cb cb;
    void *data;
    char server[65];
};

static void server_spawn(struct server *srv);
static void maybe_finish_close(struct gw_servers *s);

/* ---- problems ---- */

static void server_problem(struct server *srv, const char *what, enum gw_severity sev,
                           const char *tool, const char *message)
{
    char *id = gw_xasprintf("server:%s:%s%s%s", srv->cfg->id, what, tool ? ":" : "",
                            tool ? tool : "");
    struct gw_problem p = {.id = id,
                           .severity = sev,
                           .scope = tool ? GW_SCOPE_TOOL : GW_SCOPE_SERVER,
                           .server = srv->cfg->id,
                           .tool = tool,
                           .message = message};
    gw_problems_set(srv->owner->problems, &p);
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
    srv->last_error = gw_xstrdup(why);
}

/* Catalog diagnostics become Problems (warnings and errors) or log lines
 * (info: seed 004 logs those at INFO). */
static void publish_cat_diags(struct server *srv, const struct gw_cat_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        const struct gw_cat_diag *g = &d->v[i];
        if (g->severity == GW_SEV_INFO) {
            gw_log(GW_LOG_INFO, g->message, "server", g->server, "tool", g->tool, NULL);
            continue;
        }
        char *what = gw_xasprintf("catalog:%s", gw_cat_diag_kind_name(g->kind));
        server_problem(srv, what, g->severity, g->tool, g->message);
        free(what);
    }
}

/* ---- settling (readyz, required servers) ---- */

static void check_settled(struct gw_servers *s)
{
    if (s->settled_told || !gw_servers_settled(s))
        return;
    s->settled_told = true;
    if (s->cbs.on_settled != NULL)
        s->cbs.on_settled(s->cbs.data);
}

static void first_attempt_done(struct server *srv, bool ok)
{
    if (srv->first_done)
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

/* ---- instances ---- */

static void insts_add(struct server *srv, struct gw_instance *inst)
{
    if (srv->ninsts == srv->cap) {
        srv->cap = srv->cap ? srv->cap * 2 : 4;
        srv->insts = gw_xrealloc(srv->insts, srv->cap * sizeof *srv->insts);
    }
    srv->insts[srv->ninsts++] = inst;
}

static void insts_remove(struct server *srv, struct gw_instance *inst)
{
    for (size_t i = 0; i < srv->ninsts; i++) {
        if (srv->insts[i] == inst) {
            srv->insts[i] = srv->insts[--srv->ninsts];
            return;
        }
    }
}

static void server_free_if_done(struct server *srv)
{
    struct gw_servers *s = srv->owner;

    if (!srv->removed || srv->ninsts > 0 || !srv->timer_closed)
        return;
    for (struct server **link = &s->dying; *link != NULL; link = &(*link)->next) {
        if (*link == srv) {
            *link = srv->next;
            break;
        }
    }
    gw_config_unref(srv->snap);
    free(srv->insts);
    free(srv->last_error);
    json_decref(srv->stderr_tail);
    free(srv);
    maybe_finish_close(s);
}

static void on_timer_closed(uv_handle_t *h)
{
    struct server *srv = h->data;

    srv->timer_closed = true;
    server_free_if_done(srv);
}

static void on_restart_timer(uv_timer_t *t)
{
    struct server *srv = t->data;

    srv->restarts++;
    server_spawn(srv);
}

static void schedule_restart(struct server *srv)
{
    if (srv->removed || srv->owner->closing)
        return;
    if (srv->ready_at_ms && gw_now_ms() - srv->ready_at_ms >= BACKOFF_RESET_MS)
        srv->backoff_ms = BACKOFF_MIN_MS;
    srv->ready_at_ms = 0;
    gw_log(GW_LOG_INFO, "restarting server after backoff", "server", srv->cfg->id, NULL);
    uv_timer_start(&srv->timer, on_restart_timer, srv->backoff_ms, 0);
    srv->backoff_ms = srv->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : srv->backoff_ms * 2;
}

static void commit_listing(struct server *srv, json_t *listing, unsigned flags)
{
    struct gw_toolset_build *b = gw_catalog_derive(srv->cfg, listing);
    struct gw_cat_diags diags = {0};
    bool ok = b->ok;

    server_clear_problems(srv, "catalog:");
    publish_cat_diags(srv, &b->diags);
    gw_catalog_commit(srv->owner->catalog, b, srv->snap->gateway.tool_changes, flags, &diags);
    publish_cat_diags(srv, &diags);
    gw_cat_diags_free(&diags);
    if (!ok && srv->state == SRV_READY) {
        /* A re-listing refused: the last known good tools stay served. */
        set_error(srv, "the new tool listing was refused; serving the last known good one");
        return;
    }
    if (!ok) {
        set_error(srv, "the tool listing was refused (see problems)");
        srv->state = SRV_FAILED;
        if (srv->shared != NULL) {
            struct gw_instance *inst = srv->shared;
            srv->shared = NULL;
            gw_instance_stop(inst);
        }
        first_attempt_done(srv, false);
        return;
    }
    srv->state = SRV_READY;
    free(srv->last_error);
    srv->last_error = NULL;
    first_attempt_done(srv, true);
}

static void list_tools(struct server *srv, unsigned flags);

static void on_listing(void *data, const struct gw_mcp_reply *reply)
{
    struct server *srv = data;
    unsigned flags = srv->state == SRV_READY ? 0 : GW_CATALOG_RELOAD;

    srv->listing = false;
    if (srv->removed)
        return;
    if (reply->code != 0) {
        char *why = gw_xasprintf("tools/list failed: %s", reply->message);
        set_error(srv, why);
        server_problem(srv, "start", GW_SEV_ERROR, NULL, why);
        free(why);
        if (srv->shared != NULL) {
            struct gw_instance *inst = srv->shared;
            srv->shared = NULL;
            gw_instance_stop(inst);
        }
        srv->state = srv->state == SRV_READY ? SRV_DEGRADED : SRV_FAILED;
        first_attempt_done(srv, false);
        schedule_restart(srv);
        return;
    }
    commit_listing(srv, reply->result, flags);
    if (srv->relist && srv->shared != NULL) {
        srv->relist = false;
        list_tools(srv, 0);
    }
}

static void list_tools(struct server *srv, unsigned flags)
{
    uint64_t timeout = srv->cfg->request_timeout_ms ? srv->cfg->request_timeout_ms
                                                    : srv->snap->gateway.request_timeout_ms;
    (void)flags;
    if (srv->listing) {
        srv->relist = true;
        return;
    }
    if (gw_instance_list_tools(srv->shared, timeout, on_listing, srv) == 0)
        srv->listing = true;
}

static void inst_ready(struct gw_instance *inst, void *data)
{
    struct server *srv = data;

    if (inst != srv->shared)
        return;
    server_clear_problems(srv, "start");
    srv->ready_at_ms = gw_now_ms();
    if (srv->cfg->load_tools) {
        list_tools(srv, GW_CATALOG_RELOAD);
        return;
    }
    commit_listing(srv, NULL, GW_CATALOG_RELOAD);
}

static void inst_failed(struct gw_instance *inst, const char *why, void *data)
{
    struct server *srv = data;
    json_t *tail = gw_instance_stderr_tail(inst);

    gw_instance_stop(inst);
    if (inst != srv->shared) {
        json_decref(tail);
        return;
    }
    srv->shared = NULL;
    json_decref(srv->stderr_tail);
    srv->stderr_tail = tail;
    set_error(srv, why);
    {
        char *msg = gw_xasprintf("%s; last stderr lines: %s", why,
                                 json_array_size(tail) ? "see /v1/servers" : "none");
        server_problem(srv, "start", GW_SEV_ERROR, NULL, msg);
        free(msg);
    }
    srv->state = srv->state == SRV_READY || srv->state == SRV_DEGRADED ? SRV_DEGRADED : SRV_FAILED;
    first_attempt_done(srv, false);
    schedule_restart(srv);
}

static void inst_tools_changed(struct gw_instance *inst, void *data)
{
    struct server *srv = data;

    if (inst == srv->shared && srv->state == SRV_READY)
        list_tools(srv, 0);
}

static void inst_closed(struct gw_instance *inst, void *data)
{
    struct server *srv = data;

    insts_remove(srv, inst);
    if (srv->shared == inst)
        srv->shared = NULL;
    server_free_if_done(srv);
}

static void server_spawn(struct server *srv)
{
    struct gw_instance_cbs cbs = {inst_ready, inst_failed, inst_tools_changed, inst_closed, srv};
    struct gw_instance *inst;
    char *why = NULL;

    if (gw_instance_start(srv->owner->loop, srv->cfg, &srv->snap->gateway, &cbs, ++srv->seq,
                          &inst, &why) != 0) {
        set_error(srv, why);
        server_problem(srv, "start", GW_SEV_ERROR, NULL, why);
        free(why);
        srv->state = srv->state == SRV_STARTING ? SRV_FAILED : srv->state;
        first_attempt_done(srv, false);
        schedule_restart(srv);
        return;
    }
    insts_add(srv, inst);
    srv->shared = inst;
}

/* ---- the set of servers ---- */

struct gw_servers *gw_servers_new(uv_loop_t *loop, struct gw_problems *problems,
                                  const struct gw_servers_cbs *cbs)
{
    struct gw_servers *s = gw_xcalloc(1, sizeof *s);

    s->loop = loop;
    s->problems = problems;
    s->catalog = gw_catalog_new();
    s->cbs = *cbs;
    uv_timer_init(loop, &s->grace);
    s->grace.data = s;
    return s;
}

static struct server *find(const struct gw_servers *s, const char *id)
{
    for (struct server *srv = s->head; srv != NULL; srv = srv->next) {
        if (strcmp(srv->cfg->id, id) == 0)
            return srv;
    }
    return NULL;
}

static struct server *server_new(struct gw_servers *s, struct gw_config *c,
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
    if (!cfg->ok) {
        srv->state = SRV_FAILED;
        set_error(srv, cfg->error ? cfg->error : "invalid configuration");
        first_attempt_done(srv, false);
    } else {
        srv->state = SRV_STARTING;
        server_spawn(srv);
    }
    return srv;
}

/* The caller has unlinked `srv` from the configured list. Moves it to the
 * dying list, stops its instances, withdraws its tools; the close
 * callbacks free it. */
static void server_remove(struct server *srv)
{
    struct gw_cat_diags diags = {0};

    srv->removed = true;
    srv->next = srv->owner->dying;
    srv->owner->dying = srv;
    gw_catalog_remove(srv->owner->catalog, srv->cfg->id, &diags);
    gw_cat_diags_free(&diags);
    if (!srv->owner->closing)
        server_clear_problems(srv, "");
    srv->shared = NULL;
    for (size_t i = 0; i < srv->ninsts; i++)
        gw_instance_stop(srv->insts[i]);
    uv_close((uv_handle_t *)&srv->timer, on_timer_closed);
}

/* A server whose spawn inputs are unchanged keeps its instances and moves
 * to the new snapshot; its catalog is derived again if filters changed. */
static void server_adopt(struct server *srv, struct gw_config *c,
                         const struct gw_server_config *cfg)
{
    bool catalog_changed = strcmp(srv->cfg->catalog_hash, cfg->catalog_hash) != 0;
    struct gw_config *old = srv->snap;

    srv->snap = gw_config_ref(c);
    srv->cfg = cfg;
    gw_config_unref(old);
    if (catalog_changed && srv->state == SRV_READY) {
        json_t *listing = gw_catalog_listing(srv->owner->catalog, cfg->id);
        json_incref(listing);
        commit_listing(srv, listing, GW_CATALOG_RELOAD);
        json_decref(listing);
    }
}

void gw_servers_apply(struct gw_servers *s, struct gw_config *c)
{
    struct server **link = &s->head;

    while (*link != NULL) {
        struct server *srv = *link;
        const struct gw_server_config *cfg = gw_config_server(c, srv->cfg->id);
        if (cfg != NULL && cfg->ok && srv->cfg->ok &&
            strcmp(cfg->spawn_hash, srv->cfg->spawn_hash) == 0) {
            server_adopt(srv, c, cfg);
            link = &srv->next;
            continue;
        }
        *link = srv->next;
        server_remove(srv);
    }
    for (size_t i = 0; i < c->nservers; i++) {
        if (find(s, c->servers[i].id) != NULL)
            continue;
        struct server *srv = server_new(s, c, &c->servers[i]);
        *link = srv;
        link = &srv->next;
    }
    check_settled(s);
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

static json_t *server_json(const struct server *srv)
{
    const struct gw_cat_toolset *ts = gw_catalog_toolset(srv->owner->catalog, srv->cfg->id);
    json_t *insts = json_array();
    char loaded[32];

    for (size_t i = 0; i < srv->ninsts; i++)
        json_array_append_new(insts, gw_instance_to_json(srv->insts[i]));
    gw_format_time(srv->loaded_at, loaded, sizeof loaded);
    return json_pack("{s:s, s:s, s:s, s:i, s:o, s:s?, s:s, s:s, s:s, s:i, s:O?, s:o}", "id",
                     srv->cfg->id, "transport", gw_transport_name(srv->cfg->transport), "state",
                     server_state_names[srv->state], "tools",
                     ts ? (int)gw_cat_toolset_ntools(ts) : 0, "instances", insts, "lastError",
                     srv->last_error, "configHash", srv->cfg->spawn_hash, "catalogHash",
                     srv->cfg->catalog_hash, "loadedAt", loaded, "restarts", (int)srv->restarts,
                     "lastStderr", srv->stderr_tail, "config",
                     gw_server_config_to_json(srv->cfg));
}

json_t *gw_servers_json(const struct gw_servers *s)
{
    json_t *list = json_array();

    for (const struct server *srv = s->head; srv != NULL; srv = srv->next)
        json_array_append_new(list, server_json(srv));
    return json_pack("{s:o}", "servers", list);
}

/* ---- calls ---- */

static void call_reply(void *data, const struct gw_mcp_reply *reply)
{
    struct gw_call *call = data;

    call->cb(call->data, reply);
    free(call);
}

static uint64_t call_timeout(const struct server *srv, const struct gw_cat_tool *t,
                             uint64_t asked)
{
    if (asked > 0)
        return asked;
    if (t->has_policy && t->policy.timeout_ms > 0)
        return t->policy.timeout_ms;
    if (srv->cfg->request_timeout_ms > 0)
        return srv->cfg->request_timeout_ms;
    return srv->snap->gateway.request_timeout_ms;
}

int gw_servers_call(struct gw_servers *s, const char *tool, json_t *arguments,
                    uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, struct gw_call **out)
{
    const struct gw_cat_tool *t = gw_catalog_lookup(s->catalog, tool);
    struct server *srv;
    struct gw_call *call;
    int rc;

    if (t == NULL || t->server == NULL)
        return GW_SERVERS_E_NO_TOOL;
    srv = find(s, t->server);
    if (srv == NULL || srv->shared == NULL ||
        gw_instance_state(srv->shared) != GW_INSTANCE_READY)
        return GW_SERVERS_E_NOT_READY;
    call = gw_xcalloc(1, sizeof *call);
    call->inst = srv->shared;
    call->cb = cb;
    call->data = data;
    snprintf(call->server, sizeof call->server, "%s", srv->cfg->id);
    rc = gw_instance_call(srv->shared, t->original_name, arguments,
                          call_timeout(srv, t, timeout_ms), call_reply, call, &call->handle);
    if (rc != 0) {
        free(call);
        return rc;
    }
    if (out != NULL)
        *out = call;
    return 0;
}

void gw_servers_cancel(struct gw_call *call, const char *reason)
{
    gw_instance_cancel(call->inst, call->handle, reason);
}

const char *gw_call_server(const struct gw_call *call)
{
    return call->server;
}

/* ---- shutdown ---- */

static void on_grace_closed(uv_handle_t *h)
{
    struct gw_servers *s = h->data;

    gw_catalog_free(s->catalog);
    s->close_cb(s->close_data);
    free(s);
}

static void maybe_finish_close(struct gw_servers *s)
{
    if (!s->closing || s->dying != NULL || uv_is_closing((uv_handle_t *)&s->grace))
        return;
    uv_close((uv_handle_t *)&s->grace, on_grace_closed);
}

static void on_grace(uv_timer_t *t)
{
    struct gw_servers *s = t->data;

    gw_log(GW_LOG_WARN, "shutdown grace over; killing the remaining instances", NULL);
    for (struct server *srv = s->dying; srv != NULL; srv = srv->next) {
        for (size_t i = 0; i < srv->ninsts; i++)
            gw_instance_kill(srv->insts[i]);
    }
}

void gw_servers_close(struct gw_servers *s, uint64_t grace_ms, void (*cb)(void *data),
                      void *data)
{
    s->closing = true;
    s->close_cb = cb;
    s->close_data = data;
    while (s->head != NULL) {
        struct server *srv = s->head;
        s->head = srv->next;
        server_remove(srv);
    }
    uv_timer_start(&s->grace, on_grace, grace_ms, 0);
    uv_unref((uv_handle_t *)&s->grace);
    maybe_finish_close(s);
}
