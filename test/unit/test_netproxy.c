/* The sandbox proxy's rules (gw/netproxy.h): a request's head read
 * strictly and bounded, a destination matched against an allow-list, the
 * entry named in a refusal; `registry` read from npm's configuration. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw/netproxy.h"
#include "gw/sandbox.h"

static int parse(const char *head, struct gw_netproxy_req *r)
{
    return gw_netproxy_parse(head, strlen(head), r);
}

START_TEST(test_connect)
{
    struct gw_netproxy_req r;
    ck_assert_int_eq(parse("CONNECT Api.GitHub.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n"
                           "User-Agent: x\r\n\r\nTLS",
                           &r),
                     0);
    ck_assert(r.connect);
    ck_assert_str_eq(r.host, "api.github.com");
    ck_assert_uint_eq(r.port, 443);
    ck_assert_uint_eq(r.head_len, strlen("CONNECT Api.GitHub.com:443 HTTP/1.1\r\nHost: "
                                         "api.github.com:443\r\nUser-Agent: x\r\n\r\n"));
    ck_assert_ptr_null(r.forward);
    ck_assert_int_eq(parse("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", &r), 0);
    ck_assert_str_eq(r.host, "::1");
    ck_assert_uint_eq(r.port, 8443);
    /* Not yet whole. */
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/1.1\r\nHost: a", &r), 1);
    ck_assert_int_eq(parse("CONNECT a:4", &r), 1);
    /* A port is required; a second host smuggled in Host; two Hosts. */
    ck_assert_int_eq(parse("CONNECT a HTTP/1.1\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/1.1\r\nHost: b\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/1.1\r\nHost: a:444\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", &r), 0);
    /* Strict: bare LF, folded headers, bad names, ports, versions. */
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/1.1\n\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/1.1\r\nX: 1\r\n continued\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/1.1\r\nBad Name: 1\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:0 HTTP/1.1\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:65536 HTTP/1.1\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a b:443 HTTP/1.1\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a:443 HTTP/2.0\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("connect a:443 HTTP/1.1\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("CONNECT a/b:443 HTTP/1.1\r\n\r\n", &r), 400);
}
END_TEST

START_TEST(test_absolute)
{
    struct gw_netproxy_req r;
    ck_assert_int_eq(parse("POST http://Example.org:8080/a/b?c=d HTTP/1.1\r\nHost: example.org:8080"
                           "\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\nKeep-Alive: 5"
                           "\r\nContent-Length: 2\r\n\r\nhi",
                           &r),
                     0);
    ck_assert(!r.connect);
    ck_assert_str_eq(r.host, "example.org");
    ck_assert_uint_eq(r.port, 8080);
    ck_assert_str_eq(r.forward, "POST /a/b?c=d HTTP/1.1\r\nHost: example.org:8080\r\n"
                                "Content-Length: 2\r\nConnection: close\r\n\r\n");
    free(r.forward);
    ck_assert_int_eq(parse("GET http://h HTTP/1.0\r\n\r\n", &r), 0);
    ck_assert_uint_eq(r.port, 80);
    ck_assert_str_eq(r.forward, "GET / HTTP/1.0\r\nConnection: close\r\n\r\n");
    free(r.forward);
    ck_assert_int_eq(parse("GET http://h?q HTTP/1.1\r\n\r\n", &r), 0);
    ck_assert_str_eq(r.forward, "GET /?q HTTP/1.1\r\nConnection: close\r\n\r\n");
    free(r.forward);
    /* https:// is CONNECT's; origin-form is not a proxy request; userinfo;
     * a Host that disagrees; both framings. */
    ck_assert_int_eq(parse("GET https://h/ HTTP/1.1\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("GET /x HTTP/1.1\r\n\r\n", &r), 405);
    ck_assert_int_eq(parse("GET http://u@h/ HTTP/1.1\r\n\r\n", &r), 400);
    ck_assert_int_eq(parse("GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n", &r), 400);
    ck_assert_int_eq(
        parse("POST http://a/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
              &r),
        400);
}
END_TEST

START_TEST(test_bounds)
{
    struct gw_netproxy_req r;
    size_t n = 1 << 20;
    char *big = malloc(n + 64);
    strcpy(big, "GET http://a/");
    memset(big + 13, 'a', n);
    strcpy(big + 13 + n, " HTTP/1.1\r\n\r\n");
    /* A request line longer than the head's bound: 414, whatever follows. */
    ck_assert_int_eq(gw_netproxy_parse(big, GW_NETPROXY_HEAD_MAX, &r), 414);
    ck_assert_int_eq(gw_netproxy_parse(big, strlen(big), &r), 414);
    ck_assert_int_eq(gw_netproxy_parse(big, 100, &r), 1);
    /* Headers past it: 431. */
    strcpy(big, "CONNECT a:443 HTTP/1.1\r\nX: ");
    memset(big + 27, 'b', n);
    strcpy(big + 27 + n, "\r\n\r\n");
    ck_assert_int_eq(gw_netproxy_parse(big, strlen(big), &r), 431);
    free(big);
}
END_TEST

START_TEST(test_match)
{
    char *allow[] = {"api.github.com", "*.linear.app", "example.org:8443", "10.1.2.3:5432",
                     "[::1]:8080"};
    size_t n = sizeof(allow) / sizeof(allow[0]);
    bool exact = false;
    ck_assert_int_eq(gw_netproxy_match(allow, n, "api.github.com", 443, &exact), 0);
    ck_assert(exact);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "api.github.com", 80, &exact), -1);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "github.com", 443, &exact), -1);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "evilapi.github.com", 443, &exact), -1);
    /* *.domain: subdomains at any depth, never the apex or a lookalike. */
    ck_assert_int_eq(gw_netproxy_match(allow, n, "mcp.linear.app", 443, &exact), 1);
    ck_assert(!exact);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "a.b.linear.app", 443, &exact), 1);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "linear.app", 443, &exact), -1);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "evillinear.app", 443, &exact), -1);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "example.org", 8443, &exact), 2);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "example.org", 443, &exact), -1);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "10.1.2.3", 5432, &exact), 3);
    ck_assert(exact);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "10.1.2.3", 443, &exact), -1);
    ck_assert_int_eq(gw_netproxy_match(allow, n, "0:0::1", 8080, &exact), 4);
}
END_TEST

