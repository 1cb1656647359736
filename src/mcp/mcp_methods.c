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
#include "gw/metrics.h"
#include "gw/trace.h"
#include "gw/policy.h"
#include "gw/util.h"

/* ---- tools/list ---- */

/* The cursor is "<offset>" printed as text; it is opaque to clients and
 * checked here. A change between pages keeps the offset (the client gets
 * list_changed and lists again). Takes `all`. */
static json_t *page_of(struct gw_mcp_session *s, json_t *id, json_t *params, json_t *all,
                       const char *key)
{
    json_t *cursor = json_object_get(params, "cursor");
    json_t *page, *result;
    size_t off = 0, n = json_array_size(all), size = s->ms->lim.page_size;
    char *end = NULL;

    if (cursor != NULL && !json_is_null(cursor)) {
        const char *c = json_string_value(cursor);
        if (c == NULL || c[0] < '0' || c[0] > '9' || (off = strtoul(c, &end, 10), *end != '\0')) {
            json_decref(all);
            return gw_mcp__error(id, RPC_INVALID_PARAMS, "invalid cursor");
        }
    }
    page = json_array();
    for (size_t i = off; i < n && i < off + size; i++)
        json_array_append(page, json_array_get(all, i));
    result = json_pack("{s:o}", key, page);
    if (off + size < n) {
        char *next = gw_xasprintf("%zu", off + size);
        json_object_set_new(result, "nextCursor", json_string(next));
        free(next);
    }
    json_decref(all);
    return gw_mcp__result(id, result);
}

static json_t *tools_list(struct gw_mcp_session *s, json_t *id, json_t *params)
{
    json_t *all, *tools = gw_mcp__ts_tools(s), *r, *result;
    bool own = tools != NULL;

    if (!own) {
        all = gw_catalog_tools_json(gw_servers_catalog(s->ms->servers), NULL,
                                    GW_TOOL_FORMAT_MCP_WIRE);
        tools = json_incref(json_object_get(all, "tools"));
        json_decref(all);
    }
    gw_policy_filter_tools_of(s->ms->servers, s->client, tools, GW_TOOL_FORMAT_MCP_WIRE);
    r = page_of(s, id, params, tools, "tools");
    /* a dialog's own list, which find_tools changes: not to be shared or kept */
    if (own && s->modern && (result = json_object_get(r, "result")) != NULL) {
        json_object_set_new(result, "ttlMs", json_integer(0));
        json_object_set_new(result, "cacheScope", json_string("private"));
    }
    return r;
}

static json_t *extras_list(struct gw_mcp_session *s, json_t *id, json_t *params,
                           enum gw_extra_kind kind)
{
    static const char *const keys[] = {"prompts", "resources", "resourceTemplates"};

    return page_of(s, id, params, gw_policy_extras_json(s->ms->servers, s->client, kind, false),
                   keys[kind]);
}

/* ---- tools/call ---- */

static json_t *text_result(bool is_error, const char *text)
{
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError",
                     is_error);
}

/* A gateway-side failure of a call to a tool that exists, as a sentence
 * (dispatch's table), or NULL when `code` is not one. */
static const char *tool_failure(int code)
{
    struct gw_dispatch_error e = gw_dispatch_error(code);

    return code != 0 && e.rpc_code == 0 ? e.sentence : NULL;
}

/* The answer to a routed request: its result as the server gave it; the
 * server's own JSON-RPC error passed on (code and message); a failure on
 * the way is -32603 with a sentence. */
