/* The OTLP/HTTP JSON exporter of traces (gw/otlp.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/http_xfer.h"
#include "gw/json_out.h"
#include "gw/log.h"
#include "gw/otlp.h"
#include "gw/trace.h"
#include "gw/util.h"
#include "gw/version.h"

#define TICK_MS        1000
#define BACKOFF_MAX_MS 32000

/* A batch: the JSON of its spans, each written when it ended (with the
 * span still in the cache, which is then free for the next call at once)
 * and separated by ','. The export sends it between the envelope's head
 * and tail. */
struct batch {
    struct batch *next;
    struct gw_jbuf text;
    unsigned n;
};

/* Where the body being sent is up to. */
enum { PART_HEAD, PART_SPANS, PART_TAIL, PART_DONE };

struct gw_otlp {
    struct gw_http_xfer x; /* first: the transfer's callbacks get it */
    uv_loop_t *loop;
    struct gw_curl_uv *multi;
    struct gw_problems *problems;
    uv_timer_t tick;     /* the next export: a second after the first span, or a backoff */
    uv_timer_t deadline; /* closing: when what is left is dropped */
    unsigned open_handles;
    /* the configuration in force (copies) */
    char *url;
    char *service;
    char **headers; /* "Name: value" lines */
    size_t nheaders;
    bool loopback_only;
    /* the queue, the batch in flight or waiting for its retry, and the
     * buffer of the last one sent, kept for the next */
    struct batch *head, *tail;
    unsigned queued;
    struct batch *batch;
    struct batch *spare;
    /* the body as it is being sent */
    struct gw_jbuf envelope; /* its head, with service.name as the send began */
    int part;
    size_t off;
    bool sending;
    uint64_t backoff_ms;
    /* closing */
    bool closing;
    uint64_t deadline_ms;
    void (*closed_cb)(void *data);
    void *closed_data;
};

static const struct gw_http_xfer_ops xfer_ops;

/* ---- the JSON encoding (OTLP/HTTP, proto3 JSON mapping) ---- */

#define PUT_LIT(w, lit) ((w) = (char *)memcpy((w), "" lit, sizeof(lit) - 1) + sizeof(lit) - 1)

static char *put_attr_str(char *w, const char *key, const char *value)
{
    PUT_LIT(w, "{\"key\":\"");
    w = (char *)memcpy(w, key, strlen(key)) + strlen(key);
    PUT_LIT(w, "\",\"value\":{\"stringValue\":");
    w = gw_trace_json_str(w, value);
    PUT_LIT(w, "}}");
    return w;
}

static const char scope[] = "]},\"scopeSpans\":[{\"scope\":{\"name\":\"mcpgw\",\"version\":"
                            "\"" GW_VERSION "\"},\"spans\":[";
static const char tail[] = "]}]}]}";

