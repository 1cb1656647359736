/* The audit log's writer (gw/audit.h). */
#include "gw/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "gw/json_out.h"
#include "gw/log.h"
#include "gw/util.h"

#define PROBLEM_ID "audit:write"

/* Not in <linux/magic.h>: OpenZFS's and bcachefs's. */
#define ZFS_MAGIC      0x2fc12fc2UL
#define BCACHEFS_MAGIC 0xca451a4eUL

/* journald's native socket; MCPGW_JOURNAL_SOCKET names another, for tests */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

struct gw_audit {
    uv_loop_t *loop;
    struct gw_problems *problems;
    char *path; /* NULL: off; GW_AUDIT_JOURNAL: the journal */
    bool journal;
    struct sockaddr_un jaddr; /* with `journal`: where datagrams go, through fd */
    enum gw_audit_arguments args;
    bool required;
    int fd;           /* -1: none open */
    bool reopen;      /* open the path again once the batch on it is written */
    bool failing;     /* the last write or open failed */
    bool on_loop;     /* the loop writes this file itself (may_write_on_loop) */
    struct gw_jbuf q; /* lines waiting, each with its newline */
    size_t q_lines;
    char *w; /* the batch being written */
    size_t w_len, w_off, w_lines, w_cap;
    /* The buffers outlive their lines: a line built and a batch queued
     * in memory already there, not in a malloc'd buffer grown by doubling
     * and freed for each line and each batch. */
    struct gw_jbuf line;
    char *spare; /* the last batch's buffer, for the next queue */
    size_t spare_cap;
    uv_fs_t req;
    bool busy;
    uv_timer_t *flush;  /* the next batch's start; NULL once the daemon stops */
    uv_prepare_t *ripe; /* the same, checked before the loop waits (schedule) */
    uint64_t first_ms;  /* when the oldest queued line was queued (uv_now) */
    uint64_t written, dropped;
};

