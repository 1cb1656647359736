/* The OAuth client's pure parts (gw/oauth.h): the Bearer challenge, URL
 * parsing and the address rules, the discovery order of RFC 9728 and RFC
 * 8414 / OIDC, the resource match, the metadata documents' checks, PKCE S256
 * (checked against Python's hashlib), the authorization request and the RFC 9207
 * checks of the redirect back. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "gw/oauth.h"

START_TEST(test_challenge)
{
    struct gw_oauth_challenge c;
    ck_assert_int_eq(gw_oauth_challenge_parse(
                         "Bearer realm=\"mcp\", error=\"invalid_token\", "
                         "resource_metadata=\"https://r.example/.well-known/oauth-protected-"
                         "resource\", scope=\"files:read files:write\"",
                         &c),
                     0);
    ck_assert_str_eq(c.resource_metadata, "https://r.example/.well-known/oauth-protected-resource");
    ck_assert_str_eq(c.scope, "files:read files:write");
    ck_assert_str_eq(c.error, "invalid_token");
    gw_oauth_challenge_clear(&c);

    /* Several challenges; the Bearer one is second, after a token68; a
     * quoted value with an escaped quote and a comma; token values. */
    ck_assert_int_eq(gw_oauth_challenge_parse("Negotiate abc==, Basic realm=\"a,\\\"b\", "
                                              "bearer error=insufficient_scope,scope=\"x\"",
                                              &c),
                     0);
    ck_assert_str_eq(c.error, "insufficient_scope");
    ck_assert_str_eq(c.scope, "x");
    ck_assert_ptr_null(c.resource_metadata);
    gw_oauth_challenge_clear(&c);

    /* Bare scheme. */
    ck_assert_int_eq(gw_oauth_challenge_parse("Bearer", &c), 0);
    ck_assert_ptr_null(c.scope);
    gw_oauth_challenge_clear(&c);

    /* The first Bearer challenge counts, and within it the first value. */
    ck_assert_int_eq(
        gw_oauth_challenge_parse("Bearer scope=\"a\", scope=\"b\", Bearer scope=c", &c), 0);
    ck_assert_str_eq(c.scope, "a");
    gw_oauth_challenge_clear(&c);

    ck_assert_int_eq(gw_oauth_challenge_parse("Basic realm=\"x\"", &c), -EINVAL);
    ck_assert_int_eq(gw_oauth_challenge_parse("Bearer scope=\"unterminated", &c), -EINVAL);
    ck_assert_ptr_null(c.scope);
    ck_assert_int_eq(gw_oauth_challenge_parse("", &c), -EINVAL);
    ck_assert_int_eq(gw_oauth_challenge_parse(NULL, &c), -EINVAL);
    ck_assert_int_eq(gw_oauth_challenge_parse("Bearer scope=", &c), 0); /* a token68 "scope=" */
    gw_oauth_challenge_clear(&c);
}
END_TEST

START_TEST(test_url_parse)
{
    struct gw_oauth_url u;
    char why[200];
    ck_assert_int_eq(
        gw_oauth_url_parse("HTTPS://Auth.Example.COM:443/t1/?a=b", &u, why, sizeof(why)), 0);
    ck_assert(u.https);
    ck_assert_str_eq(u.host, "auth.example.com");
    ck_assert_uint_eq(u.port, 443);
    ck_assert_str_eq(u.origin, "https://auth.example.com");
    ck_assert_str_eq(u.path, "/t1/");
    ck_assert_str_eq(u.query, "a=b");
    gw_oauth_url_clear(&u);

    ck_assert_int_eq(gw_oauth_url_parse("http://[::1]:8080", &u, why, sizeof(why)), 0);
    ck_assert_str_eq(u.host, "::1");
    ck_assert(u.ip);
    ck_assert_str_eq(u.origin, "http://[::1]:8080");
    ck_assert_str_eq(u.path, "/");
    gw_oauth_url_clear(&u);

    const char *bad[] = {"ftp://x/",        "https://user:pw@x/", "https://x/#frag",
                         "https:///path",   "https://x:0/",       "https://x:99999/",
                         "https://x y/",    "https://[zz]/",      "//x/",
                         "https://x/\"q\"", "https://x:/",        "https://[::1]x/",
                         "https://a\\b/",   "javascript:alert(1)"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(gw_oauth_url_parse(bad[i], &u, why, sizeof(why)) == -EINVAL, "%s", bad[i]);
        ck_assert_ptr_null(u.origin);
    }
    char *longurl = malloc(GW_OAUTH_URL_MAX + 20);
    strcpy(longurl, "https://x/");
    memset(longurl + 10, 'a', GW_OAUTH_URL_MAX);
    longurl[GW_OAUTH_URL_MAX + 10] = 0;
    ck_assert_int_eq(gw_oauth_url_parse(longurl, &u, why, sizeof(why)), -EINVAL);
    free(longurl);
}
END_TEST

