/* What the server asks and tells the MCP client: its requests (relayed to
 * the instance's owner, or refused as unknown methods), its notifications
 * (known ones handed on, others dropped), and the warnings about what it
 * sends wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/mcp_client_internal.h"
#include "gw/util.h"

#define JSONRPC_NO_METHOD -32601
#define WARN_PER_SECOND   10
#define SAMPLE_BYTES      120

static const char *const known_notifications[] = {"notifications/cancelled",
                                                  "notifications/progress",
                                                  "notifications/message",
                                                  "notifications/resources/list_changed",
                                                  "notifications/resources/updated",
                                                  "notifications/prompts/list_changed",
                                                  "notifications/tools/list_changed",
                                                  "notifications/tasks/status",
                                                  "notifications/subscriptions/acknowledged",
                                                  "notifications/elicitation/complete"};

/* Logging. Warnings about hostile input are rate-limited per client so a
 * flood of garbage costs counters, not log volume. */

void gw_mcp__warn_limited(struct gw_mcp_client *c, const char *msg, const char *detail)
{
    char sample[SAMPLE_BYTES + 1], said[256];
    uint64_t now = uv_now(c->loop);
    size_t n = 0;

    if (now - c->warn_window >= 1000) {
        c->warn_window = now;
        c->warn_count = 0;
    }
    if (++c->warn_count > WARN_PER_SECOND) {
        c->stats.log_suppressed++;
        return;
    }
    while (c->cur_msg && n < c->cur_len && n < SAMPLE_BYTES && c->cur_msg[n] != '\0') {
        sample[n] = c->cur_msg[n];
        n++;
    }
    /* the server's own bytes, in the sample and quoted by the parser's
     * complaint: its secrets are masked (security.md P6) */
    bool cut = n == SAMPLE_BYTES && n < c->cur_len;
    n = c->redact ? gw_redact_line(c->redact, sample, n, cut) : n;
    sample[n] = '\0';
    snprintf(said, sizeof said, "%s", detail ? detail : "");
    if (detail != NULL && c->redact != NULL)
        said[gw_redact_line(c->redact, said, strlen(said), false)] = '\0';
    gw_log(GW_LOG_WARN, msg, "server", c->server_id, "detail", detail ? said : NULL, "sample",
           c->cur_msg ? sample : NULL, NULL);
}

void gw_mcp__bad_shape(struct gw_mcp_client *c, const char *why)
{
    c->stats.bad_shape++;
    gw_mcp__warn_limited(c, "upstream sent a malformed JSON-RPC message; dropped", why);
}

/* Receiving: server requests and notifications. */

static void send_no_method(struct gw_mcp_client *c, json_t *id, const char *method, const char *why)
{
    char text[TEXT_BYTES];
    json_t *msg;
    int rc;

    snprintf(text, sizeof text, "Method not found: %.*s", gw_utf8_cut(method, 200), method);
    gw_utf8_trim(text);
    snprintf(text + strlen(text), sizeof text - strlen(text), " (%s)", why);
    gw_utf8_trim(text);
    msg = json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", id, "error",
                    "code", JSONRPC_NO_METHOD, "message", text, "data", "method", method);
    if (msg == NULL) /* never leave a server request unanswered (S9) */
        msg = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
                        JSONRPC_NO_METHOD, "message", "Method not found");
    gw_log(GW_LOG_INFO, "refused a server request", "server", c->server_id, "method", method, NULL);
    rc = gw_mcp__send_json(c, msg);
    if (rc < 0)
        gw_log(GW_LOG_DEBUG, "could not answer a server request", "server", c->server_id, "error",
               uv_err_name(rc), NULL);
}

/* The requests the gateway relays (sampling and elicitation, which it
 * declares, and roots/list, which a server may send to a client that did
 * not declare roots: the caller may still answer it) go to the owner, who
 * answers them with gw_mcp_client_respond(); `ping` is answered {} here;
 * anything else gets -32601 at once (S9). */
bool gw_mcp__relayable(const char *method)
{
    return strcmp(method, "sampling/createMessage") == 0 ||
           strcmp(method, "elicitation/create") == 0 || strcmp(method, "roots/list") == 0;
}

/* The server's own request goes to the owner without the key the input
 * rounds name their requests by: that key is the client's to set. */
static int relay(struct gw_mcp_client *c, const char *method, json_t *id, json_t *params)
{
    json_t *meta = json_object_get(params, "_meta"), *clean;
    int rc;

    if (json_object_get(meta, GW_MCP_META_INPUT_KEY) == NULL)
        return c->cb.on_request(c->cb.data, method, id, params, 0);
    clean = json_copy(params);
    meta = json_copy(meta);
    json_object_del(meta, GW_MCP_META_INPUT_KEY);
    json_object_set_new(clean, "_meta", meta);
    rc = c->cb.on_request(c->cb.data, method, id, clean, 0);
    json_decref(clean);
    return rc;
}

void gw_mcp__handle_server_request(struct gw_mcp_client *c, const char *method, json_t *id,
                                   json_t *m)
{
    json_t *params = json_object_get(m, "params");
    bool relayable = gw_mcp__relayable(method);

    if (!json_is_string(id) && !json_is_integer(id)) {
        gw_mcp__bad_shape(c, "request id is neither a string nor an integer");
        return;
    }
    c->stats.server_requests++;
    if (strcmp(method, "ping") == 0) {
        gw_mcp__send_json(c, json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", id, "result"));
        return;
    }
    if (relayable && (params == NULL || json_is_object(params)) && c->cb.on_request != NULL &&
        relay(c, method, id, params) == 0)
        return;
    send_no_method(c, id, method, "mcpgw does not serve it");
}

int gw_mcp_client_respond(struct gw_mcp_client *c, json_t *id, gw_mcp_handle origin, json_t *result,
                          json_t *error)
{
    json_t *msg;
    int rc = gw_mcp__check_ready(c);

    if (rc < 0)
        return rc;
    if (id == NULL || (result == NULL) == (error == NULL))
        return UV_EINVAL;
    if (origin != 0) {
        gw_mcp__input_respond(c, id, origin, result, error);
        return 0;
    }
    msg = json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", id);
    json_object_set(msg, result ? "result" : "error", result ? result : error);
    return gw_mcp__send_json(c, msg);
}

static int is_known_notification(const char *method)
{
    for (size_t i = 0; i < GW_ARRAY_SIZE(known_notifications); i++) {
        if (strcmp(method, known_notifications[i]) == 0)
            return 1;
    }
    return 0;
}

void gw_mcp__handle_notification(struct gw_mcp_client *c, const char *method, json_t *m)
{
    json_t *params = json_object_get(m, "params");

    if (params && !json_is_object(params)) {
        gw_mcp__bad_shape(c, "notification params is not an object");
        return;
    }
    c->stats.notifications++;
    if (!is_known_notification(method)) {
        c->stats.unknown_notifications++;
        gw_log(GW_LOG_DEBUG, "upstream sent an unknown notification", "server", c->server_id,
               "method", method, NULL);
    }
    if (strcmp(method, "notifications/subscriptions/acknowledged") == 0) {
        gw_mcp__listen_acked(c, params);
    } else if (strcmp(method, "notifications/tools/list_changed") == 0) {
        if (c->cb.on_tools_changed)
            c->cb.on_tools_changed(c->cb.data);
    } else if (c->cb.on_notification) {
        c->cb.on_notification(c->cb.data, method, m);
    }
}
