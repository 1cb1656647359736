/* Calls: from a final tool name to an instance, through the lease and the
 * concurrency limits, and back to the caller exactly once.
 *
 * A call moves WAIT_INSTANCE (its lease's instance is starting) →
 * QUEUED (a limit is full) → SENT → DONE. Its timeout runs from its
 * arrival: each wait, and the send, get only what is left of it (so a call
 * queued behind a busy tool does not start its whole timeout again when it
 * gets a slot). Its embedded timer bounds each wait; the call is freed in
 * that timer's close callback, after the outcome was delivered. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gw/audit.h"
#include "gw/log.h"
#include "gw/oauth.h"
#include "gw/policy.h"
#include "gw/dispatch_internal.h"
#include "gw/servers.h"
#include "gw/util.h"

/* Calls waiting for a concurrency slot, in all; beyond, 429 at once. */
#define QUEUE_MAX 4096

/* ---- counters ---- */

static struct gw_tool_load **tool_link(struct gw_servers *s, const char *tool, uint64_t h)
{
    struct gw_tool_load **link = &s->tool_loads[h % GW_TOOL_LOAD_BUCKETS];

    while (*link != NULL && ((*link)->hash != h || strcmp((*link)->name, tool) != 0))
        link = &(*link)->next;
    return link;
}

static int tool_count(struct gw_servers *s, const char *tool)
{
    struct gw_tool_load *t = *tool_link(s, tool, gw_hash_str(tool));

    return t != NULL ? t->n : 0;
}

/* Only a tool with a max_instances limit is counted: the limit is fixed
 * for the call's life, so its +1 and -1 always pair. */
static void tool_add(struct gw_servers *s, const struct gw_call *c, int delta)
{
    uint64_t h;
    struct gw_tool_load **link, *t;

    if (c->max_instances <= 0)
        return;
    h = gw_hash_str(c->tool);
    link = tool_link(s, c->tool, h);
    if (*link == NULL) {
        size_t len = strlen(c->tool) + 1;
        t = gw_xcalloc(1, sizeof *t + len);
        t->hash = h;
        memcpy(t->name, c->tool, len);
        *link = t;
    }
    t = *link;
    t->n += delta;
    if (t->n <= 0) {
        *link = t->next;
        free(t);
    }
}

static bool fits(struct gw_servers *s, const struct gw_call *c)
{
    if (s->gw != NULL && s->in_flight >= (unsigned)s->gw->max_concurrent)
        return false;
    return c->max_instances <= 0 || tool_count(s, c->tool) < c->max_instances;
}

/* ---- lists ---- */

static void unlink_from(struct gw_call **head, struct gw_call *c)
{
    while (*head != NULL && *head != c)
        head = &(*head)->next;
    if (*head == c)
        *head = c->next;
    c->next = NULL;
}

static void on_wait_timeout(uv_timer_t *t);

/* What is left of the call's timeout; 0 once its deadline has passed. */
static uint64_t remaining_ms(const struct gw_call *c)
{
    uint64_t now = gw_now_ms();

    return now < c->deadline_ms ? c->deadline_ms - now : 0;
}

/* Takes a waiting call off its lease's or server's list. */
static void wait_remove(struct gw_call *c)
{
    if (c->waiting_on != NULL)
        unlink_from(c->waiting_on, c);
    c->waiting_on = NULL;
    gw_call_wait_end(c, NULL);
}

/* Hangs a call on a waiting list until an instance is ready or its
 * timeout passes. */
static void wait_on(struct gw_call *c, struct gw_call **list)
{
    c->state = CALL_WAIT_INSTANCE;
    c->next = *list;
    *list = c;
    c->waiting_on = list;
    uv_timer_start(&c->timer, on_wait_timeout, remaining_ms(c), 0);
}

static void queue_remove(struct gw_servers *s, struct gw_call *c)
{
    struct gw_call *prev = NULL;

    for (struct gw_call *q = s->queue_head; q != NULL; prev = q, q = q->next) {
        if (q != c)
            continue;
        if (prev != NULL)
            prev->next = c->next;
        else
            s->queue_head = c->next;
        if (s->queue_tail == c)
            s->queue_tail = prev;
        s->queued--;
        c->next = NULL;
        gw_call_wait_end(c, NULL);
        return;
    }
}