START_TEST(test_addresses)
{
    static const struct {
        const char *host;
        enum gw_oauth_addr c;
    } cases[] = {
        {"8.8.8.8", GW_OAUTH_ADDR_PUBLIC},
        {"example.com", GW_OAUTH_ADDR_PUBLIC},
        {"127.0.0.1", GW_OAUTH_ADDR_LOOPBACK},
        {"127.9.9.9", GW_OAUTH_ADDR_LOOPBACK},
        {"localhost", GW_OAUTH_ADDR_LOOPBACK},
        {"a.localhost", GW_OAUTH_ADDR_LOOPBACK},
        {"::1", GW_OAUTH_ADDR_LOOPBACK},
        {"10.1.2.3", GW_OAUTH_ADDR_PRIVATE},
        {"172.16.0.1", GW_OAUTH_ADDR_PRIVATE},
        {"172.31.255.255", GW_OAUTH_ADDR_PRIVATE},
        {"172.32.0.1", GW_OAUTH_ADDR_PUBLIC},
        {"192.168.1.1", GW_OAUTH_ADDR_PRIVATE},
        {"100.64.0.1", GW_OAUTH_ADDR_PRIVATE},
        {"100.128.0.1", GW_OAUTH_ADDR_PUBLIC},
        {"0.0.0.0", GW_OAUTH_ADDR_PRIVATE},
        {"169.254.1.1", GW_OAUTH_ADDR_LINK_LOCAL},
        {"169.254.169.254", GW_OAUTH_ADDR_METADATA},
        {"metadata.google.internal", GW_OAUTH_ADDR_METADATA},
        {"fd00:ec2::254", GW_OAUTH_ADDR_METADATA},
        {"fe80::1", GW_OAUTH_ADDR_LINK_LOCAL},
        {"fc00::1", GW_OAUTH_ADDR_PRIVATE},
        {"::", GW_OAUTH_ADDR_PRIVATE},
        {"::ffff:169.254.169.254", GW_OAUTH_ADDR_METADATA},
        {"::ffff:10.0.0.1", GW_OAUTH_ADDR_PRIVATE},
        {"::ffff:8.8.8.8", GW_OAUTH_ADDR_PUBLIC},
        {"2001:4860:4860::8888", GW_OAUTH_ADDR_PUBLIC},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(gw_oauth_host_class(cases[i].host) == cases[i].c, "%s", cases[i].host);

    struct sockaddr_in in = {.sin_family = AF_INET};
    inet_pton(AF_INET, "169.254.169.254", &in.sin_addr);
    ck_assert_int_eq(gw_oauth_addr_class((struct sockaddr *)&in), GW_OAUTH_ADDR_METADATA);
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:192.168.0.1", &in6.sin6_addr);
    ck_assert_int_eq(gw_oauth_addr_class((struct sockaddr *)&in6), GW_OAUTH_ADDR_PRIVATE);
}
END_TEST

START_TEST(test_url_check)
{
    char why[200];
    ck_assert_int_eq(gw_oauth_url_check("https://auth.example/x", "mcp.example", why, sizeof(why)),
                     0);
    /* Loopback only for a server on loopback (issue: metadata pointing the
     * token endpoint at the gateway's own API). */
    ck_assert_int_eq(gw_oauth_url_check("http://127.0.0.1:9/x", "mcp.example", why, sizeof(why)),
                     -EACCES);
    ck_assert_str_eq(why, "127.0.0.1 is a loopback host and the MCP server is not on loopback");
    ck_assert_int_eq(gw_oauth_url_check("https://foo.localhost/x", "mcp.example", why, sizeof(why)),
                     -EACCES);
    ck_assert_int_eq(gw_oauth_url_check("http://[::1]:9/x", "10.0.0.5", why, sizeof(why)), -EACCES);
    ck_assert_int_eq(gw_oauth_url_check("http://localhost:9/x", NULL, why, sizeof(why)), -EACCES);
    ck_assert_int_eq(gw_oauth_url_check("http://localhost:9/x", "127.0.0.1", why, sizeof(why)), 0);
    ck_assert_int_eq(gw_oauth_url_check("http://127.0.0.2:9/x", "a.localhost", why, sizeof(why)),
                     0);
    ck_assert_int_eq(gw_oauth_url_check("http://[::1]:9/x", "localhost", why, sizeof(why)), 0);
    ck_assert_int_eq(gw_oauth_url_check("http://auth.example/x", "auth.example", why, sizeof(why)),
                     -EACCES);
    ck_assert_ptr_nonnull(strstr(why, "https"));
    ck_assert_int_eq(
        gw_oauth_url_check("https://169.254.169.254/latest", "mcp.example", why, sizeof(why)),
        -EACCES);
    ck_assert_ptr_nonnull(strstr(why, "metadata"));
    ck_assert_int_eq(gw_oauth_url_check("https://10.0.0.5/", "mcp.example", why, sizeof(why)),
                     -EACCES);
    ck_assert_int_eq(gw_oauth_url_check("https://[fe80::1]/", "mcp.example", why, sizeof(why)),
                     -EACCES);
    /* The server's own host is allowed, whatever its class. */
    ck_assert_int_eq(gw_oauth_url_check("https://10.0.0.5:8443/", "10.0.0.5", why, sizeof(why)), 0);
    ck_assert_int_eq(gw_oauth_url_check("file:///etc/passwd", "mcp.example", why, sizeof(why)),
                     -EINVAL);
}
END_TEST

static const char *refused(const char *ip, bool https, bool own_host, bool server_loopback)
{
    struct sockaddr_storage ss = {0};
    struct gw_oauth_reach r = {
        .https = https, .own_host = own_host, .server_loopback = server_loopback};
    if (strchr(ip, ':')) {
        ss.ss_family = AF_INET6;
        inet_pton(AF_INET6, ip, &((struct sockaddr_in6 *)&ss)->sin6_addr);
    } else {
        ss.ss_family = AF_INET;
        inet_pton(AF_INET, ip, &((struct sockaddr_in *)&ss)->sin_addr);
    }
    return gw_oauth_addr_refused((struct sockaddr *)&ss, &r);
}

/* The connect-time rule: what a name in a URL may resolve to. */
START_TEST(test_addr_refused)
{
    /* An http URL reaches loopback only, whatever the server. */
    ck_assert_str_eq(refused("93.184.216.34", false, false, true),
                     "an http URL reaches only loopback");
    ck_assert_str_eq(refused("10.0.0.5", false, true, false), "an http URL reaches only loopback");
    ck_assert_ptr_null(refused("127.0.0.1", false, false, true));
    /* Loopback only when the server is on loopback. */
    ck_assert_str_eq(refused("127.0.0.1", true, false, false),
                     "a loopback address, and the MCP server is not on one");
    ck_assert_str_eq(refused("::ffff:127.0.0.1", true, false, false),
                     "a loopback address, and the MCP server is not on one");
    ck_assert_ptr_null(refused("::1", true, false, true));
    /* Private, link-local and metadata addresses: the server's own host only. */
    ck_assert_str_eq(refused("10.0.0.5", true, false, true), "a private address");
    ck_assert_str_eq(refused("fe80::1", true, false, true), "a link-local address");
    ck_assert_str_eq(refused("169.254.169.254", true, false, true), "a cloud metadata address");
    ck_assert_ptr_null(refused("10.0.0.5", true, true, false));
    ck_assert_ptr_null(refused("93.184.216.34", true, false, false));
}
END_TEST

static void expect_urls(enum gw_oauth_wellknown kind, const char *url, const char *a, const char *b,
                        const char *c)
{
    char *out[3] = {0};
    const char *want[3] = {a, b, c};
    int n = gw_oauth_discovery_urls(kind, url, out);
    ck_assert_int_eq(n, c ? 3 : b ? 2 : 1);
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq(out[i], want[i]);
        free(out[i]);
    }
}

