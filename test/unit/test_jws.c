/* The client assertion of private_key_jwt (gw/jws.h): its header and
 * claims, and its signature verified by libcrypto itself for an ES256 and
 * an RS256 key; the DER-to-raw conversion of ECDSA signatures on edge
 * cases; keys that are refused. The keys are test keys made for this file. */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gw/base64.h"
#include "gw/jws.h"

static const char ec_pem[] = "-----BEGIN PRIVATE KEY-----\n"
                             "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJxhtFtaNXvZ30U3E\n"
                             "/qXoAOIvSkZWEh9QvIAoVqCJiIqhRANCAASMShpKyqKKp2B1bGQR+7nJopWdeqSc\n"
                             "afH7XwfeXk07/Baxg/AYxFcjNj2CnOwE9ze7xLI5zBjXKxeBHkZD3zAC\n"
                             "-----END PRIVATE KEY-----\n";
static const char rsa_pem[] = "-----BEGIN PRIVATE KEY-----\n"
                              "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCrt7wj3DJ5WnSB\n"
                              "rhWxKNJaD6Uusm+N6FcjepGrw8IOpmGipOr+2uplTBSg1BXjZBaAd6y+p8PGyMrI\n"
                              "RqU0gYDLzHHWSmZS/HOQhrELhO0vfaIYZnM7wqFm1uXs28P14p086JjUG+57V2Ti\n"
                              "wV3LxVf91nDA0w7BbFuMjJoRpet4mVWkvi0tkBgPF39xCJNkiS4Q7j64r0sw5qsK\n"
                              "ZDzlzMp9B1TC9LKRyHZK8WIOtEGBXG1853MWPtdk8QCeWrrdRyYnO3+084ThGRXa\n"
                              "gaI1D6FSvz6AGvNLkMjqKVKobbnHFHHug3b8dw85yLPIH4Ocpx6fqIkEF28C/kr2\n"
                              "Ejb7Pqr1AgMBAAECggEAEeNK8wVeMKwOlO+4jMLu3rjggTPPUR4R7b037Yev8Gy+\n"
                              "oP3DCRdu8Wxyfap6OTzU5z8QPLAnQc7q6OALF6Qh8ZjzhtorPJvVwgl16fhH6PmS\n"
                              "aC5L9L66p4bdXsYp7LRVouGsAfSC7FBXTxPLnI2LNAMhrcSOtfF+u+5tokcBd4d9\n"
                              "5jgedFNiH6cag1RaIVjHVDK0QTwRCLDVCBF935yke8PJkINRT790yJxrETeiodhU\n"
                              "B1P5sBOHf49KwiQUz/7uN7UWZ5oStiqE4N5aFlaSktAmopKnDUsnnGNIYODbo2NO\n"
                              "fNyHtTh1LaB2CgJLvXlWiOXNi2jpa6r6YM73uorABQKBgQDWJzHPfUZwoufTtzd4\n"
                              "XzOMS7PvDduEAriIZGmqIrWe5r8kuvSIFcSnDBpOal1rlbLc9Uf13UFTk1Bs0svo\n"
                              "Uvs0hWrz+8fRM/P9fsnJD5AaZYcE9fO7Z6xPnm2CuFAPWQQo5kNoBU+zAE/U83a6\n"
                              "BQJ9V5fOeiYCygtqKRDejDLjlwKBgQDNRcAWk07GPqeoon9+Bvziywnr7Kl4VLIj\n"
                              "qh8ZQ51o/md8eo/dkr9a/6XtvrYpX5ux6oFqPyHBDM6mkMRL6z0y96yLGPXq8I7W\n"
                              "nATVaIUntE7IJ9J8jSbGLyn9msx2fFo8gGTJCmvt8HByJLSSQPHDbvnM+t7Ue643\n"
                              "nfg2l2BHUwKBgE6Y4gIqE1FBqN4eT2CBaFTkb+yb5GYl7X45hEJqLMheHecoKplL\n"
                              "i/pXScxf41uZ/KR17WxCQTigR5M5Jpdk5UeYc/GKBgM1EyaFgx+k85mMi6p5bnPo\n"
                              "j+hE2CJy7QdE/27XXAPwdxjWU3ZvyLJrJkfEfzXLxOmfJ+NVoRhc0kyPAoGAE8xj\n"
                              "b4n7shE++Hvb0hr4byNoLJIh8lIw8FGrODOWThcjghUMJTHPNQatSVX4mdr32Fwm\n"
                              "6Ul3hvgmQlh6JlxlBbJvuObKaUOUc0yPBspS9XZlltaIbazrjXflE+nHSLJLvcQg\n"
                              "dGeF62giYE/7/pM2/kOI4mVb8qCPOBwLYbCN/7MCgYEAssmj0kkUxtKrLXU+HxBK\n"
                              "nt+t4uCJ03Ps8XLtnJW+tIzTzsrDrowlKjwfp82gdFENtJW5wZVWNY5VBs3UVHEM\n"
                              "HDzn7ZMaU2ev5VYj64qNAcKTxfGUBaklhktVTM95mbWjaDd6Tvxb99DWAIBsx28T\n"
                              "Et+mDK0O02Spq/RztX9cFqY=\n"
                              "-----END PRIVATE KEY-----\n";
