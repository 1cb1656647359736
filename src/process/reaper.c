/* Reaps orphaned descendants without touching libuv's own children. */
#include "gw/reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw/log.h"
#include "gw/proctree.h"
#include "gw/util.h"

/* The timer catches a SIGCHLD that arrived while another scan ran and
 * zombies of children libuv stopped watching (a process handle closed
 * before its exit). */
#define SCAN_INTERVAL_MS 2000
/* A zombie of libuv's own hides the ones behind it (waitid shows the first
 * only) until libuv waits for it, which it does in the same turn of the
 * loop: look again this soon. */
#define RETRY_MS 1

struct gw_reaper {
    uv_loop_t *loop;
    uv_signal_t sigchld;
    uv_timer_t timer;
    int open_handles;
    int blocked_by; /* the live child whose zombie hid the others, or 0 */
    uint64_t reaped;
    void (*on_closed)(void *data);
    void *data;
};

/* The pids of the loop's open uv_process_t handles, gathered by uv_walk. */
struct live_pids {
    int *pids;
    size_t n, cap;
};

static void collect_process(uv_handle_t *h, void *arg)
{
    struct live_pids *lp = arg;
    if (h->type != UV_PROCESS || uv_is_closing(h))
        return;
    if (lp->n == lp->cap) {
        size_t cap = lp->cap ? lp->cap * 2 : 16;
        lp->pids = gw_xrealloc(lp->pids, cap * sizeof(*lp->pids));
        lp->cap = cap;
    }
    lp->pids[lp->n++] = ((uv_process_t *)h)->pid;
}

static int is_live(const struct live_pids *lp, int pid)
{
    for (size_t i = 0; i < lp->n; i++) {
        if (lp->pids[i] == pid)
            return 1;
    }
    return 0;
}

/* Calls fn(pid, arg) for each zombie child of this process. */
static int for_each_zombie_child(void (*fn)(int pid, void *arg), void *arg)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -errno;
    int self = (int)getpid(), count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        int pid = atoi(e->d_name);
        struct gw_proc_stat st;
        if (gw_proc_stat(pid, &st) == 0 && st.ppid == self && st.state == 'Z') {
            count++;
            if (fn)
                fn(pid, arg);
        }
    }
    closedir(d);
    return count;
}

static void on_timer(uv_timer_t *h);

struct scan_ctx {
    struct gw_reaper *r;
    struct live_pids live;
    int reaped;
};

static void reap_one(int pid, void *arg)
{
    struct scan_ctx *c = arg;
    if (is_live(&c->live, pid))
        return; /* libuv's own child: its handle waits for it */
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
        c->reaped++;
        c->r->reaped++;
        char pidstr[16];
        snprintf(pidstr, sizeof(pidstr), "%d", pid);
        gw_log(GW_LOG_DEBUG, "reaped orphaned process", "pid", pidstr, NULL);
    }
}

/* One zombie child, left waitable, or 0 when there is none. */
static int peek_zombie(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return 0;
    return si.si_pid;
}

/* Most scans find no zombie with one waitid and cost nothing else; a scan
 * of /proc (a read per process of the machine) is left for a zombie of
 * libuv's that stayed in front of the others past one retry. */
int gw_reaper_scan(struct gw_reaper *r)
{
    struct scan_ctx c = {.r = r};
    int pid = peek_zombie();
    if (pid == 0) {
        r->blocked_by = 0;
        return 0;
    }
    uv_walk(r->loop, collect_process, &c.live);
    while (pid != 0 && !is_live(&c.live, pid)) {
        int before = c.reaped;
        reap_one(pid, &c);
        if (c.reaped == before)
            break; /* not waitable after all: leave it to the /proc scan */
        pid = peek_zombie();
    }
    if (pid == 0) {
        r->blocked_by = 0;
    } else if (pid == r->blocked_by) {
        for_each_zombie_child(reap_one, &c);
        r->blocked_by = 0;
    } else {
        r->blocked_by = pid;
        uv_timer_start(&r->timer, on_timer, RETRY_MS, SCAN_INTERVAL_MS);
    }
    free(c.live.pids);
    return c.reaped;
}

int gw_reaper_count_zombies(void)
{
    return for_each_zombie_child(NULL, NULL);
}

uint64_t gw_reaper_reaped(const struct gw_reaper *r)
{
    return r->reaped;
}

static void on_sigchld(uv_signal_t *h, int signum)
{
    gw_reaper_scan(h->data);
}

static void on_timer(uv_timer_t *h)
{
    gw_reaper_scan(h->data);
}

static void on_handle_closed(uv_handle_t *h)
{
    struct gw_reaper *r = h->data;
    if (--r->open_handles > 0)
        return;
    if (r->on_closed)
        r->on_closed(r->data);
    free(r);
}

int gw_reaper_start(uv_loop_t *loop, struct gw_reaper **out)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        return -errno;
    struct gw_reaper *r = calloc(1, sizeof(*r));
    if (!r)
        return UV_ENOMEM;
    r->loop = loop;
    int err = uv_signal_init(loop, &r->sigchld);
    if (err < 0)
        goto fail_signal;
    r->sigchld.data = r;
    r->open_handles++;
    uv_timer_init(loop, &r->timer);
    r->timer.data = r;
    r->open_handles++;
    err = uv_signal_start(&r->sigchld, on_sigchld, SIGCHLD);
    if (err < 0)
        goto fail_start;
    uv_timer_start(&r->timer, on_timer, SCAN_INTERVAL_MS, SCAN_INTERVAL_MS);
    uv_unref((uv_handle_t *)&r->sigchld);
    uv_unref((uv_handle_t *)&r->timer);
    *out = r;
    return 0;

fail_start:
    /* Handles are freed in their close callback; nothing is reported. */
    gw_reaper_stop(r, NULL, NULL);
    return err;
fail_signal:
    free(r);
    return err;
}

void gw_reaper_stop(struct gw_reaper *r, void (*on_closed)(void *data), void *data)
{
    gw_reaper_scan(r);
    r->on_closed = on_closed;
    r->data = data;
    uv_close((uv_handle_t *)&r->sigchld, on_handle_closed);
    uv_close((uv_handle_t *)&r->timer, on_handle_closed);
}
