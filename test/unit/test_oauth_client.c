/* One server's OAuth client on a real loop and libcurl (gw/oauth.h,
 * oauth_client.c) against a small authorization server and protected
 * resource on loopback, run by the test's own loop: the discovery order
 * (a 404 moves on, a redirect is followed), Dynamic Client Registration,
 * the authorization URL, the code exchange with the PKCE verifier that
 * matches the challenge sent, state used once, a single-flight refresh
 * that keeps the refresh token, and refusals (a metadata address, an
 * oversized document) that fetch nothing; the state directory's order,
 * the store's modes and atomic files, and a restart that reuses the grant
 * on disk until a refused refresh removes it; the HTTP transport handing
 * a 401's challenge to the client and sending its token once it has one. */
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "gw/curl_uv.h"
#include "gw/oauth.h"
#include "gw/redact.h"
#include "gw/upstream_http.h"

/* ---- the responder ---- */

struct conn {
    uv_tcp_t tcp;
    char buf[65536];
    size_t len;
};

static struct {
    uv_tcp_t server;
    int port;
    char paths[32][160];
    int npaths;
    char last_body[4096];
    char last_auth[256];
    int token_posts;
    int big_prm;
    int refuse_refresh;
    int short_ttl;      /* the code's tokens live 1 s */
    int refreshed;      /* refresh grants answered */
    int cimd;           /* the metadata advertises client ID metadata documents */
    const char *accept; /* the token /mcp takes (NULL: at-1) */
} R;

static void on_closed(uv_handle_t *h)
{
    free(h->data);
}

static void on_written(uv_write_t *w, int status)
{
    free(w->data);
    free(w);
}

static void reply(struct conn *c, int status, const char *extra, const char *body)
{
    size_t blen = strlen(body);
    char *out = malloc(blen + 512);
    int n = snprintf(out, 512,
                     "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: "
                     "%zu\r\nConnection: close\r\n%s\r\n",
                     status, blen, extra ? extra : "");
    memcpy(out + n, body, blen);
    uv_write_t *w = malloc(sizeof(*w));
    w->data = out;
    uv_buf_t b = uv_buf_init(out, (unsigned)(n + (int)blen));
    uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, on_written);
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static char *doc(const char *fmt)
{
    static char out[8192];
    char origin[64];
    snprintf(origin, sizeof(origin), "http://127.0.0.1:%d", R.port);
    /* every %s is the origin */
    snprintf(out, sizeof(out), fmt, origin, origin, origin, origin, origin, origin);
    return out;
}

