/* gw_json_dump: json_dumps(JSON_COMPACT) without its per-container cost.
 * Output rules copied from jansson 2.14 dump.c: insertion order, no
 * spaces, '/' and DEL not escaped, control characters as \b \f \n \r \t
 * or \u00XX (upper-case hex), every other code point as raw UTF-8. One
 * difference: a real has the fewest digits that read back as it. */
#include "gw/json_out.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

/* Deeper trees go to json_dumps, whose loop check tells a cycle (which
 * must fail) from mere depth; parsed JSON is at most 2048 deep. */
#define MAX_DEPTH 256

static void reserve(struct gw_jbuf *b, size_t n)
{
    if (b->len + n + 1 <= b->cap)
        return;
    while (b->len + n + 1 > b->cap)
        b->cap = b->cap ? b->cap * 2 : 256;
    b->p = gw_xrealloc(b->p, b->cap);
}

static void put(struct gw_jbuf *b, const char *s, size_t n)
{
    reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static const char *short_escape(unsigned char c)
{
    switch (c) {
    case '"':
        return "\\\"";
    case '\\':
        return "\\\\";
    case '\b':
        return "\\b";
    case '\f':
        return "\\f";
    case '\n':
        return "\\n";
    case '\r':
        return "\\r";
    case '\t':
        return "\\t";
    default:
        return NULL;
    }
}

/* Appends `s` quoted; false on invalid UTF-8 (json_dumps fails there). */
static bool put_string(struct gw_jbuf *b, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + n, *run = s;

    reserve(b, n + 2);
    b->p[b->len++] = '"';
    /* Printable ASCII without quote or backslash, most keys and values, is
     * written as it is in one copy; the loop below starts where it ends. */
    while (s < end && *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
        s++;
    if (s == end) {
        memcpy(b->p + b->len, str, n);
        b->len += n;
        b->p[b->len++] = '"';
        return true;
    }
    while (s < end) {
        if (*s >= 0x20 && *s != '"' && *s != '\\') {
            size_t k = *s < 0x80 ? 1 : gw_utf8_seq_len(s, (size_t)(end - s));
            if (k == 0)
                return false;
            s += k;
            continue;
        }
        put(b, (const char *)run, (size_t)(s - run));
        const char *e = short_escape(*s);
        if (e != NULL) {
            put(b, e, 2);
        } else {
            char u[8];
            snprintf(u, sizeof u, "\\u%04X", *s);
            put(b, u, 6);
        }
        run = ++s;
    }
    put(b, (const char *)run, (size_t)(s - run));
    put(b, "\"", 1);
    return true;
}

/* Appends what json_dumps gives for a value this writer does not format
 * itself (a real). */
static bool put_dumped(struct gw_jbuf *b, const json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);

    if (s == NULL)
        return false;
    put(b, s, strlen(s));
    free(s);
    return true;
}

/* A real in jansson's form with the fewest significant digits (15 to 17)
 * that read back as the same double: jansson's 17 write a score rounded
 * to 3.491 as 3.4910000000000001, the same number in more bytes. */
static bool put_real(struct gw_jbuf *b, const json_t *j)
{
    for (int digits = 15; digits < 17; digits++) {
        char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(digits));
        bool exact = s != NULL && strtod(s, NULL) == json_real_value(j);

        if (exact)
            put(b, s, strlen(s));
        free(s);
        if (exact)
            return true;
    }
    return put_dumped(b, j);
}

static bool put_value(struct gw_jbuf *b, const json_t *j, int depth);

static bool put_object(struct gw_jbuf *b, const json_t *j, int depth)
{
    bool first = true;

    put(b, "{", 1);
    for (void *it = json_object_iter((json_t *)j); it != NULL;
         it = json_object_iter_next((json_t *)j, it)) {
        if (!first)
            put(b, ",", 1);
        first = false;
        if (!put_string(b, json_object_iter_key(it), json_object_iter_key_len(it)))
            return false;
        put(b, ":", 1);
        if (!put_value(b, json_object_iter_value(it), depth + 1))
            return false;
    }
    put(b, "}", 1);
    return true;
}

static bool put_array(struct gw_jbuf *b, const json_t *j, int depth)
{
    size_t n = json_array_size(j);

    put(b, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            put(b, ",", 1);
        if (!put_value(b, json_array_get(j, i), depth + 1))
            return false;
    }
    put(b, "]", 1);
    return true;
}

static bool put_value(struct gw_jbuf *b, const json_t *j, int depth)
{
    char num[32];

    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return depth < MAX_DEPTH && put_object(b, j, depth);
    case JSON_ARRAY:
        return depth < MAX_DEPTH && put_array(b, j, depth);
    case JSON_STRING:
        return put_string(b, json_string_value(j), json_string_length(j));
    case JSON_INTEGER:
        put(b, num, gw_fmt_int(num, json_integer_value(j)));
        return true;
    case JSON_REAL:
        return put_real(b, j);
    case JSON_TRUE:
        put(b, "true", 4);
        return true;
    case JSON_FALSE:
        put(b, "false", 5);
        return true;
    case JSON_NULL:
        put(b, "null", 4);
        return true;
    }
    return false;
}

void gw_jbuf_reserve(struct gw_jbuf *b, size_t n)
{
    reserve(b, n);
}

int gw_jbuf_string(struct gw_jbuf *b, const char *s, size_t n)
{
    return put_string(b, s, n) ? 0 : -1;
}

void gw_jbuf_int(struct gw_jbuf *b, json_int_t v)
{
    char num[32];

    put(b, num, gw_fmt_int(num, v));
}

int gw_jbuf_value(struct gw_jbuf *b, const json_t *j)
{
    size_t mark = b->len;

    if (put_value(b, j, 0))
        return 0;
    b->len = mark;
    return put_dumped(b, j) ? 0 : -1;
}

char *gw_jbuf_take(struct gw_jbuf *b, size_t *len)
{
    char *p;

    reserve(b, 0);
    b->p[b->len] = '\0';
    p = b->p;
    if (len != NULL)
        *len = b->len;
    *b = (struct gw_jbuf){0};
    return p;
}

char *gw_json_dump(const json_t *j, size_t *len)
{
    struct gw_jbuf b = {0};

    if (!json_is_object(j) && !json_is_array(j))
        return NULL;
    if (!put_value(&b, j, 0)) {
        free(b.p);
        /* Too deep, a cycle, or not UTF-8: jansson decides. */
        char *s = json_dumps(j, JSON_COMPACT);
        if (s != NULL && len != NULL)
            *len = strlen(s);
        return s;
    }
    b.p[b.len] = '\0';
    if (len != NULL)
        *len = b.len;
    return b.p;
}
