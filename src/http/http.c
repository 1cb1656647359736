/* HTTP/1.1 server: connections, timers, writes and keep-alive. The
 * listener and accepting are in http_listen.c, turning bytes into requests
 * (llhttp, limits, strictness) in http_parse.c, answers and streams in
 * http_respond.c; the structures they share are in gw/http_internal.h.
 *
 * Ownership: the server owns its connections; a connection owns the
 * request it is receiving or answering. A request handed to the handler is
 * borrowed by it until it answers (freed when the answer is written) or
 * until the connection dies (abort callback, then freed with the
 * connection; without an abort callback the request is orphaned and freed
 * by the handler's eventual answer, which goes nowhere). Every heap object
 * holding a uv handle is freed in the close callback that runs last. */
#include "gw/http_internal.h"

#include "gw/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_CHUNK (16 * 1024)
#define RBUF_SIZE  (64 * 1024) /* the server's shared read buffer */
/* Pipelined bytes kept while a request is handled; beyond, reading stops
 * (and with it the early notice of a client hanging up). */
#define HOLD_MAX (64 * 1024)
/* Time a closing connection drains what the client still sends, so our
 * last answer is not destroyed by a reset. */
#define LINGER_MS 1000

/* Makes room for `n` more bytes and the NUL kept after the data. The first
 * room is 512 bytes: a 2026-07-28 request's line and headers (~300 bytes
 * with their separators) fit without a second allocation and copy. */
void gw_http__buf_reserve(struct buf *b, size_t n)
{
    if (b->len + n + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 512;
    while (cap < b->len + n + 1)
        cap *= 2;
    b->data = gw_xrealloc(b->data, cap);
    b->cap = cap;
}

void gw_http__debug(const struct conn *c, const char *msg, const char *err)
{
    gw_log(GW_LOG_DEBUG, msg, "peer", c->peer, "error", err, NULL);
}

/* The connection is going away: the handler learns it through the abort
 * callback (after which the request is ours to free), or, having none, its
 * request is orphaned and its later answer frees it. */
static void req_detach(struct conn *c)
{
    struct req *r = c->req;
    if (r == NULL || (r->state != RQ_HANDLER && r->state != RQ_STREAMING))
        return;
    if (r->abort_cb) {
        r->state = RQ_ABORTED;
        r->abort_cb(&r->pub, r->abort_data);
        return;
    }
    r->state = RQ_ORPHAN;
    r->conn = NULL;
    c->req = NULL;
}

/* ---- connections ---- */

static void on_conn_closed(uv_handle_t *h);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void finish_unlink(struct conn *c);

void gw_http__conn_close(struct conn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    req_detach(c);
    uv_close(&c->h.handle, on_conn_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_closed);
}

/* Drops the connection's input buffer (never the server's shared one). */
static void in_release(struct conn *c)
{
    if (c->in != c->srv->rbuf)
        free(c->in);
    c->in = NULL;
    c->in_off = c->in_len = c->in_cap = 0;
}

/* Pending write and shutdown requests get UV_ECANCELED before this runs;
 * the second of the two handles to close frees the connection. */
static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    struct gw_http_server *srv = c->srv;
    if (--c->open_handles > 0)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->rejected)
        srv->nrejected--;
    else
        srv->nconns--;
    finish_unlink(c);
    gw_http__req_free(c->req);
    gw_http__parser_free(&c->parser);
    in_release(c);
    free(c);
    gw_http__srv_maybe_done(srv);
}

void gw_http__conn_read_start(struct conn *c)
{
    if (c->reading || c->eof || c->closing)
        return;
    int rc = uv_read_start(&c->h.stream, on_alloc, on_read);
    if (rc < 0) {
        gw_http__debug(c, "http read failed", uv_strerror(rc));
        c->state = CS_DEAD;
        gw_http__arm_timer(c);
        return;
    }
    c->reading = 1;
}

static void conn_read_stop(struct conn *c)
{
    if (c->reading)
        uv_read_stop(&c->h.stream);
    c->reading = 0;
}

static void conn_response_done(struct conn *c);

static void on_finish(uv_idle_t *h);

/* The finisher is an idle handle: it runs at the next loop turn before
 * polling (which it makes return at once), and costs no syscall. */
static void finish_push(struct conn *c)
{
    struct gw_http_server *srv = c->srv;

    if (c->fprev != NULL || srv->finish_head == c)
        return;
    if (srv->finish_head == NULL)
        uv_idle_start(&srv->finisher, on_finish);
    c->fnext = srv->finish_head;
    if (c->fnext)
        c->fnext->fprev = c;
    srv->finish_head = c;
}