static const char ec384_pem[] = "-----BEGIN PRIVATE KEY-----\n"
                                "MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDDvvUbIXZRgSZXJseTL\n"
                                "UyHbYtQRzvft+LohRtBJsbgE9UDmMslh3OHPvpRSJ279YaihZANiAATW+QwUfSPX\n"
                                "vWglpbFjahoC7WSXqWe5rqF0tg+c7hzz+/hI/N6b+/xvB3QspdLrHHNzwG0tqSMd\n"
                                "E/P4+yWEFifZBJVQAvYIPXj5k636Y2gw4czTkUrhnSxkKpFR0Jvt/fo=\n"
                                "-----END PRIVATE KEY-----\n";
static const char ed_pem[] = "-----BEGIN PRIVATE KEY-----\n"
                             "MC4CAQAwBQYDK2VwBCIEIJnltRYFb6LxD0p6CmDv/P80NGPtchE/08VD6JR94Rh4\n"
                             "-----END PRIVATE KEY-----\n";

/* libcrypto, for the verifying side. */
static struct {
    void *(*BIO_new_mem_buf)(const void *, int);
    int (*BIO_free)(void *);
    void *(*PEM_read_bio_PrivateKey)(void *, void **, void *, void *);
    void (*EVP_PKEY_free)(void *);
    void *(*EVP_MD_CTX_new)(void);
    void (*EVP_MD_CTX_free)(void *);
    int (*EVP_DigestVerifyInit)(void *, void **, const void *, void *, void *);
    int (*EVP_DigestVerify)(void *, const unsigned char *, size_t, const unsigned char *, size_t);
    const void *(*EVP_sha256)(void);
} ssl;

