/* Tests of the stdio upstream transport and the reaper, with /bin/sh
 * children. Each test runs in its own process (Check's fork mode), which
 * becomes a child subreaper when it starts a reaper. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "gw/log.h"
#include "gw/child_env.h"
#include "gw/proctree.h"
#include "gw/reaper.h"
#include "gw/upstream_stdio.h"

struct ctx {
    uv_loop_t loop;
    struct gw_upstream_stdio *s;
    struct gw_reaper *reaper;
    json_t *msgs;   /* strings received, in order */
    json_t *stderr; /* the stderr ring as on_down saw it */
    int downs, closed, down_code;
    char why[256];
    size_t stop_after; /* stop once this many messages arrived; 0: never */
    int kill_on_message, kill_on_down;
    uint64_t closed_at;
    struct gw_upstream_stdio_stats st; /* as on_down saw them */
};

static void on_message(void *data, const char *msg, size_t len)
{
    struct ctx *c = data;
    ck_assert_int_eq(c->downs, 0);
    json_array_append_new(c->msgs, json_stringn(msg, len));
    if (c->stop_after && json_array_size(c->msgs) == c->stop_after)
        gw_upstream_stdio_stop(c->s);
    if (c->kill_on_message)
        gw_upstream_stdio_kill(c->s);
}

static void on_down(void *data, int code, const char *why)
{
    struct ctx *c = data;
    c->downs++;
    c->down_code = code;
    snprintf(c->why, sizeof(c->why), "%s", why);
    c->stderr = gw_upstream_stdio_stderr_lines(c->s);
    gw_upstream_stdio_get_stats(c->s, &c->st);
    if (c->kill_on_down)
        gw_upstream_stdio_kill(c->s);
}

static void on_closed(void *data)
{
    struct ctx *c = data;
    ck_assert_int_eq(c->downs, 1);
    c->closed++;
    c->closed_at = uv_hrtime() / 1000000;
    c->s = NULL;
}

static void ctx_init(struct ctx *c)
{
    memset(c, 0, sizeof(*c));
    ck_assert_int_eq(uv_loop_init(&c->loop), 0);
    c->msgs = json_array();
}

static void reaper_closed(void *data)
{
    *(int *)data = 1;
}

/* Stops the reaper, runs the loop dry and checks it closes cleanly. */
static void ctx_done(struct ctx *c)
{
    if (c->reaper) {
        int done = 0;
        gw_reaper_stop(c->reaper, reaper_closed, &done);
        uv_run(&c->loop, UV_RUN_DEFAULT);
        ck_assert_int_eq(done, 1);
    }
    uv_run(&c->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&c->loop), 0);
    json_decref(c->msgs);
    json_decref(c->stderr);
}

/* A config running `/bin/sh -c script`; the strings are static or owned
 * by the test. */
static struct gw_server_config sh_config(const char *script, char **args)
{
    args[0] = "-c";
    args[1] = (char *)script;
    struct gw_server_config cfg = {.id = "t", .ok = true, .transport = GW_TRANSPORT_STDIO};
    cfg.command = "sh";
    cfg.command_path = "/bin/sh";
    cfg.args = args;
    cfg.nargs = 2;
    return cfg;
}

static struct gw_upstream_stdio_options fast_options(void)
{
    struct gw_upstream_stdio_options o;
    gw_upstream_stdio_options_init(&o);
    o.close_wait_ms = 100;
    o.term_wait_ms = 200;
    return o;
}

static void start(struct ctx *c, const struct gw_server_config *cfg,
                  const struct gw_upstream_stdio_options *o)
{
    struct gw_transport_cbs cbs = {on_message, on_down, NULL, on_closed, c, NULL};
    char why[256] = "";
    int err = gw_upstream_stdio_start(&c->loop, cfg, o, &cbs, &c->s, why, sizeof(why));
    ck_assert_msg(err == 0, "start failed: %s", why);
    ck_assert_int_gt(gw_upstream_stdio_pid(c->s), 0);
}

static void start_sh(struct ctx *c, const char *script)
{
    static char *args[2];
    struct gw_server_config cfg = sh_config(script, args);
    struct gw_upstream_stdio_options o = fast_options();
    start(c, &cfg, &o);
}

static const char *msg_at(const struct ctx *c, size_t i)
{
    return json_string_value(json_array_get(c->msgs, i));
}

