/* The slot source of each server's lease table (lease.c): which instance
 * a new lease takes, what happens to it when the lease ends, and the
 * lease events; the idle sweep and the dialog-wide views of leases. */
#include "gw/servers.h"

#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/servers_internal.h"
#include "gw/toolsearch.h"
#include "gw/util.h"

/* ---- the lease table's slot source ---- */

/* A ready spare first, then one still starting, then a new instance.
 * `fresh` (a call sent again after its session was lost): a new instance
 * first while there is room, as the spares may hold sessions the upstream
 * lost too (it restarted). */
static struct slot *lease_slot(struct server *srv, bool fresh, int *code)
{
    bool room =
        gw_server_count_slots(srv, -1, false) < (size_t)srv->snap->gateway.max_instances_per_server;
    struct slot *sl = NULL;

    if (!fresh || !room) {
        sl = gw_server_find_slot(srv, ROLE_SPARE, true);
        if (sl == NULL)
            sl = gw_server_find_slot(srv, ROLE_SPARE, false);
    }
    if (sl != NULL)
        return sl;
    if (!room) {
        *code = GW_SERVERS_E_LIMIT;
        return NULL;
    }
    sl = gw_slot_spawn(srv, ROLE_LEASED);
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
    gw_server_top_up_soon(srv);
    return 0;
}

static void lease_unbind(void *ctx, struct lease *l, bool retire)
{
    struct slot *sl = l->slot;

    sl->lease = NULL;
    l->slot = NULL;
    if (retire)
        gw_slot_retire(sl);
}

static bool lease_busy(void *ctx, const struct lease *l)
{
    return l->waiting != NULL || l->slot == NULL || gw_instance_in_flight(l->slot->inst) > 0;
}

static const char *const lease_actions[] = {
    [GW_LEASE_ACQUIRED] = "acquired",
    [GW_LEASE_RELEASED] = "released",
    [GW_LEASE_LOST] = "lost",
    [GW_LEASE_ENDED] = "ended",
};

static void lease_event(void *ctx, struct lease *l, enum gw_lease_event ev, const char *why)
{
    struct server *srv = ctx;
    const char *id = srv->cfg->id;
    struct gw_servers_event e = {.kind = GW_EV_LEASE,
                                 .server = id,
                                 .dialog = l->dialog,
                                 .action = lease_actions[ev],
                                 .reason = ev == GW_LEASE_ENDED ? NULL : why};

    switch (ev) {
    case GW_LEASE_ACQUIRED:
        gw_log(GW_LOG_INFO, "lease", "server", id, "dialog", l->dialog, "instance_ready",
               l->slot->ready ? "yes" : "no", NULL);
        e.instance = gw_instance_seq(l->slot->inst);
        e.warm = l->slot->ready;
        gw_server_emit(srv->owner, &e);
        return;
    case GW_LEASE_RELEASED:
        gw_log(GW_LOG_INFO, "lease released", "server", id, "dialog", l->dialog, "reason", why,
               NULL);
        gw_server_emit(srv->owner, &e);
        srv->owner->hooks->abandon(srv->owner, l, NULL, GW_SERVERS_E_RELEASED, why);
        return;
    case GW_LEASE_LOST:
        gw_server_emit(srv->owner, &e);
        gw_log(GW_LOG_WARN, "leased instance died; the dialog's next call gets a new one", "server",
               id, "dialog", l->dialog, "reason", why, NULL);
        srv->owner->hooks->abandon(srv->owner, l, l->slot, GW_SERVERS_E_SPAWN, why);
        return;
    case GW_LEASE_ENDED:
        gw_server_emit(srv->owner, &e);
        srv->owner->hooks->abandon(srv->owner, l, NULL, GW_SERVERS_E_RELEASED, why);
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

const struct gw_lease_source gw_server_lease_source = {
    .take = lease_take,
    .unbind = lease_unbind,
    .busy = lease_busy,
    .event = lease_event,
    .describe = lease_describe,
};

int gw_servers_release(struct gw_servers *s, const char *dialog, const char *server,
                       json_t *released)
{
    if (server == NULL) /* tool search's activations go with the dialog's leases */
        gw_ts_active_remove(s->active, dialog, NULL);
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
    /* /v1/dialogs lists a dialog that only activated tools: it is released
     * like one with leases (its activations end). */
    return gw_ts_active_has(s->active, dialog, NULL);
}

void gw_servers_on_sweep(uv_timer_t *t)
{
    struct gw_servers *s = t->data;
    uint64_t now = gw_now_ms();

    for (struct server *srv = s->head; srv != NULL; srv = srv->next)
        gw_leases_sweep(&srv->leases, now, srv->snap->gateway.lease_idle_timeout_ms);
    if (s->gw != NULL)
        gw_ts_active_sweep(s->active, now, s->gw->lease_idle_timeout_ms);
}

static void add_active(const char *dialog, void *arg)
{
    if (json_object_get(arg, dialog) == NULL)
        json_object_set_new(arg, dialog, json_array());
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
    gw_ts_active_each(s->active, add_active, by_dialog);
    json_object_foreach(by_dialog, dialog, leases)
    {
        json_t *d = json_pack("{s:s, s:O}", "dialog", dialog, "leases", leases);
        json_t *active = gw_ts_active_json(s->active, dialog);
        if (active != NULL)
            json_object_set_new(d, "activeTools", active);
        json_array_append_new(list, d);
    }
    json_decref(by_dialog);
    return json_pack("{s:o}", "dialogs", list);
}