static void route(struct conn *c, const char *method, const char *path, const char *body)
{
    if (R.npaths < 32)
        snprintf(R.paths[R.npaths++], 160, "%s %s", method, path);
    if (strcmp(path, "/mcp") == 0) {
        char want[64];
        snprintf(want, sizeof(want), "Authorization: Bearer %s", R.accept ? R.accept : "at-1");
        if (strcmp(R.last_auth, want) == 0) {
            reply(c, 200, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
            return;
        }
        char challenge[256];
        snprintf(
            challenge, sizeof(challenge),
            "WWW-Authenticate: Bearer error=\"invalid_token\", "
            "resource_metadata=\"http://127.0.0.1:%d/.well-known/oauth-protected-resource\"\r\n",
            R.port);
        reply(c, 401, challenge, "{}");
    } else if (strcmp(path, "/.well-known/oauth-protected-resource") == 0) {
        if (R.big_prm) {
            char *big = malloc(300 << 10);
            memset(big, ' ', (300 << 10) - 1);
            big[(300 << 10) - 1] = 0;
            reply(c, 200, NULL, big);
            free(big);
            return;
        }
        reply(c, 200, NULL,
              doc("{\"resource\":\"%s/mcp\",\"authorization_servers\":[\"%s/tenant\"],"
                  "\"scopes_supported\":[\"mcp:tools\",\"offline_access\"]}"));
    } else if (strcmp(path, "/.well-known/openid-configuration/tenant") == 0) {
        reply(c, 302, "Location: /meta\r\n", "");
    } else if (strcmp(path, "/meta") == 0) {
        const char *d =
            doc("{\"issuer\":\"%s/tenant\",\"authorization_endpoint\":\"%s/authorize\","
                "\"token_endpoint\":\"%s/token\",\"registration_endpoint\":\"%s/register\","
                "\"code_challenge_methods_supported\":[\"S256\"],"
                "\"authorization_response_iss_parameter_supported\":true,"
                "\"token_endpoint_auth_methods_supported\":[\"none\"]}");
        char meta[8400];
        snprintf(meta, sizeof(meta), "{%s%s",
                 R.cimd ? "\"client_id_metadata_document_supported\":true," : "", d + 1);
        reply(c, 200, NULL, meta);
    } else if (strcmp(path, "/register") == 0 && strcmp(method, "POST") == 0) {
        reply(c, 201, NULL, "{\"client_id\":\"client-1\",\"token_endpoint_auth_method\":\"none\"}");
    } else if (strcmp(path, "/token") == 0 && strcmp(method, "POST") == 0) {
        R.token_posts++;
        snprintf(R.last_body, sizeof(R.last_body), "%s", body);
        if (strstr(body, "grant_type=refresh_token") && R.refuse_refresh)
            reply(c, 400, NULL, "{\"error\":\"invalid_grant\"}");
        else if (strstr(body, "grant_type=refresh_token") && ++R.refreshed)
            reply(c, 200, NULL, "{\"access_token\":\"at-2\",\"token_type\":\"Bearer\"}");
        else if (R.short_ttl)
            reply(c, 200, NULL,
                  "{\"access_token\":\"at-1\",\"token_type\":\"Bearer\",\"expires_in\":1,"
                  "\"refresh_token\":\"rt-1\"}");
        else
            reply(c, 200, NULL,
                  "{\"access_token\":\"at-1\",\"token_type\":\"Bearer\",\"expires_in\":60,"
                  "\"refresh_token\":\"rt-1\"}");
    } else {
        reply(c, 404, NULL, "{}");
    }
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *b)
{
    struct conn *c = h->data;
    *b = uv_buf_init(c->buf + c->len, (unsigned)(sizeof(c->buf) - c->len - 1));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct conn *c = s->data;
    if (n < 0) {
        uv_close((uv_handle_t *)s, on_closed);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = 0;
    char *end = strstr(c->buf, "\r\n\r\n");
    if (!end)
        return;
    const char *cl = strcasestr(c->buf, "content-length:");
    size_t want = cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0;
    if (c->len < (size_t)(end + 4 - c->buf) + want)
        return;
    R.last_auth[0] = 0;
    const char *auth = strcasestr(c->buf, "authorization:");
    if (auth && auth < end)
        snprintf(R.last_auth, sizeof(R.last_auth), "%.*s", (int)strcspn(auth, "\r"), auth);
    char method[8] = "", path[128] = "";
    sscanf(c->buf, "%7s %127s", method, path);
    uv_read_stop(s);
    route(c, method, path, end + 4);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct conn *c = calloc(1, sizeof(*c));
    uv_tcp_init(server->loop, &c->tcp);
    c->tcp.data = c;
    uv_accept(server, (uv_stream_t *)&c->tcp);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void responder_start(uv_loop_t *loop)
{
    struct sockaddr_in a;
    int len = sizeof(a);
    memset(&R, 0, sizeof(R));
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_init(loop, &R.server);
    ck_assert_int_eq(uv_tcp_bind(&R.server, (struct sockaddr *)&a, 0), 0);
    ck_assert_int_eq(uv_listen((uv_stream_t *)&R.server, 16, on_connection), 0);
    uv_tcp_getsockname(&R.server, (struct sockaddr *)&a, &len);
    R.port = ntohs(a.sin_port);
}

/* ---- the client side ---- */

struct outcome {
    int done, rc;
    char text[4096];
};

static void on_outcome(void *data, int rc, const char *text)
{
    struct outcome *o = data;
    o->done++;
    o->rc = rc;
    snprintf(o->text, sizeof(o->text), "%s", text ? text : "");
}

static void run_until(uv_loop_t *loop, const int *flag)
{
    for (int i = 0; i < 100000 && !*flag; i++)
        uv_run(loop, UV_RUN_ONCE);
    ck_assert(*flag);
}

static void multi_closed(void *data)
{
    *(int *)data = 1;
}

struct fixture {
    uv_loop_t loop;
    struct gw_curl_uv *multi;
    struct gw_oauth *o;
    char url[128], redirect[128];
};

static void setup_fixture_in(struct fixture *f, const char *store_dir)
{
    char why[200];
    uv_loop_init(&f->loop);
    responder_start(&f->loop);
    f->multi = gw_curl_uv_new(&f->loop);
    ck_assert_int_eq(gw_curl_uv_open(f->multi, why, sizeof(why)), 0);
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/mcp", R.port);
    snprintf(f->redirect, sizeof(f->redirect), "http://127.0.0.1:1/oauth/callback");
    struct gw_oauth_settings s = {
        .server_url = f->url, .redirect_uri = f->redirect, .state_dir = store_dir};
    f->o = gw_oauth_new(&f->loop, f->multi, &s);
}

static void setup_fixture(struct fixture *f)
{
    setup_fixture_in(f, NULL);
}

static void teardown_fixture(struct fixture *f)
{
    int closed = 0;
    gw_oauth_free(f->o);
    gw_curl_uv_close(f->multi, multi_closed, &closed);
    run_until(&f->loop, &closed);
    uv_close((uv_handle_t *)&R.server, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&f->loop), 0);
}

static char *param(const char *url, const char *name)
{
    bool dup;
    const char *q = strchr(url, '?');
    return gw_oauth_form_get(q ? q + 1 : "", name, &dup);
}

START_TEST(test_full_flow)
{
    struct fixture f;
    struct outcome a = {0}, r = {0}, r2 = {0}, x = {0}, y = {0};
    setup_fixture(&f);

    ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &a), 0);
    run_until(&f.loop, &a.done);
    ck_assert_msg(a.rc == 0, "%s", a.text);
    static const char *order[] = {
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server/tenant",
        "GET /.well-known/openid-configuration/tenant",
        "GET /meta",
        "POST /register",
    };
    ck_assert_int_eq(R.npaths, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_str_eq(R.paths[i], order[i]);

    char prefix[128];
    snprintf(prefix, sizeof(prefix), "http://127.0.0.1:%d/authorize?response_type=code&", R.port);
    ck_assert_msg(strncmp(a.text, prefix, strlen(prefix)) == 0, "%s", a.text);
    char *client = param(a.text, "client_id"), *resource = param(a.text, "resource");
    char *scope = param(a.text, "scope"), *state = param(a.text, "state");
    char *challenge = param(a.text, "code_challenge");
    ck_assert_str_eq(client, "client-1");
    ck_assert_str_eq(resource, f.url);
    ck_assert_str_eq(scope, "mcp:tools"); /* offline_access: the AS does not list it */

    /* The redirect back, with the issuer RFC 9207 asks for. */
    char *q = NULL, issuer[64];
    snprintf(issuer, sizeof(issuer), "http://127.0.0.1:%d/tenant", R.port);
    gw_oauth_form_add(&q, "code", "the-code");
    gw_oauth_form_add(&q, "state", state);
    gw_oauth_form_add(&q, "iss", issuer);
    ck_assert(gw_oauth_owns_state(f.o, q));
    ck_assert_int_eq(gw_oauth_redeem(f.o, q, on_outcome, &r), 0);
    run_until(&f.loop, &r.done);
    ck_assert_msg(r.rc == 0, "%s", r.text);
    ck_assert_str_eq(gw_oauth_access_token(f.o), "at-1");
    ck_assert_uint_gt(gw_oauth_expires_ms(f.o), 0);
    ck_assert_int_eq(R.token_posts, 1);
    char *verifier = gw_oauth_form_get(R.last_body, "code_verifier", &(bool){0});
    char expect[GW_OAUTH_RANDOM_LEN];
    gw_oauth_pkce_challenge(verifier, expect);
    ck_assert_str_eq(expect, challenge);
    ck_assert_ptr_nonnull(strstr(R.last_body, "code=the-code"));
    ck_assert_ptr_nonnull(strstr(R.last_body, "client_id=client-1"));
    ck_assert_ptr_nonnull(strstr(R.last_body, "resource=http%3A%2F%2F127.0.0.1"));
    ck_assert_str_eq(R.last_auth, ""); /* a public client: no Authorization */

    /* The state is spent. */
    ck_assert(!gw_oauth_owns_state(f.o, q));
    ck_assert_int_eq(gw_oauth_redeem(f.o, q, on_outcome, &r2), -EACCES);
    ck_assert_int_eq(R.token_posts, 1);

    /* Two refreshes at once make one request; the refresh token is kept. */
    ck_assert_int_eq(gw_oauth_refresh(f.o, on_outcome, &x), 0);
    ck_assert_int_eq(gw_oauth_refresh(f.o, on_outcome, &y), 0);
    run_until(&f.loop, &y.done);
    ck_assert_int_eq(x.done, 1);
    ck_assert_int_eq(x.rc, 0);
    ck_assert_int_eq(y.rc, 0);
    ck_assert_int_eq(R.token_posts, 2);
    ck_assert_ptr_nonnull(strstr(R.last_body, "refresh_token=rt-1"));
    ck_assert_str_eq(gw_oauth_access_token(f.o), "at-2");

    /* Its secrets are masked where the gateway masks configured ones. */
    struct gw_redact *red = gw_redact_new();
    char line[] = "echo: at-2 and rt-1";
    gw_oauth_redact_add(f.o, red);
    line[gw_redact_line(red, line, strlen(line), false)] = 0;
    ck_assert_str_eq(line, "echo: *** and ***");
    gw_redact_free(red);

    free(q);
    free(verifier);
    free(client);
    free(resource);
    free(scope);
    free(state);
    free(challenge);
    teardown_fixture(&f);
}
END_TEST

START_TEST(test_refusals)
{
    struct fixture f;
    struct outcome a = {0}, b = {0}, c = {0};
    setup_fixture(&f);

    /* A challenge pointing at the metadata service: nothing fetched. */
    ck_assert_int_eq(gw_oauth_challenged(f.o, "Bearer resource_metadata=\"https://169.254.169.254/"
                                              "latest/meta-data\""),
                     0);
    ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &a), 0);
    run_until(&f.loop, &a.done);
    ck_assert_int_eq(a.rc, -EACCES);
    ck_assert_msg(strstr(a.text, "metadata address") != NULL, "%s", a.text);
    ck_assert_int_eq(R.npaths, 0);

    /* Plain http to a host that is not loopback. */
    ck_assert_int_eq(gw_oauth_challenged(f.o, "Bearer resource_metadata=\"http://example.com/x\""),
                     0);
    ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &b), 0);
    run_until(&f.loop, &b.done);
    ck_assert_int_eq(b.rc, -EACCES);
    ck_assert_int_eq(R.npaths, 0);

    /* An oversized document. */
    char rm[128];
    snprintf(rm, sizeof(rm),
             "Bearer resource_metadata=\"http://127.0.0.1:%d/.well-known/oauth-"
             "protected-resource\"",
             R.port);
    ck_assert_int_eq(gw_oauth_challenged(f.o, rm), 0);
    R.big_prm = 1;
    ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &c), 0);
    run_until(&f.loop, &c.done);
    ck_assert_int_eq(c.rc, -EFBIG);
    ck_assert_int_eq(R.npaths, 1);

    /* Nothing to refresh; a redirect with a state nobody issued. */
    ck_assert_int_eq(gw_oauth_refresh(f.o, on_outcome, &c), -ENOENT);
    ck_assert_int_eq(gw_oauth_redeem(f.o, "code=x&state=forged", on_outcome, &c), -EACCES);
    teardown_fixture(&f);
}
END_TEST

