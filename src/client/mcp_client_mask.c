/* The server's secrets masked in its JSON-RPC errors (security.md P6): a
 * server that quotes its API key, the header value it was sent or the
 * OAuth token its request carried in an error's message or data would
 * otherwise publish it through every surface the error reaches: the REST
 * and /mcp answers, the log line of the call, spans, lastError and
 * Problems. Masked once, as the error enters, so that none of them needs
 * to know. */
#include "gw/mcp_client_internal.h"

#include "gw/oauth.h"
#include "gw/util.h"

/* Deeper arrays and objects of an error's data are replaced whole: a
 * walk bounded in depth whatever the server sends, and no server has a
 * reason to nest an error that deep. */
#define MASK_DEPTH 32

json_t *gw_mcp__masked_error(const struct gw_mcp_client *c, json_t *error)
{
    struct gw_redact *live = NULL;
    const char *k;
    json_t *v, *out;

    if (c->cb.oauth != NULL) {
        live = gw_redact_new();
        gw_oauth_redact_add(c->cb.oauth, live);
    }
    const struct gw_redact *const r[] = {c->redact, live};
    if ((c->redact == NULL || gw_redact_count(c->redact) == 0) &&
        (live == NULL || gw_redact_count(live) == 0)) {
        gw_redact_free(live);
        return json_incref(error);
    }
    /* the error's own member names stay: its shape is the protocol's */
    out = json_object();
    json_object_foreach(error, k, v)
        json_object_set_new(out, k, gw_redact_json(r, GW_ARRAY_SIZE(r), v, MASK_DEPTH));
    gw_redact_free(live);
    return out;
}
