/* Glue between one transport and its MCP client, plus the in-flight count
 * that draining needs. Close order: the transport ends first (its on_closed
 * is the last event it gives), then the client is closed, then the owner
 * hears on_closed and the instance is freed. */
#include "gw/instance.h"

#include <stdlib.h>
#include <string.h>

#include "gw/heap.h"
#include "gw/log.h"
#include "gw/upstream_http.h"
#include "gw/upstream_stdio.h"
#include "gw/upstream_ws.h"
#include "gw/util.h"

struct gw_instance {
    uv_loop_t *loop;
    /* A reference, dropped when the instance is freed: a reload may move
     * the server to a newer snapshot while this instance still starts or
     * drains on the one it was spawned from. cfg points into it. */
    struct gw_config *snap;
    const struct gw_server_config *cfg;
    struct gw_instance_cbs cbs;
    struct gw_upstream_stdio *stdio; /* one of these three */
    struct gw_upstream_http *http;
    struct gw_upstream_ws *ws;
    struct gw_transport *transport;
    struct gw_mcp_client *client;
    enum gw_instance_state state;
    uint64_t seq;
    int pid;
    unsigned in_flight;
    uint64_t calls;
    time_t since;
    json_t *last_stderr; /* kept from the transport when it closes */
    bool failed_reported;
    uv_timer_t drain; /* bounds a drain; closed last, it frees the instance */
};

