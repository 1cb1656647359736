#include "gw/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

static void out_of_memory(size_t n)
{
    fprintf(stderr, "level=error msg=\"out of memory\" bytes=%zu\n", n);
    abort();
}

void *gw_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (p == NULL)
        out_of_memory(n);
    return p;
}

/* glibc's calloc takes no block from the thread cache (~250 instructions
 * against ~20): the small objects of every call (its exchange, call,
 * round) come from malloc and are cleared here, with explicit_bzero, which
 * the compiler does not fold back into calloc as it does malloc + memset.
 * Large ones keep calloc, which skips clearing fresh pages. */
#define XCALLOC_CACHED 1024

void *gw_xcalloc(size_t n, size_t size)
{
    void *p;

    n = n ? n : 1;
    size = size ? size : 1;
    if (size <= XCALLOC_CACHED && n <= XCALLOC_CACHED / size) {
        p = malloc(n * size);
        if (p != NULL)
            explicit_bzero(p, n * size);
    } else {
        p = calloc(n, size);
    }
    if (p == NULL)
        out_of_memory(n * size);
    return p;
}

void *gw_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (q == NULL)
        out_of_memory(n);
    return q;
}

char *gw_xstrdup(const char *s)
{
    return s != NULL ? gw_xstrndup(s, strlen(s)) : NULL;
}

char *gw_xstrndup(const char *s, size_t n)
{
    char *p = gw_xmalloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *gw_xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        out_of_memory(0);
    return s;
}

size_t gw_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = strlen(src), k = n < cap ? n : cap - 1;

    memcpy(dst, src, k);
    dst[k] = '\0';
    return n;
}

bool gw_csv_has(const char *csv, const char *name)
{
    size_t nl = strlen(name);

    for (const char *p = csv;;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == nl && memcmp(p, name, l) == 0)
            return true;
        if (e == NULL)
            return false;
        p = e + 1;
    }
}

size_t gw_fmt_int(char *buf, long long v)
{
    char tmp[24];
    size_t n = 0, len = 0;
    /* Negated as unsigned so that LLONG_MIN works. */
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        buf[len++] = '-';
    while (n > 0)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

size_t gw_utf8_seq_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0], v;
    size_t n;

    if (c >= 0xC2 && c <= 0xDF)
        n = 2, v = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, v = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, v = c & 0x07;
    else
        return 0;
    if (n > avail)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || (n == 3 && v < 0x800) ||
        (n == 4 && v < 0x10000))
        return 0;
    return n;
}

uint64_t gw_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void gw_say(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;

    if (cap == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    gw_utf8_trim(why);
}

int gw_utf8_cut(const char *s, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = 0;
    while (n < max && u[n]) {
        size_t k = u[n] < 0x80 ? 1 : gw_utf8_seq_len(u + n, strnlen(s + n, 4));
        if (k == 0 || n + k > max)
            break;
        n += k;
    }
    return (int)n;
}

size_t gw_utf8_excerpt(char *out, size_t max, const char *in, size_t len, size_t *used)
{
    const unsigned char *b = (const unsigned char *)in;
    size_t i = 0, n = 0;
    while (i < len && n < max) {
        size_t k = b[i] < 0x80 ? 1 : gw_utf8_seq_len(b + i, len - i);
        if (k > 1 && n + k > max)
            break;
        if (k > 1) {
            memcpy(out + n, b + i, k);
            n += k;
            i += k;
        } else {
            out[n++] = b[i] < 0x20 || b[i] == 0x7f ? ' ' : b[i] >= 0x80 ? '?' : (char)b[i];
            i++;
        }
    }
    *used = i;
    return n;
}

void gw_utf8_trim(char *s)
{
    size_t n = strlen(s), i = n, back = 0;
    unsigned char lead;
    size_t need;

    while (i > 0 && back < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) {
        i--;
        back++;
    }
    if (i == 0)
        return;
    lead = (unsigned char)s[i - 1];
    need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (lead >= 0x80 && back + 1 < need)
        s[i - 1] = '\0';
}

int gw_format_time(time_t t, char *buf, size_t cap)
{
    struct tm tm;

    if (cap)
        buf[0] = 0;
    if (!gmtime_r(&t, &tm) || tm.tm_year > 9999 - 1900 || tm.tm_year < -1900)
        return -1;
    return strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) ? 0 : -1;
}

uint64_t gw_now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

int gw_write_all(int fd, const void *p, size_t n)
{
    const char *at = p;

    while (n > 0) {
        ssize_t r = write(fd, at, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 ? -EIO : -errno;
        at += r;
        n -= (size_t)r;
    }
    return 0;
}

int gw_secure_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char diff = alen != blen;
    size_t n = alen < blen ? alen : blen;

    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

static int hex_value(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int gw_percent_decode(char *s, bool strict)
{
    char *out = s;

    for (; *s; s++) {
        int hi = *s == '%' ? hex_value((unsigned char)s[1]) : -1;
        int lo = hi < 0 ? -1 : hex_value((unsigned char)s[2]);
        if (*s == '%' && lo >= 0) {
            if (strict && hi == 0 && lo == 0)
                return -1;
            *out++ = (char)(hi * 16 + lo);
            s += 2;
        } else if (*s == '%' && strict) {
            return -1;
        } else {
            *out++ = *s == '+' ? ' ' : *s;
        }
    }
    *out = '\0';
    return 0;
}

double gw_ln(double x)
{
    static const double ln2_hi = 6.93147180369123816490e-01; /* e * ln2_hi is exact */
    static const double ln2_lo = 1.90821492927058770002e-10;
    uint64_t bits;
    double m, r = 0;

    memcpy(&bits, &x, sizeof bits);
    /* x = m * 2^e with m in [0.5, 1), then m in [sqrt(1/2), sqrt(2)) */
    int e = (int)((bits >> 52) & 0x7ff) - 1022;
    bits = (bits & 0x800fffffffffffffull) | 0x3fe0000000000000ull;
    memcpy(&m, &bits, sizeof m);
    if (m < 0.70710678118654752440) {
        m *= 2;
        e--;
    }
    /* fdlibm's reduction: ln(1 + f) = f - (f^2/2 - s (f^2/2 + r)), with
     * s = f / (2 + f) and r = sum of 2 s^2k / (2k + 1); |s| <= 0.1716, so
     * twelve terms leave less than 2^-60. */
    double f = m - 1, s = f / (2 + f), s2 = s * s, hfsq = 0.5 * f * f;
    for (int k = 12; k >= 1; k--)
        r = s2 * (2.0 / (2 * k + 1) + r);
    return e * ln2_hi - ((hfsq - (s * (hfsq + r) + e * ln2_lo)) - f);
}
