/* A server's grant (gw/oauth.h): the token requests that make and renew
 * it, its refresh ahead of expiry, its revocation, and what it offers the
 * rest of the gateway: the access token its requests carry, the secrets
 * its output is masked of, and the summary /v1/servers shows, which never
 * holds a token.
 *
 * A grant is bound to the authorization server it came from (o->grant):
 * it is refreshed and revoked there, with the client it was obtained
 * with, whatever the server's metadata names since. */
#include "gw/oauth_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw/log.h"
#include "gw/redact.h"
#include "gw/util.h"

const char *gw_oauth_access_token(const struct gw_oauth *o)
{
    return o->token.access_token;
}

void gw_oauth_redact_add(const struct gw_oauth *o, struct gw_redact *r)
{
    gw_redact_add(r, o->token.access_token);
    gw_redact_add(r, o->token.refresh_token);
    gw_redact_add(r, o->client.client_secret);
    gw_redact_add(r, o->grant.client.client_secret);
    gw_redact_add(r, o->configured.client_secret);
}

size_t gw_oauth_redact_line(const struct gw_oauth *o, char *buf, size_t len, bool truncated)
{
    struct gw_redact *r = gw_redact_new();
    gw_oauth_redact_add(o, r);
    len = gw_redact_line(r, buf, len, truncated);
    gw_redact_free(r);
    return len;
}

uint64_t gw_oauth_expires_ms(const struct gw_oauth *o)
{
    return o->expires_ms;
}

json_t *gw_oauth_grant_json(const struct gw_oauth *o)
{
    if (!o->token.access_token || !o->grant.issuer)
        return NULL;
    json_t *scopes = NULL;
    if (o->token.scope) {
        scopes = json_array();
        for (const char *p = o->token.scope; *p;) {
            size_t n = strcspn(p, " ");
            if (n)
                json_array_append_new(scopes, json_stringn(p, n));
            p += n + (p[n] == ' ');
        }
    }
    char expires[32];
    bool dated = o->expires_at && gw_format_time(o->expires_at, expires, sizeof(expires)) == 0;
    return json_pack("{s:s, s:o?, s:s?, s:b}", "issuer", o->grant.issuer, "scopes", scopes,
                     "expiresAt", dated ? expires : NULL, "refreshable",
                     o->token.refresh_token != NULL && o->grant.token_endpoint != NULL);
}

/* ---- the token endpoint ---- */

/* Did the token endpoint say the grant is dead (RFC 6749 section 5.2)?
 * Anything else (a 503, an HTML page, invalid_client) may pass. */
static bool invalid_grant(const struct gw_oauth *o)
{
    if (o->x.status < 400 || o->x.status >= 500)
        return false;
    json_t *j = json_loadb(o->x.rbody ? o->x.rbody : "", o->x.rlen, 0, NULL);
    const char *e = json_string_value(json_object_get(j, "error"));
    bool dead = e && strcmp(e, "invalid_grant") == 0;
    json_decref(j);
    return dead;
}

/* A refresh that could not be made keeps the grant: it is tried again
 * after the backoff (gw_oauth__schedule_ahead). */
static void refresh_later(struct gw_oauth *o, const char *why)
{
    o->retries++;
    gw_oauth__failf(o, -EAGAIN, "%s; the grant is kept and the refresh tried again later", why);
}

