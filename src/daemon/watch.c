#include "gw/watch.h"

#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gw/log.h"
#include "gw/util.h"

struct gw_watch {
    uv_fs_event_t event;
    uv_timer_t poll;
    uv_timer_t debounce;
    char *path, *dir, *base;
    struct stat last; /* the file as the previous poll saw it */
    int last_err;     /* and the error of that stat, 0 when none */
    uint64_t debounce_ms;
    void (*cb)(void *data);
    void *data;
    int open_handles;
    void (*close_cb)(void *data);
    void *close_data;
};

static void on_quiet(uv_timer_t *t)
{
    struct gw_watch *w = t->data;

    w->cb(w->data);
}

static void poke(struct gw_watch *w)
{
    uv_timer_start(&w->debounce, on_quiet, w->debounce_ms, 0);
}

static void on_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
    struct gw_watch *w = h->data;

    if (status == 0 && (filename == NULL || strcmp(filename, w->base) == 0))
        poke(w);
}

static int stat_file(const char *path, struct stat *st)
{
    if (stat(path, st) == 0)
        return 0;
    memset(st, 0, sizeof *st);
    return -errno;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode &&
           a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The poll stats on the loop thread: one stat() of a local file per
 * interval. uv_fs_poll would run it on libuv's thread pool, whose four
 * threads start at its first use, during start-up (1-2 ms on the test
 * machine, and four 8 MiB stacks), for one stat a second. */
static void on_poll(uv_timer_t *t)
{
    struct gw_watch *w = t->data;
    struct stat st;
    int err = stat_file(w->path, &st);

    if (err != w->last_err || (err == 0 && !same_file(&st, &w->last)))
        poke(w);
    w->last = st;
    w->last_err = err;
}

int gw_watch_start(uv_loop_t *loop, const char *path, uint64_t debounce_ms, uint64_t poll_ms,
                   void (*cb)(void *data), void *data, struct gw_watch **out)
{
    struct gw_watch *w = gw_xcalloc(1, sizeof *w);
    char *a = gw_xstrdup(path), *b = gw_xstrdup(path);
    int rc;

    w->path = gw_xstrdup(path);
    w->dir = gw_xstrdup(dirname(a));
    w->base = gw_xstrdup(basename(b));
    free(a);
    free(b);
    w->debounce_ms = debounce_ms;
    w->cb = cb;
    w->data = data;
    uv_timer_init(loop, &w->debounce);
    uv_fs_event_init(loop, &w->event);
    uv_timer_init(loop, &w->poll);
    w->debounce.data = w->event.data = w->poll.data = w;
    w->open_handles = 3;
    rc = uv_fs_event_start(&w->event, on_event, w->dir, 0);
    if (rc != 0)
        gw_log(GW_LOG_WARN, "cannot watch the config directory; polling only", "dir", w->dir,
               "error", uv_strerror(rc), NULL);
    w->last_err = stat_file(path, &w->last);
    uv_timer_start(&w->poll, on_poll, poll_ms, poll_ms);
    *out = w;
    return 0;
}

void gw_watch_set_timing(struct gw_watch *w, uint64_t debounce_ms, uint64_t poll_ms)
{
    w->debounce_ms = debounce_ms;
    if (uv_timer_get_repeat(&w->poll) != poll_ms)
        uv_timer_start(&w->poll, on_poll, poll_ms, poll_ms);
}

static void on_closed(uv_handle_t *h)
{
    struct gw_watch *w = h->data;

    if (--w->open_handles > 0)
        return;
    if (w->close_cb != NULL)
        w->close_cb(w->close_data);
    free(w->path);
    free(w->dir);
    free(w->base);
    free(w);
}

void gw_watch_close(struct gw_watch *w, void (*cb)(void *data), void *data)
{
    w->close_cb = cb;
    w->close_data = data;
    uv_close((uv_handle_t *)&w->debounce, on_closed);
    uv_close((uv_handle_t *)&w->event, on_closed);
    uv_close((uv_handle_t *)&w->poll, on_closed);
}
