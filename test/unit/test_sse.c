/* Tests of the SSE parser against the examples of the standard
 * (html.spec.whatwg.org, "server-sent events", §9.2.5–9.2.6), line-ending
 * variants, every split of the input, and the size cap. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/sse.h"

/* Collects events as [type, data, id] arrays. */
static int collect(void *data, const struct gw_sse_event *ev)
{
    json_t *out = data;
    json_array_append_new(out, json_pack("[s, s%, s]", ev->type, ev->data, ev->data_len, ev->id));
    return 0;
}

static json_t *parse_chunks(const char *s, size_t len, const size_t *cuts, size_t ncuts)
{
    struct gw_sse *p = gw_sse_new(0);
    json_t *out = json_array();
    size_t at = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        ck_assert_int_eq(gw_sse_feed(p, s + at, end - at, collect, out), 0);
        at = end;
    }
    gw_sse_free(p);
    return out;
}

static json_t *parse_all(const char *s)
{
    return parse_chunks(s, strlen(s), NULL, 0);
}

static void check_events(const char *stream, const char *expected_json)
{
    json_t *got = parse_all(stream);
    json_t *want = json_loads(expected_json, 0, NULL);
    ck_assert_ptr_nonnull(want);
    char *g = json_dumps(got, JSON_COMPACT);
    ck_assert_msg(json_equal(got, want), "got %s, want %s", g, expected_json);
    free(g);
    json_decref(got);
    json_decref(want);
}

START_TEST(test_standard_stock_example)
{
    check_events("data: YHOO\ndata: +2\ndata: 10\n\n", "[[\"message\", \"YHOO\\n+2\\n10\", \"\"]]");
}
END_TEST

START_TEST(test_standard_comment_and_id_example)
{
    check_events(": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
                 "data:  third event\n\n",
                 "[[\"message\", \"first event\", \"1\"], [\"message\", \"second event\", \"\"],"
                 " [\"message\", \" third event\", \"\"]]");
}
END_TEST

START_TEST(test_standard_empty_data_example)
{
    /* The first block is an empty event, the middle one a single newline,
     * the last is never finished. */
    check_events("data\n\ndata\ndata\n\ndata:",
                 "[[\"message\", \"\", \"\"], [\"message\", \"\\n\", \"\"]]");
}
END_TEST

START_TEST(test_standard_space_example)
{
    check_events("data:test\n\ndata: test\n\n",
                 "[[\"message\", \"test\", \"\"], [\"message\", \"test\", \"\"]]");
}
END_TEST

START_TEST(test_line_endings)
{
    const char *want = "[[\"message\", \"a\\nb\", \"\"], [\"x\", \"c\", \"\"]]";
    check_events("data: a\r\ndata: b\r\n\r\nevent: x\r\ndata: c\r\n\r\n", want);
    check_events("data: a\rdata: b\r\revent: x\rdata: c\r\r", want);
    check_events("data: a\ndata: b\r\n\revent: x\rdata: c\n\n", want);
}
END_TEST

START_TEST(test_fields)
{
    /* event without value means "message"; unknown fields ignored; an id
     * with NUL is ignored; retry only when all digits; no data: no event
     * but the id counts. */
    static const char s[] = "event\ndata: 1\nfoo: bar\n\n"
                            "id: 7\nretry: 1500\n\n"
                            "retry: 12x\nid: a\0b\ndata: 2\n\n"
                            "event: endpoint\ndata: /message?sessionId=9\n\n";
    json_t *got = parse_chunks(s, sizeof(s) - 1, NULL, 0);
    json_t *want = json_loads("[[\"message\", \"1\", \"\"], [\"message\", \"2\", \"7\"],"
                              " [\"endpoint\", \"/message?sessionId=9\", \"7\"]]",
                              0, NULL);
    ck_assert(json_equal(got, want));
    json_decref(got);
    json_decref(want);

    struct gw_sse *p = gw_sse_new(0);
    json_t *out = json_array();
    ck_assert_int_eq(gw_sse_retry_ms(p), -1);
    ck_assert_int_eq(gw_sse_feed(p, "retry: 1500\nretry: x\nid: z9\n\n", 28, collect, out), 0);
    ck_assert_int_eq(gw_sse_retry_ms(p), 1500);
    ck_assert_str_eq(gw_sse_last_event_id(p), "z9");
    ck_assert_int_eq(json_array_size(out), 0);
    gw_sse_free(p);
    json_decref(out);
}
END_TEST

START_TEST(test_bom)
{
    check_events("\xEF\xBB\xBF"
                 "data: x\n\n",
                 "[[\"message\", \"x\", \"\"]]");
    /* Only one BOM is skipped: a second makes the field name unknown. */
    check_events("\xEF\xBB\xBF\xEF\xBB\xBF"
                 "data: x\n\ndata: y\n\n",
                 "[[\"message\", \"y\", \"\"]]");
    /* A lone 0xEF is not a BOM and stays part of the line. */
    check_events("\xEF"
                 "data: x\n\ndata: y\n\n",
                 "[[\"message\", \"y\", \"\"]]");
}
END_TEST

