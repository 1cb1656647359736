/* Glue between one transport and its MCP client, plus the draining that
 * waits for the client's calls in flight. Close order: the transport ends first (its on_closed
 * is the last event it gives), then the client is closed, then the owner
 * hears on_closed and the instance is freed. */
#include "gw/instance.h"

#include <stdlib.h>
#include <string.h>

#include "gw/heap.h"
#include "gw/log.h"
#include "gw/oauth.h"
#include "gw/trace.h"
#include "gw/upstream.h"
#include "gw/util.h"

struct gw_instance {
    uv_loop_t *loop;
    /* A reference, dropped when the instance is freed: a reload may move
     * the server to a newer snapshot while this instance still starts or
     * drains on the one it was spawned from. cfg points into it. */
    struct gw_config *snap;
    const struct gw_server_config *cfg;
    struct gw_instance_cbs cbs;
    struct gw_oauth *oauth;         /* the server's, or NULL (it outlives us) */
    struct gw_transport *transport; /* NULL once closed */
    struct gw_mcp_client *client;
    enum gw_instance_state state;
    uint64_t seq;
    int pid; /* kept for logs and /v1/dialogs after the process is gone */
    time_t since;
    json_t *last_stderr; /* kept from the transport when it closes */
    bool failed_reported;
    bool respawn;             /* the probe's process died: a new one, spoken to 2025-era */
    struct gw_curl_uv *multi; /* the daemon's, for that new transport */
    uv_timer_t drain;         /* bounds a drain; closed last, it frees the instance */
    struct gw_span *start;    /* traced: from the start to the handshake's end */
};

static const char *const state_names[] = {"starting", "ready", "failed", "draining", "stopping"};

const char *gw_instance_state_name(enum gw_instance_state s)
{
    return state_names[s];
}

static void report_failed(struct gw_instance *inst, const char *why)
{
    if (inst->failed_reported)
        return;
    inst->failed_reported = true;
    gw_span_str(inst->start, "error.type", "start_failed");
    gw_span_error(inst->start, why);
    gw_span_end(inst->start);
    inst->start = NULL;
    if (inst->state == GW_INSTANCE_STARTING || inst->state == GW_INSTANCE_READY)
        inst->state = GW_INSTANCE_FAILED;
    if (inst->cbs.on_failed != NULL)
        inst->cbs.on_failed(inst, why, inst->cbs.data);
}

static void stop_transport(struct gw_instance *inst)
{
    if (inst->state == GW_INSTANCE_STOPPING)
        return;
    inst->state = GW_INSTANCE_STOPPING;
    uv_timer_stop(&inst->drain);
    if (inst->transport != NULL) /* NULL: a respawn after the probe failed */
        gw_transport_stop(inst->transport);
}

static int client_send(void *data, const char *msg, size_t len)
{
    struct gw_instance *inst = data;

    return gw_transport_send(inst->transport, msg, len);
}

static void client_ready(void *data, const char *version, json_t *info, json_t *caps)
{
    struct gw_instance *inst = data;
    json_t *name = json_object_get(info, "name");
    (void)caps;

    if (inst->state != GW_INSTANCE_STARTING)
        return;
    inst->state = GW_INSTANCE_READY;
    gw_span_end(inst->start);
    inst->start = NULL;
    gw_log(GW_LOG_INFO, "instance ready", "server", inst->cfg->id, "protocol", version, "upstream",
           json_is_string(name) ? json_string_value(name) : NULL, NULL);
    inst->cbs.on_ready(inst, inst->cbs.data);
}

static void client_failed(void *data, int code, const char *why)
{
    (void)code;
    report_failed(data, why);
}

static void client_tools_changed(void *data)
{
    struct gw_instance *inst = data;

    if (inst->cbs.on_tools_changed != NULL && inst->state == GW_INSTANCE_READY)
        inst->cbs.on_tools_changed(inst, inst->cbs.data);
}

static void client_notification(void *data, const char *method, json_t *msg)
{
    struct gw_instance *inst = data;

    if (inst->cbs.on_notification != NULL && inst->state == GW_INSTANCE_READY)
        inst->cbs.on_notification(inst, method, json_object_get(msg, "params"), inst->cbs.data);
}