START_TEST(test_discovery_order)
{
    expect_urls(GW_OAUTH_PRM, "https://mcp.example/public/mcp",
                "https://mcp.example/.well-known/oauth-protected-resource/public/mcp",
                "https://mcp.example/.well-known/oauth-protected-resource", NULL);
    expect_urls(GW_OAUTH_PRM, "http://127.0.0.1:8080/",
                "http://127.0.0.1:8080/.well-known/oauth-protected-resource", NULL, NULL);
    expect_urls(GW_OAUTH_ASM, "https://auth.example/tenant1",
                "https://auth.example/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example/.well-known/openid-configuration/tenant1",
                "https://auth.example/tenant1/.well-known/openid-configuration");
    expect_urls(GW_OAUTH_ASM, "https://auth.example",
                "https://auth.example/.well-known/oauth-authorization-server",
                "https://auth.example/.well-known/openid-configuration", NULL);
    expect_urls(GW_OAUTH_ASM, "https://auth.example/",
                "https://auth.example/.well-known/oauth-authorization-server",
                "https://auth.example/.well-known/openid-configuration", NULL);
    char *out[3];
    ck_assert_int_eq(gw_oauth_discovery_urls(GW_OAUTH_ASM, "ftp://x", out), -EINVAL);
}
END_TEST

