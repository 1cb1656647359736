/* Spans, the W3C trace context and the sampler (gw/trace.h). */
#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#include "gw/sha256.h"
#include "gw/trace.h"
#include "gw/util.h"

gw_trace_sink gw_trace__sink;
static void *sink_data;
static uint64_t ratio_bound; /* a new trace is kept when its id's last 8 bytes are below */
static bool ratio_all;
static const struct gw_trace_ctx *current;
static struct gw_trace_stats stats;

/* Spans are allocated SLAB_SPANS at a time and go back to a free list as
 * they end (the exporter has written their JSON by then), so that a traced
 * call allocates nothing: a span's malloc and free were a fifth of what
 * tracing cost a call. While the exporter is busy they all stay there, so
 * at most as many as were ever out at once (the calls in flight): freeing
 * blocks under a flood would cost their pages' faults again and a walk of
 * the free list per block. gw_trace_trim, when the exporter's queue runs
 * empty, frees blocks down to SPANS_KEPT; all of them are freed when
 * tracing is turned off. */
#define SLAB_SPANS 32
#define SPANS_KEPT 512
struct span_slab {
    struct span_slab *next;
    unsigned live; /* spans out of the free list */
    bool doomed;   /* gw_trace_trim frees it */
    struct gw_span spans[SLAB_SPANS];
};
static struct span_slab *slabs;

/* A span back in its block is poisoned under AddressSanitizer, but for
 * its links (next, slab): a use after gw_span_free is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define SPAN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPAN_ASAN 1
#endif
#endif
#ifdef SPAN_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
/* the blocks are not the heap's: what their spans point to stays reachable */
#define SLAB_MAPPED(b)   __lsan_register_root_region((b), sizeof *(b))
#define SLAB_UNMAPPED(b) __lsan_unregister_root_region((b), sizeof *(b))
#define SPAN_POISON(s)                                                                             \
    ASAN_POISON_MEMORY_REGION(&(s)->ctx, sizeof *(s)-offsetof(struct gw_span, ctx))
#define SPAN_UNPOISON(s)                                                                           \
    ASAN_UNPOISON_MEMORY_REGION(&(s)->ctx, sizeof *(s)-offsetof(struct gw_span, ctx))
#else
#define SPAN_POISON(s)   ((void)(s))
#define SPAN_UNPOISON(s) ((void)(s))
#define SLAB_MAPPED(b)   ((void)(b))
#define SLAB_UNMAPPED(b) ((void)(b))
#endif

/* Blocks are mapped, not taken from the heap: the spans a busy second
 * queues (hundreds, before the first export frees any) would otherwise
 * sit between the heap's other chunks and slow later mallocs of the calls
 * themselves (callgrind: ~100 instructions a call). */
static struct span_slab *slab_map(void)
{
    void *p = mmap(NULL, sizeof(struct span_slab), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        fputs("mcpgw: out of memory\n", stderr);
        abort();
    }
    SLAB_MAPPED((struct span_slab *)p);
    return p;
}

static void slab_unmap(struct span_slab *b)
{
    SLAB_UNMAPPED(b);
    munmap(b, sizeof *b);
}

static struct gw_span *spare;
static unsigned nspare;

/* Ids are unique and random (W3C trace context: a sampler may read any
 * 8 bytes of a trace id as random), not secret: they travel in clear
 * headers and exports. xoshiro256++ seeded from the kernel's CSPRNG gives
 * 64 bits in a few instructions where the pool of getrandom bytes cost a
 * copy and a loop per id. */
static uint64_t rng[4];
static bool rng_seeded;

static uint64_t rotl(uint64_t x, int k)
{
    return x << k | x >> (64 - k);
}

static void rng_seed(void)
{
    uint8_t *p = (uint8_t *)rng;
    size_t left = sizeof rng;

    while (left > 0) {
        ssize_t got = getrandom(p, left, 0);
        if (got <= 0) { /* EINTR: try again; anything else cannot happen on Linux ≥ 3.17 */
            if (got < 0 && errno != EINTR)
                abort();
            continue;
        }
        p += got;
        left -= (size_t)got;
    }
    if ((rng[0] | rng[1] | rng[2] | rng[3]) == 0) /* the one state it cannot leave */
        rng[0] = 1;
    rng_seeded = true;
}

