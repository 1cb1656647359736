/* The gate's Origin rule: mcpgw's own origins and gateway.allowed_origins
 * pass, another port of the same host does not, for each kind of listen
 * address (loopback v4 and v6, wildcard, a LAN address, a unix socket) and
 * with the Host a request was sent to. */
#include <check.h>
#include <stdlib.h>

#include "gw/gate.h"

struct origin_case {
    const char *origin, *host, *address;
    bool ok;
};

static const struct origin_case cases[] = {
    /* a loopback listener: its spellings with its port */
    {"http://127.0.0.1:7420", "127.0.0.1:7420", "127.0.0.1:7420", true},
    {"http://localhost:7420", "127.0.0.1:7420", "127.0.0.1:7420", true},
    {"http://[::1]:7420", "127.0.0.1:7420", "127.0.0.1:7420", true},
    {"HTTP://LocalHost:7420", "127.0.0.1:7420", "127.0.0.1:7420", true},
    {"http://localhost:7420", NULL, "[::1]:7420", true},
    {"http://127.0.0.1:7421", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://localhost:3000", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://127.0.0.1", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://127.0.0.2:7420", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"https://127.0.0.1:7420", "localhost:7420", "127.0.0.1:7420", false},
    {"http://127.0.0.1:07420", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://127.0.0.1:7420/", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://127.0.0.1:7420@evil.example", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://evil.example:7420", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://127.0.0.1:", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://[::1:7420", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"null", "127.0.0.1:7420", "127.0.0.1:7420", false},
    {"http://", "127.0.0.1:7420", "127.0.0.1:7420", false},
    /* port 80: the origin has no port */
    {"http://localhost", "localhost", "127.0.0.1:80", true},
    {"http://localhost:80", NULL, "127.0.0.1:80", true},
    /* the Host it was sent to, when a loopback name (a port forward) */
    {"http://localhost:9000", "localhost:9000", "127.0.0.1:7420", true},
    {"https://localhost:9443", "localhost:9443", "127.0.0.1:7420", true},
    {"http://localhost:9000", "localhost:9001", "127.0.0.1:7420", false},
    /* a wildcard listener: the loopback spellings and itself */
    {"http://localhost:7420", "192.168.1.5:7420", "0.0.0.0:7420", true},
    {"http://[::1]:7420", NULL, "[::]:7420", true},
    {"http://192.168.1.5:7420", "192.168.1.5:7420", "0.0.0.0:7420", false},
    /* a LAN address: itself only; a rebound name as Host is not its own */
    {"http://192.168.1.5:7420", "192.168.1.5:7420", "192.168.1.5:7420", true},
    {"http://localhost:7420", "192.168.1.5:7420", "192.168.1.5:7420", false},
    {"http://evil.example:7420", "evil.example:7420", "192.168.1.5:7420", false},
    /* a unix socket: the Host rule only */
    {"http://localhost", "localhost", "unix:/run/mcpgw.sock", true},
    {"http://localhost:7420", "localhost", "unix:/run/mcpgw.sock", false},
    {"http://localhost:7420", NULL, NULL, false},
    /* listed */
    {"https://app.example", "127.0.0.1:7420", "127.0.0.1:7420", true},
    {"HTTPS://APP.EXAMPLE", "127.0.0.1:7420", "127.0.0.1:7420", true},
    {"https://app.example:444", "127.0.0.1:7420", "127.0.0.1:7420", false},
};

START_TEST(test_origins)
{
    char *listed[] = {"https://app.example"};
    struct gw_gateway_config gw = {.allowed_origins = listed, .nallowed_origins = 1};

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct origin_case *c = &cases[i];
        ck_assert_msg(gw_gate_origin_allowed(c->origin, c->host, c->address, &gw) == c->ok,
                      "Origin %s, Host %s, listening on %s: wanted %s", c->origin,
                      c->host ? c->host : "(none)", c->address ? c->address : "(none)",
                      c->ok ? "allowed" : "refused");
    }
}
END_TEST

static Suite *gate_suite(void)
{
    Suite *s = suite_create("gate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_origins);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gate_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