static void run_until_closed(struct ctx *c)
{
    while (!c->closed)
        uv_run(&c->loop, UV_RUN_ONCE);
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

START_TEST(test_pattern_match)
{
    ck_assert(gw_env_pattern_match("PATH", "PATH"));
    ck_assert(!gw_env_pattern_match("PATH", "PATHX"));
    ck_assert(!gw_env_pattern_match("PATH", "XPATH"));
    ck_assert(gw_env_pattern_match("LC_*", "LC_ALL"));
    ck_assert(gw_env_pattern_match("LC_*", "LC_"));
    ck_assert(!gw_env_pattern_match("LC_*", "LANG"));
    ck_assert(gw_env_pattern_match("*_PROXY", "HTTPS_PROXY"));
    ck_assert(gw_env_pattern_match("a*b*c", "aXXbYYbc"));
    ck_assert(!gw_env_pattern_match("a*b*c", "aXXbYYbcd"));
    ck_assert(gw_env_pattern_match("*", "ANY"));
}
END_TEST

START_TEST(test_cat_roundtrip)
{
    struct ctx c;
    ctx_init(&c);
    static char *args[1];
    struct gw_server_config cfg = {.id = "cat", .command = "cat", .command_path = "/bin/cat"};
    cfg.args = args;
    struct gw_upstream_stdio_options o = fast_options();
    start(&c, &cfg, &o);
    c.stop_after = 3;
    struct gw_transport *t = gw_upstream_stdio_transport(c.s);
    ck_assert_int_eq(gw_transport_send(t, "{\"id\":1}", 8), 0);
    ck_assert_int_eq(gw_transport_send(t, "{\"id\":2}", 8), 0);
    ck_assert_int_eq(gw_transport_send(t, "{\"id\":3}", 8), 0);
    struct gw_upstream_stdio_stats st;
    gw_upstream_stdio_get_stats(c.s, &st);
    ck_assert_int_eq(st.lines_out, 3);
    ck_assert_int_eq(st.bytes_out, 27);
    run_until_closed(&c);
    ck_assert_int_eq(json_array_size(c.msgs), 3);
    ck_assert_str_eq(msg_at(&c, 0), "{\"id\":1}");
    ck_assert_str_eq(msg_at(&c, 2), "{\"id\":3}");
    ck_assert_int_eq(c.down_code, UV_EOF);
    ck_assert_msg(strstr(c.why, "exited with status 0") != NULL, "why: %s", c.why);
    ctx_done(&c);
}
END_TEST

START_TEST(test_framing)
{
    struct ctx c;
    ctx_init(&c);
    /* Many messages in one write, CRLF, empty lines, a message split across
     * writes, one spanning several reads, and a last one without newline. */
    start_sh(&c, "printf '{\"a\":1}\\n{\"a\":2}\\r\\n\\n\\r\\n{\"a\":3}\\n'; "
                 "printf '{\"a\":'; sleep 0.1; printf '4}\\n'; "
                 "printf '\"'; head -c 300000 /dev/zero | tr '\\000' x; printf '\"\\n'; "
                 "printf 'last'");
    run_until_closed(&c);
    ck_assert_int_eq(json_array_size(c.msgs), 6);
    ck_assert_str_eq(msg_at(&c, 0), "{\"a\":1}");
    ck_assert_str_eq(msg_at(&c, 1), "{\"a\":2}");
    ck_assert_str_eq(msg_at(&c, 2), "{\"a\":3}");
    ck_assert_str_eq(msg_at(&c, 3), "{\"a\":4}");
    ck_assert_int_eq(strlen(msg_at(&c, 4)), 300002);
    ck_assert_str_eq(msg_at(&c, 5), "last");
    ck_assert_msg(strstr(c.why, "exited with status 0") != NULL, "why: %s", c.why);
    ctx_done(&c);
}
END_TEST

static int has_msg(const struct ctx *c, const char *s)
{
    int n = 0;
    for (size_t i = 0; i < json_array_size(c->msgs); i++)
        n += strcmp(msg_at(c, i), s) == 0;
    return n;
}

START_TEST(test_env)
{
    setenv("MCPGW_SECRET", "s3cret", 1);
    setenv("MCPGW_TOKEN", "tok", 1);
    setenv("KEEP_ME", "inherited", 1);
    setenv("DROP_ME", "1", 1);
    setenv("LC_TEST", "x", 1);
    setenv("PATH", "/usr/bin:/bin", 1);
    struct ctx c;
    ctx_init(&c);
    char *pats[] = {"PATH", "LC_*", "KEEP_ME", "MCPGW_*", "*SECRET"};
    struct gw_kv env[] = {{"FOO", "bar"},
                          {"KEEP_ME", "configured"},
                          {"FOO", "bar2"},
                          {"MCPGW_TOKEN", "configured-secret"}};
    static char *args[1];
    struct gw_server_config cfg = {.id = "env", .command = "env", .command_path = "/usr/bin/env"};
    cfg.args = args;
    cfg.env = env;
    cfg.nenv = 4;
    struct gw_upstream_stdio_options o = fast_options();
    o.inherit_env = pats;
    o.ninherit_env = 5;
    start(&c, &cfg, &o);
    run_until_closed(&c);
    ck_assert_int_eq(has_msg(&c, "PATH=/usr/bin:/bin"), 1);
    ck_assert_int_eq(has_msg(&c, "LC_TEST=x"), 1);
    ck_assert_int_eq(has_msg(&c, "KEEP_ME=configured"), 1);
    ck_assert_int_eq(has_msg(&c, "FOO=bar2"), 1);
    for (size_t i = 0; i < json_array_size(c.msgs); i++) {
        const char *m = msg_at(&c, i);
        ck_assert_msg(strncmp(m, "MCPGW_", 6) != 0, "leaked %s", m);
        ck_assert_msg(strstr(m, "s3cret") == NULL, "leaked %s", m);
        ck_assert_msg(strncmp(m, "DROP_ME", 7) != 0, "leaked %s", m);
    }
    ck_assert_int_eq(json_array_size(c.msgs), 4);
    ctx_done(&c);
}
END_TEST

/* The child has exactly 0, 1 and 2, even though the test process holds a
 * descriptor opened without O_CLOEXEC. */
START_TEST(test_child_fds)
{
    int leak = open("/dev/null", O_RDONLY);
    ck_assert_int_ge(leak, 3);
    struct ctx c;
    ctx_init(&c);
    static char *args[2] = {"sleep", "30"};
    struct gw_server_config cfg = {.id = "fds", .command = "sleep", .command_path = "/bin/sleep"};
    cfg.args = args + 1;
    cfg.nargs = 1;
    start(&c, &cfg, NULL);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", gw_upstream_stdio_pid(c.s));
    /* The child has exec'd when the spawn returns, but its dynamic loader
     * may still hold a shared library open for a moment (seen on a loaded
     * machine): read again until only 0, 1 and 2 are left, and never accept
     * the test's own descriptor. */
    int seen = 0, n = 0;
    for (int tries = 0; tries < 500; tries++) {
        DIR *d = opendir(path);
        ck_assert_ptr_nonnull(d);
        struct dirent *e;
        seen = n = 0;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            n++;
            int fd = atoi(e->d_name);
            seen |= 1 << fd;
            if (fd > 2) {
                char link[sizeof path + sizeof e->d_name + 1], target[256];
                snprintf(link, sizeof link, "%s/%s", path, e->d_name);
                ssize_t l = readlink(link, target, sizeof target - 1);
                target[l > 0 ? l : 0] = '\0';
                ck_assert_msg(strcmp(target, "/dev/null") != 0, "the child inherited fd %d", fd);
            }
        }
        closedir(d);
        if (n == 3)
            break;
        usleep(10 * 1000);
    }
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(seen, 7);
    /* Its own session and process group. */
    pid_t pid = gw_upstream_stdio_pid(c.s);
    ck_assert_int_eq(getpgid(pid), pid);
    ck_assert_int_eq(getsid(pid), pid);
    gw_upstream_stdio_kill(c.s);
    ck_assert_int_eq(c.downs, 1);
    ck_assert_int_eq(c.down_code, UV_ECANCELED);
    run_until_closed(&c);
    /* No reaper runs here, and libuv no longer waits for it: still ours. */
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    close(leak);
    ctx_done(&c);
}
END_TEST

