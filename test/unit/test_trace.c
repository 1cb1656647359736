/* Traces: the W3C traceparent parser (strict, W3C's examples and its
 * invalid forms), the sampler, spans off and on, the ambient context, the
 * OTLP JSON encoding, the exporter's bounded queue, and gateway.tracing
 * with the OTEL_* variables. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/curl_uv.h"
#include "gw/otlp.h"
#include "gw/trace.h"
#include "gw/util.h"

static const char *TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

static bool parse(const char *tp, struct gw_trace_ctx *ctx)
{
    return gw_trace_parse(tp, strlen(tp), NULL, ctx);
}

START_TEST(test_parse_valid)
{
    struct gw_trace_ctx ctx;
    char out[GW_TRACEPARENT_LEN + 1];

    ck_assert(gw_trace_parse(TP, strlen(TP), "rojo=00f067aa0ba902b7", &ctx));
    ck_assert(ctx.valid);
    ck_assert_mem_eq(ctx.tp + 3, "0af7651916cd43dd8448eb211c80319c", 32);
    ck_assert_mem_eq(ctx.tp + 36, "b7ad6b7169203331", 16);
    ck_assert_uint_eq(ctx.flags, 1);
    ck_assert_str_eq(ctx.tracestate, "rojo=00f067aa0ba902b7");
    gw_trace_format(&ctx, out);
    ck_assert_str_eq(out, TP);
    /* unsampled; a later version may carry more after a '-' */
    ck_assert(parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", &ctx));
    ck_assert_uint_eq(ctx.flags, 0);
    ck_assert(parse("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-comes", &ctx));
    /* a tracestate that is not printable ASCII or is too long is dropped */
    ck_assert(gw_trace_parse(TP, strlen(TP), "a=\x01", &ctx));
    ck_assert_ptr_null(ctx.tracestate);
}
END_TEST

START_TEST(test_parse_invalid)
{
    static const char *const bad[] = {
        "",
        "00",
        "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",  /* uppercase */
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",  /* zero trace id */
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",  /* zero span id */
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  /* version ff */
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-", /* 00 is exactly 55 */
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",
        "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x", /* later version, no '-' */
        "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01",
    };
    struct gw_trace_ctx ctx;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(!parse(bad[i], &ctx), "%s", bad[i]);
        ck_assert(!ctx.valid);
    }
    ck_assert(!gw_trace_parse(NULL, 0, NULL, &ctx));
}
END_TEST

static struct gw_span *sunk[4096];
static unsigned nsunk;

static void sink(void *data, struct gw_span *s)
{
    (void)data;
    sunk[nsunk++] = s;
}

static void drain(void)
{
    for (unsigned i = 0; i < nsunk; i++)
        gw_span_free(sunk[i]);
    nsunk = 0;
}

START_TEST(test_spans_off_and_sampling)
{
    struct gw_trace_ctx remote;

    gw_trace_configure(0, NULL, NULL);
    ck_assert(!gw_trace_on());
    ck_assert_ptr_null(gw_span_root("x", GW_SPAN_SERVER, NULL));
    gw_span_str(NULL, "k", "v"); /* every call takes NULL */
    gw_span_end(NULL);

    gw_trace_configure(0, sink, NULL); /* ratio 0: no new traces */
    ck_assert_ptr_null(gw_span_root("x", GW_SPAN_SERVER, NULL));
    ck_assert(parse(TP, &remote)); /* parent-based: a sampled parent is always kept */
    struct gw_span *s = gw_span_root("x", GW_SPAN_SERVER, &remote);
    ck_assert_ptr_nonnull(s);
    ck_assert_mem_eq(s->ctx.tp + 3, remote.tp + 3, 32);
    ck_assert_mem_eq(s->parent_hex, remote.tp + 36, 16);
    ck_assert(memcmp(s->ctx.tp + 36, remote.tp + 36, 16) != 0);
    struct gw_span *c = gw_span_child("y", GW_SPAN_CLIENT, gw_span_ctx(s));
    ck_assert_mem_eq(c->ctx.tp + 3, s->ctx.tp + 3, 32);
    ck_assert_mem_eq(c->parent_hex, s->ctx.tp + 36, 16);
    gw_span_end(c);
    gw_span_end(s);
    ck_assert_uint_eq(nsunk, 2);
    remote.flags = 0; /* an unsampled parent is never kept */
    ck_assert_ptr_null(gw_span_root("x", GW_SPAN_SERVER, &remote));

    gw_trace_configure(0.5, sink, NULL);
    unsigned kept = 0;
    for (int i = 0; i < 2000; i++) {
        struct gw_span *r = gw_span_root("r", GW_SPAN_SERVER, NULL);
        kept += r != NULL;
        gw_span_free(r);
    }
    ck_assert_msg(kept > 800 && kept < 1200, "kept %u of 2000 at 0.5", kept);
    gw_trace_configure(0, NULL, NULL);
    drain();
}
END_TEST