static void queue_push(struct gw_servers *s, struct gw_call *c)
{
    c->next = NULL;
    if (s->queue_tail != NULL)
        s->queue_tail->next = c;
    else
        s->queue_head = c;
    s->queue_tail = c;
    s->queued++;
}

/* ---- completion ---- */

static void call_free(uv_handle_t *h)
{
    struct gw_call *c = h->data;

    if (c->sub != NULL) /* refused before it was sent: no outcome came */
        gw_subs_call_done(c, GW_MCP_E_CANCELLED);
    gw_call_trace_free(c);
    if (c->admitted)
        gw_policy_done(c->s, c->client);
    gw_dispatch__audit_free(c);
    free(c->tool);
    free(c->original);
    free(c->deferred_message);
    json_decref(c->deferred_result);
    free(c->method);
    json_decref(c->params);
    json_decref(c->progress_token);
    json_decref(c->upstream_token);
    json_decref(c->arguments);
    json_decref(c->lease_info);
    free(c);
}

static void deliver(struct gw_call *c, int code, json_t *result, const char *message);

static void on_deferred(uv_timer_t *t)
{
    struct gw_call *c = t->data;

    json_t *result = c->deferred_result;

    c->deferred = false;
    c->deferred_result = NULL;
    deliver(c, c->deferred_code, result, c->deferred_message);
    json_decref(result);
}

/* An outcome reached while gw_dispatch_call is still on the stack is
 * delivered on the next loop turn: the caller is promised a callback that
 * fires later, never inside the call. */
static bool defer(struct gw_call *c, int code, const char *message)
{
    if (!c->s->entering)
        return false;
    c->deferred = true;
    c->deferred_code = code;
    c->deferred_message = gw_xstrdup(message ? message : "");
    uv_timer_start(&c->timer, on_deferred, 0, 0);
    return true;
}

/* A subscription the upstream made and the gateway could not record. */
static const char *unrecorded(int code)
{
    return code == GW_SERVERS_E_RELEASED
               ? "the instance was released or replaced before the subscription took hold"
               : "the gateway keeps no more subscribed URIs on this upstream instance";
}

static void deliver(struct gw_call *c, int code, json_t *result, const char *message)
{
    struct gw_call_outcome o;
    json_t *shown = NULL;
    int recorded;

    if (result == NULL && defer(c, code, message))
        return;
    if (c->sub != NULL && (recorded = gw_subs_call_done(c, code)) != code) {
        code = recorded;
        result = NULL;
        message = unrecorded(code);
    }
    if (c->ns_contents && json_is_object(result))
        result = shown = gw_extra_contents(c->server, result);
    else if (c->ns_links && json_is_object(result))
        result = shown = gw_extra_links(c->server, result);
    o = (struct gw_call_outcome){
        .code = code,
        .result = result,
        .error = c->rpc_error,
        .message = message,
        .lease = c->lease_info,
        .server = c->server,
        .tool = c->original,
        .dialog = c->dialog[0] ? c->dialog : NULL,
        .missing_caps = c->missing_caps,
    };
    c->state = CALL_DONE;
    gw_dispatch__audit_end(c, code, result);
    uv_timer_stop(&c->timer);
    gw_relay_done(c); /* its relayed requests end before its caller hears */
    c->cb(c->data, &o);
    json_decref(shown);
    uv_close((uv_handle_t *)&c->timer, call_free);
}

static void pump(struct gw_servers *s);

static void call_fail(struct gw_call *c, int code, const char *message)
{
    deliver(c, code, NULL, message);
}

static void touch_lease(struct gw_call *c)
{
    if (c->slot != NULL && c->slot->lease != NULL)
        c->slot->lease->last_used_ms = gw_now_ms();
}

static void on_retry(uv_timer_t *t);

