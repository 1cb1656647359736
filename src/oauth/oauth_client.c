/* One server's OAuth client on the loop (gw/oauth.h): the fetches of
 * discovery, registration and the token endpoint through http_xfer, each
 * URL and each connected address checked, and the operations built from
 * them. */
#include "gw/oauth_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw/jws.h"
#include "gw/log.h"
#include "gw/util.h"

static const struct gw_http_xfer_ops xfer_ops;

/* ---- operations and their waiters ---- */

void gw_oauth__bound_clear(struct bound *b)
{
    free(b->issuer);
    free(b->token_endpoint);
    free(b->revocation_endpoint);
    gw_oauth_client_clear(&b->client);
    memset(b, 0, sizeof(*b));
}

static void finish(struct gw_oauth *o, int rc, const char *text)
{
    struct waiter *w = o->waiters, **outer = o->finishing;
    o->waiters = NULL;
    o->finishing = &w; /* a callback may gw_oauth_unwait another waiter */
    o->op = OP_NONE;
    o->step = NULL;
    for (int i = 0; i < o->nurls; i++)
        free(o->urls[i]);
    o->nurls = o->iurl = o->hops = 0;
    free(o->body);
    o->body = NULL;
    gw_oauth__bound_clear(&o->req);
    gw_oauth__schedule_ahead(o);
    while (w) {
        struct waiter one = *w;
        free(w);
        w = one.next;
        one.cb(one.data, rc, text);
    }
    o->finishing = outer;
}

static void unlink_data(struct waiter **link, const void *data)
{
    while (*link) {
        struct waiter *w = *link;
        if (w->data == data) {
            *link = w->next;
            free(w);
        } else {
            link = &w->next;
        }
    }
}

void gw_oauth_unwait(struct gw_oauth *o, const void *data)
{
    unlink_data(&o->waiters, data);
    if (o->finishing)
        unlink_data(o->finishing, data);
}

unsigned gw_oauth_generation(const struct gw_oauth *o)
{
    return o->generation;
}

