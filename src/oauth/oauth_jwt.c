/* private_key_jwt (RFC 7523 section 2.2): the client authenticates at the
 * token and revocation endpoints with a short-lived JWT signed by its
 * configured key instead of a secret. The audience is the authorization
 * server's issuer (draft-ietf-oauth-rfc7523bis: not the token endpoint,
 * which a malicious server could name after another). The assertion
 * lives only in the request body: never logged, never stored. */
#include "gw/oauth_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw/jws.h"
#include "gw/log.h"
#include "gw/util.h"

void gw_oauth__load_key(struct gw_oauth *o, const char *pem)
{
    char why[256];
    /* The config loader read this key already; this fails only if the
     * key file or libcrypto changed under us since. */
    if (pem && gw_jws_key_load(pem, &o->key, why, sizeof(why)) != 0)
        gw_log(GW_LOG_WARN, "oauth: the private_key cannot be used", "server", o->server_url,
               "reason", why, NULL);
}

int gw_oauth__add_assertion(const struct gw_oauth *o, const struct bound *b, char **body, char *why,
                            size_t cap)
{
    if (b->client.auth != GW_OAUTH_AUTH_JWT)
        return 0;
    if (!o->key || !b->issuer) {
        gw_say(why, cap, "private_key_jwt needs oauth.private_key (an ES256 or RS256 PEM key)");
        return -EINVAL;
    }
    char *jwt = gw_jws_client_assertion(o->key, b->client.client_id, b->issuer, (int64_t)time(NULL),
                                        why, cap);
    if (!jwt)
        return -EINVAL;
    gw_oauth_form_add(body, "client_assertion_type",
                      "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    gw_oauth_form_add(body, "client_assertion", jwt);
    memset(jwt, 0, strlen(jwt));
    free(jwt);
    return 0;
}
