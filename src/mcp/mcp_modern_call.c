/* tools/call, prompts/get and resources/read of a 2026-07-28 request,
 * through the input rounds: when the server asks its caller for input (a
 * 2025-era server's sampling/createMessage, elicitation/create or
 * roots/list, or a 2026-07-28 server's input_required, which mcp_client
 * turns into those), the request is answered with an input_required
 * result (inputRequests and a sealed requestState) while the upstream
 * request stays open; the client's retry (a new id, the same params,
 * inputResponses and the requestState) continues that same request to its
 * result or the next round. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

/* A plain result that is the exchange's one answer and goes out at once
 * is written as text (gw_mcp__modern_call_answer); false where the tree
 * path must answer (errors, missing capabilities, a stream begun for
 * progress, an SSE answer, a shape the writer leaves to it). */
static bool answered_as_text(struct gw_mcp_call *c, const struct gw_call_outcome *o)
{
    struct gw_mcp_exchange *x = c->x;
    size_t len;
    char *text;

    if (c->routed || o->code != 0 || o->missing_caps != 0 || x->req == NULL || x->streaming ||
        x->sse || x->batch || x->waiting != 1 || json_array_size(x->replies) != 0)
        return false;
    text = gw_mcp__modern_call_answer(c->id, o->result, o->lease, &len);
    if (text == NULL)
        return false;
    x->answer = text;
    x->answer_len = len;
    gw_mcp__call_end(c, o->server, o->dialog, gw_mcp__call_status(o), NULL);
    return true;
}

static void on_answer(void *data, const struct gw_rounds_answer *a)
{
    struct gw_mcp_call *c = data;
    json_t *result;

    c->round = NULL;
    if (a->outcome != NULL) {
        if (answered_as_text(c, a->outcome))
            return;
        gw_mcp__call_end(c, a->outcome->server, a->outcome->dialog, gw_mcp__call_status(a->outcome),
                         gw_mcp__call_reply(c, a->outcome));
        return;
    }
    result = json_pack("{s:s, s:O, s:s}", "resultType", "input_required", "inputRequests",
                       a->input_requests, "requestState", a->request_state);
    gw_mcp__call_end(c, NULL, c->s != NULL && c->s->dialog[0] ? c->s->dialog : NULL,
                     "input_required", gw_mcp__result(c->id, result));
}

static const struct gw_rounds_receiver receiver = {
    .on_answer = on_answer,
    .on_progress = gw_mcp__call_progress,
    .on_log = gw_mcp__call_log,
};

/* The retry's fields; 0, or an error answer (new reference). */
static json_t *retry_of(json_t *id, json_t *params, const char **state, json_t **responses)
{
    static const struct gw_mcp_member keys[] = {GW_MCP_MEMBER("requestState"),
                                                GW_MCP_MEMBER("inputResponses")};
    json_t *st, *in, **out[] = {&st, &in};

    gw_mcp__members(params, keys, out, GW_ARRAY_SIZE(keys)); /* absent, mostly: no hashing */

    if (st != NULL && !json_is_string(st))
        return gw_mcp__error(id, RPC_INVALID_PARAMS,
                             "params.requestState must be the string an input_required result "
                             "gave");
    if (in != NULL && !json_is_object(in))
        return gw_mcp__error(id, RPC_INVALID_PARAMS,
                             "params.inputResponses must be an object (key: the result of that "
                             "input request)");
    *state = json_string_value(st);
    *responses = in;
    return NULL;
}

/* `hop` (the routed request's params as they go upstream) is NULL for a
 * tools/call. */
static int start(struct gw_mcp_session *s, struct gw_mcp_call *c, json_t *args, json_t *token,
                 json_t *hop, const char *state, json_t *responses, const char **why)
{
    struct gw_rounds_receiver rcv = receiver;
    const char *dialog = s->dialog[0] ? s->dialog : NULL;
    struct gw_round_bind bind = {dialog, "tools/call", c->tool, args, s->client};
    struct gw_call_request r = {.tool = c->tool,
                                .front = "mcp-2026-07-28",
                                .client = s->client,
                                .dialog = dialog,
                                .arguments = args,
                                .progress_token = token,
                                .client_caps = s->caps,
                                .log_level = s->log_level,
                                .input_responses = responses};
    struct gw_route_request q = {.method = c->tool,
                                 .client = s->client,
                                 .params = hop,
                                 .dialog = dialog,
                                 .client_caps = s->caps,
                                 .log_level = s->log_level};

    rcv.data = c;
    if (hop != NULL && gw_rounds_route_bind(&q, &bind) != 0)
        return GW_SERVERS_E_NO_TOOL;
    if (state != NULL)
        return gw_rounds_resume(s->ms->rounds, state, responses, &bind, &rcv, &c->round, why);
    if (hop != NULL)
        return gw_rounds_route(s->ms->rounds, s->ms->servers, &q, &rcv, &c->round);
    return gw_rounds_call(s->ms->rounds, s->ms->servers, &r, &rcv, &c->round);
}

json_t *gw_mcp__modern_call(struct gw_mcp_session *s, struct gw_mcp_exchange *x, json_t *id,
                            const char *name, json_t *args, json_t *token, json_t *params)
{
    const char *state = NULL, *why = NULL;
    json_t *responses = NULL, *err;
    struct gw_mcp_call *c;
    int rc;

    if ((err = retry_of(id, params, &state, &responses)) != NULL)
        return err;
    if (s->ms->rounds == NULL)
        return gw_mcp__error(id, RPC_INTERNAL_ERROR, "the gateway is stopping");
    c = gw_mcp__call_new(s, x, id, name);
    rc = start(s, c, args, token, NULL, state, responses, &why);
    if (rc != 0) {
        gw_mcp__call_drop(c);
        if (why != NULL)
            return gw_mcp__error(id, RPC_INVALID_PARAMS, why);
        return gw_mcp__call_refused(s, id, name, rc);
    }
    gw_mcp__call_track(s, x, c);
    return NULL;
}

int gw_mcp__modern_route(struct gw_mcp_session *s, struct gw_mcp_call *c, json_t *params,
                         json_t *hop, json_t **err)
{
    const char *state = NULL, *why = NULL;
    json_t *responses = NULL;
    int rc;

    *err = retry_of(c->id, params, &state, &responses);
    if (*err != NULL)
        return -1;
    if (s->ms->rounds == NULL) {
        *err = gw_mcp__error(c->id, RPC_INTERNAL_ERROR, "the gateway is stopping");
        return -1;
    }
    rc = start(s, c, NULL, NULL, hop, state, responses, &why);
    if (rc != 0 && why != NULL) {
        *err = gw_mcp__error(c->id, RPC_INVALID_PARAMS, why);
        return -1;
    }
    return rc;
}
