/* The MCP client's CLIENT spans (gw/trace.h): one per request sent while a
 * traced context is current, named and described by the OpenTelemetry MCP
 * conventions, its context passed on in the request's params._meta
 * (traceparent, tracestate) and current while the transport sends it (the
 * HTTP transport adds the traceparent header from it). Arguments, results
 * and the upstream's session id are never attributes: mcp.session.id is a
 * digest of the latter, as on the SERVER spans. */
#include <stdlib.h>
#include <string.h>

#include "gw/mcp_client_internal.h"
#include "gw/util.h"

void gw_mcp_client_trace_peer(struct gw_mcp_client *c, const char *transport, const char *url,
                              uint64_t instance, const char *(*session)(void *data))
{
    const char *host, *end;

    free(c->peer_address);
    c->peer_address = NULL;
    gw_span_free(c->peer_attrs);
    c->peer_attrs = NULL;
    c->peer_transport = transport;
    c->peer_instance = instance;
    c->peer_session = session;
    c->peer_port = 0;
    if (url == NULL || (host = strstr(url, "://")) == NULL)
        return;
    host += 3;
    end = host + strcspn(host, "/?#");
    for (const char *at = host; at < end; at++) {
        if (*at == '@')
            host = at + 1; /* userinfo is never an attribute */
    }
    if (*host == '[') {
        const char *close = memchr(host, ']', (size_t)(end - host));
        if (close == NULL)
            return;
        c->peer_address = gw_xasprintf("%.*s", (int)(close - host - 1), host + 1);
        host = close + 1;
    } else {
        const char *colon = memchr(host, ':', (size_t)(end - host));
        c->peer_address = gw_xasprintf("%.*s", (int)((colon ? colon : end) - host), host);
        host = colon ? colon : end;
    }
    c->peer_port = *host == ':' ? atoi(host + 1) : strncmp(url, "https", 5) == 0 ? 443 : 80;
}

/* The attributes of every span to this peer in this revision, encoded
 * once (a template) and copied into each. */
static const struct gw_span *peer_attrs(struct gw_mcp_client *c)
{
    const char *version = c->era == GW_MCP_ERA_MODERN ? GW_MCP_MODERN_VERSION : c->version;
    struct gw_span *t = c->peer_attrs;

    if (t != NULL && (version == NULL ? c->peer_attrs_version == NULL
                                      : c->peer_attrs_version != NULL &&
                                            strcmp(version, c->peer_attrs_version) == 0))
        return t;
    gw_span_free(t);
    free(c->peer_attrs_version);
    c->peer_attrs = t = gw_span_template();
    c->peer_attrs_version = version != NULL ? gw_xstrdup(version) : NULL;
    gw_span_str(t, "mcp.protocol.version", version);
    gw_span_str(t, "network.transport", c->peer_transport);
    gw_span_str(t, "server.address", c->peer_address);
    if (c->peer_port > 0)
        gw_span_int(t, "server.port", c->peer_port);
    gw_span_str(t, "mcpgw.server", c->server_id);
    if (c->peer_instance > 0)
        gw_span_int(t, "mcpgw.instance", (int64_t)c->peer_instance);
    return t;
}

static struct gw_span *span_start(struct gw_mcp_client *c, const char *method, const char *target)
{
    const struct gw_trace_ctx *parent = gw_trace_current();
    const char *session;
    char digest[GW_TRACE_DIGEST_LEN + 1];
    struct gw_span *s;

    /* the listen stays open for the instance's life: no call's span */
    if (parent == NULL || !gw_trace_on() || strcmp(method, "subscriptions/listen") == 0)
        return NULL;
    s = gw_span_child_op(method, target, GW_SPAN_CLIENT, parent);
    gw_span_method(s, "mcp.method.name");
    if (target != NULL && strcmp(method, "tools/call") == 0) {
        gw_span_target(s, "gen_ai.tool.name");
        gw_span_lit(s, "gen_ai.operation.name", "execute_tool");
    } else if (target != NULL && strcmp(method, "prompts/get") == 0) {
        gw_span_target(s, "gen_ai.prompt.name");
    }
    if (s != NULL)
        gw_span_attrs_from(s, peer_attrs(c));
    /* an upstream's session id may be its bearer secret: only a digest */
    session = s != NULL && c->peer_session != NULL ? c->peer_session(c->cb.data) : NULL;
    if (session != NULL && session[0] != '\0') {
        gw_trace_digest(session, digest);
        gw_span_str(s, "mcp.session.id", digest);
    }
    return s;
}