static json_t *routed_reply(const struct gw_mcp_call *c, const struct gw_call_outcome *o)
{
    json_t *code = json_object_get(o->error, "code");
    const char *why = tool_failure(o->code);
    json_t *r;
    char *msg;

    if (o->code == 0 && json_is_object(o->result))
        return gw_mcp__result(c->id, json_incref(o->result));
    if (o->code == GW_SERVERS_E_UNSUPPORTED)
        return gw_mcp__error(c->id, RPC_INVALID_PARAMS, o->message);
    if (o->code == GW_MCP_E_RPC && json_is_integer(code)) {
        r = json_pack("{s:s, s:O, s:{s:O, s:O?}}", "jsonrpc", "2.0", "id", c->id, "error", "code",
                      code, "message", json_object_get(o->error, "message"));
        if (json_object_get(o->error, "data") != NULL)
            json_object_set(json_object_get(r, "error"), "data", json_object_get(o->error, "data"));
        return r;
    }
    msg = gw_xasprintf("%s failed: %s", c->tool,
                       why          ? why
                       : o->message ? o->message
                                    : gw_dispatch_error(o->code).sentence);
    r = gw_mcp__error(c->id, RPC_INTERNAL_ERROR, msg);
    free(msg);
    return r;
}

/* A 2026-07-28 call whose upstream asked for what the request did not
 * declare: -32021 naming it, as a server of that revision answers (it
 * never goes on without it), whatever the upstream made of the refusal. */
static json_t *missing_caps_reply(const struct gw_mcp_call *c, unsigned caps)
{
    json_t *r =
        gw_mcp__error(c->id, RPC_MISSING_CAPABILITY,
                      "Missing required client capability: the server behind this tool asks for "
                      "what the request's clientCapabilities do not declare");
    json_object_set_new(json_object_get(r, "error"), "data",
                        json_pack("{s:o}", "requiredCapabilities", gw_mcp_caps_json(caps)));
    return r;
}

json_t *gw_mcp__call_reply(const struct gw_mcp_call *c, const struct gw_call_outcome *o)
{
    const char *failure = tool_failure(o->code);
    unsigned missing;
    json_t *r;
    char *msg;

    if (o->missing_caps != 0 && c->x->own != NULL)
        return missing_caps_reply(c, o->missing_caps);
    /* A 2026-07-28 upstream told of this caller's capabilities only
     * (dispatch passes them on) refused for want of one: so is the call. */
    if (c->x->own != NULL && o->code == GW_MCP_E_RPC &&
        json_integer_value(json_object_get(o->error, "code")) == RPC_MISSING_CAPABILITY &&
        (missing = gw_mcp_caps_of(
             json_object_get(json_object_get(o->error, "data"), "requiredCapabilities"))) != 0)
        return missing_caps_reply(c, missing);
    if (c->routed)
        return routed_reply(c, o);
    if (o->code == GW_SERVERS_E_AUTHORIZATION && c->s != NULL)
        return gw_mcp__authorization_reply(c->s->ms, c->s, c->id, c->tool, o->server);
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

const char *gw_mcp__call_status(const struct gw_call_outcome *o)
{
    if (o->code != 0)
        return gw_dispatch_error(o->code).label;
    static const struct gw_mcp_member keys[] = {GW_MCP_MEMBER("isError")};
    json_t *is_error, **out[] = {&is_error};

    gw_mcp__members(o->result, keys, out, 1); /* a result's few members, without hashing */
    return json_is_true(is_error) ? "tool_error" : "ok";
}

void gw_mcp__call_end(struct gw_mcp_call *c, const char *server, const char *dialog,
                      const char *status, json_t *reply)
{
    uint64_t elapsed = gw_now_ms() - c->started_ms;
    char ms[24];

    /* The revision tells the eras apart: a 2026-07-28 request has no session start line. */
    if (gw_log_enabled(GW_LOG_INFO)) {
        snprintf(ms, sizeof ms, "%llu", (unsigned long long)elapsed);
        gw_log(GW_LOG_INFO, "mcp tool call", "tool", c->tool, "server", server, "dialog", dialog,
               "version", c->version, "status", status, "duration_ms", ms, NULL);
    }
    if (!c->routed)
        gw_metrics_call(c->metrics, "mcp", server, c->tool, status, (double)elapsed / 1000.0);
    gw_mcp__span_call_end(c, server, dialog, status);
    unlink_call(c);
    gw_mcp__exchange_add(c->x, reply);
    gw_mcp__exchange_done(c->x);
    while (c->relays != NULL) { /* on_request_gone emptied it; kept safe */
        struct mcp_relay *r = c->relays;
        c->relays = r->next;
        json_decref(r->id);
        free(r);
    }
    json_decref(c->id);
    free(c->tool);
    free(c);
}

static void on_call_outcome(void *data, const struct gw_call_outcome *o)
{
    struct gw_mcp_call *c = data;

    gw_mcp__call_end(c, o->server, o->dialog, gw_mcp__call_status(o), gw_mcp__call_reply(c, o));
}

/* ---- relays from the upstream (design §9) ---- */

/* A message for the client about a call in flight: on the call's own POST
 * stream when its client accepts one, else on the session's GET stream.
 * Returns 0, or -1 when neither can carry it. */
static int to_client(struct gw_mcp_call *c, json_t *msg)
{
    if (gw_mcp__exchange_stream(c->x, c->s, msg) == 0)
        return 0;
    if (c->s == NULL || c->s->get == NULL)
        return -1;
    gw_mcp__session_send(c->s, msg);
    return 0;
}

void gw_mcp__call_progress(void *data, json_t *params)
{
    json_t *msg = json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method", "notifications/progress",
                            "params", params);

    to_client(data, msg);
    json_decref(msg);
}