/* A busy exporter's batch comes back at once and is taken again at once:
 * every span stays in its block until the queue runs empty and the
 * exporter trims (docs/performance.md, issue 37, fourth pass). */
START_TEST(test_spares_kept_then_trimmed)
{
    enum { N = 2000 };
    struct gw_span **out = calloc(N, sizeof *out);

    gw_trace_configure(1, sink, NULL);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            ck_assert_ptr_nonnull(out[i] = gw_span_root("r", GW_SPAN_SERVER, NULL));
        for (int i = 0; i < N; i++)
            gw_span_free(out[i]);
        ck_assert_uint_ge(gw_trace__spares(), N);
    }
    gw_trace_trim();
    ck_assert_uint_ge(gw_trace__spares(), 512);
    ck_assert_uint_lt(gw_trace__spares(), 512 + 32);
    for (int i = 0; i < N; i++) /* the blocks left, and new ones, still serve */
        ck_assert_ptr_nonnull(out[i] = gw_span_root("r", GW_SPAN_SERVER, NULL));
    for (int i = 0; i < N; i++)
        gw_span_free(out[i]);
    gw_trace_configure(0, NULL, NULL);
    ck_assert_uint_eq(gw_trace__spares(), 0);
    free(out);
    drain();
}
END_TEST

START_TEST(test_ambient_and_attrs)
{
    gw_trace_configure(1, sink, NULL);
    struct gw_span *s = gw_span_root("a", GW_SPAN_SERVER, NULL);
    const struct gw_trace_ctx *prev = gw_trace_enter(gw_span_ctx(s));
    ck_assert_ptr_null(prev);
    ck_assert_ptr_eq(gw_trace_current(), &s->ctx);
    for (int i = 0; i < GW_SPAN_ATTRS_MAX + 4; i++) { /* a key set again replaces its value */
        if (i % 2)
            gw_span_int(s, "odd", i);
        else
            gw_span_int(s, "even", i);
    }
    ck_assert_uint_eq(s->nattrs, 2);
    static const char again[] = "even"; /* the same key at another address replaces it too */
    static const char head[] = ",{\"key\":\"even\",\"value\":{\"intValue\":";
    gw_span__int(s, again, sizeof again - 1, head, sizeof head - 1, 99);
    ck_assert_uint_eq(s->nattrs, 2);
    gw_span_int(s, "evem", 1);     /* the same length, another key */
    gw_span_str(s, "odd", "x\"y"); /* a string replaces an int */
    gw_span_lit(s, "lit", "v");
    ck_assert_uint_eq(s->nattrs, 4);
    char *json = calloc(1, gw_span_json_max(s) + 1);
    *gw_span_json(s, json) = '\0';
    ck_assert_msg(strstr(json, "\"attributes\":[{\"key\":\"even\",\"value\":{\"intValue\":\"99\"}},"
                               "{\"key\":\"evem\",\"value\":{\"intValue\":\"1\"}},"
                               "{\"key\":\"odd\",\"value\":{\"stringValue\":\"x\\\"y\"}},"
                               "{\"key\":\"lit\",\"value\":{\"stringValue\":\"v\"}}]") != NULL,
                  "%s", json);
    free(json);
    gw_span_end(s); /* ended while current: no longer current */
    ck_assert_ptr_null(gw_trace_current());
    gw_trace_leave(prev);
    gw_trace_configure(0, NULL, NULL);
    drain();

    char d1[GW_TRACE_DIGEST_LEN + 1], d2[GW_TRACE_DIGEST_LEN + 1];
    gw_trace_digest("session-1", d1);
    gw_trace_digest("session-2", d2);
    ck_assert_uint_eq(strlen(d1), 32);
    ck_assert_str_ne(d1, d2);
    ck_assert(strstr(d1, "session") == NULL);
}
END_TEST