/* design §9: the upstream no longer knew the instance's MCP session and
 * refused the call unrun, so it may go again, once. The instance goes down
 * right after this (its lease with it); on the next loop turn the call is
 * routed afresh: a new lease (lease.restarted), or the shared instance
 * once it is back. */
static void retry_later(struct gw_call *c)
{
    gw_log(GW_LOG_INFO, "upstream session lost before the call ran; sending it again", "server",
           c->server, "tool", c->original, "dialog", c->dialog[0] ? c->dialog : NULL, NULL);
    gw_relay_done(c); /* off the old slot's list */
    c->retried = true;
    c->slot = NULL;
    c->handle = 0;
    c->state = CALL_WAIT_INSTANCE;
    uv_timer_start(&c->timer, on_retry, 0, 0);
}

/* A call whose deadline passed before it could be sent: still queued
 * behind a limit (429, the limit is what kept it), or still waiting for its
 * instance (504). */
static void expire(struct gw_call *c)
{
    if (c->state == CALL_QUEUED)
        call_fail(c, GW_SERVERS_E_LIMIT,
                  "a concurrency limit (gateway.max_concurrent or the tool's "
                  "max_instances) stayed full for the call's whole timeout");
    else
        call_fail(c, GW_MCP_E_TIMEOUT, "the call's instance did not become ready in time");
}

/* A call that failed on a Bearer challenge (a 401 no refresh answered, a
 * 403 insufficient_scope) fails as one whose server needs authorization,
 * so that its caller gets the authorize link. A second lost session is
 * the instance dying, as far as the caller is concerned (502). */
static int reply_code(const struct gw_call *c, const struct gw_mcp_reply *reply)
{
    struct server *srv = reply->code != 0 ? gw_servers_find(c->s, c->server) : NULL;

    if (srv != NULL && srv->oauth != NULL && gw_oauth_needs_authorization(srv->oauth))
        return GW_SERVERS_E_AUTHORIZATION;
    return reply->code == GW_MCP_E_NOT_RUN ? GW_MCP_E_TRANSPORT : reply->code;
}

static void on_reply(void *data, const struct gw_mcp_reply *reply)
{
    struct gw_call *c = data;
    struct gw_servers *s = c->s;

    if (!c->parked) {
        s->in_flight--;
        tool_add(s, c, -1);
    }
    c->parked = false;
    touch_lease(c);
    if (reply->code == GW_MCP_E_NOT_RUN && !c->retried) {
        retry_later(c);
    } else {
        c->rpc_error = reply->error;
        c->reply_bytes = reply->bytes;
        deliver(c, reply_code(c, reply), reply->result, reply->message);
    }
    pump(s);
}

static void call_send(struct gw_call *c)
{
    struct gw_servers *s = c->s;
    uint64_t left = remaining_ms(c);
    unsigned caps;
    int rc;

    if (c->sub != NULL && !gw_subs_supported(c)) {
        char *why = gw_xasprintf("MCP server '%s' does not support resource subscriptions (it "
                                 "did not declare resources.subscribe)",
                                 c->server);
        call_fail(c, GW_SERVERS_E_UNSUPPORTED, why);
        free(why);
        return;
    }
    if (left == 0) { /* its timer is due but has not run yet */
        expire(c);
        return;
    }
    c->state = CALL_SENT;
    gw_dispatch__audit_sent(c);
    s->in_flight++;
    tool_add(s, c, 1);
    touch_lease(c);
    /* Listed before the send: an answer (or a server request) may come
     * back inside it. */
    gw_relay_sent(c);
    /* a 2026-07-28 server is told what this caller can answer */
    caps = (c->hooks != NULL ? c->client_caps : 0) | c->log_bits;
    const struct gw_trace_ctx *prev = gw_trace_enter(gw_trace_saved_ctx(&c->trace));
    if (c->method != NULL)
        rc = gw_instance_request(c->slot->inst, c->method, c->params, left, on_reply, c, &c->handle,
                                 caps);
    else
        rc = gw_instance_call(c->slot->inst, c->original, c->arguments, c->upstream_token, left,
                              on_reply, c, &c->handle, caps);
    gw_trace_leave(prev);
    if (rc != 0) {
        s->in_flight--;
        tool_add(s, c, -1);
        call_fail(c, rc, gw_mcp_strerror(rc));
    }
}

