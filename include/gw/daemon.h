/* The daemon: the one loop, its signals, the current config snapshot, the
 * problems registry and the HTTP listener. main() builds the options from
 * the command line and hands over; gw_daemon_run returns the exit status. */
#ifndef GW_DAEMON_H
#define GW_DAEMON_H

#include <stdbool.h>

struct gw_daemon_options {
    const char *config_path;
    bool config_path_explicit; /* -c given: a missing file is an error */
    const char *listen;        /* --listen, overrides gateway.listen; NULL if not given */
};

/* Blocks SIGHUP, SIGTERM and SIGINT. The executable calls it before any
 * other code of its own (main.c): a signal that arrives while the process
 * starts (a unit's ExecReload, a script's kill -HUP) would otherwise take
 * its default action and kill it. gw_daemon_run() unblocks them once its
 * handlers are installed and the first load is done, so that reloads asked
 * meanwhile run once after it; the other modes of the command line call
 * gw_daemon_release_signals(). */
void gw_daemon_hold_signals(void);
void gw_daemon_release_signals(void);

/* Runs until SIGTERM/SIGINT. Returns 0 on a clean stop, 1 when startup
 * failed (the reason was logged). */
int gw_daemon_run(const struct gw_daemon_options *opts);

#endif
