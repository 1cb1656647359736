/* The stdio upstream transport: spawn, framing, stderr, stop sequence.
 *
 * Close order: the stdin pipe may close first (stop); the process handle,
 * stdout, stderr and the timer close together once the process has exited
 * and its group, stdout and stderr have ended (or a deadline passed). The
 * instance is freed in the last close callback, after on_closed. */
#include "gw/upstream_stdio.h"
#include "gw/upstream_stdio_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gw/child_env.h"
#include "gw/heap.h"
#include "gw/log.h"
#include "gw/proctree.h"
#include "gw/redact.h"
#include "gw/sandbox.h"
#include "gw/util.h"

extern char **environ;

#define READ_BUF_SIZE   (64u << 10)
#define LINGER_TICK_MS  10
#define STDOUT_DRAIN_MS 250         /* after the exit, wait this long for EOFs */
#define FINAL_WAIT_MS   1000        /* after SIGKILL to the group, give up on EOFs */
#define LINE_MIN_CAP    4096        /* first size of a partial stdout line buffer */
#define LINE_KEEP_CAP   (64u << 10) /* a line buffer larger is freed when empty */
#define CORK_MIN_CAP    512         /* first size of the stdin cork */
#define CORK_DIRECT     (16u << 10) /* a message this large skips the cork */

/* One read buffer for every stream of every instance: libuv calls on_alloc
 * and then the read callback back to back on the loop thread, and both read
 * callbacks are done with the bytes when they return (a partial line is
 * copied out), so no read can overwrite bytes still in use. A buffer per
 * instance cost 64 KiB of address space and one or two resident pages per
 * instance, which adds up with a thousand leases. */
static char read_buf[READ_BUF_SIZE];

/* ---- down, close, free ---- */

static void home_remove_work(uv_work_t *w)
{
    char *home = w->data;
    if (gw_sandbox_home_remove(home) != 0)
        gw_log(GW_LOG_WARN, "cannot remove a sandbox's home", "home", home, "error",
               strerror(errno), NULL);
}

static void home_removed(uv_work_t *w, int status)
{
    free(w->data);
    free(w);
}

/* A home: dialog goes with its instance, off the loop: a server may have
 * left thousands of files in it. */
static void remove_home(struct gw_upstream_stdio *s)
{
    uv_work_t *w = gw_xcalloc(1, sizeof(*w));
    w->data = s->home;
    s->home = NULL;
    if (uv_queue_work(s->loop, w, home_remove_work, home_removed) != 0) {
        home_remove_work(w);
        home_removed(w, 0);
    }
}

static void free_instance(struct gw_upstream_stdio *s)
{
    if (s->proxy)
        gw_netproxy_close(s->proxy);
    if (s->home_owned)
        remove_home(s);
    free(s->home);
    for (size_t i = 0; s->ering && i < GW_STDIO_STDERR_KEEP; i++)
        free(s->ering[i]);
    free(s->ering);
    free(s->eline);
    gw_redact_free(s->redact);
    gw_proctree_free(s->tree);
    free(s->line);
    free(s->cork);
    free(s->id);
    free(s);
}

static void on_handle_closed(uv_handle_t *h)
{
    struct gw_upstream_stdio *s = h->data;
    if (--s->open_handles > 0)
        return;
    if (!s->silent && s->cbs.on_closed)
        s->cbs.on_closed(s->cbs.data);
    free_instance(s);
}

static void close_handle(struct gw_upstream_stdio *s, void *h)
{
    if (!uv_is_closing(h))
        uv_close(h, on_handle_closed);
}

/* What the cork still holds is written if the pipe takes it at once, as
 * queued writes are given up when the pipe closes. */
static void close_stdin(struct gw_upstream_stdio *s)
{
    if (!s->in_open)
        return;
    s->in_open = 0;
    if (s->cork_len > 0 && !s->down_fired) {
        uv_buf_t b = uv_buf_init(s->cork, (unsigned)s->cork_len);
        uv_try_write((uv_stream_t *)&s->in, &b, 1);
    }
    s->st.queued -= s->cork_len;
    s->cork_len = 0;
    uv_idle_stop(&s->flush);
    close_handle(s, &s->in);
}

