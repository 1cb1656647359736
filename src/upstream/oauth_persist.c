/* One server's OAuth client's files (gw/oauth_internal.h): the
 * registration keyed by issuer and the grant keyed by the server's URL, in
 * <state_dir>/oauth through oauth_store.c. */
#include "gw/oauth_internal.h"

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
    if (!o->store_dir || !o->asm_.token_endpoint)
        return;
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "server", o->server_url, "issuer",
                          o->asm_.issuer, "token_endpoint", o->asm_.token_endpoint, "client_id",
                          o->client.client_id, "token_endpoint_auth_method",
                          gw_oauth_auth_name(o->client.auth), "access_token", o->token.access_token,
                          "expires_at", (json_int_t)o->expires_at);
    if (o->prm.resource)
        json_object_set_new(j, "resource", json_string(o->prm.resource));
    if (o->token.refresh_token)
        json_object_set_new(j, "refresh_token", json_string(o->token.refresh_token));
    if (o->token.scope)
        json_object_set_new(j, "scope", json_string(o->token.scope));
    if (o->asm_.revocation_endpoint)
        json_object_set_new(j, "revocation_endpoint", json_string(o->asm_.revocation_endpoint));
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

/* The grant saved for this server, and the registration of its issuer:
 * enough to send the token and refresh it; authorizing again rediscovers
 * the rest. A file that does not fit is ignored. */
void gw_oauth__load(struct gw_oauth *o)
{
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
    if (o->configured.client_id) { /* the grant must be this client's */
        if (strcmp(gcid, o->configured.client_id) != 0)
            goto out;
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
    o->client = client;
    o->client_issuer = gw_xstrdup(issuer);
    o->asm_.issuer = gw_xstrdup(issuer);
    o->asm_.token_endpoint = gw_xstrdup(te);
    const char *re = json_string_value(json_object_get(g, "revocation_endpoint"));
    if (re && gw_oauth_url_check(re, o->server_host, why, sizeof(why)) == 0)
        o->asm_.revocation_endpoint = gw_xstrdup(re);
    o->prm.issuer = gw_xstrdup(issuer);
    o->prm.resource = gw_xstrdup(json_string_value(json_object_get(g, "resource")));
    o->token.access_token = gw_xstrdup(at);
    o->token.refresh_token = gw_xstrdup(json_string_value(json_object_get(g, "refresh_token")));
    o->token.scope = gw_xstrdup(json_string_value(json_object_get(g, "scope")));
    json_int_t exp = json_integer_value(json_object_get(g, "expires_at"));
    o->expires_at = (time_t)exp;
    if (exp > 0) {
        time_t now = time(NULL);
        o->expires_ms = gw_now_ms() + (exp > now ? (uint64_t)(exp - now) * 1000 : 0) + 1;
    }
out:
    json_decref(c);
    json_decref(g);
}