/* 64 random bits, never all zero (an id of zeros is invalid). */
static uint64_t rand64(void)
{
    uint64_t r, t;

    if (!rng_seeded)
        rng_seed();
    do {
        r = rotl(rng[0] + rng[3], 23) + rng[0];
        t = rng[1] << 17;
        rng[2] ^= rng[0];
        rng[3] ^= rng[1];
        rng[1] ^= rng[2];
        rng[0] ^= rng[3];
        rng[2] ^= t;
        rng[3] = rotl(rng[3], 45);
    } while (r == 0);
    return r;
}

/* Eight lowercase hex digits of x, most significant first, in a few
 * word operations: each nibble spread into a byte, then made a digit. */
static inline void hex32(uint32_t x, char *out)
{
    uint64_t t = x;

    t = (t & 0xffff0000u) << 16 | (t & 0xffffu);
    t = (t & UINT64_C(0x0000ff000000ff00)) << 8 | (t & UINT64_C(0x000000ff000000ff));
    t = (t & UINT64_C(0x00f000f000f000f0)) << 4 | (t & UINT64_C(0x000f000f000f000f));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    t = __builtin_bswap64(t); /* the most significant nibble first in memory */
#endif
    t +=
        UINT64_C(0x3030303030303030) +
        ((t + UINT64_C(0x0606060606060606)) >> 4 & UINT64_C(0x0101010101010101)) * ('a' - '0' - 10);
    memcpy(out, &t, 8);
}

/* v as 16 hex digits. */
static inline void put_id64(uint64_t v, char *hex)
{
    hex32((uint32_t)(v >> 32), hex);
    hex32((uint32_t)v, hex + 8);
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0)
            return false;
    }
    return true;
}

void gw_trace_configure(double ratio, gw_trace_sink sink, void *data)
{
    if (sink == NULL) { /* off: the spans still out free their blocks when they end */
        spare = NULL;
        nspare = 0;
        for (struct span_slab **b = &slabs; *b != NULL;) {
            struct span_slab *dead = *b;
            if (dead->live > 0) {
                b = &dead->next;
                continue;
            }
            *b = dead->next;
            slab_unmap(dead);
        }
    }
    gw_trace__sink = sink;
    sink_data = data;
    ratio_all = ratio >= 1.0;
    ratio_bound = ratio <= 0.0 ? 0
                  : ratio_all  ? UINT64_MAX
                               : (uint64_t)(ratio * 18446744073709551616.0);
}

/* Lowercase hex only (W3C: uppercase is invalid). */
static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static bool unhex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

static void tohex(const uint8_t *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        memcpy(out + 2 * i, gw_hex_pairs + 2 * in[i], 2);
}

static bool state_ok(const char *s)
{
    size_t n = 0;

    for (; s[n] != '\0'; n++) {
        if (n >= GW_TRACESTATE_MAX || s[n] < 0x20 || s[n] > 0x7e)
            return false;
    }
    return n > 0;
}

bool gw_trace_parse(const char *tp, size_t len, const char *tracestate, struct gw_trace_ctx *out)
{
    uint8_t version, trace_id[16], span_id[8];

    memset(out, 0, sizeof *out);
    if (tp == NULL || len < GW_TRACEPARENT_LEN || !unhex(tp, &version, 1) || version == 0xff)
        return false;
    if (version == 0 ? len != GW_TRACEPARENT_LEN : len > GW_TRACEPARENT_LEN && tp[55] != '-')
        return false;
    if (tp[2] != '-' || tp[35] != '-' || tp[52] != '-' || !unhex(tp + 3, trace_id, 16) ||
        !unhex(tp + 36, span_id, 8) || !unhex(tp + 53, &out->flags, 1) || all_zero(trace_id, 16) ||
        all_zero(span_id, 8)) {
        memset(out, 0, sizeof *out);
        return false;
    }
    out->valid = true;
    memcpy(out->tp, "00", 2); /* a later version's fields beyond these are not passed on */
    memcpy(out->tp + 2, tp + 2, GW_TRACEPARENT_LEN - 2);
    out->tp[GW_TRACEPARENT_LEN] = '\0';
    out->tracestate = tracestate != NULL && state_ok(tracestate) ? tracestate : NULL;
    return true;
}

