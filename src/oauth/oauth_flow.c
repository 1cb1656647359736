/* The OAuth client's flow steps (gw/oauth.h): PKCE and state, the
 * authorization request, the redirect back, the token request. */
#include "gw/oauth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "gw/base64.h"
#include "gw/sha256.h"
#include "gw/util.h"

int gw_oauth_random(char out[GW_OAUTH_RANDOM_LEN])
{
    unsigned char b[32];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        got += (size_t)n;
    }
    gw_base64url_encode(b, sizeof(b), out);
    memset(b, 0, sizeof(b));
    return 0;
}

void gw_oauth_pkce_challenge(const char *verifier, char out[GW_OAUTH_RANDOM_LEN])
{
    struct gw_sha256 c;
    unsigned char d[GW_SHA256_LEN];
    gw_sha256_init(&c);
    gw_sha256_update(&c, verifier, strlen(verifier));
    gw_sha256_final(&c, d);
    gw_base64url_encode(d, sizeof(d), out);
}

char *gw_oauth_authz_url(const struct gw_oauth_authz_request *r)
{
    char challenge[GW_OAUTH_RANDOM_LEN];
    char *q = NULL;
    gw_oauth_pkce_challenge(r->verifier, challenge);
    gw_oauth_form_add(&q, "response_type", "code");
    gw_oauth_form_add(&q, "client_id", r->client_id);
    gw_oauth_form_add(&q, "redirect_uri", r->redirect_uri);
    gw_oauth_form_add(&q, "code_challenge", challenge);
    gw_oauth_form_add(&q, "code_challenge_method", "S256");
    gw_oauth_form_add(&q, "state", r->state);
    if (r->scope && *r->scope)
        gw_oauth_form_add(&q, "scope", r->scope);
    if (r->resource)
        gw_oauth_form_add(&q, "resource", r->resource);
    char *url = gw_xasprintf("%s%c%s", r->authorization_endpoint,
                             strchr(r->authorization_endpoint, '?') ? '&' : '?', q);
    free(q);
    return url;
}

void gw_oauth_redirect_clear(struct gw_oauth_redirect *r)
{
    free(r->code);
    free(r->error);
    memset(r, 0, sizeof(*r));
}

/* RFC 6749 section 4.1.2.1: an error code is 1 to 100 of %x20-21 /
 * %x23-5B / %x5D-7E; another (control characters, bytes that are not
 * UTF-8) is not shown. */
static bool error_code_ok(const char *e)
{
    size_t n = strlen(e);
    for (size_t i = 0; i < n; i++)
        if (e[i] < 0x20 || e[i] > 0x7e || e[i] == '"' || e[i] == '\\')
            return false;
    return n > 0 && n <= 100;
}

int gw_oauth_redirect_read(const char *query, const char *state, const char *issuer,
                           bool iss_supported, struct gw_oauth_redirect *r, char *why, size_t cap)
{
    bool dup_state, dup_iss, dup_code, dup_error;
    char *got_state = gw_oauth_form_get(query, "state", &dup_state);
    char *iss = gw_oauth_form_get(query, "iss", &dup_iss);
    int rc = -EACCES;
    memset(r, 0, sizeof(*r));
    r->code = gw_oauth_form_get(query, "code", &dup_code);
    r->error = gw_oauth_form_get(query, "error", &dup_error);
    if (!got_state || dup_state ||
        !gw_secure_equal(got_state, strlen(got_state), state, strlen(state))) {
        gw_say(why, cap, "the redirect's state is not the pending one");
    } else if (dup_iss || (iss && strcmp(iss, issuer) != 0)) {
        /* RFC 9207 section 2.4: a mix-up; nothing in it is acted on. */
        gw_say(why, cap, "the redirect came from another authorization server than %.*s",
               gw_utf8_cut(issuer, 300), issuer);
    } else if (!iss && iss_supported) {
        gw_say(why, cap, "the redirect has no iss, which %.*s promised", gw_utf8_cut(issuer, 300),
               issuer);
    } else if (r->error && !error_code_ok(r->error)) {
        gw_say(why, cap,
               "the authorization server refused, with an error code outside RFC "
               "6749's characters");
        rc = -EINVAL;
    } else if (r->error || dup_error) {
        gw_say(why, cap, "the authorization server refused");
        rc = -EINVAL;
        goto out; /* r->error stays, for the caller to show */
    } else if (!r->code || !*r->code || dup_code) {
        gw_say(why, cap, "the redirect carries no code");
        rc = -EINVAL;
    } else {
        rc = 0;
    }
    free(r->error);
    r->error = NULL;
out:
    if (rc < 0) {
        free(r->code);
        r->code = NULL;
    }
    free(got_state);
    free(iss);
    return rc;
}

char *gw_oauth_token_body(const struct gw_oauth_token_request *r)
{
    char *b = NULL;
    if (r->code) {
        gw_oauth_form_add(&b, "grant_type", "authorization_code");
        gw_oauth_form_add(&b, "code", r->code);
        gw_oauth_form_add(&b, "redirect_uri", r->redirect_uri);
        gw_oauth_form_add(&b, "code_verifier", r->verifier);
    } else if (r->refresh_token) {
        gw_oauth_form_add(&b, "grant_type", "refresh_token");
        gw_oauth_form_add(&b, "refresh_token", r->refresh_token);
    } else {
        gw_oauth_form_add(&b, "grant_type", "client_credentials");
        if (r->scope)
            gw_oauth_form_add(&b, "scope", r->scope);
    }
    if (r->resource)
        gw_oauth_form_add(&b, "resource", r->resource);
    /* client_secret_basic carries the client in the header; the others
     * name it in the body (RFC 6749 section 2.3.1, 3.2.1). */
    if (r->client->auth != GW_OAUTH_AUTH_BASIC)
        gw_oauth_form_add(&b, "client_id", r->client->client_id);
    if (r->client->auth == GW_OAUTH_AUTH_POST)
        gw_oauth_form_add(&b, "client_secret", r->client->client_secret);
    return b;
}

char *gw_oauth_basic_auth(const struct gw_oauth_client *c)
{
    if (c->auth != GW_OAUTH_AUTH_BASIC)
        return NULL;
    /* RFC 6749 section 2.3.1: both parts form-encoded before base64. */
    char *id = NULL, *secret = NULL;
    gw_oauth_form_add(&id, "", c->client_id);
    gw_oauth_form_add(&secret, "", c->client_secret ? c->client_secret : "");
    char *pair = gw_xasprintf("%s:%s", id + 1, secret + 1);
    char *b64 = gw_base64_encode((const unsigned char *)pair, strlen(pair));
    char *out = gw_xasprintf("Basic %s", b64);
    memset(pair, 0, strlen(pair));
    free(pair);
    free(b64);
    free(id);
    free(secret);
    return out;
}
