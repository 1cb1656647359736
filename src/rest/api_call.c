/* POST /v1/tools/{name}/call (design §7): a call through the input
 * rounds, so that an upstream that asks its caller for input (sampling,
 * elicitation, roots) is answered 409 input_required and continued by the
 * caller's retry; its outcome becomes the result R or an error. */
#include <stdlib.h>
#include <string.h>

#include "gw/api_internal.h"
#include "gw/artifacts.h"
#include "gw/catalog.h"
#include "gw/dispatch.h"
#include "gw/input_rounds.h"
#include "gw/log.h"
#include "gw/policy.h"
#include "gw/result.h"
#include "gw/trace.h"
#include "gw/util.h"

/* A tool call's request waiting for its upstream's next event: the
 * outcome, or a round of input requests (then the request is answered 409
 * and the upstream call stays parked in the input rounds). Freed by the
 * rounds' answer callback. */
struct pending_call {
    struct gw_api_ctx *ctx;
    struct gw_http_request *req;
    struct gw_round *round;
    char *tool;
    /* the dialog's parts, as parsed from the request: artifacts are kept
     * under them; "anonymous" without a dialog */
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1];
    char dir_root[GW_DIALOG_MAX + 1]; /* root scoped by the client: its artifacts' directory */
    char dialog[GW_DIALOG_MAX + 1];   /* canonical, "" without one */
    uint64_t started_ms;
    bool aborted;
    struct gw_span *span; /* the SERVER span, NULL when not traced */
};

static void log_call(const struct pending_call *pc, const char *server, const char *dialog,
                     const char *status)
{
    char ms[24];

    uint64_t elapsed = gw_now_ms() - pc->started_ms;

    if (gw_log_enabled(GW_LOG_INFO)) {
        snprintf(ms, sizeof ms, "%llu", (unsigned long long)elapsed);
        gw_log(GW_LOG_INFO, "tool call", "tool", pc->tool, "server", server, "dialog", dialog,
               "status", status, "duration_ms", ms, NULL);
    }
    gw_metrics_call(pc->ctx->metrics, "rest", server, pc->tool, status, (double)elapsed / 1000.0);
    gw_span_str(pc->span, "mcpgw.server", server);
    gw_span_str(pc->span, "mcpgw.dialog", dialog);
    if (strcmp(status, "ok") != 0 && strcmp(status, "input_required") != 0) {
        gw_span_str(pc->span, "error.type", status);
        gw_span_error(pc->span, status);
    }
}

/* What every REST call's span says, encoded once. */
static const struct gw_span *rest_attrs(void)
{
    static struct gw_span *t;

    if (t == NULL && (t = gw_span_template()) != NULL) {
        gw_span_lit(t, "mcp.method.name", "tools/call");
        gw_span_lit(t, "gen_ai.operation.name", "execute_tool");
        gw_span_lit(t, "network.protocol.name", "http");
        gw_span_lit(t, "mcpgw.front", "rest");
    }
    return t;
}

/* A REST tool call is traced as the MCP operation it performs. */
static struct gw_span *trace_start(const struct gw_http_request *req, const char *tool,
                                   struct gw_trace_ctx *remote)
{
    const char *tp = gw_http_header(req, "traceparent");
    struct gw_span *span;

    if (tp != NULL)
        gw_trace_parse(tp, strlen(tp), gw_http_header(req, "tracestate"), remote);
    span = gw_span_root_op("tools/call", tool, GW_SPAN_SERVER, remote);
    if (span != NULL)
        gw_span_attrs_from(span, rest_attrs());
    gw_span_target(span, "gen_ai.tool.name");
    return span;
}

/* The outcome's instance, as its lease names it. */
static void trace_end(struct pending_call *pc, const struct gw_call_outcome *o)
{
    json_t *inst = o != NULL ? json_object_get(o->lease, "instance") : NULL;

    if (json_is_string(inst))
        gw_span_str(pc->span, "mcpgw.instance", json_string_value(inst));
    else if (json_is_integer(inst))
        gw_span_int(pc->span, "mcpgw.instance", json_integer_value(inst));
    gw_span_end(pc->span);
}

