/* The supervisor's side of OAuth (gw/servers.h): each HTTP or SSE server's
 * client, made at its first spawn (a few hundred bytes, no fetch, nothing
 * loaded: its saved grant, if any, is read from the state directory), the
 * move to needs_authorization when an instance fails on a Bearer
 * challenge, and the start that follows an authorization. */
#include "gw/servers_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/curl_uv.h"
#include "gw/log.h"
#include "gw/oauth.h"
#include "gw/util.h"

/* gateway.oauth.redirect_uri, else the gateway's own callback URL (NULL
 * before the gateway listens). Heap. */
static char *redirect_uri(const struct gw_servers *s, const struct gw_gateway_config *gw)
{
    if (gw->oauth_redirect_uri)
        return gw_xstrdup(gw->oauth_redirect_uri);
    return s->base_url ? gw_xasprintf("%s/oauth/callback", s->base_url) : NULL;
}

struct gw_oauth *gw_server_oauth(struct server *srv)
{
    static const unsigned methods[] = {0, GW_OAUTH_AUTH_NONE, GW_OAUTH_AUTH_BASIC,
                                       GW_OAUTH_AUTH_POST, GW_OAUTH_AUTH_JWT};
    const struct gw_server_config *cfg = srv->cfg;
    if (srv->oauth || cfg->oauth_off || cfg->transport == GW_TRANSPORT_STDIO)
        return srv->oauth;
    /* A WebSocket server's protected resource is its URL over http(s):
     * that is where its metadata is found and what `resource` names. */
    char *url = strncasecmp(cfg->url, "ws", 2) == 0 ? gw_xasprintf("http%s", cfg->url + 2)
                                                    : gw_xstrdup(cfg->url);
    /* Only an HTTP upstream opens the HTTP client; a WebSocket one needs it
     * here, for the OAuth fetches (a failure shows on the first of them). */
    char why[256];
    if (srv->owner->multi && gw_curl_uv_open(srv->owner->multi, why, sizeof(why)) != 0)
        gw_log(GW_LOG_WARN, "oauth: no HTTP client", "server", cfg->id, "reason", why, NULL);
    char *redirect = redirect_uri(srv->owner, &srv->snap->gateway);
    char *state_dir = gw_oauth_state_dir(srv->snap->gateway.state_dir);
    char *scopes = NULL;
    for (size_t i = 0; cfg->has_oauth_scopes && i < cfg->noauth_scopes; i++) {
        char *next = scopes ? gw_xasprintf("%s %s", scopes, cfg->oauth_scopes[i])
                            : gw_xstrdup(cfg->oauth_scopes[i]);
        free(scopes);
        scopes = next;
    }
    struct gw_oauth_settings s = {
        .server_url = url,
        .redirect_uri = redirect,
        .client_id = cfg->oauth_client_id,
        .client_secret = cfg->oauth_client_secret,
        .private_key = cfg->oauth_private_key,
        .auth = methods[cfg->oauth_method],
        .scopes = cfg->has_oauth_scopes ? (scopes ? scopes : "") : NULL,
        .omit_resource = cfg->oauth_omit_resource,
        .client_credentials = cfg->oauth_client_credentials,
        .client_metadata_url = srv->snap->gateway.oauth_client_metadata_url,
        .state_dir = state_dir,
        .issuer = cfg->oauth_issuer,
    };
    srv->oauth = gw_oauth_new(srv->owner->loop, srv->owner->multi, &s);
    free(scopes);
    free(url);
    free(redirect);
    free(state_dir);
    return srv->oauth;
}

char *gw_server_authorization(const struct server *srv, char **url)
{
    const char *scopes = srv->oauth ? gw_oauth_gave_up(srv->oauth) : NULL;
    *url = NULL;
    if (scopes)
        return gw_xasprintf("the server requires authorization, and %d authorization requests "
                            "did not get the scopes it asks for (%s): none is made until a "
                            "reload or a logout (DELETE /v1/servers/%s/authorize)",
                            GW_OAUTH_AUTHZ_MAX, scopes[0] ? scopes : "none named", srv->cfg->id);
    if (!srv->owner->base_url)
        return gw_xstrdup("the server requires authorization, and the gateway does not listen "
                          "where a browser can be sent back to it");
    *url = gw_xasprintf("%s/v1/servers/%s/authorize", srv->owner->base_url, srv->cfg->id);
    return gw_xasprintf("the server requires authorization: open %s in a browser", *url);
}