START_TEST(test_stderr_ring_and_rate)
{
    struct ctx c;
    ctx_init(&c);
    start_sh(&c, "i=0; while [ $i -lt 300 ]; do echo \"line $i\" >&2; i=$((i+1)); done; "
                 "printf 'bad \\377 caf\\303\\251 \\355\\240\\200 utf8\\r\\n' >&2; "
                 "printf 'long:' >&2; head -c 10000 /dev/zero | tr '\\000' y >&2; echo >&2; "
                 "printf 'no newline' >&2; exit 3");
    run_until_closed(&c);
    json_t *lines = c.stderr;
    ck_assert_str_eq(json_string_value(json_array_get(lines, 49)), "no newline");
    ck_assert_int_eq(json_array_size(lines), GW_STDIO_STDERR_KEEP);
    ck_assert_str_eq(json_string_value(json_array_get(lines, 0)), "line 253");
    ck_assert_str_eq(json_string_value(json_array_get(lines, 46)), "line 299");
    ck_assert_str_eq(json_string_value(json_array_get(lines, 47)),
                     "bad \xef\xbf\xbd caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd utf8");
    const char *lng = json_string_value(json_array_get(lines, 48));
    ck_assert_int_eq(strlen(lng), GW_STDIO_STDERR_LINE_MAX);
    ck_assert(strncmp(lng, "long:yyy", 8) == 0);
    struct gw_upstream_stdio_stats st = c.st;
    ck_assert_int_eq(st.stderr_lines, 303);
    /* At most 20 per second were logged; the run takes well under 15 s. */
    ck_assert_uint_ge(st.stderr_dropped, 303 - 20 * 15);
    ck_assert_uint_le(303 - st.stderr_dropped, 20 * 16);
    ck_assert_msg(strstr(c.why, "exited with status 3") != NULL, "why: %s", c.why);
    ctx_done(&c);
}
END_TEST