/* Authorizes f->o against the responder: authorize, then the redirect. */
static void authorize_fully(struct fixture *f)
{
    struct outcome a = {0}, r = {0};
    char issuer[64];
    ck_assert_int_eq(gw_oauth_authorize(f->o, on_outcome, &a), 0);
    run_until(&f->loop, &a.done);
    ck_assert_msg(a.rc == 0, "%s", a.text);
    char *state = param(a.text, "state"), *q = NULL;
    snprintf(issuer, sizeof(issuer), "http://127.0.0.1:%d/tenant", R.port);
    gw_oauth_form_add(&q, "code", "c");
    gw_oauth_form_add(&q, "state", state);
    gw_oauth_form_add(&q, "iss", issuer);
    ck_assert_int_eq(gw_oauth_redeem(f->o, q, on_outcome, &r), 0);
    run_until(&f->loop, &r.done);
    ck_assert_msg(r.rc == 0, "%s", r.text);
    free(state);
    free(q);
}

static char *tmpdir(void)
{
    char *d = strdup("/tmp/test_oauth_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void rm_tree(const char *root)
{
    nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    return st.st_mode & 07777;
}

static int count_files(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
    closedir(d);
    return n;
}

START_TEST(test_state_dir)
{
    char *d;
    setenv("STATE_DIRECTORY", "/var/lib/mcpgw:/var/lib/other", 1);
    setenv("XDG_STATE_HOME", "/xdg", 1);
    setenv("HOME", "/home/u", 1);
    d = gw_oauth_state_dir("/conf");
    ck_assert_str_eq(d, "/conf");
    free(d);
    d = gw_oauth_state_dir(NULL);
    ck_assert_str_eq(d, "/var/lib/mcpgw");
    free(d);
    unsetenv("STATE_DIRECTORY");
    d = gw_oauth_state_dir(NULL);
    ck_assert_str_eq(d, "/xdg/mcpgw");
    free(d);
    setenv("XDG_STATE_HOME", "relative", 1);
    d = gw_oauth_state_dir(NULL);
    ck_assert_str_eq(d, "/home/u/.local/state/mcpgw");
    free(d);
    unsetenv("XDG_STATE_HOME");
    unsetenv("HOME");
    ck_assert_ptr_null(gw_oauth_state_dir(NULL));
}
END_TEST

START_TEST(test_store_files)
{
    char *root = tmpdir(), *dir, why[200], name[GW_OAUTH_NAME_LEN], path[512];
    char *state = malloc(strlen(root) + 16);
    sprintf(state, "%s/a/b", root);
    ck_assert_int_eq(gw_oauth_store_open(state, &dir, why, sizeof(why)), 0);
    ck_assert_uint_eq(mode_of(dir), 0700);
    chmod(dir, 0755); /* widened by hand: restricted again */
    free(dir);
    ck_assert_int_eq(gw_oauth_store_open(state, &dir, why, sizeof(why)), 0);
    ck_assert_uint_eq(mode_of(dir), 0700);
    free(dir);
    ck_assert_int_eq(gw_oauth_store_open("relative", &dir, why, sizeof(why)) < 0, 1);
    ck_assert_int_eq(gw_oauth_store_open(state, &dir, why, sizeof(why)), 0);

    gw_oauth_store_name("grant", "https://mcp.example/mcp", name);
    ck_assert_uint_eq(strlen(name), strlen("grant-") + 32 + strlen(".json"));
    ck_assert_int_eq(gw_oauth_store_write(dir, name, "{\"a\":1}", 7), 0);
    ck_assert_int_eq(gw_oauth_store_write(dir, name, "{\"a\":2}", 7), 0);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ck_assert_uint_eq(mode_of(path), 0600);
    ck_assert_int_eq(count_files(dir), 1); /* no temporary file left */
    char *back = gw_oauth_store_read(dir, name, 1024, why, sizeof(why));
    ck_assert_str_eq(back, "{\"a\":2}");
    free(back);
    ck_assert_ptr_null(gw_oauth_store_read(dir, name, 3, why, sizeof(why))); /* over the cap */
    /* A symlink in place of a file is not followed. */
    char link[512];
    snprintf(link, sizeof(link), "%s/link.json", dir);
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_ptr_null(gw_oauth_store_read(dir, "link.json", 1024, why, sizeof(why)));
    unlink(link);
    ck_assert_int_eq(gw_oauth_store_remove(dir, name), 0);
    ck_assert_int_eq(gw_oauth_store_remove(dir, name), 0);
    ck_assert_int_eq(count_files(dir), 0);
    free(dir);
    free(state);
    rm_tree(root);
    free(root);
}
END_TEST

START_TEST(test_restart_reuses_grant)
{
    char *root = tmpdir(), *dir, why[200], name[GW_OAUTH_NAME_LEN], path[600];
    struct fixture f;
    struct outcome x = {0}, y = {0};
    setup_fixture_in(&f, root); /* <root>/oauth is made on the first save */
    dir = NULL;
    authorize_fully(&f);
    ck_assert_int_eq(gw_oauth_store_open(root, &dir, why, sizeof(why)), 0);
    ck_assert_uint_eq(mode_of(dir), 0700);
    ck_assert_int_eq(count_files(dir), 2); /* the registration and the grant */
    gw_oauth_store_name("grant", f.url, name);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ck_assert_uint_eq(mode_of(path), 0600);
    int paths_before = R.npaths;

    /* "Restart": a new client for the same server and directory. */
    gw_oauth_free(f.o);
    struct gw_oauth_settings s = {
        .server_url = f.url, .redirect_uri = f.redirect, .state_dir = root};
    f.o = gw_oauth_new(&f.loop, f.multi, &s);
    ck_assert_str_eq(gw_oauth_access_token(f.o), "at-1");
    ck_assert_uint_gt(gw_oauth_expires_ms(f.o), 0);
    ck_assert_int_eq(R.npaths, paths_before); /* nothing fetched */
    ck_assert_int_eq(gw_oauth_refresh(f.o, on_outcome, &x), 0);
    run_until(&f.loop, &x.done);
    ck_assert_msg(x.rc == 0, "%s", x.text);
    ck_assert_ptr_nonnull(strstr(R.last_body, "refresh_token=rt-1"));
    ck_assert_ptr_nonnull(strstr(R.last_body, "client_id=client-1"));
    ck_assert_str_eq(gw_oauth_access_token(f.o), "at-2");

    /* A refused refresh forgets the grant, on disk too. */
    R.refuse_refresh = 1;
    ck_assert_int_eq(gw_oauth_refresh(f.o, on_outcome, &y), 0);
    run_until(&f.loop, &y.done);
    ck_assert_int_eq(y.rc, -EACCES);
    ck_assert_ptr_nonnull(strstr(y.text, "invalid_grant"));
    ck_assert_ptr_null(gw_oauth_access_token(f.o));
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(count_files(dir), 1);
    teardown_fixture(&f);
    free(dir);
    rm_tree(root);
    free(root);
}
END_TEST

START_TEST(test_client_metadata_document)
{
    struct fixture f;
    struct outcome a = {0};
    setup_fixture(&f);
    R.cimd = 1;
    gw_oauth_free(f.o);
    struct gw_oauth_settings s = {.server_url = f.url,
                                  .redirect_uri = f.redirect,
                                  .client_metadata_url = "https://gw.example/client.json"};
    f.o = gw_oauth_new(&f.loop, f.multi, &s);
    ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &a), 0);
    run_until(&f.loop, &a.done);
    ck_assert_msg(a.rc == 0, "%s", a.text);
    char *client = param(a.text, "client_id");
    ck_assert_str_eq(client, "https://gw.example/client.json");
    for (int i = 0; i < R.npaths; i++) /* no registration */
        ck_assert_str_ne(R.paths[i], "POST /register");
    free(client);
    teardown_fixture(&f);
}
END_TEST

