/* gw_mcp__modern_call_answer must write, byte for byte, what the tree path
 * sends for a 2026-07-28 tools/call (gw_mcp__call_reply, then
 * gw_mcp__modern_decorate, then gw_json_dump): fixed shapes (no _meta, a
 * _meta holding the upstream's serverInfo or a lease before or after other
 * members, resultType present or not, an empty result, string and integer
 * ids), a few thousand random results, and NULL for every shape it leaves
 * to the tree path (another resultType, a _meta that is not an object, a
 * result that is not an object, text that is not UTF-8, no id); below
 * the top, text that is not UTF-8 gives what the tree path gives. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/json_out.h"
#include "gw/mcp_server_internal.h"
#include "gw/util.h"

#include "random_json.h"

/* The answer the tree path gives: the call's reply, decorated, dumped. */
static char *tree_answer(json_t *id, json_t *result, json_t *lease)
{
    struct gw_mcp_exchange x = {0};
    struct gw_mcp_call c = {.x = &x, .id = id};
    struct gw_call_outcome o = {.result = result, .lease = lease};
    json_t *reply = gw_mcp__call_reply(&c, &o);
    char *text;

    ck_assert_ptr_nonnull(reply);
    gw_mcp__modern_decorate("tools/call", json_object_get(reply, "result"));
    text = gw_json_dump(reply, NULL);
    json_decref(reply);
    return text;
}

static void same_answer(json_t *id, json_t *result, json_t *lease)
{
    char *want = tree_answer(id, result, lease);
    size_t len = 0;
    char *got = gw_mcp__modern_call_answer(id, result, lease, &len);

    ck_assert_ptr_nonnull(want);
    ck_assert_msg(got != NULL, "no text for %s", want);
    ck_assert_str_eq(got, want);
    ck_assert_uint_eq(len, strlen(want));
    free(got);
    free(want);
}

/* Text not UTF-8 below the top: the tree path writes what jansson
 * writes; the writer gives the same bytes or leaves it to that path. */
static void same_or_left(json_t *id, json_t *result, json_t *lease)
{
    char *want = tree_answer(id, result, lease);
    char *got = gw_mcp__modern_call_answer(id, result, lease, NULL);

    ck_assert_ptr_nonnull(want);
    if (got != NULL)
        ck_assert_str_eq(got, want);
    free(got);
    free(want);
}

static json_t *parse(const char *text)
{
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);

    ck_assert_ptr_nonnull(j);
    return j;
}

START_TEST(test_fixed)
{
    static const char *const results[] = {
        "{}",
        "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"isError\":false}",
        "{\"content\":[],\"resultType\":\"complete\"}",
        "{\"resultType\":\"complete\",\"content\":[],\"_meta\":{}}",
        "{\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"upstream\"},\"k\":1},"
        "\"content\":[]}",
        "{\"content\":[],\"_meta\":{\"a\":[1,2.5,null],\"mcpgw/"
        "lease\":\"theirs\",\"z\":\"\\u00e9\"}}",
        "{\"content\":[],\"_meta\":{\"mcpgw/lease\":{},\"io.modelcontextprotocol/serverInfo\":1}}",
        "{\"structuredContent\":{\"x\":\"\\\"\\n\"},\"content\":[{\"type\":\"text\",\"text\":\"\"}]"
        "}",
    };
    json_t *ids[] = {json_string("x1"), json_integer(-7), json_string("")};
    json_t *lease = parse("{\"serverId\":\"echo\",\"instance\":1,\"reminder\":\"call "
                          "mcp_release({\\\"serverId\\\":\\\"echo\\\"})\"}");

    for (size_t r = 0; r < sizeof results / sizeof results[0]; r++) {
        json_t *result = parse(results[r]);
        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
            same_answer(ids[i], result, NULL);
            same_answer(ids[i], result, lease);
        }
        json_decref(result);
    }
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        json_decref(ids[i]);
    json_decref(lease);
}
END_TEST

/* Random upstream results, with the members the answer treats apart put
 * at random places. */
START_TEST(test_random)
{
    json_t *id = json_integer(42);

    for (unsigned i = 0; i < 3000; i++) {
        unsigned seed = i;
        json_t *result = random_json_container(&seed, 1, 1);
        json_t *lease = rand_r(&seed) % 2 ? random_json_value(&seed, 3) : NULL;

        if (rand_r(&seed) % 2) {
            json_t *meta = random_json_container(&seed, 2, 1);
            if (rand_r(&seed) % 2)
                json_object_set_new(meta, MCP_META_SERVER, random_json_value(&seed, 4));
            if (rand_r(&seed) % 2)
                json_object_set_new(meta, "mcpgw/lease", random_json_value(&seed, 4));
            json_object_set_new(meta, "after", json_true());
            json_object_set_new(result, "_meta", meta);
        }
        if (rand_r(&seed) % 2)
            json_object_set_new(result, "resultType", json_string("complete"));
        json_object_set_new(result, "last", json_integer(i));
        same_answer(id, result, lease);
        json_decref(lease);
        json_decref(result);
    }
    json_decref(id);
}
END_TEST

