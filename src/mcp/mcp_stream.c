/* The SSE answers of POSTs on /mcp, made resumable (MCP 2025-11-25,
 * "Resumability and Redelivery").
 *
 * A POST whose call sends progress, log messages or server requests is
 * answered as a stream. Every event carries the id "<no>.<seq>": `no`
 * numbers the session's POST streams (0 is its GET stream, mcp_session.c)
 * and `seq` counts the stream's events, so a Last-Event-ID names the stream
 * it came from and a resumption replays that stream only (the spec forbids
 * replaying messages of another stream).
 *
 * A stream keeps its newest events from the start, connected or not: bytes
 * handed to a socket that then breaks may never have reached the client.
 * A broken connection is not a cancellation (the spec): the call goes on,
 * its events are kept, and GET /mcp with Last-Event-ID takes the stream up
 * again — the kept events after that id, then whatever comes, up to the
 * response, after which the stream ends. A client too slow to read
 * (MCP_MAX_QUEUED bytes waiting) loses its connection, not the events, and
 * resumes the same way; the `retry:` of the priming event tells it when. */
#include "gw/mcp_server_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gw/json_out.h"
#include "gw/log.h"
#include "gw/util.h"

/* A framed SSE event of a POST stream, kept for replay. */
struct mcp_event {
    struct mcp_event *next;
    uint64_t seq;
    size_t len;
    char *text; /* owned */
};

/* One POST's SSE answer: event ids "<no>.<seq>" (the priming event is
 * "<no>.0"). Owned by its session (s->streams) until it is delivered or
 * expires; once the session ended, by its exchange, which frees it when
 * done. */
struct mcp_stream {
    struct mcp_stream *next;
    struct gw_mcp_session *s;    /* NULL once the session ended */
    struct gw_mcp_exchange *x;   /* the exchange still adding events, or NULL */
    struct gw_http_request *req; /* the connection carrying it, or NULL while broken */
    unsigned no;
    uint64_t seq;     /* the last event id given */
    uint64_t dropped; /* the last seq dropped by the bounds; 0: none */
    struct mcp_event *head, *tail;
    size_t nevents, bytes;
    bool done;           /* the response is in: the stream ends after it */
    uint64_t expires_ms; /* done but not delivered: freed after this */
};

static const char *const sse_headers[] = {"Cache-Control: no-store", NULL};

/* Parses "<no>.<seq>" with no >= 1 (a POST stream's event id); 0 or -1. */
static int parse_id(const char *id, unsigned *no, uint64_t *seq)
{
    unsigned long n;
    char *end;

    if (id == NULL || id[0] < '1' || id[0] > '9')
        return -1;
    n = strtoul(id, &end, 10);
    if (*end != '.' || end[1] < '0' || end[1] > '9' || n > UINT_MAX)
        return -1;
    *seq = strtoull(end + 1, &end, 10);
    if (*end != '\0')
        return -1;
    *no = (unsigned)n;
    return 0;
}

static char *label(const struct mcp_stream *st, char *buf, size_t cap)
{
    snprintf(buf, cap, "%u", st->no);
    return buf;
}

/* ---- the connection ---- */

/* Ends the connection that carries the stream, if any; the stream stays. */
static void conn_end(struct mcp_stream *st)
{
    struct gw_http_request *req = st->req;

    if (req == NULL)
        return;
    st->req = NULL;
    gw_http_on_abort(req, NULL, NULL);
    gw_http_stream_end(req);
}

static void on_conn_abort(struct gw_http_request *req, void *data)
{
    struct mcp_stream *st = data;
    char no[16];

    st->req = NULL;
    if (st->s != NULL)
        gw_log(GW_LOG_INFO, "mcp stream connection lost; its events are kept for Last-Event-ID",
               "dialog", st->s->dialog, "stream", label(st, no, sizeof no), NULL);
}

