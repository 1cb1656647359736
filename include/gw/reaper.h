/* The child reaper: the daemon is a child subreaper (PR_SET_CHILD_SUBREAPER,
 * security.md P3), so descendants orphaned by launchers such as npx, uvx or
 * sh come back to it and must be waited for.
 *
 * libuv waits only for the pids of its own uv_process_t handles, with
 * waitpid(pid); a waitpid(-1) would steal their exit status and those
 * handles would never see their exit. So on SIGCHLD (its own uv_signal_t
 * watcher beside libuv's) and on a slow timer, the reaper scans /proc for
 * zombie children of the daemon whose pid belongs to no open uv_process_t
 * of the loop (found with uv_walk) and waits for exactly those.
 *
 * Its handles are unreferenced: they never keep the loop alive. Code that
 * forks outside libuv (system(), popen()) must wait for its child before
 * returning to the loop, or the reaper may collect it first. */
#ifndef GW_REAPER_H
#define GW_REAPER_H

#include <stdint.h>
#include <uv.h>

struct gw_reaper;

/* Makes the process a child subreaper and starts watching `loop`. Returns 0
 * and sets *out (owned by the caller until gw_reaper_stop's callback), or a
 * negative code. */
int gw_reaper_start(uv_loop_t *loop, struct gw_reaper **out);

/* Closes the handles; `on_closed` (may be NULL) fires once they are closed,
 * after which the reaper has been freed. The process stays a subreaper. */
void gw_reaper_stop(struct gw_reaper *r, void (*on_closed)(void *data), void *data);

/* Scans now; returns how many zombies were reaped by this call. */
int gw_reaper_scan(struct gw_reaper *r);

/* Zombies reaped since start. */
uint64_t gw_reaper_reaped(const struct gw_reaper *r);

/* Counts the calling process's children that are zombies (every one, also
 * libuv's not yet waited for). For tests and /metrics. */
int gw_reaper_count_zombies(void);

#endif