void gw_trace_format(const struct gw_trace_ctx *ctx, char out[GW_TRACEPARENT_LEN + 1])
{
    memcpy(out, ctx->tp, GW_TRACEPARENT_LEN + 1);
}

void gw_trace_meta(json_t *meta, const struct gw_trace_ctx *ctx)
{
    char tp[GW_TRACEPARENT_LEN + 1];

    gw_trace_format(ctx, tp);
    json_object_set_new(meta, "traceparent", json_stringn(tp, GW_TRACEPARENT_LEN));
    if (ctx->tracestate != NULL)
        json_object_set_new(meta, "tracestate", json_string(ctx->tracestate));
    else
        json_object_del(meta, "tracestate");
}

static bool in_arena(const struct gw_span *s, const char *p)
{
    return p >= s->arena && p < s->arena + sizeof s->arena;
}

/* Room for n bytes in the span's arena, else on the heap (freed with it). */
static char *span_alloc(struct gw_span *s, size_t n)
{
    char *p;

    if (n > sizeof s->arena - s->arena_used)
        return gw_xmalloc(n);
    p = s->arena + s->arena_used;
    s->arena_used += n;
    return p;
}

static char *span_dup(struct gw_span *s, const char *v)
{
    size_t n = strlen(v) + 1;

    return memcpy(span_alloc(s, n), v, n);
}

static void span_release(const struct gw_span *s, const char *p)
{
    if (p != NULL && !in_arena(s, p))
        free((char *)p);
}

/* "method target", or the method alone, as a JSON string. */
static void span_name(struct gw_span *s, const char *method, const char *target)
{
    size_t m = strlen(method), t = target != NULL ? strlen(target) : 0;
    char *end = gw_trace_json_strn(s->name = span_alloc(s, 6 * (m + t + 1) + 2), method, m);

    s->target_at = 0;
    if (target != NULL) {
        char *space = end - 1; /* the target's opening quote over the method's closing one */
        end = gw_trace_json_strn(space, target, t);
        *space = ' ';
        s->target_at = (size_t)(space - s->name);
    }
    s->name_len = (size_t)(end - s->name);
}

static struct gw_span *span_get(void)
{
    struct gw_span *s;

    if (spare == NULL) {
        struct span_slab *b = slab_map();
        b->live = 0;
        b->doomed = false;
        b->next = slabs;
        slabs = b;
        for (unsigned i = 0; i < SLAB_SPANS; i++) {
            b->spans[i].slab = b;
            b->spans[i].next = spare;
            spare = &b->spans[i];
            SPAN_POISON(spare);
        }
        nspare += SLAB_SPANS;
    }
    s = spare;
    spare = s->next;
    nspare--;
    s->slab->live++;
    SPAN_UNPOISON(s);
    return s;
}

/* Frees a block whose spans are all back, taking them off the free list. */
static void slab_free(struct span_slab *b)
{
    struct span_slab **link = &slabs;

    for (struct gw_span **sp = &spare; *sp != NULL;) {
        if ((*sp)->slab == b) {
            *sp = (*sp)->next;
            nspare--;
        } else {
            sp = &(*sp)->next;
        }
    }
    while (*link != b)
        link = &(*link)->next;
    *link = b->next;
    slab_unmap(b);
}

static void span_put(struct gw_span *s)
{
    struct span_slab *b = s->slab;

    if (b == NULL) { /* a template */
        free(s);
        return;
    }
    b->live--;
    SPAN_POISON(s);
    if (gw_trace__sink != NULL) {
        s->next = spare;
        spare = s;
        nspare++;
    }
    if (b->live == 0 && gw_trace__sink == NULL)
        slab_free(b);
}