static void token_done(struct gw_oauth *o, CURLcode rc)
{
    char why[400];
    struct gw_oauth_token t;
    bool refreshing = o->op == OP_REFRESH;
    if (refreshing && (rc != CURLE_OK || o->x.fail || o->x.cx.refused[0])) {
        gw_say(why, sizeof(why), "the token endpoint could not be reached: %s",
               o->x.cx.refused[0] ? "a refused address"
               : o->x.errbuf[0]   ? o->x.errbuf
                                  : curl_easy_strerror(rc));
        refresh_later(o, why);
        return;
    }
    if (gw_oauth__fetch_failed(o, rc, "the token endpoint"))
        return;
    if (gw_oauth_token_read(o->x.rbody, o->x.rlen, &t, why, sizeof(why)) < 0) {
        if (refreshing && !invalid_grant(o)) {
            char again[500];
            gw_say(again, sizeof(again), "%s (HTTP %ld)", why, o->x.status);
            refresh_later(o, again);
            return;
        }
        if (refreshing) /* a refused refresh token is dead: forget the grant */
            gw_oauth__drop_grant(o);
        gw_oauth__failf(o, -EACCES, "%s (HTTP %ld)", why, o->x.status);
        return;
    }
    if (!t.refresh_token && o->token.refresh_token) { /* keep the one we had */
        t.refresh_token = o->token.refresh_token;
        o->token.refresh_token = NULL;
    }
    gw_oauth_token_clear(&o->token);
    o->token = t;
    /* t.expires_in is at most GW_OAUTH_EXPIRES_MAX: no overflow here. */
    o->expires_ms = t.expires_in ? gw_now_ms() + (uint64_t)t.expires_in * 1000 : 0;
    o->expires_at = t.expires_in ? time(NULL) + (time_t)t.expires_in : 0;
    o->challenged = false;
    o->generation++;
    o->retries = 0;
    o->spent = refreshing && o->after_401 ? o->generation : 0;
    gw_oauth__bound_clear(&o->grant);
    o->grant = o->req;
    memset(&o->req, 0, sizeof(o->req));
    free(o->step_scopes);
    o->step_scopes = NULL;
    gw_oauth__save_grant(o);
    gw_oauth__finish(o, 0, NULL);
}

void gw_oauth__post_token(struct gw_oauth *o, struct gw_oauth_token_request *r)
{
    char why[256];
    r->client = &o->req.client;
    o->body = gw_oauth_token_body(r);
    if (gw_oauth__add_assertion(o, &o->req, &o->body, why, sizeof(why)) != 0) {
        gw_oauth__failf(o, -EINVAL, "%s", why);
        return;
    }
    char *basic = gw_oauth_basic_auth(&o->req.client);
    gw_oauth__fetch(o, o->req.token_endpoint, o->body, basic, token_done);
    free(basic);
}

static int refresh(struct gw_oauth *o, bool after_401, gw_oauth_cb cb, void *data)
{
    if (o->op != OP_REFRESH && (!o->token.refresh_token || !o->grant.token_endpoint))
        return -ENOENT;
    int j = gw_oauth__join(o, OP_REFRESH, cb, data);
    if (j < 0)
        return j;
    if (j > 0) { /* it joined the one running */
        o->after_401 |= after_401;
        return 0;
    }
    o->after_401 = after_401;
    struct gw_oauth_token_request tr = {
        .refresh_token = o->token.refresh_token,
        .resource = o->omit_resource ? NULL : o->prm.resource,
    };
    /* The grant's own server and client, whatever discovery found since. */
    o->req.issuer = gw_xstrdup(o->grant.issuer);
    o->req.token_endpoint = gw_xstrdup(o->grant.token_endpoint);
    o->req.revocation_endpoint = gw_xstrdup(o->grant.revocation_endpoint);
    o->req.client.client_id = gw_xstrdup(o->grant.client.client_id);
    o->req.client.client_secret = gw_xstrdup(o->grant.client.client_secret);
    o->req.client.auth = o->grant.client.auth;
    gw_oauth__post_token(o, &tr);
    return 0;
}

int gw_oauth_refresh(struct gw_oauth *o, gw_oauth_cb cb, void *data)
{
    return refresh(o, true, cb, data);
}

/* ---- a refresh that did not help ---- */

bool gw_oauth_refresh_spent(const struct gw_oauth *o)
{
    return o->spent && o->spent == o->generation;
}

void gw_oauth_accepted(struct gw_oauth *o, unsigned generation)
{
    if (generation == o->generation)
        o->spent = 0;
}

/* ---- revocation ---- */

static void revoke_done(struct gw_oauth *o, CURLcode rc)
{
    if (rc != CURLE_OK || !gw_http_xfer_ok(&o->x))
        gw_log(GW_LOG_WARN, "oauth: the authorization server did not confirm the revocation",
               "server", o->server_url, NULL);
    gw_oauth__finish(o, 0, NULL);
}

