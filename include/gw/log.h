/* Logging: one logfmt line per event on stderr.
 *
 * Every value is escaped (quotes, backslashes, control characters), so text
 * from a server's stderr or a client cannot forge a second log line. */
#ifndef GW_LOG_H
#define GW_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum gw_log_level { GW_LOG_DEBUG, GW_LOG_INFO, GW_LOG_WARN, GW_LOG_ERROR };

void gw_log_set_level(enum gw_log_level level);
enum gw_log_level gw_log_get_level(void);

/* Whether a line at `level` would be written: callers that format values
 * only for a log line (per request, per call) skip that work when not. */
static inline int gw_log_enabled(enum gw_log_level level)
{
    return level >= gw_log_get_level();
}

/* Parses "debug", "info", "warn" (or "warning") and "error". Returns 0 and
 * sets *out, or UV_EINVAL. */
int gw_log_level_parse(const char *s, enum gw_log_level *out);

/* Writes `ts=… level=… msg=… k1=v1 k2=v2 …`. The variadic part is pairs of
 * `const char *` key and value, ended by a NULL key; a NULL value is
 * skipped. Keys are written as given and must be plain identifiers. */
void gw_log(enum gw_log_level level, const char *msg, ...) __attribute__((sentinel));
void gw_logv(enum gw_log_level level, const char *msg, va_list ap);

/* Appends `value` to `dst` (capacity `cap`, NUL-terminated on return)
 * quoted and escaped for logfmt when it needs it. Returns the length the
 * full result would have (like snprintf). Exposed for tests. */
size_t gw_log_escape(char *dst, size_t cap, const char *value);

#endif