char *gw_servers_authorization(struct gw_servers *s, const char *id, char **url)
{
    struct server *srv = gw_servers_find(s, id);
    *url = NULL;
    /* A call may fail on the challenge before its server moves. */
    if (!srv ||
        (srv->state != SRV_NEEDS_AUTH && !(srv->oauth && gw_oauth_needs_authorization(srv->oauth))))
        return NULL;
    return gw_server_authorization(srv, url);
}

static void needs_authorization(struct server *srv)
{
    char *url;
    char *what = gw_server_authorization(srv, &url);
    free(url);
    gw_server_set_error(srv, what);
    gw_server_problem(srv, "authorization", GW_SEV_WARNING, NULL, what);
    gw_log(GW_LOG_WARN, "server needs authorization", "server", srv->cfg->id, NULL);
    free(what);
    gw_server_set_state(srv, SRV_NEEDS_AUTH);
    /* It started as far as it can without a person: /readyz counts it. */
    gw_server_first_attempt_done(srv, true);
}

/* The server's start failed, for a reason a later attempt may not meet:
 * it is retried after the usual backoff. */
static void start_failed(struct server *srv, const char *what)
{
    gw_server_set_error(srv, what);
    gw_server_problem(srv, "authorization", GW_SEV_ERROR, NULL, what);
    srv->oauth_refreshed = false;
    gw_server_set_state(srv, SRV_FAILED);
    gw_server_first_attempt_done(srv, false);
    gw_server_schedule_restart(srv);
}

static void refreshed(void *data, int rc, const char *why)
{
    struct server *srv = data;
    if (srv->removed || srv->owner->closing)
        return;
    if (rc == -EAGAIN) { /* the grant stays: no person is needed yet */
        char *what = gw_xasprintf("the OAuth token could not be refreshed: %s", why);
        gw_log(GW_LOG_WARN, "oauth refresh failed", "server", srv->cfg->id, "reason", why, NULL);
        start_failed(srv, what);
        free(what);
        return;
    }
    if (rc < 0) {
        gw_log(GW_LOG_WARN, "oauth refresh refused", "server", srv->cfg->id, "reason", why, NULL);
        needs_authorization(srv);
        return;
    }
    gw_log(GW_LOG_INFO, "oauth token refreshed", "server", srv->cfg->id, NULL);
    gw_server_clear_problems(srv, "authorization");
    enum slot_role first = srv->cfg->truely_stateless ? ROLE_SHARED : ROLE_DISCOVERY;
    if (gw_server_find_slot(srv, first, false) == NULL)
        gw_slot_spawn(srv, first);
}

/* grant: client_credentials: no person to ask; a failure is the server's
 * start failing, retried after the usual backoff. */
static void credentials_failed(struct server *srv, const char *why)
{
    char *what = gw_xasprintf("no OAuth token from the client credentials: %s", why);
    start_failed(srv, what);
    free(what);
}

static void obtained(void *data, int rc, const char *why)
{
    struct server *srv = data;
    if (srv->removed || srv->owner->closing)
        return;
    if (rc < 0) {
        credentials_failed(srv, why);
        return;
    }
    gw_server_clear_problems(srv, "authorization");
    gw_log(GW_LOG_INFO, "oauth token obtained with the client credentials", "server", srv->cfg->id,
           NULL);
    enum slot_role first = srv->cfg->truely_stateless ? ROLE_SHARED : ROLE_DISCOVERY;
    if (gw_server_find_slot(srv, first, false) == NULL)
        gw_slot_spawn(srv, first);
}

