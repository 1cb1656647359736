/* gw_json_dump must give json_dumps(JSON_COMPACT)'s bytes for every value:
 * fixed cases (escapes, UTF-8, reals, key order, NUL in strings and keys),
 * invalid UTF-8 and non-container tops (both NULL), deep and cyclic trees,
 * and a few thousand random trees. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/json_out.h"

#include "random_json.h"

static void same(json_t *j)
{
    char *want = json_dumps(j, JSON_COMPACT);
    size_t len = 12345;
    char *got = gw_json_dump(j, &len);

    if (want == NULL) {
        ck_assert_ptr_null(got);
    } else {
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, want);
        ck_assert_uint_eq(len, strlen(want));
    }
    free(want);
    free(got);
}

START_TEST(test_fixed)
{
    static const char *const docs[] = {
        "{}",
        "[]",
        "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
        "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\"]",
        "[\"caf\\u00e9 \\u2603 \\ud83d\\ude00 \xc3\xa9\"]",
        "[1.5, 0.1, 1e300, -0.0, 3.0, 123456789012345678]",
        "[-9223372036854775808, 9223372036854775807, 0, -1]",
        "{\"z\":1,\"a\":2,\"m\":{\"y\":[],\"b\":{}}}",
        "{\"k\":\"v\\u0000w\"}",
        "[[[[[[[[[[\"deep\"]]]]]]]]]]",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        json_error_t err;
        json_t *j = json_loads(docs[i], JSON_ALLOW_NUL, &err);
        ck_assert_msg(j != NULL, "%s: %s", docs[i], err.text);
        same(j);
        json_decref(j);
    }
}
END_TEST

START_TEST(test_not_dumpable)
{
    json_t *s = json_string("top"), *a = json_array(), *o = json_object();

    same(s);
    ck_assert_ptr_null(gw_json_dump(s, NULL));
    json_array_append_new(a, json_stringn_nocheck("\xff\xfe", 2));
    same(a);
    json_object_set_new(o, "k", json_stringn_nocheck("a\xed\xa0\x80", 4)); /* a surrogate */
    same(o);
    json_object_set_new(o, "k", json_stringn_nocheck("\xc0\xaf", 2)); /* overlong */
    same(o);
    json_object_set_new(o, "k", json_stringn_nocheck("\xe2\x82", 2)); /* cut */
    same(o);
    json_decref(s);
    json_decref(a);
    json_decref(o);
}
END_TEST

START_TEST(test_deep_and_cyclic)
{
    json_t *top = json_array(), *cur = top, *o = json_object();

    for (int i = 0; i < 1000; i++) {
        json_t *next = json_array();
        json_array_append_new(cur, next);
        cur = next;
    }
    same(top);
    json_array_append(cur, top); /* a cycle: both fail */
    ck_assert_ptr_null(gw_json_dump(top, NULL));
    json_array_clear(cur);
    json_decref(top);
    cur = json_array(); /* o → [o] */
    json_object_set_new(o, "self", cur);
    json_array_append(cur, o);
    ck_assert_ptr_null(gw_json_dump(o, NULL));
    json_array_clear(cur);
    json_object_setn_new(o, "a\0b", 3, json_string("NUL in a key"));
    same(o);
    json_decref(o);
}
END_TEST

START_TEST(test_random)
{
    unsigned seed = 8;

    for (int i = 0; i < 5000; i++) {
        json_t *j = random_json_container(&seed, 0, i % 2);
        same(j);
        json_decref(j);
    }
}
END_TEST

static Suite *json_out_suite(void)
{
    Suite *s = suite_create("json_out");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fixed);
    tcase_add_test(tc, test_not_dumpable);
    tcase_add_test(tc, test_deep_and_cyclic);
    tcase_add_test(tc, test_random);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(json_out_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
