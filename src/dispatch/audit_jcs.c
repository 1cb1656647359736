/* RFC 8785 (JSON Canonicalization Scheme) for the audit log's argument
 * digests: object members sorted by their names' UTF-16 code units, no
 * whitespace, strings escaped as ECMAScript's JSON.stringify does, numbers
 * as ECMAScript's Number.prototype.toString writes them. A caller can
 * recompute a digest from its own arguments with any JCS library. */
#include "gw/audit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/json_out.h"
#include "gw/sha256.h"
#include "gw/util.h"

static void put_string(struct gw_jbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";

    gw_jbuf_lit(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *e = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                                    : NULL;
        if (e != NULL) {
            gw_jbuf_put(b, e, 2);
        } else if (c < 0x20) {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            gw_jbuf_put(b, u, 6);
        } else {
            gw_jbuf_put(b, (const char *)&c, 1);
        }
    }
    gw_jbuf_lit(b, "\"");
}

/* ECMAScript's shortest round-trip form of a finite double. */
static void put_real(struct gw_jbuf *b, double v)
{
    char e[40], digits[24], out[64];
    int exp = 0, k = 0, n, o = 0;

    if (v == 0) {
        gw_jbuf_lit(b, "0");
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    for (const char *p = e; *p != 'e'; p++) {
        if (*p >= '0' && *p <= '9')
            digits[k++] = *p;
    }
    while (k > 1 && digits[k - 1] == '0')
        k--;
    digits[k] = '\0';
    exp = atoi(strchr(e, 'e') + 1);
    n = exp + 1;
    if (v < 0)
        out[o++] = '-';
    if (k <= n && n <= 21) {
        o += snprintf(out + o, sizeof out - (size_t)o, "%s%.*s", digits, n - k,
                      "000000000000000000000");
    } else if (0 < n && n <= 21) {
        o += snprintf(out + o, sizeof out - (size_t)o, "%.*s.%s", n, digits, digits + n);
    } else if (-6 < n && n <= 0) {
        o += snprintf(out + o, sizeof out - (size_t)o, "0.%.*s%s", -n, "000000", digits);
    } else {
        o += snprintf(out + o, sizeof out - (size_t)o, "%c%s%s%se%c%d", digits[0], k > 1 ? "." : "",
                      digits + 1, "", n - 1 < 0 ? '-' : '+', abs(n - 1));
    }
    gw_jbuf_put(b, out, (size_t)o);
}

/* The UTF-16 code units of UTF-8 `s`, for the member order. */
static size_t utf16(const char *s, uint16_t *out, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;

    while (*p && n + 2 <= max) {
        uint32_t cp;
        if (*p < 0x80)
            cp = *p++;
        else if ((*p & 0xE0) == 0xC0)
            cp = (uint32_t)(*p++ & 0x1F) << 6, cp |= *p ? (*p++ & 0x3Fu) : 0;
        else if ((*p & 0xF0) == 0xE0) {
            cp = (uint32_t)(*p++ & 0x0F) << 12;
            for (int i = 1; i >= 0 && *p; i--)
                cp |= (uint32_t)(*p++ & 0x3F) << (6 * i);
        } else {
            cp = (uint32_t)(*p++ & 0x07) << 18;
            for (int i = 2; i >= 0 && *p; i--)
                cp |= (uint32_t)(*p++ & 0x3F) << (6 * i);
        }
        if (cp >= 0x10000) {
            out[n++] = (uint16_t)(0xD800 + ((cp - 0x10000) >> 10));
            out[n++] = (uint16_t)(0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            out[n++] = (uint16_t)cp;
        }
    }
    return n;
}

static int by_utf16(const void *x, const void *y)
{
    const char *a = *(const char *const *)x, *b = *(const char *const *)y;
    uint16_t ua[256], ub[256];
    size_t na = utf16(a, ua, 256), nb = utf16(b, ub, 256);

    for (size_t i = 0; i < na && i < nb; i++) {
        if (ua[i] != ub[i])
            return ua[i] < ub[i] ? -1 : 1;
    }
    if (na != nb)
        return na < nb ? -1 : 1;
    return strcmp(a, b);
}

static bool put_value(struct gw_jbuf *b, const json_t *v, int depth)
{
    const char **keys;
    size_t n, i;
    json_t *x;

    if (depth > 64)
        return false;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        n = json_object_size(v);
        keys = gw_xmalloc((n ? n : 1) * sizeof *keys);
        i = 0;
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it))
            keys[i++] = json_object_iter_key(it);
        qsort(keys, n, sizeof *keys, by_utf16);
        gw_jbuf_lit(b, "{");
        for (i = 0; i < n; i++) {
            if (i > 0)
                gw_jbuf_lit(b, ",");
            put_string(b, keys[i], strlen(keys[i]));
            gw_jbuf_lit(b, ":");
            if (!put_value(b, json_object_get(v, keys[i]), depth + 1)) {
                free(keys);
                return false;
            }
        }
        free(keys);
        gw_jbuf_lit(b, "}");
        return true;
    case JSON_ARRAY:
        gw_jbuf_lit(b, "[");
        json_array_foreach(v, i, x)
        {
            if (i > 0)
                gw_jbuf_lit(b, ",");
            if (!put_value(b, x, depth + 1))
                return false;
        }
        gw_jbuf_lit(b, "]");
        return true;
    case JSON_STRING:
        put_string(b, json_string_value(v), json_string_length(v));
        return true;
    case JSON_INTEGER:
        gw_jbuf_int(b, json_integer_value(v));
        return true;
    case JSON_REAL:
        if (!isfinite(json_real_value(v)))
            return false;
        put_real(b, json_real_value(v));
        return true;
    case JSON_TRUE:
        gw_jbuf_lit(b, "true");
        return true;
    case JSON_FALSE:
        gw_jbuf_lit(b, "false");
        return true;
    default:
        gw_jbuf_lit(b, "null");
        return true;
    }
}