static void fail(struct gw_audit *a, const char *what, int err, size_t lines)
{
    char *msg;

    a->dropped += lines;
    /* a journal that does not keep up refuses every line: the Problem and
     * the log say so when it starts, not once per call (/metrics counts) */
    if (a->journal && a->failing)
        return;
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

static int open_journal(struct gw_audit *a)
{
    const char *at = getenv("MCPGW_JOURNAL_SOCKET");

    if (at == NULL || at[0] == '\0')
        at = JOURNAL_SOCKET;
    if (strlen(at) >= sizeof a->jaddr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memset(&a->jaddr, 0, sizeof a->jaddr);
    a->jaddr.sun_family = AF_UNIX;
    memcpy(a->jaddr.sun_path, at, strlen(at) + 1);
    /* non-blocking: a journal that cannot keep up drops lines, never stalls the loop */
    return socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

/* Where batches are written. A buffered write to a regular file of a
 * local file system (or to /dev/null) takes microseconds: the loop makes it
 * itself. Through libuv's threadpool each batch would cost a worker's
 * wake-up and the loop's, and the pool's first thread puts glibc into its
 * multi-threaded mode for the daemon's life (a lock in every malloc and
 * free, cancellation around every system call): more than the audit line
 * costs a call. A file that may block (NFS, CIFS, a FUSE mount, a FIFO, a
 * terminal) keeps the threadpool, and so does a file whose write once held
 * the loop GW_AUDIT_SLOW_MS or longer (a disk that cannot keep up). */
static bool may_write_on_loop(int fd)
{
    struct stat st;
    struct statfs fs;

    if (fstat(fd, &st) != 0)
        return false;
    if (S_ISCHR(st.st_mode))
        return major(st.st_rdev) == 1; /* the memory devices: /dev/null, /dev/full */
    if (!S_ISREG(st.st_mode) || fstatfs(fd, &fs) != 0)
        return false;
    switch ((unsigned long)fs.f_type) {
    case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case ZFS_MAGIC:
    case BCACHEFS_MAGIC:
        return true;
    default:
        return false;
    }
}

static void open_path(struct gw_audit *a)
{
    int fd = a->path == NULL ? -1
             : a->journal    ? open_journal(a)
                             : open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

    if (a->fd >= 0)
        close(a->fd);
    a->fd = fd;
    a->reopen = false;
    a->on_loop = fd >= 0 && !a->journal && may_write_on_loop(fd);
    if (a->path != NULL && fd < 0) {
        fail(a, "opened", errno, 0);
        return;
    }
    a->failing = false;
    gw_problems_clear(a->problems, PROBLEM_ID);
}

static void kick(struct gw_audit *a);
static void schedule(struct gw_audit *a);
static void drain_to_journal(struct gw_audit *a);

/* The written batch's buffer becomes the next queue's, unless a backlog
 * made it far larger than a batch. */
static void keep_spare(struct gw_audit *a)
{
    if (a->w_cap <= 2 * GW_AUDIT_BATCH && a->spare == NULL) {
        a->spare = a->w;
        a->spare_cap = a->w_cap;
    } else {
        free(a->w);
    }
    a->w = NULL;
}

/* A write of the batch ended: r bytes, or -errno. */
static void written(struct gw_audit *a, ssize_t r)
{
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
    keep_spare(a);
    if (a->reopen)
        open_path(a);
    if (a->journal)
        drain_to_journal(a);
    schedule(a);
}

static void on_written(uv_fs_t *req)
{
    ssize_t r = req->result;

    uv_fs_req_cleanup(req);
    written(req->data, r);
}

static void write_on_loop(struct gw_audit *a)
{
    uint64_t start = uv_hrtime(), ms;
    ssize_t r;

    do
        r = write(a->fd, a->w + a->w_off, a->w_len - a->w_off);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        r = -errno;
    ms = (uv_hrtime() - start) / 1000000;
    if (ms >= GW_AUDIT_SLOW_MS) {
        char took[24];

        snprintf(took, sizeof took, "%llu", (unsigned long long)ms);
        a->on_loop = false;
        gw_log(GW_LOG_WARN, "an audit log write held the event loop; later ones go to threads",
               "path", a->path, "ms", took, NULL);
    }
    written(a, r);
}

/* Starts the next write: the rest of the batch, else every queued line. */
static void kick(struct gw_audit *a)
{
    uv_buf_t buf;

    if (a->busy || a->fd < 0)
        return;
    if (a->w == NULL) {
        if (a->q.len == 0 || a->journal)
            return;
        a->w = a->q.p;
        a->w_len = a->q.len;
        a->w_cap = a->q.cap;
        a->q = (struct gw_jbuf){.p = a->spare, .cap = a->spare_cap};
        a->spare = NULL;
        a->spare_cap = 0;
        a->w_off = 0;
        a->w_lines = a->q_lines;
        a->q_lines = 0;
        if (a->flush != NULL) { /* nothing waits for them now */
            uv_timer_stop(a->flush);
            uv_prepare_stop(a->ripe);
        }
    }
    if (a->on_loop) {
        write_on_loop(a);
        return;
    }
    buf = uv_buf_init(a->w + a->w_off, (unsigned)(a->w_len - a->w_off));
    a->req.data = a;
    if (uv_fs_write(a->loop, &a->req, a->fd, &buf, 1, -1, on_written) == 0)
        a->busy = true;
}

static void on_flush(uv_timer_t *t)
{
    kick(t->data);
}

static void on_ripe(uv_prepare_t *p)
{
    struct gw_audit *a = p->data;

    if (uv_now(a->loop) - a->first_ms >= GW_AUDIT_FLUSH_MS)
        kick(a);
}

/* A write per line would cost each call a system call, or a trip through
 * the threadpool (a worker woken, the loop woken by its answer): more than
 * the call itself. Lines gather for GW_AUDIT_FLUSH_MS, or until a batch is
 * big enough to be worth a write of its own. A busy loop writes them when
 * it is about to wait and they are old enough; a timer wakes a loop that
 * sleeps only at twice that, so that a loop woken by calls anyway is not
 * woken once more per batch (at one call at a time, a wake-up costs more
 * than the write). */
static void schedule(struct gw_audit *a)
{
    if (a->flush == NULL || a->q.len >= GW_AUDIT_BATCH) {
        kick(a);
        return;
    }
    if (a->q.len == 0 || uv_is_active((uv_handle_t *)a->ripe))
        return;
    a->first_ms = uv_now(a->loop);
    uv_prepare_start(a->ripe, on_ripe);
    uv_timer_start(a->flush, on_flush, 2 * GW_AUDIT_FLUSH_MS, 0);
}

struct gw_audit *gw_audit_new(uv_loop_t *loop, struct gw_problems *problems)
{
    struct gw_audit *a = gw_xcalloc(1, sizeof *a);

    a->loop = loop;
    a->problems = problems;
    a->fd = -1;
    a->flush = gw_xmalloc(sizeof *a->flush);
    uv_timer_init(loop, a->flush);
    a->flush->data = a;
    a->ripe = gw_xmalloc(sizeof *a->ripe);
    uv_prepare_init(loop, a->ripe);
    a->ripe->data = a;
    return a;
}

static void on_flush_closed(uv_handle_t *h)
{
    free(h);
}

void gw_audit_stop(struct gw_audit *a)
{
    if (a == NULL || a->flush == NULL)
        return;
    uv_close((uv_handle_t *)a->flush, on_flush_closed);
    uv_close((uv_handle_t *)a->ripe, on_flush_closed);
    a->flush = NULL;
    a->ripe = NULL;
    kick(a);
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
    a->journal = a->path != NULL && strcmp(a->path, GW_AUDIT_JOURNAL) == 0;
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

/* A journal field: KEY=value, or for a value with a newline the native
 * protocol's binary form (KEY, newline, 64-bit little-endian length). */
static void field(struct gw_jbuf *b, const char *key, const char *v, size_t n)
{
    gw_jbuf_put(b, key, strlen(key));
    if (memchr(v, '\n', n) == NULL) {
        gw_jbuf_lit(b, "=");
    } else {
        char le[8];
        gw_jbuf_lit(b, "\n");
        for (int i = 0; i < 8; i++)
            le[i] = (char)((uint64_t)n >> (8 * i));
        gw_jbuf_put(b, le, 8);
    }
    gw_jbuf_put(b, v, n);
    gw_jbuf_lit(b, "\n");
}

/* An entry larger than a datagram may be (the socket's send buffer, about
 * 200 KB by default: EMSGSIZE, or ENOBUFS on some kernels) goes as
 * journald's native protocol takes it, and as sd_journal_sendv sends it:
 * written to a memfd, sealed so that it cannot change once journald reads
 * it, and passed with SCM_RIGHTS in an empty datagram. */
static ssize_t send_memfd(struct gw_audit *a, const char *p, size_t n)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr mh = {.msg_name = &a->jaddr,
                        .msg_namelen = sizeof a->jaddr,
                        .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *cm;
    int fd = memfd_create("mcpgw-audit", MFD_CLOEXEC | MFD_ALLOW_SEALING), err;
    ssize_t r = -1;

    if (fd < 0)
        return -1;
    /* a write that fails (ENOSPC, memory refused) sends no entry rather
     * than part of one */
    if ((err = gw_write_all(fd, p, n)) < 0)
        errno = -err;
    else if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) ==
             0) {
        memset(&ctl, 0, sizeof ctl);
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        do
            r = sendmsg(a->fd, &mh, MSG_NOSIGNAL);
        while (r < 0 && errno == EINTR);
    }
    err = errno;
    close(fd);
    errno = err;
    return r;
}

static void send_journal(struct gw_audit *a, const char *line, size_t len,
                         const struct gw_audit_fields *f)
{
    static const struct {
        const char *key;
        size_t off;
    } idx[] = {
        {"MCPGW_CLIENT", offsetof(struct gw_audit_fields, client)},
        {"MCPGW_SERVER", offsetof(struct gw_audit_fields, server)},
        {"MCPGW_TOOL", offsetof(struct gw_audit_fields, tool)},
        {"MCPGW_DECISION", offsetof(struct gw_audit_fields, decision)},
        {"MCPGW_OUTCOME", offsetof(struct gw_audit_fields, outcome)},
    };
    struct gw_jbuf b = {0};
    ssize_t r;

    gw_jbuf_lit(&b, "SYSLOG_IDENTIFIER=mcpgw\nPRIORITY=6\n");
    for (size_t i = 0; f != NULL && i < sizeof idx / sizeof idx[0]; i++) {
        const char *v = *(const char *const *)((const char *)f + idx[i].off);
        if (v != NULL && v[0] != '\0')
            field(&b, idx[i].key, v, strlen(v));
    }
    field(&b, "MESSAGE", line, len);
    do
        r = sendto(a->fd, b.p, b.len, MSG_NOSIGNAL, (struct sockaddr *)&a->jaddr, sizeof a->jaddr);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EMSGSIZE || errno == ENOBUFS))
        r = send_memfd(a, b.p, b.len);
    free(b.p);
    if (r < 0) {
        fail(a, "sent to", errno, 1);
        return;
    }
    a->written++;
    if (a->failing) {
        a->failing = false;
        gw_problems_clear(a->problems, PROBLEM_ID);
    }
}