/* The envelope's head, up to the first span. */
static void put_head(struct gw_jbuf *b, const char *service)
{
    char *w;

    gw_jbuf_reserve(b, 128 + sizeof scope + 6 * (strlen(service) + strlen(GW_VERSION)));
    w = b->p + b->len;
    PUT_LIT(w, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
    w = put_attr_str(w, "service.name", service);
    *w++ = ',';
    w = put_attr_str(w, "service.version", GW_VERSION);
    w = (char *)memcpy(w, scope, sizeof scope - 1) + sizeof scope - 1;
    b->len = (size_t)(w - b->p);
}

/* A span's JSON after what b holds, a ',' before it unless it is the first. */
static void put_span(struct gw_jbuf *b, const struct gw_span *s, bool first)
{
    char *w;

    gw_jbuf_reserve(b, gw_span_json_max(s) + 1);
    w = b->p + b->len;
    if (!first)
        *w++ = ',';
    b->len = (size_t)(gw_span_json(s, w) - b->p);
}

char *gw_otlp_encode(const struct gw_span *spans, unsigned max, const char *service_name,
                     size_t *len)
{
    struct gw_jbuf b = {0};
    unsigned i = 0;

    put_head(&b, service_name);
    for (const struct gw_span *s = spans; s != NULL && i < max; s = s->next, i++)
        put_span(&b, s, i == 0);
    gw_jbuf_put(&b, tail, sizeof tail - 1);
    return gw_jbuf_take(&b, len);
}

/* libcurl's read callback: the envelope's head, the batch, the tail. */
static size_t body_read(void *data, char *buf, size_t room)
{
    struct gw_otlp *o = data;
    size_t done = 0;

    while (done < room && o->part != PART_DONE) {
        const char *from = o->part == PART_HEAD    ? o->envelope.p
                           : o->part == PART_SPANS ? o->batch->text.p
                                                   : tail;
        size_t len = o->part == PART_HEAD    ? o->envelope.len
                     : o->part == PART_SPANS ? o->batch->text.len
                                             : sizeof tail - 1;
        size_t n = len - o->off < room - done ? len - o->off : room - done;

        memcpy(buf + done, from + o->off, n);
        done += n;
        o->off += n;
        if (o->off == len) {
            o->part++;
            o->off = 0;
        }
    }
    return done;
}

static void body_rewind(void *data)
{
    struct gw_otlp *o = data;

    o->part = PART_HEAD;
    o->off = 0;
}

/* ---- the queue ---- */

/* A batch's buffer larger than this (spans with long attributes) is not
 * kept for the next. */
#define SPARE_MAX (4u << 20)
/* A span's JSON is 400-900 bytes with the attributes mcpgw sets. */
#define BATCH_SPAN_BYTES 1024

static void batch_destroy(struct batch *b)
{
    if (b != NULL)
        free(b->text.p);
    free(b);
}

/* Kept as the spare when there is none, freed otherwise. */
static void batch_free(struct gw_otlp *o, struct batch *b)
{
    if (o->spare == NULL && b->text.cap <= SPARE_MAX) {
        b->text.len = 0;
        b->n = 0;
        b->next = NULL;
        o->spare = b;
        return;
    }
    batch_destroy(b);
}

static void free_queue(struct gw_otlp *o)
{
    while (o->head != NULL) {
        struct batch *next = o->head->next;
        batch_free(o, o->head);
        o->head = next;
    }
    o->tail = NULL;
    o->queued = 0;
}

static void drop_batch(struct gw_otlp *o, bool count)
{
    if (o->batch == NULL)
        return;
    if (count)
        gw_trace_count(0, o->batch->n, 0);
    batch_free(o, o->batch);
    o->batch = NULL;
    if (o->head == NULL)
        gw_trace_trim();
}

static void free_body(struct gw_otlp *o)
{
    free(o->envelope.p);
    o->envelope = (struct gw_jbuf){0};
}

static void export_next(struct gw_otlp *o);

static void on_tick(uv_timer_t *t)
{
    export_next(t->data);
}

static void arm(struct gw_otlp *o, uint64_t ms)
{
    if (!uv_is_active((uv_handle_t *)&o->tick) || ms == 0)
        uv_timer_start(&o->tick, on_tick, ms, 0);
}

static void sink(void *data, struct gw_span *s)
{
    struct gw_otlp *o = data;
    struct batch *b = o->tail;

    if (o->queued >= GW_OTLP_QUEUE_MAX) {
        gw_trace_count(0, 1, 0);
        gw_span_free(s);
        return;
    }
    if (b == NULL || b->n >= GW_OTLP_BATCH_MAX) {
        b = o->spare;
        o->spare = NULL;
        if (b == NULL) {
            /* room for a batch of spans of usual size at once: grown by
             * doubling, it would be copied ten times on its way there */
            b = gw_xcalloc(1, sizeof *b);
            gw_jbuf_reserve(&b->text, GW_OTLP_BATCH_MAX * BATCH_SPAN_BYTES);
        }
        if (o->tail != NULL)
            o->tail->next = b;
        else
            o->head = b;
        o->tail = b;
    }
    put_span(&b->text, s, b->n == 0);
    gw_span_free(s);
    b->n++;
    o->queued++;
    if (o->sending || o->batch != NULL)
        return; /* its done handler or its retry comes back to the queue */
    arm(o, o->queued >= GW_OTLP_BATCH_MAX ? 0 : TICK_MS);
}

/* ---- export ---- */

static void set_problem(struct gw_otlp *o, const char *why)
{
    char *msg = gw_xasprintf("traces could not be exported to %s: %s; spans are kept for a "
                             "while and then dropped (mcpgw_trace_spans_dropped_total)",
                             o->url != NULL ? o->url : "the collector", why);
    struct gw_problem p = {.id = GW_OTLP_PROBLEM,
                           .severity = GW_SEV_WARNING,
                           .scope = GW_SCOPE_WORKSPACE,
                           .message = msg};

    if (o->problems != NULL)
        gw_problems_set(o->problems, &p);
    free(msg);
}

static struct curl_slist *request_headers(const struct gw_otlp *o)
{
    struct curl_slist *l = gw_http_xfer_line(NULL, "Content-Type: application/json");

    l = gw_http_xfer_line(l, "Expect:");
    for (size_t i = 0; i < o->nheaders; i++)
        l = gw_http_xfer_line(l, o->headers[i]);
    return l;
}

static void finish_close(struct gw_otlp *o);

static void take_batch(struct gw_otlp *o)
{
    o->batch = o->head;
    o->head = o->head->next;
    o->batch->next = NULL;
    if (o->head == NULL)
        o->tail = NULL;
    o->queued -= o->batch->n;
}

static void send_failed(struct gw_otlp *o, const char *why)
{
    gw_trace_count(0, 0, 1);
    set_problem(o, why);
}

/* Sends the waiting batch, or the next one off the queue. */
static void export_next(struct gw_otlp *o)
{
    char why[256];
    uint64_t timeout = GW_OTLP_TIMEOUT_MS;
    int rc;

    if (o->sending)
        return;
    if (o->batch == NULL && o->head == NULL) {
        if (o->closing)
            finish_close(o);
        return;
    }
    if (o->url == NULL) { /* off with spans left: nowhere to send them */
        gw_trace_count(0, o->queued, 0);
        free_queue(o);
        drop_batch(o, true);
        if (o->closing)
            finish_close(o);
        return;
    }
    if (o->closing) {
        uint64_t now = gw_now_ms();
        if (now >= o->deadline_ms) {
            finish_close(o);
            return;
        }
        if (o->deadline_ms - now < timeout)
            timeout = o->deadline_ms - now;
    }
    if (gw_curl_uv_open(o->multi, why, sizeof why) != 0) {
        send_failed(o, why);
        if (o->batch == NULL)
            take_batch(o);
        drop_batch(o, true);
        arm(o, TICK_MS);
        return;
    }
    if (o->batch == NULL)
        take_batch(o);
    struct gw_http_xfer_request req = {
        .method = GW_HTTP_XFER_POST,
        .url = o->url,
        .hdrs = request_headers(o),
        .read = body_read,
        .rewind = body_rewind,
        .read_data = o,
        .connect_ms = timeout,
        .timeout_ms = timeout,
        .body_max = 0,
        .event_max = 0,
        .loopback_only = o->loopback_only,
        .user_agent = "mcpgw/" GW_VERSION,
    };
    o->envelope.len = 0;
    put_head(&o->envelope, o->service);
    body_rewind(o);
    o->x.ops = &xfer_ops;
    rc = gw_http_xfer_begin(&o->x, o->multi, &req);
    if (rc != 0) {
        send_failed(o, uv_strerror(rc));
        drop_batch(o, true);
        arm(o, TICK_MS);
        return;
    }
    o->sending = true;
}

static int x_start(struct gw_http_xfer *x)
{
    (void)x;
    return 0;
}

static int x_event(struct gw_http_xfer *x, const struct gw_sse_event *ev)
{
    (void)x;
    (void)ev;
    return 1;
}

/* OTLP/HTTP: these answers mean "try again later". */
static bool retryable(long status)
{
    return status == 429 || status == 502 || status == 503 || status == 504;
}

static void x_done(struct gw_http_xfer *x, CURLcode rc)
{
    struct gw_otlp *o = (struct gw_otlp *)x;
    char why[CURL_ERROR_SIZE + 64];
    uint64_t wait;

    o->sending = false;
    if (rc == CURLE_OK && gw_http_xfer_ok(x)) {
        gw_trace_count(o->batch->n, 0, 0);
        drop_batch(o, false);
        o->backoff_ms = 0;
        if (o->problems != NULL)
            gw_problems_clear(o->problems, GW_OTLP_PROBLEM);
        if (o->closing || o->queued >= GW_OTLP_BATCH_MAX)
            export_next(o);
        else if (o->head != NULL)
            arm(o, TICK_MS);
        else
            free_body(o);
        return;
    }
    if (rc != CURLE_OK)
        snprintf(why, sizeof why, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
    else
        snprintf(why, sizeof why, "the collector answered %ld", x->status);
    gw_utf8_trim(why);
    send_failed(o, why);
    if (rc != CURLE_OK || retryable(x->status)) {
        o->backoff_ms = o->backoff_ms == 0 ? TICK_MS : o->backoff_ms * 2;
        if (o->backoff_ms > BACKOFF_MAX_MS)
            o->backoff_ms = BACKOFF_MAX_MS;
        wait = x->retry_after > o->backoff_ms && x->retry_after <= 60000 ? x->retry_after
                                                                         : o->backoff_ms;
    } else {
        drop_batch(o, true); /* the collector refused it: sending it again would not help */
        wait = TICK_MS;
    }
    if (o->closing && gw_now_ms() + wait >= o->deadline_ms) {
        finish_close(o);
        return;
    }
    arm(o, wait);
}

static const struct gw_http_xfer_ops xfer_ops = {x_start, x_event, x_done};

/* ---- life ---- */

struct gw_otlp *gw_otlp_new(uv_loop_t *loop, struct gw_curl_uv *multi, struct gw_problems *problems)
{
    struct gw_otlp *o = gw_xcalloc(1, sizeof *o);

    o->loop = loop;
    o->multi = multi;
    o->problems = problems;
    uv_timer_init(loop, &o->tick);
    uv_timer_init(loop, &o->deadline);
    o->tick.data = o->deadline.data = o;
    o->open_handles = 2;
    return o;
}

static void free_config(struct gw_otlp *o)
{
    free(o->url);
    free(o->service);
    for (size_t i = 0; i < o->nheaders; i++)
        free(o->headers[i]);
    free(o->headers);
    o->url = o->service = NULL;
    o->headers = NULL;
    o->nheaders = 0;
}

void gw_otlp_configure(struct gw_otlp *o, const struct gw_gateway_config *g)
{
    if (o->closing)
        return;
    free_config(o);
    if (g->tracing_endpoint == NULL) {
        gw_trace_configure(0, NULL, NULL);
        if (o->problems != NULL)
            gw_problems_clear(o->problems, GW_OTLP_PROBLEM);
        if (o->head != NULL || o->batch != NULL)
            arm(o, 0); /* dropped: nowhere to send them */
        return;
    }
    o->url = gw_xstrdup(g->tracing_endpoint);
    o->service = gw_xstrdup(g->tracing_service_name);
    o->loopback_only = strncmp(o->url, "http://", 7) == 0;
    o->headers = gw_xcalloc(g->ntracing_headers + 1, sizeof *o->headers);
    for (size_t i = 0; i < g->ntracing_headers; i++)
        o->headers[o->nheaders++] =
            gw_xasprintf("%s: %s", g->tracing_headers[i].name, g->tracing_headers[i].value);
    gw_trace_configure(g->tracing_sample, sink, o);
}

unsigned gw_otlp_queued(const struct gw_otlp *o)
{
    return o->queued + (o->batch != NULL ? o->batch->n : 0);
}

static void on_handle_closed(uv_handle_t *h)
{
    struct gw_otlp *o = h->data;
    void (*cb)(void *) = o->closed_cb;
    void *data = o->closed_data;

    if (--o->open_handles > 0)
        return;
    free_config(o);
    free(o);
    if (cb != NULL)
        cb(data);
}

static void finish_close(struct gw_otlp *o)
{
    unsigned left = gw_otlp_queued(o);

    if (o->open_handles < 2 || uv_is_closing((uv_handle_t *)&o->tick))
        return;
    if (o->sending) {
        o->sending = false;
        gw_http_xfer_end(&o->x, o->multi, CURLE_ABORTED_BY_CALLBACK);
        return; /* x_done comes back here */
    }
    if (left > 0) {
        gw_trace_count(0, left, 0);
        gw_log(GW_LOG_WARN, "spans not exported before the shutdown grace ended", NULL);
    }
    free_queue(o);
    drop_batch(o, false);
    free_body(o);
    batch_destroy(o->spare);
    o->spare = NULL;
    gw_http_xfer_cleanup(&o->x);
    uv_close((uv_handle_t *)&o->tick, on_handle_closed);
    uv_close((uv_handle_t *)&o->deadline, on_handle_closed);
}

static void on_deadline(uv_timer_t *t)
{
    finish_close(t->data);
}

void gw_otlp_close(struct gw_otlp *o, uint64_t deadline_ms, void (*cb)(void *data), void *data)
{
    uint64_t now = gw_now_ms();

    gw_trace_configure(0, NULL, NULL);
    o->closing = true;
    o->deadline_ms = deadline_ms;
    o->closed_cb = cb;
    o->closed_data = data;
    uv_timer_start(&o->deadline, on_deadline, deadline_ms > now ? deadline_ms - now : 0, 0);
    uv_timer_stop(&o->tick);
    if (!o->sending)
        export_next(o);
}
