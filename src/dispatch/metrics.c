#include "gw/metrics.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gw/dispatch.h"
#include "gw/input_rounds.h"
#include "gw/instance.h"
#include "gw/servers.h"
#include "gw/trace.h"
#include "gw/util.h"
#include "gw/version.h"

#define LABEL_SEP "\x1f"

static const double buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

struct hist {
    uint64_t counts[NBUCKETS + 1]; /* the last is +Inf */
    double sum;
    uint64_t n;
};

struct gw_metrics {
    json_t *calls;   /* "front\x1fserver\x1ftool\x1fstatus" → count */
    json_t *http;    /* "route\x1fcode" → count */
    json_t *reloads; /* result → count */
    json_t *hists;   /* "front\x1fserver" → index into hist array, as integer */
    struct hist *hist;
    size_t nhist;
    time_t started;
};

/* A growable output buffer; allocation failure aborts (util.h). */
struct out {
    char *p;
    size_t len, cap;
};

static void outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void outf(struct out *o, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        o->cap = o->cap * 2 + (size_t)(n > 0 ? n : 64);
        o->p = gw_xrealloc(o->p, o->cap);
    }
}

/* Appends `v` escaped as a label value. */
static void out_label(struct out *o, const char *v)
{
    for (; v != NULL && *v; v++) {
        if (*v == '\\' || *v == '"')
            outf(o, "\\%c", *v);
        else if (*v == '\n')
            outf(o, "\\n");
        else
            outf(o, "%c", *v);
    }
}

struct gw_metrics *gw_metrics_new(void)
{
    struct gw_metrics *m = gw_xcalloc(1, sizeof *m);

    m->calls = json_object();
    m->http = json_object();
    m->reloads = json_object();
    m->hists = json_object();
    m->started = time(NULL);
    return m;
}

void gw_metrics_free(struct gw_metrics *m)
{
    if (m == NULL)
        return;
    json_decref(m->calls);
    json_decref(m->http);
    json_decref(m->reloads);
    json_decref(m->hists);
    free(m->hist);
    free(m);
}

static void bump(json_t *map, const char *key)
{
    json_t *v = json_object_get(map, key);

    if (v != NULL)
        json_integer_set(v, json_integer_value(v) + 1);
    else
        json_object_set_new(map, key, json_integer(1));
}

/* Joins `parts` with LABEL_SEP into buf, or into a heap string (*heap,
 * to be freed) when they do not fit: keys are built on every request. */
static const char *join_key(char *buf, size_t cap, char **heap, const char *const *parts, size_t n)
{
    size_t len = 0;

    *heap = NULL;
    for (size_t i = 0; i < n; i++)
        len += strlen(parts[i]) + 1;
    if (len > cap)
        buf = *heap = gw_xmalloc(len);
    len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(parts[i]);
        memcpy(buf + len, parts[i], k);
        len += k;
        buf[len++] = i + 1 < n ? LABEL_SEP[0] : '\0';
    }
    return buf;
}

void gw_metrics_http(struct gw_metrics *m, const char *route, int code)
{
    char buf[256], num[24], *heap;
    const char *parts[] = {route, num};

    gw_fmt_int(num, code);
    bump(m->http, join_key(buf, sizeof buf, &heap, parts, 2));
    free(heap);
}

static struct hist *hist_for(struct gw_metrics *m, const char *server)
{
    json_t *idx = json_object_get(m->hists, server);

    if (idx == NULL) {
        m->hist = gw_xrealloc(m->hist, (m->nhist + 1) * sizeof *m->hist);
        memset(&m->hist[m->nhist], 0, sizeof *m->hist);
        idx = json_integer((json_int_t)m->nhist++);
        json_object_set_new(m->hists, server, idx);
    }
    return &m->hist[json_integer_value(idx)];
}