static void ssl_load(void)
{
    void *h = dlopen(GW_JWS_LIB, RTLD_NOW);
    ck_assert_msg(h != NULL, "%s", dlerror());
#define SYM(n)                                                                                     \
    do {                                                                                           \
        void *p = dlsym(h, #n);                                                                    \
        ck_assert_msg(p != NULL, "%s", #n);                                                        \
        memcpy(&ssl.n, &p, sizeof(p));                                                             \
    } while (0)
    SYM(BIO_new_mem_buf);
    SYM(BIO_free);
    SYM(PEM_read_bio_PrivateKey);
    SYM(EVP_PKEY_free);
    SYM(EVP_MD_CTX_new);
    SYM(EVP_MD_CTX_free);
    SYM(EVP_DigestVerifyInit);
    SYM(EVP_DigestVerify);
    SYM(EVP_sha256);
#undef SYM
}

/* A DER INTEGER of 32 big-endian bytes (minimal: leading zeros dropped, a
 * zero byte added before a set high bit). */
static size_t der_int(const unsigned char *v, unsigned char *out)
{
    size_t n = 32;
    while (n > 1 && *v == 0)
        v++, n--;
    size_t pad = (*v & 0x80) != 0;
    out[0] = 0x02;
    out[1] = (unsigned char)(n + pad);
    out[2] = 0;
    memcpy(out + 2 + pad, v, n);
    return 2 + pad + n;
}

static bool verify(const char *pem, const char *input, const unsigned char *sig, size_t len)
{
    void *bio = ssl.BIO_new_mem_buf(pem, (int)strlen(pem));
    void *pkey = ssl.PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    ssl.BIO_free(bio);
    ck_assert_ptr_nonnull(pkey);
    void *ctx = ssl.EVP_MD_CTX_new();
    bool ok = ssl.EVP_DigestVerifyInit(ctx, NULL, ssl.EVP_sha256(), NULL, pkey) == 1 &&
              ssl.EVP_DigestVerify(ctx, sig, len, (const unsigned char *)input, strlen(input)) == 1;
    ssl.EVP_MD_CTX_free(ctx);
    ssl.EVP_PKEY_free(pkey);
    return ok;
}

static json_t *part_json(const char *b64, size_t len)
{
    unsigned char buf[1024];
    long n = gw_base64_decode(b64, len, buf);
    ck_assert_int_gt(n, 0);
    json_t *j = json_loadb((const char *)buf, (size_t)n, 0, NULL);
    ck_assert_ptr_nonnull(j);
    return j;
}

/* Makes an assertion with `pem`, checks its header and claims, and
 * verifies its signature; `tamper` flips one byte of the signed input
 * first, which must make verification fail. */
static void check_assertion(const char *pem, const char *alg, bool tamper)
{
    char why[256];
    struct gw_jws_key *k;
    ck_assert_int_eq(gw_jws_key_load(pem, &k, why, sizeof(why)), 0);
    ck_assert_str_eq(gw_jws_alg(k), alg);
    char *jwt =
        gw_jws_client_assertion(k, "client-1", "https://as.example/", 1700000000, why, sizeof(why));
    ck_assert_ptr_nonnull(jwt);
    char *dot1 = strchr(jwt, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    ck_assert_ptr_nonnull(dot2);
    ck_assert_ptr_null(strchr(dot2 + 1, '.'));
    ck_assert_ptr_null(strpbrk(jwt, "=+/"));

    json_t *h = part_json(jwt, (size_t)(dot1 - jwt));
    ck_assert_str_eq(json_string_value(json_object_get(h, "alg")), alg);
    ck_assert_str_eq(json_string_value(json_object_get(h, "typ")), "JWT");
    json_decref(h);
    json_t *c = part_json(dot1 + 1, (size_t)(dot2 - dot1 - 1));
    ck_assert_str_eq(json_string_value(json_object_get(c, "iss")), "client-1");
    ck_assert_str_eq(json_string_value(json_object_get(c, "sub")), "client-1");
    ck_assert_str_eq(json_string_value(json_object_get(c, "aud")), "https://as.example/");
    ck_assert_int_eq(json_integer_value(json_object_get(c, "iat")), 1700000000);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "exp")),
                     1700000000 + GW_JWS_ASSERTION_SECS);
    const char *jti = json_string_value(json_object_get(c, "jti"));
    ck_assert_uint_ge(strlen(jti), 22);
    json_decref(c);

    /* A second assertion has another jti (and so another payload). */
    char *again =
        gw_jws_client_assertion(k, "client-1", "https://as.example/", 1700000000, why, sizeof(why));
    ck_assert_ptr_nonnull(again);
    ck_assert_int_ne(memcmp(jwt, again, (size_t)(dot2 - jwt)), 0);
    free(again);

    unsigned char sig[600], der[80];
    long n = gw_base64_decode(dot2 + 1, strlen(dot2 + 1), sig);
    *dot2 = '\0';
    if (tamper)
        jwt[5] ^= 1;
    if (strcmp(alg, "ES256") == 0) {
        ck_assert_int_eq(n, 64);
        size_t lr = der_int(sig, der + 2);
        size_t ls = der_int(sig + 32, der + 2 + lr);
        der[0] = 0x30;
        der[1] = (unsigned char)(lr + ls);
        ck_assert(verify(pem, jwt, der, 2 + lr + ls) == !tamper);
    } else {
        ck_assert_int_eq(n, 256);
        ck_assert(verify(pem, jwt, sig, (size_t)n) == !tamper);
    }
    free(jwt);
    gw_jws_key_free(k);
}