/* A failed call's answer: status and code from dispatch's table, the
 * table's sentence with the outcome's own reason. A timeout says only why
 * when that is not the call itself (its instance never became ready). */
static void respond_outcome_error(struct gw_http_request *req, const struct gw_call_outcome *o)
{
    static const char *const retry[] = {"Retry-After: 1", NULL};
    struct gw_dispatch_error e = gw_dispatch_error(o->code);
    char *msg;

    if (o->code == GW_MCP_E_TIMEOUT && o->message != NULL && strstr(o->message, "ready"))
        msg = gw_xstrdup(o->message);
    else if (o->message == NULL || o->message[0] == '\0' || o->code == GW_MCP_E_TIMEOUT ||
             o->code == GW_MCP_E_CLOSED)
        msg = gw_xstrdup(e.sentence);
    else
        msg = gw_xasprintf("%s (%s)", e.sentence, o->message);
    gw_http_respond_error(req, e.http_status, e.rest_code, msg, e.retry ? retry : NULL);
    free(msg);
}

/* 503 authorization_required, with the authorize link where one is
 * offered (docs/api.md, "OAuth"): the call's server is `server`, or the
 * tool's. */
static void respond_authorization(struct gw_api_ctx *ctx, struct gw_http_request *req,
                                  const char *tool, const char *server)
{
    const struct gw_cat_tool *t;
    char *url = NULL, *msg = NULL;

    if (server == NULL && (t = gw_catalog_lookup(gw_servers_catalog(ctx->servers), tool)) != NULL)
        server = t->server;
    if (server != NULL)
        msg = gw_servers_authorization(ctx->servers, server, &url);
    json_t *e = json_pack("{s:s, s:s}", "code", "authorization_required", "message",
                          msg ? msg : gw_dispatch_error(GW_SERVERS_E_AUTHORIZATION).sentence);
    if (url != NULL)
        json_object_set_new(e, "authorize", json_string(url));
    gw_http_respond_json(req, 503, json_pack("{s:o}", "error", e), NULL);
    free(url);
    free(msg);
}

/* The index of the current artifacts_dir: a reload that moves the
 * directory starts a new one. */
static struct gw_artifacts *artifacts_of(struct gw_api_ctx *ctx)
{
    const char *dir = ctx->config->gateway.artifacts_dir;

    if (ctx->artifacts == NULL || strcmp(gw_artifacts_dir(ctx->artifacts), dir) != 0) {
        gw_artifacts_free(ctx->artifacts);
        ctx->artifacts = gw_artifacts_new(dir);
    }
    return ctx->artifacts;
}

static void respond_result(struct pending_call *pc, const struct gw_call_outcome *o)
{
    const struct gw_gateway_config *g = &pc->ctx->config->gateway;
    struct gw_result_ctx rctx = {
        .artifacts = artifacts_of(pc->ctx),
        .caps = {g->artifacts_max_bytes_per_dialog, g->artifacts_max_bytes},
        .root = pc->root,
        .dir_root = pc->dir_root,
        .self = pc->self,
        .server = o->server,
        .tool = o->tool,
    };
    struct gw_jbuf b = {0};
    bool is_error = false;
    size_t len;
    char *text;
    int rc;

    rc = gw_result_write(&b, o->result, &rctx, o->lease, &is_error);
    if (rc != 0) {
        free(b.p);
        log_call(pc, o->server, o->dialog, "bad_result");
        if (rc == GW_RESULT_E_SHAPE)
            gw_http_respond_error(pc->req, 502, "upstream_error",
                                  "the server's answer is not a CallToolResult", NULL);
        else
            gw_http_respond_error(pc->req, 500, "internal_error",
                                  "The response could not be encoded.", NULL);
        return;
    }
    log_call(pc, o->server, o->dialog, is_error ? "tool_error" : "ok");
    text = gw_jbuf_take(&b, &len);
    gw_http_respond(pc->req, 200, "application/json; charset=utf-8", text, len, NULL);
    free(text);
}

