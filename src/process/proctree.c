/* An instance's process tree: a cgroup v2 when the daemon may make one,
 * else what /proc shows (proctree.h). */
#include "gw/proctree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gw/log.h"
#include "gw/util.h"

#define STOP_ROUNDS  8  /* SIGSTOP sweeps before the SIGKILL, at most */
#define PENDING_MAX  64 /* cgroups waiting to be empty before their rmdir */
#define CG_PREFIX    "mcpgw-"
#define CG_LEAF      CG_PREFIX "daemon" /* the daemon's own leaf, never stale */
#define CG_PATH_MAX  512
#define PROC_LINE_SZ 512

struct member {
    int pid;
    unsigned long long start; /* /proc/<pid>/stat field 22 */
};

struct gw_proctree {
    char *cg;                      /* the cgroup's directory, or NULL */
    struct gw_proctree_limits lim; /* those that hold here */
    int leader;
    unsigned long long leader_start;
    struct member *m; /* without a cgroup: the processes found last */
    size_t n, cap;
};

/* The decision, made once: 0 not yet, 1 cgroups, -1 /proc. */
static int mode;
static char base[CG_PATH_MAX];      /* the daemon's own cgroup directory */
static char home[CG_PATH_MAX + 16]; /* where the daemon lives between forks: base or its leaf */
static unsigned controllers;        /* CTL_* enabled for the instances */
static char limits_why[2 * CG_PATH_MAX + 256]; /* why the others are not */

enum { CTL_MEMORY = 1, CTL_PIDS = 2, CTL_CPU = 4 };
static const char *const ctl_names[] = {"memory", "pids", "cpu"};
#define NCTL 3
static unsigned seq;
static char *pending[PENDING_MAX];

/* ---- /proc ---- */

/* The command name may hold spaces and parentheses: fields are read after
 * the last ')'. */
int gw_proc_stat(int pid, struct gw_proc_stat *out)
{
    char path[64], buf[PROC_LINE_SZ];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p ||
        sscanf(p + 1,
               " %c %d %*d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
               &out->state, &out->ppid, &out->sid, &out->start) != 4)
        return -1;
    out->pid = pid;
    return 0;
}

static int is_dead(char state)
{
    return state == 'Z' || state == 'X' || state == 'x';
}

/* Every process of the machine that is not dead. New array in *out. */
static size_t scan_proc(struct gw_proc_stat **out)
{
    size_t n = 0, cap = 256;
    struct gw_proc_stat *a = gw_xmalloc(cap * sizeof(*a));
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (n == cap) {
            cap *= 2;
            a = gw_xrealloc(a, cap * sizeof(*a));
        }
        if (gw_proc_stat(atoi(e->d_name), &a[n]) == 0 && !is_dead(a[n].state))
            n++;
    }
    if (d)
        closedir(d);
    *out = a;
    return n;
}

static int by_pid(const void *a, const void *b)
{
    const struct gw_proc_stat *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Marks in `in` the processes of `a` (sorted by pid) that descend from one
 * already marked, until nothing changes; returns how many are marked. */
static size_t close_over_children(const struct gw_proc_stat *a, size_t n, char *in)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += in[i] != 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            struct gw_proc_stat key = {.pid = a[i].ppid};
            const struct gw_proc_stat *parent =
                in[i] ? NULL : bsearch(&key, a, n, sizeof(*a), by_pid);
            if (parent && in[parent - a]) {
                in[i] = 1;
                changed = 1;
                count++;
            }
        }
    }
    return count;
}

static int known(const struct gw_proctree *t, const struct gw_proc_stat *p)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->m[i].pid == p->pid && t->m[i].start == p->start)
            return 1;
    }
    return 0;
}

/* Replaces the members with the tree as /proc shows it now; returns how
 * many of them were not members before. */
static size_t refresh(struct gw_proctree *t)
{
    struct gw_proc_stat *a;
    size_t n = scan_proc(&a), added = 0;
    qsort(a, n, sizeof(*a), by_pid);
    char *in = gw_xcalloc(n ? n : 1, 1);
    int self = (int)getpid(), reused = 0;
    for (size_t i = 0; i < n; i++)
        reused |= a[i].pid == t->leader && a[i].start != t->leader_start;
    /* The session outlives its leader while members remain; once the
     * leader's pid names another process, the id may be someone else's. */
    for (size_t i = 0; i < n; i++) {
        const struct gw_proc_stat *p = &a[i];
        if (known(t, p) || (p->pid == t->leader && p->start == t->leader_start) ||
            (!reused && p->sid == t->leader && p->start >= t->leader_start))
            in[i] = 1;
    }
    size_t count = close_over_children(a, n, in);
    for (size_t i = 0; i < n && count > 0; i++)
        in[i] &= a[i].pid != self;
    struct member *m = gw_xmalloc((count ? count : 1) * sizeof(*m));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in[i])
            continue;
        added += !known(t, &a[i]);
        m[k++] = (struct member){a[i].pid, a[i].start};
    }
    free(t->m);
    t->m = m;
    t->n = t->cap = k;
    free(in);
    free(a);
    return added;
}

