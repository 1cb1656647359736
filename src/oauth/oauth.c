/* The OAuth client's documents and flow steps (gw/oauth.h): the Bearer
 * challenge, protected-resource and authorization-server metadata, client
 * registration and token answers. */
#include "gw/oauth.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

/* ---- WWW-Authenticate (RFC 9110 section 11.6.1) ---- */

static bool tchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* A quoted-string at p (on the opening quote): its unescaped value (heap)
 * and the position after the closing quote, or NULL when unterminated. */
static char *quoted(const char **pp)
{
    const char *p = *pp + 1;
    size_t n = 0;
    char *out = gw_xmalloc(strlen(p) + 1);
    for (; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1])
            p++;
        out[n++] = *p;
    }
    if (*p != '"') {
        free(out);
        return NULL;
    }
    out[n] = 0;
    *pp = p + 1;
    return out;
}

static void take(char **slot, char *value)
{
    if (*slot) /* the first occurrence counts */
        free(value);
    else
        *slot = value;
}

void gw_oauth_challenge_clear(struct gw_oauth_challenge *c)
{
    free(c->resource_metadata);
    free(c->scope);
    free(c->error);
    memset(c, 0, sizeof(*c));
}

int gw_oauth_challenge_parse(const char *value, struct gw_oauth_challenge *c)
{
    const char *p = value ? value : "";
    bool found = false;
    memset(c, 0, sizeof(*c));
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *scheme = p;
        while (tchar((unsigned char)*p))
            p++;
        size_t slen = (size_t)(p - scheme);
        if (slen == 0)
            goto bad;
        bool bearer = !found && slen == 6 && strncasecmp(scheme, "Bearer", 6) == 0;
        found = found || bearer;
        /* Its parameters (or a token68), up to the next scheme: a token
         * not followed by '='. */
        for (;;) {
            p = skip_ws(p);
            while (*p == ',')
                p = skip_ws(p + 1);
            const char *name = p;
            while (tchar((unsigned char)*p))
                p++;
            size_t nlen = (size_t)(p - name);
            const char *q = skip_ws(p);
            if (nlen == 0 || *q != '=') {
                p = name;
                break;
            }
            q = skip_ws(q + 1);
            char *v;
            if (*q == '"') {
                v = quoted(&q);
                if (!v)
                    goto bad;
            } else if (*q == '=' || *q == ',' || !*q) {
                /* token68 ("abc==" or "abc="): skip it */
                while (*q == '=')
                    q++;
                p = q;
                continue;
            } else {
                const char *vs = q;
                while (tchar((unsigned char)*q))
                    q++;
                if (q == vs)
                    goto bad;
                v = gw_xstrndup(vs, (size_t)(q - vs));
            }
            p = q;
            if (!bearer)
                free(v);
            else if (nlen == 17 && strncasecmp(name, "resource_metadata", 17) == 0)
                take(&c->resource_metadata, v);
            else if (nlen == 5 && strncasecmp(name, "scope", 5) == 0)
                take(&c->scope, v);
            else if (nlen == 5 && strncasecmp(name, "error", 5) == 0)
                take(&c->error, v);
            else
                free(v);
        }
    }
    if (found)
        return 0;
bad:
    gw_oauth_challenge_clear(c);
    return -EINVAL;
}

/* ---- metadata documents ---- */

static json_t *load(const char *body, size_t len, char *why, size_t cap)
{
    json_error_t err;
    json_t *j = body ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &err) : NULL;
    if (!json_is_object(j)) {
        gw_say(why, cap, "the answer is not a JSON object");
        json_decref(j);
        return NULL;
    }
    return j;
}

static char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? gw_xstrdup(s) : NULL;
}

/* A string array joined by spaces (heap), or NULL when absent or empty;
 * entries that are not strings or hold a space are skipped. */
static char *joined(json_t *o, const char *key)
{
    json_t *a = json_object_get(o, key), *v;
    size_t i;
    char *out = NULL;
    json_array_foreach(a, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || !*s || strchr(s, ' '))
            continue;
        char *next = out ? gw_xasprintf("%s %s", out, s) : gw_xstrdup(s);
        free(out);
        out = next;
    }
    return out;
}

