/* Unit tests of the MCP client layer, driven by an in-process fake server:
 * the send function parses and keeps every message the client sends, and
 * each test answers by feeding text to gw_mcp_client_receive(). */
#include "gw/log.h"
#include "gw/mcp_client.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

struct fake {
    json_t *sent; /* every message sent, parsed */
    int fail_send;
    int ready;
    int failed;
    int failed_code;
    char why[512];
    char version[32];
    int tools_changed;
    int notes;
    char last_note[128];
    int close_on_ready;
    int idle;
    struct gw_mcp_client *c;
    int take_requests; /* on_request takes them (else -32601, as with none) */
    int asked;         /* server requests given to on_request */
    gw_mcp_handle asked_origin;
    json_t *asked_id; /* the last one's id and params */
    json_t *asked_params;
    char asked_method[64];
};

struct got {
    int n;
    int code;
    json_t *result;
    json_t *error;
    char msg[512];
    struct gw_mcp_client *close_me; /* close this client from inside the callback */
};

static int fake_send(void *data, const char *msg, size_t len)
{
    struct fake *f = data;
    json_error_t err;
    json_t *m;

    if (f->fail_send)
        return UV_EPIPE;
    ck_assert_ptr_null(memchr(msg, '\n', len));
    m = json_loadb(msg, len, 0, &err);
    ck_assert_msg(m != NULL, "client sent invalid JSON: %s", err.text);
    json_array_append_new(f->sent, m);
    return 0;
}

static void on_ready(void *data, const char *version, json_t *info, json_t *caps)
{
    struct fake *f = data;

    f->ready++;
    snprintf(f->version, sizeof f->version, "%s", version);
    ck_assert(json_is_object(info));
    ck_assert(json_is_object(caps));
    if (f->close_on_ready)
        gw_mcp_client_close(f->c);
}

static void on_failed(void *data, int code, const char *why)
{
    struct fake *f = data;

    f->failed++;
    f->failed_code = code;
    snprintf(f->why, sizeof f->why, "%s", why);
}

static void on_idle(void *data)
{
    struct fake *f = data;

    f->idle++;
}

static void on_tools_changed(void *data)
{
    ((struct fake *)data)->tools_changed++;
}

static void on_notification(void *data, const char *method, json_t *msg)
{
    struct fake *f = data;

    f->notes++;
    snprintf(f->last_note, sizeof f->last_note, "%s", method);
    ck_assert(json_is_object(msg));
}

static int on_request(void *data, const char *method, json_t *id, json_t *params,
                      gw_mcp_handle origin)
{
    struct fake *f = data;

    if (!f->take_requests)
        return -1;
    f->asked++;
    f->asked_origin = origin;
    snprintf(f->asked_method, sizeof f->asked_method, "%s", method);
    json_decref(f->asked_id);
    json_decref(f->asked_params);
    f->asked_id = json_incref(id);
    f->asked_params = params ? json_deep_copy(params) : NULL;
    return 0;
}

static void got_cb(void *data, const struct gw_mcp_reply *r)
{
    struct got *g = data;

    g->n++;
    g->code = r->code;
    json_decref(g->result);
    json_decref(g->error);
    g->result = r->result ? json_deep_copy(r->result) : NULL;
    g->error = r->error ? json_deep_copy(r->error) : NULL;
    snprintf(g->msg, sizeof g->msg, "%s", r->message ? r->message : "");
    if (g->close_me)
        gw_mcp_client_close(g->close_me);
}

static void got_clear(struct got *g)
{
    json_decref(g->result);
    json_decref(g->error);
    memset(g, 0, sizeof *g);
}

/* The redactor the next client made takes (then NULL again). */
static struct gw_redact *next_redact;

static struct gw_mcp_client *make_era(uv_loop_t *loop, struct fake *f, json_t *config,
                                      uint64_t init_timeout_ms, enum gw_mcp_era era)
{
    struct gw_mcp_client_opts o = {
        .era = era,
        .on_request = on_request,
        .send = fake_send,
        .on_ready = on_ready,
        .on_failed = on_failed,
        .on_tools_changed = on_tools_changed,
        .on_notification = on_notification,
        .on_idle = on_idle,
        .data = f,
        .server_id = "fake",
        .config = config,
        .init_timeout_ms = init_timeout_ms,
        .redact = next_redact,
    };
    struct gw_mcp_client *c = NULL;

    next_redact = NULL;

    f->sent = json_array();
    ck_assert_int_eq(gw_mcp_client_new(loop, &o, &c), 0);
    f->c = c;
    return c;
}

/* The 2025-era tests: no probe. */
static struct gw_mcp_client *make(uv_loop_t *loop, struct fake *f, json_t *config,
                                  uint64_t init_timeout_ms)
{
    return make_era(loop, f, config, init_timeout_ms, GW_MCP_ERA_LEGACY);
}

static void feed(struct gw_mcp_client *c, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ck_assert(n > 0 && (size_t)n < sizeof buf);
    gw_mcp_client_receive(c, buf, (size_t)n);
}

static void feed_json(struct gw_mcp_client *c, json_t *m)
{
    char *s = json_dumps(m, JSON_COMPACT);

    gw_mcp_client_receive(c, s, strlen(s));
    free(s);
    json_decref(m);
}

/* The n-th (0-based) message sent with `method`, or NULL. */
static json_t *sent_nth(struct fake *f, const char *method, int n)
{
    size_t i;
    json_t *m;

    json_array_foreach(f->sent, i, m)
    {
        json_t *mm = json_object_get(m, "method");
        if (json_is_string(mm) && strcmp(json_string_value(mm), method) == 0 && n-- == 0)
            return m;
    }
    return NULL;
}

static int sent_count(struct fake *f, const char *method)
{
    int n = 0;

    while (sent_nth(f, method, n))
        n++;
    return n;
}

static json_int_t id_of(json_t *m)
{
    ck_assert_ptr_nonnull(m);
    ck_assert(json_is_integer(json_object_get(m, "id")));
    return json_integer_value(json_object_get(m, "id"));
}

static void answer(struct gw_mcp_client *c, json_int_t id, const char *result)
{
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":%s}", (long long)id, result);
}

/* Runs the handshake answering `version`; the client must be ready. */
static struct gw_mcp_client *ready_client(uv_loop_t *loop, struct fake *f)
{
    struct gw_mcp_client *c = make(loop, f, NULL, 0);
    char res[256];

    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    snprintf(res, sizeof res,
             "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{\"listChanged\":"
             "true}},\"serverInfo\":{\"name\":\"fake\",\"version\":\"1\"}}");
    answer(c, id_of(sent_nth(f, "initialize", 0)), res);
    ck_assert_int_eq(f->ready, 1);
    ck_assert_int_eq(gw_mcp_client_state(c), GW_MCP_READY);
    return c;
}

static void finish_loop(uv_loop_t *loop, struct fake *f, struct gw_mcp_client *c)
{
    if (c)
        gw_mcp_client_close(c);
    uv_run(loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(loop), 0);
    json_decref(f->sent);
    json_decref(f->asked_id);
    json_decref(f->asked_params);
}

static struct gw_mcp_client_stats stats_of(struct gw_mcp_client *c)
{
    struct gw_mcp_client_stats s;

    gw_mcp_client_stats(c, &s);
    return s;
}