/* ---- waiting ---- */

static void on_wait_timeout(uv_timer_t *t)
{
    struct gw_call *c = t->data;

    gw_call_wait_end(c, "timeout");
    if (c->state == CALL_QUEUED)
        queue_remove(c->s, c);
    else
        wait_remove(c);
    expire(c);
}

/* Sends now, or queues when a limit is full. Returns 0, or
 * GW_SERVERS_E_LIMIT when the queue itself is full (nothing delivered). */
static int admit(struct gw_call *c)
{
    struct gw_servers *s = c->s;

    if (s->queue_head == NULL && fits(s, c)) {
        call_send(c);
        return 0;
    }
    if (s->queued >= QUEUE_MAX)
        return GW_SERVERS_E_LIMIT;
    c->state = CALL_QUEUED;
    gw_trace_leave(gw_call_wait_begin(c, "mcpgw.queue"));
    queue_push(s, c);
    uv_timer_start(&c->timer, on_wait_timeout, remaining_ms(c), 0);
    return 0;
}

/* Starts every queued call that fits now, oldest first; a call whose tool
 * is at its cap does not hold up calls of other tools. */
static void pump(struct gw_servers *s)
{
    struct gw_call *c = s->queue_head, *next;

    for (; c != NULL; c = next) {
        next = c->next;
        if (s->gw != NULL && s->in_flight >= (unsigned)s->gw->max_concurrent)
            return;
        if (c->max_instances > 0 && tool_count(s, c->tool) >= c->max_instances)
            continue;
        queue_remove(s, c);
        uv_timer_stop(&c->timer);
        call_send(c);
    }
}

/* Takes the first call off a waiting list. */
static struct gw_call *wait_pop(struct gw_call **list)
{
    struct gw_call *c = *list;

    *list = c->next;
    c->next = NULL;
    c->waiting_on = NULL;
    uv_timer_stop(&c->timer);
    gw_call_wait_end(c, NULL);
    return c;
}

static void on_lease_ready(struct lease *l)
{
    while (l->waiting != NULL) {
        struct gw_call *c = wait_pop(&l->waiting);
        if (admit(c) != 0)
            call_fail(c, GW_SERVERS_E_LIMIT, "too many calls are waiting");
    }
}

static void on_shared_ready(struct server *srv, struct slot *slot)
{
    while (srv->waiting != NULL) {
        struct gw_call *c = wait_pop(&srv->waiting);
        c->slot = slot;
        if (admit(c) != 0)
            call_fail(c, GW_SERVERS_E_LIMIT, "too many calls are waiting");
    }
}

static void abandon_shared(struct server *srv, int code, const char *why)
{
    while (srv->waiting != NULL)
        call_fail(wait_pop(&srv->waiting), code, why);
}

static void abandon(struct gw_servers *s, struct lease *l, struct slot *slot, int code,
                    const char *why)
{
    while (l != NULL && l->waiting != NULL)
        call_fail(wait_pop(&l->waiting), code, why);
    for (struct gw_call *c = s->queue_head, *next; slot != NULL && c != NULL; c = next) {
        next = c->next;
        if (c->slot == slot) {
            queue_remove(s, c);
            call_fail(c, code, why);
        }
    }
}

static const struct gw_slot_hooks slot_hooks = {
    .lease_ready = on_lease_ready,
    .shared_ready = on_shared_ready,
    .abandon = abandon,
    .abandon_shared = abandon_shared,
    .server_request = gw_relay_request,
    .slot_gone = gw_subs_slot_gone,
};

void gw_dispatch_attach(struct gw_servers *s)
{
    s->hooks = &slot_hooks;
    gw_relay_routes(s);
    gw_subs_routes(s);
}

/* ---- entry ---- */