/* Draining ends with the last call. */
static void client_idle(void *data)
{
    struct gw_instance *inst = data;

    if (inst->state == GW_INSTANCE_DRAINING)
        stop_transport(inst);
}

/* A server request while draining still belongs to a call in flight. */
static int client_request(void *data, const char *method, json_t *id, json_t *params,
                          gw_mcp_handle origin)
{
    struct gw_instance *inst = data;

    if (inst->cbs.on_request == NULL ||
        (inst->state != GW_INSTANCE_READY && inst->state != GW_INSTANCE_DRAINING))
        return -1;
    return inst->cbs.on_request(inst, method, id, params, origin, inst->cbs.data);
}

static void transport_message(void *data, const char *msg, size_t len)
{
    struct gw_instance *inst = data;

    gw_mcp_client_receive(inst->client, msg, len);
}

static int make_client(struct gw_instance *inst, const struct gw_gateway_config *gw,
                       enum gw_mcp_era era);

/* Servers on the Rust SDK exit on any request before initialize: a probe
 * that kills its process means a 2025-era server. The client that probed
 * goes; a new one waits for the new transport (transport_closed). */
static bool respawn_after_probe(struct gw_instance *inst)
{
    if (inst->respawn || inst->state != GW_INSTANCE_STARTING ||
        !gw_mcp_client_probing(inst->client) || inst->cfg->transport != GW_TRANSPORT_STDIO)
        return false;
    gw_log(GW_LOG_INFO, "upstream exited on server/discover; starting it again for initialize",
           "server", inst->cfg->id, NULL);
    gw_mcp_client_close(inst->client);
    inst->client = NULL;
    if (make_client(inst, &inst->snap->gateway, GW_MCP_ERA_LEGACY) != 0)
        return false;
    inst->respawn = true;
    return true;
}

static void transport_down(void *data, int code, const char *why)
{
    struct gw_instance *inst = data;
    (void)code;

    if (respawn_after_probe(inst))
        return;
    if (inst->last_stderr == NULL)
        inst->last_stderr = gw_transport_stderr_tail(inst->transport);
    gw_mcp_client_transport_down(inst->client, why);
    report_failed(inst, why);
}

static void transport_not_run(void *data, json_t *id, const char *why)
{
    struct gw_instance *inst = data;

    gw_mcp_client_not_run(inst->client, id, why);
}

static void on_drain_closed(uv_handle_t *h)
{
    struct gw_instance *inst = h->data;

    inst->cbs.on_closed(inst, inst->cbs.data);
    gw_span_end(inst->start);
    json_decref(inst->last_stderr);
    gw_config_unref(inst->snap);
    free(inst);
    /* The instance's memory lies among that of the instances still running:
     * only a trim returns it (heap.h). */
    gw_heap_trim_soon();
}

static void transport_closed(void *data);

static void transport_netcheck(void *data, const char *entry, bool allowed, const char *why)
{
    struct gw_instance *inst = data;

    if (inst->cbs.on_netcheck != NULL)
        inst->cbs.on_netcheck(inst, entry, allowed, why, inst->cbs.data);
}

/* Starts cfg's transport for `inst`: 0, or a code with a sentence in `buf`. */
static int start_transport(struct gw_instance *inst, const struct gw_gateway_config *gw, char *buf,
                           size_t cap)
{
    struct gw_transport_cbs tcbs = {transport_message, transport_down, transport_not_run,
                                    transport_closed,  inst,           transport_netcheck};
    int rc = gw_upstream_start(inst->loop, inst->multi, gw, inst->cfg, inst->oauth, &tcbs,
                               &inst->transport, buf, cap);

    if (rc == 0)
        inst->pid = gw_transport_pid(inst->transport);
    return rc;
}

static void transport_closed(void *data)
{
    struct gw_instance *inst = data;
    char buf[256] = "";

    inst->transport = NULL;
    if (inst->respawn && inst->state == GW_INSTANCE_STARTING) {
        inst->respawn = false; /* once: a second death is the server's failure */
        if (start_transport(inst, &inst->snap->gateway, buf, sizeof buf) == 0) {
            gw_mcp_client_start(inst->client);
            return;
        }
        report_failed(inst, buf[0] ? buf : "the server could not be started again");
    }
    gw_mcp_client_close(inst->client);
    uv_close((uv_handle_t *)&inst->drain, on_drain_closed);
}

