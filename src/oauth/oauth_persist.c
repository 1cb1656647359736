/* One server's OAuth client's files (gw/oauth_internal.h): the
 * registration keyed by issuer, the grant and the issuer a configured
 * client_secret is bound to keyed by the server's URL, in
 * <state_dir>/oauth through oauth_store.c. */
#include "gw/oauth_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/util.h"

static void store(struct gw_oauth *o, const char *kind, const char *key, json_t *j)
{
    char name[GW_OAUTH_NAME_LEN], why[300], *dir;
    if (!o->store_ready) {
        if (gw_oauth_store_open(o->state_dir, &dir, why, sizeof(why)) < 0) {
            gw_log(GW_LOG_WARN, "oauth: cannot keep the grant across restarts", "reason", why,
                   NULL);
            json_decref(j);
            return;
        }
        free(dir);
        o->store_ready = true;
    }
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    gw_oauth_store_name(kind, key, name);
    if (gw_oauth_store_write(o->store_dir, name, text, strlen(text)) < 0)
        gw_log(GW_LOG_WARN, "oauth: could not save a file", "dir", o->store_dir, "file", name,
               NULL);
    memset(text, 0, strlen(text));
    free(text);
}

void gw_oauth__save_client(struct gw_oauth *o)
{
    if (!o->store_dir)
        return;
    json_t *j =
        json_pack("{s:s, s:s, s:s}", "issuer", o->client_issuer, "client_id", o->client.client_id,
                  "token_endpoint_auth_method", gw_oauth_auth_name(o->client.auth));
    if (o->client.client_secret)
        json_object_set_new(j, "client_secret", json_string(o->client.client_secret));
    store(o, "client", o->client_issuer, j);
}

void gw_oauth__save_grant(struct gw_oauth *o)
{
    const struct bound *g = &o->grant;
    if (!o->store_dir || !g->token_endpoint)
        return;
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "server", o->server_url, "issuer",
                  g->issuer, "token_endpoint", g->token_endpoint, "client_id", g->client.client_id,
                  "token_endpoint_auth_method", gw_oauth_auth_name(g->client.auth), "access_token",
                  o->token.access_token, "expires_at", (json_int_t)o->expires_at);
    if (o->prm.resource)
        json_object_set_new(j, "resource", json_string(o->prm.resource));
    if (o->token.refresh_token)
        json_object_set_new(j, "refresh_token", json_string(o->token.refresh_token));
    if (o->token.scope)
        json_object_set_new(j, "scope", json_string(o->token.scope));
    if (g->revocation_endpoint)
        json_object_set_new(j, "revocation_endpoint", json_string(g->revocation_endpoint));
    store(o, "grant", o->server_url, j);
}

void gw_oauth__drop_grant(struct gw_oauth *o)
{
    char name[GW_OAUTH_NAME_LEN];
    gw_oauth_token_clear(&o->token);
    o->generation++;
    o->expires_ms = 0;
    o->expires_at = 0;
    if (!o->store_dir)
        return;
    gw_oauth_store_name("grant", o->server_url, name);
    gw_oauth_store_remove(o->store_dir, name);
}

