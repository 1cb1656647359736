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
#include <time.h>

#define GW_TRACEPARENT_LEN  55  /* "00-" 32 hex "-" 16 hex "-" 2 hex */
#define GW_TRACESTATE_MAX   512 /* W3C: 32 members of at most 256 bytes, cut at 512 */
#define GW_SPAN_ATTRS_MAX   16
#define GW_SPAN_ARENA       160 /* bytes of the name's encoding and the tracestate inside a span */
#define GW_SPAN_ATTRS_ROOM  640 /* bytes of the attributes' encoding inside a span */
#define GW_TRACE_DIGEST_LEN 32  /* hex characters of gw_trace_digest */

/* OTLP's SpanKind and Status.code values (the JSON encoding writes them
 * as integers). */
enum gw_span_kind { GW_SPAN_INTERNAL = 1, GW_SPAN_SERVER = 2, GW_SPAN_CLIENT = 3 };
enum gw_span_status { GW_SPAN_UNSET = 0, GW_SPAN_OK = 1, GW_SPAN_ERROR = 2 };

/* A span context: flags (bit 0: sampled), the tracestate to pass on
 * (borrowed) and the ids, kept only as the hex of its traceparent
 * (trace id at tp + 3, span id at tp + 36): propagation and the export
 * both write hex, and nothing reads the ids' bytes. */
struct gw_trace_ctx {
    uint8_t flags;
    bool valid;
    const char *tracestate; /* NULL: none */
    char tp[GW_TRACEPARENT_LEN + 1];
};

/* An attribute set: its key, and where its OTLP JSON encoding sits in
 * the span's attributes (a ',' first). */
struct gw_span_attr {
    const char *key; /* static */
    uint32_t klen;   /* told apart by it before any byte is compared */
    uint32_t off, len;
};

/* One span, owned by whoever started it until gw_span_end, then by the
 * sink. Its name and attributes are written as OTLP JSON when they are
 * set, escaped once: the exporter copies them as they are. Spans are
 * recycled (a free list), so nothing here is zeroed on start. */
struct gw_span {
    struct gw_span *next;   /* the free list; a list given to gw_otlp_encode */
    struct span_slab *slab; /* the block it was allocated in (trace.c) */
    struct gw_trace_ctx ctx;
    char parent_hex[16];
    bool has_parent;
    enum gw_span_kind kind;
    enum gw_span_status status;
    struct timespec start, end; /* CLOCK_REALTIME: kept split, as the export writes them */
    char *name;                 /* a JSON string, quotes included */
    size_t name_len;
    size_t target_at; /* the space before the name's target; 0: none */
    char *tracestate;
    char *status_message;
    struct gw_span_attr attrs[GW_SPAN_ATTRS_MAX]; /* in the order of their encodings */
    unsigned nattrs;
    uint64_t klens; /* a bit of each key set (span_json.c: its length and a byte) */
    char *aj;       /* the attributes' encoding: `room`, or on the heap when larger */
    size_t aj_len, aj_cap;
    size_t arena_used;
    char arena[GW_SPAN_ARENA];
    char room[GW_SPAN_ATTRS_ROOM];
};

/* Takes an ended span (to queue, export and free with gw_span_free). */
typedef void (*gw_trace_sink)(void *data, struct gw_span *s);

/* Turns tracing on with a sink, or off (sink NULL). `ratio` (0 to 1) is
 * the share of new traces recorded; a span whose parent came sampled is
 * always recorded, one whose parent came unsampled never is. */
void gw_trace_configure(double ratio, gw_trace_sink sink, void *data);

/* Frees what the free list holds beyond what calls take again soon: the
 * exporter calls it when its queue runs empty. */
void gw_trace_trim(void);
/* Free spans waiting in their blocks (for the tests). */
unsigned gw_trace__spares(void);

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

/* Attributes (at most GW_SPAN_ATTRS_MAX; later ones are dropped). The
 * key is a string literal: its encoding up to the value is put together by
 * the compiler. A key set again replaces its value. String values are
 * escaped into the span (NULL: no attribute). */
#define GW__ATTR_HEAD(key, type) ",{\"key\":\"" key "\",\"value\":{\"" type "\":"
#define gw_span_str(s, key, value)                                                                 \
    gw_span__str((s), "" key, sizeof(key) - 1, GW__ATTR_HEAD(key, "stringValue"),                  \
                 sizeof(GW__ATTR_HEAD(key, "stringValue")) - 1, (value))
#define gw_span_int(s, key, value)                                                                 \
    gw_span__int((s), "" key, sizeof(key) - 1, GW__ATTR_HEAD(key, "intValue"),                     \
                 sizeof(GW__ATTR_HEAD(key, "intValue")) - 1, (value))
/* Both key and value string literals: the whole encoding is the compiler's. */
#define gw_span_lit(s, key, value)                                                                 \
    gw_span__raw((s), "" key, sizeof(key) - 1,                                                     \
                 GW__ATTR_HEAD(key, "stringValue") "\"" value "\"}}",                              \
                 sizeof(GW__ATTR_HEAD(key, "stringValue") "\"" value "\"}}") - 1)
void gw_span__str(struct gw_span *s, const char *key, size_t klen, const char *head, size_t hlen,
                  const char *value);
void gw_span__int(struct gw_span *s, const char *key, size_t klen, const char *head, size_t hlen,
                  int64_t value);
void gw_span__raw(struct gw_span *s, const char *key, size_t klen, const char *enc, size_t n);
/* The method or the target the span was named by (gw_span_root_op,
 * gw_span_child_op) as a string attribute, copied from the name: escaped
 * once. gw_span_target sets nothing when the name has no target. */
#define gw_span_method(s, key)                                                                     \
    gw_span__named((s), "" key, sizeof(key) - 1, GW__ATTR_HEAD(key, "stringValue"),                \
                   sizeof(GW__ATTR_HEAD(key, "stringValue")) - 1, false)
#define gw_span_target(s, key)                                                                     \
    gw_span__named((s), "" key, sizeof(key) - 1, GW__ATTR_HEAD(key, "stringValue"),                \
                   sizeof(GW__ATTR_HEAD(key, "stringValue")) - 1, true)
void gw_span__named(struct gw_span *s, const char *key, size_t klen, const char *head, size_t hlen,
                    bool target);
/* A span never ended nor exported, whose attributes are set once and
 * copied into many spans: what every request of one MCP client has in
 * common. NULL when tracing is off; freed with gw_span_free. */
struct gw_span *gw_span_template(void);
/* Sets `from`'s attributes on `s`, as if each were set again. */
void gw_span_attrs_from(struct gw_span *s, const struct gw_span *from);

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

/* The OTLP JSON of an ended span (an element of scopeSpans.spans), written
 * at `w` with no bound check: gw_span_json_max bytes must be free there.
 * Returns the end. */
size_t gw_span_json_max(const struct gw_span *s);
char *gw_span_json(const struct gw_span *s, char *w);
/* The two lowercase hex digits of each byte value, byte v at 2 * v. */
extern const char gw_hex_pairs[513];

/* `s` as a JSON string at `w` (at most 6 bytes a byte and the quotes),
 * any byte that is not valid UTF-8 written as '?'. Returns the end. */
char *gw_trace_json_str(char *w, const char *s);
/* The same for the n bytes at s (none of them NUL). */
char *gw_trace_json_strn(char *w, const char *s, size_t n);

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