START_TEST(test_encode)
{
    struct gw_trace_ctx remote;

    gw_trace_configure(1, sink, NULL);
    ck_assert(gw_trace_parse(TP, strlen(TP), "v=1", &remote));
    struct gw_span *s = gw_span_root("tools/call \"q\"", GW_SPAN_SERVER, &remote);
    gw_span_str(s, "k", "bad \xff byte");
    gw_span_int(s, "n", 42);
    gw_span_error(s, "tool_error");
    gw_span_end(s);
    size_t len;
    char *j = gw_otlp_encode(sunk[0], 10, "svc", &len);
    ck_assert_uint_eq(strlen(j), len);
    ck_assert_ptr_nonnull(strstr(j, "\"traceId\":\"0af7651916cd43dd8448eb211c80319c\""));
    ck_assert_ptr_nonnull(strstr(j, "\"parentSpanId\":\"b7ad6b7169203331\""));
    ck_assert_ptr_nonnull(strstr(j, "\"traceState\":\"v=1\""));
    ck_assert_ptr_nonnull(strstr(j, "\"name\":\"tools/call \\\"q\\\"\",\"kind\":2"));
    ck_assert_ptr_nonnull(strstr(j, "\"stringValue\":\"bad ? byte\""));
    ck_assert_ptr_nonnull(strstr(j, "{\"key\":\"n\",\"value\":{\"intValue\":\"42\"}}"));
    ck_assert_ptr_nonnull(strstr(j, "\"status\":{\"code\":2,\"message\":\"tool_error\"}"));
    ck_assert_ptr_nonnull(
        strstr(j, "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc\"}}"));
    free(j);
    gw_trace_configure(0, NULL, NULL);
    drain();
}
END_TEST

/* What the encoder must write, byte by byte, for any string. */
static char *ref_json(char *w, const unsigned char *p, size_t n)
{
    const unsigned char *end = p + n;

    *w++ = '"';
    while (p < end) {
        size_t k;
        if (*p == '"' || *p == '\\') {
            *w++ = '\\';
            *w++ = (char)*p++;
        } else if (*p < 0x20) {
            w += sprintf(w, "\\u%04x", *p++);
        } else if (*p < 0x80) {
            *w++ = (char)*p++;
        } else if ((k = gw_utf8_seq_len(p, (size_t)(end - p) < 4 ? (size_t)(end - p) : 4)) == 0) {
            *w++ = '?';
            p++;
        } else {
            memcpy(w, p, k);
            w += k;
            p += k;
        }
    }
    *w++ = '"';
    return w;
}

/* Strings are copied eight bytes a step while none needs escaping: every
 * length around the steps, with each kind of special byte (and a valid
 * UTF-8 character) at every position, gives what byte by byte does. */
START_TEST(test_json_strings)
{
    static const char *specials[] = {"\"", "\\", "\n", "\x1f", "\x7f", "\xc3\xa9", "\xff", "\x80"};
    unsigned char in[48];
    char got[48 * 6 + 8], want[48 * 6 + 8];

    for (size_t n = 0; n < 40; n++) {
        for (size_t k = 0; k < sizeof specials / sizeof *specials; k++) {
            size_t sl = strlen(specials[k]);
            for (size_t at = 0; at <= n; at++) {
                for (size_t i = 0; i < n; i++)
                    in[i] = (unsigned char)('a' + i % 26);
                size_t len = n;
                if (at + sl <= n)
                    memcpy(in + at, specials[k], sl);
                else if (at < n)
                    continue;
                in[len] = '\0';
                size_t gl = (size_t)(gw_trace_json_strn(got, (const char *)in, len) - got);
                size_t wl = (size_t)(ref_json(want, in, len) - want);
                ck_assert_msg(gl == wl && memcmp(got, want, gl) == 0,
                              "length %zu, special %zu at %zu: %.*s, not %.*s", n, k, at, (int)gl,
                              got, (int)wl, want);
                gl = (size_t)(gw_trace_json_str(got, (const char *)in) - got);
                ck_assert(gl == wl && memcmp(got, want, gl) == 0);
            }
        }
    }
}
END_TEST

