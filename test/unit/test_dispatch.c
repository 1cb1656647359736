/* Dispatch's error table and timeout precedence. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/dispatch.h"
#include "gw/errors.h"
#include "gw/input_rounds.h"
#include "gw/mcp_client.h"
#include "gw/result.h"
#include "gw/sse.h"
#include "gw/upstream_http.h"
#include "gw/upstream_ws.h"

struct named {
    int code;
    int base;
    bool outcome; /* can be a call's outcome or a refusal */
};

static const struct named codes[] = {
    {GW_MCP_E_RPC, GW_E_MCP_BASE, true},
    {GW_MCP_E_TIMEOUT, GW_E_MCP_BASE, true},
    {GW_MCP_E_CANCELLED, GW_E_MCP_BASE, true},
    {GW_MCP_E_TRANSPORT, GW_E_MCP_BASE, true},
    {GW_MCP_E_CLOSED, GW_E_MCP_BASE, true},
    {GW_MCP_E_PROTOCOL, GW_E_MCP_BASE, true},
    {GW_MCP_E_LIMIT, GW_E_MCP_BASE, true},
    {GW_MCP_E_NOT_READY, GW_E_MCP_BASE, true},
    {GW_MCP_E_NOT_RUN, GW_E_MCP_BASE, true},
    {GW_SERVERS_E_NO_TOOL, GW_E_SERVERS_BASE, true},
    {GW_SERVERS_E_NOT_READY, GW_E_SERVERS_BASE, true},
    {GW_SERVERS_E_NEED_DIALOG, GW_E_SERVERS_BASE, true},
    {GW_SERVERS_E_LIMIT, GW_E_SERVERS_BASE, true},
    {GW_SERVERS_E_SPAWN, GW_E_SERVERS_BASE, true},
    {GW_SERVERS_E_RELEASED, GW_E_SERVERS_BASE, true},
    {GW_SERVERS_E_UNSUPPORTED, GW_E_SERVERS_BASE, true},
    {GW_SERVERS_E_SUBS_FULL, GW_E_SERVERS_BASE, true},
    {GW_HTTP_E_SESSION_GONE, GW_E_HTTP_BASE, false},
    {GW_HTTP_E_TOO_BIG, GW_E_HTTP_BASE, false},
    {GW_HTTP_E_STREAM, GW_E_HTTP_BASE, false},
    {GW_WS_E_TOO_BIG, GW_E_WS_BASE, false},
    {GW_WS_E_CLOSED, GW_E_WS_BASE, false},
    {GW_WS_E_REFUSED, GW_E_WS_BASE, false},
    {GW_SSE_E_TOO_BIG, GW_E_SSE_BASE, false},
    {GW_RESULT_E_SHAPE, GW_E_RESULT_BASE, false},
    {GW_RESULT_E_ENCODE, GW_E_RESULT_BASE, false},
    {GW_ROUNDS_E_STATE, GW_E_ROUNDS_BASE, false},
    {GW_ROUNDS_E_EXPIRED, GW_E_ROUNDS_BASE, false},
    {GW_ROUNDS_E_GONE, GW_E_ROUNDS_BASE, false},
    {GW_ROUNDS_E_RESPONSES, GW_E_ROUNDS_BASE, false},
};

#define NCODES (sizeof codes / sizeof codes[0])

START_TEST(codes_unique_in_their_ranges)
{
    for (size_t i = 0; i < NCODES; i++) {
        ck_assert_msg(GW_E_IN_RANGE(codes[i].code, codes[i].base), "code %d", codes[i].code);
        ck_assert_int_lt(codes[i].code, -4096); /* never one of libuv's */
        for (size_t j = i + 1; j < NCODES; j++)
            ck_assert_int_ne(codes[i].code, codes[j].code);
    }
}
END_TEST

