/* A sandboxed instance's proxy (gw/netproxy.h) when its network is an
 * allow-list: started before the spawn, its decisions logged and handed
 * up through the transport's on_netcheck. */
#include "gw/upstream_stdio_internal.h"

#include <stdlib.h>

#include "gw/child_env.h"
#include "gw/log.h"
#include "gw/netproxy.h"
#include "gw/sandbox.h"
#include "gw/util.h"

static void on_netcheck(void *data, const char *entry, bool allowed, const char *why)
{
    struct gw_upstream_stdio *s = data;
    if (allowed)
        gw_log(GW_LOG_DEBUG, "sandbox: destination allowed", "server", s->id, "destination", entry,
               NULL);
    else
        gw_log(GW_LOG_DEBUG, "sandbox: destination refused", "server", s->id, "destination", entry,
               "reason", why, NULL);
    if (s->cbs.on_netcheck && !s->down_fired)
        s->cbs.on_netcheck(s->cbs.data, entry, allowed, why);
}

/* network: [list]: the instance's proxy, on a socket under the state
 * directory's run/, with `registry` read for this server's launcher. */
int gw_stdio_start_proxy(struct gw_upstream_stdio *s, const struct gw_server_config *cfg,
                         const struct gw_upstream_stdio_options *o, char *why, size_t whylen)
{
    if (!o->relay_exe) {
        gw_say(why, whylen,
               "the sandbox's network list needs the daemon's own executable as "
               "its relay, and its path is not known");
        return UV_ENOENT;
    }
    struct gw_netproxy_options po = {0};
    char **allow;
    size_t nallow;
    char **env = gw_child_env_build(cfg, o->inherit_env, o->ninherit_env);
    gw_sandbox_allow_list(cfg, s->home, env, &allow, &nallow);
    gw_child_env_free(env);
    po.allow = allow;
    po.nallow = nallow;
    struct gw_netproxy_cbs cbs = {on_netcheck, s};
    char *run = gw_xasprintf("%s/run", o->state_dir);
    int err = gw_netproxy_start(s->loop, run, &po, &cbs, &s->proxy, why, whylen);
    free(run);
    for (size_t i = 0; i < nallow; i++)
        free(allow[i]);
    free(allow);
    return err;
}