START_TEST(test_resource_match)
{
    ck_assert(gw_oauth_resource_matches("https://mcp.example/mcp", "https://mcp.example/mcp"));
    ck_assert(gw_oauth_resource_matches("https://mcp.example", "https://mcp.example/mcp"));
    ck_assert(gw_oauth_resource_matches("https://MCP.example:443/", "https://mcp.example/a/b"));
    ck_assert(gw_oauth_resource_matches("https://mcp.example/a", "https://mcp.example/a/b"));
    ck_assert(!gw_oauth_resource_matches("https://mcp.example/ab", "https://mcp.example/a"));
    ck_assert(!gw_oauth_resource_matches("https://mcp.example/a", "https://mcp.example/ab"));
    ck_assert(!gw_oauth_resource_matches("https://evil.example/mcp", "https://mcp.example/mcp"));
    ck_assert(!gw_oauth_resource_matches("http://mcp.example/mcp", "https://mcp.example/mcp"));
    ck_assert(
        !gw_oauth_resource_matches("https://mcp.example:8443/mcp", "https://mcp.example/mcp"));
    ck_assert(!gw_oauth_resource_matches("not a url", "https://mcp.example/mcp"));
}
END_TEST

START_TEST(test_form)
{
    char *b = NULL;
    bool dup;
    gw_oauth_form_add(&b, "redirect_uri", "http://127.0.0.1:1/oauth/callback");
    gw_oauth_form_add(&b, "scope", "a b+c");
    ck_assert_str_eq(b,
                     "redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Foauth%2Fcallback&scope=a%20b%2Bc");
    char *v = gw_oauth_form_get(b, "scope", &dup);
    ck_assert_str_eq(v, "a b+c");
    ck_assert(!dup);
    free(v);
    free(b);
    v = gw_oauth_form_get("a=1&b=x+y&c", "b", &dup);
    ck_assert_str_eq(v, "x y");
    free(v);
    v = gw_oauth_form_get("a=1&b=x+y&c", "c", &dup);
    ck_assert_str_eq(v, "");
    free(v);
    ck_assert_ptr_null(gw_oauth_form_get("a=1&a=2", "a", &dup));
    ck_assert(dup);
    ck_assert_ptr_null(gw_oauth_form_get("a=%4", "a", &dup));
    ck_assert_ptr_null(gw_oauth_form_get("a=%00x", "a", &dup));
    ck_assert_ptr_null(gw_oauth_form_get("ab=1", "a", &dup));
    ck_assert(!dup);
}
END_TEST

