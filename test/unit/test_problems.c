#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/problems.h"
#include "gw/util.h"

static struct gw_problem mk(const char *id, enum gw_severity sev, const char *msg)
{
    return (struct gw_problem){
        .id = id, .severity = sev, .scope = GW_SCOPE_SERVER, .server = "s1", .message = msg};
}

static int events, cleared_events;

static void listener(const struct gw_problem *p, int cleared, void *data)
{
    (void)p;
    (void)data;
    if (cleared)
        cleared_events++;
    else
        events++;
}

START_TEST(set_replace_and_keep_since)
{
    struct gw_problems *reg = gw_problems_new();
    struct gw_problem p = mk("a", GW_SEV_ERROR, "first");
    char *msg = strdup("second");

    gw_problems_set_listener(reg, listener, NULL);
    events = 0;
    gw_problems_set(reg, &p);
    gw_problems_set(reg, &p); /* unchanged: no event */
    ck_assert_int_eq(events, 1);
    ck_assert_uint_eq(gw_problems_count(reg, GW_SEV_ERROR), 1);
    p.message = msg; /* replaced: the old text is freed, the new one copied */
    gw_problems_set(reg, &p);
    free(msg);
    ck_assert_int_eq(events, 2);
    ck_assert_str_eq(gw_problems_find(reg, "a")->message, "second");
    ck_assert_uint_eq(gw_problems_count(reg, GW_SEV_ERROR), 1);
    gw_problems_free(reg);
}
END_TEST

START_TEST(clear_and_prefix)
{
    struct gw_problems *reg = gw_problems_new();
    struct gw_problem a = mk("config:x:1:1", GW_SEV_WARNING, "w");
    struct gw_problem b = mk("config:y:2:1", GW_SEV_ERROR, "e");
    struct gw_problem c = mk("server:s1:start", GW_SEV_ERROR, "down");

    gw_problems_set_listener(reg, listener, NULL);
    cleared_events = 0;
    gw_problems_set(reg, &a);
    gw_problems_set(reg, &b);
    gw_problems_set(reg, &c);
    ck_assert_int_eq(gw_problems_clear_prefix(reg, "config:"), 2);
    ck_assert_int_eq(cleared_events, 2);
    ck_assert_ptr_null(gw_problems_find(reg, "config:x:1:1"));
    ck_assert_int_eq(gw_problems_clear(reg, "server:s1:start"), 1);
    ck_assert_int_eq(gw_problems_clear(reg, "server:s1:start"), 0);
    ck_assert_uint_eq(gw_problems_count(reg, GW_SEV_ERROR), 0);
    gw_problems_free(reg);
}
END_TEST

START_TEST(json_shape_in_insertion_order)
{
    struct gw_problems *reg = gw_problems_new();
    struct gw_problem a = mk("b-second", GW_SEV_WARNING, "w");
    struct gw_problem b = mk("a-first", GW_SEV_INFO, "i");
    json_t *j, *list, *first;

    a.tool = "t1";
    gw_problems_set(reg, &a);
    gw_problems_set(reg, &b);
    j = gw_problems_to_json(reg);
    list = json_object_get(j, "problems");
    ck_assert_uint_eq(json_array_size(list), 2);
    first = json_array_get(list, 0);
    ck_assert_str_eq(json_string_value(json_object_get(first, "id")), "b-second");
    ck_assert_str_eq(json_string_value(json_object_get(first, "severity")), "warning");
    ck_assert_str_eq(json_string_value(json_object_get(first, "scope")), "server");
    ck_assert_str_eq(json_string_value(json_object_get(first, "tool")), "t1");
    ck_assert_int_eq(strlen(json_string_value(json_object_get(first, "since"))), 20);
    ck_assert(json_is_null(json_object_get(json_array_get(list, 1), "tool")));
    json_decref(j);
    gw_problems_free(reg);
}
END_TEST

