/* The dialog of a 2026-07-28 request on /mcp. It has no session to stand
 * for one, so it is, in this order: the one X-Mcpgw-Dialog or the URL
 * (/mcp/d/{dialog}) names, the one params._meta["io.mcpgw/dialog"] names
 * (for clients that can set _meta but no header), else the default of
 * gateway.mcp_default_dialog:
 *   client  "mcp-client:<clientInfo.name>": one client app's requests stay
 *           together, as if the app ran the servers itself, and two apps
 *           never share an instance ("mcp-default" when it names none);
 *   shared  "mcp-default" for every request;
 *   none    no dialog (a leased server's tool refuses the request).
 * The first lease of such a dialog logs how to give each conversation its
 * own: the default is what a client that knows nothing of dialogs gets,
 * not what a conversation should share. */
#include "gw/mcp_server_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gw/log.h"
#include "gw/util.h"

/* A hash suffix: "-" and 8 hex digits. */
#define HASH_SUFFIX_LEN 9

static bool dialog_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

/* "mcp-client:" and `name` in the characters of a dialog part: any other
 * byte becomes '_'. A name that had to change (or is "." or "..", or
 * longer than a part) is cut and given a hash of the name as it was, so
 * that names differing only in the bytes replaced do not share a dialog
 * (a client that wants another's dialog can name it anyway: the name is
 * what the client says, not an identity). */
static void client_dialog(const char *name, char *out)
{
    size_t p = sizeof GW_DIALOG_CLIENT_PREFIX - 1, n = strlen(name);
    bool changed = n > GW_DIALOG_PART_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
    size_t keep = n < GW_DIALOG_PART_MAX ? n : GW_DIALOG_PART_MAX;

    memcpy(out, GW_DIALOG_CLIENT_PREFIX, p);
    for (size_t i = 0; i < keep; i++) {
        changed |= !dialog_char(name[i]);
        out[p + i] = dialog_char(name[i]) ? name[i] : '_';
    }
    if (changed) {
        keep = keep < GW_DIALOG_PART_MAX - HASH_SUFFIX_LEN ? keep
                                                           : GW_DIALOG_PART_MAX - HASH_SUFFIX_LEN;
        snprintf(out + p + keep, HASH_SUFFIX_LEN + 1, "-%08" PRIx32,
                 (uint32_t)(gw_hash_str(name) >> 32));
        return;
    }
    out[p + keep] = '\0';
}

static int refuse(struct gw_http_request *req, json_t *id, const char *message)
{
    gw_http_respond_json(req, 400, gw_mcp__error(id, RPC_INVALID_PARAMS, message), NULL);
    return -1;
}

int gw_mcp__request_dialog(struct gw_mcp_server *ms, struct gw_http_request *req, json_t *id,
                           bool has_named, const char *named, json_t *info, char *canon)
{
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1], given[GW_DIALOG_MAX + 1];
    const char *client;

    if (gw_mcp__named_dialog(req, canon) != 0)
        return -1;
    if (has_named && (named == NULL || gw_dialog_parse(named, root, self, given) != 0))
        return refuse(req, id,
                      "Invalid params: _meta[\"" MCP_META_DIALOG "\"] must be \"root\" or "
                      "\"root/self\", each 1-64 characters of A-Z a-z 0-9 _ . -");
    if (has_named && canon[0] != '\0' && strcmp(canon, given) != 0)
        return refuse(req, id,
                      "Invalid params: _meta[\"" MCP_META_DIALOG "\"] names another dialog than "
                      "X-Mcpgw-Dialog or the URL");
    if (has_named)
        memcpy(canon, given, sizeof given);
    if (canon[0] == '\0' && ms->default_dialog == GW_MCP_DIALOG_NONE)
        return 0;
    client = json_string_value(json_object_get(info, "name"));
    if (canon[0] == '\0' &&
        (ms->default_dialog == GW_MCP_DIALOG_SHARED || client == NULL || client[0] == '\0'))
        memcpy(canon, GW_DIALOG_DEFAULT, sizeof GW_DIALOG_DEFAULT);
    else if (canon[0] == '\0')
        client_dialog(client, canon);
    /* every dialog is its client's (issue 35) */
    gw_dialog_scope(req->client, canon, canon);
    return 0;
}

void gw_mcp_server_set_default_dialog(struct gw_mcp_server *ms, enum gw_mcp_default_dialog mode)
{
    ms->default_dialog = mode;
}

void gw_mcp_server_lease_acquired(struct gw_mcp_server *ms, const char *dialog, const char *server)
{
    struct mcp_announced *a = &ms->announced;
    char owner[GW_DIALOG_PART_MAX + 1];
    const char *named = gw_dialog_unscope(dialog, owner);

    if (strcmp(named, GW_DIALOG_DEFAULT) != 0 && !gw_dialog_is_client(named))
        return;
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->dialogs[i], dialog) == 0)
            return;
    }
    /* The oldest is forgotten: it may be told once more. */
    gw_strlcpy(a->dialogs[a->next], dialog, sizeof a->dialogs[a->next]);
    a->next = (a->next + 1) % MCP_ANNOUNCED_MAX;
    if (a->n < MCP_ANNOUNCED_MAX)
        a->n++;
    gw_log(
        GW_LOG_INFO,
        "mcp requests that name no dialog share this one; give each conversation its own "
        "with the URL /mcp/d/<dialog>, the header X-Mcpgw-Dialog or the _meta key " MCP_META_DIALOG,
        "dialog", dialog, "server", server, NULL);
}
