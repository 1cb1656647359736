/* The config watch: a write in the watched directory is seen by the
 * directory watch; a write through a hard link in another directory is not
 * (inotify reports it to that directory), so only the stat poll sees it;
 * a burst of writes is debounced into one callback; a reload can retime
 * the poll; closing frees it. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "gw/watch.h"

struct fx {
    uv_loop_t loop;
    char root[64], dir[96], other[96], path[128], link[128];
    struct gw_watch *w;
    int fired, closed;
};

static void on_change(void *data)
{
    struct fx *f = data;
    f->fired++;
}

static void on_closed(void *data)
{
    struct fx *f = data;
    f->closed = 1;
}

static void append(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void fx_start(struct fx *f, uint64_t poll_ms)
{
    memset(f, 0, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/mcpgw-watch-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->root));
    snprintf(f->dir, sizeof f->dir, "%s/a", f->root);
    snprintf(f->other, sizeof f->other, "%s/b", f->root);
    snprintf(f->path, sizeof f->path, "%s/mcp.yaml", f->dir);
    snprintf(f->link, sizeof f->link, "%s/mcp.yaml", f->other);
    ck_assert_int_eq(mkdir(f->dir, 0700), 0);
    ck_assert_int_eq(mkdir(f->other, 0700), 0);
    int fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(link(f->path, f->link), 0);
    uv_loop_init(&f->loop);
    ck_assert_int_eq(gw_watch_start(&f->loop, f->path, 20, poll_ms, on_change, f, &f->w), 0);
}

/* Runs the loop until the callback count reaches `want` or `ms` pass. */
static void run_until(struct fx *f, int want, uint64_t ms)
{
    uint64_t end = uv_hrtime() / 1000000 + ms;
    while (f->fired < want && uv_hrtime() / 1000000 < end) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(2000);
    }
}

static void fx_done(struct fx *f)
{
    gw_watch_close(f->w, on_closed, f);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(f->closed, 1);
    ck_assert_int_eq(uv_loop_close(&f->loop), 0);
    unlink(f->link);
    unlink(f->path);
    rmdir(f->other);
    rmdir(f->dir);
    rmdir(f->root);
}

START_TEST(test_directory_event)
{
    struct fx f;
    fx_start(&f, 60000); /* the poll cannot be what sees it */
    run_until(&f, 1, 100);
    ck_assert_int_eq(f.fired, 0);
    for (int i = 0; i < 5; i++)
        append(f.path, "x: 1\n");
    run_until(&f, 1, 3000);
    ck_assert_int_eq(f.fired, 1);
    run_until(&f, 2, 100); /* the burst was one change */
    ck_assert_int_eq(f.fired, 1);
    fx_done(&f);
}
END_TEST

START_TEST(test_poll_sees_write_through_link)
{
    struct fx f;
    fx_start(&f, 50);
    run_until(&f, 1, 150);
    ck_assert_int_eq(f.fired, 0); /* an unchanged file is no change */
    append(f.link, "y: 2\n");
    run_until(&f, 1, 3000);
    ck_assert_int_eq(f.fired, 1);
    unlink(f.path); /* gone is a change too */
    run_until(&f, 2, 3000);
    ck_assert_int_eq(f.fired, 2);
    fx_done(&f);
}
END_TEST

/* A reload that shortens gateway.reload.poll_interval_ms takes effect on
 * the running watch: a write only the poll can see is seen soon after. */
START_TEST(test_retimed_poll)
{
    struct fx f;
    fx_start(&f, 60000);
    gw_watch_set_timing(f.w, 20, 50);
    append(f.link, "z: 3\n");
    run_until(&f, 1, 3000);
    ck_assert_int_eq(f.fired, 1);
    fx_done(&f);
}
END_TEST

static Suite *watch_suite(void)
{
    Suite *s = suite_create("watch");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_directory_event);
    tcase_add_test(tc, test_poll_sees_write_through_link);
    tcase_add_test(tc, test_retimed_poll);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(watch_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
