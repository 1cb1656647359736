#include "gw/upstream.h"

#include <stdio.h>
#include <stdlib.h>

#include "gw/oauth.h"
#include "gw/sandbox.h"
#include "gw/upstream_http.h"
#include "gw/upstream_stdio.h"
#include "gw/upstream_ws.h"
#include "gw/util.h"

/* A sandboxed server's start: bubblewrap found (else, with
 * gateway.sandbox.require, no start at all), and what it must never show:
 * the config and this server's envFile, the state directory (the OAuth
 * grants, other instances' homes), the artifacts, the daemon's HOME. */
static int sandbox_options(const struct gw_gateway_config *gw, const struct gw_server_config *cfg,
                           struct gw_upstream_stdio_options *so, const char **hide,
                           char **state_dir, char *why, size_t whylen)
{
    char reason[512];
    if (gw_sandbox_available(&so->bwrap, reason, sizeof(reason)) != 0) {
        so->bwrap = NULL;
        if (!gw->sandbox_require)
            return 0;
        gw_say(why, whylen, "a sandbox is required (gateway.sandbox.require) but %s", reason);
        return UV_EPERM;
    }
    *state_dir = gw_oauth_state_dir(gw->state_dir);
    so->state_dir = *state_dir;
    hide[0] = gw->config_file;
    hide[1] = cfg->env_file;
    hide[2] = *state_dir;
    hide[3] = gw->artifacts_dir;
    hide[4] = getenv("HOME");
    so->hide = hide;
    so->nhide = 5;
    so->relay_exe = gw_sandbox_self();
    return 0;
}

static int start_stdio(uv_loop_t *loop, const struct gw_gateway_config *gw,
                       const struct gw_server_config *cfg, const struct gw_transport_cbs *cbs,
                       struct gw_transport **out, char *why, size_t whylen)
{
    struct gw_upstream_stdio_options so;
    struct gw_upstream_stdio *s;
    const char *hide[5];
    char *state_dir = NULL;
    int rc = 0;

    gw_upstream_stdio_options_init(&so);
    so.inherit_env = gw->inherit_env;
    so.ninherit_env = gw->ninherit_env;
    so.secrets = (const char *const *)&gw->auth_token;
    so.nsecrets = gw->auth_token != NULL;
    if (cfg->sandbox.enabled)
        rc = sandbox_options(gw, cfg, &so, hide, &state_dir, why, whylen);
    if (rc == 0)
        rc = gw_upstream_stdio_start(loop, cfg, &so, cbs, &s, why, whylen);
    if (rc == 0)
        *out = gw_upstream_stdio_transport(s);
    free(state_dir);
    return rc;
}

static int start_ws(uv_loop_t *loop, const struct gw_server_config *cfg, struct gw_oauth *oauth,
                    const struct gw_transport_cbs *cbs, struct gw_transport **out, char *why,
                    size_t whylen)
{
    struct gw_upstream_ws *w;
    int rc = gw_upstream_ws_start(loop, cfg, oauth, cbs, &w, why, whylen);

    if (rc == 0)
        *out = gw_upstream_ws_transport(w);
    return rc;
}

static int start_http(uv_loop_t *loop, struct gw_curl_uv *multi, const struct gw_server_config *cfg,
                      struct gw_oauth *oauth, const struct gw_transport_cbs *cbs,
                      struct gw_transport **out, char *why, size_t whylen)
{
    struct gw_upstream_http *h;
    struct gw_upstream_http_options o;
    int rc;

    gw_upstream_http_options_init(&o);
    o.oauth = oauth;
    if (multi == NULL) {
        snprintf(why, whylen, "transport '%s' needs the HTTP client, which is not available",
                 gw_transport_name(cfg->transport));
        return UV_ENOTSUP;
    }
    rc = gw_upstream_http_start(loop, multi, cfg, &o, cbs, &h, why, whylen);
    if (rc == 0)
        *out = gw_upstream_http_transport(h);
    return rc;
}

int gw_upstream_start(uv_loop_t *loop, struct gw_curl_uv *multi, const struct gw_gateway_config *gw,
                      const struct gw_server_config *cfg, struct gw_oauth *oauth,
                      const struct gw_transport_cbs *cbs, struct gw_transport **out, char *why,
                      size_t whylen)
{
    switch (cfg->transport) {
    case GW_TRANSPORT_STDIO:
        return start_stdio(loop, gw, cfg, cbs, out, why, whylen);
    case GW_TRANSPORT_WEBSOCKET:
        return start_ws(loop, cfg, oauth, cbs, out, why, whylen);
    case GW_TRANSPORT_STREAMABLE_HTTP:
    case GW_TRANSPORT_SSE:
        return start_http(loop, multi, cfg, oauth, cbs, out, why, whylen);
    }
    snprintf(why, whylen, "unknown transport");
    return UV_EINVAL;
}