static void close_all(struct gw_upstream_stdio *s)
{
    if (s->closing)
        return;
    s->closing = 1;
    gw_stdio_log_dropped(s);
    close_stdin(s);
    close_handle(s, &s->proc);
    close_handle(s, &s->out);
    close_handle(s, &s->err);
    close_handle(s, &s->timer);
    close_handle(s, &s->flush);
}

static void fire_down(struct gw_upstream_stdio *s, int code, const char *why)
{
    if (s->down_fired)
        return;
    s->down_fired = 1;
    gw_log(GW_LOG_INFO, "server instance down", "server", s->id, "pid", s->pidstr, "reason", why,
           NULL);
    if (s->cbs.on_down)
        s->cbs.on_down(s->cbs.data, code, why);
}

/* Signals the process group, the leader in case it left it, and every
 * descendant that left it (proctree.h). */
static void signal_group(struct gw_upstream_stdio *s, int sig)
{
    if (s->pid <= 0)
        return;
    kill(-s->pid, sig);
    if (!s->exited)
        kill(s->pid, sig);
    gw_proctree_signal(s->tree, sig);
    if (sig == SIGKILL && !s->group_killed) {
        s->group_killed = 1;
        s->kill_at = uv_now(s->loop);
    }
}

/* A zombie member of the group still counts; the reaper removes those
 * quickly. */
static int group_alive(const struct gw_upstream_stdio *s)
{
    return kill(-s->pid, 0) == 0 || errno == EPERM || gw_proctree_alive(s->tree);
}

/* The line buffer stays: on_message may be running on its bytes. */
static void stop_stdout(struct gw_upstream_stdio *s)
{
    if (s->out_done)
        return;
    s->out_done = 1;
    s->line_len = 0;
    uv_read_stop((uv_stream_t *)&s->out);
}

/* The instance is unusable: report it and kill the group. */
void gw_stdio_fail(struct gw_upstream_stdio *s, int code, const char *why)
{
    fire_down(s, code, why);
    stop_stdout(s);
    close_stdin(s);
    if (!s->closing && !s->group_killed) {
        signal_group(s, SIGKILL);
        s->phase = PHASE_KILLED;
    }
    if (s->exited)
        gw_stdio_advance(s);
}

/* ---- stop sequence and lingering after the exit ---- */

static void on_timer(uv_timer_t *t)
{
    struct gw_upstream_stdio *s = t->data;
    if (s->exited) {
        gw_stdio_advance(s);
    } else if (s->phase == PHASE_CLOSE_WAIT) {
        s->phase = PHASE_TERM_WAIT;
        signal_group(s, SIGTERM);
        uv_timer_start(&s->timer, on_timer, s->term_wait_ms, 0);
    } else if (s->phase == PHASE_TERM_WAIT) {
        s->phase = PHASE_KILLED;
        signal_group(s, SIGKILL);
    }
}

/* A death by the memory limit is told as such: a SIGKILL alone would not
 * say why. */
