/* gw_json_loadb must give what json_loadb gives for every input: the same
 * tree in the same key order, or NULL with the same message. Checked on
 * fixed cases (escapes, surrogates, numbers at the edges, duplicates,
 * depth, garbage), on random documents written by json_dumps in several
 * styles, and on thousands of mutated copies of them (bytes flipped,
 * cut, inserted), most of which are invalid. gw_json_read_fields must
 * accept exactly the documents whose tree has only its fields, of their
 * kinds, and find the values that tree holds: checked the same way on
 * envelopes written with members left out, repeated, of another kind or
 * unknown. */
#include <check.h>
#include <jansson.h>
#include <stdbool.h>
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

/* ---- gw_json_read_fields against the tree ---- */

enum { S_JSONRPC, S_ID, S_METHOD, S_PARAMS, S_NAME, S_ARGS, S_META, S_VERSION, S_CAPS, S_COUNT };

static const struct gw_json_field meta_fields[] = {
    GW_JSON_FIELD("io.modelcontextprotocol/protocolVersion", GW_JSON_STRING, S_VERSION),
    GW_JSON_FIELD("caps", GW_JSON_TREE, S_CAPS),
};
static const struct gw_json_field params_fields[] = {
    GW_JSON_FIELD("name", GW_JSON_STRING, S_NAME),
    GW_JSON_FIELD("arguments", GW_JSON_TREE, S_ARGS),
    GW_JSON_FIELD_OBJECT("_meta", S_META, meta_fields),
};
static const struct gw_json_field body_fields[] = {
    GW_JSON_FIELD("jsonrpc", GW_JSON_STRING, S_JSONRPC),
    GW_JSON_FIELD("id", GW_JSON_TREE, S_ID),
    GW_JSON_FIELD("method", GW_JSON_STRING, S_METHOD),
    GW_JSON_FIELD_OBJECT("params", S_PARAMS, params_fields),
};

struct oracle {
    const json_t *tree[S_COUNT];
    bool seen[S_COUNT];
    size_t room_used, room;
};

/* What the reader must find in `obj` read with `fields`: true when every
 * member is a field's, of its kind, with the strings fitting the room. */
static bool expect_fields(struct oracle *o, const json_t *obj, const struct gw_json_field *fields,
                          size_t n)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)obj, key, v)
    {
        const struct gw_json_field *f = NULL;
        for (size_t i = 0; i < n; i++)
            if (strlen(key) == fields[i].key_len &&
                memcmp(key, fields[i].key, fields[i].key_len) == 0)
                f = &fields[i];
        if (f == NULL)
            return false;
        o->seen[f->slot] = true;
        o->tree[f->slot] = v;
        switch (f->want) {
        case GW_JSON_STRING:
            if (!json_is_string(v) || o->room_used + json_string_length(v) + 1 > o->room)
                return false;
            o->room_used += json_string_length(v) + 1;
            break;
        case GW_JSON_TREE:
            break;
        case GW_JSON_OBJECT:
            if (!json_is_object(v) || !expect_fields(o, v, f->sub, f->nsub))
                return false;
            break;
        }
    }
    return true;
}

static int depth_of(const json_t *j)
{
    int d = 0;
    size_t i;
    const char *k;
    json_t *v;

    if (json_is_array(j))
        json_array_foreach(j, i, v) if (depth_of(v) > d) d = depth_of(v);
    if (json_is_object(j))
        json_object_foreach((json_t *)j, k, v) if (depth_of(v) > d) d = depth_of(v);
    return json_is_array(j) || json_is_object(j) ? d + 1 : 0;
}

/* Checks one document; 1 when the reader took it, 2 when it also held
 * params._meta's version (the whole envelope), 0 otherwise. */
static int same_fields(const char *doc, size_t len, size_t room_len)
{
    json_t *want = json_loadb(doc, len, JSON_REJECT_DUPLICATES, NULL);
    struct oracle o = {.room = room_len};
    bool ok = json_is_object(want) && expect_fields(&o, want, body_fields, 4);
    struct gw_json_slot v[S_COUNT];
    char room[512];
    int rc = gw_json_read_fields(doc, len, body_fields, 4, v, S_COUNT, room, room_len);

    /* nesting beyond gw_json_loadb's own (a container 65 deep, inside the
     * body's object at 0) is left to the caller's parse */
    if (rc != 0 && ok && depth_of(want) > 65) {
        json_decref(want);
        return 0;
    }
    ck_assert_msg((rc == 0) == ok, "read %s what the tree says (%d): %.*s",
                  rc == 0 ? "accepts" : "refuses", ok, (int)len, doc);
    for (int i = 0; rc == 0 && i < S_COUNT; i++) {
        ck_assert_int_eq(v[i].seen, o.seen[i]);
        if (!o.seen[i] || i == S_PARAMS || i == S_META)
            continue;
        if (i == S_ID || i == S_ARGS || i == S_CAPS) {
            char *a = json_dumps(o.tree[i], JSON_COMPACT | JSON_ENCODE_ANY);
            char *b = json_dumps(v[i].tree, JSON_COMPACT | JSON_ENCODE_ANY);
            ck_assert_str_eq(b, a);
            free(a);
            free(b);
        } else {
            ck_assert_uint_eq(v[i].len, json_string_length(o.tree[i]));
            ck_assert(memcmp(v[i].str, json_string_value(o.tree[i]), v[i].len) == 0);
            ck_assert_int_eq(v[i].str[v[i].len], '\0');
        }
    }
    if (rc == 0)
        gw_json_slots_release(v, S_COUNT);
    for (int i = 0; rc != 0 && i < S_COUNT; i++)
        ck_assert(!v[i].seen && v[i].tree == NULL && v[i].str == NULL);
    json_decref(want);
    return rc != 0 ? 0 : o.seen[S_VERSION] ? 2 : 1;
}