/* Signals a member unless its pid now names another process; returns 1
 * when it did. */
static int signal_member(const struct member *m, int sig)
{
    struct gw_proc_stat p;
    return gw_proc_stat(m->pid, &p) == 0 && p.start == m->start && !is_dead(p.state) &&
           kill(m->pid, sig) == 0;
}

/* ---- cgroup files ---- */

static int write_file(const char *dir, const char *name, const char *text)
{
    char path[CG_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t len = (ssize_t)strlen(text), w = write(fd, text, (size_t)len);
    int err = w == len ? 0 : (w < 0 ? -errno : -EIO);
    close(fd);
    return err;
}

static int write_pid(const char *dir, int pid)
{
    char text[24];
    snprintf(text, sizeof(text), "%d\n", pid);
    return write_file(dir, "cgroup.procs", text);
}

/* Calls kill(pid, sig) for each process listed in the cgroup. */
static void signal_procs(const char *dir, int sig)
{
    char path[CG_PATH_MAX + 32], line[32];
    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    int self = (int)getpid();
    while (fgets(line, sizeof(line), f)) {
        int pid = atoi(line);
        if (pid > 0 && pid != self)
            kill(pid, sig);
    }
    fclose(f);
}

static void cg_kill(const char *dir)
{
    if (write_file(dir, "cgroup.kill", "1") != 0)
        signal_procs(dir, SIGKILL); /* before Linux 5.14 */
}

static bool cg_populated(const char *dir)
{
    char path[CG_PATH_MAX + 32], line[64];
    snprintf(path, sizeof(path), "%s/cgroup.events", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool populated = false;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "populated ", 10) == 0)
            populated = line[10] == '1';
    }
    fclose(f);
    return populated;
}

/* The first line of `dir`/`name`, without its newline; 0 or -1. */
static int read_line(const char *dir, const char *name, char *out, size_t cap)
{
    char path[CG_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    if (!fgets(out, (int)cap, f))
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n) {
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return true;
    }
    return false;
}

/* The daemon's threads, each counted by pids.max while it forks in an
 * instance's cgroup. */
static int self_threads(void)
{
    char line[128];
    int n = 1;
    FILE *f = fopen("/proc/self/status", "re");
    while (f && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    }
    if (f)
        fclose(f);
    return n;
}

int gw_proctree_write_limits(const char *dir, const struct gw_proctree_limits *l, int extra)
{
    char v[64];
    int err = 0, rc;
    if (l->memory) {
        snprintf(v, sizeof(v), "%llu", (unsigned long long)l->memory);
        err = write_file(dir, "memory.max", v);
        /* A limit of memory, not of memory before swap (absent without
         * swap accounting), and one kill takes the whole instance. */
        write_file(dir, "memory.swap.max", "0");
        write_file(dir, "memory.oom.group", "1");
    }
    if (l->pids > 0) {
        snprintf(v, sizeof(v), "%d", l->pids + extra);
        rc = write_file(dir, "pids.max", v);
        err = err ? err : rc;
    }
    if (l->cpu_milli) {
        /* cpu.max takes no quota under 1 ms per period. */
        unsigned long long quota = l->cpu_milli * 100;
        snprintf(v, sizeof(v), "%llu 100000", quota < 1000 ? 1000 : quota);
        rc = write_file(dir, "cpu.max", v);
        err = err ? err : rc;
    }
    return err;
}

unsigned long gw_proctree_oom_kills(const char *dir)
{
    char path[CG_PATH_MAX + 32], line[64];
    unsigned long n = 0;
    snprintf(path, sizeof(path), "%s/memory.events", dir);
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "oom_kill %lu", &n) == 1)
            break;
    }
    if (f)
        fclose(f);
    return n;
}