static json_t *load_file(struct gw_oauth *o, const char *kind, const char *key)
{
    char name[GW_OAUTH_NAME_LEN];
    gw_oauth_store_name(kind, key, name);
    char why[400];
    char *text = gw_oauth_store_read(o->store_dir, name, GW_OAUTH_FILE_MAX, why, sizeof(why));
    if (!text && why[0])
        gw_log(GW_LOG_WARN, "oauth: a saved file was not loaded", "server", o->server_url, "reason",
               why, NULL);
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    if (text)
        memset(text, 0, strlen(text));
    free(text);
    if (!json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The issuer the configured client_secret was first used with. */
static void load_issuer(struct gw_oauth *o)
{
    json_t *r = load_file(o, "issuer", o->server_url);
    const char *server = json_string_value(json_object_get(r, "server"));
    const char *cid = json_string_value(json_object_get(r, "client_id"));
    const char *issuer = json_string_value(json_object_get(r, "issuer"));
    if (server && cid && issuer && strcmp(server, o->server_url) == 0 &&
        strcmp(cid, o->configured.client_id) == 0)
        o->secret_issuer = gw_xstrdup(issuer);
    json_decref(r);
}

int gw_oauth__issuer_check(struct gw_oauth *o, char *why, size_t cap)
{
    const char *is = o->asm_.issuer;
    if (o->pinned_issuer) {
        if (strcmp(o->pinned_issuer, is) == 0)
            return 0;
        gw_say(why, cap,
               "the authorization server is now %.300s, not %.300s (oauth.issuer): the "
               "configured client is used with no other",
               is, o->pinned_issuer);
        return -EXDEV;
    }
    if (!o->configured.client_secret)
        return 0;
    if (!o->secret_issuer) {
        o->secret_issuer = gw_xstrdup(is);
        if (o->store_dir)
            store(o, "issuer", o->server_url,
                  json_pack("{s:s, s:s, s:s}", "server", o->server_url, "client_id",
                            o->configured.client_id, "issuer", is));
        return 0;
    }
    if (strcmp(o->secret_issuer, is) == 0)
        return 0;
    gw_say(why, cap,
           "the authorization server changed from %.300s to %.300s: the configured "
           "client_secret is not sent to the new one until the change is confirmed by logging "
           "out (mcpgw auth logout, or DELETE /v1/servers/{id}/authorize), or oauth.issuer "
           "names it",
           o->secret_issuer, is);
    return -EXDEV;
}

void gw_oauth__forget_issuer(struct gw_oauth *o)
{
    char name[GW_OAUTH_NAME_LEN];
    free(o->secret_issuer);
    o->secret_issuer = NULL;
    if (!o->store_dir)
        return;
    gw_oauth_store_name("issuer", o->server_url, name);
    gw_oauth_store_remove(o->store_dir, name);
}

/* The grant saved for this server, and the registration of its issuer:
 * enough to send the token and refresh it (there, with that client);
 * authorizing again rediscovers the rest. A file that does not fit is
 * ignored, as is a configured client's grant from another issuer than
 * oauth.issuer. */
void gw_oauth__load(struct gw_oauth *o)
{
    if (o->configured.client_id && o->configured.client_secret)
        load_issuer(o);
    json_t *g = load_file(o, "grant", o->server_url), *c = NULL;
    const char *issuer = json_string_value(json_object_get(g, "issuer"));
    const char *te = json_string_value(json_object_get(g, "token_endpoint"));
    const char *at = json_string_value(json_object_get(g, "access_token"));
    const char *server = json_string_value(json_object_get(g, "server"));
    const char *gcid = json_string_value(json_object_get(g, "client_id"));
    char why[200];
    if (!issuer || !te || !at || !server || !gcid || strcmp(server, o->server_url) != 0 ||
        gw_oauth_url_check(te, o->server_host, why, sizeof(why)) < 0)
        goto out;
    struct gw_oauth_client client = {0};
    if (o->configured.client_id) { /* the grant must be this client's, at its issuer */
        if (strcmp(gcid, o->configured.client_id) != 0 ||
            (o->pinned_issuer && strcmp(issuer, o->pinned_issuer) != 0) ||
            (o->secret_issuer && strcmp(issuer, o->secret_issuer) != 0))
            goto out;
        if (o->configured.client_secret && !o->secret_issuer)
            o->secret_issuer = gw_xstrdup(issuer);
        client.client_id = gw_xstrdup(gcid);
        client.client_secret = gw_xstrdup(o->configured.client_secret);
        client.auth = gw_oauth_auth_parse(
            json_string_value(json_object_get(g, "token_endpoint_auth_method")));
    } else {
        c = load_file(o, "client", issuer);
        const char *cid = json_string_value(json_object_get(c, "client_id"));
        const char *ci = json_string_value(json_object_get(c, "issuer"));
        if (!cid || !ci || strcmp(ci, issuer) != 0 || strcmp(cid, gcid) != 0)
            goto out;
        client.client_id = gw_xstrdup(cid);
        client.client_secret = gw_xstrdup(json_string_value(json_object_get(c, "client_secret")));
        client.auth = gw_oauth_auth_parse(
            json_string_value(json_object_get(c, "token_endpoint_auth_method")));
        o->client_registered = true;
    }
    if (!client.auth) {
        gw_oauth_client_clear(&client);
        goto out;
    }
    o->grant.client = client;
    o->client.client_id = gw_xstrdup(client.client_id);
    o->client.client_secret = gw_xstrdup(client.client_secret);
    o->client.auth = client.auth;
    o->client_issuer = gw_xstrdup(issuer);
    o->grant.issuer = gw_xstrdup(issuer);
    o->grant.token_endpoint = gw_xstrdup(te);
    const char *re = json_string_value(json_object_get(g, "revocation_endpoint"));
    if (re && gw_oauth_url_check(re, o->server_host, why, sizeof(why)) == 0)
        o->grant.revocation_endpoint = gw_xstrdup(re);
    o->prm.issuer = gw_xstrdup(issuer);
    o->prm.resource = gw_xstrdup(json_string_value(json_object_get(g, "resource")));
    o->token.access_token = gw_xstrdup(at);
    o->token.refresh_token = gw_xstrdup(json_string_value(json_object_get(g, "refresh_token")));
    o->token.scope = gw_xstrdup(json_string_value(json_object_get(g, "scope")));
    /* A file says what it likes: the times are bounded as a token
     * answer's are (gw/oauth.h, GW_OAUTH_EXPIRES_MAX). */
    json_int_t exp = json_integer_value(json_object_get(g, "expires_at"));
    time_t now = time(NULL);
    if (exp > 0) {
        json_int_t left = exp > now ? exp - now : 0;
        if (left > GW_OAUTH_EXPIRES_MAX)
            left = GW_OAUTH_EXPIRES_MAX;
        o->expires_at = exp > now ? now + (time_t)left : (time_t)exp;
        o->expires_ms = gw_now_ms() + (uint64_t)left * 1000 + 1;
    }
out:
    json_decref(c);
    json_decref(g);
}
