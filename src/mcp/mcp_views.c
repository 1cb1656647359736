/* Each client's tools/list as last announced (issue 35). With clients, a
 * change of the catalog or of the policy is announced to the sessions and
 * listen streams of the clients whose own view changed, and to no other:
 * a client learns nothing of tools it may not use, not even that they
 * changed. A client's view is noted when it opens its first session or
 * listen stream. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gw/policy.h"
#include "gw/sha256.h"
#include "gw/util.h"

struct mcp_view {
    char client[GW_CLIENT_NAME_MAX + 1];
    unsigned char digest[GW_SHA256_LEN];
};

void gw_mcp__view_note(struct gw_mcp_server *ms, const char *client)
{
    struct mcp_view *v;

    if (!gw_policy_clients(ms->servers) || !gw_policy_known(ms->servers, client))
        return;
    for (size_t i = 0; i < ms->nviews; i++) {
        if (strcmp(ms->views[i].client, client) == 0)
            return;
    }
    ms->views = gw_xrealloc(ms->views, (ms->nviews + 1) * sizeof *ms->views);
    v = &ms->views[ms->nviews++];
    gw_strlcpy(v->client, client, sizeof v->client);
    gw_policy_view_digest(ms->servers, client, v->digest);
}

static void announce(struct gw_mcp_server *ms, const char *client, const char *method)
{
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);

    for (struct gw_mcp_session *s = ms->head; s != NULL; s = s->next) {
        if (s->had_get && strcmp(s->client, client) == 0)
            gw_mcp__session_send(s, msg);
    }
    json_decref(msg);
    gw_mcp__listeners_notify_client(ms, method, client);
}

void gw_mcp__views_announce(struct gw_mcp_server *ms, const char *method)
{
    size_t keep = 0;

    for (size_t i = 0; i < ms->nviews; i++) {
        struct mcp_view v = ms->views[i];
        unsigned char now[GW_SHA256_LEN];
        /* a client the config no longer has cannot pass the gate */
        if (!gw_policy_known(ms->servers, v.client))
            continue;
        gw_policy_view_digest(ms->servers, v.client, now);
        if (memcmp(now, v.digest, sizeof now) != 0) {
            memcpy(v.digest, now, sizeof now);
            if (method != NULL)
                announce(ms, v.client, method);
        }
        ms->views[keep++] = v;
    }
    ms->nviews = keep;
}

void gw_mcp__views_free(struct gw_mcp_server *ms)
{
    free(ms->views);
    ms->views = NULL;
    ms->nviews = 0;
}
