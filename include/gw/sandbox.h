/* A stdio server instance in a sandbox of its own (security.md X1-X5,
 * docs/hardening.md "Sandboxed servers"): bubblewrap, exec'd in place of
 * the server's command from the ordinary spawn path, so the instance keeps
 * its process group, its cgroup and its stop sequence.
 *
 * Inside, the instance sees /usr (and the /bin, /lib… links to it), the
 * few files of /etc that programs need to run and resolve names, its own
 * /proc, /dev, a size-capped /tmp, its home (its working directory unless
 * the server sets cwd, then bound read-only), the directory of its
 * command when that is outside /usr, and the config's `read` and `write`
 * paths. Never: the config file, gateway.state_dir beyond its own home,
 * the artifacts, the daemon's HOME, the host's /proc, and with network
 * none the host's network (loopback included). User, PID, IPC, UTS,
 * cgroup and network namespaces; no capabilities; no further user
 * namespaces; killed when the daemon dies.
 *
 * This module builds what to exec and makes and removes homes; it owns no
 * handle (a sweep of old homes is one work request). */
#ifndef GW_SANDBOX_H
#define GW_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "gw/config.h"

/* Whether this host can sandbox now: 0 with bwrap's path in *bwrap
 * (static), or a negative error with the reason in `why` (bubblewrap not
 * on PATH, user namespaces refused). The answer is kept, and a refusal is
 * looked at again after a minute, so installing bubblewrap needs no
 * restart. Runs bwrap once, synchronously (a few milliseconds). */
int gw_sandbox_available(const char **bwrap, char *why, size_t cap);

/* What the spawner knows of one instance. */
struct gw_sandbox_spec {
    const struct gw_sandbox_config *cfg;
    const char *bwrap;        /* from gw_sandbox_available */
    const char *command_path; /* resolved, absolute */
    char *const *args;        /* the server's arguments, without argv[0] */
    size_t nargs;
    const char *cwd; /* bound read-only and entered when cwd_set */
    bool cwd_set;
    const char *home; /* the instance's home on the host (gw_sandbox_home_make) */
    /* Paths never visible, whatever is bound: hidden under an empty
     * directory or /dev/null when a bound path holds them. */
    const char *const *hide;
    size_t nhide;
    /* network: [list]: the daemon's executable (its real path), run as
     * the relay in front of the server, and the directory of the proxy's
     * socket (gw/netproxy.h), both bound at GW_SANDBOX_RUN. */
    const char *relay_exe;
    const char *proxy_dir;
};

/* Where the relay and the proxy's socket are inside. */
#define GW_SANDBOX_RUN "/run/mcpgw"

/* The home's path inside the sandbox (also HOME). */
#define GW_SANDBOX_HOME "/home/sandbox"

/* The files bwrap copies into the sandbox's root (--file FD) instead of
 * binding them: the spawn passes fd[i] as the child's descriptor 3 + i and
 * closes them once it has forked (gw_sandbox_fds_close). */
#define GW_SANDBOX_MAX_FDS 32
struct gw_sandbox_fds {
    int fd[GW_SANDBOX_MAX_FDS];
    size_t n;
};

/* bwrap's argv (argv[0] is bwrap's path) for `sp`, NULL-terminated, with
 * the server's command and arguments after "--"; the descriptors it names
 * are opened into *fds (n = 0 first). Free with gw_sandbox_argv_free. */
char **gw_sandbox_argv(const struct gw_sandbox_spec *sp, struct gw_sandbox_fds *fds);
void gw_sandbox_argv_free(char **argv);
void gw_sandbox_fds_close(struct gw_sandbox_fds *fds);

/* `mcpgw sandbox-relay PORT SOCKET -- COMMAND ARGS…` (main.c hands its
 * arguments from "sandbox-relay" on): the relay inside a sandbox with an
 * allow-list. Returns only on a usage or start error. */
int gw_sandbox_relay(int argc, char **argv);

/* The daemon's executable, to run as the relay: main.c gives its argv[0]
 * (the real path is taken; a bare name means /proc/self/exe). NULL
 * before. */
void gw_sandbox_set_self(const char *argv0);
const char *gw_sandbox_self(void);

/* The allow-list of `sb` with `registry` replaced by the hosts the
 * server's launcher installs from (npx/npm: the registries of npm's
 * configuration, read from `env`, the npmrc files of its cwd, `home` and
 * the system; uvx/uv: uv's index, from `env` and uv.toml), each as
 * "host[:port]". `env` is the environment the instance gets
 * (gw_child_env_build: what inherit_env passes on and the server's env),
 * NULL-terminated. New strings in *out. */
void gw_sandbox_allow_list(const struct gw_server_config *cfg, const char *home, char *const *env,
                           char ***out, size_t *nout);

/* The home of an instance of `server`, made 0700 under `state_dir`:
 * `<state_dir>/homes/<server>` (home: server, kept) or a fresh
 * `<state_dir>/homes/<server>.d/<n>` (home: dialog). 0 and a new string in
 * *out, or a negative errno with the reason in `why`. */
int gw_sandbox_home_make(const char *state_dir, const char *server, enum gw_sandbox_home kind,
                         char **out, char *why, size_t cap);

/* Removes a home made for one instance and everything in it, without
 * following a symlink the instance left there. Blocking: call it off the
 * loop (uv_queue_work). Returns 0 or a negative errno. */
int gw_sandbox_home_remove(const char *home);

/* Removes the homes: dialog that daemons now gone left under
 * `state_dir` (<state_dir>/homes/<server>.d/<pid>-<n> whose pid names no
 * process; a daemon killed outright never removed its own). Blocking;
 * returns how many. */
int gw_sandbox_homes_sweep(const char *state_dir);

/* The same, off the loop (uv_queue_work) when the loop, looking first,
 * found any to remove; logged when it removed any. */
void gw_sandbox_homes_sweep_start(uv_loop_t *loop, const char *state_dir);

#endif