START_TEST(handshake_happy)
{
    uv_loop_t loop;
    struct fake f = {0};
    json_t *config = json_pack("{s:s}", "apiKey", "k");
    struct gw_mcp_client *c;
    json_t *init, *params;

    uv_loop_init(&loop);
    c = make(&loop, &f, config, 0);
    json_decref(config);
    ck_assert_int_eq(gw_mcp_client_ping(c, 0, got_cb, NULL, NULL), GW_MCP_E_NOT_READY);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    ck_assert_int_eq(gw_mcp_client_start(c), UV_EINVAL);
    init = sent_nth(&f, "initialize", 0);
    params = json_object_get(init, "params");
    ck_assert_str_eq(json_string_value(json_object_get(init, "jsonrpc")), "2.0");
    ck_assert_str_eq(json_string_value(json_object_get(params, "protocolVersion")), "2025-11-25");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(params, "clientInfo"), "name")), "mcpgw");
    /* sampling and elicitation are declared (relayed to /mcp sessions), and
     * MCP Apps (their _meta and ui:// resources are passed on) */
    ck_assert_int_eq(json_object_size(json_object_get(params, "capabilities")), 3);
    ck_assert_str_eq(
        json_string_value(json_array_get(
            json_object_get(json_object_get(json_object_get(json_object_get(params, "capabilities"),
                                                            "extensions"),
                                            "io.modelcontextprotocol/ui"),
                            "mimeTypes"),
            0)),
        "text/html;profile=mcp-app");
    ck_assert_ptr_nonnull(json_object_get(json_object_get(params, "capabilities"), "sampling"));
    ck_assert_ptr_nonnull(json_object_get(json_object_get(params, "capabilities"), "elicitation"));
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(params, "config"), "apiKey")), "k");
    ck_assert_ptr_null(sent_nth(&f, "notifications/initialized", 0));
    answer(c, id_of(init),
           "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
           "\"serverInfo\":{\"name\":\"s\",\"version\":\"2\"}}");
    ck_assert_int_eq(f.ready, 1);
    ck_assert_str_eq(f.version, "2025-11-25");
    ck_assert_ptr_nonnull(sent_nth(&f, "notifications/initialized", 0));
    ck_assert_str_eq(gw_mcp_client_version(c), "2025-11-25");
    ck_assert_str_eq(json_string_value(json_object_get(gw_mcp_client_server_info(c), "name")), "s");
    ck_assert_ptr_nonnull(json_object_get(gw_mcp_client_capabilities(c), "tools"));
    finish_loop(&loop, &f, c);
}
END_TEST

/* Clients whose servers answered alike hold one copy of the capabilities
 * and serverInfo (a thousand leases held a thousand); one that got others
 * holds its own, and each stays readable while any holder is left. */
START_TEST(handshake_shared)
{
    uv_loop_t loop;
    struct fake fa = {0}, fb = {0}, fc = {0};
    struct gw_mcp_client *a, *b, *c;

    uv_loop_init(&loop);
    a = ready_client(&loop, &fa);
    b = ready_client(&loop, &fb);
    ck_assert_ptr_eq(gw_mcp_client_capabilities(a), gw_mcp_client_capabilities(b));
    ck_assert_ptr_eq(gw_mcp_client_server_info(a), gw_mcp_client_server_info(b));
    c = make(&loop, &fc, NULL, 0);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    answer(c, id_of(sent_nth(&fc, "initialize", 0)),
           "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"prompts\":{}},"
           "\"serverInfo\":{\"name\":\"other\",\"version\":\"1\"}}");
    ck_assert_ptr_ne(gw_mcp_client_capabilities(c), gw_mcp_client_capabilities(a));
    ck_assert_ptr_nonnull(json_object_get(gw_mcp_client_capabilities(c), "prompts"));
    gw_mcp_client_close(a);
    uv_run(&loop, UV_RUN_NOWAIT);
    ck_assert_str_eq(json_string_value(json_object_get(gw_mcp_client_server_info(b), "name")),
                     "fake");
    ck_assert_str_eq(json_string_value(json_object_get(gw_mcp_client_server_info(c), "name")),
                     "other");
    gw_mcp_client_close(c);
    finish_loop(&loop, &fb, b);
    json_decref(fa.sent);
    json_decref(fc.sent);
}
END_TEST

START_TEST(handshake_each_version)
{
    static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

    for (size_t i = 0; i < 4; i++) {
        uv_loop_t loop;
        struct fake f = {0};
        struct gw_mcp_client *c;
        char res[256];

        uv_loop_init(&loop);
        c = make(&loop, &f, NULL, 0);
        ck_assert_int_eq(gw_mcp_client_start(c), 0);
        ck_assert_ptr_null(
            json_object_get(json_object_get(sent_nth(&f, "initialize", 0), "params"), "config"));
        snprintf(res, sizeof res,
                 "{\"protocolVersion\":\"%s\",\"capabilities\":{},\"serverInfo\":{}}", versions[i]);
        answer(c, id_of(sent_nth(&f, "initialize", 0)), res);
        ck_assert_int_eq(f.ready, 1);
        ck_assert_str_eq(f.version, versions[i]);
        ck_assert_str_eq(gw_mcp_client_version(c), versions[i]);
        finish_loop(&loop, &f, c);
    }
}
END_TEST

START_TEST(handshake_unsupported_version)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = make(&loop, &f, NULL, 0);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    answer(c, id_of(sent_nth(&f, "initialize", 0)),
           "{\"protocolVersion\":\"2099-01-01\",\"capabilities\":{},\"serverInfo\":{}}");
    ck_assert_int_eq(f.ready, 0);
    ck_assert_int_eq(f.failed, 1);
    ck_assert_int_eq(f.failed_code, GW_MCP_E_PROTOCOL);
    ck_assert_ptr_nonnull(strstr(f.why, "\"2099-01-01\", which mcpgw does not support"));
    ck_assert_int_eq(gw_mcp_client_state(c), GW_MCP_FAILED);
    ck_assert_ptr_null(sent_nth(&f, "notifications/initialized", 0));
    ck_assert_ptr_null(gw_mcp_client_version(c));
    ck_assert_int_eq(gw_mcp_client_ping(c, 0, got_cb, NULL, NULL), GW_MCP_E_NOT_READY);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(handshake_error_and_bad_result)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = make(&loop, &f, NULL, 0);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32602,\"message\":\"no\"}}",
         (long long)id_of(sent_nth(&f, "initialize", 0)));
    ck_assert_int_eq(f.failed, 1);
    ck_assert_int_eq(f.failed_code, GW_MCP_E_RPC);
    ck_assert_ptr_nonnull(strstr(f.why, "-32602: no"));
    finish_loop(&loop, &f, c);

    memset(&f, 0, sizeof f);
    uv_loop_init(&loop);
    c = make(&loop, &f, NULL, 0);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    answer(c, id_of(sent_nth(&f, "initialize", 0)), "{\"capabilities\":{}}");
    ck_assert_int_eq(f.failed, 1);
    ck_assert_ptr_nonnull(strstr(f.why, "protocolVersion"));
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(handshake_timeout)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct gw_mcp_client *c;
    json_int_t id;

    uv_loop_init(&loop);
    c = make(&loop, &f, NULL, 30);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    id = id_of(sent_nth(&f, "initialize", 0));
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(f.failed, 1);
    ck_assert_int_eq(f.failed_code, GW_MCP_E_TIMEOUT);
    /* The spec forbids cancelling initialize. */
    ck_assert_ptr_null(sent_nth(&f, "notifications/cancelled", 0));
    answer(c, id, "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}");
    ck_assert_int_eq(f.ready, 0);
    ck_assert_uint_eq(stats_of(c).late, 1);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(handshake_transport_down)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = make(&loop, &f, NULL, 1000);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    gw_mcp_client_transport_down(c, "process exited with status 3");
    ck_assert_int_eq(f.failed, 1);
    ck_assert_int_eq(f.failed_code, GW_MCP_E_TRANSPORT);
    ck_assert_ptr_nonnull(strstr(f.why, "status 3"));
    ck_assert_int_eq(gw_mcp_client_state(c), GW_MCP_DOWN);
    finish_loop(&loop, &f, c);

    memset(&f, 0, sizeof f);
    uv_loop_init(&loop);
    c = make(&loop, &f, NULL, 0);
    f.fail_send = 1;
    ck_assert_int_eq(gw_mcp_client_start(c), UV_EPIPE);
    ck_assert_int_eq(f.failed, 0);
    finish_loop(&loop, &f, c);
}
END_TEST