static const char mixed[] = "\xEF\xBB\xBF: hello\r\n"
                            "event: a\r\ndata: one\r\ndata:two\r\nid: 1\r\n\r\n"
                            "data\rdata:  x\r\r"
                            "retry: 10\nevent: b\ndata: {\"k\": [1, 2]}\n\n"
                            "data: last\r\n\r\ndata: unfinished";

START_TEST(test_every_split)
{
    size_t len = sizeof(mixed) - 1;
    json_t *ref = parse_chunks(mixed, len, NULL, 0);
    ck_assert_int_eq(json_array_size(ref), 4);
    for (size_t cut = 0; cut <= len; cut++) {
        json_t *got = parse_chunks(mixed, len, &cut, 1);
        ck_assert_msg(json_equal(got, ref), "split at %zu differs", cut);
        json_decref(got);
    }
    size_t *cuts = malloc(len * sizeof(*cuts));
    for (size_t i = 0; i < len; i++)
        cuts[i] = i + 1;
    json_t *bytes = parse_chunks(mixed, len, cuts, len - 1);
    ck_assert(json_equal(bytes, ref));
    json_decref(bytes);
    srand(42);
    for (int round = 0; round < 200; round++) {
        size_t n = 0, at = 0;
        while (at < len) {
            at += 1 + (size_t)rand() % 9;
            if (at < len)
                cuts[n++] = at;
        }
        json_t *got = parse_chunks(mixed, len, cuts, n);
        ck_assert_msg(json_equal(got, ref), "random round %d differs", round);
        json_decref(got);
    }
    free(cuts);
    json_decref(ref);
}
END_TEST

START_TEST(test_small_cap)
{
    struct gw_sse *p = gw_sse_new(16);
    json_t *out = json_array();
    /* the line (16 bytes) fits exactly */
    ck_assert_int_eq(gw_sse_feed(p, "data:0123456789a\n\n", 18, collect, out), 0);
    ck_assert_int_eq(json_array_size(out), 1);
    /* a long line, split, trips the cap before its end */
    ck_assert_int_eq(gw_sse_feed(p, "data: 0123456789", 16, collect, out), 0);
    ck_assert_int_eq(gw_sse_feed(p, "abcdef\n\n", 8, collect, out), GW_SSE_E_TOO_BIG);
    ck_assert_int_eq(gw_sse_feed(p, "data: x\n\n", 9, collect, out), GW_SSE_E_TOO_BIG);
    ck_assert_int_eq(json_array_size(out), 1);
    gw_sse_free(p);

    /* several data lines add up: 6 + 6 fit in 20 with a pending line,
     * the third does not */
    p = gw_sse_new(20);
    ck_assert_int_eq(gw_sse_feed(p, "data: 12345\ndata: 12345\n", 24, collect, out), 0);
    ck_assert_int_eq(gw_sse_feed(p, "data: 12345\n", 12, collect, out), GW_SSE_E_TOO_BIG);
    gw_sse_free(p);
    json_decref(out);
}
END_TEST

static int count_events(void *data, const struct gw_sse_event *ev)
{
    (*(size_t *)data) += ev->data_len;
    return 0;
}

START_TEST(test_default_cap_16mib)
{
    size_t n = (17u << 20);
    char *big = malloc(n);
    memset(big, 'x', n);
    memcpy(big, "data: ", 6);
    struct gw_sse *p = gw_sse_new(0);
    size_t got = 0;
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0; at += 65536)
        rc = gw_sse_feed(p, big + at, n - at < 65536 ? n - at : 65536, count_events, &got);
    ck_assert_int_eq(rc, GW_SSE_E_TOO_BIG);
    ck_assert_int_eq(got, 0);
    gw_sse_free(p);

    /* 15 MiB passes */
    p = gw_sse_new(0);
    size_t ok = 15u << 20;
    big[ok] = '\n';
    big[ok + 1] = '\n';
    ck_assert_int_eq(gw_sse_feed(p, big, ok + 2, count_events, &got), 0);
    ck_assert_int_eq(got, ok - 6);
    gw_sse_free(p);
    free(big);
}
END_TEST

static int stop_at_second(void *data, const struct gw_sse_event *ev)
{
    int *n = data;
    return ++(*n) == 2 ? 7 : 0;
}

START_TEST(test_callback_stops)
{
    struct gw_sse *p = gw_sse_new(0);
    int n = 0;
    const char *s = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
    ck_assert_int_eq(gw_sse_feed(p, s, strlen(s), stop_at_second, &n), 7);
    ck_assert_int_eq(n, 2);
    /* the parser is still usable */
    ck_assert_int_eq(gw_sse_feed(p, "data: 4\n\n", 9, stop_at_second, &n), 0);
    ck_assert_int_eq(n, 3);
    gw_sse_free(p);
}
END_TEST

static Suite *sse_suite(void)
{
    Suite *s = suite_create("sse");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_standard_stock_example);
    tcase_add_test(tc, test_standard_comment_and_id_example);
    tcase_add_test(tc, test_standard_empty_data_example);
    tcase_add_test(tc, test_standard_space_example);
    tcase_add_test(tc, test_line_endings);
    tcase_add_test(tc, test_fields);
    tcase_add_test(tc, test_bom);
    tcase_add_test(tc, test_every_split);
    tcase_add_test(tc, test_small_cap);
    tcase_add_test(tc, test_default_cap_16mib);
    tcase_add_test(tc, test_callback_stops);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sse_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
