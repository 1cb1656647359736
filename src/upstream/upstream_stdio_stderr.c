/* The stdio child's stderr: split into lines (at most
 * GW_STDIO_STDERR_LINE_MAX bytes), masked (redact), rate limited, logged and
 * kept in a ring of GW_STDIO_STDERR_KEEP lines for Problems and /v1/servers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/upstream_stdio_internal.h"
#include "gw/util.h"

/* ---- stderr ---- */

/* Copies `line` replacing bytes that are not valid UTF-8 with U+FFFD and
 * NUL with '?', so the ring can always become JSON. */
static char *utf8_sanitize(const char *p, size_t n)
{
    char *out = gw_xmalloc(n * 3 + 1), *o = out;
    const unsigned char *u = (const unsigned char *)p, *end = u + n;
    while (u < end) {
        size_t len = *u < 0x80 ? 1 : gw_utf8_seq_len(u, (size_t)(end - u));
        if (len == 0) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            u++;
            continue;
        }
        for (size_t i = 0; i < len; i++)
            *o++ = u[i] ? (char)u[i] : '?';
        u += len;
    }
    *o = '\0';
    return out;
}

/* Logs how many stderr lines the current window dropped, if any. */
void gw_stdio_log_dropped(struct gw_upstream_stdio *s)
{
    if (s->rate_dropped == 0)
        return;
    char n[24];
    snprintf(n, sizeof(n), "%llu", (unsigned long long)s->rate_dropped);
    gw_log(GW_LOG_WARN, "server stderr lines dropped", "server", s->id, "pid", s->pidstr, "dropped",
           n, NULL);
    s->rate_dropped = 0;
}

/* At most GW_STDIO_STDERR_RATE lines per one-second window are logged; a
 * window that dropped lines is summed up once the next one begins (or the
 * instance closes). */
static int rate_allow(struct gw_upstream_stdio *s)
{
    uint64_t now = uv_now(s->loop);
    if (now - s->rate_window >= 1000) {
        gw_stdio_log_dropped(s);
        s->rate_window = now;
        s->rate_count = 0;
    }
    if (s->rate_count < GW_STDIO_STDERR_RATE) {
        s->rate_count++;
        return 1;
    }
    s->rate_dropped++;
    s->st.stderr_dropped++;
    return 0;
}

/* One stderr line (without its \n, at most GW_STDIO_STDERR_LINE_MAX bytes,
 * `cut` when more was dropped): its secrets masked in place, then logged if
 * the rate allows, and kept in the ring. Masking here, where a line enters
 * the daemon, is what keeps every later reader (the log, /v1/servers, a
 * Problem, an event) free of the secrets (P6). */
static void stderr_line(struct gw_upstream_stdio *s, char *p, size_t n, bool cut)
{
    if (n > 0 && p[n - 1] == '\r')
        n--;
    s->st.stderr_lines++;
    n = gw_redact_line(s->redact, p, n, cut);
    char *line = utf8_sanitize(p, n);
    if (rate_allow(s))
        gw_log(GW_LOG_INFO, "server stderr", "server", s->id, "pid", s->pidstr, "line", line, NULL);
    if (!s->ering)
        s->ering = gw_xcalloc(GW_STDIO_STDERR_KEEP, sizeof(*s->ering));
    free(s->ering[s->ering_next]);
    s->ering[s->ering_next] = line;
    s->ering_next = (s->ering_next + 1) % GW_STDIO_STDERR_KEEP;
    if (s->ering_n < GW_STDIO_STDERR_KEEP)
        s->ering_n++;
}

/* Appends to the partial stderr line; past GW_STDIO_STDERR_LINE_MAX the
 * rest of the line is dropped. */
static void eline_append(struct gw_upstream_stdio *s, const char *p, size_t n)
{
    size_t room = GW_STDIO_STDERR_LINE_MAX - s->eline_len;
    if (n > room) {
        n = room;
        s->eline_cut = true;
    }
    if (s->eline_len + n > s->eline_cap) {
        size_t cap = s->eline_cap ? s->eline_cap : ELINE_MIN_CAP;
        while (cap < s->eline_len + n)
            cap *= 2;
        if (cap > GW_STDIO_STDERR_LINE_MAX)
            cap = GW_STDIO_STDERR_LINE_MAX;
        s->eline = gw_xrealloc(s->eline, cap);
        s->eline_cap = cap;
    }
    memcpy(s->eline + s->eline_len, p, n);
    s->eline_len += n;
}

/* Ends the partial stderr line and frees its buffer: lines that span reads
 * are rare, and the buffer is at most 4 KiB to allocate again. */
static void eline_flush(struct gw_upstream_stdio *s)
{
    stderr_line(s, s->eline, s->eline_len, s->eline_cut);
    free(s->eline);
    s->eline = NULL;
    s->eline_len = s->eline_cap = 0;
    s->eline_cut = false;
}

/* A line wholly inside this read is taken from the read buffer; only a line
 * that spans reads is copied. */
static void split_stderr(struct gw_upstream_stdio *s, char *p, size_t n)
{
    char *end = p + n;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t take = (size_t)((nl ? nl : end) - p);
        if (nl && s->eline_len == 0) {
            bool cut = take > GW_STDIO_STDERR_LINE_MAX;
            stderr_line(s, p, cut ? GW_STDIO_STDERR_LINE_MAX : take, cut);
        } else {
            eline_append(s, p, take);
            if (nl)
                eline_flush(s);
        }
        if (!nl)
            return;
        p = nl + 1;
    }
}

void gw_stdio_on_stderr(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    struct gw_upstream_stdio *s = st->data;
    if (n > 0) {
        split_stderr(s, buf->base, (size_t)n);
        return;
    }
    if (n == 0)
        return;
    if (s->eline_len > 0)
        eline_flush(s);
    s->err_done = 1;
    uv_read_stop(st);
    if (s->exited)
        gw_stdio_advance(s);
}