static uint64_t call_timeout(const struct server *srv, const struct gw_cat_tool *t, uint64_t asked)
{
    uint64_t policy = t->has_policy && t->policy.has_timeout ? t->policy.timeout_ms : 0;

    return gw_dispatch_timeout(asked, policy, srv->cfg->request_timeout_ms,
                               srv->snap->gateway.request_timeout_ms);
}

/* The one constructor: every call has a server (its id; "" for the
 * gateway's own tool), a dialog or none, and a timeout. */
static struct gw_call *call_alloc(struct gw_servers *s, const char *server, const char *dialog,
                                  uint64_t timeout_ms)
{
    struct gw_call *c = gw_xcalloc(1, sizeof *c);

    c->s = s;
    uv_timer_init(s->loop, &c->timer);
    c->timer.data = c;
    gw_strlcpy(c->server, server, sizeof c->server);
    if (dialog != NULL)
        gw_strlcpy(c->dialog, dialog, sizeof c->dialog);
    c->timeout_ms = timeout_ms;
    c->deadline_ms = gw_now_ms() + timeout_ms;
    gw_call_trace_begin(c);
    return c;
}

static struct gw_call *call_new(struct gw_servers *s, struct server *srv,
                                const struct gw_cat_tool *t, const struct gw_call_request *r)
{
    struct gw_call *c = call_alloc(s, srv->cfg->id, r->dialog, call_timeout(srv, t, r->timeout_ms));

    c->tool = gw_xstrdup(t->name);
    c->original = gw_xstrdup(t->original_name);
    c->arguments = json_incref(r->arguments);
    c->max_instances = t->has_policy ? t->policy.max_instances : 0;
    c->ns_links = srv->cfg->resource_namespace;
    c->hooks = r->hooks;
    c->hooks_data = r->hooks_data;
    c->client_caps = r->client_caps;
    c->log_bits = gw_mcp_log_bits(r->log_level);
    if (r->progress_token != NULL) {
        char token[40];
        snprintf(token, sizeof token, "mcpgw-%" PRIu64, ++s->next_token);
        c->progress_token = json_incref(r->progress_token);
        c->upstream_token = json_string(token);
    }
    return c;
}

/* Finds or makes the dialog's lease and hangs the call on it. */
static int route_leased(struct gw_call *c, struct server *srv)
{
    struct lease *l = gw_lease_find(&srv->leases, c->dialog);
    int code;

    /* A lease span when the lease is taken, or its instance is not ready:
     * a call on its dialog's ready instance waits for nothing. */
    if (l == NULL) {
        const struct gw_trace_ctx *prev = gw_call_wait_begin(c, "mcpgw.lease");
        code = gw_lease_acquire(&srv->leases, c->dialog, c->retried, &l);
        gw_trace_leave(prev);
        if (code != 0) {
            gw_call_wait_end(c, gw_dispatch_error(code).label);
            return code;
        }
        if (l->slot->ready)
            gw_span_lit(c->wait, "mcpgw.lease", "spare");
        else
            gw_span_lit(c->wait, "mcpgw.lease", "new");
    } else if (!l->slot->ready) {
        gw_trace_leave(gw_call_wait_begin(c, "mcpgw.lease"));
        gw_span_lit(c->wait, "mcpgw.lease", "held");
    }
    c->slot = l->slot;
    c->lease_info = gw_lease_reply_info(l, srv->cfg->id, gw_instance_seq(l->slot->inst));
    l->last_used_ms = gw_now_ms();
    if (l->slot->ready) {
        gw_call_wait_end(c, NULL);
        return admit(c);
    }
    wait_on(c, &l->waiting);
    return 0;
}

static int route_shared(struct gw_call *c, struct server *srv)
{
    for (struct slot *sl = srv->slots; sl != NULL; sl = sl->next) {
        if (sl->role == ROLE_SHARED && sl->ready) {
            c->slot = sl;
            return admit(c);
        }
    }
    return GW_SERVERS_E_NOT_READY;
}

/* The retry of a call whose session was lost (retry_later). A shared
 * instance restarts with backoff: the call waits for it, within its
 * timeout, where a new call would be refused at once. */
