/* logfmt lines on stderr. One fprintf per line keeps lines whole when
 * several processes share the stream. */
#include "gw/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <uv.h>

#define LINE_MAX_BYTES 8192

static enum gw_log_level current = GW_LOG_INFO;
/* Under systemd (JOURNAL_STREAM set) each line starts with its syslog
 * priority, "<3>" … "<7>", so journald files it at the right level. */
static int journal = -1;
static const int priorities[] = {7, 6, 4, 3};

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void gw_log_set_level(enum gw_log_level level)
{
    current = level;
}

enum gw_log_level gw_log_get_level(void)
{
    return current;
}

int gw_log_level_parse(const char *s, enum gw_log_level *out)
{
    for (int i = 0; i <= GW_LOG_ERROR; i++) {
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum gw_log_level)i;
            return 0;
        }
    }
    if (strcmp(s, "warning") == 0) {
        *out = GW_LOG_WARN;
        return 0;
    }
    return UV_EINVAL;
}

static int needs_quotes(const char *v)
{
    if (*v == '\0')
        return 1;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || *p == 0x7f)
            return 1;
    }
    return 0;
}

/* Appends one byte if room remains; always counts it. */
static void put(char *dst, size_t cap, size_t *n, char c)
{
    if (*n + 1 < cap)
        dst[*n] = c;
    (*n)++;
}

size_t gw_log_escape(char *dst, size_t cap, const char *value)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    int quote = needs_quotes(value);

    if (quote)
        put(dst, cap, &n, '"');
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (*p == '"' || *p == '\\') {
            put(dst, cap, &n, '\\');
            put(dst, cap, &n, (char)*p);
        } else if (*p == '\n') {
            put(dst, cap, &n, '\\');
            put(dst, cap, &n, 'n');
        } else if (*p == '\t') {
            put(dst, cap, &n, '\\');
            put(dst, cap, &n, 't');
        } else if (*p < 0x20 || *p == 0x7f) {
            put(dst, cap, &n, '\\');
            put(dst, cap, &n, 'x');
            put(dst, cap, &n, hex[*p >> 4]);
            put(dst, cap, &n, hex[*p & 15]);
        } else {
            put(dst, cap, &n, (char)*p);
        }
    }
    if (quote)
        put(dst, cap, &n, '"');
    if (cap > 0)
        dst[n < cap ? n : cap - 1] = '\0';
    return n;
}

static size_t append_pair(char *line, size_t len, const char *key, const char *value)
{
    if (len + 2 >= LINE_MAX_BYTES)
        return len;
    len += (size_t)snprintf(line + len, LINE_MAX_BYTES - len, " %s=", key);
    if (len >= LINE_MAX_BYTES)
        return LINE_MAX_BYTES - 1;
    size_t need = gw_log_escape(line + len, LINE_MAX_BYTES - len, value);
    len += need;
    return len < LINE_MAX_BYTES ? len : LINE_MAX_BYTES - 1;
}

/* "ts=YYYY-MM-DDTHH:MM:SS" of the last second a line was written in:
 * gmtime_r and strftime run once a second, not once a line (a busy
 * gateway writes two lines per call). The loop is single-threaded. */
static time_t cached_sec = -1;
static char cached_prefix[40];
static size_t cached_len;

static size_t format_time(char *buf, size_t cap)
{
    struct timeval tv;
    struct tm tm;
    int ms;

    gettimeofday(&tv, NULL);
    if (tv.tv_sec != cached_sec) {
        gmtime_r(&tv.tv_sec, &tm);
        cached_len = strftime(cached_prefix, sizeof cached_prefix, "ts=%Y-%m-%dT%H:%M:%S", &tm);
        cached_sec = tv.tv_sec;
    }
    if (cap < cached_len + 6)
        return 0;
    memcpy(buf, cached_prefix, cached_len);
    ms = (int)(tv.tv_usec / 1000);
    buf[cached_len] = '.';
    buf[cached_len + 1] = (char)('0' + ms / 100);
    buf[cached_len + 2] = (char)('0' + ms / 10 % 10);
    buf[cached_len + 3] = (char)('0' + ms % 10);
    buf[cached_len + 4] = 'Z';
    return cached_len + 5;
}

void gw_logv(enum gw_log_level level, const char *msg, va_list ap)
{
    char line[LINE_MAX_BYTES];
    size_t len;

    if (level < current)
        return;
    if (journal < 0)
        journal = getenv("JOURNAL_STREAM") != NULL;
    len = journal ? (size_t)snprintf(line, sizeof line, "<%d>", priorities[level]) : 0;
    len += format_time(line + len, sizeof line - len);
    len = append_pair(line, len, "level", level_names[level]);
    len = append_pair(line, len, "msg", msg);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (key == NULL)
            break;
        const char *value = va_arg(ap, const char *);
        if (value != NULL)
            len = append_pair(line, len, key, value);
    }
    fprintf(stderr, "%.*s\n", (int)len, line);
}

void gw_log(enum gw_log_level level, const char *msg, ...)
{
    va_list ap;

    va_start(ap, msg);
    gw_logv(level, msg, ap);
    va_end(ap);
}
