/* An incremental Server-Sent Events parser (the line and field rules of the
 * WHATWG "server-sent events" section, §9.2.6 "Interpreting an event
 * stream").
 *
 * Bytes go in as they arrive, split anywhere; complete events come out
 * through a callback. Lines end with CR, LF or CRLF (a CRLF split across two
 * feeds counts once); one UTF-8 BOM at the very start is skipped; lines
 * starting with ':' are comments; a line without ':' is a field with an
 * empty value; one space after the colon is dropped; `data` lines are
 * joined with "\n"; `event` sets the type (default "message"); `id` sets
 * the last event id unless the value holds NUL; `retry` is honoured only
 * when it is all ASCII digits; other fields are ignored. A block without
 * any `data` line is not dispatched (the standard's rule; an `id` in it
 * still counts), while `data` with an empty value gives an event with
 * empty data. A partial event at the end of the stream is the caller's to
 * drop: nothing is dispatched until its blank line.
 *
 * Bounds (security.md S2): the pending line plus the data gathered so far
 * may not exceed the parser's maximum (GW_SSE_MAX_EVENT by default); beyond
 * it gw_sse_feed() returns GW_SSE_E_TOO_BIG and the parser refuses every
 * later feed with the same code.
 *
 * Ownership: the caller owns the parser from gw_sse_new() until
 * gw_sse_free(). */
#ifndef GW_SSE_H
#define GW_SSE_H

#include <stddef.h>
#include <stdint.h>

#include "gw/errors.h"

#define GW_SSE_MAX_EVENT (16u << 20)

enum {
    GW_SSE_E_TOO_BIG = GW_E_SSE_BASE - 1, /* an event (or a line) exceeded the maximum */
};

struct gw_sse;

/* One dispatched event; every pointer is valid only during the callback.
 * `data` is NUL-terminated (it may hold NULs before that). */
struct gw_sse_event {
    const char *type; /* "message" unless an `event` field said otherwise */
    const char *data;
    size_t data_len;
    const char *id; /* the last event id after this event; "" when none */
};

/* Returns 0 to go on; any other value stops the feed, which returns it. */
typedef int (*gw_sse_event_cb)(void *data, const struct gw_sse_event *ev);

/* A parser that allows events up to `max_event` bytes (0: GW_SSE_MAX_EVENT). */
struct gw_sse *gw_sse_new(size_t max_event);
void gw_sse_free(struct gw_sse *p);

/* Parses `len` bytes, calling `cb` for each event completed by them.
 * Returns 0, GW_SSE_E_TOO_BIG, or the first non-zero value `cb` returned
 * (the bytes after that event are not parsed; feeding more is allowed). */
int gw_sse_feed(struct gw_sse *p, const char *buf, size_t len, gw_sse_event_cb cb, void *data);

/* The last event id buffer ("" when none was set); valid until the next feed. */
const char *gw_sse_last_event_id(const struct gw_sse *p);

/* The reconnection time from the last valid `retry` field, or -1. */
int64_t gw_sse_retry_ms(const struct gw_sse *p);

#endif
