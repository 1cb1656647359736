/* Tests of the HTTP upstream transports, driven by the real MCP client
 * layer, against the real @modelcontextprotocol/server-everything (started
 * per test in streamableHttp or sse mode on a free port) and against a tiny
 * hostile responder running on the test's own loop (redirects, 500s,
 * oversized bodies and events, silence). */
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "gw/curl_uv.h"
#include "gw/log.h"
#include "gw/mcp_client.h"
#include "gw/upstream_http.h"

#define EVERYTHING "test/node_modules/.bin/mcp-server-everything"
#define BIG        (17u << 20)

/* ---- the server-everything process ---- */

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static int port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* Check runs each test in a child that a failed assertion ends with
 * _exit() (no teardown, no atexit) and a timeout with SIGKILL: the server
 * dies with that child (PR_SET_PDEATHSIG) so that no failure leaves it
 * listening. */
static pid_t spawn_everything(const char *mode, int port)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char p[16];
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        snprintf(p, sizeof(p), "%d", port);
        setenv("PORT", p, 1);
        setpgid(0, 0);
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execlp("node", "node", EVERYTHING, mode, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 400 && !port_open(port); i++)
        usleep(50000);
    ck_assert_msg(port_open(port), "server-everything %s did not listen on %d", mode, port);
    return pid;
}

static void stop_process(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* ---- a hostile responder on the test loop ---- */

enum rmode { R_REDIRECT, R_500, R_BIG_JSON, R_BIG_SSE, R_SILENT, R_SSE_SILENT };

struct conn {
    uv_tcp_t tcp;
    struct responder *r;
    char buf[65536];
    size_t len;
    struct conn *next;
    int closed;
};

struct responder {
    uv_tcp_t server;
    enum rmode mode;
    int port;
    int requests, connections;
    char last_headers[4096];
    struct conn *conns;
};

static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    c->closed = 2;
}

static void conn_close(struct conn *c)
{
    if (c->closed)
        return;
    c->closed = 1;
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void on_written(uv_write_t *w, int status)
{
    free(w->data);
    free(w);
}

static void send_bytes(struct conn *c, char *data, size_t len)
{
    uv_write_t *w = malloc(sizeof(*w));
    w->data = data;
    uv_buf_t b = uv_buf_init(data, (unsigned)len);
    if (uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, on_written) < 0) {
        free(data);
        free(w);
    }
}

static void send_text(struct conn *c, const char *s)
{
    send_bytes(c, strdup(s), strlen(s));
}

static void respond_big(struct conn *c, int sse)
{
    const char *head = sse ? "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: "
                           : "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             "Content-Length: 17825792\r\n\r\n";
    send_text(c, head);
    char *body = malloc(BIG);
    memset(body, 'x', BIG);
    if (!sse)
        body[0] = '"';
    send_bytes(c, body, BIG);
}

