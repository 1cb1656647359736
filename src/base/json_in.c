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

/* Every byte JSON allows between tokens is below '!', every byte a token
 * starts with above it: compact text (most of it) leaves after one test. */
static void skip_ws(struct in *in)
{
    while (in->p < in->end && *in->p <= ' ' &&
           (*in->p == ' ' || *in->p == '\n' || *in->p == '\r' || *in->p == '\t'))
        in->p++;
}

/* The byte `c` after any whitespace, consumed; false when another is there. */
static bool take(struct in *in, unsigned char c)
{
    skip_ws(in);
    if (in->p >= in->end || *in->p != c)
        return false;
    in->p++;
    return true;
}

/* After a member or an element: 1 at ',' (another follows), 0 at `close`
 * (the container ends), -1 at anything else. */
static int next_or_end(struct in *in, unsigned char close)
{
    if (take(in, ','))
        return 1;
    return take(in, close) ? 0 : -1;
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

    if (!take(m->in, ':'))
        return -1;
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

    if (take(in, '}'))
        return m.obj;
    for (;;) {
        int more;

        if (!take(in, '"') || string_token(in, make_member, &m) != 0 ||
            (more = next_or_end(in, '}')) < 0)
            break;
        if (more == 0)
            return m.obj;
    }
    json_decref(m.obj);
    return NULL;
}

static json_t *array(struct in *in, int depth)
{
    json_t *a = json_array();

    if (take(in, ']'))
        return a;
    for (;;) {
        json_t *v = value(in, depth + 1);
        int more;

        if (v == NULL || json_array_append_new(a, v) != 0 || (more = next_or_end(in, ']')) < 0)
            break;
        if (more == 0)
            return a;
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

/* ---- reading known members in place ---- */

struct fields_in {
    struct in in;
    struct gw_json_slot *slots, *cur;
    size_t nslots;
    char *room;
    size_t room_left;
};

struct key_match {
    const struct gw_json_field *fields;
    size_t n;
    const struct gw_json_field *hit;
};

static int match_key(const char *key, size_t n, void *data)
{
    struct key_match *m = data;

    for (size_t i = 0; i < m->n; i++) {
        const struct gw_json_field *f = &m->fields[i];
        if (f->key_len == n && memcmp(f->key, key, n) == 0) {
            m->hit = f;
            return 0;
        }
    }
    return -1;
}

/* A key written as one of the fields' (printable ASCII, no escapes) is
 * that field's: compared where it stands, without the scan of its bytes
 * (the io.modelcontextprotocol/ keys are ~40 bytes). Any other spelling
 * goes through string_token. */
static int key_in_place(struct in *in, struct key_match *m)
{
    size_t left = (size_t)(in->end - in->p);

    for (size_t i = 0; i < m->n; i++) {
        const struct gw_json_field *f = &m->fields[i];
        if (f->key_len < left && in->p[f->key_len] == '"' && in->p[0] == (unsigned char)f->key[0] &&
            memcmp(in->p, f->key, f->key_len) == 0) {
            m->hit = f;
            in->p += f->key_len + 1;
            return 0;
        }
    }
    return -1;
}

/* The decoded string into the room, NUL-terminated. It holds no NUL:
 * string_token refuses "\u0000" (jansson's without JSON_ALLOW_NUL) and
 * raw control bytes, which leaves them to the parse. */
static int keep_string(const char *s, size_t n, void *data)
{
    struct fields_in *fi = data;

    if (n >= fi->room_left)
        return -1;
    memcpy(fi->room, s, n);
    fi->room[n] = '\0';
    fi->cur->str = fi->room;
    fi->cur->len = n;
    fi->room += n + 1;
    fi->room_left -= n + 1;
    return 0;
}

static int read_members(struct fields_in *fi, const struct gw_json_field *fields, size_t n,
                        int depth);

static int read_value(struct fields_in *fi, const struct gw_json_field *f, int depth)
{
    struct in *in = &fi->in;
    struct gw_json_slot *slot;

    if (f->slot >= fi->nslots || fi->slots[f->slot].seen)
        return -1; /* a repeated member: JSON_REJECT_DUPLICATES refuses it */
    slot = &fi->slots[f->slot];
    slot->seen = true;
    skip_ws(in);
    if (in->p >= in->end)
        return -1;
    switch (f->want) {
    case GW_JSON_STRING:
        if (*in->p != '"')
            return -1;
        in->p++;
        fi->cur = slot;
        return string_token(in, keep_string, fi);
    case GW_JSON_TREE:
        slot->tree = value(in, depth);
        return slot->tree != NULL ? 0 : -1;
    case GW_JSON_OBJECT:
        if (*in->p != '{' || depth > FAST_MAX_DEPTH)
            return -1;
        in->p++;
        return read_members(fi, f->sub, f->nsub, depth);
    }
    return -1;
}

/* After an object's '{': its members, up to and past its '}'. */
static int read_members(struct fields_in *fi, const struct gw_json_field *fields, size_t n,
                        int depth)
{
    struct in *in = &fi->in;

    if (take(in, '}'))
        return 0;
    for (;;) {
        struct key_match m = {fields, n, NULL};
        int more;

        if (!take(in, '"') || (key_in_place(in, &m) != 0 && string_token(in, match_key, &m) != 0) ||
            !take(in, ':') || read_value(fi, m.hit, depth + 1) != 0 ||
            (more = next_or_end(in, '}')) < 0)
            return -1;
        if (more == 0)
            return 0;
    }
}

void gw_json_slots_release(struct gw_json_slot *slots, size_t nslots)
{
    for (size_t i = 0; i < nslots; i++)
        json_decref(slots[i].tree);
    memset(slots, 0, nslots * sizeof *slots);
}

int gw_json_read_fields(const char *buf, size_t len, const struct gw_json_field *fields,
                        size_t nfields, struct gw_json_slot *slots, size_t nslots, char *room,
                        size_t room_len)
{
    struct fields_in fi = {
        {(const unsigned char *)buf, (const unsigned char *)buf + len, JSON_REJECT_DUPLICATES},
        slots,
        NULL,
        nslots,
        room,
        room_len};

    memset(slots, 0, nslots * sizeof *slots);
    if (buf == NULL)
        return -1;
    skip_ws(&fi.in);
    if (fi.in.p < fi.in.end && *fi.in.p == '{') {
        fi.in.p++;
        if (read_members(&fi, fields, nfields, 0) == 0) {
            skip_ws(&fi.in);
            if (fi.in.p == fi.in.end)
                return 0;
        }
    }
    gw_json_slots_release(slots, nslots);
    return -1;
}