/* Removes the cgroups whose processes are gone. */
static void retry_pending(void)
{
    for (size_t i = 0; i < PENDING_MAX; i++) {
        if (pending[i] && (rmdir(pending[i]) == 0 || errno == ENOENT)) {
            free(pending[i]);
            pending[i] = NULL;
        }
    }
}

static void remove_cgroup(char *dir)
{
    cg_kill(dir);
    if (rmdir(dir) == 0 || errno == ENOENT) {
        free(dir);
        return;
    }
    for (size_t i = 0; i < PENDING_MAX; i++) {
        if (!pending[i]) {
            pending[i] = dir;
            return;
        }
    }
    gw_log(GW_LOG_WARN, "cannot remove an instance's cgroup yet; leaving it", "cgroup", dir, NULL);
    free(dir);
}

/* The daemon's cgroup v2 directory: "0::<path>" of /proc/self/cgroup under
 * the mount point of the cgroup2 file system (/proc/self/mountinfo). */
static int find_base(char *out, size_t cap)
{
    char line[1024], rel[CG_PATH_MAX] = "", mnt[CG_PATH_MAX] = "", root[CG_PATH_MAX];
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "0::", 3) == 0 && sscanf(line + 3, "%511s", rel) == 1)
            break;
    }
    fclose(f);
    f = fopen("/proc/self/mountinfo", "re");
    if (!rel[0] || !f) {
        if (f)
            fclose(f);
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        const char *dash = strstr(line, " - cgroup2 ");
        if (dash && sscanf(line, "%*s %*s %*s %511s %511s", root, mnt) == 2)
            break;
        mnt[0] = '\0';
    }
    fclose(f);
    size_t rl = strlen(root);
    if (!mnt[0] || (strcmp(root, "/") != 0 && strncmp(rel, root, rl) != 0))
        return -1;
    const char *tail = strcmp(root, "/") == 0 ? rel : rel + rl;
    int n = snprintf(out, cap, "%s%s", mnt, strcmp(tail, "/") == 0 ? "" : tail);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* Cgroups of a daemon that died without removing them (never the leaf:
 * its name holds no pid). */
static void remove_stale(void)
{
    DIR *d = opendir(base);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        int pid = 0;
        if (strncmp(e->d_name, CG_PREFIX, strlen(CG_PREFIX)) != 0 ||
            sscanf(e->d_name + strlen(CG_PREFIX), "%d-", &pid) != 1 || pid <= 0 ||
            pid == (int)getpid() || kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        char dir[CG_PATH_MAX + 300];
        snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
        cg_kill(dir);
        rmdir(dir);
    }
    if (d)
        closedir(d);
}

/* Enables for the instances' cgroups the controllers the daemon's cgroup
 * offers, the daemon first moving into its leaf: a cgroup other than the
 * root may not both hold processes and enable controllers for children. */
static void enable_controllers(void)
{
    char offered[256], want[64] = "", leaf[sizeof(home)];
    unsigned bits = 0;
    if (read_line(base, "cgroup.controllers", offered, sizeof(offered)) != 0)
        offered[0] = '\0';
    for (int i = 0; i < NCTL; i++) {
        if (has_word(offered, ctl_names[i])) {
            bits |= 1u << i;
            snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s+%s", want[0] ? " " : "",
                     ctl_names[i]);
        }
    }
    if (!bits) {
        snprintf(limits_why, sizeof(limits_why),
                 "the daemon's cgroup v2 (%s) offers no memory, pids or cpu controller (cgroup "
                 "v1 holds them, or the cgroup was not delegated)",
                 base);
        return;
    }
    snprintf(leaf, sizeof(leaf), "%s/" CG_LEAF, base);
    int rc = mkdir(leaf, 0755) == 0 || errno == EEXIST ? write_pid(leaf, (int)getpid()) : -errno;
    if (rc == 0) {
        snprintf(home, sizeof(home), "%s", leaf);
        rc = write_file(base, "cgroup.subtree_control", want);
    }
    if (rc != 0) {
        snprintf(limits_why, sizeof(limits_why),
                 "cannot enable %s in %s/cgroup.subtree_control: %s%s", want, base, strerror(-rc),
                 rc == -EBUSY ? " (other processes share the daemon's cgroup)" : "");
        return;
    }
    controllers = bits;
    if (bits != CTL_MEMORY + CTL_PIDS + CTL_CPU)
        snprintf(limits_why, sizeof(limits_why),
                 "the daemon's cgroup v2 (%s) offers only %s (the others were not delegated)", base,
                 offered);
}

