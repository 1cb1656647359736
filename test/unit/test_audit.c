/* The audit log's writer: who makes its writes. A regular file of a local
 * file system is written by the loop itself, with no thread started; a FIFO,
 * and a file whose write once held the loop GW_AUDIT_SLOW_MS, is written
 * through libuv's threadpool. Every line arrives, in order, either way. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include "gw/audit.h"
#include "gw/config.h"
#include "gw/problems.h"

static char dir[64];
static char path[128];

/* Writes to this descriptor sleep past GW_AUDIT_SLOW_MS while slow_left
 * lasts: a disk that cannot keep up, for the writes the audit makes. Every
 * other write (libuv's, check's) goes straight to the kernel. */
static int slow_fd = -1;
static int slow_left;

ssize_t write(int fd, const void *buf, size_t n)
{
    if (fd == slow_fd && slow_left > 0) {
        slow_left--;
        usleep((GW_AUDIT_SLOW_MS + 5) * 1000);
    }
    return syscall(SYS_write, fd, buf, n);
}

static void setup(void)
{
    strcpy(dir, "/tmp/gwauditXXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/audit.jsonl", dir);
    slow_fd = -1;
    slow_left = 0;
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

struct rig {
    uv_loop_t loop;
    struct gw_problems *problems;
    struct gw_audit *a;
};

static void rig_open(struct rig *r)
{
    struct gw_gateway_config g = {.audit_path = path, .audit_arguments = GW_AUDIT_ARGS_HASH};

    ck_assert_int_eq(uv_loop_init(&r->loop), 0);
    r->problems = gw_problems_new();
    r->a = gw_audit_new(&r->loop, r->problems);
    gw_audit_configure(r->a, &g);
    ck_assert(gw_audit_on(r->a));
}

/* Queues lines `from`..`to`-1 and runs the loop until they are written. */
static void lines(struct rig *r, int from, int to)
{
    char line[64];

    for (int i = from; i < to; i++) {
        int n = snprintf(line, sizeof line, "{\"n\":%d}", i);
        gw_audit_write(r->a, line, (size_t)n, NULL);
    }
    for (int i = 0; i < 200 && gw_audit_written(r->a) < (uint64_t)to; i++)
        uv_run(&r->loop, UV_RUN_ONCE);
    ck_assert_uint_eq(gw_audit_written(r->a), (uint64_t)to);
}

static void rig_close(struct rig *r)
{
    gw_audit_stop(r->a);
    while (uv_run(&r->loop, UV_RUN_NOWAIT) != 0)
        ;
    gw_audit_close(r->a);
    ck_assert_int_eq(uv_loop_close(&r->loop), 0);
    gw_problems_free(r->problems);
}

/* The file holds lines 0..n-1, each once, in order. */
static void check_file(int n)
{
    FILE *f = fopen(path, "r");
    char line[64], want[64];
    int i = 0;

    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL) {
        snprintf(want, sizeof want, "{\"n\":%d}\n", i++);
        ck_assert_str_eq(line, want);
    }
    fclose(f);
    ck_assert_int_eq(i, n);
}

START_TEST(test_local_file_written_by_the_loop)
{
    struct rig r;

    rig_open(&r);
    lines(&r, 0, 500);
    lines(&r, 500, 1000);
    /* libuv's pool would have started its threads at the first write */
    ck_assert_int_eq(threads(), 1);
    rig_close(&r);
    check_file(1000);
}
END_TEST

START_TEST(test_slow_write_moves_to_threads)
{
    struct rig r;

    rig_open(&r);
    lines(&r, 0, 10);
    ck_assert_int_eq(threads(), 1);
    /* the descriptor the log opened */
    for (slow_fd = 0; slow_fd < 64; slow_fd++) {
        char link[64], target[256];
        ssize_t n;
        snprintf(link, sizeof link, "/proc/self/fd/%d", slow_fd);
        n = readlink(link, target, sizeof target - 1);
        if (n > 0 && (target[n] = '\0', strcmp(target, path) == 0))
            break;
    }
    ck_assert_int_lt(slow_fd, 64);
    slow_left = 1;
    lines(&r, 10, 20); /* this batch's write holds the loop */
    ck_assert_int_eq(slow_left, 0);
    ck_assert_int_eq(threads(), 1);
    lines(&r, 20, 30); /* the next goes to the pool */
    ck_assert_int_gt(threads(), 1);
    rig_close(&r);
    check_file(30);
}
END_TEST

START_TEST(test_fifo_written_by_threads)
{
    struct rig r;
    char buf[4096];
    int rd, got = 0;

    ck_assert_int_eq(mkfifo(path, 0600), 0);
    /* a reader first, so that opening the FIFO to write does not wait */
    rd = open(path, O_RDONLY | O_NONBLOCK);
    ck_assert_int_ge(rd, 0);
    rig_open(&r);
    lines(&r, 0, 10);
    ck_assert_int_gt(threads(), 1);
    for (ssize_t n; (n = read(rd, buf, sizeof buf)) > 0;)
        for (ssize_t i = 0; i < n; i++)
            got += buf[i] == '\n';
    ck_assert_int_eq(got, 10);
    rig_close(&r);
    close(rd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("audit");
    TCase *tc = tcase_create("writer");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_local_file_written_by_the_loop);
    tcase_add_test(tc, test_slow_write_moves_to_threads);
    tcase_add_test(tc, test_fifo_written_by_threads);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