START_TEST(test_huge_line)
{
    struct ctx c;
    ctx_init(&c);
    start_sh(&c, "echo '{\"ok\":1}'; head -c 20971520 /dev/zero | tr '\\000' a; echo");
    run_until_closed(&c);
    ck_assert_int_eq(json_array_size(c.msgs), 1);
    ck_assert_int_eq(c.down_code, UV_EMSGSIZE);
    ck_assert_msg(strstr(c.why, "exceeds 16 MiB") != NULL, "why: %s", c.why);
    ctx_done(&c);
}
END_TEST

/* Same, with the stats read before the instance is freed. */
static void on_down_stats(void *data, int code, const char *why)
{
    struct ctx *c = data;
    on_down(data, code, why);
    struct gw_upstream_stdio_stats st;
    gw_upstream_stdio_get_stats(c->s, &st);
    ck_assert_uint_le(st.stdout_buffered_max, GW_STDIO_MAX_LINE + 1);
    ck_assert_uint_ge(st.stdout_buffered_max, GW_STDIO_MAX_LINE - (64u << 10));
    ck_assert_uint_le(st.bytes_in, 20u << 20);
}

START_TEST(test_huge_line_bounded)
{
    struct ctx c;
    ctx_init(&c);
    static char *args[2];
    struct gw_server_config cfg =
        sh_config("head -c 20971520 /dev/zero | tr '\\000' a; sleep 30", args);
    struct gw_transport_cbs cbs = {on_message, on_down_stats, NULL, on_closed, &c, NULL};
    char why[128];
    struct gw_upstream_stdio_options o = fast_options();
    ck_assert_int_eq(gw_upstream_stdio_start(&c.loop, &cfg, &o, &cbs, &c.s, why, sizeof(why)), 0);
    uint64_t t0 = uv_hrtime();
    run_until_closed(&c);
    ck_assert_int_eq(c.down_code, UV_EMSGSIZE);
    ck_assert_uint_lt((uv_hrtime() - t0) / 1000000, 10000);
    ctx_done(&c);
}
END_TEST

START_TEST(test_stop_sigterm_ignored)
{
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    start_sh(&c, "trap '' TERM; echo ready; while :; do sleep 0.05; done");
    c.stop_after = 1;
    uint64_t t0 = uv_hrtime() / 1000000;
    run_until_closed(&c);
    uint64_t took = c.closed_at - t0;
    /* close_wait 100 ms + term_wait 200 ms, then SIGKILL. */
    ck_assert_msg(took >= 290 && took < 2000, "took %llu ms", (unsigned long long)took);
    ck_assert_msg(strstr(c.why, "signal 9") != NULL, "why: %s", c.why);
    gw_reaper_scan(c.reaper);
    ck_assert_int_eq(gw_reaper_count_zombies(), 0);
    ctx_done(&c);
}
END_TEST

