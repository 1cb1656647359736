/* The OAuth keys (docs/config.md): gateway.state_dir,
 * gateway.oauth.redirect_uri and servers.<id>.oauth.*. The values are
 * checked here; the OAuth client (upstream/oauth*.c) uses them. */
#include "gw/config_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "gw/jws.h"
#include "gw/util.h"

int gw_cfg_set_state_dir(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                         const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    if (n == NULL || g->state_dir == NULL || g->state_dir[0] == '/')
        return 0;
    gw_cfg_err(ld, n, key, "'%s' must be an absolute path, not '%s'", key, g->state_dir);
    return UV_EINVAL;
}

int gw_cfg_set_redirect_uri(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    const char *u = g->oauth_redirect_uri;
    if (n == NULL || u == NULL)
        return 0;
    if ((strncasecmp(u, "https://", 8) == 0 || strncasecmp(u, "http://", 7) == 0) &&
        !strchr(u, '#') && !strpbrk(u, " \t\"<>\\"))
        return 0;
    gw_cfg_err(ld, n, key,
               "'%s' must be the http(s) URL at which a browser reaches this gateway's "
               "/oauth/callback, not '%s'",
               key, u);
    return UV_EINVAL;
}

int gw_cfg_set_client_metadata_url(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                                   const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    const char *u = g->oauth_client_metadata_url;
    /* A client_id URL: https with a path (the CIMD draft), nothing to hide. */
    if (n == NULL || u == NULL ||
        (strncmp(u, "https://", 8) == 0 && strchr(u + 8, '/') && !strpbrk(u, "#? \t\"<>\\")))
        return 0;
    gw_cfg_err(ld, n, key,
               "'%s' must be an https URL with a path (where the gateway's client metadata "
               "document is served), not '%s'",
               key, u);
    return UV_EINVAL;
}

int gw_cfg_set_oauth_issuer(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    const char *u = s->oauth_issuer;
    /* Compared with the metadata's issuer as a string (RFC 8414 section 3.3). */
    if (n == NULL || u == NULL ||
        ((strncmp(u, "https://", 8) == 0 || strncmp(u, "http://", 7) == 0) &&
         !strpbrk(u, "#? \t\"<>\\")))
        return 0;
    gw_cfg_err(ld, n, key,
               "'%s' must be the authorization server's issuer, an http(s) URL without query or "
               "fragment, not '%s'",
               key, u);
    return UV_EINVAL;
}

int gw_cfg_set_oauth_secret(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    char *v;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_secret_value(ld, n, key, &v) != 0)
        return UV_EINVAL;
    gw_cfg_note_literal_secret(ld, n, key);
    free(s->oauth_client_secret);
    s->oauth_client_secret = v[0] ? v : NULL;
    if (!v[0])
        free(v);
    return 0;
}

int gw_cfg_set_oauth_method(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    static const char *const names[] = {"none", "client_secret_basic", "client_secret_post",
                                        "private_key_jwt"};
    struct gw_server_config *s = base;
    const char *v;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    for (int i = 0; gw_cfg_scalar_str(n, &v) == 0 && i < 4; i++) {
        if (strcmp(v, names[i]) == 0) {
            s->oauth_method = (enum gw_oauth_method)(GW_OAUTH_METHOD_NONE + i);
            return 0;
        }
    }
    gw_cfg_err(ld, n, key,
               "'%s' must be none, client_secret_basic, client_secret_post or private_key_jwt "
               "(or left out)",
               key);
    return UV_EINVAL;
}

int gw_cfg_set_oauth_resource(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                              const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    const char *v;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_scalar_str(n, &v) == 0 && strcmp(v, "omit") == 0) {
        s->oauth_omit_resource = true;
        return 0;
    }
    gw_cfg_err(ld, n, key, "'%s' can only be 'omit' (or left out)", key);
    return UV_EINVAL;
}

int gw_cfg_set_oauth_grant(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                           const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    const char *v;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_scalar_str(n, &v) == 0 &&
        (strcmp(v, "authorization_code") == 0 || strcmp(v, "client_credentials") == 0)) {
        s->oauth_client_credentials = v[0] == 'c';
        return 0;
    }
    gw_cfg_err(ld, n, key, "'%s' must be authorization_code or client_credentials", key);
    return UV_EINVAL;
}