static void exit_sentence(const struct gw_upstream_stdio *s, char *buf, size_t cap)
{
    const char *when = s->stop_requested ? " after a stop" : "";
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    uint64_t v = s->memory_max;
    int u = 0;
    while (u < 4 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    if (gw_proctree_oom_killed(s->tree))
        snprintf(buf, cap, "killed: memory limit %llu %s reached", (unsigned long long)v, units[u]);
    else if (s->term_signal)
        snprintf(buf, cap, "process %d was killed by signal %d (%s)%s", s->pid, s->term_signal,
                 strsignal(s->term_signal), when);
    else
        snprintf(buf, cap, "process %d exited with status %lld%s", s->pid,
                 (long long)s->exit_status, when);
}

/* After the leader exited: deliver what stdout still holds and read the
 * last stderr lines (so on_down's owner sees them), then wait for
 * the rest of the group to end (SIGTERM at the exit, SIGKILL after
 * term_wait_ms) and for stdout and stderr to reach EOF, within bounds. */
void gw_stdio_advance(struct gw_upstream_stdio *s)
{
    if (s->closing)
        return;
    uint64_t now = uv_now(s->loop);
    if (!s->down_fired && ((s->out_done && s->err_done) || now >= s->exit_at + STDOUT_DRAIN_MS)) {
        char why[160];
        exit_sentence(s, why, sizeof(why));
        fire_down(s, UV_EOF, why);
        stop_stdout(s);
        if (s->closing)
            return; /* on_down killed the instance */
    }
    int alive = group_alive(s);
    if (s->down_fired && s->out_done && s->err_done && !alive) {
        close_all(s);
        return;
    }
    if (!s->group_killed && now >= s->exit_at + s->term_wait_ms)
        signal_group(s, SIGKILL);
    if (s->group_killed && now >= s->kill_at + FINAL_WAIT_MS) {
        close_all(s); /* something outside the group holds a pipe */
        return;
    }
    uv_timer_start(&s->timer, on_timer, LINGER_TICK_MS, 0);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int term_signal)
{
    struct gw_upstream_stdio *s = p->data;
    s->exited = 1;
    s->exit_status = status;
    s->term_signal = term_signal;
    s->exit_at = uv_now(s->loop);
    char st[24];
    snprintf(st, sizeof(st), "%lld", (long long)status);
    gw_log(GW_LOG_INFO, "server process exited", "server", s->id, "pid", s->pidstr, "status",
           term_signal ? NULL : st, "signal", term_signal ? strsignal(term_signal) : NULL, NULL);
    close_stdin(s);
    /* Its children have just lost their link to it: what the tree holds
     * now is found through the session and the earlier look. */
    gw_proctree_snapshot(s->tree);
    if (!s->group_killed && group_alive(s))
        signal_group(s, SIGTERM);
    uv_timer_stop(&s->timer);
    gw_stdio_advance(s);
}

void gw_upstream_stdio_stop(struct gw_upstream_stdio *s)
{
    if (s->stop_requested || s->closing)
        return;
    s->stop_requested = 1;
    /* Before stdin closes and the leader may exit: its descendants are
     * still linked to it. */
    if (!s->exited)
        gw_proctree_snapshot(s->tree);
    close_stdin(s);
    if (s->exited || s->phase != PHASE_RUNNING)
        return;
    s->phase = PHASE_CLOSE_WAIT;
    uv_timer_start(&s->timer, on_timer, s->close_wait_ms, 0);
}

void gw_upstream_stdio_kill(struct gw_upstream_stdio *s)
{
    if (s->closing)
        return;
    s->stop_requested = 1;
    if (!s->exited || group_alive(s))
        signal_group(s, SIGKILL);
    char why[96];
    snprintf(why, sizeof(why), "process %d was killed by the gateway", s->pid);
    fire_down(s, UV_ECANCELED, why);
    stop_stdout(s);
    close_all(s);
}

/* ---- stdout framing ---- */

/* Fails the instance for an oversized line and releases its buffer; never
 * called while on_message runs on that buffer. */
static void overflow(struct gw_upstream_stdio *s)
{
    gw_stdio_fail(s, UV_EMSGSIZE, "stdout line exceeds 16 MiB");
    free(s->line);
    s->line = NULL;
    s->line_len = s->line_cap = 0;
}

static void deliver(struct gw_upstream_stdio *s, const char *msg, size_t len)
{
    if (len > 0 && msg[len - 1] == '\r')
        len--;
    if (len == 0)
        return;
    if (len > GW_STDIO_MAX_LINE) {
        overflow(s);
        return;
    }
    if (s->down_fired || s->stop_requested)
        return; /* drained, not delivered */
    s->st.lines_in++;
    if (s->cbs.on_message)
        s->cbs.on_message(s->cbs.data, msg, len);
}

/* Appends to the partial line; fails the instance past the cap (one byte
 * more is allowed for a trailing \r). */
static int line_append(struct gw_upstream_stdio *s, const char *p, size_t n)
{
    if (s->line_len + n > GW_STDIO_MAX_LINE + 1) {
        overflow(s);
        return -1;
    }
    if (s->line_len + n > s->line_cap) {
        size_t cap = s->line_cap ? s->line_cap : LINE_MIN_CAP;
        while (cap < s->line_len + n)
            cap *= 2;
        if (cap > GW_STDIO_MAX_LINE + 1)
            cap = GW_STDIO_MAX_LINE + 1;
        s->line = gw_xrealloc(s->line, cap);
        s->line_cap = cap;
    }
    memcpy(s->line + s->line_len, p, n);
    s->line_len += n;
    if (s->line_len > s->st.stdout_buffered_max)
        s->st.stdout_buffered_max = s->line_len;
    return 0;
}

/* Delivers the buffered line and releases an oversized buffer, so one
 * large message does not pin its memory for the instance's life (nor, with
 * the trim, the process's: the buffer came from the heap if glibc's mmap
 * threshold had risen past its size). */
static void line_flush(struct gw_upstream_stdio *s)
{
    size_t len = s->line_len;
    s->line_len = 0;
    deliver(s, s->line, len);
    if (s->line && s->line_len == 0 && s->line_cap > LINE_KEEP_CAP) {
        free(s->line);
        s->line = NULL;
        s->line_cap = 0;
        gw_heap_trim_soon();
    }
}

static void frame_stdout(struct gw_upstream_stdio *s, const char *p, size_t n)
{
    const char *end = p + n;
    while (p < end && !s->out_done && !s->closing) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            line_append(s, p, (size_t)(end - p));
            return;
        }
        if (s->line_len == 0) {
            deliver(s, p, (size_t)(nl - p));
        } else if (line_append(s, p, (size_t)(nl - p)) == 0) {
            line_flush(s);
        }
        p = nl + 1;
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    *buf = uv_buf_init(read_buf, sizeof(read_buf));
}