static void on_retry(uv_timer_t *t)
{
    struct gw_call *c = t->data;
    struct server *srv = c->s->closing ? NULL : gw_servers_find(c->s, c->server);
    int rc = GW_SERVERS_E_NOT_READY;
    char *why;

    if (srv != NULL && srv->cfg->truely_stateless) {
        rc = route_shared(c, srv);
        if (rc == GW_SERVERS_E_NOT_READY) {
            wait_on(c, &srv->waiting);
            return;
        }
    } else if (srv != NULL) {
        json_decref(c->lease_info);
        c->lease_info = NULL;
        rc = route_leased(c, srv);
    }
    if (rc == 0)
        return;
    why = gw_xasprintf("the upstream lost its MCP session before the call ran, and no new "
                       "instance could take it: %s",
                       rc == GW_SERVERS_E_LIMIT ? "a limit on instances or calls is full"
                                                : "the server has no ready instance");
    call_fail(c, rc, why);
    free(why);
}

/* Hangs a new call on the server's lease or shared instance. */
static int route(struct gw_servers *s, struct server *srv, struct gw_call *c, gw_call_cb cb,
                 void *data, struct gw_call **out)
{
    int rc;

    c->cb = cb;
    c->data = data;
    s->entering = true;
    rc = srv->cfg->truely_stateless ? route_shared(c, srv) : route_leased(c, srv);
    s->entering = false;
    if (rc != 0) {
        uv_close((uv_handle_t *)&c->timer, call_free);
        return rc;
    }
    if (out != NULL)
        *out = c;
    return 0;
}

/* Its outcome comes on the next loop turn, like any call's. */
static int release_call(struct gw_servers *s, const struct gw_call_request *r, gw_call_cb cb,
                        void *data, struct gw_call **out)
{
    struct gw_call *c;

    if (r->dialog == NULL)
        return GW_SERVERS_E_NEED_DIALOG;
    c = call_alloc(s, "", r->dialog, 0);
    gw_strlcpy(c->client, r->client ? r->client : "", sizeof c->client);
    gw_dispatch__audit_begin(c, r, NULL);
    c->tool = gw_xstrdup(GW_CATALOG_RELEASE_TOOL);
    c->original = gw_xstrdup(GW_CATALOG_RELEASE_TOOL);
    c->cb = cb;
    c->data = data;
    c->deferred = true;
    c->deferred_result = gw_dispatch__release_result(s, r->dialog, r->arguments);
    uv_timer_start(&c->timer, on_deferred, 0, 0);
    if (out != NULL)
        *out = c;
    return 0;
}

int gw_dispatch_call(struct gw_servers *s, const struct gw_call_request *r, gw_call_cb cb,
                     void *data, struct gw_call **out)
{
    const struct gw_cat_tool *t;
    struct server *srv;
    struct gw_call *c;
    const char *rule = NULL;
    uint64_t retry;

    if (strcmp(r->tool, GW_CATALOG_RELEASE_TOOL) == 0)
        return release_call(s, r, cb, data, out);
    t = gw_catalog_lookup(s->catalog, r->tool);
    if (t == NULL || t->server == NULL) {
        gw_dispatch__audit_refused(s, r, NULL, "unknown_tool", NULL);
        return GW_SERVERS_E_NO_TOOL;
    }
    if (!gw_policy_tool(s->config, r->client, t->server, t->name, &rule)) {
        gw_dispatch__audit_refused(s, r, t->server, "denied", rule);
        return GW_SERVERS_E_NO_TOOL;
    }
    if (gw_audit_refusing(s->audit))
        return GW_SERVERS_E_AUDIT;
    srv = gw_servers_find(s, t->server);
    if (srv == NULL || s->closing)
        return GW_SERVERS_E_NOT_READY;
    if (srv->state == SRV_NEEDS_AUTH) /* its grant lapsed: its tools stay listed */
        return GW_SERVERS_E_AUTHORIZATION;
    if (!srv->cfg->truely_stateless && r->dialog == NULL)
        return GW_SERVERS_E_NEED_DIALOG;
    if (gw_policy_admit(s, r->client, gw_now_ms(), &retry) != 0) {
        gw_dispatch__audit_refused(s, r, t->server, "rate_limited", "rate");
        return GW_SERVERS_E_RATE_LIMITED;
    }
    c = call_new(s, srv, t, r);
    c->admitted = r->client != NULL;
    gw_strlcpy(c->client, r->client ? r->client : "", sizeof c->client);
    gw_dispatch__audit_begin(c, r, rule);
    return route(s, srv, c, cb, data, out);
}