static void failf(struct gw_oauth *o, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void failf(struct gw_oauth *o, int rc, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    gw_utf8_trim(why);
    finish(o, rc, why);
}

static int join(struct gw_oauth *o, enum op op, gw_oauth_cb cb, void *data)
{
    if (o->op != OP_NONE && o->op != op)
        return -EBUSY;
    struct waiter *w = gw_xcalloc(1, sizeof(*w)), **link = &o->waiters;
    w->cb = cb;
    w->data = data;
    while (*link)
        link = &(*link)->next;
    *link = w;
    if (o->op == op)
        return 1; /* it joined the one running */
    o->op = op;
    return 0;
}

/* ---- one fetch ---- */

/* Starts a fetch of `url` (checked first); `body` (form when it does not
 * start with '{', else JSON) makes it a POST; `auth` an Authorization
 * header value. On failure to start, the operation fails. */
static void fetch(struct gw_oauth *o, const char *url, const char *body, const char *auth,
                  step_fn next)
{
    char why[300];
    if (gw_oauth_url_check(url, o->server_host, why, sizeof(why)) < 0) {
        failf(o, -EACCES, "refused to fetch %.*s: %s", gw_utf8_cut(url, 300), url, why);
        return;
    }
    struct gw_oauth_url u;
    gw_oauth_url_parse(url, &u, why, sizeof(why));
    gw_oauth_reach_init(&o->reach, &u, o->server_host);
    gw_oauth_url_clear(&u);

    struct curl_slist *h = gw_http_xfer_line(NULL, "Accept: application/json");
    if (body)
        h = gw_http_xfer_line(h, body[0] == '{'
                                     ? "Content-Type: application/json"
                                     : "Content-Type: application/x-www-form-urlencoded");
    if (auth)
        h = gw_http_xfer_header(h, "Authorization", auth);
    struct gw_http_xfer_request req = {
        .method = body ? GW_HTTP_XFER_POST : GW_HTTP_XFER_GET,
        .url = url,
        .hdrs = h,
        .body = body,
        .body_len = body ? strlen(body) : 0,
        .connect_ms = GW_OAUTH_FETCH_MS,
        .timeout_ms = GW_OAUTH_FETCH_MS,
        .body_max = GW_OAUTH_BODY_MAX,
        .event_max = 0,
        .addr_ok = gw_oauth_reach_ok,
        .addr_data = &o->reach,
        .user_agent = "mcpgw",
    };
    o->step = next;
    o->x.ops = &xfer_ops;
    int rc = gw_http_xfer_begin(&o->x, o->multi, &req);
    if (rc < 0) {
        failf(o, -EIO, "could not start a fetch of %.*s", gw_utf8_cut(url, 300), url);
        return;
    }
    o->busy = true;
}

static int x_start(struct gw_http_xfer *x)
{
    /* An SSE answer is not a document: stop at once. */
    return x->sse;
}

static int x_event(struct gw_http_xfer *x, const struct gw_sse_event *ev)
{
    return 1;
}

static void x_done(struct gw_http_xfer *x, CURLcode rc)
{
    struct gw_oauth *o = (struct gw_oauth *)x;
    o->busy = false;
    if (o->step)
        o->step(o, rc);
}

static const struct gw_http_xfer_ops xfer_ops = {x_start, x_event, x_done};

/* A transport-level failure of the fetch in flight, as a sentence. */
static bool fetch_failed(struct gw_oauth *o, CURLcode rc, const char *what)
{
    if (o->x.fail == GW_HTTP_XFER_BODY_TOO_BIG) {
        failf(o, -EFBIG, "%s is larger than %u bytes", what, GW_OAUTH_BODY_MAX);
        return true;
    }
    if (o->x.cx.refused[0]) {
        failf(o, -EACCES, "%s: refused to connect to %s (%s)", what, o->x.cx.refused,
              o->x.cx.refused_own ? "the gateway's own address" : o->reach.refused);
        return true;
    }
    if (rc != CURLE_OK) {
        failf(o, -EIO, "%s could not be fetched: %s", what,
              o->x.errbuf[0] ? o->x.errbuf : curl_easy_strerror(rc));
        return true;
    }
    return false;
}

/* A redirect of a metadata GET, checked and followed. */
static bool follow(struct gw_oauth *o, step_fn again)
{
    char *loc = NULL;
    if (o->x.status < 300 || o->x.status >= 400)
        return false;
    curl_easy_getinfo(o->x.cx.easy, CURLINFO_REDIRECT_URL, &loc);
    if (!loc || ++o->hops > GW_OAUTH_MAX_HOPS) {
        failf(o, -EIO, "a metadata fetch was redirected %s", loc ? "too often" : "nowhere");
        return true;
    }
    char *copy = gw_xstrdup(loc);
    fetch(o, copy, NULL, NULL, again);
    free(copy);
    return true;
}

/* ---- authorize: protected resource, authorization server, client ---- */

static void prm_next(struct gw_oauth *o);
static void asm_next(struct gw_oauth *o);
static void have_client(struct gw_oauth *o);

static void prm_done(struct gw_oauth *o, CURLcode rc)
{
    char why[400];
    if (fetch_failed(o, rc, "the protected resource metadata") || follow(o, prm_done))
        return;
    if (!gw_http_xfer_ok(&o->x)) {
        o->iurl++;
        prm_next(o);
        return;
    }
    gw_oauth_prm_clear(&o->prm);
    if (gw_oauth_prm_read(o->x.rbody, o->x.rlen, o->server_url, &o->prm, why, sizeof(why)) < 0) {
        failf(o, -EINVAL, "%s", why);
        return;
    }
    for (int i = 0; i < o->nurls; i++)
        free(o->urls[i]);
    o->nurls = o->iurl = o->hops = 0;
    if (o->asm_.authorization_endpoint && strcmp(o->asm_.issuer, o->prm.issuer) == 0) {
        have_client(o);
        return;
    }
    gw_oauth_asm_clear(&o->asm_);
    o->nurls = gw_oauth_discovery_urls(GW_OAUTH_ASM, o->prm.issuer, o->urls);
    if (o->nurls < 0) {
        o->nurls = 0;
        failf(o, -EINVAL, "the authorization server %.*s is not a URL",
              gw_utf8_cut(o->prm.issuer, 300), o->prm.issuer);
        return;
    }
    asm_next(o);
}

static void prm_next(struct gw_oauth *o)
{
    o->hops = 0;
    if (o->iurl >= o->nurls) {
        failf(o, -ENOENT, "%s has no protected resource metadata (tried %d URL%s)", o->server_url,
              o->nurls, o->nurls == 1 ? "" : "s");
        return;
    }
    fetch(o, o->urls[o->iurl], NULL, NULL, prm_done);
}

static void asm_done(struct gw_oauth *o, CURLcode rc)
{
    char why[400];
    if (fetch_failed(o, rc, "the authorization server metadata") || follow(o, asm_done))
        return;
    if (!gw_http_xfer_ok(&o->x)) {
        o->iurl++;
        asm_next(o);
        return;
    }
    if (gw_oauth_asm_read(o->x.rbody, o->x.rlen, o->prm.issuer, &o->asm_, why, sizeof(why)) < 0) {
        failf(o, -EINVAL, "%s", why);
        return;
    }
    have_client(o);
}

static void asm_next(struct gw_oauth *o)
{
    o->hops = 0;
    if (o->iurl >= o->nurls) {
        failf(o, -ENOENT, "no authorization server metadata for %.*s",
              gw_utf8_cut(o->prm.issuer, 300), o->prm.issuer);
        return;
    }
    fetch(o, o->urls[o->iurl], NULL, NULL, asm_done);
}

static void set_client(struct gw_oauth *o, struct gw_oauth_client *c, bool registered)
{
    gw_oauth_client_clear(&o->client);
    o->client_registered = registered;
    o->client = *c;
    memset(c, 0, sizeof(*c));
    free(o->client_issuer);
    o->client_issuer = gw_xstrdup(o->asm_.issuer);
    if (registered)
        gw_oauth__save_client(o);
}

static void dcr_done(struct gw_oauth *o, CURLcode rc)
{
    char why[400];
    struct gw_oauth_client c;
    if (fetch_failed(o, rc, "the client registration"))
        return;
    if (!gw_http_xfer_ok(&o->x)) {
        failf(o, -EIO, "the authorization server refused to register the client (HTTP %ld)",
              o->x.status);
        return;
    }
    if (gw_oauth_dcr_read(o->x.rbody, o->x.rlen, &c, why, sizeof(why)) < 0) {
        failf(o, -EINVAL, "%s", why);
        return;
    }
    set_client(o, &c, true);
    have_client(o);
}

static struct flow *free_flow(struct gw_oauth *o)
{
    struct flow *oldest = &o->flows[0];
    for (int i = 0; i < GW_OAUTH_PENDING; i++) {
        struct flow *f = &o->flows[i];
        if (!f->state[0] || f->created + GW_OAUTH_FLOW_SECS < time(NULL))
            return f;
        if (f->created < oldest->created)
            oldest = f;
    }
    return oldest; /* the oldest request loses its place */
}

static void flow_clear(struct flow *f)
{
    gw_oauth__bound_clear(&f->as);
    free(f->resource);
    memset(f, 0, sizeof(*f));
}

/* o->asm_ and the client for it, as a token request's destination. */
static void bound_now(const struct gw_oauth *o, struct bound *b)
{
    b->issuer = gw_xstrdup(o->asm_.issuer);
    b->token_endpoint = gw_xstrdup(o->asm_.token_endpoint);
    b->revocation_endpoint = gw_xstrdup(o->asm_.revocation_endpoint);
    b->client.client_id = gw_xstrdup(o->client.client_id);
    b->client.client_secret = gw_xstrdup(o->client.client_secret);
    b->client.auth = o->client.auth;
}

static void have_client(struct gw_oauth *o)
{
    char why[600];
    if (o->configured.client_id && gw_oauth__issuer_check(o, why, sizeof(why)) < 0) {
        failf(o, -EXDEV, "%s", why);
        return;
    }
    bool same = o->client_issuer && strcmp(o->client_issuer, o->asm_.issuer) == 0;
    /* A Client ID Metadata Document: its URL is the client_id, no
     * registration (a public client: the document names no secret). */
    if (!same && !o->configured.client_id && o->cimd_url && o->asm_.cimd_supported) {
        struct gw_oauth_client c = {gw_xstrdup(o->cimd_url), NULL, GW_OAUTH_AUTH_NONE};
        set_client(o, &c, true);
        same = true;
    }
    if (!same && o->configured.client_id) {
        struct gw_oauth_client c = {gw_xstrdup(o->configured.client_id),
                                    gw_xstrdup(o->configured.client_secret), o->configured.auth};
        if (!c.auth && o->key && !c.client_secret)
            c.auth = o->asm_.auth_methods & GW_OAUTH_AUTH_JWT;
        if (!c.auth)
            c.auth = gw_oauth_auth_choose(&o->asm_, c.client_secret != NULL);
        if (!c.auth) {
            gw_oauth_client_clear(&c);
            failf(o, -EINVAL,
                  "%.*s supports no token endpoint authentication this client can "
                  "use",
                  gw_utf8_cut(o->asm_.issuer, 300), o->asm_.issuer);
            return;
        }
        set_client(o, &c, false);
        same = true;
    }
    char *scopes = o->step_scopes ? gw_xstrdup(o->step_scopes)
                   : o->scopes
                       ? gw_xstrdup(o->scopes)
                       : gw_oauth_scopes_select(o->challenge.scope, o->prm.scopes, o->asm_.scopes);
    if (o->client_credentials) {
        if (!same || (!o->client.client_secret && o->client.auth != GW_OAUTH_AUTH_JWT)) {
            free(scopes);
            failf(o, -EINVAL,
                  "grant client_credentials needs oauth.client_id and client_secret (or "
                  "private_key)");
            return;
        }
        struct gw_oauth_token_request tr = {
            .scope = scopes,
            .resource = o->omit_resource ? NULL : o->prm.resource,
        };
        bound_now(o, &o->req);
        gw_oauth__post_token(o, &tr);
        free(scopes);
        return;
    }
    if (!same) {
        if (!o->asm_.registration_endpoint) {
            free(scopes);
            failf(o, -ENOENT, "%.*s offers no client registration: configure oauth.client_id",
                  gw_utf8_cut(o->asm_.issuer, 300), o->asm_.issuer);
            return;
        }
        o->body = gw_oauth_dcr_request(o->redirect_uri, scopes);
        free(scopes);
        fetch(o, o->asm_.registration_endpoint, o->body, NULL, dcr_done);
        return;
    }
    if (gw_oauth__count_request(o, scopes) < 0) {
        failf(o, -EPERM,
              "%d authorization requests did not get the scopes %.*s: none is made "
              "until a reload or a logout",
              GW_OAUTH_AUTHZ_MAX, gw_utf8_cut(scopes ? scopes : "(none named)", 300),
              scopes ? scopes : "(none named)");
        free(scopes);
        return;
    }
    struct flow *f = free_flow(o);
    flow_clear(f);
    if (gw_oauth_random(f->state) < 0 || gw_oauth_random(f->verifier) < 0) {
        flow_clear(f);
        free(scopes);
        failf(o, -EIO, "no random bytes for the authorization request");
        return;
    }
    bound_now(o, &f->as);
    f->resource = o->omit_resource ? NULL : gw_xstrdup(o->prm.resource);
    f->iss_supported = o->asm_.iss_supported;
    f->created = time(NULL);
    struct gw_oauth_authz_request r = {
        .authorization_endpoint = o->asm_.authorization_endpoint,
        .client_id = o->client.client_id,
        .redirect_uri = o->redirect_uri,
        .verifier = f->verifier,
        .state = f->state,
        .scope = scopes,
        .resource = f->resource,
    };
    free(o->asked_scopes);
    o->asked_scopes = gw_xstrdup(scopes);
    char *url = gw_oauth_authz_url(&r);
    free(scopes);
    finish(o, 0, url);
    free(url);
}

void gw_oauth_set_redirect_uri(struct gw_oauth *o, const char *uri)
{
    free(o->redirect_uri);
    o->redirect_uri = gw_xstrdup(uri);
}

int gw_oauth_authorize(struct gw_oauth *o, gw_oauth_cb cb, void *data)
{
    if (!o->redirect_uri && !o->client_credentials)
        return -EINVAL;
    if (o->gave_up) {
        const char *named = o->authz_scopes[0] ? o->authz_scopes : "(none named)";
        char *why = gw_xasprintf("%d authorization requests did not get the scopes %.*s: none "
                                 "is made until a reload or a logout",
                                 GW_OAUTH_AUTHZ_MAX, gw_utf8_cut(named, 300), named);
        cb(data, -EPERM, why);
        free(why);
        return 0;
    }
    int j = join(o, OP_AUTHORIZE, cb, data);
    if (j != 0)
        return j < 0 ? j : 0;
    if (o->challenge.resource_metadata) {
        o->urls[0] = gw_xstrdup(o->challenge.resource_metadata);
        o->nurls = 1;
    } else {
        o->nurls = gw_oauth_discovery_urls(GW_OAUTH_PRM, o->server_url, o->urls);
        if (o->nurls < 0)
            o->nurls = 0;
    }
    o->iurl = 0;
    prm_next(o);
    return 0;
}

/* ---- tokens ---- */

static struct flow *find_flow(const struct gw_oauth *o, const char *query)
{
    bool dup;
    char *state = gw_oauth_form_get(query, "state", &dup);
    struct flow *hit = NULL;
    for (int i = 0; state && i < GW_OAUTH_PENDING; i++) {
        const struct flow *f = &o->flows[i];
        if (f->state[0] && f->created + GW_OAUTH_FLOW_SECS >= time(NULL) &&
            gw_secure_equal(f->state, strlen(f->state), state, strlen(state)))
            hit = (struct flow *)f;
    }
    free(state);
    return hit;
}

bool gw_oauth_owns_state(const struct gw_oauth *o, const char *query)
{
    return find_flow(o, query) != NULL;
}

int gw_oauth_redeem(struct gw_oauth *o, const char *query, gw_oauth_cb cb, void *data)
{
    struct flow *f = find_flow(o, query);
    if (!f)
        return -EACCES;
    if (o->op != OP_NONE)
        return -EBUSY;
    struct flow used = *f; /* the state is spent from here on */
    memset(f, 0, sizeof(*f));
    join(o, OP_REDEEM, cb, data);
    struct gw_oauth_redirect r;
    char why[400];
    int rc = gw_oauth_redirect_read(query, used.state, used.as.issuer, used.iss_supported, &r, why,
                                    sizeof(why));
    if (rc < 0) {
        if (r.error)
            failf(o, rc, "%s: %s", why, r.error);
        else
            failf(o, rc, "%s", why);
    } else {
        struct gw_oauth_token_request tr = {.code = r.code,
                                            .verifier = used.verifier,
                                            .redirect_uri = o->redirect_uri,
                                            .resource = used.resource};
        o->req = used.as; /* the token request carries the flow's own client */
        memset(&used.as, 0, sizeof(used.as));
        gw_oauth__post_token(o, &tr);
    }
    gw_oauth_redirect_clear(&r);
    flow_clear(&used);
    return 0;
}

/* ---- for the grant's operations (oauth_grant.c) ---- */

void gw_oauth__fetch(struct gw_oauth *o, const char *url, const char *body, const char *auth,
                     step_fn next)
{
    fetch(o, url, body, auth, next);
}

void gw_oauth__finish(struct gw_oauth *o, int rc, const char *text)
{
    finish(o, rc, text);
}

void gw_oauth__failf(struct gw_oauth *o, int rc, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    finish(o, rc, why);
}

bool gw_oauth__fetch_failed(struct gw_oauth *o, CURLcode rc, const char *what)
{
    return fetch_failed(o, rc, what);
}

int gw_oauth__join(struct gw_oauth *o, enum op op, gw_oauth_cb cb, void *data)
{
    return join(o, op, cb, data);
}

/* ---- life ---- */

int gw_oauth_challenged(struct gw_oauth *o, const char *www_authenticate)
{
    struct gw_oauth_challenge c;
    int rc = gw_oauth_challenge_parse(www_authenticate, &c);
    if (rc == 0) {
        gw_oauth_challenge_clear(&o->challenge);
        o->challenge = c;
        o->challenged = true;
        gw_oauth__note_challenge(o);
    }
    return rc;
}

bool gw_oauth_needs_authorization(const struct gw_oauth *o)
{
    return o->challenged;
}

bool gw_oauth_step_up_pending(const struct gw_oauth *o)
{
    return o->step_scopes != NULL;
}

int gw_oauth_step_up(struct gw_oauth *o, const char *www_authenticate)
{
    struct gw_oauth_challenge c;
    if (gw_oauth_challenge_parse(www_authenticate, &c) < 0)
        return -EINVAL;
    if (!c.error || strcmp(c.error, "insufficient_scope") != 0) {
        gw_oauth_challenge_clear(&c);
        return -EINVAL;
    }
    /* The union: what the grant holds (or what was asked for), then the
     * challenge's, each once (gw_oauth_scopes_select drops repeats). */
    const char *held = o->token.scope ? o->token.scope : o->asked_scopes;
    char *both =
        held && c.scope ? gw_xasprintf("%s %s", held, c.scope) : gw_xstrdup(held ? held : c.scope);
    free(o->step_scopes);
    o->step_scopes = gw_oauth_scopes_select(both, NULL, "offline_access");
    free(both);
    if (!o->step_scopes)
        o->step_scopes = gw_xstrdup("");
    if (c.resource_metadata) { /* else keep the one the 401 named */
        gw_oauth_challenge_clear(&o->challenge);
        o->challenge = c;
    } else {
        gw_oauth_challenge_clear(&c);
    }
    o->challenged = true;
    gw_oauth__note_challenge(o);
    return 0;
}

struct gw_oauth *gw_oauth_new(uv_loop_t *loop, struct gw_curl_uv *multi,
                              const struct gw_oauth_settings *s)
{
    struct gw_oauth *o = gw_xcalloc(1, sizeof(*o));
    struct gw_oauth_url u;
    char why[8];
    o->multi = multi;
    uv_timer_init(loop, &o->ahead);
    o->ahead.data = o;
    uv_unref((uv_handle_t *)&o->ahead);
    o->server_url = gw_xstrdup(s->server_url);
    o->redirect_uri = gw_xstrdup(s->redirect_uri);
    o->scopes = gw_xstrdup(s->scopes);
    o->cimd_url = gw_xstrdup(s->client_metadata_url);
    o->omit_resource = s->omit_resource;
    o->client_credentials = s->client_credentials;
    o->configured.client_id = gw_xstrdup(s->client_id);
    o->configured.client_secret = gw_xstrdup(s->client_secret);
    o->configured.auth = s->auth;
    o->pinned_issuer = gw_xstrdup(s->issuer);
    gw_oauth__load_key(o, s->private_key);
    if (gw_oauth_url_parse(s->server_url, &u, why, sizeof(why)) == 0) {
        gw_strlcpy(o->server_host, u.host, sizeof(o->server_host));
        gw_oauth_url_clear(&u);
    }
    if (s->state_dir) {
        o->state_dir = gw_xstrdup(s->state_dir);
        o->store_dir = gw_xasprintf("%s/oauth", s->state_dir);
        gw_oauth__load(o);
        gw_oauth__schedule_ahead(o);
    }
    return o;
}

static void on_ahead_closed(uv_handle_t *h)
{
    free(h->data);
}

void gw_oauth_free(struct gw_oauth *o)
{
    if (!o)
        return;
    if (o->busy)
        gw_curl_uv_remove(o->multi, &o->x.cx);
    gw_http_xfer_cleanup(&o->x);
    while (o->waiters) {
        struct waiter *next = o->waiters->next;
        free(o->waiters);
        o->waiters = next;
    }
    for (int i = 0; i < o->nurls; i++)
        free(o->urls[i]);
    for (int i = 0; i < GW_OAUTH_PENDING; i++)
        flow_clear(&o->flows[i]);
    free(o->body);
    free(o->server_url);
    free(o->redirect_uri);
    free(o->scopes);
    free(o->cimd_url);
    free(o->step_scopes);
    free(o->asked_scopes);
    free(o->authz_scopes);
    free(o->client_issuer);
    free(o->store_dir);
    free(o->state_dir);
    gw_oauth_client_clear(&o->configured);
    free(o->pinned_issuer);
    free(o->secret_issuer);
    gw_oauth__bound_clear(&o->grant);
    gw_oauth__bound_clear(&o->req);
    gw_jws_key_free(o->key);
    gw_oauth_client_clear(&o->client);
    gw_oauth_challenge_clear(&o->challenge);
    gw_oauth_prm_clear(&o->prm);
    gw_oauth_asm_clear(&o->asm_);
    gw_oauth_token_clear(&o->token);
    uv_close((uv_handle_t *)&o->ahead, on_ahead_closed); /* frees o */
}
