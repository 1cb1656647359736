/* Traces (OpenTelemetry): W3C trace context, span records, the sampler
 * and the ambient context of the loop.
 *
 * Spans are started in the front ends (SERVER), dispatch (the queue and
 * lease waits), the supervisor (an instance's start) and the MCP client
 * (CLIENT), so this module sits in base/: it records spans and hands each
 * ended one to the sink the daemon set (the OTLP exporter, gw/otlp.h),
 * which takes it. With no sink tracing is off: every start returns NULL
 * and every function here takes NULL and does nothing, so a call costs a
 * pointer test and allocates nothing.
 *
 * The ambient context is what OpenTelemetry calls the current context: a
 * caller enters a span's context around a synchronous call down the layers
 * (dispatch → instance → MCP client → transport) so that the layer below
 * parents its span on it and propagates it, without a parameter through
 * every signature between. The loop is single-threaded, so it is one
 * pointer. */
#ifndef GW_TRACE_H
#define GW_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_TRACEPARENT_LEN  55  /* "00-" 32 hex "-" 16 hex "-" 2 hex */
#define GW_TRACESTATE_MAX   512 /* W3C: 32 members of at most 256 bytes, cut at 512 */
#define GW_SPAN_ATTRS_MAX   16
#define GW_SPAN_ARENA       320 /* bytes of a span's own strings kept inside it */
#define GW_TRACE_DIGEST_LEN 32  /* hex characters of gw_trace_digest */

/* OTLP's SpanKind and Status.code values (the JSON encoding writes them
 * as integers). */
enum gw_span_kind { GW_SPAN_INTERNAL = 1, GW_SPAN_SERVER = 2, GW_SPAN_CLIENT = 3 };
enum gw_span_status { GW_SPAN_UNSET = 0, GW_SPAN_OK = 1, GW_SPAN_ERROR = 2 };

/* A span context: ids, flags (bit 0: sampled) and the tracestate to pass
 * on (borrowed). */
struct gw_trace_ctx {
    uint8_t trace_id[16];
    uint8_t span_id[8];
    uint8_t flags;
    bool valid;
    const char *tracestate; /* NULL: none */
};

enum gw_attr_type { GW_ATTR_STR, GW_ATTR_INT };

struct gw_span_attr {
    const char *key; /* static */
    size_t klen;     /* strlen(key): told apart by it before any strcmp */
    enum gw_attr_type type;
    const char *s;
    bool owned; /* s was copied */
    int64_t i;
};

/* One span, owned by whoever started it until gw_span_end, then by the
 * sink. */
struct gw_span {
    struct gw_span *next; /* the sink's queue */
    struct gw_trace_ctx ctx;
    uint8_t parent_id[8];
    bool has_parent;
    enum gw_span_kind kind;
    enum gw_span_status status;
    uint64_t start_ns, end_ns; /* Unix epoch */
    char *name;
    char *tracestate;
    char *status_message;
    struct gw_span_attr attrs[GW_SPAN_ATTRS_MAX];
    unsigned nattrs;
    uint64_t klens; /* bit (length % 64) of each key's length */
    /* the name, tracestate and attribute strings while they fit: one
     * allocation per span */
    size_t arena_used;
    char arena[GW_SPAN_ARENA];
};

/* Takes an ended span (to queue, export and free with gw_span_free). */
typedef void (*gw_trace_sink)(void *data, struct gw_span *s);

/* Turns tracing on with a sink, or off (sink NULL). `ratio` (0 to 1) is
 * the share of new traces recorded; a span whose parent came sampled is
 * always recorded, one whose parent came unsampled never is. */
void gw_trace_configure(double ratio, gw_trace_sink sink, void *data);

static inline bool gw_trace_on(void)
{
    extern gw_trace_sink gw_trace__sink;
    return gw_trace__sink != NULL;
}

/* Parses a W3C traceparent strictly (version 00 exactly 55 bytes, lowercase
 * hex, no all-zero id, version ff refused; a later version may carry more
 * after a '-'). Returns false for anything else: the caller starts a new
 * trace. `tracestate` (may be NULL) is kept, borrowed, when it is at most
 * GW_TRACESTATE_MAX bytes of printable ASCII; else dropped. */
bool gw_trace_parse(const char *traceparent, size_t len, const char *tracestate,
                    struct gw_trace_ctx *out);