static void finish_unlink(struct conn *c)
{
    if (c->fprev)
        c->fprev->fnext = c->fnext;
    else if (c->srv->finish_head == c)
        c->srv->finish_head = c->fnext;
    else
        return;
    if (c->fnext)
        c->fnext->fprev = c->fprev;
    c->fprev = c->fnext = NULL;
}

/* The list is taken whole first: an answer written while it runs waits
 * for the next turn. A connection closed meanwhile is skipped; it is still
 * allocated (connections are freed in close callbacks, after this). */
static void on_finish(uv_idle_t *h)
{
    struct gw_http_server *srv = h->data;
    struct conn *c = srv->finish_head, *next;

    srv->finish_head = NULL;
    uv_idle_stop(h);
    for (; c != NULL; c = next) {
        next = c->fnext;
        c->fprev = c->fnext = NULL;
        if (next)
            next->fprev = NULL;
        c->sent_all = 0;
        if (!c->closing)
            conn_response_done(c);
    }
}

/* The timer may fire before the connection's deadline (it was armed for an
 * earlier one, see gw_http__arm_timer) or when there is none any more. */
static void on_timer(uv_timer_t *t)
{
    struct conn *c = t->data;
    uint64_t now = uv_now(c->srv->loop);

    c->timer_due = 0;
    if (c->due == 0)
        return;
    if (now < c->due) {
        c->timer_due = c->due;
        uv_timer_start(&c->timer, on_timer, c->due - now, 0);
        return;
    }
    c->due = 0;
    switch (c->state) {
    case CS_HEADERS:
        gw_http__final_error(c, 408, "request_timeout",
                             "The request headers did not arrive in time.");
        break;
    case CS_BODY:
        gw_http__final_error(c, 408, "request_timeout", "The request body stopped arriving.");
        break;
    default:
        /* idle keep-alive, a client that stopped reading, linger over */
        gw_http__conn_close(c);
        break;
    }
}

/* Each state has its own deadline, and a request passes through four or
 * five: the deadline is kept in the connection and the libuv timer is
 * moved only when the new deadline is earlier than the one it is armed
 * for. A later or no deadline lets it fire and re-arm (or not): at most
 * one early wake-up per timeout period instead of a timer heap operation
 * per state. */
void gw_http__arm_timer(struct conn *c)
{
    uint64_t ms = 0;
    if (c->sent_all) {
        finish_push(c);
        return;
    }
    switch (c->state) {
    case CS_HEADERS:
        ms = c->lim.header_timeout_ms;
        break;
    case CS_BODY:
    case CS_SENDING:
    case CS_FINAL:
        /* a peer that stops reading our answer is treated like one that
         * stops sending its body */
        ms = c->lim.body_timeout_ms ? c->lim.body_timeout_ms : LINGER_MS;
        break;
    case CS_IDLE:
        ms = c->lim.keepalive_timeout_ms;
        break;
    case CS_LINGER:
        ms = LINGER_MS;
        break;
    case CS_DEAD:
        ms = 0; /* closed at the next loop turn */
        break;
    case CS_BUSY:
        break;
    }
    if (ms == 0 && c->state != CS_DEAD) {
        c->due = 0;
        return;
    }
    c->due = uv_now(c->srv->loop) + ms;
    if (c->timer_due == 0 || c->due < c->timer_due) {
        c->timer_due = c->due;
        uv_timer_start(&c->timer, on_timer, ms, 0);
    }
}

void gw_http__conn_reset_request(struct conn *c)
{
    c->lim = c->srv->lim;
    gw_http__parser_reset(&c->parser);
}

static void send_continue(struct conn *c)
{
    static const char line[] = "HTTP/1.1 100 Continue\r\n\r\n";
    uv_buf_t b = uv_buf_init((char *)line, sizeof line - 1);

    gw_http__send(c, &b, 1, 0);
}

static void conn_dispatch(struct conn *c)
{
    struct req *r = gw_http__parser_take(&c->parser);

    c->req = r;
    r->conn = c;
    c->keep_alive = c->parser.keep_alive;
    r->pub.received_ms = uv_hrtime() / 1000000u;
    r->state = RQ_HANDLER;
    c->state = CS_BUSY;
    gw_http__arm_timer(c);
    c->srv->handler(&r->pub, c->srv->data);
}

