/* The HTTP upstream's answer to a 401 that refuses the OAuth access token a
 * request carried (gw/upstream_http.h): the server did not run the request,
 * so it goes again, once, with a fresh token from the grant's one refresh. */
#include "gw/upstream_http_internal.h"

#include <stdio.h>
#include <string.h>

#include "gw/log.h"
#include "gw/trace.h"
#include "gw/util.h"

/* A span for the refresh under the CLIENT span of the request the 401
 * refused, read back from the traceparent header the request carries. */
static struct gw_span *refresh_span(const struct xfer *x)
{
    static const char name[] = "traceparent: ";
    struct gw_trace_ctx ctx;
    const char *tp;

    for (const struct curl_slist *m = x->mhdrs; m != NULL; m = m->next) {
        if (strncmp(m->data, name, sizeof name - 1) != 0)
            continue;
        tp = m->data + sizeof name - 1;
        if (!gw_trace_parse(tp, strlen(tp), NULL, &ctx))
            return NULL;
        struct gw_span *s = gw_span_child("mcpgw.oauth.refresh", GW_SPAN_INTERNAL, &ctx);
        gw_span_str(s, "mcpgw.server", x->h->id);
        return s;
    }
    return NULL;
}

static void auth_refreshed(void *data, int rc, const char *text)
{
    struct gw_upstream_http *h = data;
    struct xfer *x;
    h->auth_wait = 0;
    if (rc != 0) {
        gw_span_str(h->auth_span, "error.type", "refresh_failed");
        gw_span_error(h->auth_span, text);
    }
    gw_span_end(h->auth_span);
    h->auth_span = NULL;
    if (rc == 0) {
        gw_log(GW_LOG_INFO, "oauth token refreshed", "server", h->id, NULL);
        for (x = h->xfers; x; x = x->next) {
            if (x->auth_parked) {
                x->auth_parked = 0;
                x->due_ms = gw_now_ms() + 1;
            }
        }
        gw_upstream_http__reschedule(h);
        return;
    }
    char why[400];
    snprintf(why, sizeof(why),
             "the upstream %s refused the OAuth access token (HTTP 401) and the refresh failed: %s",
             h->shown, text ? text : "no refresh token");
    for (;;) {
        for (x = h->xfers; x && !x->auth_parked; x = x->next)
            ;
        if (!x)
            break;
        gw_upstream_http__request_failed(x, 401, 1, why);
    }
    gw_upstream_http__flush(h); /* the requests' own errors first */
    gw_upstream_http__go_down(h, GW_HTTP_E_UNAUTHORIZED, why);
}

/* x got a 401 with a Bearer challenge to the token it carried: the server
 * did not run it, so it may go again, once, with a fresh token; the
 * refresh is the grant's single one (gw_oauth_refresh joins a running
 * one, as the refresh ahead of expiry). 0 when it cannot. */
int gw_upstream_http__auth_retry(struct xfer *x)
{
    struct gw_upstream_http *h = x->h;
    struct gw_oauth *o = h->o.oauth;
    /* A token from a refresh for a 401, refused too: the server refuses
     * every token, and one more refresh would not change that. */
    if (x->auth_retried || h->stopping || !x->had_token || gw_oauth_refresh_spent(o))
        return 0;
    x->auth_retried = 1;
    gw_upstream_http__link(x);
    if (x->token_gen != gw_oauth_generation(o) && gw_oauth_access_token(o)) {
        x->due_ms = gw_now_ms() + 1;
        gw_upstream_http__reschedule(h);
        return 1;
    }
    x->auth_parked = 1;
    if (h->auth_wait)
        return 1;
    h->auth_wait = 1;
    gw_log(GW_LOG_INFO, "upstream refused the OAuth token; refreshing", "server", h->id, NULL);
    h->auth_span = refresh_span(x);
    if (gw_oauth_refresh(o, auth_refreshed, h) == 0)
        return 1; /* auth_refreshed may have run already */
    gw_span_end(h->auth_span);
    h->auth_span = NULL;
    h->auth_wait = 0;
    x->auth_parked = 0;
    gw_upstream_http__unlink(x);
    return 0;
}