/* Answers the n-th tools/list with `count` tools named from `first`, and a
 * nextCursor unless `last`. */
static void answer_page(struct gw_mcp_client *c, struct fake *f, int n, int first, int count,
                        int last)
{
    json_t *tools = json_array();
    json_t *res;

    for (int i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "tool_%d", first + i);
        json_array_append_new(
            tools, json_pack("{s:s, s:{s:s}}", "name", name, "inputSchema", "type", "object"));
    }
    res = json_pack("{s:o}", "tools", tools);
    if (!last) {
        char cur[32];
        snprintf(cur, sizeof cur, "c%d", n + 1);
        json_object_set_new(res, "nextCursor", json_string(cur));
    }
    feed_json(c, json_pack("{s:s, s:I, s:o}", "jsonrpc", "2.0", "id",
                           id_of(sent_nth(f, "tools/list", n)), "result", res));
}

START_TEST(pagination)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 1000, got_cb, &g, NULL), 0);
    ck_assert_ptr_null(json_object_get(sent_nth(&f, "tools/list", 0), "params"));
    answer_page(c, &f, 0, 0, 2, 0);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(sent_nth(&f, "tools/list", 1), "params"), "cursor")),
                     "c1");
    answer_page(c, &f, 1, 2, 2, 0);
    ck_assert_int_eq(g.n, 0);
    answer_page(c, &f, 2, 4, 3, 1);
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, 0);
    ck_assert_uint_eq(json_array_size(g.result), 7);
    for (size_t i = 0; i < 7; i++) {
        char name[32];
        snprintf(name, sizeof name, "tool_%zu", i);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(g.result, i), "name")),
                         name);
    }
    ck_assert_int_eq(sent_count(&f, "tools/list"), 3);
    ck_assert_int_eq(sent_count(&f, "tools/call"), 0);
    ck_assert_uint_eq(stats_of(c).in_flight, 0);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(pagination_101_pages)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 1000, got_cb, &g, NULL), 0);
    for (int i = 0; i < GW_MCP_MAX_LIST_PAGES; i++)
        answer_page(c, &f, i, i, 1, 0);
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(g.msg, "100 pages"));
    ck_assert_int_eq(sent_count(&f, "tools/list"), GW_MCP_MAX_LIST_PAGES);
    ck_assert_uint_eq(stats_of(c).in_flight, 0);
    got_clear(&g);

    /* Exactly 100 pages is fine. */
    json_array_clear(f.sent);
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 1000, got_cb, &g, NULL), 0);
    for (int i = 0; i < GW_MCP_MAX_LIST_PAGES; i++)
        answer_page(c, &f, i, i, 1, i == GW_MCP_MAX_LIST_PAGES - 1);
    ck_assert_int_eq(g.code, 0);
    ck_assert_uint_eq(json_array_size(g.result), 100);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(pagination_too_many_tools)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 0, got_cb, &g, NULL), 0);
    answer_page(c, &f, 0, 0, 10001, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(g.msg, "more than 10000 tools"));
    got_clear(&g);

    json_array_clear(f.sent);
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 0, got_cb, &g, NULL), 0);
    answer_page(c, &f, 0, 0, 5000, 0);
    answer_page(c, &f, 1, 5000, 5001, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_LIMIT);
    got_clear(&g);

    json_array_clear(f.sent);
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 0, got_cb, &g, NULL), 0);
    answer_page(c, &f, 0, 0, 5000, 0);
    answer_page(c, &f, 1, 5000, 5000, 1);
    ck_assert_int_eq(g.code, 0);
    ck_assert_uint_eq(json_array_size(g.result), 10000);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(pagination_bad_pages)
{
    static const char *const bad[] = {"{}", "{\"tools\":5}", "{\"tools\":{}}",
                                      "{\"tools\":[],\"nextCursor\":7}"};
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(gw_mcp_client_list_tools(c, 0, got_cb, &g, NULL), 0);
        answer(c, id_of(sent_nth(&f, "tools/list", (int)i)), bad[i]);
        ck_assert_int_eq(g.n, 1);
        ck_assert_int_eq(g.code, GW_MCP_E_PROTOCOL);
        got_clear(&g);
    }
    /* A result that is not an object at all. */
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 0, got_cb, &g, NULL), 0);
    answer(c, id_of(sent_nth(&f, "tools/list", 4)), "[1]");
    ck_assert_int_eq(g.code, GW_MCP_E_PROTOCOL);
    got_clear(&g);
    /* An empty or null nextCursor ends the list. */
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 0, got_cb, &g, NULL), 0);
    answer(c, id_of(sent_nth(&f, "tools/list", 5)), "{\"tools\":[{}],\"nextCursor\":\"\"}");
    ck_assert_int_eq(g.code, 0);
    ck_assert_uint_eq(json_array_size(g.result), 1);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

#define NCALLS 64

START_TEST(concurrent_out_of_order)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g[NCALLS] = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    for (int i = 0; i < NCALLS; i++) {
        json_t *args = json_pack("{s:i}", "n", i);
        ck_assert_int_eq(gw_mcp_client_call_tool(c, "echo", args, NULL, 5000, got_cb, &g[i], NULL,
                                                 GW_MCP_CAPS_ALL),
                         0);
        json_decref(args);
    }
    ck_assert_uint_eq(stats_of(c).in_flight, NCALLS);
    /* Answer odd ones backwards, then even ones backwards, each echoing n. */
    for (int pass = 1; pass >= 0; pass--) {
        for (int i = NCALLS - 1; i >= 0; i--) {
            json_t *m = sent_nth(&f, "tools/call", i);
            json_int_t n = json_integer_value(
                json_object_get(json_object_get(json_object_get(m, "params"), "arguments"), "n"));
            char res[128];
            if (i % 2 != pass)
                continue;
            snprintf(res, sizeof res, "{\"content\":[{\"type\":\"text\",\"text\":\"%lld\"}]}",
                     (long long)n);
            answer(c, id_of(m), res);
        }
    }
    for (int i = 0; i < NCALLS; i++) {
        char want[16];
        snprintf(want, sizeof want, "%d", i);
        ck_assert_int_eq(g[i].n, 1);
        ck_assert_int_eq(g[i].code, 0);
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_array_get(json_object_get(g[i].result, "content"), 0), "text")),
                         want);
        got_clear(&g[i]);
    }
    /* Every id distinct. */
    for (int i = 0; i < NCALLS; i++)
        for (int j = i + 1; j < NCALLS; j++)
            ck_assert(id_of(sent_nth(&f, "tools/call", i)) != id_of(sent_nth(&f, "tools/call", j)));
    ck_assert_uint_eq(stats_of(c).in_flight, 0);
    finish_loop(&loop, &f, c);
}
END_TEST

