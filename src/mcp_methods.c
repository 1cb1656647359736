/* The JSON-RPC methods of /mcp over the servers module.
 *
 * Errors follow MCP 2025-11-25's split: what is wrong with the request
 * itself (unknown method, unknown tool, params of the wrong shape) is a
 * JSON-RPC error; what happened while trying to run a tool that exists
 * (limits full, server not ready, instance died, timeout) is a
 * CallToolResult with isError: true and a sentence, so that the model sees
 * it and can retry or choose another way. An upstream's own JSON-RPC error
 * or malformed answer is -32603 with the reason. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/util.h"
#include "gw/version.h"

const char *const gw_mcp__versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                                        NULL};

static const char *const log_levels[] = {"debug", "info",     "notice", "warning",
                                         "error", "critical", "alert",  "emergency"};

bool gw_mcp__version_supported(const char *v)
{
    for (size_t i = 0; v != NULL && gw_mcp__versions[i] != NULL; i++) {
        if (strcmp(v, gw_mcp__versions[i]) == 0)
            return true;
    }
    return false;
}

json_t *gw_mcp__initialize_check(json_t *id, json_t *params, const char **version)
{
    const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
    json_t *caps = json_object_get(params, "capabilities");

    if (!json_is_object(params) || asked == NULL)
        return gw_mcp__error(id, RPC_INVALID_PARAMS,
                             "initialize needs params.protocolVersion (a string)");
    if (caps != NULL && !json_is_object(caps))
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "params.capabilities must be an object");
    *version = gw_mcp__version_supported(asked) ? asked : gw_mcp__versions[0];
    return NULL;
}

json_t *gw_mcp__initialize_result(const char *version)
{
    return json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version,
                     "capabilities", "tools", "listChanged", 1, "logging", "serverInfo", "name",
                     "mcpgw", "title", "mcpgw MCP gateway", "version", GW_VERSION, "instructions",
                     "mcpgw serves the tools of several MCP servers as one. A stateful "
                     "server gives this session its own instance; call mcp_release with "
                     "{\"serverId\": \"<id>\"} when you no longer need that toolset.");
}

/* ---- tools/list ---- */

/* The cursor is "<offset>" printed as text; it is opaque to clients and
 * checked here. A catalog change between pages keeps the offset (the
 * client gets list_changed and lists again). */
static json_t *tools_list(struct gw_mcp_session *s, json_t *id, json_t *params)
{
    json_t *cursor = json_object_get(params, "cursor");
    json_t *all, *tools, *page, *result;
    size_t off = 0, n, size = s->ms->lim.page_size;
    char *end = NULL;

    if (cursor != NULL && !json_is_null(cursor)) {
        const char *c = json_string_value(cursor);
        if (c == NULL || c[0] < '0' || c[0] > '9' || (off = strtoul(c, &end, 10), *end != '\0'))
            return gw_mcp__error(id, RPC_INVALID_PARAMS, "invalid cursor");
    }
    all = gw_catalog_tools_json(gw_servers_catalog(s->ms->servers), NULL, GW_TOOL_FORMAT_MCP_WIRE);
    tools = json_object_get(all, "tools");
    n = json_array_size(tools);
    page = json_array();
    for (size_t i = off; i < n && i < off + size; i++)
        json_array_append(page, json_array_get(tools, i));
    result = json_pack("{s:o}", "tools", page);
    if (off + size < n) {
        char *next = gw_xasprintf("%zu", off + size);
        json_object_set_new(result, "nextCursor", json_string(next));
        free(next);
    }
    json_decref(all);
    return gw_mcp__result(id, result);
}

/* ---- tools/call ---- */

static json_t *text_result(bool is_error, const char *text)
{
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError",
                     is_error);
}

/* A gateway-side failure of a call to a tool that exists, as a sentence. */
static const char *tool_failure(int code)
{
    switch (code) {
    case GW_SERVERS_E_LIMIT:
        return "the gateway's concurrency limit for this tool stayed full; try again shortly";
    case GW_SERVERS_E_NOT_READY:
    case GW_MCP_E_NOT_READY:
        return "the tool's server has no ready instance right now (starting or restarting); "
               "try again in a few seconds";
    case GW_MCP_E_TIMEOUT:
        return "the tool did not answer in time; the call was cancelled upstream";
    case GW_MCP_E_TRANSPORT:
    case GW_SERVERS_E_SPAWN:
        return "the tool's server instance died or failed to start; the next call gets a "
               "new one";
    case GW_SERVERS_E_RELEASED:
        return "the server's lease was released or the tool removed before the call was sent";
    default:
        return NULL;
    }
}