void gw_mcp__call_log(void *data, json_t *params)
{
    struct gw_mcp_call *c = data;
    json_t *msg;

    /* A 2026-07-28 request without a logLevel asked for no log messages. */
    if (c->s == NULL || c->s->log_level[0] == '\0' ||
        gw_mcp_log_rank(json_string_value(json_object_get(params, "level"))) <
            gw_mcp_log_rank(c->s->log_level))
        return;
    msg = json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method", "notifications/message",
                    "params", params);
    to_client(c, msg);
    json_decref(msg);
}

/* The request goes to the client under the session's own id; its answer
 * comes back in a POST (gw_mcp__dispatch) and goes upstream under the
 * upstream's id (the servers module keeps that one). */
static int hook_request(void *data, struct gw_server_request *sr, const char *method,
                        json_t *params)
{
    struct gw_mcp_call *c = data;
    struct mcp_relay *r;
    json_t *msg;

    if (c->s == NULL)
        return -1;
    r = gw_xcalloc(1, sizeof *r);
    r->sr = sr;
    r->id = json_integer((json_int_t)++c->s->next_request_id);
    msg = json_pack("{s:s, s:O, s:s}", "jsonrpc", "2.0", "id", r->id, "method", method);
    if (params != NULL)
        json_object_set(msg, "params", params);
    if (to_client(c, msg) != 0) {
        json_decref(msg);
        json_decref(r->id);
        free(r);
        return -1;
    }
    json_decref(msg);
    r->next = c->relays;
    c->relays = r;
    return 0;
}

static void hook_request_gone(void *data, struct gw_server_request *sr)
{
    struct gw_mcp_call *c = data;

    for (struct mcp_relay **link = &c->relays; *link != NULL; link = &(*link)->next) {
        if ((*link)->sr == sr) {
            struct mcp_relay *r = *link;
            *link = r->next;
            json_decref(r->id);
            free(r);
            return;
        }
    }
}

static const struct gw_call_hooks call_hooks = {gw_mcp__call_progress, gw_mcp__call_log,
                                                hook_request, hook_request_gone};

/* The client answered a relayed request: upstream it goes. */
static void relay_answer(struct gw_mcp_session *s, json_t *msg)
{
    json_t *id = json_object_get(msg, "id"), *result = json_object_get(msg, "result");
    json_t *error = json_object_get(msg, "error");

    for (struct gw_mcp_call *c = s->calls; c != NULL; c = c->next) {
        for (struct mcp_relay **link = &c->relays; *link != NULL; link = &(*link)->next) {
            struct mcp_relay *r = *link;
            if (!json_equal(r->id, id))
                continue;
            *link = r->next;
            if (json_is_object(error) || !json_is_object(result)) {
                json_t *e = json_is_object(error)
                                ? json_incref(error)
                                : json_pack("{s:i, s:s}", "code", RPC_INTERNAL_ERROR, "message",
                                            "the client's answer had no result object");
                gw_dispatch_answer(r->sr, NULL, e);
                json_decref(e);
            } else {
                gw_dispatch_answer(r->sr, result, NULL);
            }
            json_decref(r->id);
            free(r);
            return;
        }
    }
}

