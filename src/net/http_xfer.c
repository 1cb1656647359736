#include "gw/http_xfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/util.h"

static void reset_response(struct gw_http_xfer *x)
{
    x->status = 0;
    x->started = x->sse = 0;
    x->events = 0;
    gw_sse_free(x->parser);
    x->parser = NULL;
    free(x->rbody);
    x->rbody = NULL;
    x->rlen = x->rcap = 0;
    free(x->sid);
    x->sid = NULL;
    free(x->www_auth);
    x->www_auth = NULL;
    x->ctype[0] = '\0';
    x->retry_after = 0;
    x->fail = GW_HTTP_XFER_OK;
    x->errbuf[0] = '\0';
}

void gw_http_xfer_cleanup(struct gw_http_xfer *x)
{
    reset_response(x);
    if (x->cx.easy)
        curl_easy_cleanup(x->cx.easy);
    x->cx.easy = NULL;
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
}

int gw_http_xfer_ok(const struct gw_http_xfer *x)
{
    return x->status >= 200 && x->status < 300;
}

struct curl_slist *gw_http_xfer_line(struct curl_slist *l, const char *line)
{
    struct curl_slist *n = curl_slist_append(l, line);

    if (!n) {
        fputs("mcpgw: out of memory\n", stderr);
        abort();
    }
    return n;
}

struct curl_slist *gw_http_xfer_header(struct curl_slist *l, const char *name, const char *value)
{
    char *line = gw_xasprintf("%s: %s", name, value);

    l = gw_http_xfer_line(l, line);
    free(line);
    return l;
}

int gw_http_xfer_header_safe(const char *s, size_t n, size_t max)
{
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 0x21 || s[i] > 0x7e)
            return 0;
    }
    return 1;
}

/* ---- libcurl callbacks: record only ---- */

static int start(struct gw_http_xfer *x)
{
    x->started = 1;
    curl_easy_getinfo(x->cx.easy, CURLINFO_RESPONSE_CODE, &x->status);
    x->sse = gw_http_xfer_ok(x) && strncasecmp(x->ctype, "text/event-stream", 17) == 0;
    if (x->sse)
        x->parser = gw_sse_new(x->event_max);
    if (x->ops->on_start(x) == 0)
        return 0;
    x->fail = GW_HTTP_XFER_STOPPED;
    return -1;
}

static int header_is(const char *name, size_t n, const char *want)
{
    return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

static int printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((s[i] < 0x20 && s[i] != '\t') || s[i] > 0x7e)
            return 0;
    return 1;
}

static void header_field(struct gw_http_xfer *x, const char *buf, size_t len)
{
    const char *colon = memchr(buf, ':', len);
    if (!colon)
        return;
    size_t nlen = (size_t)(colon - buf);
    const char *v = colon + 1;
    size_t vlen = (size_t)(buf + len - v);
    while (vlen > 0 && (v[0] == ' ' || v[0] == '\t'))
        v++, vlen--;
    while (vlen > 0 && strchr(" \t\r\n", v[vlen - 1]))
        vlen--;
    if (header_is(buf, nlen, "content-type")) {
        size_t k = vlen < sizeof(x->ctype) - 1 ? vlen : sizeof(x->ctype) - 1;
        memcpy(x->ctype, v, k);
        x->ctype[k] = '\0';
    } else if (header_is(buf, nlen, "mcp-session-id") &&
               gw_http_xfer_header_safe(v, vlen, GW_HTTP_XFER_SESSION_MAX)) {
        free(x->sid);
        x->sid = gw_xstrndup(v, vlen);
    } else if (header_is(buf, nlen, "www-authenticate") && !x->www_auth && vlen > 0 &&
               vlen <= GW_HTTP_XFER_CHALLENGE_MAX && printable(v, vlen)) {
        /* The first field only: a Bearer challenge split over several
         * fields is not one the client can rely on anyway. */
        x->www_auth = gw_xstrndup(v, vlen);
    } else if (header_is(buf, nlen, "retry-after") && vlen > 0 && vlen <= 6 &&
               strspn(v, "0123456789") >= vlen) {
        x->retry_after = strtoull(v, NULL, 10) * 1000;
    }
}

static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
    struct gw_http_xfer *x = ud;
    size_t len = size * n;

    x->last_byte_ms = gw_now_ms();
    if ((len == 2 && buf[0] == '\r') || (len == 1 && buf[0] == '\n')) {
        /* The end of a head: a stream counts as open before its first event. */
        long status = 0;
        curl_easy_getinfo(x->cx.easy, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && !x->started)
            start(x);
        return len;
    }
    if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) { /* a new response (after a 1xx) */
        x->ctype[0] = '\0';
        free(x->sid);
        x->sid = NULL;
        free(x->www_auth);
        x->www_auth = NULL;
        x->retry_after = 0;
        return len;
    }
    header_field(x, buf, len);
    return len;
}