static bool lower_hex(const char *p, size_t n)
{
    bool nonzero = false;

    for (size_t i = 0; i < n; i++) {
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return false;
        nonzero |= p[i] != '0';
    }
    return nonzero;
}

/* Ids are lowercase hex, never zero, not repeated, and every hex digit
 * value turns up in every position (the encoding of each nibble). */
START_TEST(test_ids)
{
    enum { N = 512 };
    static char seen[N][GW_TRACEPARENT_LEN + 1];
    unsigned digits[48][16] = {{0}};

    gw_trace_configure(1, sink, NULL);
    for (int i = 0; i < N; i++) {
        struct gw_span *s = gw_span_root("r", GW_SPAN_SERVER, NULL);
        struct gw_trace_ctx back;
        ck_assert(lower_hex(s->ctx.tp + 3, 32) && lower_hex(s->ctx.tp + 36, 16));
        ck_assert(gw_trace_parse(s->ctx.tp, GW_TRACEPARENT_LEN, NULL, &back));
        ck_assert_str_eq(back.tp, s->ctx.tp);
        for (int d = 0; d < 48; d++) {
            char c = s->ctx.tp[d < 32 ? 3 + d : 36 + d - 32];
            digits[d][c <= '9' ? c - '0' : c - 'a' + 10]++;
        }
        for (int j = 0; j < i; j++) {
            ck_assert(memcmp(seen[j] + 3, s->ctx.tp + 3, 32) != 0);
            ck_assert(memcmp(seen[j] + 36, s->ctx.tp + 36, 16) != 0);
        }
        memcpy(seen[i], s->ctx.tp, sizeof seen[i]);
        gw_span_free(s);
    }
    for (int d = 0; d < 48; d++) {
        for (int v = 0; v < 16; v++)
            ck_assert_msg(digits[d][v] > 0, "digit %d never %x", d, v);
    }
    gw_trace_configure(0, NULL, NULL);
    drain();
}
END_TEST

/* The method and the target a span is named by, as attributes copied
 * from its name, are what setting them as strings writes. */
START_TEST(test_named_attrs)
{
    static const char *targets[] = {"echo", "a \"quoted\" tool \\ with\ttab", "caf\xc3\xa9",
                                    "\xff"};

    gw_trace_configure(1, sink, NULL);
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
        struct gw_span *a = gw_span_root_op("tools/call", targets[i], GW_SPAN_SERVER, NULL);
        struct gw_span *b = gw_span_root_op("tools/call", targets[i], GW_SPAN_SERVER, NULL);
        gw_span_method(a, "mcp.method.name");
        gw_span_target(a, "gen_ai.tool.name");
        gw_span_str(b, "mcp.method.name", "tools/call");
        gw_span_str(b, "gen_ai.tool.name", targets[i]);
        ck_assert_uint_eq(a->aj_len, b->aj_len);
        ck_assert_mem_eq(a->aj, b->aj, a->aj_len);
        gw_span_free(a);
        gw_span_free(b);
    }
    struct gw_span *c = gw_span_root("tools/list", GW_SPAN_SERVER, NULL);
    gw_span_target(c, "gen_ai.tool.name"); /* no target: nothing */
    ck_assert_uint_eq(c->nattrs, 0);
    gw_span_method(c, "mcp.method.name");
    ck_assert_uint_eq(c->nattrs, 1);
    ck_assert_mem_eq(c->aj,
                     ",{\"key\":\"mcp.method.name\",\"value\":{\"stringValue\":\"tools/list\"}}",
                     c->aj_len);
    gw_span_free(c);
    struct gw_span *t = gw_span_template(); /* no name */
    gw_span_method(t, "mcp.method.name");
    ck_assert_uint_eq(t->nattrs, 0);
    gw_span_free(t);
    gw_trace_configure(0, NULL, NULL);
    drain();
}
END_TEST

/* Times are nanoseconds since the epoch as decimal strings, whatever the
 * digits (a second's ten kept from one span to the next). */
