/* gw_json_dump must give json_dumps(JSON_COMPACT)'s bytes for every value,
 * and gw_jbuf_value json_dumps(JSON_COMPACT | JSON_ENCODE_ANY)'s inside other
 * text, but for reals, which may have fewer digits for the same double:
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

/* `got` is `want` (json_dumps' text), or, where reals differ, the same
 * value in fewer bytes. */
static void same_text(const char *got, const char *want)
{
    json_t *a, *b;

    if (strcmp(got, want) == 0)
        return;
    ck_assert_msg(strlen(got) < strlen(want), "%s is not shorter than %s", got, want);
    a = json_loads(got, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    b = json_loads(want, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    ck_assert_msg(a != NULL && b != NULL && json_equal(a, b), "%s is not %s", got, want);
    json_decref(a);
    json_decref(b);
}

/* gw_jbuf_value inside other text gives json_dumps(ENCODE_ANY)'s bytes,
 * and leaves nothing of a value it cannot write. */
static void same_in_buf(json_t *j)
{
    char *want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    struct gw_jbuf b = {0};
    size_t len = 0;
    char *got;
    int rc;

    gw_jbuf_put(&b, "[1,", 3);
    rc = gw_jbuf_value(&b, j);
    gw_jbuf_put(&b, "]", 1);
    got = gw_jbuf_take(&b, &len);
    ck_assert_ptr_null(b.p);
    if (want == NULL) {
        ck_assert_int_eq(rc, -1);
        ck_assert_str_eq(got, "[1,]");
    } else {
        ck_assert_int_eq(rc, 0);
        got[len - 1] = '\0';
        same_text(got + 3, want);
    }
    free(want);
    free(got);
}

static void same(json_t *j)
{
    char *want = json_dumps(j, JSON_COMPACT);
    size_t len = 12345;
    char *got = gw_json_dump(j, &len);

    same_in_buf(j);

    if (want == NULL) {
        ck_assert_ptr_null(got);
    } else {
        ck_assert_ptr_nonnull(got);
        same_text(got, want);
        ck_assert_uint_eq(len, strlen(got));
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
        "[1.5, 0.1, 1e300, -0.0, 3.0, 123456789012345678, 0.30000000000000004]",
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

/* Reals in jansson's form, with the fewest digits that read back. */
START_TEST(test_reals)
{
    json_t *j =
        json_loads("[1.5,0.1,1e300,-0.0,3.0,3.4910000000000001,0.30000000000000004,1e-7]", 0, NULL);
    char *got = gw_json_dump(j, NULL);

    ck_assert_str_eq(got, "[1.5,0.1,1e300,-0.0,3.0,3.491,0.30000000000000004,1e-7]");
    free(got);
    json_decref(j);
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

START_TEST(test_jbuf_pieces)
{
    struct gw_jbuf b = {0};
    json_t *real = json_real(0.5), *str = json_string("s");
    size_t len;
    char *got;

    gw_jbuf_put(&b, "{\"id\":", 6);
    gw_jbuf_int(&b, -42);
    gw_jbuf_put(&b, ",\"m\":", 5);
    ck_assert_int_eq(gw_jbuf_string(&b, "a\"b\n\xc3\xa9", 6), 0);
    gw_jbuf_put(&b, ",\"r\":", 5);
    ck_assert_int_eq(gw_jbuf_value(&b, real), 0);
    gw_jbuf_put(&b, ",\"s\":", 5);
    ck_assert_int_eq(gw_jbuf_value(&b, str), 0);
    gw_jbuf_put(&b, "}", 1);
    got = gw_jbuf_take(&b, &len);
    ck_assert_str_eq(got, "{\"id\":-42,\"m\":\"a\\\"b\\n\xc3\xa9\",\"r\":0.5,\"s\":\"s\"}");
    ck_assert_uint_eq(len, strlen(got));
    free(got);
    ck_assert_int_eq(gw_jbuf_string(&b, "\xff", 1), -1);
    free(b.p);
    got = gw_jbuf_take(&(struct gw_jbuf){0}, &len); /* empty: "" */
    ck_assert_str_eq(got, "");
    ck_assert_uint_eq(len, 0);
    free(got);
    json_decref(real);
    json_decref(str);
}
END_TEST

static Suite *json_out_suite(void)
{
    Suite *s = suite_create("json_out");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fixed);
    tcase_add_test(tc, test_reals);
    tcase_add_test(tc, test_not_dumpable);
    tcase_add_test(tc, test_deep_and_cyclic);
    tcase_add_test(tc, test_random);
    tcase_add_test(tc, test_jbuf_pieces);
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
