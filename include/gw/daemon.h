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

/* Runs until SIGTERM/SIGINT. Returns 0 on a clean stop, 1 when startup
 * failed (the reason was logged). */
int gw_daemon_run(const struct gw_daemon_options *opts);

#endif