START_TEST(test_prm)
{
    struct gw_oauth_prm p;
    char why[300];
    const char *ok = "{\"resource\":\"https://mcp.example/mcp\",\"authorization_servers\":"
                     "[\"https://auth.example/t1\"],\"scopes_supported\":[\"a\",\"b\"]}";
    ck_assert_int_eq(
        gw_oauth_prm_read(ok, strlen(ok), "https://mcp.example/mcp", &p, why, sizeof(why)), 0);
    ck_assert_str_eq(p.issuer, "https://auth.example/t1");
    ck_assert_str_eq(p.scopes, "a b");
    gw_oauth_prm_clear(&p);

    const char *other = "{\"resource\":\"https://evil.example/mcp\",\"authorization_servers\":"
                        "[\"https://auth.example\"]}";
    ck_assert_int_eq(
        gw_oauth_prm_read(other, strlen(other), "https://mcp.example/mcp", &p, why, sizeof(why)),
        -EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "not this server"));
    ck_assert_ptr_null(p.resource);
    const char *none = "{\"resource\":\"https://mcp.example/mcp\"}";
    ck_assert_int_eq(
        gw_oauth_prm_read(none, strlen(none), "https://mcp.example/mcp", &p, why, sizeof(why)),
        -EINVAL);
    ck_assert_int_eq(gw_oauth_prm_read("[1]", 3, "https://mcp.example/mcp", &p, why, sizeof(why)),
                     -EINVAL);
}
END_TEST

static const char *asm_doc =
    "{\"issuer\":\"https://auth.example/t1\","
    "\"authorization_endpoint\":\"https://auth.example/t1/authorize\","
    "\"token_endpoint\":\"https://auth.example/t1/token\","
    "\"registration_endpoint\":\"https://auth.example/t1/register\","
    "\"code_challenge_methods_supported\":[\"plain\",\"S256\"],"
    "\"token_endpoint_auth_methods_supported\":[\"client_secret_post\",\"none\"],"
    "\"authorization_response_iss_parameter_supported\":true,"
    "\"scopes_supported\":[\"a\",\"offline_access\"]}";

