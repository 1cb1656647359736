/* sd_notify by hand: real datagram sockets, bound in a temp directory and
 * in the abstract namespace, receive exactly what systemd would. */
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "gw/sdnotify.h"

static char dir[64];
static char sockpath[128];
static int rx = -1; /* the "systemd" end */

static void setup(void)
{
    strcpy(dir, "/tmp/gwsdXXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sockpath, sizeof sockpath, "%s/notify", dir);
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
}

static void teardown(void)
{
    if (rx >= 0)
        close(rx);
    rx = -1;
    unlink(sockpath);
    rmdir(dir);
}

/* Binds the receiving end at `name` ("/path" or "@abstract") and points
 * $NOTIFY_SOCKET at it. */
static void listen_at(const char *name)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    socklen_t len;

    rx = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(rx, 0);
    memcpy(a.sun_path, name, n);
    if (name[0] == '@') {
        a.sun_path[0] = '\0';
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    }
    ck_assert_int_eq(bind(rx, (struct sockaddr *)&a, len), 0);
    setenv("NOTIFY_SOCKET", name, 1);
}

/* The next datagram, or "" when none arrives within `ms`. */
static const char *recv_msg(int ms)
{
    static char buf[4096];
    struct pollfd p = {.fd = rx, .events = POLLIN};
    ssize_t n;

    buf[0] = '\0';
    if (poll(&p, 1, ms) != 1)
        return buf;
    n = recv(rx, buf, sizeof buf - 1, 0);
    ck_assert_int_ge(n, 0);
    buf[n] = '\0';
    return buf;
}