int gw_oauth_forget(struct gw_oauth *o)
{
    if (o->op != OP_NONE)
        return -EBUSY;
    /* RFC 7009: the refresh token, whose revocation ends the grant (and,
     * at most servers, its access tokens); else the access token. */
    const char *hint = o->token.refresh_token ? "refresh_token" : "access_token";
    char *token =
        gw_xstrdup(o->token.refresh_token ? o->token.refresh_token : o->token.access_token);
    /* Revoked where it was granted, by the client it was granted to. */
    o->req = o->grant;
    memset(&o->grant, 0, sizeof(o->grant));
    gw_oauth__drop_grant(o);
    gw_oauth__forget_issuer(o);
    gw_oauth_limit_reset(o);
    gw_oauth__schedule_ahead(o);
    const struct gw_oauth_client *c = &o->req.client;
    if (token && o->req.revocation_endpoint && c->client_id) {
        o->op = OP_REVOKE;
        gw_oauth_form_add(&o->body, "token", token);
        gw_oauth_form_add(&o->body, "token_type_hint", hint);
        if (c->auth != GW_OAUTH_AUTH_BASIC)
            gw_oauth_form_add(&o->body, "client_id", c->client_id);
        if (c->auth == GW_OAUTH_AUTH_POST)
            gw_oauth_form_add(&o->body, "client_secret", c->client_secret);
        char why[256];
        if (gw_oauth__add_assertion(o, &o->req, &o->body, why, sizeof(why)) != 0) {
            /* unauthenticated, the server would refuse it anyway */
            gw_log(GW_LOG_WARN, "oauth: no revocation", "server", o->server_url, "reason", why,
                   NULL);
            gw_oauth__finish(o, 0, NULL);
        } else {
            char *basic = gw_oauth_basic_auth(c);
            gw_oauth__fetch(o, o->req.revocation_endpoint, o->body, basic, revoke_done);
            free(basic);
        }
    } else {
        gw_oauth__bound_clear(&o->req);
    }
    if (token)
        memset(token, 0, strlen(token));
    free(token);
    return 0;
}

/* ---- refresh ahead of expiry ---- */

static void ahead_done(void *data, int rc, const char *why)
{
    if (rc < 0)
        gw_log(GW_LOG_WARN, "oauth: the refresh ahead of expiry failed", "server",
               ((struct gw_oauth *)data)->server_url, "reason", why, NULL);
}

static void on_ahead(uv_timer_t *t)
{
    struct gw_oauth *o = t->data;
    if (o->op != OP_NONE) { /* after what runs now */
        uv_timer_start(&o->ahead, on_ahead, 1000, 0);
        return;
    }
    refresh(o, false, ahead_done, o);
}

/* A grant that can be refreshed is, when four fifths of its access
 * token's life (at most a minute before its end) have passed, so that
 * calls never meet an expired token; one already expired, at once. After
 * a refresh that could not be made, not before GW_OAUTH_RETRY_MS, doubled
 * for each one in a row up to GW_OAUTH_RETRY_MAX_MS. */
void gw_oauth__schedule_ahead(struct gw_oauth *o)
{
    uv_timer_stop(&o->ahead);
    if (!o->token.refresh_token || !o->expires_ms || !o->grant.token_endpoint)
        return;
    uint64_t now = gw_now_ms(), left = o->expires_ms > now ? o->expires_ms - now : 0;
    uint64_t margin = left / 5 < 60000 ? left / 5 : 60000, due = left - margin;
    if (o->retries) {
        unsigned shift = o->retries - 1 < 16 ? o->retries - 1 : 16;
        uint64_t wait = (uint64_t)GW_OAUTH_RETRY_MS << shift;
        if (wait > GW_OAUTH_RETRY_MAX_MS)
            wait = GW_OAUTH_RETRY_MAX_MS;
        if (due < wait)
            due = wait;
    }
    uv_timer_start(&o->ahead, on_ahead, due, 0);
}
