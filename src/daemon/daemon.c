/* The daemon's lifetime: load, listen, serve, reload (SIGHUP, the file
 * watch, POST /v1/reload), stop on SIGTERM/SIGINT. Signal handlers only set
 * things in motion on the loop (libuv delivers them as ordinary
 * callbacks), as in Redis' ae. */
#include "gw/daemon.h"
#include "gw/dispatch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/api.h"
#include "gw/audit.h"
#include "gw/config.h"
#include "gw/curl_uv.h"
#include "gw/gate.h"
#include "gw/events.h"
#include "gw/heap.h"
#include "gw/http.h"
#include "gw/log.h"
#include "gw/mcp_server.h"
#include "gw/metrics.h"
#include "gw/netproxy.h"
#include "gw/oauth.h"
#include "gw/otlp.h"
#include "gw/problems.h"
#include "gw/proctree.h"
#include "gw/reaper.h"
#include "gw/sandbox.h"
#include "gw/sdnotify.h"
#include "gw/servers.h"
#include "gw/ui.h"
#include "gw/upstream_ws.h"
#include "gw/util.h"
#include "gw/watch.h"

struct daemon {
    uv_loop_t *loop;
    const struct gw_daemon_options *opts;
    struct gw_config *config; /* current snapshot, one reference */
    struct gw_problems *problems;
    struct gw_http_server *http;
    struct gw_servers *servers;
    struct gw_curl_uv *multi;
    struct gw_otlp *otlp; /* traces' exporter: off until gateway.tracing says where */
    struct gw_events *events;
    struct gw_mcp_server *mcp; /* /mcp; NULL from stop() on */
    struct gw_metrics *metrics;
    struct gw_reaper *reaper;
    struct gw_watch *watch;
    struct gw_api_ctx api;
    struct gw_gate gate;
    uv_signal_t sigterm, sigint, sighup, sigusr1;
    struct gw_audit *audit; /* gateway.audit; reopened on SIGUSR1 */
    uv_timer_t stop_timer;  /* defers a stop out of the servers module */
    int exit_code;
    bool stopping;
    uint64_t stop_ms; /* when the stop began: the traces' flush ends at shutdown_grace */
};

static void on_problem(const struct gw_problem *p, int cleared, void *data)
{
    struct daemon *d = data;
    json_t *o = gw_problem_to_json(p);

    if (d->events == NULL) {
        json_decref(o);
        return;
    }
    json_object_set_new(o, "cleared", json_boolean(cleared));
    gw_events_publish(d->events, "problem", o);
}

static void on_servers_event(void *data, const struct gw_servers_event *ev)
{
    struct daemon *d = data;
    const char *name = gw_servers_event_name(ev->kind);

    if (d->mcp != NULL && ev->kind == GW_EV_CATALOG)
        gw_mcp_server_catalog_changed(d->mcp, ev->version);
    if (d->mcp != NULL && (ev->kind == GW_EV_PROMPTS || ev->kind == GW_EV_RESOURCES))
        gw_mcp_server_extras_changed(d->mcp, name);
    if (d->mcp != NULL && ev->kind == GW_EV_LEASE && strcmp(ev->action, "acquired") == 0)
        gw_mcp_server_lease_acquired(d->mcp, ev->dialog, ev->server);
    if (d->events != NULL)
        gw_events_publish(d->events, name, gw_servers_event_json(ev));
}

/* Replaces the config problems with this load's diagnostics. The id holds
 * key and line so an unchanged diagnostic keeps its `since`. */
static void publish_diags(struct daemon *d, const struct gw_config *c)
{
    gw_problems_mark(d->problems, "config:");
    for (size_t i = 0; i < c->ndiags; i++) {
        const struct gw_diag *g = &c->diags[i];
        char *id = gw_xasprintf("config:%s:%d:%d", g->key ? g->key : "", g->line, g->col);
        char *msg = gw_diag_format(g);
        struct gw_problem p = {.id = id,
                               .severity = g->severity,
                               .scope = g->scope,
                               .server = g->server,
                               .message = msg};
        gw_problems_set(d->problems, &p);
        free(msg);
        free(id);
    }
    gw_problems_sweep(d->problems, "config:");
}