START_TEST(log_escape_cannot_forge_lines)
{
    char buf[128];

    gw_log_escape(buf, sizeof buf, "plain");
    ck_assert_str_eq(buf, "plain");
    gw_log_escape(buf, sizeof buf, "two words");
    ck_assert_str_eq(buf, "\"two words\"");
    gw_log_escape(buf, sizeof buf, "x\n level=error msg=\"forged\"");
    ck_assert_str_eq(buf, "\"x\\n level=error msg=\\\"forged\\\"\"");
    gw_log_escape(buf, sizeof buf, "bell\a\\");
    ck_assert_str_eq(buf, "\"bell\\x07\\\\\"");
    gw_log_escape(buf, sizeof buf, "");
    ck_assert_str_eq(buf, "\"\"");
    ck_assert_uint_eq(gw_log_escape(buf, 4, "abcdefgh"), 8);
    ck_assert_str_eq(buf, "abc");
}
END_TEST

START_TEST(log_level_parse)
{
    enum gw_log_level l;

    ck_assert_int_eq(gw_log_level_parse("debug", &l), 0);
    ck_assert_int_eq(l, GW_LOG_DEBUG);
    ck_assert_int_eq(gw_log_level_parse("warning", &l), 0);
    ck_assert_int_eq(l, GW_LOG_WARN);
    ck_assert_int_ne(gw_log_level_parse("loud", &l), 0);
}
END_TEST

START_TEST(utf8_trim_cuts_partial_characters)
{
    char a[] = "ab\xc3\xa9"; /* complete: kept */
    char b[] = "ab\xc3";     /* a lead byte alone */
    char c[] = "ab\xe2\x82"; /* two of three bytes */
    char d[] = "\xf0\x9f\x98\x80x";

    gw_utf8_trim(a);
    gw_utf8_trim(b);
    gw_utf8_trim(c);
    gw_utf8_trim(d);
    ck_assert_str_eq(a, "ab\xc3\xa9");
    ck_assert_str_eq(b, "ab");
    ck_assert_str_eq(c, "ab");
    ck_assert_str_eq(d, "\xf0\x9f\x98\x80x");
}
END_TEST

/* "%.*s" with gw_utf8_cut: never half a character, never a byte that
 * is not UTF-8. */
START_TEST(utf8_cut_on_character_boundaries)
{
    ck_assert_int_eq(gw_utf8_cut("ab\xc3\xa9", 3), 2);
    ck_assert_int_eq(gw_utf8_cut("ab\xc3\xa9", 4), 4);
    ck_assert_int_eq(gw_utf8_cut("ab\xc3\xa9", 40), 4);
    ck_assert_int_eq(gw_utf8_cut("\xf0\x9f\x98\x80x", 3), 0);
    ck_assert_int_eq(gw_utf8_cut("\xf0\x9f\x98\x80x", 5), 5);
    ck_assert_int_eq(gw_utf8_cut("ab\xff"
                                 "cd",
                                 5),
                     2);
    ck_assert_int_eq(gw_utf8_cut("ab\xe2\x82", 5), 2);
    ck_assert_int_eq(gw_utf8_cut("", 5), 0);

    char out[16];
    size_t used;
    ck_assert_uint_eq(gw_utf8_excerpt(out, 3, "ab\xc3\xa9", 4, &used), 2);
    ck_assert_uint_eq(used, 2);
    ck_assert_uint_eq(gw_utf8_excerpt(out, 16, "a\x1b\xff\xc3\xa9\n", 6, &used), 6);
    ck_assert_uint_eq(used, 6);
    ck_assert(memcmp(out, "a ?\xc3\xa9 ", 6) == 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("problems");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    gw_log_set_level(GW_LOG_ERROR);
    tcase_add_test(tc, set_replace_and_keep_since);
    tcase_add_test(tc, clear_and_prefix);
    tcase_add_test(tc, json_shape_in_insertion_order);
    tcase_add_test(tc, log_escape_cannot_forge_lines);
    tcase_add_test(tc, log_level_parse);
    tcase_add_test(tc, utf8_trim_cuts_partial_characters);
    tcase_add_test(tc, utf8_cut_on_character_boundaries);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