struct gw_mcp_call *gw_mcp__call_new(struct gw_mcp_session *s, struct gw_mcp_exchange *x,
                                     json_t *id, const char *name)
{
    struct gw_mcp_call *c = gw_xcalloc(1, sizeof *c);

    c->s = s;
    c->x = x;
    c->id = json_incref(id);
    c->tool = gw_xstrdup(name);
    c->started_ms = gw_now_ms();
    c->metrics = s->ms->metrics;
    memcpy(c->version, s->version, sizeof c->version);
    c->span = gw_mcp__span_adopt();
    return c;
}

void gw_mcp__call_track(struct gw_mcp_session *s, struct gw_mcp_exchange *x, struct gw_mcp_call *c)
{
    c->next = s->calls;
    s->calls = c;
    s->ncalls++;
    x->waiting++;
}

void gw_mcp__call_drop(struct gw_mcp_call *c)
{
    gw_mcp__span_unadopt(c->span);
    json_decref(c->id);
    free(c->tool);
    free(c);
}

static json_t *start_call(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                          const char *name, json_t *args, json_t *token)
{
    struct gw_call_request r = {.tool = name,
                                .front = s->modern ? "mcp-2026-07-28" : "mcp-2025-11-25",
                                .client = s->client,
                                .dialog = s->dialog[0] ? s->dialog : NULL,
                                .arguments = args,
                                .progress_token = token,
                                .hooks = &call_hooks,
                                .client_caps = s->caps,
                                .log_level = s->log_level};
    struct gw_mcp_call *c;
    int rc;

    if (s->ncalls >= MCP_MAX_CALLS)
        return gw_mcp__error(id, RPC_INTERNAL_ERROR,
                             "too many calls in flight on this session; wait for some to finish");
    c = gw_mcp__call_new(s, x, id, name);
    r.hooks_data = c;
    rc = gw_dispatch_call(s->ms->servers, &r, on_call_outcome, c, &c->call);
    if (rc != 0) {
        gw_mcp__call_drop(c);
        return gw_mcp__call_refused(s, id, name, rc);
    }
    gw_mcp__call_track(s, x, c);
    return NULL;
}

/* A 2026-07-28 request has no session to stand for its dialog. A tool
 * call gets it as the tool's failure (the model sees why), a routed request
 * as -32602. */
#define NEED_DIALOG_SENTENCE                                                                       \
    "this server leases an instance per dialog and the request names none: send the header "       \
    "X-Mcpgw-Dialog: <root> or <root>/<self>, use the URL /mcp/d/<root>[/<self>], or set "         \
    "params._meta[\"io.mcpgw/dialog\"]"

static json_t *need_dialog(json_t *id)
{
    return gw_mcp__error(id, RPC_INVALID_PARAMS, NEED_DIALOG_SENTENCE);
}

json_t *gw_mcp__call_refused(struct gw_mcp_session *s, json_t *id, const char *name, int rc)
{
    char *msg;
    json_t *e;

    if (rc != GW_SERVERS_E_NO_TOOL)
        gw_metrics_call(s->ms->metrics, "mcp", NULL, name, gw_dispatch_error(rc).label, 0);
    if (rc == GW_SERVERS_E_NO_TOOL) {
        msg = gw_xasprintf("Unknown tool: %s", name);
        e = gw_mcp__error(id, RPC_INVALID_PARAMS, msg);
        free(msg);
        return e;
    }
    if (rc == GW_SERVERS_E_RATE_LIMITED) /* docs/api.md: -32029 */
        return gw_mcp__error(id, gw_dispatch_error(rc).rpc_code, gw_dispatch_error(rc).sentence);
    if (rc == GW_SERVERS_E_NEED_DIALOG && s->modern)
        return gw_mcp__result(id, text_result(true, NEED_DIALOG_SENTENCE));
    if (rc == GW_SERVERS_E_AUTHORIZATION)
        return gw_mcp__authorization_reply(s->ms, s, id, name, NULL);
    return gw_mcp__result(id, text_result(true, gw_dispatch_error(rc).sentence));
}