static void on_stdout(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    struct gw_upstream_stdio *s = st->data;
    if (n > 0) {
        s->st.bytes_in += (uint64_t)n;
        frame_stdout(s, buf->base, (size_t)n);
        return;
    }
    if (n == 0)
        return;
    if (n == UV_EOF && !s->out_done && s->line_len > 0)
        line_flush(s); /* a last message without its newline */
    stop_stdout(s);
    if (s->exited)
        gw_stdio_advance(s);
}

/* ---- stdin ---- */

static void write_failed(struct gw_upstream_stdio *s, int err)
{
    char why[128];
    if (s->closing)
        return;
    snprintf(why, sizeof(why), "writing to the stdin of process %d failed: %s", s->pid,
             uv_strerror(err));
    gw_stdio_fail(s, err, why);
}

static void on_written(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    struct gw_upstream_stdio *s = w->s;
    s->st.queued -= w->len;
    free(w);
    if (status < 0 && status != UV_ECANCELED)
        write_failed(s, status);
}

static int queue_write(struct gw_upstream_stdio *s, const char *a, size_t alen, int newline)
{
    size_t len = alen + (newline ? 1 : 0);
    struct write_req *w = gw_xmalloc(sizeof(*w) + len);
    memcpy(w->data, a, alen);
    if (newline)
        w->data[alen] = '\n';
    w->s = s;
    w->len = len;
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    int err = uv_write(&w->req, (uv_stream_t *)&s->in, &b, 1, on_written);
    if (err < 0) {
        free(w);
        return err;
    }
    s->st.queued += len;
    return 0;
}

/* Writes what it can now and queues the rest; `newline` ends the bytes. */
static int write_now(struct gw_upstream_stdio *s, const char *msg, size_t len, int newline)
{
    size_t done = 0;
    if (s->st.queued == 0) {
        uv_buf_t b[2] = {uv_buf_init((char *)msg, (unsigned)len), uv_buf_init("\n", 1)};
        int n = uv_try_write((uv_stream_t *)&s->in, b, newline ? 2 : 1);
        if (n < 0 && n != UV_EAGAIN)
            return n;
        done = n > 0 ? (size_t)n : 0;
    }
    if (done < len)
        return queue_write(s, msg + done, len - done, newline);
    if (done == len && newline)
        return queue_write(s, "\n", 1, 0);
    return 0;
}