/* The JSON-RPC answer to a finished call. */
static json_t *call_reply(const struct gw_mcp_call *c, const struct gw_call_outcome *o)
{
    const char *failure = tool_failure(o->code);
    json_t *r;
    char *msg;

    if (o->code == 0 && json_is_object(o->result)) {
        r = json_copy(o->result); /* shallow: the content itself is passed as it came */
        if (o->lease != NULL) {
            json_t *meta = json_object_get(r, "_meta");
            meta = json_is_object(meta) ? json_copy(meta) : json_object();
            json_object_set(meta, "mcpgw/lease", o->lease);
            json_object_set_new(r, "_meta", meta);
        }
        return gw_mcp__result(c->id, r);
    }
    if (failure != NULL)
        return gw_mcp__result(c->id, text_result(true, failure));
    if (o->code == 0)
        msg = gw_xstrdup("the server's answer is not a CallToolResult");
    else if (o->code == GW_MCP_E_CANCELLED)
        msg = gw_xasprintf("the request was cancelled: %s", o->message ? o->message : "");
    else if (o->code == GW_MCP_E_CLOSED)
        msg = gw_xstrdup("the gateway is stopping");
    else
        msg = gw_xasprintf("the tool's server failed: %s", o->message ? o->message : "");
    r = gw_mcp__error(c->id, RPC_INTERNAL_ERROR, msg);
    free(msg);
    return r;
}

static void unlink_call(struct gw_mcp_call *c)
{
    struct gw_mcp_call **link;

    if (c->s == NULL)
        return;
    for (link = &c->s->calls; *link != NULL; link = &(*link)->next) {
        if (*link == c) {
            *link = c->next;
            c->s->ncalls--;
            c->s->last_used_ms = gw_now_ms();
            return;
        }
    }
}

static void on_call_outcome(void *data, const struct gw_call_outcome *o)
{
    struct gw_mcp_call *c = data;
    char ms[24];

    snprintf(ms, sizeof ms, "%llu", (unsigned long long)(gw_now_ms() - c->started_ms));
    gw_log(GW_LOG_INFO, "mcp tool call", "tool", c->tool, "server", o->server, "dialog", o->dialog,
           "status", gw_mcp_strerror(o->code), "duration_ms", ms, NULL);
    unlink_call(c);
    gw_mcp__exchange_add(c->x, call_reply(c, o));
    gw_mcp__exchange_done(c->x);
    json_decref(c->id);
    free(c->tool);
    free(c);
}

/* The built-in mcp_release({"serverId"}) for the session's dialog. Input
 * problems are tool errors (isError), as MCP 2025-11-25 asks. */
static json_t *release_tool(struct gw_mcp_session *s, json_t *id, json_t *args)
{
    const char *server = json_string_value(json_object_get(args, "serverId"));
    json_t *released, *r;
    char *text;
    bool failed = false;

    if (server == NULL)
        return gw_mcp__result(id, text_result(true, "mcp_release needs {\"serverId\": \"<server "
                                                    "id>\"}"));
    released = json_array();
    if (gw_servers_release(s->ms->servers, s->dialog, server, released) != 0) {
        text = gw_xasprintf("no server is named '%s'", server);
        failed = true;
    } else if (json_array_size(released) == 0) {
        text = gw_xasprintf("this session held no lease on '%s'", server);
    } else {
        text = gw_xasprintf("released the lease on '%s'", server);
    }
    r = text_result(failed, text);
    free(text);
    json_decref(released);
    return gw_mcp__result(id, r);
}

static json_t *start_call(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                          const char *name, json_t *args)
{
    struct gw_call_request r = {name, s->dialog, args, 0};
    struct gw_mcp_call *c;
    int rc;

    if (s->ncalls >= MCP_MAX_CALLS)
        return gw_mcp__error(id, RPC_INTERNAL_ERROR,
                             "too many calls in flight on this session; wait for some to finish");
    c = gw_xcalloc(1, sizeof *c);
    c->s = s;
    c->x = x;
    c->id = json_incref(id);
    c->tool = gw_xstrdup(name);
    c->started_ms = gw_now_ms();
    rc = gw_servers_call(s->ms->servers, &r, on_call_outcome, c, &c->call);
    if (rc != 0) {
        json_decref(c->id);
        free(c->tool);
        free(c);
        if (rc == GW_SERVERS_E_NO_TOOL) {
            char *msg = gw_xasprintf("Unknown tool: %s", name);
            json_t *e = gw_mcp__error(id, RPC_INVALID_PARAMS, msg);
            free(msg);
            return e;
        }
        return gw_mcp__result(
            id, text_result(true, tool_failure(rc) ? tool_failure(rc) : gw_mcp_strerror(rc)));
    }
    c->next = s->calls;
    s->calls = c;
    s->ncalls++;
    x->waiting++;
    return NULL;
}

/* Returns the answer now, or NULL when the call answers later. Progress
 * tokens (params._meta.progressToken) are accepted; progress is not
 * relayed until the servers module reports it (the answer stays JSON). */
