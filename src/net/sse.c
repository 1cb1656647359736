/* The Server-Sent Events parser: a line assembler feeding the standard's
 * field rules. The pending line and the data buffer share one bound, so a
 * stream can never make the parser hold more than `max` bytes of input. */
#include "gw/sse.h"

#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

#define KEEP_CAP (256u << 10) /* a buffer larger than this is freed once empty */

static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};

struct gw_sse {
    size_t max;
    char *line; /* the line being assembled, without its end */
    size_t line_len, line_cap;
    char *data; /* `data` values joined, each followed by "\n" */
    size_t data_len, data_cap;
    char *type; /* NULL: "message" */
    char *id;   /* the last event id buffer; NULL: "" */
    int64_t retry;
    int bom_seen; /* bytes of a leading BOM matched; 3 once decided */
    int after_cr; /* the last byte was a CR: a LF right after it is skipped */
    int failed;
};

struct gw_sse *gw_sse_new(size_t max_event)
{
    struct gw_sse *p = gw_xcalloc(1, sizeof(*p));
    p->max = max_event ? max_event : GW_SSE_MAX_EVENT;
    p->retry = -1;
    return p;
}

void gw_sse_free(struct gw_sse *p)
{
    if (!p)
        return;
    free(p->line);
    free(p->data);
    free(p->type);
    free(p->id);
    free(p);
}

const char *gw_sse_last_event_id(const struct gw_sse *p)
{
    return p->id ? p->id : "";
}

int64_t gw_sse_retry_ms(const struct gw_sse *p)
{
    return p->retry;
}

/* Makes room for `need` bytes plus a NUL in a buffer. */
static void reserve(char **buf, size_t *cap, size_t need)
{
    if (need + 1 <= *cap)
        return;
    size_t n = *cap ? *cap : 256;
    while (n < need + 1)
        n *= 2;
    *buf = gw_xrealloc(*buf, n);
    *cap = n;
}

static void shrink(char **buf, size_t *cap)
{
    if (*cap > KEEP_CAP) {
        free(*buf);
        *buf = NULL;
        *cap = 0;
    }
}

static int append_line(struct gw_sse *p, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    if (n > p->max || p->line_len + n > p->max - p->data_len)
        return GW_SSE_E_TOO_BIG;
    reserve(&p->line, &p->line_cap, p->line_len + n);
    memcpy(p->line + p->line_len, s, n);
    p->line_len += n;
    return 0;
}

static int dispatch(struct gw_sse *p, gw_sse_event_cb cb, void *data)
{
    int rc = 0;
    if (p->data_len > 0) {
        p->data_len--; /* the "\n" after the last data line */
        p->data[p->data_len] = '\0';
        struct gw_sse_event ev = {
            .type = p->type && p->type[0] ? p->type : "message",
            .data = p->data,
            .data_len = p->data_len,
            .id = gw_sse_last_event_id(p),
        };
        rc = cb(data, &ev);
    }
    p->data_len = 0;
    shrink(&p->data, &p->data_cap);
    free(p->type);
    p->type = NULL;
    return rc;
}

static int all_digits(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
    }
    return 1;
}

static int field(struct gw_sse *p, const char *name, size_t nlen, const char *v, size_t vlen)
{
    if (nlen == 4 && memcmp(name, "data", 4) == 0) {
        if (vlen + 1 > p->max - p->data_len)
            return GW_SSE_E_TOO_BIG;
        reserve(&p->data, &p->data_cap, p->data_len + vlen + 1);
        memcpy(p->data + p->data_len, v, vlen);
        p->data_len += vlen;
        p->data[p->data_len++] = '\n';
    } else if (nlen == 5 && memcmp(name, "event", 5) == 0) {
        free(p->type);
        p->type = gw_xstrndup(v, vlen);
    } else if (nlen == 2 && memcmp(name, "id", 2) == 0) {
        if (memchr(v, '\0', vlen) == NULL) {
            free(p->id);
            p->id = gw_xstrndup(v, vlen);
        }
    } else if (nlen == 5 && memcmp(name, "retry", 5) == 0) {
        /* More than 12 digits is beyond any sensible delay: clamp. */
        if (all_digits(v, vlen))
            p->retry = vlen > 12 ? INT64_C(999999999999) : strtoll(v, NULL, 10);
    }
    return 0;
}

static int end_line(struct gw_sse *p, gw_sse_event_cb cb, void *data)
{
    size_t n = p->line_len;
    const char *l = p->line;
    int rc = 0;
    p->line_len = 0;
    if (n == 0)
        return dispatch(p, cb, data);
    if (l[0] != ':') {
        const char *colon = memchr(l, ':', n);
        size_t nlen = colon ? (size_t)(colon - l) : n;
        const char *v = colon ? colon + 1 : l + n;
        size_t vlen = (size_t)(l + n - v);
        if (vlen > 0 && v[0] == ' ') {
            v++;
            vlen--;
        }
        rc = field(p, l, nlen, v, vlen);
    }
    shrink(&p->line, &p->line_cap);
    return rc;
}

static int parse(struct gw_sse *p, const char *buf, size_t len, gw_sse_event_cb cb, void *data)
{
    size_t i = 0;
    while (i < len) {
        if (p->after_cr) {
            p->after_cr = 0;
            if (buf[i] == '\n') {
                i++;
                continue;
            }
        }
        size_t j = i;
        while (j < len && buf[j] != '\r' && buf[j] != '\n')
            j++;
        int rc = append_line(p, buf + i, j - i);
        if (rc != 0 || j == len)
            return rc;
        p->after_cr = buf[j] == '\r';
        i = j + 1;
        rc = end_line(p, cb, data);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Skips a leading BOM, which may arrive split; bytes that only looked like
 * its start are parsed as text. Returns how many bytes of `buf` it took. */
static size_t skip_bom(struct gw_sse *p, const char *buf, size_t len, int *rc, gw_sse_event_cb cb,
                       void *data)
{
    size_t i = 0;
    while (p->bom_seen < 3 && i < len) {
        if ((unsigned char)buf[i] == bom[p->bom_seen]) {
            p->bom_seen++;
            i++;
            continue;
        }
        int matched = p->bom_seen;
        p->bom_seen = 3;
        *rc = parse(p, (const char *)bom, (size_t)matched, cb, data);
    }
    return i;
}

int gw_sse_feed(struct gw_sse *p, const char *buf, size_t len, gw_sse_event_cb cb, void *data)
{
    if (p->failed)
        return GW_SSE_E_TOO_BIG;
    int rc = 0;
    size_t skip = skip_bom(p, buf, len, &rc, cb, data);
    if (rc == 0)
        rc = parse(p, buf + skip, len - skip, cb, data);
    if (rc == GW_SSE_E_TOO_BIG)
        p->failed = 1;
    return rc;
}