static void http_limits(const struct gw_gateway_config *g, struct gw_http_limits *l)
{
    l->max_body = g->max_body;
    l->max_header_bytes = g->max_header_bytes;
    l->max_headers = 100;
    l->max_connections = (unsigned)g->max_connections;
    l->header_timeout_ms = g->header_timeout_ms;
    l->body_timeout_ms = g->header_timeout_ms;
    l->keepalive_timeout_ms = g->keepalive_timeout_ms;
}

/* Does /mcp's tools/list read differently under `b` (tool search turned
 * on or off, another always_loaded)? max_results changes no list. */
static bool tool_search_changed(const struct gw_gateway_config *a,
                                const struct gw_gateway_config *b)
{
    if (a->tool_search_enabled != b->tool_search_enabled)
        return true;
    if (!b->tool_search_enabled)
        return false;
    if (a->ntool_search_always_loaded != b->ntool_search_always_loaded)
        return true;
    for (size_t i = 0; i < b->ntool_search_always_loaded; i++) {
        if (strcmp(a->tool_search_always_loaded[i], b->tool_search_always_loaded[i]) != 0)
            return true;
    }
    return false;
}

/* Swaps in `next` (an ok snapshot, reference taken over) and lets the
 * servers follow. Returns the servers' summary. */
static json_t *swap_config(struct daemon *d, struct gw_config *next)
{
    if (d->config != NULL && d->mcp != NULL &&
        tool_search_changed(&d->config->gateway, &next->gateway))
        gw_mcp_server_tool_search_changed(d->mcp);
    if (d->config != NULL && d->mcp != NULL &&
        memcmp(d->config->clients_sha256, next->clients_sha256, sizeof next->clients_sha256) != 0)
        gw_mcp_server_policy_changed(d->mcp);
    if (d->config != NULL && strcmp(d->config->gateway.listen, next->gateway.listen) != 0 &&
        d->opts->listen == NULL)
        gw_log(GW_LOG_WARN, "gateway.listen changed; it takes effect at the next restart", NULL);
    if (d->config != NULL)
        gw_config_unref(d->config);
    d->config = next;
    if (d->otlp != NULL)
        gw_otlp_configure(d->otlp, &next->gateway);
    d->api.config = next;
    d->gate.config = next;
    gw_audit_configure(d->audit, &next->gateway);
    d->api.loaded_at = time(NULL);
    if (d->http != NULL) {
        struct gw_http_limits limits;
        http_limits(&next->gateway, &limits);
        gw_http_server_set_limits(d->http, &limits);
    }
    if (d->mcp != NULL)
        gw_mcp_server_set_default_dialog(d->mcp, next->gateway.mcp_default_dialog);
    if (d->watch != NULL)
        gw_watch_set_timing(d->watch, next->gateway.reload_debounce_ms,
                            next->gateway.reload_poll_interval_ms);
    return gw_servers_apply(d->servers, next);
}

static json_t *diag_list(const struct gw_config *c, enum gw_severity sev)
{
    json_t *list = json_array();

    for (size_t i = 0; i < c->ndiags; i++) {
        if (c->diags[i].severity != sev)
            continue;
        char *line = gw_diag_format(&c->diags[i]);
        json_array_append_new(list, json_string(line));
        free(line);
    }
    return list;
}

/* One reload, whatever triggered it: parse and validate; a workspace-level
 * error keeps the last known good config (seed 000); else the servers
 * follow the new one. Returns {"ok", "trigger", "added", …, "errors",
 * "warnings", "version"}. */
