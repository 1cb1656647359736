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

static void check_hmac(const void *key, size_t keylen, const char *msg, const char *want)
{
    struct gw_hmac_sha256 c;
    unsigned char d[GW_SHA256_LEN];
    char got[2 * GW_SHA256_LEN + 1];
    size_t n = strlen(msg);

    /* Whole, then in two pieces: the stream gives the same code. */
    for (size_t split = 0; split <= n; split += n ? n / 2 + 1 : 1) {
        gw_hmac_sha256_init(&c, key, keylen);
        gw_hmac_sha256_update(&c, msg, split);
        gw_hmac_sha256_update(&c, msg + split, n - split);
        gw_hmac_sha256_final(&c, d);
        hex(d, got);
        ck_assert_str_eq(got, want);
    }
}

/* RFC 4231 test cases 1, 2 and 6 (a key longer than a block). */
START_TEST(test_hmac_vectors)
{
    unsigned char k1[20], k6[131];

    memset(k1, 0x0b, sizeof k1);
    memset(k6, 0xaa, sizeof k6);
    check_hmac(k1, sizeof k1, "Hi There",
               "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    check_hmac("Jefe", 4, "what do ya want for nothing?",
               "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    check_hmac(k6, sizeof k6, "Test Using Larger Than Block-Size Key - Hash Key First",
               "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}
END_TEST

static Suite *sha256_suite(void)
{
    Suite *s = suite_create("sha256");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_vectors);
    tcase_add_test(tc, test_million_a);
    tcase_add_test(tc, test_hmac_vectors);
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