static void conn_write(struct mcp_stream *st, const char *text, size_t len)
{
    char no[16];

    if (st->req == NULL || gw_http_stream_write(st->req, text, len, MCP_MAX_QUEUED) != UV_ENOBUFS)
        return;
    gw_log(GW_LOG_WARN, "mcp stream client too slow; connection ended, events kept", "peer",
           st->req->peer, "stream", label(st, no, sizeof no), NULL);
    conn_end(st);
}

/* The 2025-11-25 priming event: an id before (or without) any message, so
 * a client whose connection breaks has an id to resume from, and the delay
 * before it should. Older clients may choke on its empty data. */
static void prime(struct mcp_stream *st, uint64_t seq)
{
    char text[96];
    int n;

    if (st->s == NULL || strcmp(st->s->version, "2025-11-25") < 0)
        return;
    n = snprintf(text, sizeof text, "id: %u.%" PRIu64 "\nretry: %u\ndata: \n\n", st->no, seq,
                 MCP_STREAM_RETRY_MS);
    conn_write(st, text, (size_t)n);
}

/* ---- the stream ---- */

static void stream_unlink(struct mcp_stream *st)
{
    struct mcp_stream **link;

    if (st->s == NULL)
        return;
    for (link = &st->s->streams; *link != NULL && *link != st; link = &(*link)->next)
        ;
    if (*link == st)
        *link = st->next;
    st->next = NULL;
    st->s = NULL;
}

static void stream_free(struct mcp_stream *st)
{
    stream_unlink(st);
    conn_end(st);
    while (st->head != NULL) {
        struct mcp_event *ev = st->head;
        st->head = ev->next;
        free(ev->text);
        free(ev);
    }
    free(st);
}

/* Keeps an event (taking `text`), then drops the oldest beyond the bounds;
 * the newest stays whatever its size. */
static void keep(struct mcp_stream *st, char *text, size_t len)
{
    struct mcp_event *ev = gw_xmalloc(sizeof *ev);

    *ev = (struct mcp_event){NULL, st->seq, len, text};
    if (st->tail != NULL)
        st->tail->next = ev;
    else
        st->head = ev;
    st->tail = ev;
    st->nevents++;
    st->bytes += len;
    while (st->head != st->tail &&
           (st->nevents > MCP_STREAM_KEEP_EVENTS || st->bytes > MCP_STREAM_KEEP_BYTES)) {
        ev = st->head;
        st->head = ev->next;
        st->dropped = ev->seq;
        st->nevents--;
        st->bytes -= ev->len;
        free(ev->text);
        free(ev);
    }
}

struct mcp_stream *gw_mcp__stream_open(struct gw_mcp_session *s, struct gw_mcp_exchange *x,
                                       struct gw_http_request *req)
{
    struct mcp_stream *st = gw_xcalloc(1, sizeof *st);

    st->s = s;
    st->x = x;
    st->req = req;
    st->no = ++s->next_stream;
    st->next = s->streams;
    s->streams = st;
    gw_http_stream_begin(req, 200, "text/event-stream", sse_headers);
    gw_http_on_abort(req, on_conn_abort, st);
    prime(st, 0);
    return st;
}

void gw_mcp__stream_send(struct mcp_stream *st, json_t *msg)
{
    char *data = gw_json_dump(msg, NULL);
    char *text = gw_xasprintf("id: %u.%" PRIu64 "\nevent: message\ndata: %s\n\n", st->no, ++st->seq,
                              data ? data : "null");
    size_t len = strlen(text);

    free(data);
    conn_write(st, text, len);
    if (st->s != NULL)
        keep(st, text, len);
    else
        free(text); /* the session ended: nobody can resume it */
}

/* Beyond MCP_STREAMS_KEPT finished streams in a session, the oldest go. */
static void limit_kept(struct gw_mcp_session *s)
{
    struct mcp_stream *st = s->streams, *next;
    unsigned done = 0;

    for (; st != NULL; st = next) {
        next = st->next;
        if (st->done && ++done > MCP_STREAMS_KEPT)
            stream_free(st);
    }
}