/* Parses buffered input [in_off, in_len) while the connection is reading a
 * request, and acts on what the parser reports. */
static void conn_parse(struct conn *c)
{
    while (c->in_off < c->in_len && (c->state == CS_HEADERS || c->state == CS_BODY)) {
        struct gw_http_parse_result res;

        gw_http__parse(&c->parser, c->in + c->in_off, c->in_len - c->in_off, &res);
        c->in_off += res.used;
        if (res.body_started) {
            c->state = CS_BODY;
            gw_http__arm_timer(c);
            if (res.send_continue)
                send_continue(c);
        }
        if (res.event == GW_HTTP_PARSE_READY) {
            conn_dispatch(c);
            return;
        }
        if (res.event == GW_HTTP_PARSE_ERROR) {
            gw_http__final_error(c, res.status, res.code, res.message);
            return;
        }
    }
}

static void conn_next_request(struct conn *c)
{
    gw_http__conn_reset_request(c);
    gw_http__conn_read_start(c);
    if (c->in_off < c->in_len) {
        c->state = CS_HEADERS;
        gw_http__arm_timer(c);
        conn_parse(c);
        return;
    }
    c->state = CS_IDLE;
    in_release(c);
    gw_http__arm_timer(c);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct conn *c = req->handle->data;
    if (c->closing)
        return;
    if (status < 0 || c->eof || c->srv->closing) {
        gw_http__conn_close(c);
        return;
    }
    c->state = CS_LINGER;
    gw_http__arm_timer(c);
    gw_http__conn_read_start(c);
}

static void conn_shutdown(struct conn *c)
{
    c->state = CS_FINAL;
    gw_http__arm_timer(c);
    int rc = uv_shutdown(&c->shutdown, &c->h.stream, on_shutdown);
    if (rc < 0)
        gw_http__conn_close(c);
}

/* The last write of an answer completed. */
static void conn_response_done(struct conn *c)
{
    if (c->state == CS_FINAL) {
        conn_shutdown(c);
        return;
    }
    gw_http__req_free(c->req);
    c->req = NULL;
    if (!c->keep_alive || c->srv->closing) {
        conn_shutdown(c);
        return;
    }
    conn_next_request(c);
}

struct wreq {
    uv_write_t w;
    struct conn *c;
    int last;
    char data[];
};

static void on_write(uv_write_t *w, int status)
{
    struct wreq *wr = (struct wreq *)w;
    struct conn *c = wr->c;
    int last = wr->last;
    free(wr);
    if (c->closing)
        return;
    if (status < 0) {
        gw_http__debug(c, "http write failed", uv_strerror(status));
        gw_http__conn_close(c);
        return;
    }
    if (c->state == CS_SENDING || c->state == CS_FINAL)
        gw_http__arm_timer(c); /* progress restarts the send timeout */
    if (last)
        conn_response_done(c);
}

/* The bytes of bufs from offset skip on, copied into one block. */
static struct wreq *wreq_copy(struct conn *c, const uv_buf_t *bufs, unsigned n, size_t skip,
                              size_t total, int last)
{
    struct wreq *wr = gw_xrealloc(NULL, sizeof *wr + total - skip);
    size_t at = 0;
    wr->c = c;
    wr->last = last;
    for (unsigned i = 0; i < n; i++) {
        size_t len = bufs[i].len;
        const char *p = bufs[i].base;
        size_t cut = skip < len ? skip : len;
        skip -= cut;
        if (len > cut)
            memcpy(wr->data + at, p + cut, len - cut);
        at += len - cut;
    }
    return wr;
}

int gw_http__send(struct conn *c, const uv_buf_t *bufs, unsigned n, int last)
{
    size_t total = 0, done = 0;
    for (unsigned i = 0; i < n; i++)
        total += bufs[i].len;
    /* Most answers fit in the socket buffer. Written at once they need no
     * copy and no write request, and libuv does not re-arm the watcher as
     * it does after each completed uv_write (one epoll_ctl per answer).
     * uv_try_write refuses while earlier writes are queued, so order holds;
     * on any error the uv_write below reports it as before. */
    int rc = uv_try_write(&c->h.stream, bufs, n);
    if (rc > 0)
        done = (size_t)rc;
    if (done == total) {
        if (last) {
            /* finished from the loop, not inside the caller (see on_timer) */
            c->sent_all = 1;
            gw_http__arm_timer(c);
        } else if (c->state == CS_SENDING || c->state == CS_FINAL) {
            gw_http__arm_timer(c);
        }
        return 0;
    }
    struct wreq *wr = wreq_copy(c, bufs, n, done, total, last);
    uv_buf_t b = uv_buf_init(wr->data, (unsigned)(total - done));
    rc = uv_write(&wr->w, &c->h.stream, &b, 1, on_write);
    if (rc < 0) {
        /* Closing now could fire the abort callback inside the handler's
         * own call; the 0 ms timer closes from the loop instead. */
        free(wr);
        gw_http__debug(c, "http write failed", uv_strerror(rc));
        c->state = CS_DEAD;
        gw_http__arm_timer(c);
    }
    return rc;
}