static int flush_cork(struct gw_upstream_stdio *s)
{
    size_t len = s->cork_len;
    if (len == 0)
        return 0;
    s->cork_len = 0;
    s->st.queued -= len;
    uv_idle_stop(&s->flush);
    int err = write_now(s, s->cork, len, 0);
    /* Freed once written: an idle lease kept its 512 bytes for nothing (a
     * thousand leases, half a megabyte); malloc's per-thread cache makes
     * the next one cheap. */
    free(s->cork);
    s->cork = NULL;
    s->cork_cap = 0;
    return err;
}

static void on_flush(uv_idle_t *h)
{
    struct gw_upstream_stdio *s = h->data;
    int err = flush_cork(s);
    if (err < 0)
        write_failed(s, err);
}

static void cork_append(struct gw_upstream_stdio *s, const char *msg, size_t len)
{
    size_t need = s->cork_len + len + 1;
    if (need > s->cork_cap) {
        size_t cap = s->cork_cap ? s->cork_cap * 2 : CORK_MIN_CAP;
        while (cap < need)
            cap *= 2;
        s->cork = gw_xrealloc(s->cork, cap);
        s->cork_cap = cap;
    }
    if (s->cork_len == 0)
        uv_idle_start(&s->flush, on_flush);
    memcpy(s->cork + s->cork_len, msg, len);
    s->cork[s->cork_len + len] = '\n';
    s->cork_len = need;
}

/* The cork's bytes count as queued, so the bound covers both. */
static int stdio_send(struct gw_transport *t, const char *msg, size_t len)
{
    struct gw_upstream_stdio *s = (struct gw_upstream_stdio *)t;
    if (!s->in_open || s->down_fired || s->stop_requested)
        return UV_EPIPE;
    if (len >= GW_STDIO_MAX_QUEUED || s->st.queued + len + 1 > GW_STDIO_MAX_QUEUED)
        return UV_ENOBUFS;
    if (len < CORK_DIRECT) {
        cork_append(s, msg, len);
        s->st.queued += len + 1;
    } else {
        int err = flush_cork(s);
        if (err < 0) {
            write_failed(s, err); /* the corked messages are lost with it */
            return err;
        }
        err = write_now(s, msg, len, 1);
        if (err < 0)
            return err;
    }
    s->st.bytes_out += len + 1;
    s->st.lines_out++;
    return 0;
}

static void stdio_stop(struct gw_transport *t)
{
    gw_upstream_stdio_stop((struct gw_upstream_stdio *)t);
}

static void stdio_kill(struct gw_transport *t)
{
    gw_upstream_stdio_kill((struct gw_upstream_stdio *)t);
}

static json_t *stdio_stderr(const struct gw_transport *t)
{
    return gw_upstream_stdio_stderr_lines((const struct gw_upstream_stdio *)t);
}

static void stdio_describe(const struct gw_transport *t, json_t *o)
{
    json_object_set_new(o, "pid",
                        json_integer(gw_upstream_stdio_pid((const struct gw_upstream_stdio *)t)));
}

static const char *stdio_session(const struct gw_transport *t)
{
    (void)t;
    return NULL;
}

static int stdio_pid(const struct gw_transport *t)
{
    return gw_upstream_stdio_pid((const struct gw_upstream_stdio *)t);
}

static const struct gw_transport_ops stdio_ops = {
    .send = stdio_send,
    .stop = stdio_stop,
    .kill = stdio_kill,
    .stderr_tail = stdio_stderr,
    .describe = stdio_describe,
    .session_id = stdio_session,
    .pid = stdio_pid,
};

/* ---- start ---- */

void gw_upstream_stdio_options_init(struct gw_upstream_stdio_options *o)
{
    memset(o, 0, sizeof(*o));
    o->close_wait_ms = 2000;
    o->term_wait_ms = 3000;
}