START_TEST(test_step_up)
{
    struct fixture f;
    struct outcome a = {0};
    setup_fixture(&f);
    authorize_fully(&f); /* asked for mcp:tools */
    ck_assert(!gw_oauth_step_up_pending(f.o));
    /* A 401 is no step-up; a 403 without insufficient_scope neither. */
    ck_assert_int_eq(gw_oauth_step_up(f.o, "Bearer error=\"invalid_token\""), -EINVAL);
    ck_assert_int_eq(gw_oauth_step_up(f.o, "Basic realm=\"x\""), -EINVAL);
    ck_assert_int_eq(
        gw_oauth_step_up(f.o, "Bearer error=\"insufficient_scope\", scope=\"mcp:admin mcp:tools\""),
        0);
    ck_assert(gw_oauth_step_up_pending(f.o));
    ck_assert(gw_oauth_needs_authorization(f.o));
    /* The next authorization asks for the union, each scope once. */
    ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &a), 0);
    run_until(&f.loop, &a.done);
    ck_assert_msg(a.rc == 0, "%s", a.text);
    char *scope = param(a.text, "scope");
    ck_assert_str_eq(scope, "mcp:tools mcp:admin");
    free(scope);
    teardown_fixture(&f);
}
END_TEST

/* At most GW_OAUTH_AUTHZ_MAX authorization requests per operation; a
 * step-up for other scopes is another operation; a reload begins again. */
