/* The /mcp session table: every session is found by its id while the
 * table doubles and halves under it, and its memory follows the sessions
 * there are, not the most there may be (a fixed table of 10,000 was 128 KiB,
 * kept resident by the pages random ids had touched: issue 34). What a
 * session keeps: its dialog as long as it is, and of its client's
 * capabilities the bits read, not the tree. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/log.h"
#include "gw/mcp_server_internal.h"

#define N 3000

static struct gw_mcp_server *table_new(uv_loop_t *loop)
{
    struct gw_mcp_server *ms = calloc(1, sizeof *ms);

    ck_assert_ptr_nonnull(ms);
    ms->loop = loop;
    ms->lim.max_sessions = GW_MCP_SERVER_MAX_SESSIONS;
    return ms;
}

static void all_found(struct gw_mcp_server *ms, struct gw_mcp_session **s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != NULL)
            ck_assert_ptr_eq(gw_mcp__session_find(ms, s[i]->id), s[i]);
    }
}

/* No bucket kept for each session there may be (GW_MCP_SERVER_MAX_SESSIONS). */
START_TEST(test_server_holds_no_fixed_table)
{
    ck_assert_uint_lt(sizeof(struct gw_mcp_server),
                      GW_MCP_SERVER_MAX_SESSIONS * sizeof(struct gw_mcp_session *));
}
END_TEST

START_TEST(test_table_follows_sessions)
{
    uv_loop_t loop;
    struct gw_mcp_server *ms;
    static struct gw_mcp_session *s[N];
    char unknown[MCP_SESSION_ID_LEN + 1];

    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ms = table_new(&loop);
    memset(unknown, 'a', MCP_SESSION_ID_LEN);
    unknown[MCP_SESSION_ID_LEN] = '\0';
    ck_assert_ptr_null(gw_mcp__session_find(ms, unknown));
    for (size_t i = 0; i < N; i++) {
        ck_assert_int_eq(gw_mcp__session_new(ms, NULL, NULL, &s[i]), 0);
        ck_assert_uint_le(ms->nsessions, ms->nbuckets);
        ck_assert_uint_le(ms->nbuckets, 2 * ms->nsessions + MCP_BUCKETS_MIN);
        if (i % 97 == 0)
            all_found(ms, s, i + 1);
    }
    all_found(ms, s, N);
    ck_assert_uint_eq(ms->nsessions, N);
    ck_assert_ptr_null(gw_mcp__session_find(ms, unknown));
    /* Ended in an order unlike their creation: every other one first. */
    for (size_t step = 2; step >= 1; step--) {
        for (size_t i = step - 1; i < N; i += step) {
            if (s[i] == NULL)
                continue;
            char id[MCP_SESSION_ID_LEN + 1];
            memcpy(id, s[i]->id, sizeof id);
            gw_mcp__session_end(s[i], false, "test");
            s[i] = NULL;
            ck_assert_ptr_null(gw_mcp__session_find(ms, id));
            ck_assert_uint_le(ms->nbuckets, 16 * ms->nsessions + MCP_BUCKETS_MIN);
            if (i % 89 == 0)
                all_found(ms, s, N);
        }
    }
    ck_assert_uint_eq(ms->nsessions, 0);
    ck_assert_uint_eq(ms->nbuckets, MCP_BUCKETS_MIN);
    free(ms->buckets);
    free(ms);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* A session's dialog is allocated with it, as long as it is: a named one
 * whole up to GW_DIALOG_MAX (cut there, as before), its own one
 * "mcp-session:" and 16 hex digits. */
START_TEST(test_dialog_kept)
{
    uv_loop_t loop;
    struct gw_mcp_server *ms;
    struct gw_mcp_session *s[3];
    char longest[GW_DIALOG_MAX + 2];

    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ms = table_new(&loop);
    memset(longest, 'd', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    ck_assert_int_eq(gw_mcp__session_new(ms, NULL, "d1", &s[0]), 0);
    ck_assert_int_eq(gw_mcp__session_new(ms, NULL, longest, &s[1]), 0);
    ck_assert_int_eq(gw_mcp__session_new(ms, NULL, NULL, &s[2]), 0);
    ck_assert_str_eq(s[0]->dialog, "d1");
    ck_assert(s[0]->named_dialog);
    ck_assert_uint_eq(strlen(s[1]->dialog), GW_DIALOG_MAX);
    ck_assert_int_eq(strncmp(s[1]->dialog, longest, GW_DIALOG_MAX), 0);
    ck_assert_uint_eq(strlen(s[2]->dialog), GW_DIALOG_SESSION_LEN);
    ck_assert_int_eq(
        strncmp(s[2]->dialog, GW_DIALOG_SESSION_PREFIX, sizeof GW_DIALOG_SESSION_PREFIX - 1), 0);
    ck_assert(!s[2]->named_dialog);
    for (size_t i = 0; i < 3; i++)
        gw_mcp__session_end(s[i], false, "test");
    /* a client's session holds its dialog scoped (client@dialog), sized
     * for that: the name was once scoped in place after the allocation */
    ck_assert_int_eq(gw_mcp__session_new(ms, "alice", "d1", &s[0]), 0);
    ck_assert_str_eq(s[0]->dialog, "alice@d1");
    ck_assert_int_eq(gw_mcp__session_new(ms, "alice", NULL, &s[1]), 0);
    ck_assert_int_eq(strncmp(s[1]->dialog, "alice@" GW_DIALOG_SESSION_PREFIX,
                             sizeof "alice@" GW_DIALOG_SESSION_PREFIX - 1),
                     0);
    ck_assert_int_eq(gw_mcp__session_new(ms, "alice", longest, &s[2]), 0);
    ck_assert_uint_eq(strlen(s[2]->dialog), GW_DIALOG_MAX);
    for (size_t i = 0; i < 3; i++)
        gw_mcp__session_end(s[i], false, "test");
    free(ms->buckets);
    free(ms);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(test_caps_read)
{
    static const struct {
        const char *caps;
        unsigned bits;
        bool url;
    } cases[] = {
        {"{}", 0, false},
        {"{\"sampling\":{}}", GW_CLIENT_CAP_SAMPLING, false},
        {"{\"elicitation\":{}}", GW_CLIENT_CAP_ELICITATION, false},
        {"{\"elicitation\":{\"url\":{}},\"sampling\":{},\"roots\":{}}",
         GW_CLIENT_CAP_ELICITATION | GW_CLIENT_CAP_SAMPLING, true},
        {"{\"elicitation\":{\"url\":true}}", GW_CLIENT_CAP_ELICITATION, false},
        {"{\"elicitation\":true}", 0, false},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *caps = json_loads(cases[i].caps, 0, NULL);
        bool url = !cases[i].url;

        ck_assert_ptr_nonnull(caps);
        ck_assert_uint_eq(gw_mcp__client_caps(caps, &url), cases[i].bits);
        ck_assert_msg(url == cases[i].url, "%s", cases[i].caps);
        json_decref(caps);
    }
    {
        bool url = true;
        ck_assert_uint_eq(gw_mcp__client_caps(NULL, &url), 0);
        ck_assert(!url);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mcp_sessions");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_server_holds_no_fixed_table);
    tcase_add_test(tc, test_table_follows_sessions);
    tcase_add_test(tc, test_dialog_kept);
    tcase_add_test(tc, test_caps_read);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    gw_log_set_level(GW_LOG_ERROR);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