int gw_cfg_set_oauth_scopes(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    char **v = NULL;
    size_t nv = 0;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_str_list(ld, n, key, &v, &nv) != 0)
        return UV_EINVAL;
    for (size_t i = 0; i < nv; i++) {
        if (!v[i][0] || strpbrk(v[i], " \t\"\\")) {
            gw_cfg_err(ld, n, key, "'%s': a scope is one word without quotes: '%s'", key, v[i]);
            gw_cfg_free_strv(v, nv);
            return UV_EINVAL;
        }
    }
    gw_cfg_free_strv(s->oauth_scopes, s->noauth_scopes);
    s->oauth_scopes = v;
    s->noauth_scopes = nv;
    s->has_oauth_scopes = true;
    return 0;
}

/* A PEM key of RSA 4096 bits is about 3.3 KiB; 64 KiB leaves room for a chain. */
#define MAX_KEY_FILE (64u << 10)

int gw_cfg_set_oauth_private_key(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                                 const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    const char *k = NULL, *v = NULL;
    char *pem = NULL;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    /* Not gw_cfg_env_value: a PEM key is lines, which that refuses for
     * header values. */
    if (n->kind == GW_YAML_SCALAR && gw_cfg_scalar_str(n, &v) == 0 && v[0]) {
        gw_cfg_note_literal_secret(ld, n, key);
        pem = gw_xstrdup(v);
    } else if (n->kind == GW_YAML_MAP && gw_yaml_map_len(n) == 1 &&
               gw_cfg_scalar_str(gw_yaml_map_key(n, 0), &k) == 0 &&
               gw_cfg_scalar_str(gw_yaml_map_value(n, 0), &v) == 0 && v[0] &&
               (strcmp(k, "env") == 0 || strcmp(k, "file") == 0)) {
        size_t len;
        if (k[0] == 'f')
            gw_cfg_read_file_value(ld, gw_yaml_map_value(n, 0), key, MAX_KEY_FILE, &pem, &len,
                                   NULL);
        else if (getenv(v))
            pem = gw_xstrdup(getenv(v));
        else
            gw_cfg_err(ld, gw_yaml_map_value(n, 0), key,
                       "ConfigError: Environment variable '%s' not found", v);
        if (!pem)
            return UV_EINVAL;
    } else {
        gw_cfg_err(ld, n, key,
                   "'%s' must be a PEM private key: the text, {env: NAME} or {file: PATH}", key);
        return UV_EINVAL;
    }
    /* Read now, so that `mcpgw -t` and a reload catch a bad key. */
    char why[256];
    struct gw_jws_key *jk;
    if (gw_jws_key_load(pem, &jk, why, sizeof(why)) != 0) {
        gw_cfg_err(ld, n, key, "'%s' %s", key, why);
        memset(pem, 0, strlen(pem));
        free(pem);
        return UV_EINVAL;
    }
    gw_jws_key_free(jk);
    if (s->oauth_private_key)
        memset(s->oauth_private_key, 0, strlen(s->oauth_private_key));
    free(s->oauth_private_key);
    s->oauth_private_key = pem;
    return 0;
}

void gw_cfg_finish_oauth(struct gw_cfg_ld *ld, const struct gw_server_config *s,
                         const struct gw_yaml_node *at, const char *shown)
{
    if (s->oauth_method != GW_OAUTH_METHOD_JWT || s->oauth_private_key)
        return;
    char *key = gw_xasprintf("%s.oauth.private_key", shown);
    gw_cfg_err(ld, gw_cfg_place(at, "token_endpoint_auth_method", at), key,
               "token_endpoint_auth_method private_key_jwt needs '%s' (a PEM key: ES256 or RS256)",
               key);
    free(key);
}

void gw_cfg_free_server_oauth(struct gw_server_config *s)
{
    free(s->oauth_client_id);
    free(s->oauth_client_secret);
    free(s->oauth_issuer);
    if (s->oauth_private_key)
        memset(s->oauth_private_key, 0, strlen(s->oauth_private_key));
    free(s->oauth_private_key);
    gw_cfg_free_strv(s->oauth_scopes, s->noauth_scopes);
}