/* ---- resource subscriptions ---- */

/* notifications/resources/updated goes on the session's GET stream, the
 * one MCP gives to messages that no request of the client caused. */
static void hook_updated(void *data, json_t *params)
{
    struct gw_mcp_session *s = data;
    json_t *msg;

    if (!s->had_get)
        return;
    msg = json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method",
                    "notifications/resources/updated", "params", params);
    gw_mcp__session_send(s, msg);
    json_decref(msg);
}

static const struct gw_subscriber_hooks subscriber_hooks = {hook_updated};

static struct gw_subscriber *subscriber_of(struct gw_mcp_session *s)
{
    if (s->sub == NULL)
        s->sub = gw_subscriber_new(s->ms->servers, &subscriber_hooks, s);
    return s->sub;
}

/* Answered at once: from now on the session hears nothing of the URI,
 * whatever the upstream answers to the resources/unsubscribe it may be
 * sent. */
static json_t *unsubscribe(struct gw_mcp_session *s, json_t *id, json_t *params)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));

    if (uri == NULL)
        return gw_mcp__error(id, RPC_INVALID_PARAMS,
                             "resources/unsubscribe needs params.uri (a string)");
    if (gw_subscriber_drop(subscriber_of(s), uri) != 0)
        return gw_mcp__error(id, RPC_RESOURCE_NOT_FOUND, "Resource not found");
    return gw_mcp__result(id, json_object());
}

/* prompts/get, resources/read, resources/subscribe, completion/complete:
 * routed to the server that offers what they name (MCP: -32602 for an
 * unknown prompt, -32002 for an unknown resource). */
static json_t *start_routed(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                            const char *method, json_t *params)
{
    bool subscribe = strcmp(method, "resources/subscribe") == 0;
    struct gw_route_request r = {.method = method,
                                 .client = s->client,
                                 .params = params,
                                 .dialog = s->dialog[0] ? s->dialog : NULL};
    struct gw_mcp_call *c;
    int rc;

    if (s->ncalls >= MCP_MAX_CALLS)
        return gw_mcp__error(id, RPC_INTERNAL_ERROR,
                             "too many requests in flight on this session; wait for some to "
                             "finish");
    if (!json_is_object(params))
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "params must be an object");
    if (subscribe && !json_is_string(json_object_get(params, "uri")))
        return gw_mcp__error(id, RPC_INVALID_PARAMS,
                             "resources/subscribe needs params.uri (a string)");
    if (subscribe)
        r.subscriber = subscriber_of(s);
    if (s->modern)
        r.params = gw_mcp__hop_params(params);
    c = gw_mcp__call_new(s, x, id, method);
    c->routed = true;
    if (s->modern &&
        (strcmp(method, "prompts/get") == 0 || strcmp(method, "resources/read") == 0)) {
        json_t *err = NULL;
        rc = gw_mcp__modern_route(s, c, params, r.params, &err);
        json_decref(r.params);
        if (err != NULL) {
            gw_mcp__call_drop(c);
            return err;
        }
    } else {
        /* a 2025 session answers what the server asks during it, as for tools/call */
        r.hooks = s->modern ? NULL : &call_hooks;
        r.hooks_data = c;
        r.client_caps = s->caps;
        r.log_level = s->log_level;
        rc = gw_dispatch_request(s->ms->servers, &r, on_call_outcome, c, &c->call);
        if (s->modern)
            json_decref(r.params);
    }
    if (rc == 0) {
        gw_mcp__call_track(s, x, c);
        return NULL;
    }
    gw_mcp__call_drop(c);
    if (rc == GW_SERVERS_E_NO_TOOL && s->modern && strcmp(method, "resources/read") == 0) {
        json_t *e = gw_mcp__error(id, RPC_INVALID_PARAMS, "Resource not found");
        json_object_set_new(json_object_get(e, "error"), "data",
                            json_pack("{s:O}", "uri", json_object_get(params, "uri")));
        return e;
    }
    if (rc == GW_SERVERS_E_NEED_DIALOG && s->modern)
        return need_dialog(id);
    if (rc == GW_SERVERS_E_NO_TOOL && (subscribe || strcmp(method, "resources/read") == 0))
        return gw_mcp__error(id, RPC_RESOURCE_NOT_FOUND, "Resource not found");
    if (rc == GW_SERVERS_E_SUBS_FULL) {
        char *msg = gw_xasprintf("this session holds %d resource subscriptions, the most the "
                                 "gateway keeps per session; unsubscribe from some first",
                                 GW_SUBS_PER_SUBSCRIBER);
        json_t *e = gw_mcp__error(id, RPC_INTERNAL_ERROR, msg);
        free(msg);
        return e;
    }
    if (rc == GW_SERVERS_E_NO_TOOL)
        return gw_mcp__error(id, RPC_INVALID_PARAMS,
                             strcmp(method, "prompts/get") == 0
                                 ? "Unknown prompt"
                                 : "no server offers the prompt or resource template named by "
                                   "params.ref");
    return gw_mcp__error(id, RPC_INTERNAL_ERROR, gw_dispatch_error(rc).sentence);
}

