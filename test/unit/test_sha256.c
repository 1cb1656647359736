/* SHA-256 against the FIPS 180-4 / NIST CAVP examples, whole and fed in
 * every split, so the block buffering is covered as well as the rounds. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/sha256.h"

static void hex(const unsigned char d[GW_SHA256_LEN], char out[2 * GW_SHA256_LEN + 1])
{
    for (int i = 0; i < GW_SHA256_LEN; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void check_split(const char *msg, size_t n, size_t split, const char *want)
{
    struct gw_sha256 c;
    unsigned char d[GW_SHA256_LEN];
    char got[2 * GW_SHA256_LEN + 1];

    gw_sha256_init(&c);
    gw_sha256_update(&c, msg, split);
    gw_sha256_update(&c, msg + split, n - split);
    gw_sha256_final(&c, d);
    hex(d, got);
    ck_assert_str_eq(got, want);
}

static void check(const char *msg, const char *want)
{
    size_t n = strlen(msg);

    for (size_t split = 0; split <= n; split++)
        check_split(msg, n, split, want);
}

START_TEST(test_vectors)
{
    check("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* 56 bytes: the length no longer fits the first block. */
    check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    check("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopq"
          "rlmnopqrsmnopqrstnopqrstu",
          "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}
END_TEST

START_TEST(test_million_a)
{
    struct gw_sha256 c;
    unsigned char d[GW_SHA256_LEN];
    char got[2 * GW_SHA256_LEN + 1], block[1000];

    memset(block, 'a', sizeof(block));
    gw_sha256_init(&c);
    for (int i = 0; i < 1000; i++)
        gw_sha256_update(&c, block, sizeof(block));
    gw_sha256_final(&c, d);
    hex(d, got);
    ck_assert_str_eq(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

static Suite *sha256_suite(void)
{
    Suite *s = suite_create("sha256");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_vectors);
    tcase_add_test(tc, test_million_a);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sha256_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
