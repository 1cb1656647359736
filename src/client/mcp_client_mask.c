/* The server's secrets masked in its JSON-RPC errors (security.md P6): a
 * server that quotes its API key, the header value it was sent or the
 * OAuth token its request carried in an error's message or data would
 * otherwise publish it through every surface the error reaches: the REST
 * and /mcp answers, the log line of the call, spans, lastError and
 * Problems. Masked once, as the error enters, so that none of them needs
 * to know. */
#include "gw/mcp_client_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gw/oauth.h"
#include "gw/util.h"

/* Deeper arrays and objects of an error's data are replaced whole: a
 * walk bounded in depth whatever the server sends, and no server has a
 * reason to nest an error that deep. */
#define MASK_DEPTH 32

/* The client's redactor (configuration and the tokens of the instance's
 * start) and one with the OAuth secrets as they are now: the tokens change
 * with every refresh. */
struct masks {
    const struct gw_redact *r[2];
};

static json_t *masked_string(const struct masks *m, const char *v, size_t n)
{
    char *p = gw_xmalloc(n + 1);
    json_t *j;

    memcpy(p, v, n);
    for (size_t i = 0; i < GW_ARRAY_SIZE(m->r); i++)
        n = gw_redact_line(m->r[i], p, n, false);
    j = json_stringn(p, n);
    free(p);
    /* a partial mask can split a character: nothing of the value stays */
    return j != NULL ? j : json_string("***");
}

/* A copy of `v` with the secrets masked in each string, object keys too,
 * each on its own, never in serialised text, where an escape hides them. */
static json_t *masked(const struct masks *m, json_t *v, unsigned depth)
{
    const char *k;
    json_t *e, *out;
    size_t i;

    switch (json_typeof(v)) {
    case JSON_STRING:
        return masked_string(m, json_string_value(v), json_string_length(v));
    case JSON_ARRAY:
        if (depth >= MASK_DEPTH)
            return json_string("***");
        out = json_array();
        json_array_foreach(v, i, e) json_array_append_new(out, masked(m, e, depth + 1));
        return out;
    case JSON_OBJECT:
        if (depth >= MASK_DEPTH)
            return json_string("***");
        out = json_object();
        json_object_foreach(v, k, e)
        {
            json_t *key = masked_string(m, k, strlen(k));
            json_object_set_new(out, json_string_value(key), masked(m, e, depth + 1));
            json_decref(key);
        }
        return out;
    default:
        return json_incref(v);
    }
}

json_t *gw_mcp__masked_error(const struct gw_mcp_client *c, json_t *error)
{
    struct gw_redact *live = NULL;
    const char *k;
    json_t *v, *out;

    if (c->cb.oauth != NULL) {
        live = gw_redact_new();
        gw_oauth_redact_add(c->cb.oauth, live);
    }
    struct masks m = {{c->redact, live}};
    if ((c->redact == NULL || gw_redact_count(c->redact) == 0) &&
        (live == NULL || gw_redact_count(live) == 0)) {
        gw_redact_free(live);
        return json_incref(error);
    }
    /* the error's own member names stay: its shape is the protocol's */
    out = json_object();
    json_object_foreach(error, k, v) json_object_set_new(out, k, masked(&m, v, 0));
    gw_redact_free(live);
    return out;
}