static void on_call_outcome(struct pending_call *pc, const struct gw_call_outcome *o)
{
    if (pc->aborted) {
        log_call(pc, o->server, o->dialog, "client_gone");
    } else if (o->code == GW_SERVERS_E_AUTHORIZATION) {
        log_call(pc, o->server, o->dialog, gw_dispatch_error(o->code).label);
        respond_authorization(pc->ctx, pc->req, pc->tool, o->server);
    } else if (o->code != 0) {
        log_call(pc, o->server, o->dialog, gw_dispatch_error(o->code).label);
        respond_outcome_error(pc->req, o);
    } else {
        respond_result(pc, o);
    }
}

/* The upstream asks: 409 with the round (docs/api.md, "Input rounds"). */
static void respond_input_required(struct pending_call *pc, const struct gw_rounds_answer *a)
{
    json_t *body = json_pack(
        "{s:{s:s, s:s}, s:O, s:s}", "error", "code", "input_required", "message",
        "the tool's server asks for input: repeat the call with \"inputResponses\" (a result "
        "for each key of inputRequests) and this \"requestState\"",
        "inputRequests", a->input_requests, "requestState", a->request_state);

    log_call(pc, NULL, pc->dialog[0] ? pc->dialog : NULL, "input_required");
    gw_http_respond_json(pc->req, 409, body, NULL);
}

static void on_answer(void *data, const struct gw_rounds_answer *a)
{
    struct pending_call *pc = data;

    if (a->outcome != NULL)
        on_call_outcome(pc, a->outcome);
    else if (!pc->aborted)
        respond_input_required(pc, a);
    trace_end(pc, a->outcome);
    free(pc->tool);
    free(pc);
}

static void on_call_abort(struct gw_http_request *req, void *data)
{
    struct pending_call *pc = data;

    pc->aborted = true;
    gw_rounds_cancel(pc->round, "the client disconnected");
}

/* A call refused before it started: the table's answer. */
static void start_call_error(struct gw_http_request *req, int rc)
{
    static const char *const retry[] = {"Retry-After: 1", NULL};
    struct gw_dispatch_error e = gw_dispatch_error(rc);

    gw_http_respond_error(req, e.http_status, e.rest_code, e.sentence, e.retry ? retry : NULL);
}

/* 429 rate_limited with the seconds before the client's next call could
 * start (at least 1). */
static void respond_rate_limited(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    uint64_t ms = gw_policy_retry_ms(ctx->servers, req->client, gw_now_ms());
    unsigned long long s = (ms + 999) / 1000;
    char *retry = gw_xasprintf("Retry-After: %llu", s > 0 ? s : 1);
    const char *const headers[] = {retry, NULL};
    struct gw_dispatch_error e = gw_dispatch_error(GW_SERVERS_E_RATE_LIMITED);

    gw_http_respond_error(req, e.http_status, e.rest_code, e.sentence, headers);
    free(retry);
}

/* A retry's requestState and inputResponses; 0, or -1 after answering. */
static int parse_retry(struct gw_http_request *req, json_t *body, const char **state,
                       json_t **responses)
{
    json_t *s = json_object_get(body, "requestState");

    if (s != NULL && !json_is_string(s))
        return gw_api__bad_request(req, "bad_request_state",
                                   "requestState must be the string a 409 input_required gave");
    *state = json_string_value(s);
    *responses = json_object_get(body, "inputResponses");
    return 0;
}