/* The target the conventions name a span by: a tool's or a prompt's name. */
static const char *target_of(const char *method, json_t *params)
{
    if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
        return json_string_value(json_object_get(params, "name"));
    return NULL;
}

static void ctx_meta(json_t *meta, const struct gw_trace_ctx *ctx)
{
    if (ctx != NULL && json_is_object(meta))
        gw_trace_meta(meta, ctx);
}

void gw_mcp__span_meta(json_t *meta, const struct gw_span *s)
{
    ctx_meta(meta, gw_span_ctx(s));
}

/* The context passed on: the request's span's, or a context not recorded
 * (its sampled flag off) as it came. */
static const struct gw_trace_ctx *passed_on(const struct gw_span *s)
{
    const struct gw_trace_ctx *cur = gw_trace_current();

    return s != NULL ? &s->ctx : cur != NULL && !(cur->flags & 1) ? cur : NULL;
}

json_t *gw_mcp__span_params(struct gw_mcp_client *c, const char *method, json_t *params,
                            json_t *sent)
{
    struct gw_span *s = span_start(c, method, target_of(method, params));
    const struct gw_trace_ctx *ctx = passed_on(s);
    json_t *meta;

    if (ctx == NULL)
        return sent;
    c->next_span = s;
    if (c->era != GW_MCP_ERA_MODERN) { /* `sent` is the caller's: its copy gets the context */
        json_t *copy = sent != NULL ? json_copy(sent) : json_object();
        json_decref(sent);
        sent = copy;
        meta = json_object_get(sent, "_meta");
        json_object_set_new(sent, "_meta", json_is_object(meta) ? json_copy(meta) : json_object());
    }
    ctx_meta(json_object_get(sent, "_meta"), ctx);
    return sent;
}

void gw_mcp__span_call_text(struct gw_mcp_client *c, struct gw_jbuf *b, const char *tool, bool more)
{
    char tp[GW_TRACEPARENT_LEN + 1];
    struct gw_span *s = span_start(c, "tools/call", tool);
    const struct gw_trace_ctx *ctx = passed_on(s);

    if (ctx == NULL)
        return;
    c->next_span = s;
    gw_trace_format(ctx, tp);
    gw_jbuf_lit(b, "\"traceparent\":\"");
    gw_jbuf_put(b, tp, GW_TRACEPARENT_LEN);
    gw_jbuf_lit(b, "\"");
    if (ctx->tracestate != NULL) {
        gw_jbuf_lit(b, ",\"tracestate\":");
        gw_jbuf_string(b, ctx->tracestate, strlen(ctx->tracestate));
    }
    if (more)
        gw_jbuf_lit(b, ",");
}

/* A JSON-RPC error's code, as the conventions' rpc.response.status_code. */
static void rpc_error(struct gw_span *s, json_t *error)
{
    json_t *code = json_object_get(error, "code");
    char num[24];

    if (!json_is_integer(code))
        return;
    gw_fmt_int(num, (long long)json_integer_value(code));
    gw_span_str(s, "rpc.response.status_code", num);
    gw_span_str(s, "error.type", num);
}

/* Looked up once: json_is_true evaluates its argument twice. */
static bool is_error(json_t *result)
{
    json_t *v = json_object_get(result, "isError");

    return json_is_true(v);
}

void gw_mcp__span_end(struct pending *p, const struct gw_mcp_reply *r)
{
    struct gw_span *s = p->span;

    if (s == NULL)
        return;
    p->span = NULL;
    if (r == NULL) {
        gw_span_str(s, "error.type", "not_sent");
        gw_span_error(s, "the request could not be sent");
    } else if (r->code == GW_MCP_E_RPC) {
        rpc_error(s, r->error);
        gw_span_error(s, r->message);
    } else if (r->code == GW_MCP_E_TIMEOUT) {
        gw_span_str(s, "error.type", "timeout");
        gw_span_error(s, r->message);
    } else if (r->code != 0) {
        gw_span_str(s, "error.type",
                    r->code == GW_MCP_E_CANCELLED  ? "cancelled"
                    : r->code == GW_MCP_E_PROTOCOL ? "protocol_error"
                                                   : "transport_error");
        gw_span_error(s, r->message);
    } else if (strcmp(p->method, "tools/call") == 0 && is_error(r->result)) {
        gw_span_str(s, "error.type", "tool_error");
        gw_span_error(s, "tool_error");
    }
    gw_span_end(s);
}