static json_t *tools_call(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                          json_t *params)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments");
    json_t *empty, *r;

    if (name == NULL)
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
    if (args != NULL && !json_is_object(args) && !json_is_null(args))
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "params.arguments must be an object");
    if (strcmp(name, GW_CATALOG_RELEASE_TOOL) == 0)
        return release_tool(s, id, args);
    empty = json_is_object(args) ? json_incref(args) : json_object();
    r = start_call(s, x, id, name, empty);
    json_decref(empty);
    return r;
}

void gw_mcp__cancel(struct gw_mcp_session *s, json_t *request_id, const char *reason)
{
    for (struct gw_mcp_call *c = s->calls; c != NULL; c = c->next) {
        if (json_equal(c->id, request_id)) {
            gw_servers_cancel(c->call, reason ? reason : "cancelled by the client");
            return;
        }
    }
}

/* ---- the rest ---- */

static json_t *set_level(struct gw_mcp_session *s, json_t *id, json_t *params)
{
    const char *level = json_string_value(json_object_get(params, "level"));

    for (size_t i = 0; level != NULL && i < GW_ARRAY_SIZE(log_levels); i++) {
        if (strcmp(level, log_levels[i]) == 0) {
            snprintf(s->log_level, sizeof s->log_level, "%s", level);
            return gw_mcp__result(id, json_object());
        }
    }
    return gw_mcp__error(id, RPC_INVALID_PARAMS,
                         "params.level must be one of debug, info, notice, warning, error, "
                         "critical, alert, emergency");
}

/* Prompts and resources are listed empty until the servers module
 * aggregates them (not declared in capabilities either); reading one is
 * -32601 until then. */
static json_t *empty_list(json_t *id, const char *key)
{
    return gw_mcp__result(id, json_pack("{s:[]}", key));
}

static json_t *request(struct gw_mcp_session *s, struct gw_mcp_exchange *x, const char *method,
                       json_t *id, json_t *params)
{
    char *msg;
    json_t *e;

    if (params != NULL && !json_is_object(params))
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "params must be an object");
    if (strcmp(method, "ping") == 0)
        return gw_mcp__result(id, json_object());
    if (strcmp(method, "tools/list") == 0)
        return tools_list(s, id, params);
    if (strcmp(method, "tools/call") == 0)
        return tools_call(s, x, id, params);
    if (strcmp(method, "logging/setLevel") == 0)
        return set_level(s, id, params);
    if (strcmp(method, "prompts/list") == 0)
        return empty_list(id, "prompts");
    if (strcmp(method, "resources/list") == 0)
        return empty_list(id, "resources");
    if (strcmp(method, "resources/templates/list") == 0)
        return empty_list(id, "resourceTemplates");
    if (strcmp(method, "initialize") == 0)
        return gw_mcp__error(id, RPC_INVALID_REQUEST,
                             "this session is already initialized; POST initialize without "
                             "Mcp-Session-Id to start another");
    msg = gw_xasprintf("Method not found: %s", method);
    e = gw_mcp__error(id, RPC_METHOD_NOT_FOUND, msg);
    free(msg);
    return e;
}

static void notification(struct gw_mcp_session *s, const char *method, json_t *params)
{
    if (strcmp(method, "notifications/initialized") == 0)
        s->initialized = true;
    else if (strcmp(method, "notifications/cancelled") == 0 && json_is_object(params))
        gw_mcp__cancel(s, json_object_get(params, "requestId"),
                       json_string_value(json_object_get(params, "reason")));
    /* Anything else (roots/list_changed, progress of requests we never
     * sent) needs nothing from us. */
}

static bool valid_id(json_t *id)
{
    return json_is_string(id) || json_is_integer(id);
}

void gw_mcp__dispatch(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    json_t *params = json_object_get(msg, "params");
    const char *method = json_string_value(json_object_get(msg, "method"));
    const char *jsonrpc = json_string_value(json_object_get(msg, "jsonrpc"));
    json_t *reply;

    if (!json_is_object(msg) || jsonrpc == NULL || strcmp(jsonrpc, "2.0") != 0) {
        gw_mcp__exchange_add(
            x, gw_mcp__error(NULL, RPC_INVALID_REQUEST, "not a JSON-RPC 2.0 message"));
        return;
    }
    if (method == NULL && id != NULL &&
        (json_object_get(msg, "result") != NULL || json_object_get(msg, "error") != NULL))
        return; /* a response: the gateway sends no requests of its own yet */
    if (method == NULL || (id != NULL && !valid_id(id))) {
        gw_mcp__exchange_add(x, gw_mcp__error(valid_id(id) ? id : NULL, RPC_INVALID_REQUEST,
                                              "a request needs a string method and a string "
                                              "or integer id"));
        return;
    }
    if (id == NULL) {
        notification(s, method, params);
        return;
    }
    reply = request(s, x, method, id, params);
    if (reply != NULL)
        gw_mcp__exchange_add(x, reply);
}
