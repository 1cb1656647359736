/* A call's part of its trace (gw/trace.h): the context it was made in,
 * and a span for each wait before it is sent (its lease, the queue). */
#include "gw/dispatch_internal.h"

void gw_call_trace_begin(struct gw_call *c)
{
    const struct gw_trace_ctx *ctx = gw_trace_current();

    if (ctx != NULL)
        gw_trace_save(&c->trace, ctx);
}

void gw_call_trace_free(struct gw_call *c)
{
    gw_call_wait_end(c, NULL);
    gw_trace_saved_free(&c->trace);
}

const struct gw_trace_ctx *gw_call_wait_begin(struct gw_call *c, const char *name)
{
    const struct gw_trace_ctx *parent = gw_trace_saved_ctx(&c->trace);

    if (parent == NULL)
        return gw_trace_enter(gw_trace_current());
    gw_call_wait_end(c, NULL);
    c->wait = gw_span_child(name, GW_SPAN_INTERNAL, parent);
    gw_span_str(c->wait, "mcpgw.server", c->server);
    if (c->dialog[0] != '\0')
        gw_span_str(c->wait, "mcpgw.dialog", c->dialog);
    return gw_trace_enter(gw_trace_pick(c->wait, parent));
}

void gw_call_wait_end(struct gw_call *c, const char *error)
{
    if (c->wait == NULL)
        return;
    if (error != NULL) {
        gw_span_str(c->wait, "error.type", error);
        gw_span_error(c->wait, error);
    }
    gw_span_end(c->wait);
    c->wait = NULL;
}