int gw_dispatch_request(struct gw_servers *s, const struct gw_route_request *r, gw_call_cb cb,
                        void *data, struct gw_call **out)
{
    json_t *params = NULL;
    const char *what = NULL;
    struct server *srv;
    struct gw_call *c;

    bool subscribe;

    if (r->method == NULL || !json_is_object(r->params))
        return GW_SERVERS_E_NO_TOOL;
    subscribe = strcmp(r->method, "resources/subscribe") == 0;
    if (subscribe && r->subscriber == NULL)
        return GW_SERVERS_E_NO_TOOL;
    if (subscribe && !gw_subs_room(r->subscriber))
        return GW_SERVERS_E_SUBS_FULL;
    srv = gw_extra_route(s, r->method, r->params, &params, &what);
    if (srv != NULL && !gw_policy_route(s->config, r->client, srv->cfg->id, r->method, r->params)) {
        json_decref(params);
        srv = NULL;
    }
    if (srv == NULL)
        return GW_SERVERS_E_NO_TOOL;
    if (s->closing || srv->state != SRV_READY ||
        (!srv->cfg->truely_stateless && r->dialog == NULL)) {
        json_decref(params);
        return s->closing                     ? GW_SERVERS_E_NOT_READY
               : srv->state == SRV_NEEDS_AUTH ? GW_SERVERS_E_AUTHORIZATION
               : srv->state != SRV_READY      ? GW_SERVERS_E_NOT_READY
                                              : GW_SERVERS_E_NEED_DIALOG;
    }
    c = call_alloc(s, srv->cfg->id, r->dialog,
                   gw_dispatch_timeout(r->timeout_ms, 0, srv->cfg->request_timeout_ms,
                                       srv->snap->gateway.request_timeout_ms));
    c->tool = gw_xstrdup(r->method); /* the in-flight key: never a tool name (no '/') */
    c->original = gw_xstrdup(what);
    c->method = gw_xstrdup(r->method);
    c->ns_contents = srv->cfg->resource_namespace && strcmp(r->method, "resources/read") == 0;
    c->params = params;
    c->hooks = r->hooks;
    c->hooks_data = r->hooks_data;
    c->client_caps = r->client_caps;
    c->log_bits = gw_mcp_log_bits(r->log_level);
    if (subscribe)
        gw_subs_begin(c, r->subscriber);
    return route(s, srv, c, cb, data, out);
}

void gw_dispatch_cancel(struct gw_call *c, const char *reason)
{
    if (c->deferred)
        return; /* its outcome is already on its way */
    switch (c->state) {
    case CALL_SENT:
        gw_instance_cancel(c->slot->inst, c->handle, reason);
        break;
    case CALL_QUEUED:
        queue_remove(c->s, c);
        call_fail(c, GW_MCP_E_CANCELLED, reason);
        break;
    case CALL_WAIT_INSTANCE:
        wait_remove(c);
        call_fail(c, GW_MCP_E_CANCELLED, reason);
        break;
    case CALL_DONE:
        break;
    }
}

void gw_dispatch_park(struct gw_call *c, bool parked)
{
    struct gw_servers *s = c->s;

    if (c->state != CALL_SENT || c->parked == parked)
        return;
    c->parked = parked;
    if (!parked) {
        s->in_flight++;
        tool_add(s, c, 1);
        return;
    }
    s->in_flight--;
    tool_add(s, c, -1);
    pump(s);
}

unsigned gw_servers_in_flight(const struct gw_servers *s)
{
    return s->in_flight;
}