START_TEST(test_asm)
{
    struct gw_oauth_asm m;
    char why[300];
    ck_assert_int_eq(gw_oauth_asm_read(asm_doc, strlen(asm_doc), "https://auth.example/t1", &m, why,
                                       sizeof(why)),
                     0);
    ck_assert_str_eq(m.token_endpoint, "https://auth.example/t1/token");
    ck_assert(m.iss_supported);
    ck_assert(!m.cimd_supported);
    ck_assert_ptr_null(m.revocation_endpoint);
    ck_assert_uint_eq(gw_oauth_auth_choose(&m, true), GW_OAUTH_AUTH_POST);
    ck_assert_uint_eq(gw_oauth_auth_choose(&m, false), GW_OAUTH_AUTH_NONE);
    gw_oauth_asm_clear(&m);

    /* Another issuer (even one only a slash apart) is refused. */
    ck_assert_int_eq(gw_oauth_asm_read(asm_doc, strlen(asm_doc), "https://auth.example/t1/", &m,
                                       why, sizeof(why)),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "another issuer"));
    const char *plain = "{\"issuer\":\"https://a.example\",\"authorization_endpoint\":\"https://"
                        "a.example/a\",\"token_endpoint\":\"https://a.example/t\","
                        "\"code_challenge_methods_supported\":[\"plain\"]}";
    ck_assert_int_eq(
        gw_oauth_asm_read(plain, strlen(plain), "https://a.example", &m, why, sizeof(why)),
        -EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "S256"));
    const char *absent = "{\"issuer\":\"https://a.example\",\"authorization_endpoint\":\"https://"
                         "a.example/a\",\"token_endpoint\":\"https://a.example/t\"}";
    ck_assert_int_eq(
        gw_oauth_asm_read(absent, strlen(absent), "https://a.example", &m, why, sizeof(why)),
        -EINVAL);
    const char *http_ep = "{\"issuer\":\"https://a.example\",\"authorization_endpoint\":\"http://"
                          "a.example/a\",\"token_endpoint\":\"https://a.example/t\","
                          "\"code_challenge_methods_supported\":[\"S256\"]}";
    ck_assert_int_eq(
        gw_oauth_asm_read(http_ep, strlen(http_ep), "https://a.example", &m, why, sizeof(why)),
        -EINVAL);
    /* Without token_endpoint_auth_methods_supported: RFC 8414's default. */
    const char *dflt = "{\"issuer\":\"https://a.example\",\"authorization_endpoint\":\"https://"
                       "a.example/a\",\"token_endpoint\":\"https://a.example/t\","
                       "\"code_challenge_methods_supported\":[\"S256\"]}";
    ck_assert_int_eq(
        gw_oauth_asm_read(dflt, strlen(dflt), "https://a.example", &m, why, sizeof(why)), 0);
    ck_assert_uint_eq(gw_oauth_auth_choose(&m, true), GW_OAUTH_AUTH_BASIC);
    ck_assert_uint_eq(gw_oauth_auth_choose(&m, false), 0);
    gw_oauth_asm_clear(&m);
}
END_TEST

START_TEST(test_scopes)
{
    char *s = gw_oauth_scopes_select("x y", "a b", NULL);
    ck_assert_str_eq(s, "x y");
    free(s);
    s = gw_oauth_scopes_select(NULL, "a  b offline_access a", "a");
    ck_assert_str_eq(s, "a b");
    free(s);
    s = gw_oauth_scopes_select("", "a offline_access", "offline_access");
    ck_assert_str_eq(s, "a offline_access");
    free(s);
    ck_assert_ptr_null(gw_oauth_scopes_select(NULL, NULL, "a"));
}
END_TEST