START_TEST(test_authorization_limit)
{
    struct fixture f;
    setup_fixture(&f);
    authorize_fully(&f);
    const char *admin = "Bearer error=\"insufficient_scope\", scope=\"mcp:admin\"";
    ck_assert_int_eq(gw_oauth_step_up(f.o, admin), 0);
    for (int i = 0; i <= GW_OAUTH_AUTHZ_MAX; i++) {
        struct outcome a = {0};
        ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &a), 0);
        run_until(&f.loop, &a.done);
        ck_assert_int_eq(a.rc, i < GW_OAUTH_AUTHZ_MAX ? 0 : -EPERM);
        ck_assert(!gw_oauth_gave_up(f.o) == (i < GW_OAUTH_AUTHZ_MAX));
    }
    ck_assert_str_eq(gw_oauth_gave_up(f.o), "mcp:tools mcp:admin");
    struct outcome b = {0}; /* refused at once, no fetch */
    ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &b), 0);
    ck_assert_int_eq(b.done, 1);
    ck_assert_int_eq(b.rc, -EPERM);
    ck_assert_ptr_nonnull(strstr(b.text, "did not get the scopes mcp:tools mcp:admin"));
    /* Other scopes: a new count. */
    ck_assert_int_eq(gw_oauth_step_up(f.o, "Bearer error=\"insufficient_scope\", scope=\"x:y\""),
                     0);
    ck_assert_ptr_null(gw_oauth_gave_up(f.o));
    gw_oauth_limit_reset(f.o);
    struct outcome c = {0};
    ck_assert_int_eq(gw_oauth_authorize(f.o, on_outcome, &c), 0);
    run_until(&f.loop, &c.done);
    ck_assert_int_eq(c.rc, 0);
    teardown_fixture(&f);
}
END_TEST