START_TEST(no_socket_is_a_noop)
{
    uv_loop_t loop;

    setenv("WATCHDOG_USEC", "1000000", 1);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    ck_assert(!gw_sdnotify_enabled());
    ck_assert_int_eq(gw_sdnotify_send("READY=1"), 0);
    ck_assert_int_eq(gw_sdnotify_ready("x"), 0);
    ck_assert_int_eq(gw_sdnotify_reloading(), 0);
    ck_assert_int_eq(gw_sdnotify_stopping(), 0);
    ck_assert_int_eq(gw_sdnotify_status("n=%d", 3), 0);
    ck_assert_uint_eq(gw_sdnotify_watchdog_usec(), 0);
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(gw_sdnotify_watchdog_start(&loop), 0);
    ck_assert_int_eq(gw_sdnotify_watchdog_close(NULL, NULL), UV_ENOENT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    ck_assert_ptr_null(getenv("WATCHDOG_USEC"));
}
END_TEST

START_TEST(path_socket_gets_ready_and_status)
{
    listen_at(sockpath);
    setenv("WATCHDOG_USEC", "5000000", 1);
    setenv("WATCHDOG_PID", "1", 1);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    /* Children must never see the manager's variables. */
    ck_assert_ptr_null(getenv("NOTIFY_SOCKET"));
    ck_assert_ptr_null(getenv("WATCHDOG_USEC"));
    ck_assert_ptr_null(getenv("WATCHDOG_PID"));
    ck_assert(gw_sdnotify_enabled());
    ck_assert_int_eq(gw_sdnotify_ready("3 servers ready"), 0);
    ck_assert_str_eq(recv_msg(1000), "READY=1\nSTATUS=3 servers ready");
    ck_assert_int_eq(gw_sdnotify_ready(NULL), 0);
    ck_assert_str_eq(recv_msg(1000), "READY=1");
    ck_assert_int_eq(gw_sdnotify_stopping(), 0);
    ck_assert_str_eq(recv_msg(1000), "STOPPING=1");
    ck_assert_int_eq(gw_sdnotify_send("EXTEND_TIMEOUT_USEC=1"), 0);
    ck_assert_str_eq(recv_msg(1000), "EXTEND_TIMEOUT_USEC=1");
}
END_TEST

START_TEST(abstract_socket)
{
    char name[64];

    snprintf(name, sizeof name, "@gwtest-sd-%d-%ld", (int)getpid(), (long)time(NULL));
    listen_at(name);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    ck_assert_int_eq(gw_sdnotify_ready("up"), 0);
    ck_assert_str_eq(recv_msg(1000), "READY=1\nSTATUS=up");
}
END_TEST

START_TEST(reloading_carries_monotonic_usec)
{
    struct timespec a, b;
    unsigned long long usec, lo, hi;
    const char *m;

    listen_at(sockpath);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    ck_assert_int_eq(gw_sdnotify_reloading(), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    m = recv_msg(1000);
    ck_assert_int_eq(sscanf(m, "RELOADING=1\nMONOTONIC_USEC=%llu", &usec), 1);
    lo = (unsigned long long)a.tv_sec * 1000000ull + (unsigned long long)a.tv_nsec / 1000;
    hi = (unsigned long long)b.tv_sec * 1000000ull + (unsigned long long)b.tv_nsec / 1000;
    ck_assert(usec >= lo && usec <= hi);
    ck_assert_ptr_null(strchr(strchr(m, '\n') + 1, '\n'));
}
END_TEST

START_TEST(status_cannot_inject_assignments)
{
    listen_at(sockpath);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    ck_assert_int_eq(gw_sdnotify_status("server %s failed", "x\nMAINPID=1"), 0);
    ck_assert_str_eq(recv_msg(1000), "STATUS=server x MAINPID=1 failed");
    ck_assert_int_eq(gw_sdnotify_ready("a\r\nREADY=0"), 0);
    ck_assert_str_eq(recv_msg(1000), "READY=1\nSTATUS=a  READY=0");
}
END_TEST

static int ticks;
static bool closed;

static void on_stop(uv_timer_t *t)
{
    uv_close((uv_handle_t *)t, NULL);
}

static void on_closed(void *data)
{
    closed = data == &ticks;
}

START_TEST(watchdog_pings_at_half_interval)
{
    uv_loop_t loop;
    uv_timer_t stop;

    listen_at(sockpath);
    setenv("WATCHDOG_USEC", "200000", 1);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    ck_assert_uint_eq(gw_sdnotify_watchdog_usec(), 200000);
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(gw_sdnotify_watchdog_start(&loop), 0);
    ck_assert_int_eq(gw_sdnotify_watchdog_start(&loop), UV_EBUSY);
    /* The watchdog timer is unref'd: this one keeps the loop running. */
    uv_timer_init(&loop, &stop);
    uv_timer_start(&stop, on_stop, 450, 0);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    for (const char *m = recv_msg(0); *m != '\0'; m = recv_msg(0)) {
        ck_assert_str_eq(m, "WATCHDOG=1");
        ticks++;
    }
    /* One at once, then every 100 ms: 4 or 5 in 450 ms, never 1 or 9. */
    ck_assert_int_ge(ticks, 3);
    ck_assert_int_le(ticks, 6);
    ck_assert_int_eq(gw_sdnotify_watchdog_close(on_closed, &ticks), 0);
    ck_assert_int_eq(gw_sdnotify_watchdog_close(on_closed, &ticks), UV_ENOENT);
    ck_assert(!closed);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert(closed);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(watchdog_for_another_pid_is_ignored)
{
    uv_loop_t loop;
    char pid[32];

    listen_at(sockpath);
    setenv("WATCHDOG_USEC", "200000", 1);
    setenv("WATCHDOG_PID", "1", 1);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    ck_assert_uint_eq(gw_sdnotify_watchdog_usec(), 0);
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(gw_sdnotify_watchdog_start(&loop), 0);
    ck_assert_int_eq(gw_sdnotify_watchdog_close(NULL, NULL), UV_ENOENT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    ck_assert_str_eq(recv_msg(50), "");

    /* Our own pid, or garbage in WATCHDOG_USEC. */
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("NOTIFY_SOCKET", sockpath, 1);
    setenv("WATCHDOG_USEC", "200000", 1);
    setenv("WATCHDOG_PID", pid, 1);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    ck_assert_uint_eq(gw_sdnotify_watchdog_usec(), 200000);
    setenv("NOTIFY_SOCKET", sockpath, 1);
    setenv("WATCHDOG_USEC", "20ms", 1);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    ck_assert_uint_eq(gw_sdnotify_watchdog_usec(), 0);
}
END_TEST

START_TEST(bad_addresses_disable_the_module)
{
    char longname[200];

    setenv("NOTIFY_SOCKET", "relative/path", 1);
    ck_assert_int_eq(gw_sdnotify_init(), UV_EINVAL);
    ck_assert(!gw_sdnotify_enabled());
    ck_assert_int_eq(gw_sdnotify_ready(NULL), 0);
    ck_assert_ptr_null(getenv("NOTIFY_SOCKET"));

    setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
    ck_assert_int_eq(gw_sdnotify_init(), UV_EINVAL);
    setenv("NOTIFY_SOCKET", "@", 1);
    ck_assert_int_eq(gw_sdnotify_init(), UV_EINVAL);

    memset(longname, 'a', sizeof longname - 1);
    longname[0] = '/';
    longname[sizeof longname - 1] = '\0';
    setenv("NOTIFY_SOCKET", longname, 1);
    ck_assert_int_eq(gw_sdnotify_init(), UV_ENAMETOOLONG);
    ck_assert(!gw_sdnotify_enabled());
}
END_TEST

START_TEST(nobody_listening_is_an_error_code)
{
    setenv("NOTIFY_SOCKET", sockpath, 1);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    ck_assert(gw_sdnotify_enabled());
    ck_assert_int_eq(gw_sdnotify_ready(NULL), UV_ENOENT);
}
END_TEST

START_TEST(socket_is_close_on_exec)
{
    /* Count our descriptors with FD_CLOEXEC clear before and after. */
    listen_at(sockpath);
    ck_assert_int_eq(gw_sdnotify_init(), 0);
    for (int fd = 3; fd < 256; fd++) {
        char link[64], target[256];
        ssize_t n;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof target - 1);
        if (n < 0)
            continue;
        target[n] = '\0';
        if (strncmp(target, "socket:", 7) == 0 && fd != rx) {
            char cmd[64];
            snprintf(cmd, sizeof cmd, "/proc/self/fdinfo/%d", fd);
            FILE *f = fopen(cmd, "r");
            unsigned flags = 0;
            char line[128];
            ck_assert_ptr_nonnull(f);
            while (fgets(line, sizeof line, f) != NULL)
                sscanf(line, "flags: %o", &flags);
            fclose(f);
            ck_assert_uint_ne(flags & 02000000, 0); /* O_CLOEXEC */
            ck_assert_uint_ne(flags & 04000, 0);    /* O_NONBLOCK */
        }
    }
}
END_TEST

static Suite *sdnotify_suite(void)
{
    Suite *s = suite_create("sdnotify");
    TCase *tc = tcase_create("sdnotify");
    const TTest *const tests[] = {no_socket_is_a_noop,
                                  path_socket_gets_ready_and_status,
                                  abstract_socket,
                                  reloading_carries_monotonic_usec,
                                  status_cannot_inject_assignments,
                                  watchdog_pings_at_half_interval,
                                  watchdog_for_another_pid_is_ignored,
                                  bad_addresses_disable_the_module,
                                  nobody_listening_is_an_error_code,
                                  socket_is_close_on_exec};

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 10);
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sdnotify_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
