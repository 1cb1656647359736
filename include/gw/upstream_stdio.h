/* The stdio upstream transport: one MCP server process per instance.
 *
 * The child runs in its own session and process group (setsid), gets
 * exactly fds 0, 1, 2 (every other daemon descriptor is made close-on-exec
 * before the spawn) and an environment built from the daemon's variables
 * that match `inherit_env` plus the server's configured `env` (later wins);
 * no MCPGW_* variable ever reaches it (security.md P1, P2, P4).
 *
 * stdout carries newline-delimited JSON-RPC: each non-empty line (a trailing
 * \r stripped) is one on_message. A line over GW_STDIO_MAX_LINE kills the
 * instance (S2). stderr is always drained, logged at most
 * GW_STDIO_STDERR_RATE lines per second, the rest counted, and the last
 * GW_STDIO_STDERR_KEEP lines kept (S4); the server's configured secrets are
 * masked in each line before it is logged or kept (P6, redact.h).
 *
 * Lifetime: gw_upstream_stdio_start() creates the instance; the caller owns
 * it until on_closed, after which it is freed and must not be touched.
 * on_down fires exactly once before on_closed: when the process exited (with
 * a sentence naming the status or signal and the pid), or when the instance
 * was failed (oversized line, write error) or killed. When the leader exits,
 * whatever is left of its process group is sent SIGTERM, then SIGKILL after
 * `term_ms`; on_closed waits for the group, stdout and stderr to end (bounded).
 *
 * The daemon must ignore SIGPIPE (P5): writes to a dead child return EPIPE.
 * Orphaned grandchildren are reaped by gw_reaper (reaper.h). */
#ifndef GW_UPSTREAM_STDIO_H
#define GW_UPSTREAM_STDIO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/transport.h"

#define GW_STDIO_MAX_LINE        (16u << 20) /* stdout line, without \r\n */
#define GW_STDIO_MAX_QUEUED      (64u << 20) /* unwritten stdin bytes */
#define GW_STDIO_STDERR_LINE_MAX 4096        /* longer stderr lines are truncated */
#define GW_STDIO_STDERR_KEEP     50          /* stderr lines kept for /v1/servers */
#define GW_STDIO_STDERR_RATE     20          /* stderr lines logged per second */

struct gw_upstream_stdio;

struct gw_upstream_stdio_options {
    /* Patterns of daemon variables the child inherits ('*' matches any
     * substring, the whole name must match). Read only during start. */
    char *const *inherit_env;
    size_t ninherit_env;
    /* Stop sequence (design §6): after closing stdin wait close_wait_ms,
     * SIGTERM the group, wait term_wait_ms, SIGKILL the group. */
    uint64_t close_wait_ms; /* default 2000 */
    uint64_t term_wait_ms;  /* default 3000 */
    /* Values masked in stderr besides the server's own secrets (redact.h),
     * such as the gateway's auth token. Read only during start. */
    const char *const *secrets;
    size_t nsecrets;
    /* The sandbox (gw/sandbox.h): with `bwrap` set, the server's command
     * runs inside one made from its config's `sandbox`, its home under
     * `state_dir`, none of `hide` visible. Read only during start. */
    const char *bwrap;
    const char *state_dir;
    const char *const *hide;
    size_t nhide;
    /* network: [list]: the relay's executable (gw_sandbox_self). */
    const char *relay_exe;
};

struct gw_upstream_stdio_stats {
    uint64_t bytes_in;  /* stdout bytes read */
    uint64_t lines_in;  /* messages delivered through on_message */
    uint64_t bytes_out; /* stdin bytes written or queued, newlines included */
    uint64_t lines_out; /* messages sent */
    uint64_t stderr_lines;
    uint64_t stderr_dropped;    /* stderr lines not logged (rate limit) */
    size_t queued;              /* stdin bytes queued, not yet written */
    size_t stdout_buffered_max; /* largest partial stdout line held */
};

/* Fills the defaults (no inherited variables, 2000 / 3000 ms). */
void gw_upstream_stdio_options_init(struct gw_upstream_stdio_options *o);

/* Spawns cfg->command_path with cfg->args in cfg->cwd (NULL: the daemon's)
 * and starts reading. `cfg` is read only during the call (the server id is
 * copied); `opts` may be NULL for the defaults; `*cbs` is copied.
 * Returns 0 and sets *out, or a negative code (UV_ENOENT, UV_EACCES, …) and
 * writes a sentence to `why` (capacity `whylen`, may be 0); then no callback
 * ever fires. The loop must run for a failed start to release its memory. */
int gw_upstream_stdio_start(uv_loop_t *loop, const struct gw_server_config *cfg,
                            const struct gw_upstream_stdio_options *opts,
                            const struct gw_transport_cbs *cbs, struct gw_upstream_stdio **out,
                            char *why, size_t whylen);

/* The instance as a gw_transport: send writes msg + "\n" (UV_ENOBUFS when
 * more than GW_STDIO_MAX_QUEUED would be queued, UV_EPIPE once down or
 * stopping); stop runs the stop sequence. */
struct gw_transport *gw_upstream_stdio_transport(struct gw_upstream_stdio *s);

/* The stop sequence of design §6; on_closed fires when the process is
 * reaped and every handle closed. Idempotent. */
void gw_upstream_stdio_stop(struct gw_upstream_stdio *s);

/* Kill now, for a hard shutdown: SIGKILL the process group and close every
 * handle without waiting for the exit (the reaper collects the zombie).
 * on_down (if not yet fired) fires during the call; on_closed follows on a
 * later loop turn. Idempotent. */
void gw_upstream_stdio_kill(struct gw_upstream_stdio *s);

/* The child's pid (also after it exited, for logs). */
int gw_upstream_stdio_pid(const struct gw_upstream_stdio *s);

void gw_upstream_stdio_get_stats(const struct gw_upstream_stdio *s,
                                 struct gw_upstream_stdio_stats *out);

/* The last stderr lines, oldest first, as a new JSON array of strings
 * (invalid UTF-8 replaced by U+FFFD). NULL only on out-of-memory. */
json_t *gw_upstream_stdio_stderr_lines(const struct gw_upstream_stdio *s);

/* Calls fn for each kept stderr line, oldest first. */
void gw_upstream_stdio_stderr_foreach(const struct gw_upstream_stdio *s,
                                      void (*fn)(void *data, const char *line), void *data);

#endif
