/* The OAuth routes (docs/api.md): GET /v1/servers/{id}/authorize sends
 * the browser to the server's authorization server (or, asked for JSON,
 * names its URL), GET /oauth/callback
 * takes it back (its `state` is the credential: the gate asks no bearer
 * token here), POST /v1/servers/{id}/authorize takes the URL a browser on
 * another machine ended on, DELETE forgets the grant. The callback's query
 * holds a code and a state: the access log shows the path only. */
#include "gw/api_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gw/http.h"
#include "gw/oauth.h"
#include "gw/servers.h"
#include "gw/util.h"

struct pending {
    struct gw_api_ctx *ctx;
    struct gw_http_request *req; /* NULL once the client went away */
    char *id;
    bool html; /* the browser's callback: a page, not JSON */
    bool json; /* authorize for a script: the URL in JSON, not a 302 */
};

static void on_abort(struct gw_http_request *req, void *data)
{
    ((struct pending *)data)->req = NULL;
}

static struct pending *pending_new(struct gw_api_ctx *ctx, struct gw_http_request *req,
                                   const char *id)
{
    struct pending *p = gw_xcalloc(1, sizeof(*p));
    p->ctx = ctx;
    p->req = req;
    p->id = gw_xstrdup(id);
    return p;
}

static void pending_free(struct pending *p)
{
    free(p->id);
    free(p);
}

/* A server's client, or an answer saying why there is none. */
static struct gw_oauth *server_oauth(struct gw_api_ctx *ctx, struct gw_http_request *req,
                                     const char *id)
{
    struct gw_oauth *o = gw_servers_oauth(ctx->servers, id);
    if (!o)
        gw_http_respond_error(req, 404, "not_found",
                              "no such server, or not an HTTP server that has started", NULL);
    return o;
}

static void html_escape(char **out, const char *s)
{
    size_t n = strlen(*out);
    for (; *s; s++) {
        const char *e = *s == '<'   ? "&lt;"
                        : *s == '>' ? "&gt;"
                        : *s == '&' ? "&amp;"
                        : *s == '"' ? "&quot;"
                                    : NULL;
        size_t k = e ? strlen(e) : 1;
        *out = gw_xrealloc(*out, n + k + 1);
        memcpy(*out + n, e ? e : s, k);
        n += k;
        (*out)[n] = 0;
    }
}

/* A short page; `link`, when given, is a relative link shown after the
 * text (`href` is ours, not escaped). */
static void page_link(struct gw_http_request *req, int status, const char *title, const char *text,
                      const char *href, const char *link)
{
    char *body = gw_xstrdup("<!doctype html><meta charset=utf-8><title>mcpgw</title><h1>");
    html_escape(&body, title);
    char *mid = gw_xasprintf("%s</h1><p>", body);
    free(body);
    body = mid;
    html_escape(&body, text);
    if (link) {
        mid = gw_xasprintf("%s</p><p><a href=\"%s\">", body, href);
        free(body);
        body = mid;
        html_escape(&body, link);
        mid = gw_xasprintf("%s</a>", body);
        free(body);
        body = mid;
    }
    char *all = gw_xasprintf("%s</p>\n", body);
    const char *const headers[] = {"Cache-Control: no-store", "Referrer-Policy: no-referrer",
                                   "Content-Security-Policy: default-src 'none'", NULL};
    gw_http_respond(req, status, "text/html; charset=utf-8", all, strlen(all), headers);
    free(all);
    free(body);
}

static void page(struct gw_http_request *req, int status, const char *title, const char *text)
{
    page_link(req, status, title, text, NULL, NULL);
}

static void authorize_done(void *data, int rc, const char *text)
{
    struct pending *p = data;
    if (p->req && rc == 0 && p->json) {
        const char *const headers[] = {"Cache-Control: no-store", NULL};
        gw_http_respond_json(p->req, 200, json_pack("{s:s}", "url", text), headers);
    } else if (p->req && rc == 0) {
        char *loc = gw_xasprintf("Location: %s", text);
        const char *const headers[] = {loc, "Cache-Control: no-store", NULL};
        gw_http_respond(p->req, 302, "text/plain; charset=utf-8", "", 0, headers);
        free(loc);
    } else if (p->req && rc == -EPERM) {
        gw_http_respond_error(p->req, 409, "authorization_limit", text, NULL);
    } else if (rc == -EXDEV) { /* stays a Problem until the operator logs out */
        gw_servers_authorization_failed(p->ctx->servers, p->id, text);
        if (p->req)
            gw_http_respond_error(p->req, 409, "issuer_changed", text, NULL);
    } else if (p->req) {
        gw_http_respond_error(p->req, 502, "authorization_unavailable", text, NULL);
    }
    pending_free(p);
}

/* Starting a flow changes state (discovery, a registration, the pending
 * flows, the limit of authorization requests), so a GET of it from a page
 * of another site (an <img>, a link, a form) is refused: Fetch Metadata
 * says where a browser's request comes from (cross-site, or same-site for
 * another port of the same host). A person who followed a link gets a page
 * whose own link, followed from the gateway's origin, goes on. Programs
 * send no Sec-Fetch-Site; a navigation typed or opened from another
 * program says "none". Returns true after answering. */