static int on_event(void *ud, const struct gw_sse_event *ev)
{
    struct gw_http_xfer *x = ud;

    x->events++;
    if (x->ops->on_event(x, ev) == 0)
        return 0;
    x->fail = GW_HTTP_XFER_STOPPED;
    return 1;
}

static size_t feed_sse(struct gw_http_xfer *x, const char *buf, size_t len)
{
    int rc = gw_sse_feed(x->parser, buf, len, on_event, x);

    if (rc == GW_SSE_E_TOO_BIG)
        x->fail = GW_HTTP_XFER_EVENT_TOO_BIG;
    return rc == 0 ? len : 0;
}

static void keep_body(struct gw_http_xfer *x, const char *buf, size_t len, size_t max)
{
    if (x->rlen + len > max)
        len = max - x->rlen;
    if (x->rlen + len + 1 > x->rcap) {
        size_t cap = x->rcap ? x->rcap : 4096;
        while (cap < x->rlen + len + 1)
            cap *= 2;
        x->rbody = gw_xrealloc(x->rbody, cap);
        x->rcap = cap;
    }
    memcpy(x->rbody + x->rlen, buf, len);
    x->rlen += len;
    x->rbody[x->rlen] = '\0';
}

static size_t on_write(char *buf, size_t size, size_t n, void *ud)
{
    struct gw_http_xfer *x = ud;
    size_t len = size * n;

    x->last_byte_ms = gw_now_ms();
    if (x->bytes_in)
        *x->bytes_in += len;
    if (!x->started)
        start(x);
    if (x->fail)
        return 0;
    if (x->sse)
        return feed_sse(x, buf, len);
    if (!gw_http_xfer_ok(x)) {
        keep_body(x, buf, len, GW_HTTP_XFER_EXCERPT_MAX); /* for an error sentence */
        return len;
    }
    if (x->body_max == 0)
        return len;
    if (x->rlen + len > x->body_max) {
        x->fail = GW_HTTP_XFER_BODY_TOO_BIG;
        return 0;
    }
    keep_body(x, buf, len, x->body_max);
    return len;
}

/* ---- the exchange ---- */

static void on_done(struct gw_curl_uv_xfer *cx, CURLcode rc)
{
    struct gw_http_xfer *x = (struct gw_http_xfer *)cx;

    if (!x->started && rc == CURLE_OK)
        start(x);
    x->ops->on_done(x, rc);
}

static size_t on_read(char *buf, size_t size, size_t n, void *data)
{
    struct gw_http_xfer *x = data;

    return x->read(x->read_data, buf, size * n);
}

static int on_seek(void *data, curl_off_t offset, int origin)
{
    struct gw_http_xfer *x = data;

    if (offset != 0 || origin != SEEK_SET)
        return CURL_SEEKFUNC_CANTSEEK;
    x->rewind(x->read_data);
    return CURL_SEEKFUNC_OK;
}

static void setup_easy(struct gw_http_xfer *x, const struct gw_http_xfer_request *req)
{
    CURL *e = x->cx.easy;

    curl_easy_setopt(e, CURLOPT_URL, req->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    if (req->user_agent)
        curl_easy_setopt(e, CURLOPT_USERAGENT, req->user_agent);
    if (req->connect_ms)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)req->connect_ms);
    if (req->timeout_ms)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    switch (req->method) {
    case GW_HTTP_XFER_POST:
        if (req->read != NULL) {
            x->read = req->read;
            x->rewind = req->rewind;
            x->read_data = req->read_data;
            curl_easy_setopt(e, CURLOPT_POST, 1L);
            curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
            curl_easy_setopt(e, CURLOPT_READDATA, x);
            curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
            curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)-1);
            break;
        }
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        break;
    case GW_HTTP_XFER_DELETE:
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    case GW_HTTP_XFER_GET:
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
        break;
    }
}

int gw_http_xfer_begin(struct gw_http_xfer *x, struct gw_curl_uv *multi,
                       const struct gw_http_xfer_request *req)
{
    reset_response(x);
    curl_slist_free_all(x->hdrs);
    x->hdrs = req->hdrs;
    x->body_max = req->body_max;
    x->event_max = req->event_max;
    if (!x->cx.easy)
        x->cx.easy = curl_easy_init();
    if (!x->cx.easy)
        return UV_ENOMEM;
    setup_easy(x, req);
    x->cx.done = on_done;
    x->cx.loopback_only = req->loopback_only;
    x->cx.addr_ok = req->addr_ok;
    x->cx.addr_data = req->addr_data;
    x->last_byte_ms = gw_now_ms();
    return gw_curl_uv_add(multi, &x->cx);
}

void gw_http_xfer_end(struct gw_http_xfer *x, struct gw_curl_uv *multi, CURLcode rc)
{
    if (x->cx.added)
        gw_curl_uv_remove(multi, &x->cx);
    on_done(&x->cx, rc);
}