static json_t *reload(struct daemon *d, const char *trigger)
{
    struct gw_config *next;
    json_t *sum;

    gw_sdnotify_reloading();
    gw_log(GW_LOG_INFO, "reloading", "file", d->opts->config_path, "trigger", trigger, NULL);
    if (gw_config_load(d->opts->config_path, &next) != 0) {
        gw_sdnotify_ready("configuration could not be read; keeping the last known good one");
        return json_pack("{s:b, s:s, s:[s]}", "ok", 0, "trigger", trigger, "errors",
                         "out of memory while loading the configuration");
    }
    publish_diags(d, next);
    if (!next->ok) {
        gw_log(GW_LOG_ERROR, "configuration refused, keeping the last known good one", "file",
               next->path, NULL);
        sum = json_pack("{s:b, s:s, s:o, s:o}", "ok", 0, "trigger", trigger, "errors",
                        diag_list(next, GW_SEV_ERROR), "warnings", diag_list(next, GW_SEV_WARNING));
        gw_config_unref(next);
        gw_metrics_reload(d->metrics, "refused");
        gw_sdnotify_ready("configuration refused; keeping the last known good one");
    } else {
        json_t *errors = diag_list(next, GW_SEV_ERROR), *warnings = diag_list(next, GW_SEV_WARNING);
        if (!next->exists)
            gw_log(GW_LOG_WARN, "the configuration file is gone: serving an empty catalog", "file",
                   next->path, NULL);
        sum = swap_config(d, next);
        gw_metrics_reload(d->metrics, "ok");
        json_object_set_new(sum, "ok", json_true());
        json_object_set_new(sum, "trigger", json_string(trigger));
        json_object_set_new(sum, "errors", errors);
        json_object_set_new(sum, "warnings", warnings);
        gw_sdnotify_ready(NULL);
        gw_sdnotify_status("serving %zu servers", d->config->nservers);
    }
    json_object_set_new(
        sum, "version",
        json_integer((json_int_t)gw_catalog_version(gw_servers_catalog(d->servers))));
    gw_events_publish(d->events, "reload", json_incref(sum));
    gw_api_note_reload(&d->api, json_deep_copy(sum));
    return sum;
}

static json_t *api_reload(void *data)
{
    return reload(data, "api");
}

static void on_file_changed(void *data)
{
    struct daemon *d = data;

    if (!d->stopping)
        json_decref(reload(d, "watch"));
}

/* The traces are flushed (or given up) before the multi they use closes. */
static void on_otlp_closed(void *data)
{
    struct daemon *d = data;

    d->otlp = NULL;
    if (d->multi != NULL)
        gw_curl_uv_close(d->multi, NULL, NULL);
    d->multi = NULL;
}

static void on_servers_closed(void *data)
{
    struct daemon *d = data;
    uint64_t grace = d->config ? d->config->gateway.shutdown_grace_ms : 0;

    d->servers = NULL;
    gw_otlp_close(d->otlp, d->stop_ms + grace, on_otlp_closed, d);
    gw_upstream_ws_shutdown();
    if (d->reaper != NULL) {
        gw_reaper_scan(d->reaper);
        gw_reaper_stop(d->reaper, NULL, NULL);
        d->reaper = NULL;
    }
}

static void on_http_closed(void *data)
{
    ((struct daemon *)data)->http = NULL;
}

static void on_mcp_closed(void *data)
{
    (void)data;
}

static void on_events_closed(void *data)
{
    ((struct daemon *)data)->events = NULL;
}

static void held_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
}

void gw_daemon_hold_signals(void)
{
    sigset_t set;

    held_signals(&set);
    sigprocmask(SIG_BLOCK, &set, NULL);
}

