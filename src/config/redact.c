/* Masks configured secrets in server output (redact.h). */
#include "gw/redact.h"

#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

#define MASK     "***"
#define MASK_LEN 3

/* `v` and `rv` (reversed) with their KMP failure tables, for the partial
 * matches at a line's end and start. */
struct secret {
    char *v, *rv;
    size_t len;
    size_t *fail, *rfail;
    int next; /* the next secret with the same first byte, or -1 */
};

struct gw_redact {
    struct secret *s; /* longest first */
    size_t n, cap;
    /* The longest secret starting with each byte, or -1; allocated with
     * the first secret. Most servers have none, and every instance holds
     * two redactors (its transport's and its MCP client's): a table in
     * each cost 2 KB per lease. */
    int *first;
};

struct gw_redact *gw_redact_new(void)
{
    return gw_xcalloc(1, sizeof(struct gw_redact));
}

static size_t *kmp_table(const char *p, size_t n)
{
    size_t *f = gw_xmalloc(n * sizeof(*f));
    f[0] = 0;
    for (size_t i = 1, k = 0; i < n; i++) {
        while (k > 0 && p[i] != p[k])
            k = f[k - 1];
        if (p[i] == p[k])
            k++;
        f[i] = k;
    }
    return f;
}

/* The chains run longest first, so the first match at a position is the
 * longest one. */
static void relink(struct gw_redact *r)
{
    if (r->first == NULL)
        r->first = gw_xmalloc(256 * sizeof(*r->first));
    memset(r->first, -1, 256 * sizeof(*r->first));
    for (size_t i = r->n; i-- > 0;) {
        unsigned char c = (unsigned char)r->s[i].v[0];
        r->s[i].next = r->first[c];
        r->first[c] = (int)i;
    }
}

void gw_redact_add(struct gw_redact *r, const char *value)
{
    size_t len = value ? strlen(value) : 0;
    if (len < GW_REDACT_MIN_LEN)
        return;
    size_t at = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->s[i].len == len && memcmp(r->s[i].v, value, len) == 0)
            return;
        if (r->s[i].len >= len)
            at = i + 1;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->s = gw_xrealloc(r->s, r->cap * sizeof(*r->s));
    }
    memmove(&r->s[at + 1], &r->s[at], (r->n - at) * sizeof(*r->s));
    struct secret *s = &r->s[at];
    s->v = gw_xstrdup(value);
    s->rv = gw_xmalloc(len + 1);
    for (size_t i = 0; i < len; i++)
        s->rv[i] = value[len - 1 - i];
    s->rv[len] = '\0';
    s->len = len;
    s->fail = kmp_table(s->v, len);
    s->rfail = kmp_table(s->rv, len);
    r->n++;
    relink(r);
}

/* An auth header is usually "<scheme> <credential>": the credential alone
 * is what a server would print. */
static void add_with_credential(struct gw_redact *r, const char *value)
{
    gw_redact_add(r, value);
    const char *sp = value ? strrchr(value, ' ') : NULL;
    if (sp != NULL)
        gw_redact_add(r, sp + 1);
}

/* A PEM key whole and each of its base64 lines, so that a fragment quoted
 * anywhere is masked too. */
static void add_pem(struct gw_redact *r, const char *pem)
{
    for (const char *p = pem; p && *p;) {
        size_t n = strcspn(p, "\r\n");
        if (n >= 16 && p[0] != '-') {
            char *line = gw_xstrndup(p, n);
            gw_redact_add(r, line);
            free(line);
        }
        p += n;
        p += strspn(p, "\r\n");
    }
    gw_redact_add(r, pem);
}

void gw_redact_add_server(struct gw_redact *r, const struct gw_server_config *cfg)
{
    for (size_t i = 0; i < cfg->nenv; i++)
        add_with_credential(r, cfg->env[i].value);
    for (size_t i = 0; i < cfg->nheaders; i++)
        add_with_credential(r, cfg->headers[i].value);
    gw_redact_add(r, cfg->session_id);
    gw_redact_add(r, cfg->oauth_client_secret);
    add_pem(r, cfg->oauth_private_key);
    for (size_t i = 0; i < cfg->var_values.n; i++)
        gw_redact_add(r, cfg->var_values.v[i]);
}

size_t gw_redact_count(const struct gw_redact *r)
{
    return r->n;
}

