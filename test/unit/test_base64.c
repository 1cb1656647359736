/* Base64 both ways against RFC 4648's examples (section 10), the two
 * alphabets, what the decoder refuses, and a round trip of every length
 * up to a few blocks. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/base64.h"

static const struct {
    const char *plain, *b64;
} rfc[] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

static long decode(const char *in, unsigned char *out)
{
    return gw_base64_decode(in, strlen(in), out);
}

START_TEST(test_rfc_vectors)
{
    for (size_t i = 0; i < sizeof rfc / sizeof rfc[0]; i++) {
        size_t n = strlen(rfc[i].plain);
        char *enc = gw_base64_encode((const unsigned char *)rfc[i].plain, n);
        char url[16], unpadded[16];
        unsigned char dec[16];

        ck_assert_str_eq(enc, rfc[i].b64);
        free(enc);
        gw_base64url_encode((const unsigned char *)rfc[i].plain, n, url);
        snprintf(unpadded, sizeof unpadded, "%.*s", (int)strcspn(rfc[i].b64, "="), rfc[i].b64);
        ck_assert_str_eq(url, unpadded);
        /* Padding is optional to the decoder. */
        ck_assert_int_eq(decode(rfc[i].b64, dec), (long)n);
        ck_assert(memcmp(dec, rfc[i].plain, n) == 0);
        ck_assert_int_eq(decode(unpadded, dec), (long)n);
        ck_assert(memcmp(dec, rfc[i].plain, n) == 0);
    }
}
END_TEST

/* 0xfb 0xff 0xbf are the bytes whose digits are 62 and 63: "+/" in the
 * standard alphabet, "-_" in the URL-safe one, and the decoder reads both. */
START_TEST(test_alphabets)
{
    static const unsigned char bytes[] = {0xfb, 0xff, 0xbf};
    char *std = gw_base64_encode(bytes, sizeof bytes);
    char url[8];
    unsigned char dec[8];

    ck_assert_str_eq(std, "+/+/");
    free(std);
    gw_base64url_encode(bytes, sizeof bytes, url);
    ck_assert_str_eq(url, "-_-_");
    ck_assert_int_eq(decode("+/+/", dec), 3);
    ck_assert(memcmp(dec, bytes, 3) == 0);
    ck_assert_int_eq(decode("-_-_", dec), 3);
    ck_assert(memcmp(dec, bytes, 3) == 0);
}
END_TEST

START_TEST(test_refused)
{
    unsigned char dec[16];

    ck_assert_int_eq(decode("Zm9v YmFy", dec), -1); /* whitespace inside */
    ck_assert_int_eq(decode("Zm9v\nYmFy", dec), -1);
    ck_assert_int_eq(decode("Zm9v*mFy", dec), -1);
    ck_assert_int_eq(decode("Zm=9v", dec), -1); /* padding only at the end */
    ck_assert_int_eq(decode("Z", dec), -1);     /* one digit is no byte */
    ck_assert_int_eq(decode("Zm9vY", dec), -1);
    ck_assert_int_eq(decode("Z===", dec), -1);
}
END_TEST

START_TEST(test_round_trip)
{
    unsigned char in[64], dec[64 / 4 * 3 + 3 + 64];
    char url[64 * 4 / 3 + 4];

    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 37 + 11);
    for (size_t n = 0; n <= sizeof in; n++) {
        char *std = gw_base64_encode(in, n);

        ck_assert_uint_eq(strlen(std), (n + 2) / 3 * 4);
        ck_assert_int_eq(decode(std, dec), (long)n);
        ck_assert(memcmp(dec, in, n) == 0);
        free(std);
        gw_base64url_encode(in, n, url);
        ck_assert_uint_eq(strlen(url), (n * 4 + 2) / 3);
        ck_assert_int_eq(decode(url, dec), (long)n);
        ck_assert(memcmp(dec, in, n) == 0);
    }
}
END_TEST

static Suite *base64_suite(void)
{
    Suite *s = suite_create("base64");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_rfc_vectors);
    tcase_add_test(tc, test_alphabets);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(base64_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