START_TEST(test_times)
{
    static const struct {
        time_t sec;
        long nsec;
        const char *want;
    } cases[] = {
        {1764400000, 5, "1764400000000000005"},
        {1764400000, 999999999, "1764400000999999999"},
        {1764400001, 120034500, "1764400001120034500"},
        {1764400001, 0, "1764400001000000000"},
        {12, 345, "12000000345"},
        {0, 7, "7"},
    };

    gw_trace_configure(1, sink, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct gw_span *s = gw_span_root("t", GW_SPAN_SERVER, NULL);
        char *json = calloc(1, gw_span_json_max(s) + 1), want[64];
        s->start.tv_sec = s->end.tv_sec = cases[i].sec;
        s->start.tv_nsec = s->end.tv_nsec = cases[i].nsec;
        *gw_span_json(s, json) = '\0';
        snprintf(want, sizeof want, "\"startTimeUnixNano\":\"%s\",\"endTimeUnixNano\":\"%s\"",
                 cases[i].want, cases[i].want);
        ck_assert_msg(strstr(json, want) != NULL, "%s", json);
        free(json);
        gw_span_free(s);
    }
    gw_trace_configure(0, NULL, NULL);
    drain();
}
END_TEST

static bool closed;
static void on_closed(void *data)
{
    (void)data;
    closed = true;
}

/* Spans beyond the queue are dropped and counted; what is left when the
 * shutdown grace ends is dropped and counted too. */
