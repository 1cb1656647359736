#include "gw/watch.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/util.h"

struct gw_watch {
    uv_fs_event_t event;
    uv_fs_poll_t poll;
    uv_timer_t debounce;
    char *dir, *base;
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

static void on_poll(uv_fs_poll_t *h, int status, const uv_stat_t *prev, const uv_stat_t *curr)
{
    poke(h->data);
}

int gw_watch_start(uv_loop_t *loop, const char *path, uint64_t debounce_ms, uint64_t poll_ms,
                   void (*cb)(void *data), void *data, struct gw_watch **out)
{
    struct gw_watch *w = gw_xcalloc(1, sizeof *w);
    char *a = gw_xstrdup(path), *b = gw_xstrdup(path);
    int rc;

    w->dir = gw_xstrdup(dirname(a));
    w->base = gw_xstrdup(basename(b));
    free(a);
    free(b);
    w->debounce_ms = debounce_ms;
    w->cb = cb;
    w->data = data;
    uv_timer_init(loop, &w->debounce);
    uv_fs_event_init(loop, &w->event);
    uv_fs_poll_init(loop, &w->poll);
    w->debounce.data = w->event.data = w->poll.data = w;
    w->open_handles = 3;
    rc = uv_fs_event_start(&w->event, on_event, w->dir, 0);
    if (rc != 0)
        gw_log(GW_LOG_WARN, "cannot watch the config directory; polling only", "dir", w->dir,
               "error", uv_strerror(rc), NULL);
    uv_fs_poll_start(&w->poll, on_poll, path, (unsigned)poll_ms);
    *out = w;
    return 0;
}

static void on_closed(uv_handle_t *h)
{
    struct gw_watch *w = h->data;

    if (--w->open_handles > 0)
        return;
    if (w->close_cb != NULL)
        w->close_cb(w->close_data);
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
