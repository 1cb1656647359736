/* Unit tests of the clients' policy (issue 35): the clients map as loaded
 * (digests, the default client, duplicate tokens) and the one decision
 * (servers, tools globs, deny wins, an unknown client may use nothing, no
 * clients: everything). */
#include "gw/policy.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/sha256.h"

static struct gw_config *load(const char *yaml)
{
    struct gw_config *c = NULL;

    ck_assert_int_eq(gw_config_load_buffer("/tmp/mcp.yaml", yaml, strlen(yaml), &c), 0);
    return c;
}

static const char *client_of(const struct gw_config *c, const char *token)
{
    unsigned char d[GW_SHA256_LEN];
    struct gw_sha256 h;

    gw_sha256_init(&h);
    gw_sha256_update(&h, token, strlen(token));
    gw_sha256_final(&h, d);
    return gw_policy_client_by_digest(c, d);
}

#define YAML                                                                                       \
    "version: 1\n"                                                                                 \
    "gateway: {auth_token: admin-token-0123456789}\n"                                              \
    "clients:\n"                                                                                   \
    "  a: {token: a-token-0123456789ab, servers: [fx], deny: ['add', 'x_*']}\n"                    \
    "  b:\n"                                                                                       \
    "    token_sha256: 0f5f1bd4b6d7d1a4a4f0e1a1c54d2c3ffd1bd31b4d3a8b0a5fbe7c2a8b2c6e11\n"         \
    "    tools: ['echo', 'res_*']\n"                                                               \
    "    deny: ['res_secret']\n"

START_TEST(tokens_find_their_client)
{
    struct gw_config *c = load(YAML);

    ck_assert(c->ok);
    ck_assert_uint_eq(c->nclients, 3);
    ck_assert_str_eq(client_of(c, "a-token-0123456789ab"), "a");
    ck_assert_str_eq(client_of(c, "admin-token-0123456789"), GW_CLIENT_DEFAULT);
    ck_assert_ptr_null(client_of(c, "a-token-0123456789a"));
    ck_assert_ptr_null(client_of(c, ""));
    ck_assert(gw_policy_admin(c, GW_CLIENT_DEFAULT));
    ck_assert(!gw_policy_admin(c, "a"));
    ck_assert(!gw_policy_admin(c, "gone"));
    gw_config_unref(c);
}
END_TEST

START_TEST(one_decision)
{
    struct gw_config *c = load(YAML);
    const char *rule = NULL;

    ck_assert(gw_policy_tool(c, "a", "fx", "echo", &rule));
    ck_assert_ptr_null(rule);
    ck_assert(!gw_policy_tool(c, "a", "fx", "add", &rule));
    ck_assert_str_eq(rule, "add");
    ck_assert(!gw_policy_tool(c, "a", "fx", "x_y", &rule));
    ck_assert_str_eq(rule, "x_*");
    ck_assert(!gw_policy_tool(c, "a", "res", "res_echo", &rule));
    ck_assert_str_eq(rule, "servers");
    ck_assert(gw_policy_tool(c, "a", NULL, "mcp_release", NULL));
    ck_assert(gw_policy_tool(c, "b", "res", "res_echo", &rule));
    ck_assert_str_eq(rule, "res_*");
    ck_assert(!gw_policy_tool(c, "b", "res", "res_secret", &rule));
    ck_assert_str_eq(rule, "res_secret");
    ck_assert(!gw_policy_tool(c, "b", "fx", "add", &rule));
    ck_assert_str_eq(rule, "tools");
    ck_assert(gw_policy_tool(c, GW_CLIENT_DEFAULT, "fx", "add", NULL));
    ck_assert(!gw_policy_tool(c, "gone", "fx", "echo", NULL));
    ck_assert(!gw_policy_tool(c, NULL, NULL, "mcp_release", NULL));
    ck_assert(gw_policy_server(c, "a", "fx"));
    ck_assert(!gw_policy_server(c, "a", "res"));
    ck_assert(gw_policy_server(c, "b", "res"));
    gw_config_unref(c);
}
END_TEST

static void hex_of(const char *token, int flip_last, char out[65])
{
    unsigned char d[GW_SHA256_LEN];
    struct gw_sha256 h;

    gw_sha256_init(&h);
    gw_sha256_update(&h, token, strlen(token));
    gw_sha256_final(&h, d);
    d[GW_SHA256_LEN - 1] ^= (unsigned char)flip_last;
    for (int i = 0; i < GW_SHA256_LEN; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* The indexes by name and by digest: 50 clients each found by its own
 * token and name, a digest that starts as one of them does (the same
 * index slot) found by neither's token; the verdicts remembered per
 * client stay right when 300 names share 64 slots. */
START_TEST(many_clients)
{
    char *yaml = strdup("version: 1\nclients:\n"), hex[65], tok[64], name[64];
    struct gw_config *c;
    size_t n;

    for (int i = 0; i <= 50; i++) {
        snprintf(tok, sizeof tok, "token-%d-0123456789abcdef", i % 50);
        hex_of(tok, i == 50 ? 1 : 0, hex);
        n = strlen(yaml);
        yaml = realloc(yaml, n + 200);
        snprintf(yaml + n, 200, "  %s%d: {token_sha256: %s, tools: ['t%d_*'], deny: ['t%d_no']}\n",
                 i == 50 ? "twin" : "c", i, hex, i % 50, i % 50);
    }
    c = load(yaml);
    free(yaml);
    ck_assert(c->ok);
    ck_assert_uint_eq(c->nclients, 51);
    for (int i = 0; i < 50; i++) {
        snprintf(tok, sizeof tok, "token-%d-0123456789abcdef", i);
        snprintf(name, sizeof name, "c%d", i);
        ck_assert_str_eq(client_of(c, tok), name);
        ck_assert_ptr_eq(gw_config_client(c, name), &c->clients[i]);
    }
    ck_assert_ptr_eq(gw_config_client(c, "twin50"), &c->clients[50]);
    ck_assert_ptr_null(gw_config_client(c, "c50"));
    ck_assert_ptr_null(client_of(c, "token-50-0123456789abcdef"));
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < 300; k++) {
            const char *rule = NULL;
            snprintf(name, sizeof name, k % 3 == 0 ? "t7_%d" : k % 3 == 1 ? "t8_%d" : "t7_no", k);
            ck_assert(gw_policy_tool(c, "c7", "fx", name, &rule) == (k % 3 == 0));
            ck_assert_str_eq(rule, k % 3 == 0 ? "t7_*" : k % 3 == 1 ? "tools" : "t7_no");
            ck_assert(!gw_policy_tool(c, "c8", "fx", name, NULL) == (k % 3 != 1));
        }
    }
    gw_config_unref(c);
}
END_TEST

