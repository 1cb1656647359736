/* Containment of a stdio instance's whole process tree (security.md P2,
 * P3): a descendant that calls setsid() leaves the instance's process
 * group, and one that ignores SIGTERM would outlive the stop sequence.
 *
 * With cgroups v2 and a writable (delegated, `Delegate=yes`) cgroup of its
 * own, the daemon gives each instance a child cgroup, mcpgw-<pid>-<n>
 * under its own. The child is born inside it: the daemon moves itself into
 * the instance's cgroup for the fork and back right after, so no
 * descendant can escape between the fork and a later move (a pid written to
 * cgroup.procs after uv_spawn returned would leave whatever the child
 * forked before that outside). Signalling the tree signals every process in
 * the cgroup (cgroup.kill for SIGKILL), and the cgroup is removed once
 * empty.
 *
 * Without one, the tree is found in /proc: the processes of the leader's
 * session, every descendant of the leader while it lives, and the
 * descendants of every process found before (identified by pid and start
 * time, so a reused pid is never signalled). A SIGKILL first stops the
 * tree with SIGSTOP, looking again until nothing new appears, so nothing
 * forks away during the kill. What this cannot see: a descendant that both
 * left the session and lost its parent before the instance was stopped
 * (e.g. a double fork and setsid while the server runs, or one left by a
 * leader that crashed). The daemon collects those when it exits
 * (gw_proctree_kill_all).
 *
 * Limits (memory.max, pids.max, cpu.max) need the controllers enabled in
 * the daemon's cgroup's cgroup.subtree_control, which cgroup v2 allows
 * only for a cgroup with no process of its own: at the first use the
 * daemon moves itself into a leaf, mcpgw-daemon, enables the memory, pids
 * and cpu controllers its cgroup offers, and comes back to that leaf after
 * each fork; instance cgroups are the leaf's siblings. A host whose
 * cgroup v2 offers none (cgroup v1 holds them, or the cgroup is not
 * delegated) runs instances without limits, and says so.
 *
 * MCPGW_CGROUP=off in the daemon's environment disables the cgroup path;
 * MCPGW_CGROUP=<absolute directory> stands that directory for the
 * daemon's own cgroup (tests, on a tree of plain files). */
#ifndef GW_PROCTREE_H
#define GW_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gw_proctree;

/* What the gateway reads of /proc/<pid>/stat. */
struct gw_proc_stat {
    int pid, ppid, sid;
    char state;               /* R, S, D, Z, … */
    unsigned long long start; /* in clock ticks since boot: with pid, a process's identity */
};

/* Fills *out for `pid`: 0, or -1 when it cannot be read (gone). */
int gw_proc_stat(int pid, struct gw_proc_stat *out);

/* True when instances get a cgroup (decided on first use). */
bool gw_proctree_cgroups(void);

/* Forgets the decision so the next use looks again, honouring
 * MCPGW_CGROUP as it is now. For tests. */
void gw_proctree_reset(void);

/* An instance's limits; 0: none. */
struct gw_proctree_limits {
    uint64_t memory;    /* bytes: memory.max (and no swap) */
    int pids;           /* processes and threads: pids.max */
    uint64_t cpu_milli; /* thousandths of a core: cpu.max */
};

/* 0 when every limit `l` sets holds on this host, else -ENOTSUP with the
 * limits that do not and why in `why` ("memory, pids: …"). */
int gw_proctree_limits_check(const struct gw_proctree_limits *l, char *why, size_t cap);

/* A tree with no process yet; with cgroups, its cgroup is created (on
 * failure the tree falls back to /proc) with the limits of `l` (NULL:
 * none) that hold here (gw_proctree_limits_check says which do not):
 * written before the fork, memory.max and the exact pids.max as soon as
 * the daemon has left (gw_proctree_spawn_end). Never NULL. */
struct gw_proctree *gw_proctree_new(const struct gw_proctree_limits *l);

/* Writes the limits of `l` into the cgroup directory `dir` (pids.max
 * `extra` higher: the daemon's threads while it forks there). 0 or a
 * negative errno. */
int gw_proctree_write_limits(const char *dir, const struct gw_proctree_limits *l, int extra);

/* How many processes the memory limit of the cgroup `dir` killed
 * (memory.events, oom_kill); 0 when it cannot be read. */
unsigned long gw_proctree_oom_kills(const char *dir);

/* Whether the tree's memory limit killed one of its processes. */
bool gw_proctree_oom_killed(const struct gw_proctree *t);

/* Around the spawn of the leader: while between the two calls, a fork by
 * the daemon lands in the tree's cgroup. `pid` is the leader, or 0 when the
 * spawn failed. */
void gw_proctree_spawn_begin(struct gw_proctree *t);
void gw_proctree_spawn_end(struct gw_proctree *t, int pid);

/* Without a cgroup: looks for the tree's processes now (while the leader
 * lives, its descendants are still linked to it). With one: nothing. */
void gw_proctree_snapshot(struct gw_proctree *t);

/* Sends `sig` to every process of the tree found now (SIGKILL: the whole
 * tree, stopped first when found through /proc). */
void gw_proctree_signal(struct gw_proctree *t, int sig);

/* True while a process of the tree runs (zombies do not count). */
bool gw_proctree_alive(struct gw_proctree *t);

/* Kills what is left of the tree and removes its cgroup (later, if it is
 * not empty yet). */
void gw_proctree_free(struct gw_proctree *t);

/* At the daemon's exit, with no libuv handle left: SIGKILLs every
 * descendant of this process, reaps its children for up to `wait_ms`, and
 * removes the cgroups left. Returns how many processes it killed. */
int gw_proctree_kill_all(uint64_t wait_ms);

#endif