/* A tools/call whose params named `name` and `args` (NULL when absent)
 * and the progress `token`; `params` (NULL when read from the body's text)
 * holds a retry's fields. */
static json_t *call_tool(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                         const char *name, json_t *args, json_t *token, json_t *params)
{
    json_t *empty, *r;

    if (name == NULL)
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
    if (args != NULL && !json_is_object(args) && !json_is_null(args))
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "params.arguments must be an object");
    empty = json_is_object(args) ? json_incref(args) : json_object();
    if (token != NULL && !json_is_string(token) && !json_is_integer(token))
        token = NULL;
    if ((r = gw_mcp__ts_call(s, id, name, empty)) != NULL) {
        json_decref(empty);
        return r;
    }
    r = s->modern ? gw_mcp__modern_call(s, x, id, name, empty, token, params)
                  : start_call(s, x, id, name, empty, token);
    json_decref(empty);
    return r;
}

/* Returns the answer now, or NULL when the call answers later. With
 * params._meta.progressToken the upstream's progress comes back under that
 * token, on the POST's own SSE stream when the client accepts one. */
static json_t *tools_call(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                          json_t *params)
{
    static const struct gw_mcp_member keys[] = {GW_MCP_MEMBER("name"), GW_MCP_MEMBER("arguments"),
                                                GW_MCP_MEMBER("_meta")};
    json_t *n, *args, *meta, **out[] = {&n, &args, &meta};

    gw_mcp__members(params, keys, out, GW_ARRAY_SIZE(keys)); /* one pass, no hashing */
    return call_tool(s, x, id, json_string_value(n), args, json_object_get(meta, "progressToken"),
                     params);
}

void gw_mcp__dispatch_call(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                           const char *name, json_t *args)
{
    struct gw_trace_ctx remote; /* only .valid is read until a parse fills it */
    remote.valid = false;
    struct gw_span *span =
        gw_trace_on() ? gw_mcp__span_begin(s, x, "tools/call", id, NULL, name, &remote) : NULL;
    const struct gw_trace_ctx *prev = gw_trace_enter(gw_trace_pick(span, &remote));
    json_t *reply = call_tool(s, x, id, name, args, NULL, NULL);

    gw_trace_leave(prev);
    gw_mcp__span_reply(span, reply);
    gw_mcp__exchange_add(x, reply);
}

static void call_cancel(struct gw_mcp_call *c, const char *why)
{
    if (c->round != NULL)
        gw_rounds_cancel(c->round, why);
    else
        gw_dispatch_cancel(c->call, why);
}

void gw_mcp__cancel(struct gw_mcp_session *s, json_t *request_id, const char *reason)
{
    for (struct gw_mcp_call *c = s->calls; c != NULL; c = c->next) {
        if (json_equal(c->id, request_id)) {
            call_cancel(c, reason ? reason : "cancelled by the client");
            return;
        }
    }
}

