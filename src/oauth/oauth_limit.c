/* The count of authorization requests per operation (gw/oauth.h,
 * GW_OAUTH_AUTHZ_MAX): an authorization server that never grants what a
 * server asks for would otherwise send a person round the browser for
 * ever. An operation is the server's start, or a step-up for one set of
 * scopes; a step-up for other scopes is another operation. */
#include "gw/oauth_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

static void limit_clear(struct gw_oauth *o)
{
    o->authz_count = 0;
    o->gave_up = false;
    free(o->authz_scopes);
    o->authz_scopes = NULL;
}

int gw_oauth__count_request(struct gw_oauth *o, const char *scopes)
{
    if (o->authz_count >= GW_OAUTH_AUTHZ_MAX) {
        o->gave_up = true;
        return -EPERM;
    }
    o->authz_count++;
    free(o->authz_scopes);
    o->authz_scopes = gw_xstrdup(scopes ? scopes : "");
    o->authz_step = o->step_scopes != NULL;
    return 0;
}

void gw_oauth__note_challenge(struct gw_oauth *o)
{
    if (o->step_scopes && o->authz_scopes && strcmp(o->step_scopes, o->authz_scopes) != 0)
        limit_clear(o);
    else if (o->authz_count >= GW_OAUTH_AUTHZ_MAX)
        o->gave_up = true;
}

const char *gw_oauth_gave_up(const struct gw_oauth *o)
{
    return o->gave_up ? o->authz_scopes : NULL;
}

void gw_oauth_started(struct gw_oauth *o)
{
    o->spent = 0; /* the server took the token */
    if (!o->authz_step)
        limit_clear(o);
}

void gw_oauth_limit_reset(struct gw_oauth *o)
{
    limit_clear(o);
}