/* What the writer must leave to the tree path. */
START_TEST(test_falls_back)
{
    static const char *const results[] = {
        "{\"resultType\":\"input_required\",\"content\":[]}",
        "{\"resultType\":\"bogus\"}",
        "{\"resultType\":42}",
        "{\"resultType\":\"\"}",
        "{\"resultType\":null}",
        "{\"content\":[],\"_meta\":\"x\"}",
        "{\"content\":[],\"_meta\":[]}",
        "{\"content\":[],\"_meta\":null}",
        "[]",
        "\"text\"",
    };
    json_t *id = json_string("a"), *lease = json_object(), *bad;
    size_t len;

    for (size_t r = 0; r < sizeof results / sizeof results[0]; r++) {
        json_t *result = parse(results[r]);
        ck_assert_msg(gw_mcp__modern_call_answer(id, result, NULL, &len) == NULL, "%s", results[r]);
        ck_assert_msg(gw_mcp__modern_call_answer(id, result, lease, &len) == NULL, "%s",
                      results[r]);
        json_decref(result);
    }
    ck_assert_ptr_null(gw_mcp__modern_call_answer(NULL, lease, NULL, &len));
    ck_assert_ptr_null(gw_mcp__modern_call_answer(json_true(), lease, NULL, &len));
    /* not UTF-8: in a value, in a key, in _meta, in the lease */
    bad = json_object();
    json_object_set_new(bad, "content", json_stringn_nocheck("\xff", 1));
    ck_assert_ptr_null(gw_mcp__modern_call_answer(id, bad, NULL, &len));
    json_decref(bad);
    bad = json_object();
    json_object_set_new_nocheck(bad, "\xc3", json_true());
    ck_assert_ptr_null(gw_mcp__modern_call_answer(id, bad, NULL, &len));
    json_decref(bad);
    /* a key that is not UTF-8 below the top */
    json_object_set_new_nocheck(lease, "\xc3", json_true());
    bad = parse("{\"content\":[]}");
    same_or_left(id, bad, lease);
    json_object_set(bad, "_meta", lease);
    same_or_left(id, bad, NULL);
    json_decref(bad);
    json_decref(lease);
    json_decref(id);
}
END_TEST

/* gw_mcp__members finds what json_object_get finds: the same member or
 * NULL, for present and absent keys, keys that are a prefix or an
 * extension of another, keys holding a NUL, and anything but an object. */
static void same_members(json_t *obj, const struct gw_mcp_member *want, size_t n)
{
    json_t *got[4], **out[] = {&got[0], &got[1], &got[2], &got[3]};

    ck_assert_uint_le(n, 4);
    gw_mcp__members(obj, want, out, n);
    for (size_t i = 0; i < n; i++) {
        json_t *expect =
            json_is_object(obj) ? json_object_getn(obj, want[i].key, want[i].len) : NULL;
        ck_assert_ptr_eq(got[i], expect);
    }
}

START_TEST(test_members)
{
    static const struct gw_mcp_member keys[] = {
        GW_MCP_MEMBER("name"), GW_MCP_MEMBER("_meta"), GW_MCP_MEMBER("arguments"), {"na\0me", 5}};
    static const char *const others[] = {"nam",    "names",    "Name",       "_met",
                                         "_meta ", "argument", "arguments2", ""};
    json_t *o = json_object(), *a = json_array();
    unsigned seed = 20261127;

    same_members(o, keys, 4);
    same_members(NULL, keys, 4);
    same_members(a, keys, 4);
    json_decref(a);
    for (size_t i = 0; i < GW_ARRAY_SIZE(others); i++) {
        json_object_set_new(o, others[i], json_integer((json_int_t)i));
        same_members(o, keys, 4);
    }
    json_object_setn_new(o, "na\0me", 5, json_string("with a NUL"));
    same_members(o, keys, 4);
    json_object_set_new(o, "name", json_string("echo"));
    json_object_set_new(o, "arguments", json_object());
    same_members(o, keys, 4);
    same_members(json_object_get(o, "name"), keys, 4);
    json_decref(o);
    for (int i = 0; i < 500; i++) {
        json_t *r = random_json_container(&seed, 0, 1);
        struct gw_mcp_member some[3];
        const char *k;
        json_t *v;
        size_t n = 0;

        /* its own keys, among which the last one asked for is absent */
        json_object_foreach(r, k, v)
        {
            if (n < 2)
                some[n++] = (struct gw_mcp_member){k, strlen(k)};
        }
        some[n++] = (struct gw_mcp_member){"absent", 6};
        same_members(r, some, n);
        same_members(r, keys, 4);
        json_decref(r);
    }
}
END_TEST

static Suite *mcp_answer_suite(void)
{
    Suite *s = suite_create("mcp_answer");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fixed);
    tcase_add_test(tc, test_random);
    tcase_add_test(tc, test_falls_back);
    tcase_add_test(tc, test_members);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(mcp_answer_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
