/* Watches the config file: uv_fs_event_t on its directory (editors write a
 * temporary file and rename it over the original, which a watch on the
 * file itself would miss) plus a poll of the path's stat() every poll_ms
 * as a fallback for file systems without inotify (and for a file changed
 * through a link in another directory, which the directory watch does not
 * see). Events are debounced: the callback runs
 * once the file has been quiet for `debounce_ms`. Deleting and re-creating
 * the file are changes like any other. */
#ifndef GW_WATCH_H
#define GW_WATCH_H

#include <stdint.h>
#include <uv.h>

struct gw_watch;

/* Returns 0 and sets *out, or a negative code (the directory cannot be
 * watched; the poll still runs when only the event watch failed). */
int gw_watch_start(uv_loop_t *loop, const char *path, uint64_t debounce_ms, uint64_t poll_ms,
                   void (*cb)(void *data), void *data, struct gw_watch **out);

/* A reload changed gateway.reload: later changes are debounced by
 * `debounce_ms`, and the poll runs every `poll_ms` from now on (a change
 * already waiting out the old debounce keeps its deadline). */
void gw_watch_set_timing(struct gw_watch *w, uint64_t debounce_ms, uint64_t poll_ms);

/* Closes the handles; `cb` (may be NULL) runs once they are closed and the
 * watch is freed. */
void gw_watch_close(struct gw_watch *w, void (*cb)(void *data), void *data);

#endif