void gw_mcp__stream_finish(struct mcp_stream *st)
{
    char no[16];

    st->x = NULL;
    st->done = true;
    if (st->req != NULL || st->s == NULL) {
        stream_free(st); /* delivered, or nobody can come back for it */
        return;
    }
    st->expires_ms = gw_now_ms() + MCP_STREAM_RETAIN_MS;
    gw_log(GW_LOG_INFO, "mcp stream ended while disconnected; kept for Last-Event-ID", "dialog",
           st->s->dialog, "stream", label(st, no, sizeof no), NULL);
    limit_kept(st->s);
}

bool gw_mcp__stream_named(const char *last_event_id)
{
    unsigned no;
    uint64_t seq;

    return parse_id(last_event_id, &no, &seq) == 0;
}

static struct mcp_stream *find(struct gw_mcp_session *s, unsigned no)
{
    for (struct mcp_stream *st = s->streams; st != NULL; st = st->next) {
        if (st->no == no)
            return st;
    }
    return NULL;
}

/* Writes the kept events after `after`; returns how many. */
static unsigned replay(struct mcp_stream *st, uint64_t after)
{
    unsigned n = 0;

    for (struct mcp_event *ev = st->head; ev != NULL && st->req != NULL; ev = ev->next) {
        if (ev->seq > after) {
            conn_write(st, ev->text, ev->len);
            n++;
        }
    }
    return n;
}

void gw_mcp__stream_resume(struct gw_mcp_session *s, struct gw_http_request *req,
                           const char *last_event_id)
{
    struct mcp_stream *st = NULL;
    unsigned no = 0, n;
    uint64_t after = 0;
    char num[16], count[24];

    if (parse_id(last_event_id, &no, &after) == 0)
        st = find(s, no);
    if (st == NULL || after > st->seq) {
        char *msg = gw_xasprintf("Bad Request: Last-Event-ID names no stream this session keeps "
                                 "(unknown, or expired: a broken stream is kept %u s after its "
                                 "response); its events cannot be replayed",
                                 MCP_STREAM_RETAIN_MS / 1000);
        gw_http_respond_json(req, 400, gw_mcp__error(NULL, RPC_BAD_REQUEST, msg), NULL);
        free(msg);
        return;
    }
    conn_end(st); /* a client that came back elsewhere: the newest connection wins */
    st->req = req;
    gw_http_stream_begin(req, 200, "text/event-stream", sse_headers);
    gw_http_on_abort(req, on_conn_abort, st);
    if (after < st->dropped)
        gw_log(GW_LOG_WARN, "mcp stream resumed from before its oldest kept event; some are lost",
               "dialog", s->dialog, "stream", label(st, num, sizeof num), NULL);
    n = replay(st, after);
    snprintf(count, sizeof count, "%u", n);
    gw_log(GW_LOG_INFO, "mcp stream resumed", "dialog", s->dialog, "stream",
           label(st, num, sizeof num), "replayed", count, NULL);
    if (st->req == NULL)
        return; /* too slow again: the events stay */
    if (st->done)
        stream_free(st);
    else if (n == 0)
        prime(st, ++st->seq);
}

void gw_mcp__streams_end(struct gw_mcp_session *s)
{
    while (s->streams != NULL) {
        struct mcp_stream *st = s->streams;
        s->streams = st->next;
        st->next = NULL;
        st->s = NULL;
        if (st->x == NULL)
            stream_free(st);
    }
}

void gw_mcp__streams_sweep(struct gw_mcp_session *s, uint64_t now_ms)
{
    struct mcp_stream *st = s->streams, *next;

    for (; st != NULL; st = next) {
        next = st->next;
        if (st->done && now_ms >= st->expires_ms)
            stream_free(st);
    }
}
