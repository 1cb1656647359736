/* Relays from an upstream instance back to the caller of a call in flight
 * (design §9): progress notifications by token, log notifications, and
 * the server requests the gateway relays (sampling, elicitation, roots).
 *
 * Each slot lists the calls sent on its instance and not yet answered.
 * Progress finds its call by the gateway's own token (unique per daemon,
 * so a server cannot reach another instance's calls). A request of a
 * 2026-07-28 input round is the answer to one request, and the MCP client
 * names it (its origin): it goes to that call and no other. A 2025-era
 * server's request names no call, so it is attributed: to the call whose
 * token its params._meta.progressToken quotes, else to the instance's calls
 * in flight when they all belong to one dialog (always so on a leased
 * instance); a shared instance running calls of several dialogs cannot say
 * whose it is, and the upstream is told so. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/dispatch_internal.h"
#include "gw/util.h"

/* Relayed requests waiting on one call; beyond, they are refused. */
#define REQUESTS_PER_CALL 16
#define RPC_NO_METHOD     -32601

void gw_relay_sent(struct gw_call *c)
{
    struct slot *sl = c->slot;

    c->sent_prev = NULL;
    c->sent_next = sl->sent;
    if (sl->sent != NULL)
        sl->sent->sent_prev = c;
    sl->sent = c;
}

/* Answers upstream on the call's instance. */
static void respond(struct gw_call *c, json_t *id, gw_mcp_handle origin, json_t *result,
                    json_t *error)
{
    int rc = gw_instance_respond(c->slot->inst, id, origin, result, error);

    if (rc != 0)
        gw_log(GW_LOG_DEBUG, "could not answer a server request", "server", c->server, "error",
               gw_mcp_strerror(rc), NULL);
}

static void refuse(struct gw_servers *s, struct slot *sl, json_t *id, gw_mcp_handle origin,
                   const char *method, const char *why)
{
    char *msg = gw_xasprintf("mcpgw cannot relay %s: %s", method, why);
    json_t *err = json_pack("{s:i, s:s, s:{s:s, s:s}}", "code", RPC_NO_METHOD, "message", msg,
                            "data", "method", method, "reason", why);

    free(msg);
    s->relay.requests_refused++;
    gw_log(GW_LOG_INFO, "refused a server request", "server", sl->srv->cfg->id, "method", method,
           "reason", why, NULL);
    if (gw_instance_respond(sl->inst, id, origin, NULL, err) != 0)
        gw_log(GW_LOG_DEBUG, "could not answer a server request", "server", sl->srv->cfg->id, NULL);
    json_decref(err);
}

/* Ends the request's span: its outcome is the caller's answer, `error`
 * (a JSON-RPC error), or `why` when it got none. */
static void request_free(struct gw_server_request *sr, json_t *error, const char *why)
{
    json_t *code = json_object_get(error, "code");
    char num[24];

    if (json_is_integer(code)) {
        gw_fmt_int(num, (long long)json_integer_value(code));
        gw_span_str(sr->span, "rpc.response.status_code", num);
        gw_span_str(sr->span, "error.type", num);
        gw_span_error(sr->span, json_string_value(json_object_get(error, "message")));
    } else if (why != NULL) {
        gw_span_str(sr->span, "error.type", why);
        gw_span_error(sr->span, why);
    }
    gw_span_end(sr->span);
    json_decref(sr->id);
    free(sr);
}

void gw_relay_done(struct gw_call *c)
{
    struct slot *sl = c->slot;

    if (c->sent_prev != NULL)
        c->sent_prev->sent_next = c->sent_next;
    else if (sl != NULL && sl->sent == c)
        sl->sent = c->sent_next;
    if (c->sent_next != NULL)
        c->sent_next->sent_prev = c->sent_prev;
    c->sent_prev = c->sent_next = NULL;
    while (c->requests != NULL) {
        struct gw_server_request *sr = c->requests;
        json_t *err = json_pack("{s:i, s:s}", "code", RPC_NO_METHOD, "message",
                                "the call that caused this request has ended");
        c->requests = sr->next;
        if (c->hooks != NULL && c->hooks->on_request_gone != NULL)
            c->hooks->on_request_gone(c->hooks_data, sr);
        respond(c, sr->id, sr->origin, NULL, err);
        json_decref(err);
        request_free(sr, NULL, "call_ended");
    }
}