static void decide(void)
{
    if (mode != 0)
        return;
    const char *env = getenv("MCPGW_CGROUP");
    mode = -1;
    controllers = 0;
    if (env && strcmp(env, "off") == 0) {
        snprintf(limits_why, sizeof(limits_why), "cgroups are off (MCPGW_CGROUP=off)");
        return;
    }
    char procs[CG_PATH_MAX + 16] = "";
    int found = env && env[0] == '/' ? (snprintf(base, sizeof(base), "%s", env), 0)
                                     : find_base(base, sizeof(base));
    /* Started from a daemon's leaf: the daemon's cgroup is its parent. */
    char *slash = found == 0 ? strrchr(base, '/') : NULL;
    if (slash && strcmp(slash + 1, CG_LEAF) == 0)
        *slash = '\0';
    if (found == 0)
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", base);
    if (!procs[0] || access(base, W_OK) != 0 || access(procs, W_OK) != 0) {
        snprintf(limits_why, sizeof(limits_why),
                 "the daemon has no writable cgroup v2 (cgroup v1, or not delegated)");
        gw_log(GW_LOG_INFO, "no writable cgroup: server process trees are found through /proc",
               NULL);
        return;
    }
    mode = 1;
    snprintf(home, sizeof(home), "%s", base);
    limits_why[0] = '\0';
    enable_controllers();
    remove_stale();
    gw_log(GW_LOG_INFO, "each server instance runs in its own cgroup", "cgroup", base, "limits",
           limits_why[0] ? limits_why : "memory, pids, cpu", NULL);
}

bool gw_proctree_cgroups(void)
{
    decide();
    return mode == 1;
}

void gw_proctree_reset(void)
{
    mode = 0;
}

int gw_proctree_limits_check(const struct gw_proctree_limits *l, char *why, size_t cap)
{
    decide();
    unsigned need =
        (l->memory ? CTL_MEMORY : 0) | (l->pids > 0 ? CTL_PIDS : 0) | (l->cpu_milli ? CTL_CPU : 0);
    unsigned missing = need & ~(mode == 1 ? controllers : 0);
    if (!missing)
        return 0;
    char names[32] = "";
    for (int i = 0; i < NCTL; i++) {
        if (missing & (1u << i))
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                     names[0] ? ", " : "", ctl_names[i]);
    }
    gw_say(why, cap, "%s: %s", names, limits_why);
    return -ENOTSUP;
}

/* ---- the tree ---- */

/* The limits are in place before the fork, so the child is born under
 * them, but for the daemon's own time there: pids.max counts its threads,
 * so it is that much higher until the daemon has left, and memory.max
 * waits until then (the OOM killer would choose the daemon, the largest
 * process in the cgroup; the child is exec'ing bubblewrap meanwhile). */
struct gw_proctree *gw_proctree_new(const struct gw_proctree_limits *l)
{
    struct gw_proctree *t = gw_xcalloc(1, sizeof(*t));
    if (!gw_proctree_cgroups())
        return t;
    retry_pending();
    char dir[CG_PATH_MAX + 48];
    snprintf(dir, sizeof(dir), "%s/" CG_PREFIX "%d-%u", base, (int)getpid(), ++seq);
    if (mkdir(dir, 0755) != 0) {
        gw_log(GW_LOG_WARN, "cannot create a cgroup for a server instance", "cgroup", dir, "error",
               strerror(errno), NULL);
        return t;
    }
    t->cg = gw_xstrdup(dir);
    if (!l)
        return t;
    /* What does not hold here is said by the server's Problem. */
    t->lim = (struct gw_proctree_limits){controllers & CTL_MEMORY ? l->memory : 0,
                                         controllers & CTL_PIDS ? l->pids : 0,
                                         controllers & CTL_CPU ? l->cpu_milli : 0};
    struct gw_proctree_limits early = {0, t->lim.pids, t->lim.cpu_milli};
    int rc = gw_proctree_write_limits(dir, &early, self_threads());
    if (rc != 0)
        gw_log(GW_LOG_WARN, "cannot set a server instance's limits", "cgroup", dir, "error",
               strerror(-rc), NULL);
    return t;
}

bool gw_proctree_oom_killed(const struct gw_proctree *t)
{
    return t->cg && t->lim.memory && gw_proctree_oom_kills(t->cg) > 0;
}

void gw_proctree_spawn_begin(struct gw_proctree *t)
{
    if (t->cg && write_pid(t->cg, (int)getpid()) != 0) {
        rmdir(t->cg);
        free(t->cg);
        t->cg = NULL;
    }
}