unsigned gw_trace__spares(void)
{
    return nspare;
}

void gw_trace_trim(void)
{
    struct span_slab **link = &slabs;
    unsigned excess = nspare > SPANS_KEPT ? nspare - SPANS_KEPT : 0;
    bool any = false;

    for (struct span_slab *b = slabs; b != NULL && excess >= SLAB_SPANS; b = b->next) {
        if (b->live == 0) {
            b->doomed = true;
            excess -= SLAB_SPANS;
            any = true;
        }
    }
    if (!any)
        return;
    for (struct gw_span **sp = &spare; *sp != NULL;) {
        if ((*sp)->slab->doomed) {
            *sp = (*sp)->next;
            nspare--;
        } else {
            sp = &(*sp)->next;
        }
    }
    while (*link != NULL) {
        struct span_slab *b = *link;
        if (b->doomed) {
            *link = b->next;
            slab_unmap(b);
        } else {
            link = &b->next;
        }
    }
}

/* A span of no attributes; what else is read later the caller sets: a
 * span is not zeroed. */
static struct gw_span *span_fresh(struct gw_span *s)
{
    s->next = NULL;
    s->status = GW_SPAN_UNSET;
    s->name = s->tracestate = s->status_message = NULL;
    s->target_at = 0;
    s->nattrs = 0;
    s->klens = 0;
    s->aj = s->room;
    s->aj_len = 0;
    s->aj_cap = sizeof s->room;
    s->arena_used = 0;
    return s;
}

struct gw_span *gw_span_template(void)
{
    struct gw_span *s;

    if (gw_trace__sink == NULL)
        return NULL;
    s = span_fresh(gw_xmalloc(sizeof *s)); /* held long: not from a slab */
    s->slab = NULL;
    return s;
}

/* A span of `trace_id` (NULL: the parent's). Only what is read later is
 * set: a span is not zeroed. */
static struct gw_span *span_new(const char *method, const char *target, enum gw_span_kind kind,
                                const struct gw_trace_ctx *parent, const uint64_t *trace_id)
{
    struct gw_span *s = span_fresh(span_get());

    s->kind = kind;
    span_name(s, method, target);
    clock_gettime(CLOCK_REALTIME, &s->start);
    s->ctx.valid = true;
    s->ctx.flags = 1;
    s->ctx.tracestate = NULL;
    memcpy(s->ctx.tp, "00-", 3);
    if (parent != NULL) {
        memcpy(s->ctx.tp + 3, parent->tp + 3, 32);
        memcpy(s->parent_hex, parent->tp + 36, 16);
        s->has_parent = true;
        if (parent->tracestate != NULL)
            s->ctx.tracestate = s->tracestate = span_dup(s, parent->tracestate);
    } else {
        put_id64(trace_id[0], s->ctx.tp + 3);
        put_id64(trace_id[1], s->ctx.tp + 19);
        s->has_parent = false;
    }
    put_id64(rand64(), s->ctx.tp + 36);
    s->ctx.tp[35] = '-';
    memcpy(s->ctx.tp + 52, "-01", 4);
    return s;
}

/* The ratio is applied to the trace id's last 8 bytes, random in every
 * W3C-conforming id, so that every service sampling by the same rule keeps
 * the same traces. */
static bool keep_new_trace(const uint64_t *trace_id)
{
    return ratio_all || trace_id[1] < ratio_bound;
}

struct gw_span *gw_span_root_op(const char *method, const char *target, enum gw_span_kind kind,
                                const struct gw_trace_ctx *remote)
{
    uint64_t trace_id[2];

    if (gw_trace__sink == NULL)
        return NULL;
    if (remote != NULL && remote->valid)
        return remote->flags & 1 ? span_new(method, target, kind, remote, NULL) : NULL;
    trace_id[0] = rand64();
    trace_id[1] = rand64();
    return keep_new_trace(trace_id) ? span_new(method, target, kind, NULL, trace_id) : NULL;
}