char *gw_audit_canonical(const json_t *v, size_t *len)
{
    struct gw_jbuf b = {0};

    if (!put_value(&b, v, 0)) {
        free(gw_jbuf_take(&b, NULL));
        return NULL;
    }
    return gw_jbuf_take(&b, len);
}

/* The top-level keys of `args` as the JSON text of an array, in the
 * canonical order: written once, where a JSON array of strings cost a
 * jansson value per key, their serialisation and their freeing. */
static char *keys_text(const json_t *args)
{
    size_t n = json_object_size(args), i = 0;
    const char **names = gw_xmalloc((n ? n : 1) * sizeof *names);
    struct gw_jbuf b = {0};

    for (void *it = json_object_iter((json_t *)args); it && args;
         it = json_object_iter_next((json_t *)args, it))
        names[i++] = json_object_iter_key(it);
    qsort(names, i, sizeof *names, by_utf16);
    gw_jbuf_lit(&b, "[");
    for (size_t k = 0; k < i; k++) {
        size_t mark = b.len;
        if (b.len > 1)
            gw_jbuf_lit(&b, ",");
        if (gw_jbuf_string(&b, names[k], strlen(names[k])) != 0)
            b.len = mark;
    }
    gw_jbuf_lit(&b, "]");
    free(names);
    return gw_jbuf_take(&b, NULL);
}

size_t gw_audit_args_digest(const json_t *args, char hex[65], char **keys)
{
    static const char digits[] = "0123456789abcdef";
    json_t *empty = args == NULL ? json_object() : NULL;
    size_t len = 0;
    char *text = gw_audit_canonical(args ? args : empty, &len);
    unsigned char d[GW_SHA256_LEN];
    struct gw_sha256 h;

    gw_sha256_init(&h);
    gw_sha256_update(&h, text ? text : "", text ? len : 0);
    gw_sha256_final(&h, d);
    for (size_t i = 0; i < GW_SHA256_LEN; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
    free(text);
    json_decref(empty);
    if (keys != NULL)
        *keys = keys_text(args);
    return len;
}