/* For the CLIENT spans' mcp.session.id (a digest of it). */
static const char *trace_session(void *data)
{
    return gw_instance_session(data);
}

static int make_client(struct gw_instance *inst, const struct gw_gateway_config *gw,
                       enum gw_mcp_era era)
{
    struct gw_redact *redact = gw_redact_new();

    gw_redact_add_server(redact, inst->cfg);
    gw_redact_add(redact, gw->auth_token);
    if (inst->oauth) /* the tokens of this instance's start */
        gw_oauth_redact_add(inst->oauth, redact);
    struct gw_mcp_client_opts o = {
        .send = client_send,
        .on_ready = client_ready,
        .on_failed = client_failed,
        .on_tools_changed = client_tools_changed,
        .on_notification = client_notification,
        .on_request = client_request,
        .on_idle = client_idle,
        .data = inst,
        .server_id = inst->cfg->id,
        .config = inst->cfg->init_config,
        .init_timeout_ms =
            inst->cfg->request_timeout_ms ? inst->cfg->request_timeout_ms : gw->request_timeout_ms,
        .redact = redact,
        .oauth = inst->oauth,
        .era = era,
    };
    if (gw_mcp_client_new(inst->loop, &o, &inst->client) != 0)
        return UV_EINVAL;
    gw_mcp_client_trace_peer(inst->client,
                             inst->cfg->transport == GW_TRANSPORT_STDIO ? "pipe" : "tcp",
                             inst->cfg->transport == GW_TRANSPORT_STDIO ? NULL : inst->cfg->url,
                             inst->seq, trace_session);
    return 0;
}

int gw_instance_start(uv_loop_t *loop, struct gw_curl_uv *multi, struct gw_config *snap,
                      const struct gw_server_config *cfg, struct gw_oauth *oauth,
                      enum gw_mcp_era era, const struct gw_instance_cbs *cbs, uint64_t seq,
                      struct gw_instance **out, char **why)
{
    const struct gw_gateway_config *gw = &snap->gateway;
    struct gw_instance *inst = gw_xcalloc(1, sizeof *inst);
    char buf[256] = "";
    int rc;

    inst->loop = loop;
    inst->multi = multi;
    inst->oauth = oauth;
    inst->cfg = cfg;
    inst->cbs = *cbs;
    inst->seq = seq;
    inst->since = time(NULL);
    if (make_client(inst, gw, era) != 0) {
        *why = gw_xstrdup("cannot create the MCP client");
        free(inst);
        return UV_EINVAL;
    }
    rc = start_transport(inst, gw, buf, sizeof buf);
    if (rc != 0) {
        *why = gw_xstrdup(buf[0] ? buf : uv_strerror(rc));
        gw_mcp_client_close(inst->client);
        free(inst);
        return rc;
    }
    uv_timer_init(loop, &inst->drain);
    inst->drain.data = inst;
    inst->snap = gw_config_ref(snap);
    /* In the trace of the call that needed it, its handshake a child. */
    inst->start = gw_span_child("mcpgw.instance.start", GW_SPAN_INTERNAL, gw_trace_current());
    gw_span_str(inst->start, "mcpgw.server", cfg->id);
    gw_span_int(inst->start, "mcpgw.instance", (int64_t)seq);
    const struct gw_trace_ctx *prev = gw_trace_enter(gw_span_ctx(inst->start));
    gw_mcp_client_start(inst->client);
    gw_trace_leave(prev);
    *out = inst;
    return 0;
}

static void on_drain_deadline(uv_timer_t *t)
{
    struct gw_instance *inst = t->data;

    gw_log(GW_LOG_WARN, "drain deadline passed; stopping with calls in flight", "server",
           inst->cfg->id, NULL);
    stop_transport(inst);
}

void gw_instance_stop(struct gw_instance *inst, uint64_t grace_ms)
{
    if (inst->state == GW_INSTANCE_STOPPING || inst->state == GW_INSTANCE_DRAINING)
        return;
    inst->state = GW_INSTANCE_DRAINING;
    if (gw_mcp_client_calls_in_flight(inst->client) == 0)
        stop_transport(inst);
    else if (grace_ms > 0)
        uv_timer_start(&inst->drain, on_drain_deadline, grace_ms, 0);
}