static struct gw_upstream_stdio *instance_new(uv_loop_t *loop, const struct gw_server_config *cfg,
                                              const struct gw_upstream_stdio_options *o,
                                              const struct gw_transport_cbs *cbs)
{
    struct gw_upstream_stdio *s = gw_xcalloc(1, sizeof(*s));
    s->base.ops = &stdio_ops;
    s->loop = loop;
    s->cbs = *cbs;
    s->close_wait_ms = o->close_wait_ms;
    s->term_wait_ms = o->term_wait_ms;
    s->id = gw_xstrdup(cfg->id ? cfg->id : "");
    s->redact = gw_redact_new();
    gw_redact_add_server(s->redact, cfg);
    for (size_t i = 0; i < o->nsecrets; i++)
        gw_redact_add(s->redact, o->secrets[i]);
    uv_pipe_init(loop, &s->in, 0);
    uv_pipe_init(loop, &s->out, 0);
    uv_pipe_init(loop, &s->err, 0);
    uv_timer_init(loop, &s->timer);
    uv_idle_init(loop, &s->flush);
    s->in.data = s->out.data = s->err.data = s->timer.data = s->proc.data = s->flush.data = s;
    s->open_handles = 6; /* in, out, err, timer, flush, proc (uv_spawn inits it) */
    s->in_open = 1;
    return s;
}

/* bwrap's command line in place of the server's. */
static char **sandbox_args(struct gw_upstream_stdio *s, const struct gw_server_config *cfg,
                           const struct gw_upstream_stdio_options *o, struct gw_sandbox_fds *fds)
{
    struct gw_sandbox_spec sp = {
        .cfg = &cfg->sandbox,
        .bwrap = o->bwrap,
        .command_path = cfg->command_path,
        .args = cfg->args,
        .nargs = cfg->nargs,
        .cwd = cfg->cwd,
        .cwd_set = cfg->cwd_set,
        .home = s->home,
        .hide = o->hide,
        .nhide = o->nhide,
        .relay_exe = o->relay_exe,
        .proxy_dir = s->proxy ? gw_netproxy_dir(s->proxy) : NULL,
    };
    return gw_sandbox_argv(&sp, fds);
}

static int spawn(struct gw_upstream_stdio *s, const struct gw_server_config *cfg,
                 const struct gw_upstream_stdio_options *o, char *why, size_t whylen)
{
    char **args;
    struct gw_sandbox_fds fds = {.n = 0};
    if (o->bwrap) {
        args = sandbox_args(s, cfg, o, &fds);
    } else {
        args = gw_xmalloc((cfg->nargs + 2) * sizeof(*args));
        args[0] = cfg->command ? cfg->command : cfg->command_path;
        for (size_t i = 0; i < cfg->nargs; i++)
            args[i + 1] = cfg->args[i];
        args[cfg->nargs + 1] = NULL;
    }
    char **env = gw_child_env_build(cfg, o->inherit_env, o->ninherit_env);
    uv_stdio_container_t io[3 + GW_SANDBOX_MAX_FDS] = {
        {.flags = UV_CREATE_PIPE | UV_READABLE_PIPE, .data.stream = (uv_stream_t *)&s->in},
        {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&s->out},
        {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&s->err},
    };
    /* The files bwrap copies in, as its descriptors 3…; it closes each
     * once read, so the server never holds them. */
    for (size_t i = 0; i < fds.n; i++)
        io[3 + i] = (uv_stdio_container_t){.flags = UV_INHERIT_FD, .data.fd = fds.fd[i]};
    uv_process_options_t po = {
        .exit_cb = on_exit_cb,
        .file = o->bwrap ? o->bwrap : cfg->command_path,
        .args = args,
        .env = env,
        /* bwrap enters the instance's directory itself (--chdir). */
        .cwd = o->bwrap ? "/" : cfg->cwd,
        .flags = UV_PROCESS_DETACHED,
        .stdio_count = 3 + (int)fds.n,
        .stdio = io,
    };
    gw_child_cloexec_sweep();
    const struct gw_sandbox_config *sb = &cfg->sandbox;
    struct gw_proctree_limits lim = {sb->memory, sb->pids, sb->cpu_milli};
    s->tree = gw_proctree_new(sb->enabled ? &lim : NULL);
    s->memory_max = sb->memory;
    gw_proctree_spawn_begin(s->tree);
    int err = uv_spawn(s->loop, &s->proc, &po);
    gw_proctree_spawn_end(s->tree, err < 0 ? 0 : s->proc.pid);
    gw_child_env_free(env);
    gw_sandbox_fds_close(&fds);
    if (o->bwrap)
        gw_sandbox_argv_free(args);
    else
        free(args);
    if (err < 0)
        gw_say(why, whylen, "cannot start \"%s\": %s (%s)", po.file, uv_strerror(err),
               uv_err_name(err));
    return err;
}