START_TEST(test_refresh_ahead)
{
    struct fixture f;
    setup_fixture(&f);
    R.short_ttl = 1;
    authorize_fully(&f);
    ck_assert_str_eq(gw_oauth_access_token(f.o), "at-1");
    /* Nobody asks: the client refreshes before the second is over. */
    run_until(&f.loop, &R.refreshed);
    while (strcmp(gw_oauth_access_token(f.o), "at-2") != 0)
        uv_run(&f.loop, UV_RUN_ONCE);
    ck_assert_int_eq(R.refreshed, 1);
    ck_assert_ptr_nonnull(strstr(R.last_body, "refresh_token=rt-1"));
    teardown_fixture(&f);
}
END_TEST

/* ---- the HTTP transport with the client ---- */

struct tctx {
    char msg[1024];
    int msgs, closed, down;
};

static void t_message(void *data, const char *msg, size_t len)
{
    struct tctx *t = data;
    snprintf(t->msg, sizeof(t->msg), "%.*s", (int)len, msg);
    t->msgs++;
}

static void t_down(void *data, int code, const char *why)
{
    ((struct tctx *)data)->down = code;
}

static void t_not_run(void *data, json_t *id, const char *why) {}

static void t_closed(void *data)
{
    ((struct tctx *)data)->closed = 1;
}