START_TEST(test_dcr_and_token)
{
    struct gw_oauth_client c;
    char why[300];
    char *req = gw_oauth_dcr_request("http://127.0.0.1:1/oauth/callback", NULL);
    ck_assert_ptr_nonnull(strstr(req, "\"application_type\":\"native\""));
    ck_assert_ptr_nonnull(strstr(req, "\"refresh_token\""));
    free(req);
    const char *a = "{\"client_id\":\"cid\",\"client_secret\":\"sec\"}";
    ck_assert_int_eq(gw_oauth_dcr_read(a, strlen(a), &c, why, sizeof(why)), 0);
    ck_assert_uint_eq(c.auth, GW_OAUTH_AUTH_BASIC);
    char *basic = gw_oauth_basic_auth(&c);
    ck_assert_str_eq(basic, "Basic Y2lkOnNlYw==");
    free(basic);
    gw_oauth_client_clear(&c);
    const char *b = "{\"client_id\":\"c\",\"token_endpoint_auth_method\":\"client_secret_post\"}";
    ck_assert_int_eq(gw_oauth_dcr_read(b, strlen(b), &c, why, sizeof(why)), -EINVAL);

    struct gw_oauth_token t;
    const char *tok = "{\"access_token\":\"at\",\"token_type\":\"bearer\",\"expires_in\":60,"
                      "\"refresh_token\":\"rt\"}";
    ck_assert_int_eq(gw_oauth_token_read(tok, strlen(tok), &t, why, sizeof(why)), 0);
    ck_assert_str_eq(t.refresh_token, "rt");
    ck_assert_int_eq(t.expires_in, 60);
    gw_oauth_token_clear(&t);
    /* expires_in within 1 s .. a year, whatever the number's size or type. */
    static const struct {
        const char *v;
        int64_t want;
    } lives[] = {
        {"9223372036854775807", GW_OAUTH_EXPIRES_MAX},
        {"18446744073709552", GW_OAUTH_EXPIRES_MAX},
        {"31536001", GW_OAUTH_EXPIRES_MAX},
        {"31535999", 31535999},
        {"1e300", GW_OAUTH_EXPIRES_MAX},
        {"0.2", 1},
        {"59.9", 59},
        {"0", 0},
        {"-5", 0},
        {"-1e300", 0},
        {"\"60\"", 0},
    };
    for (size_t i = 0; i < sizeof(lives) / sizeof(lives[0]); i++) {
        char life[200];
        snprintf(life, sizeof(life),
                 "{\"access_token\":\"at\",\"token_type\":\"Bearer\",\"expires_in\":%s}",
                 lives[i].v);
        ck_assert_msg(gw_oauth_token_read(life, strlen(life), &t, why, sizeof(why)) == 0, "%s: %s",
                      lives[i].v, why);
        ck_assert_msg(t.expires_in == lives[i].want, "%s: %lld", lives[i].v,
                      (long long)t.expires_in);
        gw_oauth_token_clear(&t);
    }
    const char *err = "{\"error\":\"invalid_grant\",\"error_description\":\"secret stuff\"}";
    ck_assert_int_eq(gw_oauth_token_read(err, strlen(err), &t, why, sizeof(why)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "invalid_grant"));
    ck_assert_ptr_null(strstr(why, "secret"));
    const char *mac = "{\"access_token\":\"at\",\"token_type\":\"mac\"}";
    ck_assert_int_eq(gw_oauth_token_read(mac, strlen(mac), &t, why, sizeof(why)), -EINVAL);
    const char *crlf = "{\"access_token\":\"a\\r\\nX: y\",\"token_type\":\"Bearer\"}";
    ck_assert_int_eq(gw_oauth_token_read(crlf, strlen(crlf), &t, why, sizeof(why)), -EINVAL);

    struct gw_oauth_client pub = {.client_id = "cid", .auth = GW_OAUTH_AUTH_NONE};
    struct gw_oauth_token_request r = {.client = &pub,
                                       .code = "c0de",
                                       .verifier = "v",
                                       .redirect_uri = "http://h/cb",
                                       .resource = "https://mcp.example/mcp"};
    char *body = gw_oauth_token_body(&r);
    ck_assert_str_eq(body, "grant_type=authorization_code&code=c0de&redirect_uri=http%3A%2F%2Fh%"
                           "2Fcb&code_verifier=v&resource=https%3A%2F%2Fmcp.example%2Fmcp&client_"
                           "id=cid");
    free(body);
    ck_assert_ptr_null(gw_oauth_basic_auth(&pub));
}
END_TEST

START_TEST(test_pkce)
{
    /* The S256 of a fixed verifier, as hashlib.sha256 + urlsafe_b64encode give it. */
    char ch[GW_OAUTH_RANDOM_LEN], a[GW_OAUTH_RANDOM_LEN], b[GW_OAUTH_RANDOM_LEN];
    gw_oauth_pkce_challenge("dBjftJeZ4CVP-mJ92K1s-e2L8sdXuH4hT8ux3o3pnjQ", ch);
    ck_assert_str_eq(ch, "E4T_SCKFQTVlr3Yl2ccYAjQPCbU7gvmcnZGEDLjhJJI");
    ck_assert_int_eq(gw_oauth_random(a), 0);
    ck_assert_int_eq(gw_oauth_random(b), 0);
    ck_assert_uint_eq(strlen(a), 43);
    ck_assert_str_ne(a, b);

    struct gw_oauth_authz_request r = {.authorization_endpoint = "https://a.example/auth?x=1",
                                       .client_id = "cid",
                                       .redirect_uri = "http://127.0.0.1:1/oauth/callback",
                                       .verifier = "dBjftJeZ4CVP-mJ92K1s-e2L8sdXuH4hT8ux3o3pnjQ",
                                       .state = "st",
                                       .scope = "a b",
                                       .resource = "https://mcp.example/mcp"};
    char *url = gw_oauth_authz_url(&r);
    ck_assert_str_eq(url, "https://a.example/auth?x=1&response_type=code&client_id=cid&redirect_"
                          "uri=http%3A%2F%2F127.0.0.1%3A1%2Foauth%2Fcallback&code_challenge="
                          "E4T_SCKFQTVlr3Yl2ccYAjQPCbU7gvmcnZGEDLjhJJI&code_challenge_method=S256&"
                          "state=st&scope=a%20b&resource=https%3A%2F%2Fmcp.example%2Fmcp");
    free(url);
}
END_TEST