bool gw_server_oauth_failed(struct server *srv)
{
    if (!srv->oauth || !gw_oauth_needs_authorization(srv->oauth))
        return false;
    if (srv->cfg->oauth_client_credentials) {
        if (!srv->oauth_refreshed && gw_oauth_authorize(srv->oauth, obtained, srv) == 0)
            srv->oauth_refreshed = true;
        else
            credentials_failed(srv, "the server refused the token it gave");
        return true;
    }
    /* A refresh token may make a new access token without anyone: the
     * instance starts again once it is in; a refusal needs a person, and
     * so does a token that a refresh for a refused one gave, refused too. */
    if (!srv->oauth_refreshed && !gw_oauth_step_up_pending(srv->oauth) &&
        !gw_oauth_refresh_spent(srv->oauth) && gw_oauth_refresh(srv->oauth, refreshed, srv) == 0) {
        srv->oauth_refreshed = true;
        return true;
    }
    needs_authorization(srv);
    return true;
}

void gw_servers_set_base_url(struct gw_servers *s, const char *url)
{
    free(s->base_url);
    s->base_url = gw_xstrdup(url);
    for (struct server *srv = s->head; srv != NULL; srv = srv->next) {
        if (srv->oauth && !srv->snap->gateway.oauth_redirect_uri) {
            char *redirect = redirect_uri(s, &srv->snap->gateway);
            gw_oauth_set_redirect_uri(srv->oauth, redirect);
            free(redirect);
        }
    }
}

struct gw_oauth *gw_servers_oauth(struct gw_servers *s, const char *id)
{
    struct server *srv = gw_servers_find(s, id);
    return srv ? srv->oauth : NULL;
}

const char *gw_servers_oauth_state_owner(struct gw_servers *s, const char *query)
{
    for (struct server *srv = s->head; srv != NULL; srv = srv->next)
        if (srv->oauth && gw_oauth_owns_state(srv->oauth, query))
            return srv->cfg->id;
    return NULL;
}

void gw_servers_authorized(struct gw_servers *s, const char *id)
{
    struct server *srv = gw_servers_find(s, id);
    if (!srv || srv->state != SRV_NEEDS_AUTH)
        return;
    gw_server_clear_problems(srv, "authorization");
    gw_server_set_error(srv, NULL);
    gw_log(GW_LOG_INFO, "server authorized", "server", id, NULL);
    gw_server_set_state(srv, SRV_STARTING);
    enum slot_role first = srv->cfg->truely_stateless ? ROLE_SHARED : ROLE_DISCOVERY;
    if (gw_server_find_slot(srv, first, false) == NULL)
        gw_slot_spawn(srv, first);
}

void gw_servers_authorization_failed(struct gw_servers *s, const char *id, const char *why)
{
    struct server *srv = gw_servers_find(s, id);
    if (!srv || srv->removed || srv->state != SRV_NEEDS_AUTH)
        return;
    char *url;
    char *what = gw_server_authorization(srv, &url);
    char *text = gw_xasprintf("the last authorization did not succeed (%s); %s",
                              why ? why : "no reason given", what);
    free(url);
    free(what);
    gw_server_set_error(srv, text);
    gw_server_problem(srv, "authorization", GW_SEV_WARNING, NULL, text);
    gw_log(GW_LOG_WARN, "server authorization failed", "server", id, "reason", text, NULL);
    free(text);
}

void gw_server_oauth_reloaded(struct server *srv)
{
    if (!srv->oauth)
        return;
    bool gave_up = gw_oauth_gave_up(srv->oauth) != NULL;
    gw_oauth_limit_reset(srv->oauth);
    if (gave_up && srv->state == SRV_NEEDS_AUTH)
        needs_authorization(srv); /* the link is offered again */
}

void gw_servers_signed_out(struct gw_servers *s, const char *id)
{
    struct server *srv = gw_servers_find(s, id);
    if (!srv || srv->removed)
        return;
    if (srv->state == SRV_NEEDS_AUTH) { /* its count began again: the link is back */
        needs_authorization(srv);
        return;
    }
    const char *why = "the server's authorization was withdrawn";
    while (srv->leases.head != NULL)
        gw_lease_release(srv->leases.head, why);
    for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        if (sl->role == ROLE_RETIRED)
            continue;
        s->hooks->abandon(s, NULL, sl, GW_SERVERS_E_RELEASED, why);
        gw_slot_retire(sl);
    }
    s->hooks->abandon_shared(srv, GW_SERVERS_E_RELEASED, why);
    needs_authorization(srv);
}