void gw_mcp__calls_cancel(struct gw_mcp_session *s, const char *why)
{
    while (s->calls != NULL) {
        struct gw_mcp_call *c = s->calls;
        s->calls = c->next;
        c->next = NULL;
        c->s = NULL;
        s->ncalls--;
        call_cancel(c, why);
    }
}

/* ---- the rest ---- */

static json_t *set_level(struct gw_mcp_session *s, json_t *id, json_t *params)
{
    const char *level = json_string_value(json_object_get(params, "level"));

    if (gw_mcp_log_rank(level) != 0) {
        snprintf(s->log_level, sizeof s->log_level, "%s", level);
        return gw_mcp__result(id, json_object());
    }
    return gw_mcp__error(id, RPC_INVALID_PARAMS,
                         "params.level must be one of debug, info, notice, warning, error, "
                         "critical, alert, emergency");
}

static json_t *request(struct gw_mcp_session *s, struct gw_mcp_exchange *x, const char *method,
                       json_t *id, json_t *params)
{
    char *msg;
    json_t *e;

    if (params != NULL && !json_is_object(params))
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "params must be an object");
    if (strcmp(method, "tools/call") == 0) /* the most frequent first */
        return tools_call(s, x, id, params);
    if (s->modern && (e = gw_mcp__modern_removed(id, method)) != NULL)
        return e;
    if (s->modern && strcmp(method, "server/discover") == 0)
        return gw_mcp__result(id, gw_mcp__discover_result(s->ms));
    if (strcmp(method, "ping") == 0)
        return gw_mcp__result(id, json_object());
    if (strcmp(method, "tools/list") == 0)
        return tools_list(s, id, params);
    if (strcmp(method, "logging/setLevel") == 0)
        return set_level(s, id, params);
    if (strcmp(method, "prompts/list") == 0)
        return extras_list(s, id, params, GW_EXTRA_PROMPTS);
    if (strcmp(method, "resources/list") == 0)
        return extras_list(s, id, params, GW_EXTRA_RESOURCES);
    if (strcmp(method, "resources/templates/list") == 0)
        return extras_list(s, id, params, GW_EXTRA_TEMPLATES);
    if (strcmp(method, "prompts/get") == 0 || strcmp(method, "resources/read") == 0 ||
        strcmp(method, "resources/subscribe") == 0 || strcmp(method, "completion/complete") == 0)
        return start_routed(s, x, id, method, params);
    if (strcmp(method, "resources/unsubscribe") == 0)
        return unsubscribe(s, id, params);
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

void gw_mcp__dispatch_request(struct gw_mcp_session *s, struct gw_mcp_exchange *x,
                              const char *method, json_t *id, json_t *params)
{
    struct gw_trace_ctx remote; /* only .valid is read until a parse fills it */
    remote.valid = false;
    struct gw_span *span =
        gw_trace_on() ? gw_mcp__span_begin(s, x, method, id, params, NULL, &remote) : NULL;
    const struct gw_trace_ctx *prev = gw_trace_enter(gw_trace_pick(span, &remote));
    json_t *reply = request(s, x, method, id, params);

    gw_trace_leave(prev);
    gw_mcp__span_reply(span, reply);
    gw_mcp__exchange_add(x, reply);
}

void gw_mcp__dispatch(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    json_t *params = json_object_get(msg, "params");
    const char *method = json_string_value(json_object_get(msg, "method"));
    const char *jsonrpc = json_string_value(json_object_get(msg, "jsonrpc"));

    if (!json_is_object(msg) || jsonrpc == NULL || strcmp(jsonrpc, "2.0") != 0) {
        gw_mcp__exchange_add(
            x, gw_mcp__error(NULL, RPC_INVALID_REQUEST, "not a JSON-RPC 2.0 message"));
        return;
    }
    if (method == NULL && id != NULL &&
        (json_object_get(msg, "result") != NULL || json_object_get(msg, "error") != NULL)) {
        if (!s->modern)
            relay_answer(s, msg); /* an answer to a relayed request; unknown ids are dropped */
        return;
    }
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
    gw_mcp__dispatch_request(s, x, method, id, params);
}