struct gw_span *gw_span_root(const char *name, enum gw_span_kind kind,
                             const struct gw_trace_ctx *remote)
{
    return gw_span_root_op(name, NULL, kind, remote);
}

struct gw_span *gw_span_child_op(const char *method, const char *target, enum gw_span_kind kind,
                                 const struct gw_trace_ctx *parent)
{
    if (gw_trace__sink == NULL || parent == NULL || !parent->valid || !(parent->flags & 1))
        return NULL;
    return span_new(method, target, kind, parent, NULL);
}

struct gw_span *gw_span_child(const char *name, enum gw_span_kind kind,
                              const struct gw_trace_ctx *parent)
{
    return gw_span_child_op(name, NULL, kind, parent);
}

void gw_span_error(struct gw_span *s, const char *message)
{
    if (s == NULL)
        return;
    s->status = GW_SPAN_ERROR;
    free(s->status_message);
    s->status_message = message != NULL ? gw_xstrdup(message) : NULL;
}

void gw_span_end(struct gw_span *s)
{
    if (s == NULL)
        return;
    clock_gettime(CLOCK_REALTIME, &s->end);
    if (s->end.tv_sec < s->start.tv_sec ||
        (s->end.tv_sec == s->start.tv_sec && s->end.tv_nsec < s->start.tv_nsec))
        s->end = s->start;  /* the clock was set back */
    if (current == &s->ctx) /* never left current past its end */
        current = NULL;
    stats.spans++;
    if (gw_trace__sink == NULL) { /* turned off meanwhile */
        stats.dropped++;
        gw_span_free(s);
        return;
    }
    gw_trace__sink(sink_data, s);
}

void gw_span_free(struct gw_span *s)
{
    if (s == NULL)
        return;
    if (s->aj != s->room)
        free(s->aj);
    span_release(s, s->name);
    span_release(s, s->tracestate);
    free(s->status_message);
    span_put(s);
}

const struct gw_trace_ctx *gw_trace_current(void)
{
    return current;
}

const struct gw_trace_ctx *gw_trace_enter(const struct gw_trace_ctx *ctx)
{
    const struct gw_trace_ctx *prev = current;

    current = ctx;
    return prev;
}

void gw_trace_leave(const struct gw_trace_ctx *prev)
{
    current = prev;
}

void gw_trace_save(struct gw_trace_saved *to, const struct gw_trace_ctx *from)
{
    gw_trace_saved_free(to);
    if (from == NULL || !from->valid)
        return;
    to->ctx = *from;
    to->tracestate = from->tracestate != NULL ? gw_xstrdup(from->tracestate) : NULL;
    to->ctx.tracestate = to->tracestate;
}

void gw_trace_saved_free(struct gw_trace_saved *s)
{
    free(s->tracestate); /* the rest is read only while valid: every call passes here */
    s->tracestate = NULL;
    s->ctx.tracestate = NULL;
    s->ctx.valid = false;
}

const struct gw_trace_ctx *gw_trace_saved_ctx(const struct gw_trace_saved *s)
{
    return s->ctx.valid ? &s->ctx : NULL;
}

void gw_trace_digest(const char *id, char out[GW_TRACE_DIGEST_LEN + 1])
{
    static const char label[] = "mcpgw mcp.session.id";
    struct gw_sha256 c;
    unsigned char d[GW_SHA256_LEN];

    gw_sha256_init(&c);
    gw_sha256_update(&c, label, sizeof label);
    gw_sha256_update(&c, id, strlen(id));
    gw_sha256_final(&c, d);
    tohex(d, GW_TRACE_DIGEST_LEN / 2, out);
    out[GW_TRACE_DIGEST_LEN] = '\0';
}

void gw_trace_stats(struct gw_trace_stats *out)
{
    *out = stats;
}

void gw_trace_count(uint64_t exported, uint64_t dropped, uint64_t failures)
{
    stats.exported += exported;
    stats.dropped += dropped;
    stats.failures += failures;
}
