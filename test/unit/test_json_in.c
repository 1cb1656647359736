/* gw_json_loadb must give what json_loadb gives for every input: the same
 * tree in the same key order, or NULL with the same message. Checked on
 * fixed cases (escapes, surrogates, numbers at the edges, duplicates,
 * depth, garbage), on random documents written by json_dumps in several
 * styles, and on thousands of mutated copies of them (bytes flipped,
 * cut, inserted), most of which are invalid. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/json_in.h"

#include "random_json.h"

static void same_n(const char *doc, size_t len, size_t flags)
{
    json_error_t we, ge;
    json_t *want = json_loadb(doc, len, flags, &we);
    json_t *got = gw_json_loadb(doc, len, flags, &ge);

    if (want == NULL) {
        ck_assert_msg(got == NULL, "accepted what jansson refuses: %.*s", (int)len, doc);
        ck_assert_str_eq(ge.text, we.text);
        ck_assert_int_eq(ge.line, we.line);
        ck_assert_int_eq(ge.column, we.column);
        ck_assert_int_eq(ge.position, we.position);
        return;
    }
    ck_assert_msg(got != NULL, "refused what jansson accepts (%s): %.*s", ge.text, (int)len, doc);
    ck_assert_msg(json_equal(want, got), "different tree: %.*s", (int)len, doc);
    /* json_equal ignores key order; the dumps do not */
    char *a = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
    char *b = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
    ck_assert_str_eq(b, a);
    free(a);
    free(b);
    json_decref(want);
    json_decref(got);
}

static void same(const char *doc, size_t flags)
{
    same_n(doc, strlen(doc), flags);
}

static const size_t FLAGSETS[] = {0, JSON_REJECT_DUPLICATES, JSON_DECODE_ANY,
                                  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY};

