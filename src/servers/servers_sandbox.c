/* What a stdio server's sandbox is on this host (docs/api.md, S.sandbox):
 * enforced or why not, and the Problem that says so. With
 * gateway.sandbox.require the transport refuses to start instead (its
 * error is the start Problem); without it, an instance that cannot be
 * sandboxed runs as before and a warning names why. */
#include "gw/servers_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gw/problems.h"
#include "gw/proctree.h"
#include "gw/sandbox.h"
#include "gw/util.h"

/* NULL when the server's instances are sandboxed, else why not. */
static const char *unenforced(const struct server *srv, char *why, size_t cap)
{
    const char *bwrap;
    if (srv->cfg->transport != GW_TRANSPORT_STDIO)
        return "only stdio servers are sandboxed";
    if (!srv->cfg->sandbox.enabled)
        return "off in the config";
    return gw_sandbox_available(&bwrap, why, cap) == 0 ? NULL : why;
}

/* NULL when the limits of the server's instances hold, else which do not
 * and why: /tmp's size is bubblewrap's, the others the cgroup's. */
static const char *limits_unenforced(const struct server *srv, const char *reason, char *why,
                                     size_t cap)
{
    const struct gw_sandbox_config *sb = &srv->cfg->sandbox;
    struct gw_proctree_limits l = {sb->memory, sb->pids, sb->cpu_milli};
    if (reason)
        return reason;
    return gw_proctree_limits_check(&l, why, cap) == 0 ? NULL : why;
}

/* The limits' warning is apart from the sandbox's: a host may give one
 * and not the other. */
static void limits_check(struct server *srv, const char *reason)
{
    char why[512];
    const char *lim = srv->cfg->sandbox.enabled && !reason
                          ? limits_unenforced(srv, reason, why, sizeof(why))
                          : NULL;
    if (lim == NULL) {
        gw_server_clear_problems(srv, "limits");
        return;
    }
    char *msg = gw_xasprintf("limits not enforced: %s", lim);
    gw_server_problem(srv, "limits", GW_SEV_WARNING, NULL, msg);
    free(msg);
}

void gw_server_sandbox_check(struct server *srv)
{
    char why[512];
    const char *reason = unenforced(srv, why, sizeof(why));
    limits_check(srv, reason);
    if (!srv->cfg->sandbox.enabled || reason == NULL || srv->snap->gateway.sandbox_require) {
        gw_server_clear_problems(srv, "sandbox");
        return;
    }
    char *msg = gw_xasprintf("runs unsandboxed: %s", reason);
    gw_server_problem(srv, "sandbox", GW_SEV_WARNING, NULL, msg);
    free(msg);
}

/* Distinct refused destinations shown as Problems per server: an instance
 * that asks for thousands of names must not fill the registry. */
#define NET_PROBLEMS 16

void gw_server_sandbox_netcheck(struct gw_instance *inst, const char *entry, bool allowed,
                                const char *why, void *data)
{
    struct slot *slot = data;
    struct server *srv = slot->srv;
    char *what = gw_xasprintf("network:%s", entry);
    char *id = gw_xasprintf("server:%s:%s", srv->cfg->id, what);
    bool shown = gw_problems_find(srv->owner->problems, id) != NULL;
    (void)inst;
    if (allowed) {
        srv->net_allowed++;
        /* The line was added and the server reloaded: the advice is done. */
        if (shown && gw_problems_clear(srv->owner->problems, id) == 1 && srv->net_problems > 0)
            srv->net_problems--;
    } else {
        srv->net_denied++;
        if (!shown && srv->net_problems < NET_PROBLEMS) {
            srv->net_problems++;
            char *msg = gw_xasprintf("the sandbox refused a connection to %s (%s); to allow it: "
                                     "servers.%s.sandbox.network: add \"%s\"",
                                     entry, why ? why : "not in the list", srv->cfg->id, entry);
            gw_server_problem(srv, what, GW_SEV_WARNING, NULL, msg);
            free(msg);
        }
    }
    free(id);
    free(what);
}

json_t *gw_server_sandbox_json(const struct server *srv)
{
    char why[512];
    const char *reason = unenforced(srv, why, sizeof(why));
    json_t *o = gw_sandbox_config_json(&srv->cfg->sandbox);
    json_object_del(o, "enabled");
    json_object_set_new(o, "enforced", json_boolean(reason == NULL));
    if (reason)
        json_object_set_new(o, "reason", json_string(reason));
    char lwhy[512];
    const char *lim = limits_unenforced(srv, reason, lwhy, sizeof(lwhy));
    json_t *limits = json_object_get(o, "limits");
    json_object_set_new(limits, "enforced", json_boolean(lim == NULL));
    if (lim)
        json_object_set_new(limits, "reason", json_string(lim));
    return o;
}