void gw_http__final_error(struct conn *c, int status, const char *code, const char *msg)
{
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
    char *body = json_dumps(j, JSON_COMPACT);
    size_t blen = strlen(body), hlen;
    char *head = gw_http__head(status, "application/json; charset=utf-8", (long long)blen, 0, 0,
                               NULL, c->srv->always, &hlen);
    gw_log(GW_LOG_DEBUG, "http request refused", "peer", c->peer, "code", code, "message", msg,
           NULL);
    c->state = CS_FINAL;
    c->keep_alive = 0;
    c->in_off = c->in_len = 0; /* nothing more is parsed */
    uv_buf_t bufs[2] = {uv_buf_init(head, (unsigned)hlen), uv_buf_init(body, (unsigned)blen)};
    if (gw_http__send(c, bufs, 2, 1) == 0)
        gw_http__arm_timer(c);
    free(head);
    free(body);
    json_decref(j);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct conn *c = h->data;
    if (c->in_off == c->in_len) {
        in_release(c);
        if (c->srv->rbuf == NULL)
            c->srv->rbuf = gw_xmalloc(RBUF_SIZE);
        c->in = c->srv->rbuf;
        c->in_cap = RBUF_SIZE;
        *buf = uv_buf_init(c->in, RBUF_SIZE);
        return;
    }
    if (c->in_cap - c->in_len < READ_CHUNK && c->in_off > 0) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    if (c->in_cap - c->in_len < READ_CHUNK) {
        /* bounded: reading stops once HOLD_MAX bytes wait (on_read) */
        c->in_cap = c->in_len + READ_CHUNK;
        c->in = gw_xrealloc(c->in, c->in_cap);
    }
    *buf = uv_buf_init(c->in + c->in_len, (unsigned)(c->in_cap - c->in_len));
}

/* At the end of a read into the shared buffer: the bytes not parsed yet
 * (a partial or pipelined request) move to a buffer of the connection's. */
static void in_keep_unparsed(struct conn *c)
{
    size_t left = c->in_len - c->in_off;
    char *own;

    if (c->in != c->srv->rbuf)
        return;
    if (left == 0) {
        in_release(c);
        return;
    }
    own = gw_xmalloc(left + READ_CHUNK);
    memcpy(own, c->in + c->in_off, left);
    c->in = own;
    c->in_off = 0;
    c->in_len = left;
    c->in_cap = left + READ_CHUNK;
}

/* EOF or a read error. A client that hangs up while its request is with
 * the handler aborts it; one that only half-closed after its request gets
 * the answer already being written. */
static void on_read_end(struct conn *c, int err)
{
    conn_read_stop(c);
    c->eof = 1;
    if (err != UV_EOF)
        gw_http__debug(c, "http read failed", uv_strerror(err));
    if (err == UV_EOF && (c->state == CS_SENDING || c->state == CS_FINAL)) {
        c->keep_alive = 0;
        return;
    }
    gw_http__conn_close(c);
}

static void read_bytes(struct conn *c, ssize_t nread)
{
    if (nread < 0) {
        on_read_end(c, (int)nread);
        return;
    }
    c->in_len += (size_t)nread;
    if (nread == 0)
        return;
    if (c->state == CS_IDLE) {
        c->state = CS_HEADERS; /* the header clock starts at the first byte */
        gw_http__arm_timer(c);
    } else if (c->state == CS_BODY) {
        gw_http__arm_timer(c);
    }
    if (c->state == CS_HEADERS || c->state == CS_BODY) {
        conn_parse(c);
    } else if (c->state == CS_BUSY || c->state == CS_SENDING) {
        if (c->in_len - c->in_off >= HOLD_MAX)
            conn_read_stop(c);
    } else {
        c->in_off = c->in_len = 0; /* draining a connection we are closing */
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    read_bytes(c, nread);
    in_keep_unparsed(c);
}