START_TEST(rates_read)
{
    struct gw_config *c =
        load("version: 1\nclients:\n"
             "  a: {token: a-token-0123456789ab, rate: 120/min, max_concurrent: 4}\n"
             "  b: {token: b-token-0123456789ab, rate: 10/s}\n");

    ck_assert(c->ok);
    ck_assert_uint_eq(c->clients[0].rate_n, 120);
    ck_assert_uint_eq(c->clients[0].rate_window_ms, 60000);
    ck_assert_int_eq(c->clients[0].max_concurrent, 4);
    ck_assert_uint_eq(c->clients[1].rate_n, 10);
    ck_assert_uint_eq(c->clients[1].rate_window_ms, 1000);
    ck_assert_int_eq(c->clients[1].max_concurrent, 0);
    gw_config_unref(c);
}
END_TEST

START_TEST(no_clients_everything)
{
    struct gw_config *c = load("version: 1\n");

    ck_assert_uint_eq(c->nclients, 0);
    ck_assert(gw_policy_tool(c, "", "fx", "add", NULL));
    ck_assert(gw_policy_server(c, "", "fx"));
    ck_assert(gw_policy_admin(c, ""));
    gw_config_unref(c);
}
END_TEST

START_TEST(policy_digest_follows_the_rules)
{
    struct gw_config *a = load(YAML), *b = load(YAML);
    struct gw_config *d =
        load("version: 1\n"
             "gateway: {auth_token: admin-token-0123456789}\n"
             "clients:\n"
             "  a: {token: a-token-0123456789ab, servers: [fx], deny: ['add']}\n");

    ck_assert_mem_eq(a->clients_sha256, b->clients_sha256, GW_SHA256_LEN);
    ck_assert(memcmp(a->clients_sha256, d->clients_sha256, GW_SHA256_LEN) != 0);
    gw_config_unref(a);
    gw_config_unref(b);
    gw_config_unref(d);
}
END_TEST

static bool has_error(const struct gw_config *c, const char *text)
{
    for (size_t i = 0; i < c->ndiags; i++) {
        if (c->diags[i].severity == GW_SEV_ERROR && strstr(c->diags[i].message, text) != NULL)
            return true;
    }
    return false;
}

START_TEST(config_errors)
{
    static const struct {
        const char *yaml, *error;
    } cases[] = {
        {"version: 1\nclients:\n  a: {token: same-token-0123456789}\n  b: {token: "
         "same-token-0123456789}\n",
         "clients 'a' and 'b' have the same token"},
        {"version: 1\ngateway: {auth_token: same-token-0123456789}\nclients:\n  a: {token: "
         "same-token-0123456789}\n",
         "clients 'a' and 'default' have the same token"},
        {"version: 1\nclients:\n  a: {token: short}\n", "shorter than 16"},
        {"version: 1\nclients:\n  a: {token_sha256: ABC}\n", "64 lowercase hex"},
        {"version: 1\nclients:\n  a: {admin: true}\n", "needs a token"},
        {"version: 1\nclients:\n  default: {token: some-token-0123456789}\n", "'default'"},
        {"version: 1\nclients:\n  'a b': {token: some-token-0123456789}\n", "client name"},
        {"version: 1\nclients:\n  a: {token: some-token-0123456789, rate: 10/h}\n", "N/s or N/min"},
        {"version: 1\nclients:\n  a: {token: some-token-0123456789, rate: 0/s}\n", "N/s or N/min"},
        {"version: 1\nclients:\n  a: {token: some-token-0123456789, max_concurrent: 0}\n",
         "max_concurrent"},
        {"version: 1\nclients:\n  a: {token: some-token-0123456789, "
         "token_sha256: 0f5f1bd4b6d7d1a4a4f0e1a1c54d2c3ffd1bd31b4d3a8b0a5fbe7c2a8b2c6e11}\n",
         "not both"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gw_config *c = load(cases[i].yaml);
        ck_assert_msg(!c->ok && has_error(c, cases[i].error), "case %zu", i);
        gw_config_unref(c);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, tokens_find_their_client);
    tcase_add_test(tc, one_decision);
    tcase_add_test(tc, no_clients_everything);
    tcase_add_test(tc, rates_read);
    tcase_add_test(tc, many_clients);
    tcase_add_test(tc, policy_digest_follows_the_rules);
    tcase_add_test(tc, config_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