/* Draining waits for the owner's calls only: a list or the handshake in
 * flight does not hold it, and the owner hears of the last call's end
 * after that call's own callback. */
START_TEST(idle_after_last_call)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got call = {0}, req = {0}, list = {0}, cancelled = {0};
    struct gw_mcp_client *c;
    gw_mcp_handle h;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(f.idle, 0);
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 5000, got_cb, &list, NULL), 0);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "echo", NULL, NULL, 5000, got_cb, &call, NULL, GW_MCP_CAPS_ALL),
        0);
    ck_assert_int_eq(
        gw_mcp_client_request(c, "prompts/get", NULL, 5000, got_cb, &req, NULL, GW_MCP_CAPS_ALL),
        0);
    ck_assert_uint_eq(gw_mcp_client_calls_in_flight(c), 2);
    ck_assert_uint_eq(stats_of(c).in_flight, 3);
    ck_assert_uint_eq(stats_of(c).tool_calls, 1);
    answer(c, id_of(sent_nth(&f, "prompts/get", 0)), "{\"messages\":[]}");
    ck_assert_int_eq(req.n, 1);
    ck_assert_int_eq(f.idle, 0);
    answer(c, id_of(sent_nth(&f, "tools/call", 0)), "{\"content\":[]}");
    ck_assert_int_eq(call.n, 1);
    ck_assert_int_eq(f.idle, 1);
    ck_assert_uint_eq(gw_mcp_client_calls_in_flight(c), 0);
    answer(c, id_of(sent_nth(&f, "tools/list", 0)), "{\"tools\":[]}");
    ck_assert_int_eq(list.n, 1);
    ck_assert_int_eq(f.idle, 1);
    /* A call that could not be sent was never in flight. */
    f.fail_send = 1;
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "echo", NULL, NULL, 5000, got_cb, &call, NULL, GW_MCP_CAPS_ALL),
        UV_EPIPE);
    f.fail_send = 0;
    ck_assert_uint_eq(gw_mcp_client_calls_in_flight(c), 0);
    ck_assert_uint_eq(stats_of(c).tool_calls, 1);
    ck_assert_int_eq(f.idle, 1);
    ck_assert_int_eq(gw_mcp_client_call_tool(c, "echo", NULL, NULL, 5000, got_cb, &cancelled, &h,
                                             GW_MCP_CAPS_ALL),
                     0);
    ck_assert_int_eq(gw_mcp_client_cancel(c, h, NULL), 0);
    ck_assert_int_eq(cancelled.code, GW_MCP_E_CANCELLED);
    ck_assert_int_eq(f.idle, 2);
    got_clear(&call);
    got_clear(&req);
    got_clear(&list);
    got_clear(&cancelled);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(call_tool_params)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;
    json_t *tok = json_string("p1");
    json_t *params;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "add", NULL, tok, 0, got_cb, &g, NULL, GW_MCP_CAPS_ALL), 0);
    params = json_object_get(sent_nth(&f, "tools/call", 0), "params");
    ck_assert_str_eq(json_string_value(json_object_get(params, "name")), "add");
    ck_assert(json_is_object(json_object_get(params, "arguments")));
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(params, "_meta"), "progressToken")),
        "p1");
    json_decref(tok);
    tok = json_real(1.5);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "add", NULL, tok, 0, got_cb, &g, NULL, GW_MCP_CAPS_ALL),
        UV_EINVAL);
    json_decref(tok);
    feed(c,
         "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32602,\"message\":\"bad "
         "args\",\"data\":1}}",
         (long long)id_of(sent_nth(&f, "tools/call", 0)));
    ck_assert_int_eq(g.code, GW_MCP_E_RPC);
    ck_assert_int_eq(json_integer_value(json_object_get(g.error, "code")), -32602);
    ck_assert_ptr_nonnull(strstr(g.msg, "bad args"));
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

/* A server's JSON-RPC error quoting its secrets reaches the caller masked
 * (security.md P6): the message, the sentence built from it, every string
 * and member name of data at any depth up to the bound (deeper: replaced
 * whole), other members too; code, member names and types unchanged. */
START_TEST(rpc_error_secrets_masked)
{
    static const char secret[] = "sk-unit-5ecret-1234";
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;
    json_t *m, *data, *inner;
    char *text;

    uv_loop_init(&loop);
    next_redact = gw_redact_new();
    gw_redact_add(next_redact, secret);
    c = ready_client(&loop, &f);

    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "echo", NULL, NULL, 0, got_cb, &g, NULL, GW_MCP_CAPS_ALL), 0);
    inner = json_pack("[s]", secret);
    for (int i = 0; i < 40; i++)
        inner = json_pack("[o]", inner);
    data = json_pack("{s:s, s:[i, {s:s}], s:i, s:b, s:n, s:o}", "k", secret, secret, 1, "deep",
                     "x sk-unit-5ecret-1234 y", "n", 5, "b", 1, "z", "nest", inner);
    m = json_pack("{s:s, s:I, s:{s:i, s:s, s:o, s:s}}", "jsonrpc", "2.0", "id",
                  id_of(sent_nth(&f, "tools/call", 0)), "error", "code", -32003, "message",
                  "invalid key sk-unit-5ecret-1234", "data", data, "extra", secret);
    feed_json(c, m);
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_RPC);
    ck_assert_str_eq(g.msg, "the server answered tools/call with error -32003: invalid key ***");
    ck_assert_int_eq(json_integer_value(json_object_get(g.error, "code")), -32003);
    ck_assert_str_eq(json_string_value(json_object_get(g.error, "message")), "invalid key ***");
    ck_assert_str_eq(json_string_value(json_object_get(g.error, "extra")), "***");
    data = json_object_get(g.error, "data");
    ck_assert_str_eq(json_string_value(json_object_get(data, "k")), "***");
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(data, "***"), 0)), 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(json_object_get(data, "***"), 1), "deep")),
        "x *** y");
    ck_assert_int_eq(json_integer_value(json_object_get(data, "n")), 5);
    ck_assert(json_is_true(json_object_get(data, "b")));
    ck_assert(json_is_null(json_object_get(data, "z")));
    /* 41 arrays deep: the 31st below data holds "***" for the rest */
    inner = json_object_get(data, "nest");
    for (int i = 0; i < 31; i++) {
        ck_assert(json_is_array(inner));
        inner = json_array_get(inner, 0);
    }
    ck_assert_str_eq(json_string_value(inner), "***");
    text = json_dumps(g.error, JSON_COMPACT);
    ck_assert_ptr_null(strstr(text, "5ecret"));
    free(text);

    /* an error quoting nothing comes as the server sent it */
    got_clear(&g);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "echo", NULL, NULL, 0, got_cb, &g, NULL, GW_MCP_CAPS_ALL), 0);
    feed(c,
         "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32602,\"message\":\"bad "
         "args\",\"data\":{\"a\":[\"b\",1.5]}}}",
         (long long)id_of(sent_nth(&f, "tools/call", 1)));
    ck_assert_int_eq(g.code, GW_MCP_E_RPC);
    text = json_dumps(g.error, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(text,
                     "{\"code\":-32602,\"data\":{\"a\":[\"b\",1.5]},\"message\":\"bad args\"}");
    free(text);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(timeout_cancels_and_drops_late)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;
    gw_mcp_handle h = 0;
    json_t *cancel;
    json_int_t id;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "sleep", NULL, NULL, 20, got_cb, &g, &h, GW_MCP_CAPS_ALL), 0);
    id = id_of(sent_nth(&f, "tools/call", 0));
    ck_assert_uint_eq(h, (gw_mcp_handle)id);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_TIMEOUT);
    cancel = sent_nth(&f, "notifications/cancelled", 0);
    ck_assert_ptr_nonnull(cancel);
    ck_assert_ptr_null(json_object_get(cancel, "id"));
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(cancel, "params"), "requestId")), id);
    ck_assert(json_is_string(json_object_get(json_object_get(cancel, "params"), "reason")));
    answer(c, id, "{\"content\":[]}");
    ck_assert_int_eq(g.n, 1);
    ck_assert_uint_eq(stats_of(c).late, 1);
    ck_assert_uint_eq(stats_of(c).unknown_ids, 0);
    ck_assert_int_eq(gw_mcp_client_cancel(c, h, "x"), UV_ENOENT);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