void gw_daemon_release_signals(void)
{
    sigset_t set;

    held_signals(&set);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static void on_handle_closed(uv_handle_t *h)
{
    (void)h;
}

/* Stop accepting, end event streams, drain the servers for up to
 * shutdown_grace, then let the loop end once every handle is closed. */
static void stop(struct daemon *d)
{
    if (d->stopping)
        return;
    d->stopping = true;
    d->stop_ms = gw_now_ms();
    gw_sdnotify_stopping();
    gw_log(GW_LOG_INFO, "stopping", NULL);
    if (d->watch != NULL)
        gw_watch_close(d->watch, NULL, NULL);
    d->watch = NULL;
    gw_events_close(d->events, on_events_closed, d);
    /* Before the servers close: it cancels its calls in flight there. */
    d->gate.mcp = NULL;
    gw_mcp_server_close(d->mcp, on_mcp_closed, d);
    d->mcp = NULL;
    if (d->http != NULL)
        gw_http_server_close(d->http, on_http_closed, d);
    /* Before the servers close: parked rounds' calls are cancelled, not
     * drained (nobody will answer them). */
    gw_rounds_close(d->api.rounds);
    d->api.rounds = NULL;
    gw_servers_close(d->servers, d->config ? d->config->gateway.shutdown_grace_ms : 0,
                     on_servers_closed, d);
    gw_sdnotify_watchdog_close(NULL, NULL);
    gw_heap_close();
    gw_audit_stop(d->audit);
    uv_close((uv_handle_t *)&d->sigterm, on_handle_closed);
    uv_close((uv_handle_t *)&d->sigint, on_handle_closed);
    uv_close((uv_handle_t *)&d->sighup, on_handle_closed);
    uv_close((uv_handle_t *)&d->sigusr1, on_handle_closed);
    uv_close((uv_handle_t *)&d->stop_timer, on_handle_closed);
    /* Closing the handle gave SIGHUP back its default action, which kills:
     * a reload asked while draining is simply not done. */
    signal(SIGHUP, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
}

/* The input rounds' expiry: GW_ROUNDS_EXPIRY_MS, or
 * MCPGW_INPUT_ROUND_EXPIRY_MS (docs/config.md), which tests shorten. */
static uint64_t round_expiry_ms(void)
{
    const char *v = getenv("MCPGW_INPUT_ROUND_EXPIRY_MS");
    char *end = NULL;
    unsigned long long ms = v != NULL ? strtoull(v, &end, 10) : 0;

    if (v != NULL && (end == v || *end != '\0' || ms == 0 || ms > 24ull * 3600 * 1000)) {
        gw_log(GW_LOG_WARN,
               "MCPGW_INPUT_ROUND_EXPIRY_MS is not a number of milliseconds "
               "from 1 to a day; using the default",
               "value", v, NULL);
        ms = 0;
    }
    return ms;
}

/* The key that seals requestStates comes from the OS CSPRNG; without it
 * the gateway could not tell its own states from forged ones. */
static struct gw_rounds *make_rounds(uv_loop_t *loop)
{
    struct gw_rounds *rr;
    int rc = gw_rounds_new(loop, round_expiry_ms(), NULL, &rr);

    if (rc != 0) {
        gw_log(GW_LOG_ERROR, "no random key for input rounds", "error", uv_strerror(rc), NULL);
        abort();
    }
    return rr;
}

static void on_stop_timer(uv_timer_t *t)
{
    stop(t->data);
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct daemon *d = h->data;

    if (d->stopping)
        return;
    if (signum == SIGHUP)
        json_decref(reload(d, "sighup"));
    else if (signum == SIGUSR1)
        gw_audit_reopen(d->audit);
    else
        stop(d);
}

static void watch_signal(struct daemon *d, uv_signal_t *h, int signum)
{
    uv_signal_init(d->loop, h);
    h->data = d;
    uv_signal_start(h, on_signal, signum);
}

static void on_settled(void *data)
{
    struct daemon *d = data;

    if (d->api.ready)
        return;
    d->api.ready = true;
    gw_log(GW_LOG_INFO, "ready: every server finished its first attempt", NULL);
    gw_sdnotify_ready(NULL);
    gw_sdnotify_status("serving %zu servers", d->config ? d->config->nservers : 0);
}

/* Called from inside the servers module: the stop waits for the next loop
 * turn so that module is not torn down under its own feet. */
static void on_required_failed(void *data, const char *why)
{
    struct daemon *d = data;

    if (d->api.ready || d->stopping)
        return;
    gw_log(GW_LOG_ERROR, why, NULL);
    d->exit_code = 1;
    uv_timer_start(&d->stop_timer, on_stop_timer, 0, 0);
}

static bool listen_is_loopback(const char *listen)
{
    if (strncmp(listen, "unix:", 5) == 0)
        return true;
    return gw_gate_host_is_loopback(listen);
}

/* Loads the first config. A missing file is an empty config unless -c named
 * it; a broken one still lets the daemon start (design §4), with problems. */
static int first_load(struct daemon *d)
{
    struct gw_config *c;

    if (gw_config_load(d->opts->config_path, &c) != 0)
        return -1;
    if (!c->exists && d->opts->config_path_explicit) {
        gw_log(GW_LOG_ERROR, "configuration file not found", "file", c->path, NULL);
        gw_config_unref(c);
        return -1;
    }
    if (!c->exists)
        gw_log(GW_LOG_WARN, "no configuration file; serving an empty catalog", "file", c->path,
               NULL);
    publish_diags(d, c);
    if (!c->ok) {
        struct gw_config *empty;
        gw_config_unref(c);
        if (gw_config_load_buffer(d->opts->config_path, "version: 1\n", 11, &empty) != 0)
            return -1;
        gw_log(GW_LOG_ERROR, "configuration refused; starting with no servers", NULL);
        c = empty;
    }
    json_decref(swap_config(d, c));
    return 0;
}

static int start_http(struct daemon *d)
{
    const char *listen = d->opts->listen ? d->opts->listen : d->config->gateway.listen;
    struct gw_http_limits limits;
    char *err = NULL;

    d->gate.loopback = listen_is_loopback(listen);
    if (!d->gate.loopback && d->config->nclients == 0) {
        gw_log(GW_LOG_ERROR,
               "refusing to listen on a non-loopback address without gateway.auth_token or "
               "clients",
               "listen", listen, NULL);
        return -1;
    }
    http_limits(&d->config->gateway, &limits);
    if (gw_http_server_start(d->loop, listen, &limits, gw_gate_handle, &d->gate, &d->http, &err) !=
        0) {
        gw_log(GW_LOG_ERROR, err ? err : "cannot listen", "listen", listen, NULL);
        free(err);
        return -1;
    }
    gw_http_server_set_response_hook(d->http, gw_api_on_response, &d->api);
    gw_http_server_set_headers(d->http, gw_ui_headers);
    const char *addr = gw_http_server_address(d->http);
    d->gate.address = addr;
    gw_log(GW_LOG_INFO, "listening", "addr", addr, NULL);
    /* No OAuth fetch a server's metadata steers may reach the API. */
    struct sockaddr_storage ss;
    if (gw_http_server_sockname(d->http, &ss) == 0)
        gw_curl_uv_set_own(d->multi, (const struct sockaddr *)&ss);
    gw_netproxy_set_own(addr);
    /* Where a browser is sent back after authorizing an OAuth server. */
    if (strncmp(addr, "unix:", 5) != 0) {
        char *base = gw_xasprintf("http://%s", addr);
        gw_servers_set_base_url(d->servers, base);
        free(base);
    }
    return 0;
}

static void start_watch(struct daemon *d)
{
    const struct gw_gateway_config *g = &d->config->gateway;

    gw_watch_start(d->loop, d->config->path, g->reload_debounce_ms, g->reload_poll_interval_ms,
                   on_file_changed, d, &d->watch);
}

static void init(struct daemon *d, const struct gw_daemon_options *opts)
{
    struct gw_servers_cbs cbs = {on_settled, on_required_failed, on_servers_event, d};
    int rc;

    d->loop = uv_default_loop();
    d->opts = opts;
    signal(SIGPIPE, SIG_IGN);
    rc = gw_sdnotify_init();
    if (rc != 0)
        gw_log(GW_LOG_WARN, "cannot use NOTIFY_SOCKET", "error", uv_strerror(rc), NULL);
    rc = gw_reaper_start(d->loop, &d->reaper);
    if (rc != 0)
        gw_log(GW_LOG_WARN, "cannot become a child subreaper; orphaned grandchildren may linger",
               "error", uv_strerror(rc), NULL);
    gw_heap_start(d->loop);
    d->problems = gw_problems_new();
    d->events = gw_events_new(d->loop);
    d->metrics = gw_metrics_new();
    gw_problems_set_listener(d->problems, on_problem, d);
    /* libcurl itself is loaded when the first HTTP upstream starts. */
    d->multi = gw_curl_uv_new(d->loop);
    d->otlp = gw_otlp_new(d->loop, d->multi, d->problems);
    d->servers = gw_servers_new(d->loop, d->multi, d->problems, &cbs);
    gw_dispatch_attach(d->servers);
    d->audit = gw_audit_new(d->loop, d->problems);
    gw_dispatch_set_audit(d->servers, d->audit);
    d->api = (struct gw_api_ctx){.problems = d->problems,
                                 .servers = d->servers,
                                 .events = d->events,
                                 .metrics = d->metrics,
                                 .rounds = make_rounds(d->loop),
                                 .audit = d->audit,
                                 .started_at = time(NULL),
                                 .reload = api_reload,
                                 .data = d};
    d->mcp = gw_mcp_server_new(d->loop, d->servers, d->metrics, d->api.rounds);
    d->gate = (struct gw_gate){.api = &d->api, .mcp = d->mcp};
    watch_signal(d, &d->sigterm, SIGTERM);
    watch_signal(d, &d->sigint, SIGINT);
    watch_signal(d, &d->sighup, SIGHUP);
    watch_signal(d, &d->sigusr1, SIGUSR1);
    uv_timer_init(d->loop, &d->stop_timer);
    d->stop_timer.data = d;
}

int gw_daemon_run(const struct gw_daemon_options *opts)
{
    struct daemon d = {0};

    init(&d, opts);
    if (first_load(&d) != 0 || start_http(&d) != 0) {
        d.exit_code = 1;
        stop(&d);
    } else {
        char *state_dir = gw_oauth_state_dir(d.config->gateway.state_dir);
        gw_sandbox_homes_sweep_start(d.loop, state_dir);
        free(state_dir);
        start_watch(&d);
        gw_sdnotify_watchdog_start(d.loop);
        gw_sdnotify_status("starting %zu servers", d.config->nservers);
        /* Signals held since the process started reach the handlers now:
         * however many SIGHUPs came during the start, one reload follows
         * the first load. A failed start leaves them held: it exits 1
         * either way. */
        gw_daemon_release_signals();
    }
    uv_run(d.loop, UV_RUN_DEFAULT);
    /* No descendant outlives the daemon (security.md P3), even one that
     * left its instance's process group and session. */
    gw_proctree_kill_all(1000);
    gw_log(GW_LOG_INFO, "stopped", "exit", d.exit_code ? "1" : "0", NULL);
    gw_audit_close(d.audit); /* every call has ended: its line is queued */
    if (uv_loop_close(d.loop) != 0)
        gw_log(GW_LOG_WARN, "event loop closed with handles still open", NULL);
    if (d.config != NULL)
        gw_config_unref(d.config);
    gw_api_ctx_release(&d.api);
    gw_problems_free(d.problems);
    gw_metrics_free(d.metrics);
    return d.exit_code;
}