void gw_dispatch_answer(struct gw_server_request *sr, json_t *result, json_t *error)
{
    struct gw_call *c = sr->call;
    struct gw_server_request **link = &c->requests;

    while (*link != NULL && *link != sr)
        link = &(*link)->next;
    if (*link == sr)
        *link = sr->next;
    respond(c, sr->id, sr->origin, result, error);
    request_free(sr, error, NULL);
}

/* ---- progress and logs ---- */

static struct gw_call *by_token(struct slot *sl, json_t *token)
{
    for (struct gw_call *c = sl->sent; token != NULL && c != NULL; c = c->sent_next) {
        if (c->upstream_token != NULL && json_equal(c->upstream_token, token))
            return c;
    }
    return NULL;
}

static void progress(struct gw_servers *s, struct slot *sl, json_t *params)
{
    struct gw_call *c = by_token(sl, json_object_get(params, "progressToken"));
    json_t *copy;

    if (c == NULL || c->hooks == NULL || c->hooks->on_progress == NULL ||
        c->progress_token == NULL) {
        s->relay.progress_dropped++;
        return;
    }
    copy = json_copy(params);
    json_object_set(copy, "progressToken", c->progress_token);
    s->relay.progress_relayed++;
    c->hooks->on_progress(c->hooks_data, copy);
    json_decref(copy);
}

static void on_progress(struct slot *sl, const char *method, json_t *params)
{
    if (json_is_object(params))
        progress(sl->srv->owner, sl, params);
}

/* A log line names no call: it goes to the call only when there is exactly
 * one in flight on the instance. */
static void on_log(struct slot *sl, const char *method, json_t *params)
{
    struct gw_call *only = sl->sent != NULL && sl->sent->sent_next == NULL ? sl->sent : NULL;

    if (!json_is_object(params))
        return;
    if (only != NULL && only->hooks != NULL && only->hooks->on_log != NULL)
        only->hooks->on_log(only->hooks_data, params);
    else
        sl->srv->owner->relay.progress_dropped++;
}

void gw_relay_routes(struct gw_servers *s)
{
    gw_servers_route(s, "notifications/progress", on_progress);
    gw_servers_route(s, "notifications/message", on_log);
}

/* ---- server requests ---- */

/* The call a server request belongs to, or NULL with *why set. */
static struct gw_call *attribute(struct slot *sl, json_t *params, gw_mcp_handle origin,
                                 const char **why)
{
    json_t *meta = json_object_get(params, "_meta");
    struct gw_call *c;

    if (origin != 0) {
        for (c = sl->sent; c != NULL; c = c->sent_next) {
            if (c->handle == origin)
                return c;
        }
        *why = "the call that asked for this input has ended";
        return NULL;
    }
    c = by_token(sl, json_object_get(meta, "progressToken"));
    if (c != NULL)
        return c;
    if (sl->sent == NULL) {
        *why = "no call is in flight on this instance, so there is no client to ask";
        return NULL;
    }
    for (struct gw_call *o = sl->sent->sent_next; o != NULL; o = o->sent_next) {
        if (strcmp(o->dialog, sl->sent->dialog) != 0) {
            *why = "calls of several dialogs are in flight on this shared instance and the "
                   "request does not say which one it belongs to";
            return NULL;
        }
    }
    /* One dialog: the most recent call of it that can relay, else the most
     * recent one (whose refusal then says why). */
    for (struct gw_call *o = sl->sent; o != NULL; o = o->sent_next) {
        if (o->hooks != NULL)
            return o;
    }
    return sl->sent;
}