static void respond(struct conn *c)
{
    struct responder *r = c->r;
    r->requests++;
    switch (r->mode) {
    case R_REDIRECT:
        send_text(c, "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\n"
                     "Content-Length: 0\r\n\r\n");
        break;
    case R_500:
        send_text(c, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                     "Content-Length: 12\r\n\r\nbroken\r\nnow!");
        break;
    case R_BIG_JSON:
        respond_big(c, 0);
        break;
    case R_BIG_SSE:
        respond_big(c, 1);
        break;
    case R_SILENT:
        break;
    case R_SSE_SILENT:
        send_text(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
        break;
    }
}

/* Consumes complete requests (headers plus Content-Length body). */
static void parse_requests(struct conn *c)
{
    for (;;) {
        c->buf[c->len < sizeof(c->buf) ? c->len : sizeof(c->buf) - 1] = '\0';
        char *end = strstr(c->buf, "\r\n\r\n");
        if (!end)
            return;
        size_t hlen = (size_t)(end + 4 - c->buf);
        size_t blen = 0;
        char *cl = strcasestr(c->buf, "content-length:");
        if (cl && cl < end)
            blen = strtoul(cl + 15, NULL, 10);
        if (c->len < hlen + blen)
            return;
        snprintf(c->r->last_headers, sizeof(c->r->last_headers), "%.*s", (int)hlen, c->buf);
        memmove(c->buf, c->buf + hlen + blen, c->len - hlen - blen);
        c->len -= hlen + blen;
        respond(c);
    }
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *b)
{
    struct conn *c = h->data;
    b->base = c->buf + c->len;
    b->len = sizeof(c->buf) - 1 - c->len;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct conn *c = s->data;
    if (n < 0) {
        conn_close(c);
        return;
    }
    c->len += (size_t)n;
    parse_requests(c);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct responder *r = server->data;
    struct conn *c = calloc(1, sizeof(*c));
    c->r = r;
    uv_tcp_init(server->loop, &c->tcp);
    c->tcp.data = c;
    c->next = r->conns;
    r->conns = c;
    ck_assert_int_eq(uv_accept(server, (uv_stream_t *)&c->tcp), 0);
    r->connections++;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void responder_start(uv_loop_t *loop, struct responder *r, enum rmode mode)
{
    memset(r, 0, sizeof(*r));
    r->mode = mode;
    uv_tcp_init(loop, &r->server);
    r->server.data = r;
    struct sockaddr_in a;
    uv_ip4_addr("0.0.0.0", 0, &a);
    ck_assert_int_eq(uv_tcp_bind(&r->server, (struct sockaddr *)&a, 0), 0);
    ck_assert_int_eq(uv_listen((uv_stream_t *)&r->server, 16, on_connection), 0);
    int len = sizeof(a);
    uv_tcp_getsockname(&r->server, (struct sockaddr *)&a, &len);
    r->port = ntohs(a.sin_port);
}

static void responder_stop(struct responder *r)
{
    for (struct conn *c = r->conns; c; c = c->next)
        conn_close(c);
    uv_close((uv_handle_t *)&r->server, NULL);
}

static void responder_free(struct responder *r)
{
    while (r->conns) {
        struct conn *c = r->conns;
        r->conns = c->next;
        free(c);
    }
}

/* ---- the transport under test, with the MCP client on top ---- */

struct ctx {
    uv_loop_t loop;
    uv_timer_t guard;
    struct gw_curl_uv *multi;
    struct gw_upstream_http *h;
    struct gw_mcp_client *client;
    json_t *msgs; /* raw messages when there is no client */
    int ready, failed, fail_code, downs, down_code, closed, replies, multi_closed, log_notes;
    int not_run;
    char why[512], fail_why[512];
    struct {
        int code;
        json_t *result;
        char message[512];
    } reply;
    pid_t server;
    int port;
};

static void t_message(void *data, const char *msg, size_t len)
{
    struct ctx *c = data;
    ck_assert_int_eq(c->downs, 0);
    if (c->client)
        gw_mcp_client_receive(c->client, msg, len);
    else
        json_array_append_new(c->msgs, json_loadb(msg, len, 0, NULL));
}

static void t_down(void *data, int code, const char *why)
{
    struct ctx *c = data;
    c->downs++;
    c->down_code = code;
    snprintf(c->why, sizeof(c->why), "%s", why);
    if (c->client)
        gw_mcp_client_transport_down(c->client, why);
}

static void t_not_run(void *data, json_t *id, const char *why)
{
    struct ctx *c = data;
    ck_assert_int_eq(c->downs, 0); /* named before the instance goes down */
    c->not_run++;
    if (c->client)
        gw_mcp_client_not_run(c->client, id, why);
}

static void t_closed(void *data)
{
    struct ctx *c = data;
    ck_assert_int_eq(c->downs, 1);
    c->closed++;
    c->h = NULL;
}

static int c_send(void *data, const char *msg, size_t len)
{
    struct ctx *c = data;
    if (!c->h)
        return UV_EPIPE;
    return gw_transport_send(gw_upstream_http_transport(c->h), msg, len);
}

static void c_ready(void *data, const char *version, json_t *info, json_t *caps)
{
    ((struct ctx *)data)->ready++;
}

static void c_failed(void *data, int code, const char *why)
{
    struct ctx *c = data;
    c->failed++;
    c->fail_code = code;
    snprintf(c->fail_why, sizeof(c->fail_why), "%s", why);
}

static void c_note(void *data, const char *method, json_t *msg)
{
    struct ctx *c = data;
    if (strcmp(method, "notifications/message") == 0)
        c->log_notes++;
}

static void c_reply(void *data, const struct gw_mcp_reply *r)
{
    struct ctx *c = data;
    c->replies++;
    c->reply.code = r->code;
    json_decref(c->reply.result);
    c->reply.result = json_incref(r->result);
    snprintf(c->reply.message, sizeof(c->reply.message), "%s", r->message ? r->message : "");
}

static void ctx_init(struct ctx *c)
{
    memset(c, 0, sizeof(*c));
    ck_assert_int_eq(uv_loop_init(&c->loop), 0);
    uv_timer_init(&c->loop, &c->guard);
    c->multi = gw_curl_uv_new(&c->loop);
    c->msgs = json_array();
}

static void on_guard(uv_timer_t *t) {}

/* Runs the loop until *flag >= want or `ms` passed; returns whether it got there. */
static int run_until(struct ctx *c, int *flag, int want, uint64_t ms)
{
    uint64_t end = uv_now(&c->loop) + ms;
    uv_timer_start(&c->guard, on_guard, 20, 20);
    while (*flag < want && uv_now(&c->loop) < end)
        uv_run(&c->loop, UV_RUN_ONCE);
    uv_timer_stop(&c->guard);
    return *flag >= want;
}

static struct gw_server_config http_cfg(const char *url, enum gw_transport_kind kind)
{
    struct gw_server_config cfg = {.id = "t", .ok = true, .transport = kind};
    cfg.url = (char *)url;
    cfg.timeout_ms = 2000;
    cfg.sse_read_timeout_ms = 30000;
    cfg.terminate_on_close = true;
    return cfg;
}

static struct gw_upstream_http_options fast_opts(void)
{
    struct gw_upstream_http_options o;
    gw_upstream_http_options_init(&o);
    o.retry_base_ms = 20;
    o.retry_max_ms = 100;
    o.delete_timeout_ms = 1000;
    return o;
}

static void start_transport(struct ctx *c, const struct gw_server_config *cfg,
                            const struct gw_upstream_http_options *o)
{
    struct gw_transport_cbs cbs = {t_message, t_down, t_not_run, t_closed, c, NULL};
    char why[256] = "";
    int rc = gw_upstream_http_start(&c->loop, c->multi, cfg, o, &cbs, &c->h, why, sizeof(why));
    ck_assert_msg(rc == 0, "start failed: %s", why);
}

static void start_client(struct ctx *c, uint64_t init_timeout_ms)
{
    struct gw_mcp_client_opts o = {.send = c_send,
                                   .on_ready = c_ready,
                                   .on_failed = c_failed,
                                   .on_notification = c_note,
                                   .data = c,
                                   .server_id = "t",
                                   .init_timeout_ms = init_timeout_ms,
                                   /* these count the transport's POSTs: no probe */
                                   .era = GW_MCP_ERA_LEGACY};
    ck_assert_int_eq(gw_mcp_client_new(&c->loop, &o, &c->client), 0);
    ck_assert_int_eq(gw_mcp_client_start(c->client), 0);
}

static void on_multi_closed(void *data)
{
    ((struct ctx *)data)->multi_closed = 1;
}

/* Stops what is left, closes everything and checks the loop closes. */
static void ctx_done(struct ctx *c)
{
    if (c->h) {
        gw_upstream_http_stop(c->h);
        ck_assert(run_until(c, &c->closed, 1, 5000));
    }
    if (c->client)
        gw_mcp_client_close(c->client);
    gw_curl_uv_close(c->multi, on_multi_closed, c);
    uv_close((uv_handle_t *)&c->guard, NULL);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(c->multi_closed, 1);
    ck_assert_int_eq(uv_loop_close(&c->loop), 0);
    json_decref(c->msgs);
    json_decref(c->reply.result);
    stop_process(c->server);
}

/* Runs until `n` raw messages arrived (transport without a client). */
static void wait_msgs(struct ctx *c, size_t n)
{
    for (int i = 0; i < 200 && json_array_size(c->msgs) < n; i++)
        run_until(c, &c->closed, 1, 50);
    ck_assert_int_ge(json_array_size(c->msgs), n);
}

static void wait_reply(struct ctx *c, int n)
{
    ck_assert_msg(run_until(c, &c->replies, n, 15000), "no reply");
}

static int has_tool(json_t *tools, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(tools, i, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
            return 1;
    }
    return 0;
}

/* tools/list and an echo call over a ready client. */
static void list_and_echo(struct ctx *c)
{
    ck_assert_int_eq(gw_mcp_client_list_tools(c->client, 10000, c_reply, c, NULL), 0);
    wait_reply(c, c->replies + 1);
    ck_assert_msg(c->reply.code == 0, "tools/list: %s", c->reply.message);
    ck_assert(has_tool(c->reply.result, "echo"));
    json_t *args = json_pack("{s:s}", "message", "hello http");
    ck_assert_int_eq(gw_mcp_client_call_tool(c->client, "echo", args, NULL, 10000, c_reply, c, NULL,
                                             GW_MCP_CAPS_ALL),
                     0);
    json_decref(args);
    wait_reply(c, c->replies + 1);
    ck_assert_msg(c->reply.code == 0, "echo: %s", c->reply.message);
    json_t *text =
        json_object_get(json_array_get(json_object_get(c->reply.result, "content"), 0), "text");
    ck_assert_msg(strstr(json_string_value(text), "hello http") != NULL, "echo said %s",
                  json_string_value(text));
}

/* A blocking POST of tools/list with a session id (the test's own probe). */
static long probe_session(int port, const char *session, char *body, size_t cap)
{
    CURL *e = curl_easy_init();
    char url[64], hdr[300];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", port);
    snprintf(hdr, sizeof(hdr), "Mcp-Session-Id: %s", session);
    struct curl_slist *l = curl_slist_append(NULL, hdr);
    l = curl_slist_append(l, "Content-Type: application/json");
    l = curl_slist_append(l, "Accept: application/json, text/event-stream");
    FILE *f = fmemopen(body, cap, "w");
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, l);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    curl_easy_setopt(e, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 5L);
    ck_assert_int_eq(curl_easy_perform(e), CURLE_OK);
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    fclose(f);
    curl_slist_free_all(l);
    curl_easy_cleanup(e);
    return status;
}

/* Every socket of the process is close-on-exec (P1): libcurl's included. */
static void check_sockets_cloexec(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int sockets = 0;
    while ((e = readdir(d)) != NULL) {
        char path[300], target[64] = "";
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        if (readlink(path, target, sizeof(target) - 1) < 0 || strncmp(target, "socket:", 7) != 0)
            continue;
        int fd = atoi(e->d_name);
        ck_assert_msg(fcntl(fd, F_GETFD) & FD_CLOEXEC, "socket fd %d is not close-on-exec", fd);
        sockets++;
    }
    closedir(d);
    ck_assert_int_gt(sockets, 0);
}

/* ---- tests against server-everything ---- */

START_TEST(test_streamable_roundtrip)
{
    struct ctx c;
    ctx_init(&c);
    c.port = free_port();
    c.server = spawn_everything("streamableHttp", c.port);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", c.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    ck_assert_ptr_null(gw_upstream_http_session_id(c.h));
    start_client(&c, 10000);
    ck_assert_msg(run_until(&c, &c.ready, 1, 15000), "not ready: %s", c.fail_why);
    const char *sid = gw_upstream_http_session_id(c.h);
    ck_assert_ptr_nonnull(sid);
    ck_assert_str_eq(gw_upstream_http_protocol_version(c.h), gw_mcp_client_version(c.client));
    list_and_echo(&c);
    ck_assert_str_eq(gw_upstream_http_session_id(c.h), sid); /* kept and sent: calls worked */
    check_sockets_cloexec();

    /* the GET stream was opened once the session was initialized */
    struct gw_upstream_http_stats st;
    gw_upstream_http_get_stats(c.h, &st);
    ck_assert_int_ge(st.gets, 1);
    ck_assert_int_eq(st.get_stream_open, 1);
    ck_assert_int_ge(st.posts, 4);
    ck_assert_int_eq(st.http_errors, 0);

    /* the server's own messages: the first may ride on the call's stream,
     * the next (5 s later, no request in flight) can only use the GET stream */
    ck_assert_int_eq(gw_mcp_client_call_tool(c.client, "toggle-simulated-logging", NULL, NULL,
                                             10000, c_reply, &c, NULL, GW_MCP_CAPS_ALL),
                     0);
    ck_assert_msg(run_until(&c, &c.log_notes, 2, 9000), "log notifications: %d", c.log_notes);

    /* stop DELETEs the session: the server forgets it */
    char saved[300],
        body[65536] =
            ""; /* server-everything lists more tools to a client that declares sampling */
    snprintf(saved, sizeof(saved), "%s", sid);
    ck_assert_int_eq(probe_session(c.port, saved, body, sizeof(body)), 200);
    gw_upstream_http_stop(c.h);
    ck_assert(run_until(&c, &c.closed, 1, 5000));
    ck_assert_int_eq(c.down_code, UV_ECANCELED);
    /* server-everything answers the DELETE before it drops the session from
     * its map (the SDK closes the transport asynchronously): a probe sent at
     * once can still find it, so allow it a moment to forget */
    long status = 200;
    for (int i = 0; i < 100 && status == 200; i++) {
        if (i)
            usleep(50000);
        memset(body, 0, sizeof(body));
        status = probe_session(c.port, saved, body, sizeof(body));
    }
    /* At most 200 bytes of the body: Check refuses a longer message. */
    ck_assert_msg(status == 404 || (status == 400 && strcasestr(body, "session")),
                  "after DELETE: HTTP %ld %.200s", status, body);
    ctx_done(&c);
}
END_TEST

START_TEST(test_session_gone_after_restart)
{
    struct ctx c;
    ctx_init(&c);
    c.port = free_port();
    c.server = spawn_everything("streamableHttp", c.port);
    char url[64];
    snprintf(url, sizeof(url), "http://localhost:%d/mcp", c.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_upstream_http_options o = fast_opts();
    o.get_stream = 0; /* the POST must be what notices */
    start_transport(&c, &cfg, &o);
    start_client(&c, 10000);
    ck_assert_msg(run_until(&c, &c.ready, 1, 15000), "not ready: %s", c.fail_why);

    stop_process(c.server);
    c.server = spawn_everything("streamableHttp", c.port);
    ck_assert_int_eq(gw_mcp_client_ping(c.client, 10000, c_reply, &c, NULL), 0);
    ck_assert(run_until(&c, &c.downs, 1, 10000));
    ck_assert_int_eq(c.down_code, GW_HTTP_E_SESSION_GONE);
    ck_assert_msg(strstr(c.why, "no longer knows MCP session") != NULL, "why: %s", c.why);
    wait_reply(&c, 1);
    /* The ping was refused unrun: it fails as such, so it may go again. */
    ck_assert_int_eq(c.not_run, 1);
    ck_assert_int_eq(c.reply.code, GW_MCP_E_NOT_RUN);
    ck_assert_msg(strstr(c.reply.message, "no longer knows MCP session") != NULL, "%s",
                  c.reply.message);
    ck_assert(run_until(&c, &c.closed, 1, 5000)); /* closes by itself */
    ctx_done(&c);
}
END_TEST

START_TEST(test_legacy_sse_roundtrip)
{
    struct ctx c;
    ctx_init(&c);
    c.port = free_port();
    c.server = spawn_everything("sse", c.port);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/sse", c.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_SSE);
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    start_client(&c, 10000); /* sent before the endpoint is known: waits */
    ck_assert_msg(run_until(&c, &c.ready, 1, 15000), "not ready: %s", c.fail_why);
    ck_assert_ptr_null(gw_upstream_http_session_id(c.h));
    list_and_echo(&c);
    struct gw_upstream_http_stats st;
    gw_upstream_http_get_stats(c.h, &st);
    ck_assert_int_eq(st.gets, 1);
    ck_assert_int_eq(st.get_stream_open, 1);

    /* the server going away ends the stream: down */
    stop_process(c.server);
    c.server = 0;
    ck_assert(run_until(&c, &c.downs, 1, 10000));
    ck_assert_int_eq(c.down_code, GW_HTTP_E_STREAM);
    ck_assert(run_until(&c, &c.closed, 1, 5000));
    ctx_done(&c);
}
END_TEST

/* ---- security and limits, against the hostile responder ---- */

static int non_loopback_ipv4(char *buf, size_t cap)
{
    struct ifaddrs *ifs, *i;
    int found = 0;
    if (getifaddrs(&ifs) != 0)
        return 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if ((ntohl(a.s_addr) >> 24) == 127)
            continue;
        inet_ntop(AF_INET, &a, buf, (socklen_t)cap);
        found = 1;
    }
    freeifaddrs(ifs);
    return found;
}

START_TEST(test_plain_http_needs_loopback)
{
    struct ctx c;
    ctx_init(&c);
    struct responder r;
    responder_start(&c.loop, &r, R_500);
    char ip[64], url[128];
    if (!non_loopback_ipv4(ip, sizeof(ip)))
        snprintf(ip, sizeof(ip), "0.0.0.0"); /* not loopback: refused before connecting */
    snprintf(url, sizeof(url), "http://%s:%d/mcp", ip, r.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    start_client(&c, 10000);
    ck_assert(run_until(&c, &c.failed, 1, 10000));
    ck_assert_msg(strstr(c.fail_why, "loopback") != NULL, "why: %s", c.fail_why);
    ck_assert_int_eq(r.connections, 0); /* a reachable server, never contacted */
    ck_assert_int_eq(c.downs, 0);       /* one request failed, not the instance */
    struct gw_upstream_http_stats st;
    gw_upstream_http_get_stats(c.h, &st);
    ck_assert_int_eq(st.posts, 1); /* refused, not retried */
    responder_stop(&r);
    ctx_done(&c);
    responder_free(&r);
}
END_TEST

START_TEST(test_redirect_refused)
{
    struct ctx c;
    ctx_init(&c);
    struct responder r;
    responder_start(&c.loop, &r, R_REDIRECT);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", r.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_kv hdr[] = {{"X-Api-Key", "s3cret-value"}};
    cfg.headers = hdr;
    cfg.nheaders = 1;
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    start_client(&c, 10000);
    ck_assert(run_until(&c, &c.failed, 1, 10000));
    ck_assert_msg(strstr(c.fail_why, "HTTP 302") && strstr(c.fail_why, "redirect"), "why: %s",
                  c.fail_why);
    ck_assert(strstr(c.fail_why, "s3cret") == NULL);
    ck_assert(strstr(gw_upstream_http_last_error(c.h), "s3cret") == NULL);
    ck_assert_int_eq(r.requests, 1);
    ck_assert(strstr(r.last_headers, "X-Api-Key: s3cret-value") != NULL);
    ck_assert(strstr(r.last_headers, "Accept: application/json, text/event-stream") != NULL);
    responder_stop(&r);
    ctx_done(&c);
    responder_free(&r);
}
END_TEST

START_TEST(test_retry_safe_methods_only)
{
    struct ctx c;
    ctx_init(&c);
    struct responder r;
    responder_start(&c.loop, &r, R_500);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", r.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    struct gw_transport *t = gw_upstream_http_transport(c.h);

    /* tools/list on 500: three tries, then an error answer */
    const char *list = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
    ck_assert_int_eq(gw_transport_send(t, list, strlen(list)), 0);
    wait_msgs(&c, 1);
    ck_assert_int_eq(r.requests, 3);
    json_t *err = json_object_get(json_array_get(c.msgs, 0), "error");
    ck_assert_int_eq(json_integer_value(json_object_get(err, "code")), GW_HTTP_RPC_ERROR);
    const char *msg = json_string_value(json_object_get(err, "message"));
    ck_assert_msg(strstr(msg, "HTTP 500: broken") && strstr(msg, "after 3 tries"), "%s", msg);
    json_t *data = json_object_get(err, "data");
    ck_assert_int_eq(json_integer_value(json_object_get(data, "httpStatus")), 500);
    ck_assert(json_is_true(json_object_get(data, "reachedServer")));

    /* tools/call on 500: never retried */
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"x\"}}";
    ck_assert_int_eq(gw_transport_send(t, call, strlen(call)), 0);
    wait_msgs(&c, 2);
    ck_assert_int_eq(r.requests, 4);
    json_t *id = json_object_get(json_array_get(c.msgs, 1), "id");
    ck_assert_int_eq(json_integer_value(id), 2);
    ck_assert_int_eq(c.downs, 0);
    struct gw_upstream_http_stats st;
    gw_upstream_http_get_stats(c.h, &st);
    ck_assert_int_eq(st.retries, 2);
    ck_assert_int_eq(st.http_errors, 2);
    responder_stop(&r);
    ctx_done(&c);
    responder_free(&r);
}
END_TEST

START_TEST(test_connection_refused_retried_and_marked)
{
    struct ctx c;
    ctx_init(&c);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", free_port()); /* nobody listens */
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"x\"}}";
    ck_assert_int_eq(gw_transport_send(gw_upstream_http_transport(c.h), call, strlen(call)), 0);
    wait_msgs(&c, 1);
    json_t *m = json_array_get(c.msgs, 0);
    ck_assert_str_eq(json_string_value(json_object_get(m, "id")), "c1");
    json_t *err = json_object_get(m, "error");
    ck_assert(json_is_false(json_object_get(json_object_get(err, "data"), "reachedServer")));
    const char *msg = json_string_value(json_object_get(err, "message"));
    ck_assert_msg(strstr(msg, "cannot reach") && strstr(msg, "after 3 tries"), "%s", msg);
    ctx_done(&c);
}
END_TEST

START_TEST(test_body_cap)
{
    struct ctx c;
    ctx_init(&c);
    struct responder r;
    responder_start(&c.loop, &r, R_BIG_JSON);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", r.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    start_client(&c, 10000);
    ck_assert(run_until(&c, &c.failed, 1, 10000));
    ck_assert_msg(strstr(c.fail_why, "16 MiB"), "why: %s", c.fail_why);
    ck_assert_int_eq(c.downs, 0); /* S3: the request fails, the instance stays */
    responder_stop(&r);
    ctx_done(&c);
    responder_free(&r);
}
END_TEST

START_TEST(test_event_cap)
{
    struct ctx c;
    ctx_init(&c);
    struct responder r;
    responder_start(&c.loop, &r, R_BIG_SSE);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", r.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    start_client(&c, 10000);
    ck_assert(run_until(&c, &c.downs, 1, 10000));
    ck_assert_int_eq(c.down_code, GW_HTTP_E_TOO_BIG); /* S2: the instance goes down */
    ck_assert_msg(strstr(c.why, "16 MiB"), "why: %s", c.why);
    ck_assert(run_until(&c, &c.failed, 1, 1000));
    ck_assert(run_until(&c, &c.closed, 1, 5000));
    responder_stop(&r);
    ctx_done(&c);
    responder_free(&r);
}
END_TEST

START_TEST(test_silent_server_times_out)
{
    struct ctx c;
    ctx_init(&c);
    struct responder r;
    responder_start(&c.loop, &r, R_SILENT);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", r.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_STREAMABLE_HTTP);
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    uint64_t t0 = uv_now(&c.loop);
    start_client(&c, 300); /* the client layer's timeout fires first */
    ck_assert(run_until(&c, &c.failed, 1, 5000));
    ck_assert_int_eq(c.fail_code, GW_MCP_E_TIMEOUT);
    ck_assert_uint_lt(uv_now(&c.loop) - t0, 2000);
    /* stop cancels the hanging POST at once */
    gw_upstream_http_stop(c.h);
    ck_assert(run_until(&c, &c.closed, 1, 1000));
    responder_stop(&r);
    ctx_done(&c);
    responder_free(&r);
}
END_TEST

START_TEST(test_sse_read_timeout)
{
    struct ctx c;
    ctx_init(&c);
    struct responder r;
    responder_start(&c.loop, &r, R_SSE_SILENT);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/sse", r.port);
    struct gw_server_config cfg = http_cfg(url, GW_TRANSPORT_SSE);
    cfg.sse_read_timeout_ms = 300;
    struct gw_upstream_http_options o = fast_opts();
    start_transport(&c, &cfg, &o);
    uint64_t t0 = uv_now(&c.loop);
    ck_assert(run_until(&c, &c.downs, 1, 5000));
    ck_assert_int_eq(c.down_code, GW_HTTP_E_STREAM);
    ck_assert_msg(strstr(c.why, "silent for 300 ms"), "why: %s", c.why);
    ck_assert_uint_ge(uv_now(&c.loop) - t0, 290);
    ck_assert(run_until(&c, &c.closed, 1, 5000));
    responder_stop(&r);
    ctx_done(&c);
    responder_free(&r);
}
END_TEST

START_TEST(test_start_refuses_bad_urls)
{
    struct ctx c;
    ctx_init(&c);
    struct gw_transport_cbs cbs = {t_message, t_down, t_not_run, t_closed, &c, NULL};
    const char *bad[] = {"ftp://127.0.0.1/x", "not a url", "file:///etc/passwd"};
    for (size_t i = 0; i < 3; i++) {
        struct gw_server_config cfg = http_cfg(bad[i], GW_TRANSPORT_STREAMABLE_HTTP);
        char why[128] = "";
        struct gw_upstream_http *h = NULL;
        ck_assert_int_eq(
            gw_upstream_http_start(&c.loop, c.multi, &cfg, NULL, &cbs, &h, why, sizeof(why)),
            UV_EINVAL);
        ck_assert_ptr_null(h);
        ck_assert(strstr(why, "http") != NULL);
    }
    ctx_done(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("upstream_http");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_streamable_roundtrip);
    tcase_add_test(tc, test_session_gone_after_restart);
    tcase_add_test(tc, test_legacy_sse_roundtrip);
    tcase_add_test(tc, test_plain_http_needs_loopback);
    tcase_add_test(tc, test_redirect_refused);
    tcase_add_test(tc, test_retry_safe_methods_only);
    tcase_add_test(tc, test_connection_refused_retried_and_marked);
    tcase_add_test(tc, test_body_cap);
    tcase_add_test(tc, test_event_cap);
    tcase_add_test(tc, test_silent_server_times_out);
    tcase_add_test(tc, test_sse_read_timeout);
    tcase_add_test(tc, test_start_refuses_bad_urls);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* as the daemon does (P5) */
    gw_log_set_level(getenv("GW_TEST_DEBUG") ? GW_LOG_DEBUG : GW_LOG_ERROR);
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