START_TEST(test_stop_default_timings_cat)
{
    /* A well-behaved server exits on stdin close, well before SIGTERM. */
    struct ctx c;
    ctx_init(&c);
    start_sh(&c, "echo hi; exec cat");
    c.stop_after = 1;
    uint64_t t0 = uv_hrtime() / 1000000;
    run_until_closed(&c);
    ck_assert_uint_lt(c.closed_at - t0, 1000);
    ck_assert_msg(strstr(c.why, "exited with status 0 after a stop") != NULL, "why: %s", c.why);
    ctx_done(&c);
}
END_TEST

static void wait_zombies_gone(struct ctx *c)
{
    for (int i = 0; i < 200 && gw_reaper_count_zombies() > 0; i++) {
        uv_run(&c->loop, UV_RUN_NOWAIT);
        gw_reaper_scan(c->reaper);
        usleep(10000);
    }
    ck_assert_int_eq(gw_reaper_count_zombies(), 0);
}

/* Waits until `pid` is neither running nor a zombie. */
static void wait_pid_gone(struct ctx *c, int pid)
{
    for (int i = 0; i < 300 && kill(pid, 0) == 0; i++) {
        uv_run(&c->loop, UV_RUN_NOWAIT);
        gw_reaper_scan(c->reaper);
        usleep(10000);
    }
    ck_assert_int_eq(kill(pid, 0), -1);
    ck_assert_int_eq(errno, ESRCH);
}

START_TEST(test_grandchild_killed_and_reaped)
{
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    start_sh(&c, "sleep 30 & echo $!; exec cat");
    c.stop_after = 1;
    run_until_closed(&c);
    int gpid = atoi(msg_at(&c, 0));
    ck_assert_int_gt(gpid, 0);
    wait_pid_gone(&c, gpid);
    wait_zombies_gone(&c);
    ck_assert_uint_ge(gw_reaper_reaped(c.reaper), 1);
    ctx_done(&c);
}
END_TEST

START_TEST(test_crash_leaves_grandchild)
{
    /* The leader dies by a signal while its grandchild holds the pipes:
     * the group is terminated and on_closed still comes promptly. */
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    start_sh(&c, "sleep 30 & echo $!; kill -9 $$");
    uint64_t t0 = uv_hrtime() / 1000000;
    run_until_closed(&c);
    ck_assert_uint_lt(c.closed_at - t0, 1500);
    ck_assert_msg(strstr(c.why, "signal 9") != NULL, "why: %s", c.why);
    int gpid = atoi(msg_at(&c, 0));
    wait_pid_gone(&c, gpid);
    wait_zombies_gone(&c);
    ctx_done(&c);
}
END_TEST

START_TEST(test_kill_now_reaped)
{
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    start_sh(&c, "exec sleep 30");
    int pid = gw_upstream_stdio_pid(c.s);
    gw_upstream_stdio_kill(c.s);
    gw_upstream_stdio_kill(c.s); /* idempotent until freed */
    run_until_closed(&c);
    ck_assert_int_eq(c.down_code, UV_ECANCELED);
    wait_pid_gone(&c, pid);
    wait_zombies_gone(&c);
    ctx_done(&c);
}
END_TEST