/* One timer watches every deadline: requests time out in deadline order
 * whatever their send order, an answered one never does, and the loop runs
 * dry once none is left. */
START_TEST(deadlines_in_order)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g[4] = {0};
    struct gw_mcp_client *c;
    static const uint64_t ms[4] = {90, 30, 60, 40};
    json_int_t id[4];
    uint64_t t0;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(gw_mcp_client_ping(c, ms[i], got_cb, &g[i], NULL), 0);
        id[i] = id_of(sent_nth(&f, "ping", i));
    }
    answer(c, id[3], "{}");
    ck_assert_int_eq(g[3].n, 1);
    ck_assert_int_eq(g[3].code, 0);
    t0 = uv_now(&loop);
    while (g[1].n == 0)
        uv_run(&loop, UV_RUN_ONCE);
    ck_assert_int_eq(g[1].code, GW_MCP_E_TIMEOUT);
    ck_assert_int_eq(g[0].n + g[2].n, 0);
    while (g[2].n == 0)
        uv_run(&loop, UV_RUN_ONCE);
    ck_assert_int_eq(g[0].n, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(g[0].code, GW_MCP_E_TIMEOUT);
    ck_assert_uint_ge(uv_now(&loop) - t0, 85);
    ck_assert_uint_eq(stats_of(c).unknown_ids, 0);
    for (int i = 0; i < 4; i++)
        got_clear(&g[i]);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(cancel_api)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0}, g2 = {0};
    struct gw_mcp_client *c;
    gw_mcp_handle h = 0, hl = 0;
    json_t *params;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "sleep", NULL, NULL, 5000, got_cb, &g, &h, GW_MCP_CAPS_ALL), 0);
    ck_assert_int_eq(gw_mcp_client_cancel(c, h, "user asked"), 0);
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_CANCELLED);
    params = json_object_get(sent_nth(&f, "notifications/cancelled", 0), "params");
    ck_assert_int_eq(json_integer_value(json_object_get(params, "requestId")), (json_int_t)h);
    ck_assert_str_eq(json_string_value(json_object_get(params, "reason")), "user asked");
    ck_assert_int_eq(gw_mcp_client_cancel(c, h, NULL), UV_ENOENT);
    answer(c, (json_int_t)h, "{}");
    ck_assert_int_eq(g.n, 1);
    ck_assert_uint_eq(stats_of(c).late, 1);

    /* A list cancelled on its second page: one handle covers every page. */
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 5000, got_cb, &g2, &hl), 0);
    answer_page(c, &f, 0, 0, 1, 0);
    ck_assert_int_eq(gw_mcp_client_cancel(c, hl, NULL), 0);
    ck_assert_int_eq(g2.n, 1);
    ck_assert_int_eq(g2.code, GW_MCP_E_CANCELLED);
    params = json_object_get(sent_nth(&f, "notifications/cancelled", 1), "params");
    ck_assert_int_eq(json_integer_value(json_object_get(params, "requestId")),
                     id_of(sent_nth(&f, "tools/list", 1)));
    ck_assert_ptr_null(json_object_get(params, "reason"));
    ck_assert_uint_eq(stats_of(c).in_flight, 0);
    got_clear(&g);
    got_clear(&g2);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(not_run_fails_that_request_only)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got a = {0}, b = {0}, l = {0};
    struct gw_mcp_client *c;
    gw_mcp_handle ha = 0, hb = 0;
    json_t *id;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "a", NULL, NULL, 5000, got_cb, &a, &ha, GW_MCP_CAPS_ALL), 0);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "b", NULL, NULL, 5000, got_cb, &b, &hb, GW_MCP_CAPS_ALL), 0);
    id = json_integer((json_int_t)ha);
    gw_mcp_client_not_run(c, id, "the session is gone");
    ck_assert_int_eq(a.n, 1);
    ck_assert_int_eq(a.code, GW_MCP_E_NOT_RUN);
    ck_assert_str_eq(a.msg, "the session is gone");
    ck_assert_int_eq(b.n, 0);
    gw_mcp_client_not_run(c, id, "again"); /* already failed: ignored */
    json_decref(id);
    id = json_string("1");
    gw_mcp_client_not_run(c, id, "not one of ours");
    json_decref(id);
    ck_assert_int_eq(a.n, 1);
    ck_assert_int_eq(b.n, 0);
    ck_assert_str_eq(gw_mcp_strerror(GW_MCP_E_NOT_RUN), "not_run");
    answer(c, (json_int_t)hb, "{\"content\":[]}");
    ck_assert_int_eq(b.n, 1);
    ck_assert_int_eq(b.code, 0);

    /* A page of a list refused unrun fails the whole list. */
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 5000, got_cb, &l, NULL), 0);
    answer_page(c, &f, 0, 0, 1, 0);
    id = json_integer(id_of(sent_nth(&f, "tools/list", 1)));
    gw_mcp_client_not_run(c, id, "gone");
    json_decref(id);
    ck_assert_int_eq(l.n, 1);
    ck_assert_int_eq(l.code, GW_MCP_E_NOT_RUN);
    ck_assert_uint_eq(stats_of(c).in_flight, 0);
    got_clear(&a);
    got_clear(&b);
    got_clear(&l);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(unknown_and_duplicate_ids)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;
    json_int_t id;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    ck_assert_int_eq(gw_mcp_client_ping(c, 0, got_cb, &g, NULL), 0);
    id = id_of(sent_nth(&f, "ping", 0));
    answer(c, 999999, "{}");
    answer(c, -1, "{}");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":\"%lld\",\"result\":{}}", (long long)id);
    ck_assert_uint_eq(stats_of(c).unknown_ids, 3);
    ck_assert_int_eq(g.n, 0);
    answer(c, id, "{}");
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, 0);
    answer(c, id, "{}");
    ck_assert_int_eq(g.n, 1);
    ck_assert_uint_eq(stats_of(c).duplicate_ids, 1);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(garbage_counted)
{
    static const char *const not_json[] = {"hello", "{\"jsonrpc\":", "\x01\x02\xff", "{} trailing"};
    static const char *const bad[] = {
        "42",
        "\"str\"",
        "[]",
        "[1]",
        "{}",
        "{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}",
        "{\"id\":1,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":true,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse\"}}",
        "{\"jsonrpc\":\"2.0\",\"method\":5}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":\"x\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
    };
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;
    struct gw_mcp_client_stats s;
    char big[3000];

    gw_log_set_level(GW_LOG_DEBUG);
    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    for (size_t i = 0; i < 4; i++)
        gw_mcp_client_receive(c, not_json[i], strlen(not_json[i]));
    gw_mcp_client_receive(c, "{\"a\":\"\0\"}", 9); /* embedded NUL */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        gw_mcp_client_receive(c, bad[i], strlen(bad[i]));
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    gw_mcp_client_receive(c, big, strlen(big));
    s = stats_of(c);
    ck_assert_uint_eq(s.non_json, 6);
    ck_assert_uint_eq(s.bad_shape, sizeof bad / sizeof bad[0]);
    ck_assert(s.log_suppressed > 0);
    /* A live request answered with both result and error fails, once. */
    ck_assert_int_eq(gw_mcp_client_ping(c, 0, got_cb, &g, NULL), 0);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{},\"error\":{}}",
         (long long)id_of(sent_nth(&f, "ping", 0)));
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_PROTOCOL);
    got_clear(&g);
    ck_assert_int_eq(gw_mcp_client_state(c), GW_MCP_READY);
    gw_log_set_level(GW_LOG_ERROR);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(server_requests_answered)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct gw_mcp_client *c;
    json_t *m;
    size_t before;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    before = json_array_size(f.sent);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\","
            "\"params\":{}}");
    m = json_array_get(f.sent, before);
    ck_assert_str_eq(json_string_value(json_object_get(m, "id")), "s1");
    ck_assert_ptr_null(json_object_get(m, "result"));
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
                     -32601);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(json_object_get(m, "error"), "message")),
               "sampling/createMessage"));
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
    m = json_array_get(f.sent, before + 1);
    ck_assert_int_eq(json_integer_value(json_object_get(m, "id")), 7);
    ck_assert(json_is_object(json_object_get(m, "result")));
    ck_assert_int_eq(json_object_size(json_object_get(m, "result")), 0);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"roots/list\"}");
    m = json_array_get(f.sent, before + 2);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
                     -32601);
    ck_assert_uint_eq(stats_of(c).server_requests, 3);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(notifications_and_batch)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;
    size_t before;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    feed(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
    ck_assert_int_eq(f.tools_changed, 1);
    feed(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
            "{\"progressToken\":\"p\",\"progress\":1}}");
    ck_assert_int_eq(f.notes, 1);
    ck_assert_str_eq(f.last_note, "notifications/progress");
    feed(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
    ck_assert_uint_eq(stats_of(c).unknown_notifications, 1);
    ck_assert_uint_eq(stats_of(c).notifications, 3);

    /* A 2025-03-26 batch: a response, a notification and a request. */
    ck_assert_int_eq(gw_mcp_client_ping(c, 0, got_cb, &g, NULL), 0);
    before = json_array_size(f.sent);
    feed(c,
         "[{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}},"
         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"},"
         "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"ping\"}]",
         (long long)id_of(sent_nth(&f, "ping", 0)));
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, 0);
    ck_assert_int_eq(f.tools_changed, 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(f.sent, before), "id")), "q");
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(transport_down_fails_all)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g[5] = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(gw_mcp_client_call_tool(c, "echo", NULL, NULL, i ? 5000 : 0, got_cb, &g[i],
                                                 NULL, GW_MCP_CAPS_ALL),
                         0);
    ck_assert_int_eq(gw_mcp_client_list_tools(c, 5000, got_cb, &g[4], NULL), 0);
    gw_mcp_client_transport_down(c, "exit status 3");
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(g[i].n, 1);
        ck_assert_int_eq(g[i].code, GW_MCP_E_TRANSPORT);
        ck_assert_ptr_nonnull(strstr(g[i].msg, "exit status 3"));
        got_clear(&g[i]);
    }
    ck_assert_int_eq(gw_mcp_client_state(c), GW_MCP_DOWN);
    ck_assert_int_eq(gw_mcp_client_ping(c, 0, got_cb, &g[0], NULL), GW_MCP_E_TRANSPORT);
    ck_assert_str_eq(gw_mcp_client_version(c), "2025-11-25");
    /* A late answer after the transport died is harmless. */
    answer(c, id_of(sent_nth(&f, "tools/call", 0)), "{}");
    ck_assert_int_eq(g[0].n, 0);
    /* A send failure is returned, and no callback fires. */
    finish_loop(&loop, &f, c);

    memset(&f, 0, sizeof f);
    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    f.fail_send = 1;
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "echo", NULL, NULL, 100, got_cb, &g[0], NULL, GW_MCP_CAPS_ALL),
        UV_EPIPE);
    ck_assert_uint_eq(stats_of(c).in_flight, 0);
    ck_assert_int_eq(g[0].n, 0);
    finish_loop(&loop, &f, c);
}
END_TEST

