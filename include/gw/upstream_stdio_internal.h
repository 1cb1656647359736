/* Shared by the files of the stdio transport only (upstream_stdio.c: spawn,
 * close, stop sequence, framing, stdin; upstream_stdio_stderr.c: the stderr
 * ring; the child's environment is child_env's). */
#ifndef GW_UPSTREAM_STDIO_INTERNAL_H
#define GW_UPSTREAM_STDIO_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/netproxy.h"
#include "gw/proctree.h"
#include "gw/redact.h"
#include "gw/upstream_stdio.h"

#define ELINE_MIN_CAP 256 /* first size of a partial stderr line buffer */

enum phase { PHASE_RUNNING, PHASE_CLOSE_WAIT, PHASE_TERM_WAIT, PHASE_KILLED };

struct write_req {
    uv_write_t req;
    struct gw_upstream_stdio *s;
    size_t len;
    char data[];
};

struct gw_upstream_stdio {
    struct gw_transport base; /* first: a gw_transport * is this instance */
    uv_loop_t *loop;
    struct gw_transport_cbs cbs;
    uint64_t close_wait_ms, term_wait_ms;
    char *id;
    int pid;
    char pidstr[16];

    uv_process_t proc;
    uv_pipe_t in, out, err;
    uv_timer_t timer;
    uv_idle_t flush; /* active while the cork holds bytes */
    int open_handles;

    /* Messages sent during one turn of the loop go to stdin in one write
     * before the loop next waits: at concurrency 16 that is one syscall
     * for many calls, and the server reads them in one read too. */
    char *cork;
    size_t cork_len, cork_cap;

    char *line; /* the partial stdout line */
    size_t line_len, line_cap;

    /* stderr: most servers write little or nothing there, so the partial
     * line buffer exists only while a line spans reads and the ring of kept
     * lines only from the first line on. */
    char *eline; /* the partial stderr line, at most GW_STDIO_STDERR_LINE_MAX */
    size_t eline_len, eline_cap;
    bool eline_cut;            /* bytes past GW_STDIO_STDERR_LINE_MAX were dropped */
    struct gw_redact *redact;  /* applied to each line before anything keeps it */
    struct gw_proctree *tree;  /* the descendants that left the group too */
    uint64_t memory_max;       /* the sandbox's memory limit, for the death's reason */
    char *home;                /* a sandbox's home on the host; NULL unsandboxed */
    bool home_owned;           /* home: dialog, removed after the instance */
    struct gw_netproxy *proxy; /* network: [list]; closed with the instance */
    char **ering;              /* GW_STDIO_STDERR_KEEP lines, or NULL before the first */
    size_t ering_next, ering_n;
    uint64_t rate_window;
    unsigned rate_count;
    uint64_t rate_dropped;

    struct gw_upstream_stdio_stats st;

    enum phase phase;
    int in_open, stop_requested, exited, out_done, err_done;
    int down_fired, group_killed, closing, silent;
    uint64_t exit_at, kill_at;
    int64_t exit_status;
    int term_signal;
};

/* upstream_stdio.c */
/* Moves the close sequence on once the process, its group or its streams
 * changed. */
void gw_stdio_advance(struct gw_upstream_stdio *s);
void gw_stdio_fail(struct gw_upstream_stdio *s, int code, const char *why);

/* upstream_stdio_proxy.c: network: [list]'s proxy, on a socket under the
 * state directory's run/, with `registry` read for this server's
 * launcher; 0 or a code with a sentence in `why`. */
int gw_stdio_start_proxy(struct gw_upstream_stdio *s, const struct gw_server_config *cfg,
                         const struct gw_upstream_stdio_options *o, char *why, size_t whylen);

/* upstream_stdio_stderr.c */
void gw_stdio_on_stderr(uv_stream_t *st, ssize_t n, const uv_buf_t *buf);
/* Logs how many stderr lines the rate limit dropped, if any. */
void gw_stdio_log_dropped(struct gw_upstream_stdio *s);

#endif
