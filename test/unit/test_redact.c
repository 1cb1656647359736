/* Tests of the masking of configured secrets in server output. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/redact.h"

/* Redacts `in` and returns a static copy of the result. */
static const char *red(const struct gw_redact *r, const char *in, bool truncated)
{
    static char buf[8192];
    size_t n = strlen(in);
    ck_assert_uint_lt(n, sizeof(buf));
    memcpy(buf, in, n);
    size_t m = gw_redact_line(r, buf, n, truncated);
    ck_assert_uint_le(m, n);
    buf[m] = '\0';
    return buf;
}

START_TEST(test_whole_values)
{
    struct gw_redact *r = gw_redact_new();
    gw_redact_add(r, "sk-live-123456");
    gw_redact_add(r, "hunter2!");
    ck_assert_str_eq(red(r, "API_KEY=sk-live-123456", false), "API_KEY=***");
    ck_assert_str_eq(red(r, "a sk-live-123456 b hunter2! c sk-live-123456", false),
                     "a *** b *** c ***");
    ck_assert_str_eq(red(r, "sk-live-123456sk-live-123456", false), "******");
    ck_assert_str_eq(red(r, "nothing here", false), "nothing here");
    ck_assert_str_eq(red(r, "", false), "");
    gw_redact_free(r);
}
END_TEST

START_TEST(test_short_and_duplicate_values_ignored)
{
    struct gw_redact *r = gw_redact_new();
    gw_redact_add(r, "1");
    gw_redact_add(r, "on");
    gw_redact_add(r, "dev");
    gw_redact_add(r, "");
    gw_redact_add(r, NULL);
    ck_assert_uint_eq(gw_redact_count(r), 0);
    ck_assert_str_eq(red(r, "dev mode on 1", false), "dev mode on 1");
    gw_redact_add(r, "abcd");
    gw_redact_add(r, "abcd");
    ck_assert_uint_eq(gw_redact_count(r), 1);
    ck_assert_str_eq(red(r, "xabcdx", false), "x***x");
    gw_redact_free(r);
}
END_TEST

START_TEST(test_longest_first)
{
    struct gw_redact *r = gw_redact_new();
    gw_redact_add(r, "token");
    gw_redact_add(r, "token-extended");
    ck_assert_str_eq(red(r, "[token-extended] [token]", false), "[***] [***]");
    gw_redact_free(r);
}
END_TEST

START_TEST(test_split_across_lines)
{
    struct gw_redact *r = gw_redact_new();
    gw_redact_add(r, "ABCDEFGHIJKL");
    /* The first half ends a line, the second starts the next. */
    ck_assert_str_eq(red(r, "key=ABCDEF", false), "key=***");
    ck_assert_str_eq(red(r, "GHIJKL rest", false), "*** rest");
    /* Fewer than GW_REDACT_MIN_LEN bytes of it are left alone. */
    ck_assert_str_eq(red(r, "grade ABC", false), "grade ABC");
    ck_assert_str_eq(red(r, "JKL ok", false), "JKL ok");
    /* A line cut in the middle of a secret loses whatever began it. */
    ck_assert_str_eq(red(r, "xxxxxxAB", true), "xxxxxx");
    ck_assert_str_eq(red(r, "xxxxxxABCDE", true), "xxxxxx***");
    ck_assert_str_eq(red(r, "xxxxxxAB", false), "xxxxxxAB");
    gw_redact_free(r);
}
END_TEST

START_TEST(test_periodic_secret_overlap)
{
    /* The KMP fallback: "aabaab" ends with "aab", a prefix of the secret. */
    struct gw_redact *r = gw_redact_new();
    gw_redact_add(r, "aabaabaaa");
    ck_assert_str_eq(red(r, "x aabaab", false), "x ***");
    ck_assert_str_eq(red(r, "baaa y", false), "*** y");
    gw_redact_free(r);
}
END_TEST

START_TEST(test_server_config_values)
{
    struct gw_kv env[] = {{"API_KEY", "env-secret-value"}, {"DEBUG", "1"}};
    struct gw_kv hdr[] = {{"Authorization", "Bearer tok-abcdef"}};
    struct gw_server_config cfg = {
        .id = "s", .env = env, .nenv = 2, .headers = hdr, .nheaders = 1, .session_id = "sess-0001"};
    struct gw_redact *r = gw_redact_new();
    gw_redact_add_server(r, &cfg);
    ck_assert_str_eq(red(r, "env-secret-value tok-abcdef sess-0001 DEBUG=1", false),
                     "*** *** *** DEBUG=1");
    ck_assert_str_eq(red(r, "Authorization: Bearer tok-abcdef!", false), "Authorization: ***!");
    gw_redact_free(r);
}
END_TEST

START_TEST(test_many_secrets)
{
    struct gw_redact *r = gw_redact_new();
    char v[32], line[4096] = "";
    for (int i = 0; i < 500; i++) {
        snprintf(v, sizeof(v), "secret-%04d-x", i);
        gw_redact_add(r, v);
    }
    ck_assert_uint_eq(gw_redact_count(r), 500);
    for (int i = 0; i < 500; i += 50) {
        snprintf(v, sizeof(v), "secret-%04d-x ", i);
        strcat(line, v);
    }
    ck_assert_str_eq(red(r, line, false), "*** *** *** *** *** *** *** *** *** *** ");
    gw_redact_free(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("redact");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_whole_values);
    tcase_add_test(tc, test_short_and_duplicate_values_ignored);
    tcase_add_test(tc, test_longest_first);
    tcase_add_test(tc, test_split_across_lines);
    tcase_add_test(tc, test_periodic_secret_overlap);
    tcase_add_test(tc, test_server_config_values);
    tcase_add_test(tc, test_many_secrets);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