/* A call in flight: wraps the caller's callback to keep the count. */
struct call {
    struct gw_instance *inst;
    gw_mcp_reply_cb cb;
    void *data;
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

/* A server request while draining still belongs to a call in flight. */
static int client_request(void *data, const char *method, json_t *id, json_t *params)
{
    struct gw_instance *inst = data;

    if (inst->cbs.on_request == NULL ||
        (inst->state != GW_INSTANCE_READY && inst->state != GW_INSTANCE_DRAINING))
        return -1;
    return inst->cbs.on_request(inst, method, id, params, inst->cbs.data);
}

static void transport_message(void *data, const char *msg, size_t len)
{
    struct gw_instance *inst = data;

    gw_mcp_client_receive(inst->client, msg, len);
}

static void transport_down(void *data, int code, const char *why)
{
    struct gw_instance *inst = data;
    (void)code;

    if (inst->stdio != NULL)
        inst->last_stderr = gw_upstream_stdio_stderr_lines(inst->stdio);
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
    json_decref(inst->last_stderr);
    gw_config_unref(inst->snap);
    free(inst);
    /* The instance's memory lies among that of the instances still running:
     * only a trim returns it (heap.h). */
    gw_heap_trim_soon();
}

static void transport_closed(void *data)
{
    struct gw_instance *inst = data;

    inst->stdio = NULL;
    inst->http = NULL;
    inst->ws = NULL;
    inst->transport = NULL;
    gw_mcp_client_close(inst->client);
    uv_close((uv_handle_t *)&inst->drain, on_drain_closed);
}

static int make_client(struct gw_instance *inst, const struct gw_gateway_config *gw)
{
    struct gw_redact *redact = gw_redact_new();

    gw_redact_add_server(redact, inst->cfg);
    gw_redact_add(redact, gw->auth_token);
    struct gw_mcp_client_opts o = {
        .send = client_send,
        .on_ready = client_ready,
        .on_failed = client_failed,
        .on_tools_changed = client_tools_changed,
        .on_notification = client_notification,
        .on_request = client_request,
        .data = inst,
        .server_id = inst->cfg->id,
        .config = inst->cfg->init_config,
        .init_timeout_ms =
            inst->cfg->request_timeout_ms ? inst->cfg->request_timeout_ms : gw->request_timeout_ms,
        .redact = redact,
    };
    return gw_mcp_client_new(inst->loop, &o, &inst->client);
}

static int start_transport(struct gw_instance *inst, struct gw_curl_uv *multi,
                           const struct gw_gateway_config *gw, const struct gw_transport_cbs *tcbs,
                           char *buf, size_t cap)
{
    int rc;

    if (inst->cfg->transport == GW_TRANSPORT_STDIO) {
        struct gw_upstream_stdio_options so;
        gw_upstream_stdio_options_init(&so);
        so.inherit_env = gw->inherit_env;
        so.ninherit_env = gw->ninherit_env;
        so.secrets = (const char *const *)&gw->auth_token;
        so.nsecrets = gw->auth_token != NULL;
        rc = gw_upstream_stdio_start(inst->loop, inst->cfg, &so, tcbs, &inst->stdio, buf, cap);
        if (rc == 0) {
            inst->transport = gw_upstream_stdio_transport(inst->stdio);
            inst->pid = gw_upstream_stdio_pid(inst->stdio);
        }
        return rc;
    }
    if (inst->cfg->transport == GW_TRANSPORT_WEBSOCKET) {
        rc = gw_upstream_ws_start(inst->loop, inst->cfg, tcbs, &inst->ws, buf, cap);
        if (rc == 0)
            inst->transport = gw_upstream_ws_transport(inst->ws);
        return rc;
    }
    if (multi == NULL) {
        snprintf(buf, cap, "transport '%s' needs the HTTP client, which is not available",
                 gw_transport_name(inst->cfg->transport));
        return UV_ENOTSUP;
    }
    rc = gw_upstream_http_start(inst->loop, multi, inst->cfg, NULL, tcbs, &inst->http, buf, cap);
    if (rc == 0)
        inst->transport = gw_upstream_http_transport(inst->http);
    return rc;
}

int gw_instance_start(uv_loop_t *loop, struct gw_curl_uv *multi, struct gw_config *snap,
                      const struct gw_server_config *cfg, const struct gw_instance_cbs *cbs,
                      uint64_t seq, struct gw_instance **out, char **why)
{
    const struct gw_gateway_config *gw = &snap->gateway;
    struct gw_instance *inst = gw_xcalloc(1, sizeof *inst);
    struct gw_transport_cbs tcbs = {transport_message, transport_down, transport_not_run,
                                    transport_closed, inst};
    char buf[256] = "";
    int rc;

    inst->loop = loop;
    inst->cfg = cfg;
    inst->cbs = *cbs;
    inst->seq = seq;
    inst->since = time(NULL);
    if (make_client(inst, gw) != 0) {
        *why = gw_xstrdup("cannot create the MCP client");
        free(inst);
        return UV_EINVAL;
    }
    rc = start_transport(inst, multi, gw, &tcbs, buf, sizeof buf);
    if (rc != 0) {
        *why = gw_xstrdup(buf[0] ? buf : uv_strerror(rc));
        gw_mcp_client_close(inst->client);
        free(inst);
        return rc;
    }
    uv_timer_init(loop, &inst->drain);
    inst->drain.data = inst;
    inst->snap = gw_config_ref(snap);
    gw_mcp_client_start(inst->client);
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
    if (inst->in_flight == 0)
        stop_transport(inst);
    else if (grace_ms > 0)
        uv_timer_start(&inst->drain, on_drain_deadline, grace_ms, 0);
}

void gw_instance_kill(struct gw_instance *inst)
{
    inst->state = GW_INSTANCE_STOPPING;
    if (inst->stdio != NULL)
        gw_upstream_stdio_kill(inst->stdio);
    else if (inst->http != NULL)
        gw_upstream_http_kill(inst->http);
    else if (inst->ws != NULL)
        gw_upstream_ws_kill(inst->ws);
}

static void call_done(void *data, const struct gw_mcp_reply *reply)
{
    struct call *c = data;
    struct gw_instance *inst = c->inst;

    inst->in_flight--;
    c->cb(c->data, reply);
    free(c);
    if (inst->state == GW_INSTANCE_DRAINING && inst->in_flight == 0)
        stop_transport(inst);
}

/* Counts a request in flight; `send` makes it. */
static int counted(struct gw_instance *inst, gw_mcp_reply_cb cb, void *data, struct call **out)
{
    if (inst->state != GW_INSTANCE_READY)
        return GW_MCP_E_NOT_READY;
    *out = gw_xmalloc(sizeof **out);
    **out = (struct call){inst, cb, data};
    inst->in_flight++;
    return 0;
}

static int uncount(struct gw_instance *inst, struct call *c, int rc)
{
    if (rc != 0) {
        inst->in_flight--;
        free(c);
    }
    return rc;
}

int gw_instance_call(struct gw_instance *inst, const char *name, json_t *arguments,
                     json_t *progress_token, uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                     gw_mcp_handle *handle)
{
    struct call *c;
    int rc = counted(inst, cb, data, &c);

    if (rc != 0)
        return rc;
    rc = gw_mcp_client_call_tool(inst->client, name, arguments, progress_token, timeout_ms,
                                 call_done, c, handle);
    if (rc == 0)
        inst->calls++;
    return uncount(inst, c, rc);
}

int gw_instance_request(struct gw_instance *inst, const char *method, json_t *params,
                        uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle *handle)
{
    struct call *c;
    int rc = counted(inst, cb, data, &c);

    if (rc != 0)
        return rc;
    rc = gw_mcp_client_request(inst->client, method, params, timeout_ms, call_done, c, handle);
    return uncount(inst, c, rc);
}

int gw_instance_respond(struct gw_instance *inst, json_t *id, json_t *result, json_t *error)
{
    return gw_mcp_client_respond(inst->client, id, result, error);
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
    return inst->in_flight;
}

uint64_t gw_instance_calls(const struct gw_instance *inst)
{
    return inst->calls;
}

const char *gw_instance_session(const struct gw_instance *inst)
{
    return inst->http != NULL ? gw_upstream_http_session_id(inst->http) : NULL;
}

json_t *gw_instance_stderr_tail(const struct gw_instance *inst)
{
    if (inst->stdio != NULL && inst->last_stderr == NULL)
        return gw_upstream_stdio_stderr_lines(inst->stdio);
    return inst->last_stderr ? json_incref(inst->last_stderr) : json_array();
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
    o = json_pack("{s:I, s:s, s:i, s:s, s:i, s:I, s:s?, s:O?, s:o, s:{s:I,s:I,s:I,s:I,s:I}}", "id",
                  (json_int_t)inst->seq, "state", state_names[inst->state], "pid", inst->pid,
                  "since", since, "inFlight", (int)inst->in_flight, "calls",
                  (json_int_t)inst->calls, "protocolVersion", version, "serverInfo", info,
                  "stderrTail", gw_instance_stderr_tail(inst), "counters", "nonJson",
                  (json_int_t)st.non_json, "badShape", (json_int_t)st.bad_shape, "unknownIds",
                  (json_int_t)st.unknown_ids, "late", (json_int_t)st.late, "notifications",
                  (json_int_t)st.notifications);
    if (inst->http != NULL) {
        const char *session = gw_upstream_http_session_id(inst->http);
        const char *err = gw_upstream_http_last_error(inst->http);
        json_object_del(o, "pid");
        json_object_set_new(o, "session", session ? json_string(session) : json_null());
        json_object_set_new(o, "url", json_string(gw_upstream_http_url(inst->http)));
        if (err != NULL)
            json_object_set_new(o, "lastError", json_string(err));
    }
    if (inst->ws != NULL) {
        const char *err = gw_upstream_ws_last_error(inst->ws);
        json_object_del(o, "pid");
        json_object_set_new(o, "url", json_string(gw_upstream_ws_url(inst->ws)));
        if (err != NULL)
            json_object_set_new(o, "lastError", json_string(err));
    }
    return o;
}