static bool listed(json_t *o, const char *key, const char *want)
{
    json_t *v;
    size_t i;
    json_array_foreach(json_object_get(o, key), i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), want) == 0)
            return true;
    }
    return false;
}

void gw_oauth_prm_clear(struct gw_oauth_prm *p)
{
    free(p->resource);
    free(p->issuer);
    free(p->scopes);
    memset(p, 0, sizeof(*p));
}

int gw_oauth_prm_read(const char *body, size_t len, const char *server_url, struct gw_oauth_prm *p,
                      char *why, size_t cap)
{
    memset(p, 0, sizeof(*p));
    json_t *j = load(body, len, why, cap);
    if (!j)
        return -EINVAL;
    int rc = -EINVAL;
    p->resource = str(j, "resource");
    p->scopes = joined(j, "scopes_supported");
    const char *as =
        json_string_value(json_array_get(json_object_get(j, "authorization_servers"), 0));
    struct gw_oauth_url u;
    char uwhy[160];
    if (!p->resource) {
        gw_say(why, cap, "the protected resource metadata has no \"resource\"");
    } else if (!gw_oauth_resource_matches(p->resource, server_url)) {
        gw_say(why, cap, "the protected resource metadata names %.*s, which is not this server",
               gw_utf8_cut(p->resource, 300), p->resource);
    } else if (!as) {
        gw_say(why, cap, "the protected resource metadata names no authorization server");
    } else if (gw_oauth_url_parse(as, &u, uwhy, sizeof(uwhy)) < 0) {
        gw_say(why, cap, "its authorization server: %s", uwhy);
    } else {
        bool clean = !u.query;
        gw_oauth_url_clear(&u);
        if (clean) {
            p->issuer = gw_xstrdup(as);
            rc = 0;
        } else {
            gw_say(why, cap, "its authorization server's URL has a query");
        }
    }
    json_decref(j);
    if (rc < 0)
        gw_oauth_prm_clear(p);
    return rc;
}

void gw_oauth_asm_clear(struct gw_oauth_asm *m)
{
    free(m->issuer);
    free(m->authorization_endpoint);
    free(m->token_endpoint);
    free(m->registration_endpoint);
    free(m->revocation_endpoint);
    free(m->scopes);
    memset(m, 0, sizeof(*m));
}

static const char *const auth_names[] = {"none", "client_secret_basic", "client_secret_post",
                                         "private_key_jwt"};

const char *gw_oauth_auth_name(unsigned method)
{
    for (unsigned i = 0; i < 4; i++)
        if (method == 1u << i)
            return auth_names[i];
    return "?";
}

unsigned gw_oauth_auth_parse(const char *name)
{
    for (unsigned i = 0; name && i < 4; i++)
        if (strcmp(name, auth_names[i]) == 0)
            return 1u << i;
    return 0;
}

/* An endpoint URL the flow will send the browser or a request to. */
static int endpoint(json_t *j, const char *key, bool required, char **out, char *why, size_t cap)
{
    struct gw_oauth_url u;
    char uwhy[160];
    *out = str(j, key);
    if (!*out) {
        if (required)
            gw_say(why, cap, "the authorization server metadata has no \"%s\"", key);
        return required ? -EINVAL : 0;
    }
    if (gw_oauth_url_parse(*out, &u, uwhy, sizeof(uwhy)) < 0) {
        gw_say(why, cap, "its %s: %s", key, uwhy);
        return -EINVAL;
    }
    bool ok = u.https || gw_oauth_host_class(u.host) == GW_OAUTH_ADDR_LOOPBACK;
    gw_oauth_url_clear(&u);
    if (!ok) {
        gw_say(why, cap, "its %s is not https", key);
        return -EINVAL;
    }
    return 0;
}