START_TEST(test_es256)
{
    check_assertion(ec_pem, "ES256", false);
    check_assertion(ec_pem, "ES256", true);
}
END_TEST

START_TEST(test_rs256)
{
    check_assertion(rsa_pem, "RS256", false);
    check_assertion(rsa_pem, "RS256", true);
}
END_TEST

START_TEST(test_refused_keys)
{
    char why[256];
    struct gw_jws_key *k = (struct gw_jws_key *)1;
    ck_assert_int_eq(gw_jws_key_load("not a key", &k, why, sizeof(why)), -EINVAL);
    ck_assert_ptr_null(k);
    ck_assert_ptr_nonnull(strstr(why, "not a PEM private key"));
    ck_assert_int_eq(gw_jws_key_load(ec384_pem, &k, why, sizeof(why)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "secp384r1"));
    ck_assert_int_eq(gw_jws_key_load(ed_pem, &k, why, sizeof(why)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "neither an EC"));
    /* A truncated PEM. */
    char *cut = strndup(rsa_pem, strlen(rsa_pem) / 2);
    ck_assert_int_eq(gw_jws_key_load(cut, &k, why, sizeof(why)), -EINVAL);
    free(cut);
    /* No key text in any message. */
    ck_assert_ptr_null(strstr(why, "MII"));
}
END_TEST

START_TEST(test_der_to_raw)
{
    unsigned char raw[64], want[64];
    /* r with its high bit set (33 bytes with the zero), s short (1 byte). */
    unsigned char der[2 + 2 + 33 + 2 + 1] = {0x30, 38, 0x02, 33, 0x00};
    for (int i = 0; i < 32; i++)
        der[5 + i] = (unsigned char)(0x80 + i);
    der[37] = 0x02;
    der[38] = 1;
    der[39] = 0x05;
    memset(want, 0, sizeof(want));
    for (int i = 0; i < 32; i++)
        want[i] = (unsigned char)(0x80 + i);
    want[63] = 0x05;
    ck_assert_int_eq(gw_jws_ecdsa_der_to_raw(der, sizeof(der), raw), 0);
    ck_assert_mem_eq(raw, want, 64);

    /* Refused: a wrong outer length, trailing bytes, a 33-byte r whose
     * first byte is not zero, a missing second INTEGER, not a SEQUENCE. */
    unsigned char bad[sizeof(der) + 1];
    memcpy(bad, der, sizeof(der));
    bad[1] = 37;
    ck_assert_int_eq(gw_jws_ecdsa_der_to_raw(bad, sizeof(der), raw), -EINVAL);
    bad[1] = 39;
    bad[sizeof(der)] = 0;
    ck_assert_int_eq(gw_jws_ecdsa_der_to_raw(bad, sizeof(bad), raw), -EINVAL);
    memcpy(bad, der, sizeof(der));
    bad[4] = 0x01;
    ck_assert_int_eq(gw_jws_ecdsa_der_to_raw(bad, sizeof(der), raw), -EINVAL);
    unsigned char one[] = {0x30, 6, 0x02, 1, 0x01, 0x04, 1, 0x01};
    ck_assert_int_eq(gw_jws_ecdsa_der_to_raw(one, sizeof(one), raw), -EINVAL);
    memcpy(bad, der, sizeof(der));
    bad[0] = 0x31;
    ck_assert_int_eq(gw_jws_ecdsa_der_to_raw(bad, sizeof(der), raw), -EINVAL);
    /* An INTEGER longer than what is left. */
    unsigned char over[] = {0x30, 6, 0x02, 9, 0x01, 0x02, 1, 0x01};
    ck_assert_int_eq(gw_jws_ecdsa_der_to_raw(over, sizeof(over), raw), -EINVAL);
}
END_TEST

static Suite *jws_suite(void)
{
    Suite *s = suite_create("jws");
    TCase *tc = tcase_create("core");
    tcase_add_unchecked_fixture(tc, ssl_load, NULL);
    tcase_add_test(tc, test_es256);
    tcase_add_test(tc, test_rs256);
    tcase_add_test(tc, test_refused_keys);
    tcase_add_test(tc, test_der_to_raw);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(jws_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