START_TEST(every_outcome_has_a_row)
{
    for (size_t i = 0; i < NCODES; i++) {
        struct gw_dispatch_error e = gw_dispatch_error(codes[i].code);
        if (!codes[i].outcome)
            continue;
        ck_assert_int_ge(e.http_status, 400);
        ck_assert_int_le(e.http_status, 599);
        ck_assert_ptr_nonnull(e.rest_code);
        ck_assert_ptr_nonnull(e.label);
        ck_assert_ptr_nonnull(e.sentence);
        /* A row of its own, not the fallback for unknown codes. */
        ck_assert_str_ne(e.sentence, "the server could not be reached");
        ck_assert(e.rpc_code == 0 || e.rpc_code == -32602 || e.rpc_code == -32603);
    }
}
END_TEST

START_TEST(rest_answers_as_documented)
{
    /* docs/api.md, "Calls": the status and code of each failure. */
    static const struct {
        int code, status;
        const char *rest, *label;
        bool retry;
    } want[] = {
        {GW_SERVERS_E_NO_TOOL, 404, "unknown_tool", "unknown_tool", false},
        {GW_SERVERS_E_NEED_DIALOG, 400, "dialog_required", "dialog_required", false},
        {GW_SERVERS_E_RELEASED, 409, "released", "released", false},
        {GW_SERVERS_E_LIMIT, 429, "limit_reached", "limit", true},
        {GW_SERVERS_E_SPAWN, 502, "upstream_died", "spawn_failed", false},
        {GW_MCP_E_TRANSPORT, 502, "upstream_died", "transport_down", false},
        {GW_MCP_E_RPC, 502, "upstream_error", "upstream_error", false},
        {GW_SERVERS_E_NOT_READY, 503, "server_not_ready", "not_ready", true},
        {GW_MCP_E_NOT_READY, 503, "server_not_ready", "not_ready", true},
        {GW_MCP_E_CLOSED, 503, "shutting_down", "closed", false},
        {GW_MCP_E_TIMEOUT, 504, "call_timeout", "timeout", false},
    };

    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct gw_dispatch_error e = gw_dispatch_error(want[i].code);
        ck_assert_int_eq(e.http_status, want[i].status);
        ck_assert_str_eq(e.rest_code, want[i].rest);
        ck_assert_str_eq(e.label, want[i].label);
        ck_assert_int_eq(e.retry, want[i].retry);
    }
    /* /mcp: an unknown tool is a JSON-RPC error, a failure on the way to
     * one that exists an isError result. */
    ck_assert_int_eq(gw_dispatch_error(GW_SERVERS_E_NO_TOOL).rpc_code, -32602);
    ck_assert_int_eq(gw_dispatch_error(GW_SERVERS_E_LIMIT).rpc_code, 0);
    ck_assert_int_eq(gw_dispatch_error(GW_MCP_E_RPC).rpc_code, -32603);
}
END_TEST

START_TEST(unknown_codes_are_upstream_failures)
{
    struct gw_dispatch_error e = gw_dispatch_error(UV_ECONNREFUSED);

    ck_assert_int_eq(e.http_status, 502);
    ck_assert_str_eq(e.rest_code, "upstream_error");
    ck_assert_str_eq(e.label, gw_mcp_strerror(UV_ECONNREFUSED));
    ck_assert_str_eq(gw_dispatch_error(0).label, "ok");
}
END_TEST

START_TEST(timeout_precedence)
{
    ck_assert_uint_eq(gw_dispatch_timeout(5, 6, 7, 8), 5); /* the caller's */
    ck_assert_uint_eq(gw_dispatch_timeout(0, 6, 7, 8), 6); /* the tool's policy */
    ck_assert_uint_eq(gw_dispatch_timeout(0, 0, 7, 8), 7); /* the server's */
    ck_assert_uint_eq(gw_dispatch_timeout(0, 0, 0, 8), 8); /* the gateway's */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dispatch");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, codes_unique_in_their_ranges);
    tcase_add_test(tc, every_outcome_has_a_row);
    tcase_add_test(tc, rest_answers_as_documented);
    tcase_add_test(tc, unknown_codes_are_upstream_failures);
    tcase_add_test(tc, timeout_precedence);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