/* Lines queued while a reload moved the log from a file to the journal,
 * until the file's last batch was written. */
static void drain_to_journal(struct gw_audit *a)
{
    size_t len;
    char *q = gw_jbuf_take(&a->q, &len);

    for (char *p = q, *nl; a->fd >= 0 && p != NULL && p < q + len; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(q + len - p));
        send_journal(a, p, (size_t)(nl - p), NULL);
    }
    if (a->fd < 0)
        a->dropped += a->q_lines;
    a->q_lines = 0;
    free(q);
}

void gw_audit_write(struct gw_audit *a, const char *line, size_t len,
                    const struct gw_audit_fields *f)
{
    if (!gw_audit_on(a))
        return;
    if (a->journal && a->fd >= 0 && !a->reopen) {
        send_journal(a, line, len, f);
        return;
    }
    if ((a->fd < 0 && !a->reopen) || a->q.len + len + 1 > GW_AUDIT_QUEUE_MAX) {
        a->dropped++;
        return;
    }
    gw_jbuf_put(&a->q, line, len);
    gw_jbuf_lit(&a->q, "\n");
    a->q_lines++;
    if (!a->busy)
        schedule(a);
}

struct gw_jbuf *gw_audit_line(struct gw_audit *a)
{
    /* a huge line (a result measured in it, `arguments: full`) leaves no
     * huge buffer behind */
    if (a->line.cap > GW_AUDIT_BATCH) {
        free(a->line.p);
        a->line = (struct gw_jbuf){0};
    }
    a->line.len = 0;
    return &a->line;
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
    if (a->fd >= 0)
        (void)gw_write_all(a->fd, p, n);
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
    free(a->spare);
    free(a->line.p);
    if (a->fd >= 0)
        close(a->fd);
    free(a->path);
    free(a);
}