START_TEST(test_fixed)
{
    static const char *const docs[] = {
        "{}",
        " [ ] ",
        "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
        "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\"]",
        "[\"caf\\u00e9 \\u2603 \\ud83d\\ude00 \xc3\xa9 \xf0\x9f\x98\x80\"]",
        "[\"\\u0000\"]",
        "[\"\\ud83d\"]",
        "[\"\\ude00\"]",
        "[\"\\ud83d\\u0041\"]",
        "[\"\\uZZZZ\"]",
        "[\"\\x\"]",
        "[\"a\nb\"]",
        "[\"\xff\"]",
        "[\"\xc0\xaf\"]",
        "[\"\xed\xa0\x80\"]",
        "[\"\xf4\x90\x80\x80\"]",
        "[\"unterminated",
        "[1.5, 0.1, 1e300, -0.0, 3.0, 1E+2, 1e-400, 123456789012345678]",
        "[-9223372036854775808, 9223372036854775807, 0, -1, -0]",
        "[9223372036854775808]",
        "[-9223372036854775809]",
        "[1e400]",
        "[-1e400]",
        "[01]",
        "[-]",
        "[1.]",
        "[.5]",
        "[1e]",
        "[+1]",
        "[0.000000000000000000000000000000000000000000000000000000000000000000001]",
        "{\"z\":1,\"a\":2,\"m\":{\"y\":[],\"b\":{}}}",
        "{\"k\":1,\"k\":2}",
        "{\"k\":1,\"j\":{},\"k\":[3]}",
        "{\"k\":1,\"\\u006b\":2}",
        "{\"a\":{\"k\":1,\"k\":{}},\"b\":2}",
        "{\"caf\xc3\xa9\":1,\"caf\\u00e9\":2}",
        "{\"\\u0000\":1}",
        "{\"\":1}",
        "{1:2}",
        "{\"a\" 1}",
        "{\"a\":1,}",
        "[1,]",
        "[1 2]",
        "{\"a\":1}}",
        "{\"a\":1} x",
        "{\"a\":1}\n\t\r ",
        "[truex]",
        "[tru]",
        "[nul]",
        "[false,null,true]",
        "\"top\"",
        "42",
        "-1.5e3",
        "null",
        "",
        "   ",
        "\xef\xbb\xbf{}",
        ("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"deep\"]]]]]]]]]]]"
         "]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        for (size_t f = 0; f < sizeof FLAGSETS / sizeof FLAGSETS[0]; f++)
            same(docs[i], FLAGSETS[f]);
    same_n("{\"a\":\"b\0c\"}", 11, 0);
    same_n("{\"a\":1}\0", 8, 0);
}
END_TEST

START_TEST(test_long_strings_and_depth)
{
    size_t n = 5000;
    char *doc = malloc(n * 4 + 64);
    size_t o = 0;

    doc[o++] = '[';
    doc[o++] = '"';
    for (size_t i = 0; i < n; i++) {
        const char *piece = i % 3 == 0 ? "\\u00e9" : i % 3 == 1 ? "x" : "\\n";
        memcpy(doc + o, piece, strlen(piece));
        o += strlen(piece);
    }
    doc[o++] = '"';
    doc[o++] = ']';
    same_n(doc, o, 0);
    for (int depth = 60; depth <= 70; depth++) {
        o = 0;
        for (int i = 0; i < depth; i++) {
            if (i % 2) {
                doc[o++] = '[';
            } else {
                memcpy(doc + o, "{\"k\":", 5);
                o += 5;
            }
        }
        doc[o++] = '1';
        for (int i = depth - 1; i >= 0; i--)
            doc[o++] = i % 2 ? ']' : '}';
        same_n(doc, o, 0);
    }
    free(doc);
}
END_TEST

/* Plain strings are scanned four bytes at a time: every byte value, at
 * every offset of a four-byte step and in the tail, in a string and in a
 * key, must end the fast scan exactly where jansson's reading differs. */
START_TEST(test_every_byte_at_every_offset)
{
    char doc[64];

    for (int c = 0; c < 256; c++) {
        for (int at = 0; at < 10; at++) {
            for (int total = at + 1; total < 12; total++) {
                size_t o = 0;
                doc[o++] = '[';
                doc[o++] = '"';
                for (int i = 0; i < total; i++)
                    doc[o++] = i == at ? (char)c : 'a';
                doc[o++] = '"';
                doc[o++] = ']';
                same_n(doc, o, 0);
                doc[0] = '{';
                doc[o - 1] = ':';
                doc[o++] = '1';
                doc[o++] = '}';
                same_n(doc, o, 0);
            }
        }
    }
}
END_TEST

/* One byte changed, dropped, duplicated, or the text cut short. */
static size_t mutate(unsigned *seed, char *doc, size_t len)
{
    static const char bytes[] = "{}[]\",:\\u0e1-.+ \n\x80\xc3\xff\0tfn";
    size_t at = len ? (size_t)rand_r(seed) % len : 0;

    switch (rand_r(seed) % 4) {
    case 0:
        if (len)
            doc[at] = bytes[rand_r(seed) % (sizeof bytes - 1)];
        return len;
    case 1:
        if (len == 0)
            return 0;
        memmove(doc + at, doc + at + 1, len - at - 1);
        return len - 1;
    case 2:
        memmove(doc + at + 1, doc + at, len - at);
        doc[at] = bytes[rand_r(seed) % (sizeof bytes - 1)];
        return len + 1;
    default:
        return at;
    }
}

START_TEST(test_random)
{
    static const size_t styles[] = {JSON_COMPACT, JSON_INDENT(2), JSON_ENSURE_ASCII,
                                    JSON_COMPACT | JSON_ENSURE_ASCII};
    unsigned seed = 20261123;

    for (int i = 0; i < 3000; i++) {
        json_t *j = random_json_container(&seed, 0, i % 2);
        char *text = json_dumps(j, styles[i % 4]);
        size_t len = strlen(text);
        char *doc = malloc(len + 2);

        memcpy(doc, text, len);
        same_n(doc, len, FLAGSETS[i % 4]);
        for (int m = 0; m < 4; m++) {
            size_t n = mutate(&seed, doc, len);
            same_n(doc, n, FLAGSETS[(i + m) % 4]);
            memcpy(doc, text, len);
        }
        free(doc);
        free(text);
        json_decref(j);
    }
}
END_TEST

static Suite *json_in_suite(void)
{
    Suite *s = suite_create("json_in");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fixed);
    tcase_add_test(tc, test_long_strings_and_depth);
    tcase_add_test(tc, test_every_byte_at_every_offset);
    tcase_add_test(tc, test_random);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(json_in_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