/* The in-flight table starts small and grows: 1,000 requests in flight,
 * answered in an order unlike the one they were sent in, each reach their
 * own callback; a cancelled one's late answer is known as late. */
START_TEST(many_in_flight)
{
    enum { N = 1000 };
    uv_loop_t loop;
    struct fake f = {0};
    static struct got g[N];
    struct gw_mcp_client *c;
    gw_mcp_handle h[N];
    char res[64];

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(gw_mcp_client_call_tool(c, "echo", NULL, NULL, i % 2 ? 5000 : 0, got_cb,
                                                 &g[i], &h[i], GW_MCP_CAPS_ALL),
                         0);
    ck_assert_uint_eq(stats_of(c).in_flight, N);
    ck_assert_int_eq(gw_mcp_client_cancel(c, h[7], NULL), 0);
    for (int k = 0; k < N; k++) {
        int i = (k * 7 + 3) % N; /* 7 and N are coprime: every request once */
        snprintf(res, sizeof res, "{\"n\":%d}", i);
        answer(c, id_of(sent_nth(&f, "tools/call", i)), res);
    }
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(g[i].n, 1);
        if (i == 7) {
            ck_assert_int_eq(g[i].code, GW_MCP_E_CANCELLED);
        } else {
            ck_assert_int_eq(g[i].code, 0);
            ck_assert_int_eq(json_integer_value(json_object_get(g[i].result, "n")), i);
        }
        got_clear(&g[i]);
    }
    ck_assert_uint_eq(stats_of(c).in_flight, 0);
    ck_assert_uint_eq(stats_of(c).late, 1);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(close_inside_callback)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g[3] = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(gw_mcp_client_call_tool(c, "echo", NULL, NULL, 5000, got_cb, &g[i], NULL,
                                                 GW_MCP_CAPS_ALL),
                         0);
    g[0].close_me = c;
    /* A batch: the first answer closes the client; the rest must be ignored. */
    feed(c,
         "[{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}},"
         "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}]",
         (long long)id_of(sent_nth(&f, "tools/call", 0)),
         (long long)id_of(sent_nth(&f, "tools/call", 1)));
    ck_assert_int_eq(g[0].n, 1);
    ck_assert_int_eq(g[0].code, 0);
    ck_assert_int_eq(g[1].n, 1);
    ck_assert_int_eq(g[1].code, GW_MCP_E_CLOSED);
    ck_assert_int_eq(g[2].n, 1);
    ck_assert_int_eq(g[2].code, GW_MCP_E_CLOSED);
    for (int i = 0; i < 3; i++)
        got_clear(&g[i]);
    finish_loop(&loop, &f, NULL);

    /* Close from on_ready. */
    memset(&f, 0, sizeof f);
    uv_loop_init(&loop);
    f.close_on_ready = 1;
    c = make(&loop, &f, NULL, 1000);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    answer(c, id_of(sent_nth(&f, "initialize", 0)),
           "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}");
    ck_assert_int_eq(f.ready, 1);
    finish_loop(&loop, &f, NULL);

    /* Close from inside a timeout callback, with other timers pending. */
    memset(&f, 0, sizeof f);
    uv_loop_init(&loop);
    c = ready_client(&loop, &f);
    g[0].close_me = c;
    ck_assert_int_eq(gw_mcp_client_ping(c, 10, got_cb, &g[0], NULL), 0);
    ck_assert_int_eq(gw_mcp_client_ping(c, 60000, got_cb, &g[1], NULL), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(g[0].code, GW_MCP_E_TIMEOUT);
    ck_assert_int_eq(g[1].code, GW_MCP_E_CLOSED);
    got_clear(&g[0]);
    got_clear(&g[1]);
    finish_loop(&loop, &f, NULL);
}
END_TEST