START_TEST(test_spawn_failures)
{
    struct ctx c;
    ctx_init(&c);
    struct gw_transport_cbs cbs = {on_message, on_down, NULL, on_closed, &c, NULL};
    static char *args[1];
    struct gw_server_config cfg = {.id = "x", .command = "nope", .args = args};
    char why[256];
    struct gw_upstream_stdio *s = NULL;
    ck_assert_int_eq(gw_upstream_stdio_start(&c.loop, &cfg, NULL, &cbs, &s, why, sizeof(why)),
                     UV_ENOENT);
    ck_assert_msg(strstr(why, "nope") != NULL, "why: %s", why);
    cfg.command_path = "/nonexistent/bin/nope";
    ck_assert_int_eq(gw_upstream_stdio_start(&c.loop, &cfg, NULL, &cbs, &s, why, sizeof(why)),
                     UV_ENOENT);
    ck_assert_msg(strstr(why, "/nonexistent/bin/nope") != NULL, "why: %s", why);
    cfg.command_path = "/etc/passwd";
    ck_assert_int_eq(gw_upstream_stdio_start(&c.loop, &cfg, NULL, &cbs, &s, why, sizeof(why)),
                     UV_EACCES);
    ck_assert_msg(strstr(why, "EACCES") != NULL, "why: %s", why);
    ck_assert_ptr_null(s);
    uv_run(&c.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(c.downs + c.closed, 0);
    ctx_done(&c);
}
END_TEST

START_TEST(test_send_queue_bounded)
{
    struct ctx c;
    ctx_init(&c);
    start_sh(&c, "exec sleep 30"); /* never reads stdin */
    struct gw_transport *t = gw_upstream_stdio_transport(c.s);
    size_t len = 1u << 20;
    char *big = malloc(len);
    memset(big, 'q', len);
    int err = 0, sent = 0;
    while ((err = gw_transport_send(t, big, len)) == 0)
        sent++;
    free(big);
    ck_assert_int_eq(err, UV_ENOBUFS);
    ck_assert_int_ge(sent, 63);
    ck_assert_int_le(sent, 64 + 8); /* the pipe itself holds some */
    gw_transport_stop(t);
    ck_assert_int_eq(gw_transport_send(t, "{}", 2), UV_EPIPE);
    run_until_closed(&c);
    ck_assert_msg(strstr(c.why, "signal 15") != NULL, "why: %s", c.why);
    ctx_done(&c);
}
END_TEST

START_TEST(test_send_after_exit)
{
    struct ctx c;
    ctx_init(&c);
    start_sh(&c, "exit 7");
    while (!c.downs)
        uv_run(&c.loop, UV_RUN_ONCE);
    if (c.s)
        ck_assert_int_eq(gw_transport_send(gw_upstream_stdio_transport(c.s), "{}", 2), UV_EPIPE);
    ck_assert_msg(strstr(c.why, "exited with status 7") != NULL, "why: %s", c.why);
    ck_assert(strstr(c.why, "process ") != NULL);
    run_until_closed(&c);
    ctx_done(&c);
}
END_TEST

/* Killing from inside on_message and on_down is safe. */
START_TEST(test_kill_from_callbacks)
{
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    start_sh(&c, "echo one; echo two; echo three; exec sleep 30");
    c.kill_on_message = 1;
    run_until_closed(&c);
    ck_assert_int_eq(json_array_size(c.msgs), 1);
    ck_assert_int_eq(c.down_code, UV_ECANCELED);
    c.closed = c.downs = c.kill_on_message = 0;
    json_decref(c.stderr);
    c.kill_on_down = 1;
    start_sh(&c, "echo bye >&2; exit 2");
    run_until_closed(&c);
    ck_assert_msg(strstr(c.why, "status 2") != NULL, "why: %s", c.why);
    ck_assert_str_eq(json_string_value(json_array_get(c.stderr, 0)), "bye");
    wait_zombies_gone(&c);
    ctx_done(&c);
}
END_TEST

static void one_cycle(struct ctx *c, int i)
{
    c->closed = c->downs = 0;
    json_array_clear(c->msgs);
    json_decref(c->stderr);
    c->stderr = NULL;
    start_sh(c, i % 2 ? "sleep 5 & echo x; kill -9 $$" : "echo '{}'; echo oops >&2; exit 1");
    run_until_closed(c);
}

START_TEST(test_spawn_crash_cycles)
{
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    one_cycle(&c, 0); /* warms up libuv's signal pipe */
    one_cycle(&c, 1);
    wait_zombies_gone(&c);
    int fds = count_fds();
    for (int i = 0; i < 200; i++)
        one_cycle(&c, i);
    wait_zombies_gone(&c);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert_uint_ge(gw_reaper_reaped(c.reaper), 100);
    ctx_done(&c);
}
END_TEST

/* libuv's own children keep their exit status: the reaper never waits for
 * a pid that an open uv_process_t owns, even when it scans first. */
static int64_t plain_status = -1;

static void plain_exit(uv_process_t *p, int64_t status, int sig)
{
    plain_status = status;
    uv_close((uv_handle_t *)p, NULL);
}

START_TEST(test_reaper_spares_libuv_children)
{
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    uv_process_t p;
    char *args[] = {"sh", "-c", "exit 5", NULL};
    uv_process_options_t po = {.exit_cb = plain_exit, .file = "/bin/sh", .args = args};
    ck_assert_int_eq(uv_spawn(&c.loop, &p, &po), 0);
    while (gw_reaper_count_zombies() == 0)
        usleep(1000);
    ck_assert_int_eq(gw_reaper_scan(c.reaper), 0);
    uv_run(&c.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(plain_status, 5);
    ctx_done(&c);
}
END_TEST

/* waitid shows one zombie at a time: a zombie of libuv's that libuv has
 * not waited for yet stands in front of an orphan's. The first scan leaves
 * both; the second, seeing the same one in front, looks past it. */
START_TEST(test_reaper_sees_past_libuv_zombie)
{
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    uv_process_t p;
    int pfd[2];
    ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
    char *args[] = {"sh", "-c", "sleep 0.1 & echo $! >&3; exit 5", NULL};
    uv_stdio_container_t io[4] = {{.flags = UV_IGNORE},
                                  {.flags = UV_IGNORE},
                                  {.flags = UV_IGNORE},
                                  {.flags = UV_INHERIT_FD, .data.fd = pfd[1]}};
    uv_process_options_t po = {
        .exit_cb = plain_exit, .file = "/bin/sh", .args = args, .stdio = io, .stdio_count = 4};
    plain_status = -1;
    ck_assert_int_eq(uv_spawn(&c.loop, &p, &po), 0);
    close(pfd[1]);
    char buf[32] = "";
    ck_assert_int_gt(read(pfd[0], buf, sizeof(buf) - 1), 0);
    close(pfd[0]);
    int orphan = atoi(buf);
    ck_assert_int_gt(orphan, 0);
    /* Without running the loop: libuv waits for nothing meanwhile. */
    for (int i = 0; i < 500 && gw_reaper_count_zombies() < 2; i++)
        usleep(2000);
    ck_assert_int_eq(gw_reaper_count_zombies(), 2);
    ck_assert_int_eq(gw_reaper_scan(c.reaper), 0);
    ck_assert_int_eq(gw_reaper_scan(c.reaper), 1);
    ck_assert_int_eq(kill(orphan, 0), -1);
    ck_assert_int_eq(gw_reaper_count_zombies(), 1);
    uv_run(&c.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(plain_status, 5);
    ck_assert_int_eq(gw_reaper_count_zombies(), 0);
    ctx_done(&c);
}
END_TEST

START_TEST(test_stderr_secrets_masked)
{
    /* The server prints its env secret, the gateway token, a secret split
     * across two lines, and one cut by the line length cap. */
    struct ctx c;
    ctx_init(&c);
    static char *args[2];
    struct gw_kv env[] = {{"API_KEY", "sk-test-0123456789"}};
    struct gw_server_config cfg =
        sh_config("echo \"API_KEY=$API_KEY\" >&2; echo 'auth gw-token-abcdef' >&2; "
                  "printf 'half: sk-test-01\\n23456789 end\\n' >&2; "
                  "head -c 4090 /dev/zero | tr '\\000' y >&2; echo \"$API_KEY tail\" >&2; "
                  "echo \"$API_KEY\"; exit 1",
                  args);
    cfg.env = env;
    cfg.nenv = 1;
    static const char *const token[] = {"gw-token-abcdef"};
    struct gw_upstream_stdio_options o = fast_options();
    o.secrets = token;
    o.nsecrets = 1;
    start(&c, &cfg, &o);
    run_until_closed(&c);
    /* stdout is the protocol, not server chatter: it is left alone. */
    ck_assert_str_eq(msg_at(&c, 0), "sk-test-0123456789");
    json_t *lines = c.stderr;
    ck_assert_int_eq(json_array_size(lines), 5);
    ck_assert_str_eq(json_string_value(json_array_get(lines, 0)), "API_KEY=***");
    ck_assert_str_eq(json_string_value(json_array_get(lines, 1)), "auth ***");
    ck_assert_str_eq(json_string_value(json_array_get(lines, 2)), "half: ***");
    ck_assert_str_eq(json_string_value(json_array_get(lines, 3)), "*** end");
    const char *cut = json_string_value(json_array_get(lines, 4));
    ck_assert_uint_eq(strlen(cut), 4090 + 3);
    ck_assert_str_eq(cut + 4090, "***");
    for (size_t i = 0; i < json_array_size(lines); i++) {
        const char *l = json_string_value(json_array_get(lines, i));
        ck_assert_msg(!strstr(l, "sk-t") && !strstr(l, "6789") && !strstr(l, "gw-token"),
                      "line %zu: %s", i, l);
    }
    ctx_done(&c);
}
END_TEST

/* Chooses the cgroup or the /proc path; returns whether cgroups are used. */
static bool use_cgroups(bool on)
{
    if (on)
        unsetenv("MCPGW_CGROUP");
    else
        setenv("MCPGW_CGROUP", "off", 1);
    gw_proctree_reset();
    return gw_proctree_cgroups();
}

/* A grandchild that leaves the session and ignores SIGTERM, holding the
 * pipes; the leader is cat, which exits when stdin closes. */
#define SETSID_GRANDCHILD "setsid sh -c 'trap \"\" TERM; echo $$; exec sleep 30' & "

static void setsid_grandchild_stopped(void)
{
    struct ctx c;
    ctx_init(&c);
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    start_sh(&c, SETSID_GRANDCHILD "exec cat");
    c.stop_after = 1;
    run_until_closed(&c);
    int gpid = atoi(msg_at(&c, 0));
    ck_assert_int_gt(gpid, 0);
    wait_pid_gone(&c, gpid);
    wait_zombies_gone(&c);
    ctx_done(&c);
}

START_TEST(test_setsid_grandchild_stopped_proc)
{
    ck_assert(!use_cgroups(false));
    setsid_grandchild_stopped();
}
END_TEST

START_TEST(test_setsid_grandchild_stopped_cgroup)
{
    if (!use_cgroups(true)) {
        fprintf(stderr, "test_setsid_grandchild_stopped_cgroup: no writable cgroup v2, skipped\n");
        return;
    }
    setsid_grandchild_stopped();
}
END_TEST

START_TEST(test_setsid_orphan_killed_at_exit)
{
    /* The leader dies at once, so its setsid grandchild is an orphan no
     * look at the tree can place: the exit sweep kills it. */
    struct ctx c;
    ctx_init(&c);
    ck_assert(!use_cgroups(false));
    ck_assert_int_eq(gw_reaper_start(&c.loop, &c.reaper), 0);
    start_sh(&c, SETSID_GRANDCHILD "read x; kill -9 $$");
    struct gw_transport *t = gw_upstream_stdio_transport(c.s);
    while (json_array_size(c.msgs) < 1)
        uv_run(&c.loop, UV_RUN_ONCE);
    t->ops->send(t, "go", 2);
    run_until_closed(&c);
    int gpid = atoi(msg_at(&c, 0));
    ck_assert_int_gt(gpid, 0);
    ck_assert_int_eq(kill(gpid, 0), 0);
    ck_assert_int_eq(getsid(gpid), gpid);
    ctx_done(&c);
    ck_assert_int_ge(gw_proctree_kill_all(2000), 1);
    ck_assert_int_eq(kill(gpid, 0), -1);
    ck_assert_int_eq(errno, ESRCH);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("upstream_stdio");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_pattern_match);
    tcase_add_test(tc, test_cat_roundtrip);
    tcase_add_test(tc, test_framing);
    tcase_add_test(tc, test_env);
    tcase_add_test(tc, test_child_fds);
    tcase_add_test(tc, test_stderr_ring_and_rate);
    tcase_add_test(tc, test_huge_line);
    tcase_add_test(tc, test_huge_line_bounded);
    tcase_add_test(tc, test_stop_sigterm_ignored);
    tcase_add_test(tc, test_stop_default_timings_cat);
    tcase_add_test(tc, test_grandchild_killed_and_reaped);
    tcase_add_test(tc, test_crash_leaves_grandchild);
    tcase_add_test(tc, test_kill_now_reaped);
    tcase_add_test(tc, test_spawn_failures);
    tcase_add_test(tc, test_send_queue_bounded);
    tcase_add_test(tc, test_send_after_exit);
    tcase_add_test(tc, test_kill_from_callbacks);
    tcase_add_test(tc, test_spawn_crash_cycles);
    tcase_add_test(tc, test_reaper_spares_libuv_children);
    tcase_add_test(tc, test_reaper_sees_past_libuv_zombie);
    tcase_add_test(tc, test_stderr_secrets_masked);
    tcase_add_test(tc, test_setsid_grandchild_stopped_proc);
    tcase_add_test(tc, test_setsid_grandchild_stopped_cgroup);
    tcase_add_test(tc, test_setsid_orphan_killed_at_exit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* as the daemon does (P5) */
    gw_log_set_level(GW_LOG_ERROR);
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