static void ping(struct fixture *f, struct gw_upstream_http *h, struct tctx *t)
{
    static const char msg[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    int before = t->msgs;
    ck_assert_int_eq(gw_transport_send(gw_upstream_http_transport(h), msg, strlen(msg)), 0);
    while (t->msgs == before)
        uv_run(&f->loop, UV_RUN_ONCE);
}

/* An HTTP transport to the fixture's MCP server that sends f's token (no
 * GET stream); its upcalls land in t. The transport copies cfg and cbs. */
static struct gw_upstream_http *start_transport(struct fixture *f, struct tctx *t)
{
    struct gw_server_config cfg = {.id = "t",
                                   .ok = true,
                                   .transport = GW_TRANSPORT_STREAMABLE_HTTP,
                                   .url = f->url,
                                   .timeout_ms = 2000,
                                   .sse_read_timeout_ms = 30000};
    struct gw_upstream_http_options o;
    gw_upstream_http_options_init(&o);
    o.get_stream = 0;
    o.oauth = f->o;
    struct gw_transport_cbs cbs = {t_message, t_down, t_not_run, t_closed, t, NULL};
    struct gw_upstream_http *h;
    char why[200];
    ck_assert_int_eq(
        gw_upstream_http_start(&f->loop, f->multi, &cfg, &o, &cbs, &h, why, sizeof(why)), 0);
    return h;
}

START_TEST(test_transport_bearer)
{
    struct fixture f;
    struct tctx t = {0};
    setup_fixture(&f);
    struct gw_upstream_http *h = start_transport(&f, &t);

    /* Without a token: a 401 whose challenge the client keeps. */
    ck_assert(!gw_oauth_needs_authorization(f.o));
    ping(&f, h, &t);
    ck_assert_msg(strstr(t.msg, "\"httpStatus\":401") != NULL, "%s", t.msg);
    ck_assert_str_eq(R.last_auth, "");
    ck_assert(gw_oauth_needs_authorization(f.o));

    /* Authorizing starts from the challenge's resource_metadata. */
    int first = R.npaths;
    authorize_fully(&f);
    ck_assert_str_eq(R.paths[first], "GET /.well-known/oauth-protected-resource");
    ck_assert(!gw_oauth_needs_authorization(f.o));

    /* Now the token goes with the request. */
    ping(&f, h, &t);
    ck_assert_msg(strstr(t.msg, "\"result\"") != NULL, "%s", t.msg);
    ck_assert_str_eq(R.last_auth, "Authorization: Bearer at-1");

    gw_upstream_http_kill(h);
    run_until(&f.loop, &t.closed);
    teardown_fixture(&f);
}
END_TEST

/* A 401 to the token held: one refresh, the request sent again with the
 * new token; a 401 to that one too: the request fails, once, and the
 * instance goes down for a person to authorize. */
START_TEST(test_transport_refresh_on_401)
{
    struct fixture f;
    struct tctx t = {0};
    setup_fixture(&f);
    authorize_fully(&f);
    struct gw_upstream_http *h = start_transport(&f, &t);

    R.accept = "at-2"; /* at-1 was revoked */
    ping(&f, h, &t);
    ck_assert_msg(strstr(t.msg, "\"result\"") != NULL, "%s", t.msg);
    ck_assert_int_eq(R.refreshed, 1);
    ck_assert_str_eq(R.last_auth, "Authorization: Bearer at-2");
    ck_assert_int_eq(t.down, 0);

    R.accept = "none";
    ping(&f, h, &t);
    ck_assert_msg(strstr(t.msg, "\"httpStatus\":401") != NULL, "%s", t.msg);
    ck_assert_int_eq(R.refreshed, 2);
    ck_assert_int_eq(t.down, GW_HTTP_E_UNAUTHORIZED);

    run_until(&f.loop, &t.closed);
    R.accept = NULL;
    teardown_fixture(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("oauth_client");
    TCase *tc = tcase_create("loop");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_full_flow);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_state_dir);
    tcase_add_test(tc, test_store_files);
    tcase_add_test(tc, test_restart_reuses_grant);
    tcase_add_test(tc, test_transport_bearer);
    tcase_add_test(tc, test_transport_refresh_on_401);
    tcase_add_test(tc, test_refresh_ahead);
    tcase_add_test(tc, test_step_up);
    tcase_add_test(tc, test_authorization_limit);
    tcase_add_test(tc, test_client_metadata_document);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
