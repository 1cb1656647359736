/* /mcp's SERVER spans (gw/trace.h): one per request, named and described
 * by the OpenTelemetry MCP conventions, parented on the request's
 * params._meta.traceparent or else its traceparent header. A request
 * answered at once ends its span with the answer; a call (tools/call, a
 * routed request) adopts it and ends it with its outcome
 * (gw_mcp__call_end). The session id is a bearer secret: mcp.session.id
 * is a digest of it. */
#include <stdlib.h>
#include <string.h>

#include "gw/mcp_server_internal.h"
#include "gw/trace.h"
#include "gw/util.h"

/* The span of the request being dispatched, until a call adopts it. */
static struct gw_span *adoptable;

static void remote_of(struct gw_mcp_exchange *x, json_t *params, struct gw_trace_ctx *out)
{
    json_t *meta = json_object_get(params, "_meta");
    json_t *tp = json_object_get(meta, "traceparent");

    if (json_is_string(tp) &&
        gw_trace_parse(json_string_value(tp), json_string_length(tp),
                       json_string_value(json_object_get(meta, "tracestate")), out))
        return;
    const char *h = x->req != NULL ? gw_http_header(x->req, "traceparent") : NULL;
    gw_trace_parse(h, h != NULL ? strlen(h) : 0,
                   x->req != NULL ? gw_http_header(x->req, "tracestate") : NULL, out);
}

struct gw_span *gw_mcp__span_begin(struct gw_mcp_session *s, struct gw_mcp_exchange *x,
                                   const char *method, json_t *id, json_t *params, const char *tool,
                                   struct gw_trace_ctx *remote)
{
    char digest[GW_TRACE_DIGEST_LEN + 1];
    struct gw_span *span;

    remote_of(x, params, remote);
    if (tool == NULL && (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0))
        tool = json_string_value(json_object_get(params, "name"));
    span = gw_span_root_op(method, tool, GW_SPAN_SERVER, remote);
    if (span == NULL)
        return NULL;
    gw_span_method(span, "mcp.method.name");
    if (strcmp(method, "tools/call") == 0) {
        gw_span_target(span, "gen_ai.tool.name");
        gw_span_lit(span, "gen_ai.operation.name", "execute_tool");
    } else if (strcmp(method, "prompts/get") == 0) {
        gw_span_target(span, "gen_ai.prompt.name");
    }
    if (json_is_string(id))
        gw_span_str(span, "jsonrpc.request.id", json_string_value(id));
    else if (json_is_integer(id))
        gw_span_int(span, "jsonrpc.request.id", json_integer_value(id));
    gw_span_str(span, "mcp.protocol.version", s->version);
    if (!s->modern) {
        gw_trace_digest(s->id, digest);
        gw_span_str(span, "mcp.session.id", digest);
    }
    gw_span_lit(span, "network.protocol.name", "http");
    gw_span_lit(span, "mcpgw.front", "mcp");
    if (s->dialog[0] != '\0')
        gw_span_str(span, "mcpgw.dialog", s->dialog);
    adoptable = span;
    return span;
}

struct gw_span *gw_mcp__span_adopt(void)
{
    struct gw_span *span = adoptable;

    adoptable = NULL;
    return span;
}

void gw_mcp__span_unadopt(struct gw_span *span)
{
    if (span != NULL)
        adoptable = span;
}

void gw_mcp__span_reply(struct gw_span *span, json_t *reply)
{
    json_t *error = json_object_get(reply, "error");
    json_t *result = json_object_get(reply, "result");
    char code[24];

    if (span == NULL || span != adoptable)
        return; /* adopted by its call, or not traced */
    adoptable = NULL;
    if (json_is_integer(json_object_get(error, "code"))) {
        gw_fmt_int(code, (long long)json_integer_value(json_object_get(error, "code")));
        gw_span_str(span, "rpc.response.status_code", code);
        gw_span_str(span, "error.type", code);
        gw_span_error(span, json_string_value(json_object_get(error, "message")));
    } else if (json_is_true(json_object_get(result, "isError"))) {
        gw_span_str(span, "error.type", "tool_error");
        gw_span_error(span, "tool_error");
    }
    gw_span_end(span);
}

void gw_mcp__span_call_end(struct gw_mcp_call *c, const char *server, const char *dialog,
                           const char *status)
{
    if (c->span == NULL)
        return;
    gw_span_str(c->span, "mcpgw.server", server);
    gw_span_str(c->span, "mcpgw.dialog", dialog);
    if (strcmp(status, "ok") != 0) {
        gw_span_str(c->span, "error.type", status);
        gw_span_error(c->span, status);
    }
    gw_span_end(c->span);
    c->span = NULL;
}