static int start(struct pending_call *pc, const struct gw_api_body *b, const char *state,
                 json_t *responses, const char **why)
{
    static const struct gw_rounds_receiver rcv_proto = {.on_answer = on_answer};
    struct gw_rounds_receiver rcv = rcv_proto;
    const char *dialog = b->has_dialog ? b->dialog : NULL;
    struct gw_round_bind bind = {dialog, "tools/call", pc->tool, b->arguments, pc->req->client};
    struct gw_call_request r = {.tool = pc->tool,
                                .front = "rest",
                                .client = pc->req->client,
                                .dialog = dialog,
                                .arguments = b->arguments,
                                .timeout_ms = b->timeout_ms,
                                .client_caps = GW_CLIENT_CAP_SAMPLING | GW_CLIENT_CAP_ELICITATION |
                                               GW_CLIENT_CAP_ROOTS};

    rcv.data = pc;
    if (pc->ctx->rounds == NULL) /* the daemon is stopping */
        return GW_MCP_E_CLOSED;
    if (state != NULL)
        return gw_rounds_resume(pc->ctx->rounds, state, responses, &bind, &rcv, &pc->round, why);
    return gw_rounds_call(pc->ctx->rounds, pc->ctx->servers, &r, &rcv, &pc->round);
}

/* A REST caller answers the upstream's server requests in input rounds
 * (sampling, elicitation and roots: it is asked, and may decline);
 * progress and log notifications have no one to go to and are dropped and
 * counted by dispatch (design §9). A body with requestState is a retry:
 * the call it continues is the parked one, not a new one. */
void gw_api__route_call(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *tool)
{
    struct gw_api_body b = {0};
    struct pending_call *pc;
    const char *state = NULL, *why = NULL;
    json_t *responses = NULL;
    int rc;

    if (gw_api__parse_body(req, &b) != 0 || parse_retry(req, b.json, &state, &responses) != 0) {
        json_decref(b.json);
        return;
    }
    pc = gw_xcalloc(1, sizeof *pc);
    pc->ctx = ctx;
    pc->req = req;
    pc->tool = gw_xstrdup(tool);
    gw_strlcpy(pc->dialog, b.has_dialog ? b.dialog : "", sizeof pc->dialog);
    gw_strlcpy(pc->root, b.has_dialog ? b.root : "anonymous", sizeof pc->root);
    gw_strlcpy(pc->self, b.has_dialog ? b.self : "anonymous", sizeof pc->self);
    gw_dialog_scope(req->client, pc->root, pc->dir_root);
    pc->started_ms = gw_now_ms();
    struct gw_trace_ctx remote; /* only .valid is read until a parse fills it */
    remote.valid = false;
    if (gw_trace_on())
        pc->span = trace_start(req, tool, &remote);
    const struct gw_trace_ctx *prev = gw_trace_enter(gw_trace_pick(pc->span, &remote));
    rc = start(pc, &b, state, responses, &why);
    gw_trace_leave(prev);
    json_decref(b.json);
    if (rc != 0) {
        if (why != NULL)
            gw_http_respond_error(
                req, 400, rc == GW_ROUNDS_E_RESPONSES ? "bad_input_responses" : "bad_request_state",
                why, NULL);
        else if (rc == GW_SERVERS_E_AUTHORIZATION)
            respond_authorization(ctx, req, pc->tool, NULL);
        else if (rc == GW_SERVERS_E_RATE_LIMITED)
            respond_rate_limited(ctx, req);
        else
            start_call_error(req, rc);
        if (why == NULL && rc != GW_SERVERS_E_NO_TOOL)
            gw_metrics_call(ctx->metrics, "rest", NULL, pc->tool, gw_dispatch_error(rc).label, 0);
        gw_span_str(pc->span, "error.type",
                    why != NULL ? "bad_request" : gw_dispatch_error(rc).label);
        gw_span_error(pc->span, why);
        gw_span_end(pc->span);
        free(pc->tool);
        free(pc);
        return;
    }
    gw_http_on_abort(req, on_call_abort, pc);
}