/* ---- 2026-07-28 ---- */

static const char *meta_str(json_t *m, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(m, "params"), "_meta"), key));
}

static struct gw_mcp_client *modern_client(uv_loop_t *loop, struct fake *f)
{
    struct gw_mcp_client *c;

    f->take_requests = 1;
    c = make_era(loop, f, NULL, 0, GW_MCP_ERA_MODERN);

    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    ck_assert_int_eq(sent_count(f, "initialize"), 0);
    answer(c, id_of(sent_nth(f, "server/discover", 0)),
           "{\"resultType\":\"complete\",\"supportedVersions\":[\"2026-07-28\"],"
           "\"capabilities\":{\"tools\":{\"listChanged\":true},\"prompts\":{}},"
           "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"m\",\"version\":\"1\"}},"
           "\"ttlMs\":0,\"cacheScope\":\"public\"}");
    ck_assert_int_eq(f->ready, 1);
    return c;
}

START_TEST(modern_handshake_envelope_listen)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;
    json_t *disc, *listen, *call, *caps;

    uv_loop_init(&loop);
    c = modern_client(&loop, &f);
    disc = sent_nth(&f, "server/discover", 0);
    ck_assert_str_eq(meta_str(disc, "io.modelcontextprotocol/protocolVersion"), "2026-07-28");
    ck_assert_str_eq(f.version, "2026-07-28");
    ck_assert_int_eq(gw_mcp_client_era(c), GW_MCP_ERA_MODERN);
    ck_assert_str_eq(json_string_value(json_object_get(gw_mcp_client_server_info(c), "name")), "m");
    /* listen asks for what the server offers: tools' list_changed only */
    listen = json_object_get(json_object_get(sent_nth(&f, "subscriptions/listen", 0), "params"),
                             "notifications");
    ck_assert(json_is_true(json_object_get(listen, "toolsListChanged")));
    ck_assert_int_eq(json_object_size(listen), 1);
    feed(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":"
            "{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":1}}}");
    ck_assert_int_eq(f.tools_changed, 1);
    /* every request carries the envelope, next to its own _meta */
    json_t *tok = json_integer(7);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "t", NULL, tok, 0, got_cb, &g, NULL, GW_MCP_CAPS_ALL), 0);
    json_decref(tok);
    call = sent_nth(&f, "tools/call", 0);
    ck_assert_str_eq(meta_str(call, "io.modelcontextprotocol/protocolVersion"), "2026-07-28");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(json_object_get(call, "params"), "_meta"),
                                         "io.modelcontextprotocol/clientInfo"),
                         "name")),
                     "mcpgw");
    caps = json_object_get(json_object_get(json_object_get(call, "params"), "_meta"),
                           "io.modelcontextprotocol/clientCapabilities");
    ck_assert(json_is_object(json_object_get(caps, "elicitation")));
    ck_assert_int_eq(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(call, "params"), "_meta"), "progressToken")),
        7);
    /* a caller that can answer only elicitation: only that is declared */
    ck_assert_int_eq(
        gw_mcp_client_request(c, "prompts/get", NULL, 0, got_cb, &g, NULL, GW_MCP_CAP_ELICITATION),
        0);
    caps = json_object_get(
        json_object_get(json_object_get(sent_nth(&f, "prompts/get", 0), "params"), "_meta"),
        "io.modelcontextprotocol/clientCapabilities");
    ck_assert(json_is_object(json_object_get(caps, "elicitation")));
    ck_assert_ptr_null(json_object_get(caps, "sampling"));
    ck_assert_ptr_null(json_object_get(caps, "roots"));
    ck_assert_ptr_null(
        meta_str(sent_nth(&f, "prompts/get", 0), "io.modelcontextprotocol/logLevel"));
    /* with the caller's log level, the request asks for log messages at it */
    ck_assert_int_eq(gw_mcp_client_request(c, "prompts/get", NULL, 0, got_cb, &g, NULL,
                                           GW_MCP_CAPS_ALL | gw_mcp_log_bits("warning")),
                     0);
    ck_assert_str_eq(meta_str(sent_nth(&f, "prompts/get", 1), "io.modelcontextprotocol/logLevel"),
                     "warning");
    ck_assert_uint_eq(gw_mcp_log_bits("loud"), 0);
    ck_assert_uint_eq(gw_mcp_log_bits(NULL), 0);
    answer(c, id_of(sent_nth(&f, "prompts/get", 1)), "{\"messages\":[]}");
    got_clear(&g);
    answer(c, id_of(sent_nth(&f, "prompts/get", 0)), "{\"messages\":[]}");
    got_clear(&g);
    /* an absent resultType is complete */
    answer(c, id_of(call), "{\"content\":[]}");
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, 0);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(auto_probe_falls_back)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = make_era(&loop, &f, NULL, 0, GW_MCP_ERA_AUTO);
    ck_assert_int_eq(gw_mcp_client_start(c), 0);
    ck_assert(gw_mcp_client_probing(c));
    /* -32022 naming 2026-07-28: once more; then any error: initialize */
    feed(c,
         "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32022,\"message\":\"v\","
         "\"data\":{\"supported\":[\"2026-07-28\"],\"requested\":\"x\"}}}",
         (long long)id_of(sent_nth(&f, "server/discover", 0)));
    ck_assert_int_eq(sent_count(&f, "server/discover"), 2);
    ck_assert_int_eq(sent_count(&f, "initialize"), 0);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"no\"}}",
         (long long)id_of(sent_nth(&f, "server/discover", 1)));
    ck_assert(!gw_mcp_client_probing(c));
    ck_assert_int_eq(gw_mcp_client_era(c), GW_MCP_ERA_AUTO);
    answer(
        c, id_of(sent_nth(&f, "initialize", 0)),
        "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"o\"}}");
    ck_assert_int_eq(f.ready, 1);
    ck_assert_int_eq(f.failed, 0);
    ck_assert_str_eq(f.version, "2025-11-25");
    ck_assert_int_eq(gw_mcp_client_era(c), GW_MCP_ERA_LEGACY);
    ck_assert_int_eq(sent_count(&f, "notifications/initialized"), 1);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(input_required_rounds)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;
    json_t *args = json_pack("{s:i}", "x", 1), *first, *retry, *rp, *ok;
    gw_mcp_handle h = 0;

    uv_loop_init(&loop);
    c = modern_client(&loop, &f);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "t", args, NULL, 0, got_cb, &g, &h, GW_MCP_CAPS_ALL), 0);
    first = sent_nth(&f, "tools/call", 0);
    answer(c, id_of(first),
           "{\"resultType\":\"input_required\",\"requestState\":\"S1\",\"inputRequests\":"
           "{\"who\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"name?\"}}}}");
    /* the owner is asked, under an id of the client's, with the key */
    ck_assert_int_eq(g.n, 0);
    ck_assert_int_eq(f.asked, 1);
    ck_assert_str_eq(f.asked_method, "elicitation/create");
    ck_assert(json_is_string(f.asked_id));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(f.asked_params, "_meta"),
                                                       GW_MCP_META_INPUT_KEY)),
                     "who");
    ok = json_pack("{s:s, s:{s:s}}", "action", "accept", "content", "name", "Ada");
    /* named by the call that asked; an answer under the server's id space
     * (origin 0) is the server's, not the round's */
    ck_assert_uint_eq(f.asked_origin, h);
    ck_assert_int_eq(gw_mcp_client_respond(c, f.asked_id, 0, ok, NULL), 0);
    ck_assert_int_eq(sent_count(&f, "tools/call"), 1);
    ck_assert_int_eq(gw_mcp_client_respond(c, f.asked_id, f.asked_origin, ok, NULL), 0);
    json_decref(ok);
    /* the retry: a new id, the same call, the answers and the state */
    retry = sent_nth(&f, "tools/call", 1);
    ck_assert_int_ne(id_of(retry), id_of(first));
    rp = json_object_get(retry, "params");
    ck_assert_str_eq(json_string_value(json_object_get(rp, "name")), "t");
    ck_assert(json_equal(json_object_get(rp, "arguments"), args));
    ck_assert_str_eq(json_string_value(json_object_get(rp, "requestState")), "S1");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(rp, "inputResponses"), "who"), "action")),
                     "accept");
    ck_assert_str_eq(meta_str(retry, "io.modelcontextprotocol/protocolVersion"), "2026-07-28");
    /* a round with only a state is retried at once, without inputResponses */
    answer(c, id_of(retry), "{\"resultType\":\"input_required\",\"requestState\":\"S2\"}");
    rp = json_object_get(sent_nth(&f, "tools/call", 2), "params");
    ck_assert_str_eq(json_string_value(json_object_get(rp, "requestState")), "S2");
    ck_assert_ptr_null(json_object_get(rp, "inputResponses"));
    answer(c, id_of(sent_nth(&f, "tools/call", 2)),
           "{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"hi Ada\"}]}");
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, 0);
    got_clear(&g);

    /* refused input fails the call with the refusal; cancel while asking */
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "t", args, NULL, 0, got_cb, &g, &h, GW_MCP_CAPS_ALL), 0);
    answer(c, id_of(sent_nth(&f, "tools/call", 3)),
           "{\"resultType\":\"input_required\",\"inputRequests\":{\"k\":{\"method\":"
           "\"sampling/createMessage\",\"params\":{}}}}");
    json_t *no = json_pack("{s:i, s:s}", "code", -32601, "message", "no client for it");
    ck_assert_int_eq(gw_mcp_client_respond(c, f.asked_id, f.asked_origin, NULL, no), 0);
    json_decref(no);
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_RPC);
    ck_assert_int_eq(json_integer_value(json_object_get(g.error, "code")), -32601);
    got_clear(&g);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "t", args, NULL, 0, got_cb, &g, &h, GW_MCP_CAPS_ALL), 0);
    answer(c, id_of(sent_nth(&f, "tools/call", 4)),
           "{\"resultType\":\"input_required\",\"inputRequests\":{\"k\":{\"method\":"
           "\"elicitation/create\",\"params\":{}}}}");
    ck_assert_int_eq(gw_mcp_client_cancel(c, h, "caller left"), 0);
    ck_assert_int_eq(g.code, GW_MCP_E_CANCELLED);
    /* the answer that comes after is dropped */
    ok = json_pack("{s:s}", "action", "decline");
    ck_assert_int_eq(gw_mcp_client_respond(c, f.asked_id, f.asked_origin, ok, NULL), 0);
    json_decref(ok);
    ck_assert_int_eq(sent_count(&f, "tools/call"), 5);
    got_clear(&g);

    /* a resultType neither complete nor input_required is malformed */
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "t", args, NULL, 0, got_cb, &g, &h, GW_MCP_CAPS_ALL), 0);
    answer(c, id_of(sent_nth(&f, "tools/call", 5)), "{\"resultType\":\"bogus\",\"content\":[]}");
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_PROTOCOL);
    got_clear(&g);
    json_decref(args);
    finish_loop(&loop, &f, c);
}
END_TEST