int gw_oauth_asm_read(const char *body, size_t len, const char *issuer, struct gw_oauth_asm *m,
                      char *why, size_t cap)
{
    memset(m, 0, sizeof(*m));
    json_t *j = load(body, len, why, cap);
    if (!j)
        return -EINVAL;
    int rc = -EINVAL;
    m->issuer = str(j, "issuer");
    if (!m->issuer || strcmp(m->issuer, issuer) != 0) {
        gw_say(why, cap, "the authorization server metadata is for another issuer than %.*s",
               gw_utf8_cut(issuer, 300), issuer);
        goto out;
    }
    if (!listed(j, "code_challenge_methods_supported", "S256")) {
        gw_say(why, cap, "the authorization server does not offer PKCE S256");
        goto out;
    }
    if (endpoint(j, "authorization_endpoint", true, &m->authorization_endpoint, why, cap) < 0 ||
        endpoint(j, "token_endpoint", true, &m->token_endpoint, why, cap) < 0 ||
        endpoint(j, "registration_endpoint", false, &m->registration_endpoint, why, cap) < 0 ||
        endpoint(j, "revocation_endpoint", false, &m->revocation_endpoint, why, cap) < 0)
        goto out;
    m->scopes = joined(j, "scopes_supported");
    m->iss_supported =
        json_is_true(json_object_get(j, "authorization_response_iss_parameter_supported"));
    m->cimd_supported = json_is_true(json_object_get(j, "client_id_metadata_document_supported"));
    json_t *methods = json_object_get(j, "token_endpoint_auth_methods_supported"), *v;
    size_t i;
    m->auth_methods_listed = json_is_array(methods);
    json_array_foreach(methods, i, v) m->auth_methods |= gw_oauth_auth_parse(json_string_value(v));
    if (!m->auth_methods_listed) /* RFC 8414 section 2's default */
        m->auth_methods = GW_OAUTH_AUTH_BASIC;
    rc = 0;
out:
    json_decref(j);
    if (rc < 0)
        gw_oauth_asm_clear(m);
    return rc;
}

unsigned gw_oauth_auth_choose(const struct gw_oauth_asm *m, bool has_secret)
{
    if (!has_secret)
        return m->auth_methods & GW_OAUTH_AUTH_NONE;
    if (m->auth_methods & GW_OAUTH_AUTH_BASIC)
        return GW_OAUTH_AUTH_BASIC;
    return m->auth_methods & GW_OAUTH_AUTH_POST;
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        size_t l = strcspn(p, " ");
        if (l == n && memcmp(p, word, n) == 0)
            return true;
        p += l;
        p += strspn(p, " ");
    }
    return false;
}

char *gw_oauth_scopes_select(const char *challenge_scope, const char *prm_scopes,
                             const char *asm_scopes)
{
    const char *from = challenge_scope && *challenge_scope ? challenge_scope : prm_scopes;
    char *out = NULL;
    for (const char *p = from; p && *p;) {
        p += strspn(p, " ");
        size_t l = strcspn(p, " ");
        if (l == 0)
            break;
        char *w = gw_xstrndup(p, l);
        p += l;
        if ((strcmp(w, "offline_access") == 0 && !has_word(asm_scopes, w)) || has_word(out, w)) {
            free(w);
            continue;
        }
        char *next = out ? gw_xasprintf("%s %s", out, w) : gw_xstrdup(w);
        free(out);
        free(w);
        out = next;
    }
    return out;
}

/* ---- registration and tokens ---- */