START_TEST(test_queue_bounded)
{
    uv_loop_t loop;
    struct gw_gateway_config g = {.tracing_endpoint = "http://127.0.0.1:9/v1/traces",
                                  .tracing_sample = 1,
                                  .tracing_service_name = "t"};
    struct gw_trace_stats before, after;

    uv_loop_init(&loop);
    struct gw_curl_uv *multi = gw_curl_uv_new(&loop);
    struct gw_otlp *o = gw_otlp_new(&loop, multi, NULL);
    gw_otlp_configure(o, &g);
    ck_assert(gw_trace_on());
    gw_trace_stats(&before);
    for (int i = 0; i < GW_OTLP_QUEUE_MAX + 100; i++) /* the loop never runs: no export leaves */
        gw_span_end(gw_span_root("s", GW_SPAN_SERVER, NULL));
    ck_assert_uint_eq(gw_otlp_queued(o), GW_OTLP_QUEUE_MAX);
    gw_trace_stats(&after);
    ck_assert_uint_eq(after.dropped - before.dropped, 100);
    gw_otlp_close(o, 0, on_closed, NULL); /* the grace is over at once */
    ck_assert(!gw_trace_on());
    gw_curl_uv_close(multi, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert(closed);
    gw_trace_stats(&after);
    ck_assert_uint_eq(after.dropped - before.dropped, 100 + GW_OTLP_QUEUE_MAX);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* A span ended is written into its batch at once and its memory is free
 * for the next call's span while the batch waits for its export: the
 * queue holds text, not spans. */
START_TEST(test_queued_spans_hold_no_span)
{
    uv_loop_t loop;
    struct gw_gateway_config g = {.tracing_endpoint = "http://127.0.0.1:9/v1/traces",
                                  .tracing_sample = 1,
                                  .tracing_service_name = "t"};
    unsigned spares;

    uv_loop_init(&loop);
    struct gw_curl_uv *multi = gw_curl_uv_new(&loop);
    struct gw_otlp *o = gw_otlp_new(&loop, multi, NULL);
    gw_otlp_configure(o, &g);
    gw_span_end(gw_span_root("first", GW_SPAN_SERVER, NULL));
    spares = gw_trace__spares();
    for (int i = 0; i < 100; i++) { /* the loop never runs: no export leaves */
        struct gw_span *s = gw_span_root("s", GW_SPAN_SERVER, NULL);
        gw_span_str(s, "mcpgw.server", "echo");
        gw_span_end(s);
        ck_assert_uint_eq(gw_trace__spares(), spares);
    }
    ck_assert_uint_eq(gw_otlp_queued(o), 101);
    gw_otlp_close(o, 0, on_closed, NULL);
    gw_curl_uv_close(multi, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

static struct gw_config *load(const char *yaml)
{
    struct gw_config *c = NULL;

    ck_assert_int_eq(gw_config_load_buffer("/tmp/mcp.yaml", yaml, strlen(yaml), &c), 0);
    return c;
}

START_TEST(test_config)
{
    struct gw_config *c;

    unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
    unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
    unsetenv("OTEL_SERVICE_NAME");
    c = load("version: 1\n");
    ck_assert_ptr_null(c->gateway.tracing_endpoint); /* off by default */
    ck_assert_str_eq(c->gateway.tracing_service_name, "mcpgw");
    gw_config_unref(c);

    c = load("version: 1\ngateway:\n  tracing:\n    endpoint: http://127.0.0.1:4318/\n"
             "    sample: 0.25\n    headers: {x-key: abc}\n    service_name: gw\n");
    ck_assert(c->ok);
    ck_assert_str_eq(c->gateway.tracing_endpoint, "http://127.0.0.1:4318/v1/traces");
    ck_assert(c->gateway.tracing_sample == 0.25);
    ck_assert_uint_eq(c->gateway.ntracing_headers, 1);
    ck_assert_str_eq(c->gateway.tracing_headers[0].value, "abc");
    ck_assert_str_eq(c->gateway.tracing_service_name, "gw");
    gw_config_unref(c);

    /* not over plain HTTP to another host; a ratio is 0 to 1 */
    c = load("version: 1\ngateway:\n  tracing:\n    endpoint: http://collector.example:4318\n");
    ck_assert(!c->ok);
    gw_config_unref(c);
    c = load("version: 1\ngateway:\n  tracing:\n    endpoint: https://collector.example\n"
             "    sample: 2\n");
    ck_assert(!c->ok);
    gw_config_unref(c);

    /* the variables, when the file says nothing */
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otel.example:4318", 1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%2Cb, x = y ", 1);
    setenv("OTEL_SERVICE_NAME", "from-env", 1);
    c = load("version: 1\n");
    ck_assert(c->ok);
    ck_assert_str_eq(c->gateway.tracing_endpoint, "https://otel.example:4318/v1/traces");
    ck_assert_uint_eq(c->gateway.ntracing_headers, 2);
    ck_assert_str_eq(c->gateway.tracing_headers[0].name, "api-key");
    ck_assert_str_eq(c->gateway.tracing_headers[0].value, "a,b");
    ck_assert_str_eq(c->gateway.tracing_headers[1].value, "y");
    ck_assert_str_eq(c->gateway.tracing_service_name, "from-env");
    gw_config_unref(c);
    setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t.example/custom", 1);
    c = load("version: 1\ngateway:\n  tracing:\n    service_name: file\n");
    ck_assert_str_eq(c->gateway.tracing_endpoint, "https://t.example/custom");
    ck_assert_str_eq(c->gateway.tracing_service_name, "file");
    gw_config_unref(c);
    c = load("version: 1\ngateway:\n  tracing:\n    endpoint: ''\n"); /* the file turns it off */
    ck_assert_ptr_null(c->gateway.tracing_endpoint);
    gw_config_unref(c);
    setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://far.example/v1/traces", 1);
    c = load("version: 1\n"); /* a variable's mistake: a warning, tracing off */
    ck_assert(c->ok);
    ck_assert_ptr_null(c->gateway.tracing_endpoint);
    ck_assert_uint_ge(c->ndiags, 1);
    gw_config_unref(c);
    unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
    unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
    unsetenv("OTEL_SERVICE_NAME");
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_valid);
    tcase_add_test(tc, test_parse_invalid);
    tcase_add_test(tc, test_spans_off_and_sampling);
    tcase_add_test(tc, test_ambient_and_attrs);
    tcase_add_test(tc, test_encode);
    tcase_add_test(tc, test_json_strings);
    tcase_add_test(tc, test_ids);
    tcase_add_test(tc, test_named_attrs);
    tcase_add_test(tc, test_times);
    tcase_add_test(tc, test_queue_bounded);
    tcase_add_test(tc, test_queued_spans_hold_no_span);
    tcase_add_test(tc, test_spares_kept_then_trimmed);
    tcase_add_test(tc, test_config);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(trace_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