/* The traceparent of `ctx`, NUL-terminated. */
void gw_trace_format(const struct gw_trace_ctx *ctx, char out[GW_TRACEPARENT_LEN + 1]);

/* Sets `ctx` in a request's params._meta object: its traceparent, and its
 * tracestate or none (the MCP convention's propagation). */
struct json_t;
void gw_trace_meta(struct json_t *meta, const struct gw_trace_ctx *ctx);

/* A SERVER span that may start a trace: parented on `remote` when it is
 * valid (and recorded only when that is sampled), else a new trace kept at
 * the configured ratio. NULL when off or not sampled. */
struct gw_span *gw_span_root(const char *name, enum gw_span_kind kind,
                             const struct gw_trace_ctx *remote);

/* A span inside `parent` (a recorded span's context); NULL when parent is
 * NULL or not sampled, or tracing is off. */
struct gw_span *gw_span_child(const char *name, enum gw_span_kind kind,
                              const struct gw_trace_ctx *parent);

/* The same, named "{method} {target}" as the MCP conventions name spans
 * (target NULL: the method alone). */
struct gw_span *gw_span_root_op(const char *method, const char *target, enum gw_span_kind kind,
                                const struct gw_trace_ctx *remote);
struct gw_span *gw_span_child_op(const char *method, const char *target, enum gw_span_kind kind,
                                 const struct gw_trace_ctx *parent);

/* The context to make current for a request: its span's, or when the
 * request is not recorded the incoming one (`remote`, may be NULL), so that
 * it is still passed on, unsampled. */
static inline const struct gw_trace_ctx *gw_trace_pick(const struct gw_span *s,
                                                       const struct gw_trace_ctx *remote)
{
    return s != NULL ? &s->ctx : remote != NULL && remote->valid ? remote : NULL;
}

/* The span's context, or NULL for NULL. */
static inline const struct gw_trace_ctx *gw_span_ctx(const struct gw_span *s)
{
    return s != NULL ? &s->ctx : NULL;
}

/* Attributes (at most GW_SPAN_ATTRS_MAX; later ones are dropped). `key`
 * must be static; string values are copied (NULL: no attribute). */
void gw_span_str(struct gw_span *s, const char *key, const char *value);
/* A string value that lives as long as the program (a literal): not copied. */
void gw_span_lit(struct gw_span *s, const char *key, const char *value);
void gw_span_int(struct gw_span *s, const char *key, int64_t value);
/* Status error with a description (may be NULL). */
void gw_span_error(struct gw_span *s, const char *message);
/* Ends the span and hands it to the sink. */
void gw_span_end(struct gw_span *s);
void gw_span_free(struct gw_span *s);

/* The ambient context (see above); NULL when none. */
const struct gw_trace_ctx *gw_trace_current(void);
/* Makes `ctx` (may be NULL) current; returns the one it replaces, for
 * gw_trace_leave. */
const struct gw_trace_ctx *gw_trace_enter(const struct gw_trace_ctx *ctx);
void gw_trace_leave(const struct gw_trace_ctx *prev);

/* A context copied into an object that outlives the span it came from (a
 * call parked across requests): ids by value, the tracestate owned. */
struct gw_trace_saved {
    struct gw_trace_ctx ctx;
    char *tracestate;
};
void gw_trace_save(struct gw_trace_saved *to, const struct gw_trace_ctx *from);
void gw_trace_saved_free(struct gw_trace_saved *s);
/* The saved context, or NULL when none was saved. */
const struct gw_trace_ctx *gw_trace_saved_ctx(const struct gw_trace_saved *s);

/* An opaque digest of a secret identifier (a session id): hex, for
 * mcp.session.id, so that the id itself never leaves the process. */
void gw_trace_digest(const char *id, char out[GW_TRACE_DIGEST_LEN + 1]);

/* Counters since start (Prometheus, docs/api.md). */
struct gw_trace_stats {
    uint64_t spans;    /* recorded and ended */
    uint64_t exported; /* accepted by the collector */
    uint64_t dropped;  /* lost: the queue was full, or the collector refused them */
    uint64_t failures; /* export requests that failed */
};
void gw_trace_stats(struct gw_trace_stats *out);
void gw_trace_count(uint64_t exported, uint64_t dropped, uint64_t failures);

#endif