char *gw_oauth_dcr_request(const char *redirect_uri, const char *scopes)
{
    json_t *j = json_pack("{s:s, s:[s], s:[s,s], s:[s], s:s, s:s}", "client_name", "mcpgw",
                          "redirect_uris", redirect_uri, "grant_types", "authorization_code",
                          "refresh_token", "response_types", "code", "token_endpoint_auth_method",
                          "none", "application_type", "native");
    if (scopes && *scopes)
        json_object_set_new(j, "scope", json_string(scopes));
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

void gw_oauth_client_clear(struct gw_oauth_client *c)
{
    free(c->client_id);
    free(c->client_secret);
    memset(c, 0, sizeof(*c));
}

int gw_oauth_dcr_read(const char *body, size_t len, struct gw_oauth_client *c, char *why,
                      size_t cap)
{
    memset(c, 0, sizeof(*c));
    json_t *j = load(body, len, why, cap);
    if (!j)
        return -EINVAL;
    int rc = -EINVAL;
    c->client_id = str(j, "client_id");
    c->client_secret = str(j, "client_secret");
    const char *m = json_string_value(json_object_get(j, "token_endpoint_auth_method"));
    c->auth = m                  ? gw_oauth_auth_parse(m)
              : c->client_secret ? GW_OAUTH_AUTH_BASIC
                                 : GW_OAUTH_AUTH_NONE;
    if (!c->client_id)
        gw_say(why, cap, "the registration answer has no client_id");
    else if (!c->auth)
        gw_say(why, cap, "the registration answer asks for an unsupported authentication method");
    else if (c->auth == GW_OAUTH_AUTH_JWT) /* we register no keys (jwks) */
        gw_say(why, cap,
               "the registration answer asks for private_key_jwt, which needs a "
               "configured client and key");
    else if (c->auth != GW_OAUTH_AUTH_NONE && !c->client_secret)
        gw_say(why, cap, "the registration answer asks for a client secret it did not give");
    else
        rc = 0;
    json_decref(j);
    if (rc < 0)
        gw_oauth_client_clear(c);
    return rc;
}

void gw_oauth_token_clear(struct gw_oauth_token *t)
{
    free(t->access_token);
    free(t->refresh_token);
    free(t->scope);
    memset(t, 0, sizeof(*t));
}

/* A token goes into an Authorization header as it is: visible ASCII only
 * (a CR or LF would split the request), and a sane length. */
static bool header_safe(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if ((unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f)
            return false;
    return n <= 16384;
}

/* A server's error code is shown only when it is a plain token: it is the
 * server's text, and a hostile one would put anything there. */
static void say_error(const char *what, const char *code, char *why, size_t cap)
{
    bool plain = code && *code && strlen(code) <= 64;
    for (const char *p = code; plain && *p; p++)
        plain = isalnum((unsigned char)*p) || *p == '_';
    if (plain)
        gw_say(why, cap, "%s: %s", what, code);
    else
        gw_say(why, cap, "%s", what);
}

int gw_oauth_token_read(const char *body, size_t len, struct gw_oauth_token *t, char *why,
                        size_t cap)
{
    memset(t, 0, sizeof(*t));
    json_t *j = load(body, len, why, cap);
    if (!j)
        return -EINVAL;
    int rc = -EINVAL;
    const char *type = json_string_value(json_object_get(j, "token_type"));
    json_t *exp = json_object_get(j, "expires_in");
    t->access_token = str(j, "access_token");
    t->refresh_token = str(j, "refresh_token");
    t->scope = str(j, "scope");
    if (json_is_integer(exp) && json_integer_value(exp) > 0)
        t->expires_in = json_integer_value(exp) < GW_OAUTH_EXPIRES_MAX ? json_integer_value(exp)
                                                                       : GW_OAUTH_EXPIRES_MAX;
    else if (json_is_real(exp) && json_real_value(exp) > 0) /* NaN is not */
        t->expires_in = json_real_value(exp) < 1 ? 1
                        : json_real_value(exp) < GW_OAUTH_EXPIRES_MAX
                            ? (int64_t)json_real_value(exp)
                            : GW_OAUTH_EXPIRES_MAX;
    if (json_object_get(j, "error"))
        say_error("the token request was refused", json_string_value(json_object_get(j, "error")),
                  why, cap);
    else if (!t->access_token)
        gw_say(why, cap, "the token answer has no access_token");
    else if (!type || strcasecmp(type, "Bearer") != 0)
        gw_say(why, cap, "the token answer's token_type is not Bearer");
    else if (!header_safe(t->access_token))
        gw_say(why, cap, "the access token has characters a header cannot carry");
    else
        rc = 0;
    json_decref(j);
    if (rc < 0)
        gw_oauth_token_clear(t);
    return rc;
}
