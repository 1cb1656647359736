/* What a stdio server's sandbox is on this host (docs/api.md, S.sandbox):
 * enforced or why not, and the Problem that says so. With
 * gateway.sandbox.require the transport refuses to start instead (its
 * error is the start Problem); without it, an instance that cannot be
 * sandboxed runs as before and a warning names why. */
#include "gw/servers_internal.h"

#include <stdlib.h>
#include <string.h>

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