void gw_metrics_call(struct gw_metrics *m, const char *front, const char *server, const char *tool,
                     const char *status, double seconds)
{
    char buf[256], *heap;
    const char *parts[] = {front, server ? server : "", tool ? tool : "", status};
    struct hist *h;
    size_t i = 0;

    if (m == NULL)
        return;
    bump(m->calls, join_key(buf, sizeof buf, &heap, parts, 4));
    free(heap);
    h = hist_for(m, join_key(buf, sizeof buf, &heap, parts, 2));
    free(heap);
    while (i < NBUCKETS && seconds > buckets[i])
        i++;
    h->counts[i]++;
    h->sum += seconds;
    h->n++;
}

void gw_metrics_reload(struct gw_metrics *m, const char *result)
{
    bump(m->reloads, result);
}

static void header(struct out *o, const char *name, const char *type, const char *help)
{
    outf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Writes a map of LABEL_SEP-joined keys as one labelled series. */
static void series(struct out *o, const char *name, json_t *map, const char *const *labels,
                   size_t nlabels)
{
    const char *key;
    json_t *v;

    json_object_foreach(map, key, v)
    {
        const char *p = key;
        outf(o, "%s{", name);
        for (size_t i = 0; i < nlabels; i++) {
            const char *sep = strstr(p, LABEL_SEP);
            size_t n = sep ? (size_t)(sep - p) : strlen(p);
            char *part = gw_xstrndup(p, n);
            outf(o, "%s%s=\"", i ? "," : "", labels[i]);
            out_label(o, part);
            outf(o, "\"");
            free(part);
            p = sep ? sep + 1 : p + n;
        }
        outf(o, "} %lld\n", (long long)json_integer_value(v));
    }
}

static void histograms(struct out *o, const struct gw_metrics *m)
{
    const char *key;
    json_t *idx;

    header(o, "mcpgw_tool_call_duration_seconds", "histogram",
           "Tool call duration from routing to the upstream's answer.");
    json_object_foreach(m->hists, key, idx)
    {
        const struct hist *h = &m->hist[json_integer_value(idx)];
        const char *server = strchr(key, '\x1f') + 1;
        int flen = (int)(server - 1 - key);
        uint64_t cum = 0;
        for (size_t i = 0; i <= NBUCKETS; i++) {
            cum += h->counts[i];
            outf(o, "mcpgw_tool_call_duration_seconds_bucket{front=\"%.*s\",server=\"", flen, key);
            out_label(o, server);
            if (i < NBUCKETS)
                outf(o, "\",le=\"%g\"} %llu\n", buckets[i], (unsigned long long)cum);
            else
                outf(o, "\",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
        }
        outf(o, "mcpgw_tool_call_duration_seconds_sum{front=\"%.*s\",server=\"", flen, key);
        out_label(o, server);
        outf(o, "\"} %.6f\nmcpgw_tool_call_duration_seconds_count{front=\"%.*s\",server=\"", h->sum,
             flen, key);
        out_label(o, server);
        outf(o, "\"} %llu\n", (unsigned long long)h->n);
    }
}

static void server_gauges(struct out *o, const struct gw_metrics_view *v)
{
    header(o, "mcpgw_leases_active", "gauge", "Dialogs holding a leased instance, by server.");
    for (size_t i = 0; i < v->nservers; i++) {
        outf(o, "mcpgw_leases_active{server=\"");
        out_label(o, v->servers[i].id);
        outf(o, "\"} %u\n", v->servers[i].leases);
    }
    header(o, "mcpgw_instances", "gauge", "Live upstream instances, by server and state.");
    for (size_t i = 0; i < v->nservers; i++) {
        for (int st = 0; st < GW_INSTANCE_NSTATES; st++) {
            if (v->servers[i].instances[st] == 0)
                continue;
            outf(o, "mcpgw_instances{server=\"");
            out_label(o, v->servers[i].id);
            outf(o, "\",state=\"%s\"} %u\n", gw_instance_state_name((enum gw_instance_state)st),
                 v->servers[i].instances[st]);
        }
    }
    header(o, "mcpgw_instance_restarts_total", "counter",
           "Restarts of a server's discovery or shared instance.");
    for (size_t i = 0; i < v->nservers; i++) {
        outf(o, "mcpgw_instance_restarts_total{server=\"");
        out_label(o, v->servers[i].id);
        outf(o, "\"} %u\n", v->servers[i].restarts);
    }
    header(o, "mcpgw_sandbox_allowed_total", "counter",
           "Destinations a sandboxed server's proxy connected, by server.");
    for (size_t i = 0; i < v->nservers; i++) {
        outf(o, "mcpgw_sandbox_allowed_total{server=\"");
        out_label(o, v->servers[i].id);
        outf(o, "\"} %" PRIu64 "\n", v->servers[i].net_allowed);
    }
    header(o, "mcpgw_sandbox_denied_total", "counter",
           "Destinations a sandboxed server's proxy refused, by server.");
    for (size_t i = 0; i < v->nservers; i++) {
        outf(o, "mcpgw_sandbox_denied_total{server=\"");
        out_label(o, v->servers[i].id);
        outf(o, "\"} %" PRIu64 "\n", v->servers[i].net_denied);
    }
    header(o, "mcpgw_server_needs_authorization", "gauge",
           "1 while a server waits for an OAuth authorization, by server.");
    for (size_t i = 0; i < v->nservers; i++) {
        outf(o, "mcpgw_server_needs_authorization{server=\"");
        out_label(o, v->servers[i].id);
        outf(o, "\"} %d\n", v->servers[i].needs_authorization ? 1 : 0);
    }
}

static long rss_bytes(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "re");

    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * sysconf(_SC_PAGESIZE);
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n - 3; /* ".", "..", and the directory's own descriptor */
}

static void process(struct out *o, const struct gw_metrics *m)
{
    header(o, "process_resident_memory_bytes", "gauge", "Resident memory of the daemon.");
    outf(o, "process_resident_memory_bytes %ld\n", rss_bytes());
    header(o, "process_open_fds", "gauge", "Open file descriptors of the daemon.");
    outf(o, "process_open_fds %d\n", open_fds());
    header(o, "process_start_time_seconds", "gauge", "Start time, Unix seconds.");
    outf(o, "process_start_time_seconds %lld\n", (long long)m->started);
    header(o, "mcpgw_uptime_seconds", "gauge", "Seconds since the daemon started.");
    outf(o, "mcpgw_uptime_seconds %lld\n", (long long)(time(NULL) - m->started));
    header(o, "mcpgw_build_info", "gauge", "Always 1; the version is a label.");
    outf(o, "mcpgw_build_info{version=\"%s\"} 1\n", GW_VERSION);
}

/* What came back from upstreams for the caller of a call in flight. */
static void relays(struct out *o, const struct gw_relay_stats *r)
{
    header(o, "mcpgw_progress_notifications_total", "counter",
           "Upstream progress notifications, relayed to their caller or dropped.");
    outf(o, "mcpgw_progress_notifications_total{outcome=\"relayed\"} %" PRIu64 "\n",
         r->progress_relayed);
    outf(o, "mcpgw_progress_notifications_total{outcome=\"dropped\"} %" PRIu64 "\n",
         r->progress_dropped);
    header(o, "mcpgw_server_requests_total", "counter",
           "Upstream requests to the client (sampling, elicitation, roots), relayed or refused.");
    outf(o, "mcpgw_server_requests_total{outcome=\"relayed\"} %" PRIu64 "\n", r->requests_relayed);
    outf(o, "mcpgw_server_requests_total{outcome=\"refused\"} %" PRIu64 "\n", r->requests_refused);
}

/* Input rounds: handed to callers, continued, refused, left to expire. */
static void rounds(struct out *o, const struct gw_rounds_stats *r)
{
    const struct {
        const char *outcome;
        uint64_t n;
    } rows[] = {{"asked", r->asked},
                {"resumed", r->resumed},
                {"rejected", r->rejected},
                {"expired", r->expired},
                {"refused", r->refused}};

    header(o, "mcpgw_input_rounds_total", "counter",
           "Input rounds by outcome: asked of a caller, resumed by its retry, a retry "
           "rejected, expired unanswered, or refused for the bounds.");
    for (size_t i = 0; i < GW_ARRAY_SIZE(rows); i++)
        outf(o, "mcpgw_input_rounds_total{outcome=\"%s\"} %" PRIu64 "\n", rows[i].outcome,
             rows[i].n);
}

/* Traces (gateway.tracing): counters of base/trace, zero while it is off. */
static void traces(struct out *o)
{
    struct gw_trace_stats t;

    gw_trace_stats(&t);
    header(o, "mcpgw_trace_spans_total", "counter", "Spans recorded (sampled) and ended.");
    outf(o, "mcpgw_trace_spans_total %" PRIu64 "\n", t.spans);
    header(o, "mcpgw_trace_spans_exported_total", "counter", "Spans the trace collector accepted.");
    outf(o, "mcpgw_trace_spans_exported_total %" PRIu64 "\n", t.exported);
    header(o, "mcpgw_trace_spans_dropped_total", "counter",
           "Spans dropped: the export queue was full, the collector refused them, or the "
           "shutdown grace ended first.");
    outf(o, "mcpgw_trace_spans_dropped_total %" PRIu64 "\n", t.dropped);
    header(o, "mcpgw_trace_export_failures_total", "counter",
           "Export requests that failed (an error answer or no answer).");
    outf(o, "mcpgw_trace_export_failures_total %" PRIu64 "\n", t.failures);
}

char *gw_metrics_render(const struct gw_metrics *m, const struct gw_metrics_view *v)
{
    static const char *const call_labels[] = {"front", "server", "tool", "status"};
    static const char *const http_labels[] = {"route", "code"};
    static const char *const reload_labels[] = {"result"};
    static const char *const sev[] = {"error", "warning", "info"};
    struct out o = {gw_xmalloc(4096), 0, 4096};

    header(&o, "mcpgw_tool_calls_total", "counter",
           "Tool calls by front end (rest, mcp), server, tool and outcome.");
    series(&o, "mcpgw_tool_calls_total", m->calls, call_labels, 4);
    histograms(&o, m);
    header(&o, "mcpgw_tool_calls_in_flight", "gauge",
           "Tool calls sent upstream and not answered (not those whose input round waits for "
           "the caller).");
    outf(&o, "mcpgw_tool_calls_in_flight %u\n", v->calls_in_flight);
    relays(&o, v->relay);
    if (v->rounds != NULL)
        rounds(&o, v->rounds);
    server_gauges(&o, v);
    header(&o, "mcpgw_reloads_total", "counter", "Configuration reloads by result.");
    series(&o, "mcpgw_reloads_total", m->reloads, reload_labels, 1);
    header(&o, "mcpgw_catalog_version", "gauge", "The catalog version (the ETag of /v1/tools).");
    outf(&o, "mcpgw_catalog_version %llu\n", (unsigned long long)v->catalog_version);
    header(&o, "mcpgw_problems", "gauge", "Open problems by severity.");
    for (int i = 0; i < 3; i++)
        outf(&o, "mcpgw_problems{severity=\"%s\"} %zu\n", sev[i], v->problems[i]);
    header(&o, "mcpgw_http_requests_total", "counter", "HTTP requests by route and status.");
    series(&o, "mcpgw_http_requests_total", m->http, http_labels, 2);
    header(&o, "mcpgw_event_clients", "gauge", "Open GET /v1/events streams.");
    outf(&o, "mcpgw_event_clients %zu\n", v->event_clients);
    header(&o, "mcpgw_search_index_bytes", "gauge",
           "Bytes the tool search index holds (0 until the first search).");
    outf(&o, "mcpgw_search_index_bytes %zu\n", v->search_index_bytes);
    traces(&o);
    process(&o, m);
    return o.p;
}
