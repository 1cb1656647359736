/* json_in.c — a JSON reader for the per-call paths that builds the tree
 * json_loadb would, and leaves every case it does not handle (all errors
 * among them) to json_loadb. */
#include "gw/json_in.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

/* Beyond this depth the fast path gives up; jansson's own limit (2048)
 * then applies. Messages on the call paths nest a handful of levels. */
#define FAST_MAX_DEPTH 64

/* Strings up to this size are decoded on the stack. */
#define STACK_STR 512

struct in {
    const unsigned char *p, *end;
    size_t flags;
};

static json_t *value(struct in *in, int depth);

static void skip_ws(struct in *in)
{
    while (in->p < in->end && (*in->p == ' ' || *in->p == '\n' || *in->p == '\r' || *in->p == '\t'))
        in->p++;
}

static int hex4(const unsigned char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A \uXXXX escape (and its low half) at in->p, just after the backslash
 * and 'u'; -1 where jansson would refuse it (NUL, a lone surrogate). */
static int unicode_escape(struct in *in, unsigned *cp)
{
    unsigned hi, lo;
    if (in->end - in->p < 4 || hex4(in->p, &hi) != 0)
        return -1;
    in->p += 4;
    if (hi == 0)
        return -1;
    if (hi >= 0xDC00 && hi <= 0xDFFF)
        return -1;
    if (hi >= 0xD800 && hi <= 0xDBFF) {
        if (in->end - in->p < 6 || in->p[0] != '\\' || in->p[1] != 'u' ||
            hex4(in->p + 2, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
            return -1;
        in->p += 6;
        hi = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
    }
    *cp = hi;
    return 0;
}

/* Decodes the string body after the opening quote into out (at least as
 * large as the raw text), sets *n, and leaves in->p after the closing
 * quote. */
static int string_body(struct in *in, char *out, size_t *n)
{
    size_t o = 0;
    while (in->p < in->end) {
        unsigned c = *in->p;
        if (c == '"') {
            in->p++;
            *n = o;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c >= 0x80) {
            size_t k = gw_utf8_seq_len(in->p, (size_t)(in->end - in->p));
            if (k == 0)
                return -1;
            memcpy(out + o, in->p, k);
            o += k;
            in->p += k;
            continue;
        }
        in->p++;
        if (c != '\\') {
            out[o++] = (char)c;
            continue;
        }
        if (in->p >= in->end)
            return -1;
        c = *in->p++;
        switch (c) {
        case '"':
        case '\\':
        case '/':
            out[o++] = (char)c;
            break;
        case 'b':
            out[o++] = '\b';
            break;
        case 'f':
            out[o++] = '\f';
            break;
        case 'n':
            out[o++] = '\n';
            break;
        case 'r':
            out[o++] = '\r';
            break;
        case 't':
            out[o++] = '\t';
            break;
        case 'u': {
            unsigned cp;
            if (unicode_escape(in, &cp) != 0)
                return -1;
            /* 6 or 12 escape bytes become at most 4: out stays large enough */
            o += put_utf8(out + o, cp);
            break;
        }
        default:
            return -1;
        }
    }
    return -1;
}

/* The raw length of the string at in->p (after the quote) bounds its
 * decoded length; the closing quote is found by skipping escapes. */
static size_t raw_len(const struct in *in)
{
    const unsigned char *q = in->p;
    while (q < in->end && *q != '"')
        q += (*q == '\\' && q + 1 < in->end) ? 2 : 1;
    return (size_t)(q - in->p);
}

/* The bytes a string may hold as they are: printable ASCII but the quote
 * and the backslash. Scanned four at a time through this table, a string
 * costs ~3 instructions a byte instead of ~8 (five tests per byte). */
static const unsigned char plain[256] = {
    [0x20 ... 0x21] = 1,
    [0x23 ... 0x5b] = 1,
    [0x5d ... 0x7f] = 1,
};

/* A string token; calls make(text, len, data) with the decoded text. */
static int string_token(struct in *in, int (*make)(const char *, size_t, void *), void *data)
{
    const unsigned char *q = in->p;
    char stack[STACK_STR], *out = stack;
    size_t raw, n = 0;
    int rc;

    /* Most strings are printable ASCII without escapes: such a string is
     * its own text, passed from the input without the length scan and the
     * byte-by-byte copy below (the key of a member is only read while the
     * input is). ~3,000 instructions of a 2026-07-28 tools/call. */
    while (in->end - q >= 4 && (plain[q[0]] & plain[q[1]] & plain[q[2]] & plain[q[3]]))
        q += 4;
    while (q < in->end && plain[*q])
        q++;
    if (q < in->end && *q == '"') {
        const char *text = (const char *)in->p;
        in->p = q + 1;
        return make(text, (size_t)(q - (const unsigned char *)text), data);
    }
    raw = raw_len(in);
    if (raw >= sizeof stack)
        out = gw_xmalloc(raw + 1);
    rc = string_body(in, out, &n);
    if (rc == 0)
        rc = make(out, n, data);
    if (out != stack)
        free(out);
    return rc;
}

static int make_string(const char *s, size_t n, void *data)
{
    *(json_t **)data = json_stringn_nocheck(s, n);
    return *(json_t **)data ? 0 : -1;
}

static json_t *number(struct in *in)
{
    const unsigned char *start = in->p;
    bool real = false;
    char tmp[64];
    char *endp;

    if (in->p < in->end && *in->p == '-')
        in->p++;
    if (in->p >= in->end || *in->p < '0' || *in->p > '9')
        return NULL;
    if (*in->p == '0') {
        in->p++;
    } else {
        while (in->p < in->end && *in->p >= '0' && *in->p <= '9')
            in->p++;
    }
    if (in->p < in->end && *in->p == '.') {
        real = true;
        in->p++;
        if (in->p >= in->end || *in->p < '0' || *in->p > '9')
            return NULL;
        while (in->p < in->end && *in->p >= '0' && *in->p <= '9')
            in->p++;
    }
    if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
        real = true;
        in->p++;
        if (in->p < in->end && (*in->p == '+' || *in->p == '-'))
            in->p++;
        if (in->p >= in->end || *in->p < '0' || *in->p > '9')
            return NULL;
        while (in->p < in->end && *in->p >= '0' && *in->p <= '9')
            in->p++;
    }
    size_t n = (size_t)(in->p - start);
    if (n >= sizeof tmp)
        return NULL;
    memcpy(tmp, start, n);
    tmp[n] = '\0';
    errno = 0;
    if (!real) {
        long long v = strtoll(tmp, &endp, 10);
        if (errno == ERANGE)
            return NULL;
        return json_integer(v);
    }
    double d = strtod(tmp, &endp);
    if (isinf(d))
        return NULL;
    return json_real(d);
}

static int literal(struct in *in, const char *word, size_t n)
{
    if ((size_t)(in->end - in->p) < n || memcmp(in->p, word, n) != 0)
        return -1;
    in->p += n;
    return 0;
}

struct member {
    struct in *in;
    json_t *obj;
    int depth;
};

static int make_member(const char *key, size_t n, void *data)
{
    struct member *m = data;
    size_t size = json_object_size(m->obj);
    json_t *v;

    skip_ws(m->in);
    if (m->in->p >= m->in->end || *m->in->p != ':')
        return -1;
    m->in->p++;
    v = value(m->in, m->depth);
    if (v == NULL || json_object_setn_new_nocheck(m->obj, key, n, v) != 0)
        return -1;
    /* A duplicate replaced the member before it instead of adding one:
     * seen by the size, so each key is hashed once, not twice. */
    if ((m->in->flags & JSON_REJECT_DUPLICATES) && json_object_size(m->obj) == size)
        return -1;
    return 0;
}

static json_t *object(struct in *in, int depth)
{
    struct member m = {in, json_object(), depth + 1};

    skip_ws(in);
    if (in->p < in->end && *in->p == '}') {
        in->p++;
        return m.obj;
    }
    for (;;) {
        skip_ws(in);
        if (in->p >= in->end || *in->p != '"')
            break;
        in->p++;
        if (string_token(in, make_member, &m) != 0)
            break;
        skip_ws(in);
        if (in->p < in->end && *in->p == ',') {
            in->p++;
            continue;
        }
        if (in->p < in->end && *in->p == '}') {
            in->p++;
            return m.obj;
        }
        break;
    }
    json_decref(m.obj);
    return NULL;
}

static json_t *array(struct in *in, int depth)
{
    json_t *a = json_array();

    skip_ws(in);
    if (in->p < in->end && *in->p == ']') {
        in->p++;
        return a;
    }
    for (;;) {
        json_t *v = value(in, depth + 1);
        if (v == NULL || json_array_append_new(a, v) != 0)
            break;
        skip_ws(in);
        if (in->p < in->end && *in->p == ',') {
            in->p++;
            continue;
        }
        if (in->p < in->end && *in->p == ']') {
            in->p++;
            return a;
        }
        break;
    }
    json_decref(a);
    return NULL;
}

static json_t *value(struct in *in, int depth)
{
    json_t *v = NULL;

    if (depth > FAST_MAX_DEPTH)
        return NULL;
    skip_ws(in);
    if (in->p >= in->end)
        return NULL;
    switch (*in->p) {
    case '{':
        in->p++;
        return object(in, depth);
    case '[':
        in->p++;
        return array(in, depth);
    case '"':
        in->p++;
        return string_token(in, make_string, &v) == 0 ? v : NULL;
    case 't':
        return literal(in, "true", 4) == 0 ? json_true() : NULL;
    case 'f':
        return literal(in, "false", 5) == 0 ? json_false() : NULL;
    case 'n':
        return literal(in, "null", 4) == 0 ? json_null() : NULL;
    default:
        return number(in);
    }
}

json_t *gw_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err)
{
    struct in in = {(const unsigned char *)buf, (const unsigned char *)buf + len, flags};
    json_t *v;

    if ((flags & ~(size_t)(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)) != 0 || buf == NULL)
        return json_loadb(buf, len, flags, err);
    skip_ws(&in);
    if (in.p < in.end && (*in.p == '{' || *in.p == '[' || (flags & JSON_DECODE_ANY))) {
        v = value(&in, 0);
        if (v != NULL) {
            skip_ws(&in);
            if (in.p == in.end)
                return v;
            json_decref(v);
        }
    }
    return json_loadb(buf, len, flags, err);
}
