/* What a server's grant offers the rest of the gateway (gw/oauth.h): the
 * access token its requests carry, the secrets its output is masked of, and
 * the summary /v1/servers shows, which never holds a token. */
#include "gw/oauth_internal.h"

#include <string.h>

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
    if (!o->token.access_token || !o->asm_.issuer)
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
    if (o->expires_at)
        gw_format_time(o->expires_at, expires, sizeof(expires));
    return json_pack("{s:s, s:o?, s:s?, s:b}", "issuer", o->asm_.issuer, "scopes", scopes,
                     "expiresAt", o->expires_at ? expires : NULL, "refreshable",
                     o->token.refresh_token != NULL && o->asm_.token_endpoint != NULL);
}
