/* Small helpers every module uses: allocation that aborts on exhaustion (as
 * the daemons we imitate do: a half-built object is worse than a clean
 * stop), string building, and time formatting. */
#ifndef GW_UTIL_H
#define GW_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define GW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *gw_xmalloc(size_t n);
void *gw_xcalloc(size_t n, size_t size);
void *gw_xrealloc(void *p, size_t n);
char *gw_xstrdup(const char *s); /* NULL stays NULL */
char *gw_xstrndup(const char *s, size_t n);
/* printf into a new heap string. */
char *gw_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Formats a reason for a caller's `why` buffer of cap bytes (nothing when
 * cap is 0): how the modules that start things say why they could not. */
void gw_say(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Percent-decodes `s` in place, '+' as a space. `strict`: a malformed
 * escape or a %00 fails (-1). Otherwise a malformed escape stays as
 * written and a %00 ends the text. */
int gw_percent_decode(char *s, bool strict);

/* Copies `src` into `dst` (capacity `cap` > 0), cut to cap - 1 bytes and
 * NUL-terminated, like snprintf(dst, cap, "%s", src) at a fraction of
 * its cost (per-call paths). Returns strlen(src). */
size_t gw_strlcpy(char *dst, const char *src, size_t cap);

/* Whether `name` is an item of the comma-separated `csv` (a query's
 * toolset=a,b list: REST's listing and its search filter alike). */
bool gw_csv_has(const char *csv, const char *name);

/* FNV-1a (64 bits) of a NUL-terminated string, for the in-memory hash
 * tables (tool names, dialogs). */
uint64_t gw_hash_str(const char *s);

/* Writes `v` in decimal with a NUL into buf (at least 21 bytes); returns
 * the length. What "%lld" gives, without printf. */
size_t gw_fmt_int(char *buf, long long v);

/* Length of the valid UTF-8 sequence of 2-4 bytes at s (avail bytes
 * readable), or 0: jansson's utf8_check_* rules (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
size_t gw_utf8_seq_len(const unsigned char *s, size_t avail);

/* Cuts a trailing partial UTF-8 character off `s` (left by snprintf
 * truncating valid UTF-8), so the text stays valid for JSON. */
void gw_utf8_trim(char *s);

/* For "%.*s" where "%.300s" would cut a server's text: the length of the
 * longest prefix of `s` of at most `max` bytes that is valid UTF-8 and
 * ends on a character boundary (it stops before the first byte that is not
 * UTF-8). */
int gw_utf8_cut(const char *s, size_t max);

/* Copies the start of `in` (`len` bytes, any bytes) into `out` as at most
 * `max` bytes of one-line UTF-8 (no NUL written): a control character
 * becomes ' ', a byte that is not UTF-8 '?', and the cut falls between
 * characters. Returns the bytes written; *used says how many of `in`. */
size_t gw_utf8_excerpt(char *out, size_t max, const char *in, size_t len, size_t *used);

/* RFC 3339 UTC, e.g. "2026-11-23T08:00:00Z". Returns 0, or -1 with buf
 * "" for a time outside the years 0 to 9999 (or a buffer too small). */
int gw_format_time(time_t t, char *buf, size_t cap);

/* Milliseconds on the monotonic clock. */
uint64_t gw_now_ms(void);

/* Writes all `n` bytes to a blocking `fd`, again after EINTR and short
 * writes: 0, or -errno (-EIO for a write that took nothing). */
int gw_write_all(int fd, const void *p, size_t n);

/* Constant-time comparison of two byte strings (length leaks, content not). */
int gw_secure_equal(const char *a, size_t alen, const char *b, size_t blen);

/* The natural logarithm of a finite x >= DBL_MIN, within 1 ulp of libm's.
 * mcpgw does not link libm: loading it runs the IFUNC resolvers of all its
 * functions, which maps some 300 KiB of it into the daemon for one call. */
double gw_ln(double x);

#endif