START_TEST(input_rounds_capped)
{
    uv_loop_t loop;
    struct fake f = {0};
    struct got g = {0};
    struct gw_mcp_client *c;

    uv_loop_init(&loop);
    c = modern_client(&loop, &f);
    ck_assert_int_eq(
        gw_mcp_client_call_tool(c, "t", NULL, NULL, 0, got_cb, &g, NULL, GW_MCP_CAPS_ALL), 0);
    for (int i = 0; i <= GW_MCP_MAX_INPUT_ROUNDS && g.n == 0; i++)
        answer(c, id_of(sent_nth(&f, "tools/call", i)),
               "{\"resultType\":\"input_required\",\"requestState\":\"again\"}");
    ck_assert_int_eq(g.n, 1);
    ck_assert_int_eq(g.code, GW_MCP_E_PROTOCOL);
    ck_assert_int_eq(sent_count(&f, "tools/call"), GW_MCP_MAX_INPUT_ROUNDS + 1);
    got_clear(&g);
    finish_loop(&loop, &f, c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mcp_client");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, handshake_happy);
    tcase_add_test(tc, handshake_shared);
    tcase_add_test(tc, handshake_each_version);
    tcase_add_test(tc, handshake_unsupported_version);
    tcase_add_test(tc, handshake_error_and_bad_result);
    tcase_add_test(tc, handshake_timeout);
    tcase_add_test(tc, handshake_transport_down);
    tcase_add_test(tc, pagination);
    tcase_add_test(tc, pagination_101_pages);
    tcase_add_test(tc, pagination_too_many_tools);
    tcase_add_test(tc, pagination_bad_pages);
    tcase_add_test(tc, concurrent_out_of_order);
    tcase_add_test(tc, call_tool_params);
    tcase_add_test(tc, rpc_error_secrets_masked);
    tcase_add_test(tc, timeout_cancels_and_drops_late);
    tcase_add_test(tc, deadlines_in_order);
    tcase_add_test(tc, cancel_api);
    tcase_add_test(tc, not_run_fails_that_request_only);
    tcase_add_test(tc, unknown_and_duplicate_ids);
    tcase_add_test(tc, garbage_counted);
    tcase_add_test(tc, server_requests_answered);
    tcase_add_test(tc, notifications_and_batch);
    tcase_add_test(tc, transport_down_fails_all);
    tcase_add_test(tc, close_inside_callback);
    tcase_add_test(tc, many_in_flight);
    tcase_add_test(tc, idle_after_last_call);
    tcase_add_test(tc, modern_handshake_envelope_listen);
    tcase_add_test(tc, auto_probe_falls_back);
    tcase_add_test(tc, input_required_rounds);
    tcase_add_test(tc, input_rounds_capped);
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
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