START_TEST(test_fields_fixed)
{
    static const char *const docs[] = {
        "{}",
        "[]",
        "\"x\"",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
        "\"arguments\":{\"text\":\"hello\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
        "\"2026-07-28\",\"caps\":{}}}}",
        " { \"id\" : \"a\" , \"params\" : { } } ",
        "{\"id\":1,\"id\":2}",                          /* repeated */
        "{\"params\":{\"name\":\"a\",\"name\":\"b\"}}", /* repeated inside */
        "{\"extra\":1}",                                /* not a field */
        "{\"params\":{\"_meta\":{\"progressToken\":1}}}",
        "{\"jsonrpc\":2}", /* another kind */
        "{\"params\":[]}",
        "{\"params\":{\"_meta\":\"x\"}}",
        "{\"na\\u006de\":\"x\"}",                       /* an escaped key, not a field here */
        "{\"params\":{\"na\\u006de\":\"caf\\u00e9\"}}", /* an escaped key and value */
        "{\"jsonrpc\":\"a\\u0000b\"}",                  /* jansson refuses NUL */
        "{\"id\":123456789012345678901234567890}",      /* left to json_loadb */
        "{\"id\":1} x",
        "{\"id\":1",
        "{\"id\":1,}",
        "{\"jsonrpc\":\"\xff\"}",
        "{\"jsonrpc\":\"\\ud800\"}",
        "{\"params\":{\"arguments\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
        "[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
        "]]]]]]]]}}",
    };

    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        same_fields(docs[i], strlen(docs[i]), 512);
        same_fields(docs[i], strlen(docs[i]), 4); /* strings beyond the room */
    }
}
END_TEST

static void put_text(char *doc, size_t *len, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n < cap) {
        memcpy(doc + *len, s, n);
        *len += n;
    }
}

static void put_json(char *doc, size_t *len, size_t cap, json_t *v)
{
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    put_text(doc, len, cap, t);
    free(t);
    json_decref(v);
}

static void write_fields(unsigned *seed, char *doc, size_t *len, size_t cap,
                         const struct gw_json_field *fields, size_t n);

/* One member for field `f`: of its kind, or (`other`) of any kind. */
static void write_member(unsigned *seed, char *doc, size_t *len, size_t cap,
                         const struct gw_json_field *f, bool other)
{
    char key[96];

    snprintf(key, sizeof key, "\"%.*s\":", (int)f->key_len, f->key);
    put_text(doc, len, cap, key);
    if (other)
        put_json(doc, len, cap, random_json_value(seed, 2));
    else if (f->want == GW_JSON_STRING)
        put_json(doc, len, cap, random_json_string(seed));
    else if (f->want == GW_JSON_TREE)
        put_json(doc, len, cap, random_json_value(seed, 1));
    else
        write_fields(seed, doc, len, cap, f->sub, f->nsub);
}

/* An object of `fields` written as text: each field once, in random order,
 * most of them of their kind; some left out, of another kind, repeated,
 * or next to a member that is no field. */
static void write_fields(unsigned *seed, char *doc, size_t *len, size_t cap,
                         const struct gw_json_field *fields, size_t n)
{
    size_t order[8];
    bool first = true;

    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rand_r(seed) % i, t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    put_text(doc, len, cap, rand_r(seed) % 4 ? "{" : " { ");
    for (size_t k = 0; k < n; k++) {
        const struct gw_json_field *f = &fields[order[k]];
        unsigned r = rand_r(seed) % 100;

        if (r < 12)
            continue;
        if (!first)
            put_text(doc, len, cap, ",");
        first = false;
        if (r < 15) { /* a key not a field */
            put_json(doc, len, cap, random_json_string(seed));
            put_text(doc, len, cap, ":1,");
        }
        write_member(seed, doc, len, cap, f, r >= 15 && r < 21);
        if (r >= 21 && r < 24) { /* repeated */
            put_text(doc, len, cap, ",");
            write_member(seed, doc, len, cap, f, false);
        }
    }
    put_text(doc, len, cap, "}");
}

START_TEST(test_fields_random)
{
    unsigned seed = 20261127;
    char doc[8192], copy[8192];

    int taken[3] = {0};

    for (int i = 0; i < 3000; i++) {
        size_t len = 0;

        write_fields(&seed, doc, &len, sizeof doc - 2, body_fields, 4);
        taken[same_fields(doc, len, i % 3 ? 512 : 24)]++;
        memcpy(copy, doc, len);
        for (int m = 0; m < 4; m++) {
            size_t n = mutate(&seed, doc, len);
            same_fields(doc, n, 512);
            memcpy(doc, copy, len);
        }
    }
    /* the documents reach the reader's every step, not only its refusals */
    ck_assert_int_gt(taken[1] + taken[2], 300);
    ck_assert_int_gt(taken[2], 100);
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
    tcase_add_test(tc, test_fields_fixed);
    tcase_add_test(tc, test_fields_random);
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
