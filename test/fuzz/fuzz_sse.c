/* libFuzzer target for the Server-Sent Events parser (include/gw/sse.h).
 *
 * The parser's contract is that bytes may be split anywhere, so the oracle
 * is differential: the input is fed once whole and once in pieces whose
 * sizes come from the input's first byte, and both runs must dispatch the
 * same events, end with the same last event id and retry, and agree on
 * GW_SSE_E_TOO_BIG. A small event bound is used on some inputs so the
 * limit path is reached with short inputs. */
#include "gw/sse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"

/* Every event of one run, serialised as type NUL len data id NUL. */
struct trace {
    char *p;
    size_t len, cap;
    size_t events;
};

static void trace_put(struct trace *t, const void *p, size_t n)
{
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (cap < t->len + n)
            cap *= 2;
        t->p = realloc(t->p, cap);
        if (t->p == NULL)
            abort();
        t->cap = cap;
    }
    memcpy(t->p + t->len, p, n);
    t->len += n;
}

static int on_event(void *data, const struct gw_sse_event *ev)
{
    struct trace *t = data;

    /* The header promises a NUL after data and non-NULL strings. */
    if (ev->type == NULL || ev->data == NULL || ev->id == NULL || ev->data[ev->data_len] != '\0')
        abort();
    trace_put(t, ev->type, strlen(ev->type) + 1);
    trace_put(t, &ev->data_len, sizeof ev->data_len);
    trace_put(t, ev->data, ev->data_len);
    trace_put(t, ev->id, strlen(ev->id) + 1);
    t->events++;
    return 0;
}

/* Feeds `buf` in pieces of the sizes cycled from `sizes` (0: all at once).
 * Returns the first error, as a caller that stops at it would see. */
static int run(struct gw_sse *p, const uint8_t *buf, size_t len, const size_t *sizes,
               struct trace *t)
{
    size_t off = 0, k = 0;

    while (off < len) {
        size_t n = sizes ? sizes[k++ % 4] : len - off;
        if (n > len - off)
            n = len - off;
        int rc = gw_sse_feed(p, (const char *)buf + off, n, on_event, t);
        if (rc != 0)
            return rc;
        off += n;
    }
    return 0;
}

static void finish(struct gw_sse *p, struct trace *t, int rc)
{
    int64_t retry = gw_sse_retry_ms(p);
    const char *id = gw_sse_last_event_id(p);

    trace_put(t, &rc, sizeof rc);
    /* After an error the state is frozen mid-stream: only events count. */
    if (rc == 0) {
        trace_put(t, &retry, sizeof retry);
        trace_put(t, id, strlen(id) + 1);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    gw_log_set_level(GW_LOG_ERROR);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t pieces[8][4] = {{1, 1, 1, 1}, {1, 2, 3, 5},   {2, 2, 2, 2},  {3, 1, 4, 1},
                                        {7, 1, 2, 9}, {16, 3, 1, 64}, {64, 1, 1, 1}, {5, 8, 13, 2}};
    struct trace whole = {0}, split = {0};

    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    data++, size--;
    /* Bit 3 picks a small bound so short inputs reach GW_SSE_E_TOO_BIG. */
    size_t max = (mode & 8) ? 64 + (size_t)(mode >> 4) * 16 : 0;

    struct gw_sse *a = gw_sse_new(max), *b = gw_sse_new(max);
    int ra = run(a, data, size, NULL, &whole);
    int rb = run(b, data, size, pieces[mode & 7], &split);
    finish(a, &whole, ra);
    finish(b, &split, rb);
    if (whole.len != split.len || memcmp(whole.p, split.p, whole.len) != 0) {
        fprintf(stderr,
                "fuzz_sse: whole feed (%zu events, rc %d) and split feed (%zu events, rc %d)"
                " disagree\n",
                whole.events, ra, split.events, rb);
        abort();
    }
    /* A failed parser refuses every later feed with the same code. */
    if (ra == GW_SSE_E_TOO_BIG && gw_sse_feed(a, "\n\n", 2, on_event, &whole) != GW_SSE_E_TOO_BIG)
        abort();
    gw_sse_free(a);
    gw_sse_free(b);
    free(whole.p);
    free(split.p);
    return 0;
}