int gw_upstream_stdio_start(uv_loop_t *loop, const struct gw_server_config *cfg,
                            const struct gw_upstream_stdio_options *opts,
                            const struct gw_transport_cbs *cbs, struct gw_upstream_stdio **out,
                            char *why, size_t whylen)
{
    struct gw_upstream_stdio_options defaults;
    gw_upstream_stdio_options_init(&defaults);
    const struct gw_upstream_stdio_options *o = opts ? opts : &defaults;
    if (!cfg->command_path) {
        gw_say(why, whylen, "command \"%s\" was not found", cfg->command ? cfg->command : "");
        return UV_ENOENT;
    }
    char *home = NULL;
    int err = o->bwrap ? gw_sandbox_home_make(o->state_dir, cfg->id, cfg->sandbox.home, &home, why,
                                              whylen)
                       : 0;
    if (err < 0)
        return err;
    struct gw_upstream_stdio *s = instance_new(loop, cfg, o, cbs);
    s->home = home;
    s->home_owned = home && cfg->sandbox.home == GW_SANDBOX_HOME_DIALOG;
    err = o->bwrap && cfg->sandbox.network == GW_SANDBOX_NET_LIST
              ? gw_stdio_start_proxy(s, cfg, o, why, whylen)
              : 0;
    if (err == 0)
        err = spawn(s, cfg, o, why, whylen);
    if (err < 0)
        goto fail_spawn;
    s->pid = s->proc.pid;
    if (s->proxy)
        gw_netproxy_expect_relay(s->proxy, s->pid);
    snprintf(s->pidstr, sizeof(s->pidstr), "%d", s->pid);
    uv_read_start((uv_stream_t *)&s->out, on_alloc, on_stdout);
    uv_read_start((uv_stream_t *)&s->err, on_alloc, gw_stdio_on_stderr);
    gw_log(GW_LOG_INFO, "server process started", "server", s->id, "pid", s->pidstr, "command",
           cfg->command_path, NULL);
    *out = s;
    return 0;

fail_spawn:
    /* The handles are initialised and must be closed; no callback fires. */
    s->silent = 1;
    close_all(s);
    return err;
}

/* ---- accessors ---- */

struct gw_transport *gw_upstream_stdio_transport(struct gw_upstream_stdio *s)
{
    return &s->base;
}

int gw_upstream_stdio_pid(const struct gw_upstream_stdio *s)
{
    return s->pid;
}

void gw_upstream_stdio_get_stats(const struct gw_upstream_stdio *s,
                                 struct gw_upstream_stdio_stats *out)
{
    *out = s->st;
}

void gw_upstream_stdio_stderr_foreach(const struct gw_upstream_stdio *s,
                                      void (*fn)(void *data, const char *line), void *data)
{
    if (!s->ering)
        return;
    size_t first = (s->ering_next + GW_STDIO_STDERR_KEEP - s->ering_n) % GW_STDIO_STDERR_KEEP;
    for (size_t i = 0; i < s->ering_n; i++)
        fn(data, s->ering[(first + i) % GW_STDIO_STDERR_KEEP]);
}

static void append_json(void *data, const char *line)
{
    json_array_append_new(data, json_string(line));
}

json_t *gw_upstream_stdio_stderr_lines(const struct gw_upstream_stdio *s)
{
    json_t *a = json_array();
    if (a)
        gw_upstream_stdio_stderr_foreach(s, append_json, a);
    return a;
}