static bool refused_cross_site(struct gw_http_request *req, const char *id)
{
    const char *site = gw_http_header(req, "sec-fetch-site");
    const char *mode = gw_http_header(req, "sec-fetch-mode");

    if (site == NULL || strcmp(site, "same-origin") == 0 || strcmp(site, "none") == 0)
        return false;
    if (mode != NULL && strcmp(mode, "navigate") == 0) {
        char *title = gw_xasprintf("Authorize %s?", id);
        page_link(req, 403, title,
                  "Another site sent you here. If you meant to authorize this server, continue "
                  "from the gateway's own page:",
                  "authorize", "Continue to the authorization server");
        free(title);
    } else {
        gw_http_respond_error(req, 403, "cross_site",
                              "a request from another site cannot start an authorization", NULL);
    }
    return true;
}

void gw_api__route_authorize(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *id)
{
    if (refused_cross_site(req, id))
        return;
    struct gw_oauth *o = server_oauth(ctx, req, id);
    if (!o)
        return;
    struct pending *p = pending_new(ctx, req, id);
    /* A page holding the gateway's token cannot navigate with it: it asks
     * for the URL and opens it itself. */
    const char *accept = gw_http_header(req, "Accept");
    p->json = accept && strstr(accept, "application/json");
    gw_http_on_abort(req, on_abort, p);
    int rc = gw_oauth_authorize(o, authorize_done, p);
    if (rc < 0) {
        gw_http_respond_error(req, rc == -EBUSY ? 409 : 503,
                              rc == -EBUSY ? "busy" : "no_redirect_uri",
                              rc == -EBUSY ? "another OAuth operation of this server is running"
                                           : "the gateway has no address a browser can come back "
                                             "to",
                              NULL);
        pending_free(p);
    }
}

/* ---- the way back ---- */

static void redeem_done(void *data, int rc, const char *text)
{
    struct pending *p = data;
    if (rc == 0)
        gw_servers_authorized(p->ctx->servers, p->id);
    else
        gw_servers_authorization_failed(p->ctx->servers, p->id, text);
    if (p->req && p->html) {
        char *title = gw_xasprintf(rc == 0 ? "%s is authorized" : "%s is not authorized", p->id);
        page(p->req, rc == 0 ? 200 : 400, title,
             rc == 0 ? "The gateway holds a grant for this server now and starts it. You can "
                       "close this page."
                     : text);
        free(title);
    } else if (p->req && rc == 0) {
        gw_http_respond_json(
            p->req, 200, json_pack("{s:s, s:s}", "server", p->id, "status", "authorized"), NULL);
    } else if (p->req) {
        gw_http_respond_error(p->req, 400, "authorization_failed", text, NULL);
    }
    pending_free(p);
}

/* Redeems `query` for server `id` (NULL: whichever server issued its
 * state). */
static void redeem(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *id,
                   const char *query, bool html)
{
    const char *owner = gw_servers_oauth_state_owner(ctx->servers, query);
    struct gw_oauth *o = owner ? gw_servers_oauth(ctx->servers, owner) : NULL;
    const char *unknown = "This authorization response is unknown, expired or already used: "
                          "start again from the authorize link.";
    if (!o || (id && strcmp(owner, id) != 0)) {
        if (html)
            page(req, 400, "Not authorized", unknown);
        else
            gw_http_respond_error(req, 400, "unknown_state", unknown, NULL);
        return;
    }
    struct pending *p = pending_new(ctx, req, owner);
    p->html = html;
    gw_http_on_abort(req, on_abort, p);
    int rc = gw_oauth_redeem(o, query, redeem_done, p);
    if (rc < 0) {
        const char *busy = "Another OAuth operation of this server is running: try again.";
        if (html)
            page(req, 409, "Not authorized", busy);
        else
            gw_http_respond_error(req, 409, "busy", busy, NULL);
        pending_free(p);
    }
}

void gw_api__route_callback(struct gw_api_ctx *ctx, struct gw_http_request *req)
{
    redeem(ctx, req, NULL, req->query, true);
}

void gw_api__route_authorize_post(struct gw_api_ctx *ctx, struct gw_http_request *req,
                                  const char *id)
{
    json_error_t err;
    json_t *b = json_loadb(req->body, req->body_len, 0, &err);
    const char *url = json_string_value(json_object_get(b, "redirect"));
    const char *q = url ? strchr(url, '?') : NULL;
    if (!q) {
        gw_api__bad_request(req, "bad_redirect",
                            "the body must be {\"redirect\": \"<the URL the browser ended on>\"}");
    } else {
        char *query = gw_xstrndup(q + 1, strcspn(q + 1, "#"));
        redeem(ctx, req, id, query, false);
        free(query);
    }
    json_decref(b);
}

void gw_api__route_deauthorize(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *id)
{
    struct gw_oauth *o = server_oauth(ctx, req, id);
    if (!o)
        return;
    if (gw_oauth_forget(o) < 0) {
        gw_http_respond_error(req, 409, "busy", "another OAuth operation of this server is running",
                              NULL);
        return;
    }
    gw_servers_signed_out(ctx->servers, id);
    gw_http_respond_json(req, 200, json_pack("{s:s, s:s}", "server", id, "status", "forgotten"),
                         NULL);
}