/* The largest k < plen such that the last k bytes of t (read backwards
 * when `rev`: its first k bytes, reversed) equal the first k of pat. Only
 * the last plen - 1 bytes can take part, so that is all it reads. */
static size_t overlap(const char *pat, const size_t *fail, size_t plen, const char *t, size_t tlen,
                      int rev)
{
    size_t m = tlen < plen - 1 ? tlen : plen - 1, q = 0;
    for (size_t i = 0; i < m; i++) {
        char c = rev ? t[m - 1 - i] : t[tlen - m + i];
        while (q > 0 && pat[q] != c)
            q = fail[q - 1];
        if (pat[q] == c)
            q++;
    }
    return q;
}

static size_t mask_whole(const struct gw_redact *r, char *buf, size_t len)
{
    size_t i = 0, o = 0;
    while (i < len) {
        const struct secret *hit = NULL;
        for (int k = r->first[(unsigned char)buf[i]]; k >= 0; k = r->s[k].next) {
            const struct secret *s = &r->s[k];
            if (s->len <= len - i && memcmp(buf + i, s->v, s->len) == 0) {
                hit = s;
                break;
            }
        }
        if (hit) {
            /* o <= i and a secret is at least MASK_LEN long: the mask only
             * covers bytes already read. */
            memcpy(buf + o, MASK, MASK_LEN);
            o += MASK_LEN;
            i += hit->len;
        } else {
            buf[o++] = buf[i++];
        }
    }
    return o;
}

size_t gw_redact_line(const struct gw_redact *r, char *buf, size_t len, bool truncated)
{
    if (r == NULL || r->n == 0 || len == 0)
        return len;
    len = mask_whole(r, buf, len);
    size_t tail = 0, head = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct secret *s = &r->s[i];
        size_t k = overlap(s->v, s->fail, s->len, buf, len, 0);
        if (k > tail)
            tail = k;
        k = overlap(s->rv, s->rfail, s->len, buf, len, 1);
        if (k > head)
            head = k;
    }
    if (tail >= (truncated ? 1 : GW_REDACT_MIN_LEN)) {
        len -= tail;
        if (tail >= MASK_LEN) {
            memcpy(buf + len, MASK, MASK_LEN);
            len += MASK_LEN;
        }
    }
    if (head >= GW_REDACT_MIN_LEN && head <= len) {
        memmove(buf + MASK_LEN, buf + head, len - head);
        memcpy(buf, MASK, MASK_LEN);
        len = len - head + MASK_LEN;
    }
    return len;
}

void gw_redact_free(struct gw_redact *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->s[i].v);
        free(r->s[i].rv);
        free(r->s[i].fail);
        free(r->s[i].rfail);
    }
    free(r->s);
    free(r->first);
    free(r);
}

static json_t *masked_string(const struct gw_redact *const *r, size_t nr, const char *v, size_t n)
{
    char *p = gw_xmalloc(n + 1);
    json_t *j;

    memcpy(p, v, n);
    for (size_t i = 0; i < nr; i++) {
        if (r[i] != NULL)
            n = gw_redact_line(r[i], p, n, false);
    }
    j = json_stringn(p, n);
    free(p);
    /* a partial mask can split a character: nothing of the value stays */
    return j != NULL ? j : json_string("***");
}

json_t *gw_redact_json(const struct gw_redact *const *r, size_t n, const json_t *v,
                       unsigned max_depth)
{
    const char *k;
    json_t *e, *out;
    size_t i;

    switch (json_typeof(v)) {
    case JSON_STRING:
        return masked_string(r, n, json_string_value(v), json_string_length(v));
    case JSON_ARRAY:
        if (max_depth == 0)
            return json_string("***");
        out = json_array();
        json_array_foreach((json_t *)v, i, e)
            json_array_append_new(out, gw_redact_json(r, n, e, max_depth - 1));
        return out;
    case JSON_OBJECT:
        if (max_depth == 0)
            return json_string("***");
        out = json_object();
        json_object_foreach((json_t *)v, k, e)
        {
            json_t *key = masked_string(r, n, k, strlen(k));
            json_object_set_new(out, json_string_value(key),
                                gw_redact_json(r, n, e, max_depth - 1));
            json_decref(key);
        }
        return out;
    default:
        return json_incref((json_t *)v);
    }
}