START_TEST(test_redirect)
{
    struct gw_oauth_redirect r;
    char why[300];
    const char *iss = "https://auth.example/t1";
    ck_assert_int_eq(gw_oauth_redirect_read("code=abc&state=s1&iss=https%3A%2F%2Fauth.example%2Ft1",
                                            "s1", iss, true, &r, why, sizeof(why)),
                     0);
    ck_assert_str_eq(r.code, "abc");
    gw_oauth_redirect_clear(&r);
    /* iss absent where it was promised; absent where it was not. */
    ck_assert_int_eq(
        gw_oauth_redirect_read("code=abc&state=s1", "s1", iss, true, &r, why, sizeof(why)),
        -EACCES);
    ck_assert_ptr_null(r.code);
    ck_assert_int_eq(
        gw_oauth_redirect_read("code=abc&state=s1", "s1", iss, false, &r, why, sizeof(why)), 0);
    gw_oauth_redirect_clear(&r);
    /* iss compared as an exact string. */
    ck_assert_int_eq(gw_oauth_redirect_read("code=abc&state=s1&iss=https%3A%2F%2Fauth.example%2Ft1%"
                                            "2F",
                                            "s1", iss, false, &r, why, sizeof(why)),
                     -EACCES);
    /* A mismatching iss: the error is neither acted on nor shown. */
    ck_assert_int_eq(gw_oauth_redirect_read("error=access_denied&state=s1&iss=https%3A%2F%2Fevil",
                                            "s1", iss, true, &r, why, sizeof(why)),
                     -EACCES);
    ck_assert_ptr_null(r.error);
    ck_assert_ptr_null(strstr(why, "access_denied"));
    /* A trusted error is handed back. */
    ck_assert_int_eq(gw_oauth_redirect_read("error=access_denied&state=s1&iss=https%3A%2F%2Fauth."
                                            "example%2Ft1",
                                            "s1", iss, true, &r, why, sizeof(why)),
                     -EINVAL);
    ck_assert_str_eq(r.error, "access_denied");
    gw_oauth_redirect_clear(&r);
    /* Wrong, missing or doubled state. */
    ck_assert_int_eq(
        gw_oauth_redirect_read("code=abc&state=s2", "s1", iss, false, &r, why, sizeof(why)),
        -EACCES);
    ck_assert_int_eq(gw_oauth_redirect_read("code=abc", "s1", iss, false, &r, why, sizeof(why)),
                     -EACCES);
    ck_assert_int_eq(gw_oauth_redirect_read("code=abc&state=s1&state=s1", "s1", iss, false, &r, why,
                                            sizeof(why)),
                     -EACCES);
    ck_assert_int_eq(gw_oauth_redirect_read("state=s1", "s1", iss, false, &r, why, sizeof(why)),
                     -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("oauth");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_challenge);
    tcase_add_test(tc, test_url_parse);
    tcase_add_test(tc, test_addresses);
    tcase_add_test(tc, test_url_check);
    tcase_add_test(tc, test_addr_refused);
    tcase_add_test(tc, test_discovery_order);
    tcase_add_test(tc, test_resource_match);
    tcase_add_test(tc, test_form);
    tcase_add_test(tc, test_prm);
    tcase_add_test(tc, test_asm);
    tcase_add_test(tc, test_scopes);
    tcase_add_test(tc, test_dcr_and_token);
    tcase_add_test(tc, test_pkce);
    tcase_add_test(tc, test_redirect);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
