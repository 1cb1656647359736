/* The audit log's writer (gw/audit.h). */
#include "gw/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw/json_out.h"
#include "gw/log.h"
#include "gw/util.h"

#define PROBLEM_ID "audit:write"

struct gw_audit {
    uv_loop_t *loop;
    struct gw_problems *problems;
    char *path; /* NULL: off */
    enum gw_audit_arguments args;
    bool required;
    int fd;           /* -1: none open */
    bool reopen;      /* open the path again once the batch on it is written */
    bool failing;     /* the last write or open failed */
    struct gw_jbuf q; /* lines waiting, each with its newline */
    size_t q_lines;
    char *w; /* the batch being written */
    size_t w_len, w_off, w_lines;
    uv_fs_t req;
    bool busy;
    uint64_t written, dropped;
};

static void fail(struct gw_audit *a, const char *what, int err, size_t lines)
{
    char *msg;

    a->dropped += lines;
    a->failing = true;
    msg = gw_xasprintf(
        "the audit log %s cannot be %s: %s (%llu lines dropped so far)%s", a->path, what,
        strerror(err), (unsigned long long)a->dropped,
        a->required ? "; tool calls are refused until it can (gateway.audit.required)" : "");
    gw_problems_set(a->problems, &(struct gw_problem){.id = PROBLEM_ID,
                                                      .severity = GW_SEV_ERROR,
                                                      .scope = GW_SCOPE_WORKSPACE,
                                                      .message = msg});
    gw_log(GW_LOG_ERROR, "audit log", "path", a->path, "error", strerror(err), NULL);
    free(msg);
}

static void open_path(struct gw_audit *a)
{
    int fd = a->path ? open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;

    if (a->fd >= 0)
        close(a->fd);
    a->fd = fd;
    a->reopen = false;
    if (a->path != NULL && fd < 0) {
        fail(a, "opened", errno, 0);
        return;
    }
    a->failing = false;
    gw_problems_clear(a->problems, PROBLEM_ID);
}

static void kick(struct gw_audit *a);

static void on_written(uv_fs_t *req)
{
    struct gw_audit *a = req->data;
    ssize_t r = req->result;

    uv_fs_req_cleanup(req);
    a->busy = false;
    if (r >= 0 && (size_t)r < a->w_len - a->w_off) {
        a->w_off += (size_t)r; /* a short write: the rest of the batch */
        kick(a);
        return;
    }
    if (r < 0) {
        fail(a, "written", (int)-r, a->w_lines);
    } else {
        a->written += a->w_lines;
        if (a->failing) {
            a->failing = false;
            gw_problems_clear(a->problems, PROBLEM_ID);
        }
    }
    free(a->w);
    a->w = NULL;
    if (a->reopen)
        open_path(a);
    kick(a);
}

/* Starts the next write: the rest of the batch, else every queued line. */
static void kick(struct gw_audit *a)
{
    uv_buf_t buf;

    if (a->busy || a->fd < 0)
        return;
    if (a->w == NULL) {
        if (a->q.len == 0)
            return;
        a->w = gw_jbuf_take(&a->q, &a->w_len);
        a->w_off = 0;
        a->w_lines = a->q_lines;
        a->q_lines = 0;
    }
    buf = uv_buf_init(a->w + a->w_off, (unsigned)(a->w_len - a->w_off));
    a->req.data = a;
    if (uv_fs_write(a->loop, &a->req, a->fd, &buf, 1, -1, on_written) == 0)
        a->busy = true;
}

struct gw_audit *gw_audit_new(uv_loop_t *loop, struct gw_problems *problems)
{
    struct gw_audit *a = gw_xcalloc(1, sizeof *a);

    a->loop = loop;
    a->problems = problems;
    a->fd = -1;
    return a;
}

void gw_audit_configure(struct gw_audit *a, const struct gw_gateway_config *g)
{
    bool same = a->path != NULL && g->audit_path != NULL && strcmp(a->path, g->audit_path) == 0;

    a->args = g->audit_arguments;
    a->required = g->audit_required;
    if (same && !a->failing)
        return;
    free(a->path);
    a->path = g->audit_path ? gw_xstrdup(g->audit_path) : NULL;
    gw_audit_reopen(a);
}

void gw_audit_reopen(struct gw_audit *a)
{
    /* a batch being written ends in the file it began in */
    if (a->w != NULL) {
        a->reopen = true;
        return;
    }
    open_path(a);
    kick(a);
}

bool gw_audit_on(const struct gw_audit *a)
{
    return a != NULL && a->path != NULL;
}

bool gw_audit_refusing(const struct gw_audit *a)
{
    return gw_audit_on(a) && a->required && (a->failing || a->q.len >= GW_AUDIT_QUEUE_MAX);
}

enum gw_audit_arguments gw_audit_arguments_mode(const struct gw_audit *a)
{
    return a->args;
}

void gw_audit_write(struct gw_audit *a, const char *line, size_t len)
{
    if (!gw_audit_on(a))
        return;
    if ((a->fd < 0 && !a->reopen) || a->q.len + len + 1 > GW_AUDIT_QUEUE_MAX) {
        a->dropped++;
        return;
    }
    gw_jbuf_put(&a->q, line, len);
    gw_jbuf_lit(&a->q, "\n");
    a->q_lines++;
    kick(a);
}

uint64_t gw_audit_dropped(const struct gw_audit *a)
{
    return a ? a->dropped : 0;
}

uint64_t gw_audit_written(const struct gw_audit *a)
{
    return a ? a->written : 0;
}

/* The loop has ended: what is left goes out with plain writes. */
static void flush_blocking(struct gw_audit *a, const char *p, size_t n)
{
    while (n > 0 && a->fd >= 0) {
        ssize_t r = write(a->fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        p += r;
        n -= (size_t)r;
    }
}

void gw_audit_close(struct gw_audit *a)
{
    if (a == NULL)
        return;
    if (a->w != NULL)
        flush_blocking(a, a->w + a->w_off, a->w_len - a->w_off);
    flush_blocking(a, a->q.p, a->q.len);
    free(a->w);
    free(a->q.p);
    if (a->fd >= 0)
        close(a->fd);
    free(a->path);
    free(a);
}