void gw_instance_kill(struct gw_instance *inst)
{
    inst->state = GW_INSTANCE_STOPPING;
    if (inst->transport != NULL)
        gw_transport_kill(inst->transport);
}

int gw_instance_call(struct gw_instance *inst, const char *name, json_t *arguments,
                     json_t *progress_token, uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                     gw_mcp_handle *handle, unsigned caps)
{
    if (inst->state != GW_INSTANCE_READY)
        return GW_MCP_E_NOT_READY;
    return gw_mcp_client_call_tool(inst->client, name, arguments, progress_token, timeout_ms, cb,
                                   data, handle, caps);
}

int gw_instance_request(struct gw_instance *inst, const char *method, json_t *params,
                        uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle *handle,
                        unsigned caps)
{
    if (inst->state != GW_INSTANCE_READY)
        return GW_MCP_E_NOT_READY;
    return gw_mcp_client_request(inst->client, method, params, timeout_ms, cb, data, handle, caps);
}

int gw_instance_respond(struct gw_instance *inst, json_t *id, gw_mcp_handle origin, json_t *result,
                        json_t *error)
{
    return gw_mcp_client_respond(inst->client, id, origin, result, error);
}

json_t *gw_instance_capabilities(const struct gw_instance *inst)
{
    return gw_mcp_client_capabilities(inst->client);
}

int gw_instance_list(struct gw_instance *inst, const char *method, const char *key,
                     uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data)
{
    return gw_mcp_client_list_all(inst->client, method, key, timeout_ms, cb, data, NULL);
}

int gw_instance_cancel(struct gw_instance *inst, gw_mcp_handle handle, const char *reason)
{
    return gw_mcp_client_cancel(inst->client, handle, reason);
}

int gw_instance_list_tools(struct gw_instance *inst, uint64_t timeout_ms, gw_mcp_reply_cb cb,
                           void *data)
{
    return gw_mcp_client_list_tools(inst->client, timeout_ms, cb, data, NULL);
}

enum gw_instance_state gw_instance_state(const struct gw_instance *inst)
{
    return inst->state;
}

enum gw_mcp_era gw_instance_era(const struct gw_instance *inst)
{
    return gw_mcp_client_era(inst->client);
}

uint64_t gw_instance_seq(const struct gw_instance *inst)
{
    return inst->seq;
}

int gw_instance_pid(const struct gw_instance *inst)
{
    return inst->pid;
}

unsigned gw_instance_in_flight(const struct gw_instance *inst)
{
    return gw_mcp_client_calls_in_flight(inst->client);
}

const char *gw_instance_session(const struct gw_instance *inst)
{
    return inst->transport != NULL ? gw_transport_session_id(inst->transport) : NULL;
}

json_t *gw_instance_stderr_tail(const struct gw_instance *inst)
{
    json_t *tail = NULL;

    if (inst->last_stderr != NULL)
        return json_incref(inst->last_stderr);
    if (inst->transport != NULL)
        tail = gw_transport_stderr_tail(inst->transport);
    return tail != NULL ? tail : json_array();
}

json_t *gw_instance_to_json(const struct gw_instance *inst)
{
    struct gw_mcp_client_stats st;
    const char *version = gw_mcp_client_version(inst->client);
    json_t *info = gw_mcp_client_server_info(inst->client);
    char since[32];
    json_t *o;

    gw_format_time(inst->since, since, sizeof since);
    gw_mcp_client_stats(inst->client, &st);
    o = json_pack("{s:I, s:s, s:s, s:i, s:I, s:s?, s:O?, s:o, s:{s:I,s:I,s:I,s:I,s:I}}", "id",
                  (json_int_t)inst->seq, "state", state_names[inst->state], "since", since,
                  "inFlight", (int)st.calls_in_flight, "calls", (json_int_t)st.tool_calls,
                  "protocolVersion", version, "serverInfo", info, "stderrTail",
                  gw_instance_stderr_tail(inst), "counters", "nonJson", (json_int_t)st.non_json,
                  "badShape", (json_int_t)st.bad_shape, "unknownIds", (json_int_t)st.unknown_ids,
                  "late", (json_int_t)st.late, "notifications", (json_int_t)st.notifications);
    if (inst->transport != NULL)
        gw_transport_describe(inst->transport, o);
    else if (inst->pid != 0)
        json_object_set_new(o, "pid", json_integer(inst->pid));
    return o;
}