static unsigned cap_of(const char *method)
{
    if (strcmp(method, "sampling/createMessage") == 0)
        return GW_CLIENT_CAP_SAMPLING;
    return strcmp(method, "roots/list") == 0 ? GW_CLIENT_CAP_ROOTS : GW_CLIENT_CAP_ELICITATION;
}

static const char *undeclared(unsigned cap)
{
    switch (cap) {
    case GW_CLIENT_CAP_SAMPLING:
        return "the MCP client that made the call did not declare the sampling capability";
    case GW_CLIENT_CAP_ROOTS:
        return "the MCP client that made the call did not declare the roots capability";
    default:
        return "the MCP client that made the call did not declare the elicitation capability";
    }
}

/* The params the caller gets: the relay's CLIENT span's context in
 * params._meta (or the call's, passed on unsampled, when it is not
 * recorded), so that the caller's handler parents its own span on it.
 * A new reference; `params` (may be NULL) is the upstream's and kept. */
static json_t *relayed_params(const struct gw_server_request *sr, json_t *params)
{
    const struct gw_trace_ctx *call = gw_trace_saved_ctx(&sr->call->trace);
    const struct gw_trace_ctx *ctx = sr->span != NULL                     ? gw_span_ctx(sr->span)
                                     : call != NULL && !(call->flags & 1) ? call
                                                                          : NULL;
    json_t *copy, *meta;

    if (ctx == NULL)
        return json_incref(params);
    copy = params != NULL ? json_copy(params) : json_object();
    meta = json_object_get(copy, "_meta");
    meta = json_is_object(meta) ? json_copy(meta) : json_object();
    gw_trace_meta(meta, ctx);
    json_object_set_new(copy, "_meta", meta);
    return copy;
}

static size_t count_requests(const struct gw_call *c)
{
    size_t n = 0;

    for (const struct gw_server_request *sr = c->requests; sr != NULL; sr = sr->next)
        n++;
    return n;
}

int gw_relay_request(struct slot *sl, const char *method, json_t *id, json_t *params,
                     gw_mcp_handle origin)
{
    struct gw_servers *s = sl->srv->owner;
    const char *why = NULL;
    struct gw_call *c = attribute(sl, params, origin, &why);
    struct gw_server_request *sr;
    json_t *relayed;
    int rc;

    if (c != NULL && c->hooks == NULL)
        why = "the call that caused it came from a client that cannot answer it";
    else if (c != NULL && !(c->client_caps & cap_of(method))) {
        why = undeclared(cap_of(method));
        c->missing_caps |= cap_of(method);
    } else if (c != NULL && count_requests(c) >= REQUESTS_PER_CALL)
        why = "too many requests of this call are already waiting for the client";
    if (why == NULL) {
        sr = gw_xcalloc(1, sizeof *sr);
        sr->call = c;
        sr->id = json_incref(id);
        sr->origin = origin;
        /* the conventions' CLIENT span of a request a server sends: here
         * the gateway's, to its caller, in the call's trace */
        sr->span = gw_span_child(method, GW_SPAN_CLIENT, gw_trace_saved_ctx(&c->trace));
        gw_span_str(sr->span, "mcp.method.name", method);
        gw_span_str(sr->span, "mcpgw.server", c->server);
        if (c->dialog[0] != '\0')
            gw_span_str(sr->span, "mcpgw.dialog", c->dialog);
        sr->next = c->requests;
        c->requests = sr;
        relayed = relayed_params(sr, params);
        rc = c->hooks->on_request(c->hooks_data, sr, method, relayed);
        json_decref(relayed);
        if (rc == 0) {
            s->relay.requests_relayed++;
            return 0;
        }
        c->requests = sr->next;
        request_free(sr, NULL, "not_sent");
        why = "the MCP client's session cannot take the request now";
    }
    refuse(s, sl, id, origin, method, why);
    return 0;
}

void gw_dispatch_relay_stats(const struct gw_servers *s, struct gw_relay_stats *out)
{
    *out = s->relay;
}
