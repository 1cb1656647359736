/* Each client's tools/list as last announced (issue 35). With clients, a
 * change of the catalog or of the policy is announced to the sessions and
 * listen streams of the clients whose own view changed, and to no other:
 * a client learns nothing of tools it may not use, not even that they
 * changed. The same for its prompts and resources. A client's views are
 * noted when it opens its first session or listen stream. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gw/policy.h"
#include "gw/sha256.h"
#include "gw/util.h"

static const char *const methods[GW_MCP_VIEWS] = {"notifications/tools/list_changed",
                                                  "notifications/prompts/list_changed",
                                                  "notifications/resources/list_changed"};

struct mcp_view {
    char client[GW_CLIENT_NAME_MAX + 1];
    unsigned char digest[GW_MCP_VIEWS][GW_SHA256_LEN];
};

static void hash_json(json_t *j, struct gw_sha256 *h)
{
    char *text = json_dumps(j, JSON_COMPACT);

    gw_sha256_update(h, text ? text : "", text ? strlen(text) : 0);
    free(text);
    json_decref(j);
}

/* The client's tools/list, prompts/list or resources and templates. */
static void digest_of(struct gw_mcp_server *ms, const char *client, int kind,
                      unsigned char out[GW_SHA256_LEN])
{
    struct gw_sha256 h;

    if (kind == GW_MCP_VIEW_TOOLS) {
        gw_policy_view_digest(ms->servers, client, out);
        return;
    }
    gw_sha256_init(&h);
    if (kind == GW_MCP_VIEW_PROMPTS) {
        hash_json(gw_policy_extras_json(ms->servers, client, GW_EXTRA_PROMPTS, false), &h);
    } else {
        hash_json(gw_policy_extras_json(ms->servers, client, GW_EXTRA_RESOURCES, false), &h);
        hash_json(gw_policy_extras_json(ms->servers, client, GW_EXTRA_TEMPLATES, false), &h);
    }
    gw_sha256_final(&h, out);
}

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
    for (int k = 0; k < GW_MCP_VIEWS; k++)
        digest_of(ms, client, k, v->digest[k]);
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

void gw_mcp__views_announce(struct gw_mcp_server *ms, unsigned kinds, bool tell)
{
    size_t keep = 0;

    for (size_t i = 0; i < ms->nviews; i++) {
        struct mcp_view v = ms->views[i];
        unsigned char now[GW_SHA256_LEN];
        /* a client the config no longer has cannot pass the gate */
        if (!gw_policy_known(ms->servers, v.client))
            continue;
        for (int k = 0; k < GW_MCP_VIEWS; k++) {
            if (!(kinds & (1u << k)))
                continue;
            digest_of(ms, v.client, k, now);
            if (memcmp(now, v.digest[k], sizeof now) == 0)
                continue;
            memcpy(v.digest[k], now, sizeof now);
            if (tell)
                announce(ms, v.client, methods[k]);
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
