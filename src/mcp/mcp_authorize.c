/* A tools/call to a server whose OAuth grant stopped working (docs/api.md,
 * "OAuth"): the agent's host is given the authorize link to show its user,
 * as a URL elicitation where the client can take one, else in a tool error
 * the model can pass on. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>

#include "gw/catalog.h"
#include "gw/dispatch.h"
#include "gw/util.h"

/* Did the client declare URL-mode elicitation (capabilities.elicitation.url,
 * in its initialize or, 2026-07-28, in the request's _meta)? */
static bool takes_url_elicitation(const struct gw_mcp_session *s)
{
    return s != NULL && s->url_elicitation;
}

json_t *gw_mcp__authorization_reply(struct gw_mcp_server *ms, const struct gw_mcp_session *s,
                                    json_t *id, const char *tool, const char *server)
{
    static uint64_t elicitations;
    const struct gw_cat_tool *t = NULL;
    char *url = NULL, *msg;
    json_t *r;

    if (server == NULL && (t = gw_catalog_lookup(gw_servers_catalog(ms->servers), tool)) != NULL)
        server = t->server;
    msg = server ? gw_servers_authorization(ms->servers, server, &url) : NULL;
    if (msg == NULL)
        msg = gw_xstrdup(gw_dispatch_error(GW_SERVERS_E_AUTHORIZATION).sentence);
    if (url != NULL && takes_url_elicitation(s) && s->modern) {
        r = gw_mcp__result(id, json_pack("{s:s, s:{s:{s:s, s:{s:s, s:s, s:s}}}}", "resultType",
                                         "input_required", "inputRequests", "authorize", "method",
                                         "elicitation/create", "params", "mode", "url", "message",
                                         msg, "url", url));
    } else if (url != NULL && takes_url_elicitation(s)) {
        /* Unique for the client to match a later completion with: there
         * is none (the gateway learns of the authorization itself). */
        char *eid =
            gw_xasprintf("mcpgw-authorize-%s-%llu", server, (unsigned long long)++elicitations);
        r = gw_mcp__error(id, RPC_URL_ELICITATION, msg);
        json_object_set_new(json_object_get(r, "error"), "data",
                            json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "elicitations", "mode", "url",
                                      "elicitationId", eid, "url", url, "message", msg));
        free(eid);
    } else {
        r = gw_mcp__result(id, json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
                                         msg, "isError", 1));
    }
    free(url);
    free(msg);
    return r;
}
