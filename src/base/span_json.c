/* A span's attributes and the span itself as OTLP JSON (gw/trace.h).
 *
 * What a traced call costs the loop is mostly the JSON of its spans, so
 * each part is written once, when it is known, and copied as it is after:
 * an attribute is escaped and encoded when it is set (its key is a literal
 * whose length the compiler counted), the name when the span starts, and
 * the exporter lays the ids, times and these encodings end to end into room
 * reserved for the whole batch, with no bound check per piece. */
#include <stdlib.h>
#include <string.h>

#include "gw/trace.h"
#include "gw/util.h"

#define PUT_LIT(w, lit) ((w) = (char *)memcpy((w), "" lit, sizeof(lit) - 1) + sizeof(lit) - 1)

static char *put_bytes(char *w, const char *s, size_t n)
{
    return (char *)memcpy(w, s, n) + n;
}

/* Bytes a JSON string cannot hold as they are: controls, '"', '\\', and
 * the bytes of non-ASCII characters (checked as UTF-8). */
static const bool special[256] = {
    [0 ... 0x1f] = true,
    ['"'] = true,
    ['\\'] = true,
    [0x80 ... 0xff] = true,
};

#define ONES  UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Whether any of the 8 bytes in x is special. A byte below 0x20, or one
 * equal to '"' or '\\' (zero once xor'd), borrows into its high bit; a
 * borrow passed on to the next byte may flag that one too, but only when a
 * special byte is there anyway. */
static inline bool any_special(uint64_t x)
{
    return (((x - ONES * 0x20) | ((x ^ ONES * '"') - ONES) | ((x ^ ONES * '\\') - ONES) | x) &
            HIGHS) != 0;
}

char *gw_trace_json_strn(char *w, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    unsigned char c;
    uint64_t x;

    *w++ = '"';
    /* eight bytes a step while none needs escaping, then the last eight
     * (overlapping) if they do not either: most values are plain ASCII */
    while (end - p >= 8) {
        memcpy(&x, p, 8);
        if (any_special(x))
            break;
        memcpy(w, &x, 8);
        w += 8;
        p += 8;
    }
    if (end - p < 8 && p - (const unsigned char *)s >= 8 - (end - p) && p < end) {
        memcpy(&x, end - 8, 8);
        if (!any_special(x)) {
            memcpy(w - (8 - (end - p)), &x, 8);
            w += end - p;
            p = end;
        }
    }
    while (p < end) {
        c = *p;
        if (!special[c]) {
            *w++ = (char)c;
            p++;
        } else if (c >= 0x80) {
            size_t k = gw_utf8_seq_len(p, (size_t)(end - p) < 4 ? (size_t)(end - p) : 4);
            if (k == 0)
                *w++ = '?';
            else
                w = put_bytes(w, (const char *)p, k);
            p += k == 0 ? 1 : k;
        } else if (c == '"' || c == '\\') {
            *w++ = '\\';
            *w++ = (char)c;
            p++;
        } else {
            w = put_bytes(w, "\\u00", 4);
            w = put_bytes(w, gw_hex_pairs + 2 * c, 2);
            p++;
        }
    }
    *w++ = '"';
    return w;
}

char *gw_trace_json_str(char *w, const char *s)
{
    return gw_trace_json_strn(w, s, strlen(s));
}

static size_t str_bound(const char *s)
{
    return s != NULL ? 6 * strlen(s) + 2 : 0;
}

/* The two hex digits of each byte value. */
const char gw_hex_pairs[513] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
                               "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
                               "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
                               "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
                               "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
                               "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
                               "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
                               "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                            "25262728293031323334353637383940414243444546474849"
                            "50515253545556575859606162636465666768697071727374"
                            "75767778798081828384858687888990919293949596979899";

/* Decimal digits, two a step. */
static char *put_dec(char *w, uint64_t v)
{
    char num[24];
    size_t n = sizeof num;

    while (v >= 100) {
        n -= 2;
        memcpy(num + n, pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        n -= 2;
        memcpy(num + n, pairs + 2 * v, 2);
    } else {
        num[--n] = (char)('0' + v);
    }
    return put_bytes(w, num + n, sizeof num - n);
}

/* ---- attributes ---- */

/* Room for n more bytes of the span's attributes, on the heap once they
 * outgrow the span. */
static void attr_grow(struct gw_span *s, size_t n)
{
    size_t cap = 2 * (s->aj_len + n);

    if (s->aj == s->room) {
        s->aj = gw_xmalloc(cap);
        memcpy(s->aj, s->room, s->aj_len);
    } else {
        s->aj = gw_xrealloc(s->aj, cap);
    }
    s->aj_cap = cap;
}

/* Removes the value set before under `key`, if any. */
static void attr_unset(struct gw_span *s, const char *key, size_t klen)
{
    for (unsigned i = 0; i < s->nattrs; i++) {
        const struct gw_span_attr a = s->attrs[i];
        if (a.key != key && (a.klen != klen || memcmp(a.key, key, klen) != 0))
            continue;
        memmove(s->aj + a.off, s->aj + a.off + a.len, s->aj_len - a.off - a.len);
        s->aj_len -= a.len;
        for (unsigned j = i + 1; j < s->nattrs; j++) {
            s->attrs[j].off -= a.len;
            s->attrs[j - 1] = s->attrs[j];
        }
        s->nattrs--;
        return;
    }
}

static inline uint64_t key_bit(const char *key, size_t klen)
{
    /* keys of one length are common (mcpgw.server, mcpgw.dialog): a byte
     * from the middle tells most of them apart */
    return UINT64_C(1) << ((klen + 7u * (unsigned char)key[klen / 2]) & 63);
}

/* Where the key's encoding goes (at most n bytes); NULL when the span
 * holds as many attributes as it may. */
static inline char *attr_begin(struct gw_span *s, const char *key, size_t klen, size_t n)
{
    uint64_t bit = key_bit(key, klen);

    if (s->klens & bit) /* a key no bit of which is set yet is new: most are */
        attr_unset(s, key, klen);
    if (s->nattrs >= GW_SPAN_ATTRS_MAX)
        return NULL;
    if (s->aj_len + n > s->aj_cap)
        attr_grow(s, n);
    s->klens |= bit;
    s->attrs[s->nattrs] = (struct gw_span_attr){key, (uint32_t)klen, (uint32_t)s->aj_len, 0};
    return s->aj + s->aj_len;
}

static void attr_end(struct gw_span *s, char *w)
{
    struct gw_span_attr *a = &s->attrs[s->nattrs++];

    a->len = (uint32_t)(w - s->aj) - a->off;
    s->aj_len = (size_t)(w - s->aj);
}

void gw_span__raw(struct gw_span *s, const char *key, size_t klen, const char *enc, size_t n)
{
    char *w;

    if (s != NULL && (w = attr_begin(s, key, klen, n)) != NULL)
        attr_end(s, put_bytes(w, enc, n));
}

void gw_span__str(struct gw_span *s, const char *key, size_t klen, const char *head, size_t hlen,
                  const char *value)
{
    char *w;
    size_t n;

    if (s == NULL || value == NULL ||
        (w = attr_begin(s, key, klen, hlen + 6 * (n = strlen(value)) + 4)) == NULL)
        return;
    w = gw_trace_json_strn(put_bytes(w, head, hlen), value, n);
    PUT_LIT(w, "}}");
    attr_end(s, w);
}

void gw_span__named(struct gw_span *s, const char *key, size_t klen, const char *head, size_t hlen,
                    bool target)
{
    const char *from; /* the value's first byte after its opening quote */
    size_t n;         /* up to its closing quote, excluded */
    char *w;

    if (s == NULL || s->name == NULL || (target && s->target_at == 0))
        return;
    from = target ? s->name + s->target_at + 1 : s->name + 1;
    n = target || s->target_at == 0 ? s->name_len - (size_t)(from - s->name) - 1 : s->target_at - 1;
    if ((w = attr_begin(s, key, klen, hlen + n + 4)) == NULL)
        return;
    w = put_bytes(w, head, hlen);
    *w++ = '"';
    w = put_bytes(w, from, n);
    PUT_LIT(w, "\"}}");
    attr_end(s, w);
}

void gw_span_attrs_from(struct gw_span *s, const struct gw_span *from)
{
    size_t base;

    if (s == NULL || from == NULL)
        return;
    /* no bit in common: none of from's keys is set on s (most spans take
     * their template first) */
    for (unsigned i = 0; (s->klens & from->klens) != 0 && i < from->nattrs; i++) {
        if (s->klens & key_bit(from->attrs[i].key, from->attrs[i].klen))
            attr_unset(s, from->attrs[i].key, from->attrs[i].klen);
    }
    if (s->nattrs + from->nattrs > GW_SPAN_ATTRS_MAX)
        return;
    if (s->aj_len + from->aj_len > s->aj_cap)
        attr_grow(s, from->aj_len);
    base = s->aj_len;
    memcpy(s->aj + base, from->aj, from->aj_len);
    s->aj_len += from->aj_len;
    memcpy(s->attrs + s->nattrs, from->attrs, from->nattrs * sizeof *from->attrs);
    for (unsigned i = s->nattrs; i < s->nattrs + from->nattrs; i++)
        s->attrs[i].off += (uint32_t)base;
    s->nattrs += from->nattrs;
    s->klens |= from->klens;
}

/* int64 is a string in proto3 JSON. */
void gw_span__int(struct gw_span *s, const char *key, size_t klen, const char *head, size_t hlen,
                  int64_t value)
{
    char *w;

    if (s == NULL || (w = attr_begin(s, key, klen, hlen + 26)) == NULL)
        return;
    w = put_bytes(w, head, hlen);
    *w++ = '"';
    if (value < 0)
        *w++ = '-';
    w = put_dec(w, value < 0 ? -(uint64_t)value : (uint64_t)value);
    PUT_LIT(w, "\"}}");
    attr_end(s, w);
}

/* ---- the span ---- */

/* An id's hex, quoted: written when its span started. */
static char *put_id(char *w, const char *hex, size_t n)
{
    *w++ = '"';
    w = put_bytes(w, hex, n);
    *w++ = '"';
    return w;
}

/* Three decimal digits of each number below 1,000. */
static char triples[3000];

static void triples_init(void)
{
    for (unsigned i = 0; i < 1000; i++) {
        triples[3 * i] = (char)('0' + i / 100);
        triples[3 * i + 1] = (char)('0' + i / 10 % 10);
        triples[3 * i + 2] = (char)('0' + i % 10);
    }
}

/* A time in nanoseconds, a fixed64 (a string). The spans of a batch were
 * mostly ended within the same second: its ten digits are kept; the nine
 * of the nanoseconds are three steps of three. */
static char *put_ts(char *w, const struct timespec *t)
{
    static time_t last_sec;
    static char sec_digits[10];
    uint32_t sub = (uint32_t)t->tv_nsec, hi, mid;

    *w++ = '"';
    if (t->tv_sec < 1000000000 || t->tv_sec > 9999999999 || sub >= 1000000000u) {
        w = put_dec(w, (uint64_t)t->tv_sec * 1000000000u + sub); /* not this century's */
    } else {
        if (t->tv_sec != last_sec) {
            if (triples[2] == '\0')
                triples_init();
            put_dec(sec_digits, (uint64_t)t->tv_sec);
            last_sec = t->tv_sec;
        }
        hi = sub / 1000000u;
        sub -= hi * 1000000u;
        mid = sub / 1000u;
        sub -= mid * 1000u;
        memcpy(w, sec_digits, 10);
        memcpy(w + 10, triples + 3 * hi, 3);
        memcpy(w + 13, triples + 3 * mid, 3);
        memcpy(w + 16, triples + 3 * sub, 3);
        w += 19;
    }
    *w++ = '"';
    return w;
}

size_t gw_span_json_max(const struct gw_span *s)
{
    return 320 + s->name_len + s->aj_len + str_bound(s->tracestate) + str_bound(s->status_message);
}

char *gw_span_json(const struct gw_span *s, char *w)
{
    PUT_LIT(w, "{\"traceId\":");
    w = put_id(w, s->ctx.tp + 3, 32);
    PUT_LIT(w, ",\"spanId\":");
    w = put_id(w, s->ctx.tp + 36, 16);
    if (s->has_parent) {
        PUT_LIT(w, ",\"parentSpanId\":");
        w = put_id(w, s->parent_hex, 16);
    }
    if (s->tracestate != NULL) {
        PUT_LIT(w, ",\"traceState\":");
        w = gw_trace_json_str(w, s->tracestate);
    }
    PUT_LIT(w, ",\"name\":");
    w = put_bytes(w, s->name, s->name_len);
    PUT_LIT(w, ",\"kind\":");
    *w++ = (char)('0' + s->kind);
    PUT_LIT(w, ",\"startTimeUnixNano\":");
    w = put_ts(w, &s->start);
    PUT_LIT(w, ",\"endTimeUnixNano\":");
    w = put_ts(w, &s->end);
    PUT_LIT(w, ",\"attributes\":[");
    if (s->aj_len > 0)
        w = put_bytes(w, s->aj + 1, s->aj_len - 1); /* the first one's ',' left out */
    PUT_LIT(w, "],\"status\":{");
    if (s->status != GW_SPAN_UNSET) {
        PUT_LIT(w, "\"code\":");
        *w++ = (char)('0' + s->status);
        if (s->status_message != NULL) {
            PUT_LIT(w, ",\"message\":");
            w = gw_trace_json_str(w, s->status_message);
        }
    }
    PUT_LIT(w, "}}");
    return w;
}