START_TEST(test_entry)
{
    char e[300];
    gw_netproxy_entry("api.github.com", 443, e, sizeof(e));
    ck_assert_str_eq(e, "api.github.com");
    gw_netproxy_entry("example.org", 8443, e, sizeof(e));
    ck_assert_str_eq(e, "example.org:8443");
    gw_netproxy_entry("::1", 80, e, sizeof(e));
    ck_assert_str_eq(e, "[::1]:80");
    gw_netproxy_entry("::1", 443, e, sizeof(e));
    ck_assert_str_eq(e, "[::1]");
}
END_TEST

static bool listed(char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

/* `registry` is the registry npm is configured with for npx: the server's
 * env first, then the npmrc files; npm's default only when none says. */
START_TEST(test_registry)
{
    char dir[] = "/tmp/test-netproxy-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char npmrc[64];
    snprintf(npmrc, sizeof(npmrc), "%s/.npmrc", dir);
    FILE *f = fopen(npmrc, "w");
    fputs("; a comment\nregistry = http://npm.internal:4873/\n@corp:registry=https://npm.corp/x/\n",
          f);
    fclose(f);
    char *none[] = {NULL};
    char *env[] = {"PATH=/usr/bin", "npm_config_registry=https://mirror.example:8443/npm/", NULL};
    char *allow[] = {"api.github.com", "registry"};
    struct gw_server_config cfg = {.command_path = "/usr/bin/npx", .cwd = dir, .cwd_set = true};
    cfg.sandbox.allow = allow;
    cfg.sandbox.nallow = 2;
    char **out;
    size_t nout;
    gw_sandbox_allow_list(&cfg, NULL, none, &out, &nout);
    ck_assert_uint_ge(nout, 3);
    ck_assert_str_eq(out[0], "api.github.com");
    ck_assert_str_eq(out[1], "npm.internal:4873");
    ck_assert_str_eq(out[2], "npm.corp");
    for (size_t i = 0; i < nout; i++)
        free(out[i]);
    free(out);
    /* Without a cwd the server runs in its home: the .npmrc of the
     * config's directory (cwd's default) is not what npm inside reads,
     * the home's is. */
    cfg.cwd_set = false;
    gw_sandbox_allow_list(&cfg, NULL, none, &out, &nout);
    ck_assert(!listed(out, nout, "npm.internal:4873"));
    for (size_t i = 0; i < nout; i++)
        free(out[i]);
    free(out);
    gw_sandbox_allow_list(&cfg, dir, none, &out, &nout);
    ck_assert_str_eq(out[1], "npm.internal:4873");
    for (size_t i = 0; i < nout; i++)
        free(out[i]);
    free(out);
    /* The instance's environment, not the daemon's: a variable the
     * daemon has but inherit_env does not pass on is not npm's inside. */
    setenv("npm_config_registry", "http://daemon-only.example/", 1);
    gw_sandbox_allow_list(&cfg, NULL, none, &out, &nout);
    ck_assert(!listed(out, nout, "daemon-only.example:80"));
    for (size_t i = 0; i < nout; i++)
        free(out[i]);
    free(out);
    unsetenv("npm_config_registry");
    gw_sandbox_allow_list(&cfg, NULL, env, &out, &nout);
    ck_assert_str_eq(out[1], "mirror.example:8443");
    for (size_t i = 0; i < nout; i++)
        free(out[i]);
    free(out);
    /* Not a launcher that installs: `registry` adds nothing. */
    cfg.command_path = "/usr/bin/node";
    gw_sandbox_allow_list(&cfg, NULL, none, &out, &nout);
    ck_assert_uint_eq(nout, 1);
    free(out[0]);
    free(out);
    unlink(npmrc);
    rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("netproxy");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_connect);
    tcase_add_test(tc, test_absolute);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_match);
    tcase_add_test(tc, test_entry);
    tcase_add_test(tc, test_registry);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