void gw_proctree_spawn_end(struct gw_proctree *t, int pid)
{
    if (t->cg && write_pid(home, (int)getpid()) != 0) {
        /* The daemon is stuck in the instance's cgroup: that cgroup must
         * never be killed, and no other one made. */
        gw_log(GW_LOG_ERROR, "cannot leave an instance's cgroup; cgroups are no longer used",
               "cgroup", t->cg, NULL);
        free(t->cg);
        t->cg = NULL;
        mode = -1;
        snprintf(limits_why, sizeof(limits_why), "the daemon could not leave a cgroup");
    }
    struct gw_proctree_limits late = {t->lim.memory, t->lim.pids, 0};
    if (t->cg && (late.memory || late.pids) && gw_proctree_write_limits(t->cg, &late, 0) != 0)
        gw_log(GW_LOG_WARN, "cannot set a server instance's limits", "cgroup", t->cg, NULL);
    struct gw_proc_stat p;
    t->leader = pid;
    if (pid > 0 && gw_proc_stat(pid, &p) == 0)
        t->leader_start = p.start;
}

void gw_proctree_snapshot(struct gw_proctree *t)
{
    if (!t->cg && t->leader > 0)
        refresh(t);
}

void gw_proctree_signal(struct gw_proctree *t, int sig)
{
    if (t->leader <= 0)
        return;
    if (t->cg) {
        if (sig == SIGKILL)
            cg_kill(t->cg);
        else
            signal_procs(t->cg, sig);
        return;
    }
    if (sig != SIGKILL) {
        refresh(t);
        for (size_t i = 0; i < t->n; i++)
            signal_member(&t->m[i], sig);
        return;
    }
    /* A stopped process neither forks nor exits, so its children stay
     * linked to it until the SIGKILL. */
    for (int round = 0; round < STOP_ROUNDS; round++) {
        size_t added = refresh(t);
        for (size_t i = 0; i < t->n; i++)
            signal_member(&t->m[i], SIGSTOP);
        if (added == 0 && round > 0)
            break;
    }
    for (size_t i = 0; i < t->n; i++)
        signal_member(&t->m[i], SIGKILL);
}

bool gw_proctree_alive(struct gw_proctree *t)
{
    if (t->cg)
        return cg_populated(t->cg);
    for (size_t i = 0; i < t->n; i++) {
        struct gw_proc_stat p;
        if (gw_proc_stat(t->m[i].pid, &p) == 0 && p.start == t->m[i].start && !is_dead(p.state))
            return true;
    }
    return false;
}

void gw_proctree_free(struct gw_proctree *t)
{
    if (t == NULL)
        return;
    if (t->cg)
        remove_cgroup(t->cg);
    else if (gw_proctree_alive(t))
        gw_proctree_signal(t, SIGKILL);
    free(t->m);
    free(t);
}

/* ---- the daemon's exit ---- */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int gw_proctree_kill_all(uint64_t wait_ms)
{
    struct gw_proctree all = {.leader = (int)getpid()};
    struct gw_proc_stat self;
    int killed = 0;
    if (gw_proc_stat(all.leader, &self) == 0)
        all.leader_start = self.start;
    /* Every descendant, whatever its session: the daemon itself is the
     * root, so refresh() finds its children and theirs. */
    for (int round = 0; round < STOP_ROUNDS; round++) {
        size_t added = refresh(&all);
        for (size_t i = 0; i < all.n; i++)
            signal_member(&all.m[i], SIGSTOP);
        if (added == 0)
            break;
    }
    for (size_t i = 0; i < all.n; i++)
        killed += signal_member(&all.m[i], SIGKILL);
    free(all.m);
    for (size_t i = 0; i < PENDING_MAX; i++) {
        if (pending[i])
            cg_kill(pending[i]);
    }
    for (uint64_t waited = 0;; waited += 5) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        retry_pending();
        int left = 0;
        for (size_t i = 0; i < PENDING_MAX; i++)
            left += pending[i] != NULL;
        siginfo_t si = {0};
        int children = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
        if ((!children && left == 0) || waited >= wait_ms)
            break;
        sleep_ms(5);
    }
    if (killed > 0) {
        char n[16];
        snprintf(n, sizeof(n), "%d", killed);
        gw_log(GW_LOG_WARN, "killed processes left behind by server instances", "count", n, NULL);
    }
    return killed;
}
