#include "gw/artifacts.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "gw/log.h"
#include "gw/util.h"

#define MAX_SEGMENTS 16

static const struct {
    const char *mime, *ext;
} mimes[] = {
    {"image/png", "png"},       {"image/jpeg", "jpg"},      {"image/gif", "gif"},
    {"image/webp", "webp"},     {"audio/wav", "wav"},       {"audio/mpeg", "mp3"},
    {"audio/ogg", "ogg"},       {"application/pdf", "pdf"}, {"application/json", "json"},
    {"application/gzip", "gz"}, {"text/plain", "txt"},      {"application/zip", "zip"},
};

const char *gw_mime_ext(const char *mime)
{
    for (size_t i = 0; mime != NULL && i < GW_ARRAY_SIZE(mimes); i++) {
        if (strcmp(mimes[i].mime, mime) == 0)
            return mimes[i].ext;
    }
    return "bin";
}

const char *gw_mime_for_path(const char *path)
{
    const char *dot = strrchr(path, '.');

    for (size_t i = 0; dot != NULL && i < GW_ARRAY_SIZE(mimes); i++) {
        if (strcmp(mimes[i].ext, dot + 1) == 0)
            return mimes[i].mime;
    }
    return "application/octet-stream";
}

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0750) != 0 && errno != EEXIST) {
            *p = '/';
            return -errno;
        }
        *p = '/';
    }
    if (mkdir(path, 0750) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* Names sort in the order the files were written: the oldest go first by
 * name, and two files saved in one millisecond would otherwise order by
 * their random part. `*last_ms` is the time of the previous name; a name
 * never repeats or goes behind it (a burst runs a few ms ahead, a clock
 * stepped back waits for the names to catch up). */
static void new_name(char *buf, size_t cap, const char *ext, int64_t *last_ms)
{
    unsigned char r[16];
    struct timeval tv;
    struct tm tm;
    char ts[32];
    int64_t ms;
    time_t sec;

    uv_random(NULL, NULL, r, sizeof r, 0, NULL);
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
    gettimeofday(&tv, NULL);
    ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
    if (ms <= *last_ms)
        ms = *last_ms + 1;
    *last_ms = ms;
    sec = (time_t)(ms / 1000);
    gmtime_r(&sec, &tm);
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%S", &tm);
    snprintf(buf, cap,
             "%s%03dZ-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x.%s", ts,
             (int)(ms % 1000), r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
             r[11], r[12], r[13], r[14], r[15], ext);
}

/* ---- the index: sizes and ages of the files the gateway saved ---- */

#define DIALOG_BUCKETS 256

/* A circular list with a head node: the oldest entry is head.next. */
struct ring {
    struct ring *prev, *next;
};

struct art_dialog {
    struct art_dialog *next; /* in its bucket */
    struct ring files;       /* its art_file.mine, oldest first */
    uint64_t bytes;
    char key[]; /* "<root>/<self>" */
};

struct art_file {
    struct ring all;  /* in gw_artifacts.files */
    struct ring mine; /* in its dialog's files */
    struct art_dialog *dialog;
    uint64_t size;
    char rel[]; /* relative to the dialog's directory */
};

struct gw_artifacts {
    char *dir;
    bool indexed;      /* the tree on disk was read (on the first save) */
    int64_t last_ms;   /* the time in the newest file name */
    struct ring files; /* art_file.all, oldest first */
    uint64_t bytes;
    size_t nfiles;
    struct art_dialog *buckets[DIALOG_BUCKETS];
};

#define FILE_OF(r, field)                                                                          \
    ((struct art_file *)(void *)((char *)(r)-offsetof(struct art_file, field)))

static void ring_init(struct ring *r)
{
    r->prev = r->next = r;
}

static void ring_append(struct ring *head, struct ring *r)
{
    r->prev = head->prev;
    r->next = head;
    head->prev->next = r;
    head->prev = r;
}

static void ring_del(struct ring *r)
{
    r->prev->next = r->next;
    r->next->prev = r->prev;
}

struct gw_artifacts *gw_artifacts_new(const char *dir)
{
    struct gw_artifacts *a = gw_xcalloc(1, sizeof *a);

    a->dir = gw_xstrdup(dir);
    ring_init(&a->files);
    return a;
}

void gw_artifacts_free(struct gw_artifacts *a)
{
    if (a == NULL)
        return;
    for (struct ring *r = a->files.next, *next; r != &a->files; r = next) {
        next = r->next;
        free(FILE_OF(r, all));
    }
    for (size_t i = 0; i < DIALOG_BUCKETS; i++) {
        for (struct art_dialog *d = a->buckets[i], *next; d != NULL; d = next) {
            next = d->next;
            free(d);
        }
    }
    free(a->dir);
    free(a);
}

const char *gw_artifacts_dir(const struct gw_artifacts *a)
{
    return a->dir;
}

static struct art_dialog **bucket_of(struct gw_artifacts *a, const char *key)
{
    return &a->buckets[gw_hash_str(key) % DIALOG_BUCKETS];
}

static struct art_dialog *dialog_find(struct gw_artifacts *a, const char *key)
{
    for (struct art_dialog *d = *bucket_of(a, key); d != NULL; d = d->next) {
        if (strcmp(d->key, key) == 0)
            return d;
    }
    return NULL;
}

static struct art_dialog *dialog_get(struct gw_artifacts *a, const char *key)
{
    struct art_dialog *d = dialog_find(a, key), **b;
    size_t n = strlen(key) + 1;

    if (d != NULL)
        return d;
    d = gw_xcalloc(1, sizeof *d + n);
    memcpy(d->key, key, n);
    ring_init(&d->files);
    b = bucket_of(a, key);
    d->next = *b;
    *b = d;
    return d;
}

static void index_add(struct gw_artifacts *a, const char *key, const char *rel, uint64_t size)
{
    struct art_dialog *d = dialog_get(a, key);
    size_t n = strlen(rel) + 1;
    struct art_file *f = gw_xmalloc(sizeof *f + n);

    memcpy(f->rel, rel, n);
    f->dialog = d;
    f->size = size;
    ring_append(&a->files, &f->all);
    ring_append(&d->files, &f->mine);
    d->bytes += size;
    a->bytes += size;
    a->nfiles++;
}

/* Removes the file from disk and from the index; a dialog left with no
 * file is forgotten too. A file already gone (cleaned up by hand) is no
 * error; one that cannot be removed is logged and forgotten all the same,
 * or the caps could never be met again. */
static void evict(struct gw_artifacts *a, struct art_file *f)
{
    struct art_dialog *d = f->dialog;
    char *path = gw_xasprintf("%s/%s/%s", a->dir, d->key, f->rel);

    if (unlink(path) != 0 && errno != ENOENT)
        gw_log(GW_LOG_WARN, "cannot remove an old artifact", "path", path, "error", strerror(errno),
               NULL);
    free(path);
    ring_del(&f->all);
    ring_del(&f->mine);
    d->bytes -= f->size;
    a->bytes -= f->size;
    a->nfiles--;
    free(f);
    if (d->files.next == &d->files) {
        struct art_dialog **p = bucket_of(a, d->key);
        while (*p != d)
            p = &(*p)->next;
        *p = d->next;
        free(d);
    }
}

/* Whether the tree with `files` more files of `bytes` more bytes would
 * pass the global caps while something is left to remove. */
static bool over_total(const struct gw_artifacts *a, const struct gw_artifact_caps *caps,
                       size_t files, uint64_t bytes)
{
    return a->nfiles > 0 &&
           (a->bytes + bytes > caps->total || a->nfiles + files > GW_ARTIFACTS_MAX_FILES);
}

/* Removes the oldest files until `len` more bytes (len <= both caps) fit:
 * the dialog's own first, then anyone's. */
static void make_room(struct gw_artifacts *a, const struct gw_artifact_caps *caps, const char *key,
                      uint64_t len)
{
    struct art_dialog *d;

    while ((d = dialog_find(a, key)) != NULL && d->bytes + len > caps->per_dialog)
        evict(a, FILE_OF(d->files.next, mine));
    while (over_total(a, caps, 1, len))
        evict(a, FILE_OF(a->files.next, all));
}

/* Brings every dialog and the whole tree under the caps (they may have
 * been lowered since the files were written). */
static void trim(struct gw_artifacts *a, const struct gw_artifact_caps *caps)
{
    for (size_t i = 0; i < DIALOG_BUCKETS; i++) {
        for (struct art_dialog *d = a->buckets[i], *next; d != NULL; d = next) {
            next = d->next;
            while (d != NULL && d->bytes > caps->per_dialog) {
                struct art_file *f = FILE_OF(d->files.next, mine);
                if (f->mine.next == &d->files)
                    d = NULL; /* its last file: evict frees the dialog */
                evict(a, f);
            }
        }
    }
    while (over_total(a, caps, 0, 0))
        evict(a, FILE_OF(a->files.next, all));
}

/* ---- reading the tree at start ---- */

/* The levels below artifacts_dir; only files at the place gw_artifact_save
 * writes them are counted (and ever removed). */
enum { L_ROOT, L_SELF, L_ARTIFACTS, L_MCP, L_SERVER, L_TOOL, L_FILE };

struct found {
    char *key, *rel;
    uint64_t size;
    struct timespec mtime;
};

struct scan {
    struct found *v;
    size_t n, cap;
};

static void found_file(struct scan *sc, int dirfd, const char *const *part)
{
    struct stat st;

    /* A link, or a file with a second name, is not one the gateway wrote. */
    if (fstatat(dirfd, part[L_FILE], &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_nlink != 1)
        return;
    if (sc->n == sc->cap) {
        sc->cap = sc->cap ? sc->cap * 2 : 64;
        sc->v = gw_xrealloc(sc->v, sc->cap * sizeof *sc->v);
    }
    sc->v[sc->n++] = (struct found){
        gw_xasprintf("%s/%s", part[L_ROOT], part[L_SELF]),
        gw_xasprintf("artifacts/mcp/%s/%s/%s", part[L_SERVER], part[L_TOOL], part[L_FILE]),
        (uint64_t)st.st_size,
        st.st_mtim,
    };
}

/* Reads the directory `fd` (taken) at `level`; part[0..level-1] name it. */
static void scan_dir(struct scan *sc, int fd, int level, const char **part)
{
    static const char *const fixed[] = {[L_ARTIFACTS] = "artifacts", [L_MCP] = "mcp"};
    DIR *dir = fdopendir(fd);
    struct dirent *e;

    if (dir == NULL) {
        close(fd);
        return;
    }
    while ((e = readdir(dir)) != NULL) {
        int sub;
        if (e->d_name[0] == '.' || (level < (int)GW_ARRAY_SIZE(fixed) && fixed[level] != NULL &&
                                    strcmp(e->d_name, fixed[level]) != 0))
            continue;
        part[level] = e->d_name;
        if (level == L_FILE) {
            found_file(sc, dirfd(dir), part);
            continue;
        }
        sub = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0)
            scan_dir(sc, sub, level + 1, part);
    }
    closedir(dir);
}

static int older_first(const void *x, const void *y)
{
    const struct found *a = x, *b = y;

    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->rel, b->rel); /* names start with their time, to the ms */
}

/* Artifacts outlive the daemon: the index starts from what is on disk. */
static void index_tree(struct gw_artifacts *a, const struct gw_artifact_caps *caps)
{
    struct scan sc = {0};
    const char *part[L_FILE + 1];
    int fd = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char files[24], bytes[24];

    a->indexed = true;
    if (fd >= 0)
        scan_dir(&sc, fd, L_ROOT, part);
    if (sc.n > 1)
        qsort(sc.v, sc.n, sizeof *sc.v, older_first);
    for (size_t i = 0; i < sc.n; i++) {
        index_add(a, sc.v[i].key, sc.v[i].rel, sc.v[i].size);
        free(sc.v[i].key);
        free(sc.v[i].rel);
    }
    free(sc.v);
    trim(a, caps);
    gw_fmt_int(files, (long long)a->nfiles);
    gw_fmt_int(bytes, (long long)a->bytes);
    gw_log(GW_LOG_INFO, "artifacts indexed", "dir", a->dir, "files", files, "bytes", bytes, NULL);
}

/* Writes a new file under <dir>/<key>/artifacts/mcp/<server>/<tool>/;
 * on 0 *relpath (caller frees) is relative to <dir>/<key>. */
static int write_new(struct gw_artifacts *a, const char *key, const char *server, const char *tool,
                     const char *mime, const unsigned char *data, size_t len, char **relpath)
{
    char name[96];
    char *rel, *dirpath, *full;
    int fd, rc;

    new_name(name, sizeof name, gw_mime_ext(mime), &a->last_ms);
    rel = gw_xasprintf("artifacts/mcp/%s/%s", server, tool);
    dirpath = gw_xasprintf("%s/%s/%s", a->dir, key, rel);
    rc = mkdirs(dirpath);
    full = gw_xasprintf("%s/%s", dirpath, name);
    fd = rc == 0 ? open(full, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640) : -1;
    if (rc == 0 && fd < 0)
        rc = -errno;
    if (fd >= 0) {
        rc = gw_write_all(fd, data, len);
        if (close(fd) != 0 && rc == 0)
            rc = -errno;
        if (rc != 0)
            unlink(full);
    }
    if (rc == 0)
        *relpath = gw_xasprintf("%s/%s", rel, name);
    free(rel);
    free(dirpath);
    free(full);
    return rc;
}

int gw_artifact_save(struct gw_artifacts *a, const struct gw_artifact_caps *caps, const char *root,
                     const char *self, const char *server, const char *tool, const char *mime,
                     const unsigned char *data, size_t len, char **relpath)
{
    char *key, *rel;
    int rc;

    if (len > caps->per_dialog || len > caps->total)
        return -EFBIG;
    if (!a->indexed)
        index_tree(a, caps);
    key = gw_xasprintf("%s/%s", root, self);
    make_room(a, caps, key, len);
    rc = write_new(a, key, server, tool, mime, data, len, &rel);
    if (rc == 0) {
        index_add(a, key, rel, len);
        *relpath = rel;
    }
    free(key);
    return rc;
}

/* Splits a relative path into checked segments (in place). */
static int split_checked(char *p, char **seg, size_t *n)
{
    *n = 0;
    if (*p == '/' || *p == '\0')
        return -ENOENT;
    for (char *s = p;;) {
        char *slash = strchr(s, '/');
        if (slash != NULL)
            *slash = '\0';
        if (*s == '\0' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || *n == MAX_SEGMENTS)
            return -ENOENT;
        seg[(*n)++] = s;
        if (slash == NULL)
            return strcmp(seg[0], "artifacts") == 0 && *n >= 2 ? 0 : -ENOENT;
        s = slash + 1;
    }
}

static int open_chain(int fd, char *const *seg, size_t n)
{
    for (size_t i = 0; fd >= 0 && i < n; i++) {
        /* O_NONBLOCK: a FIFO planted in the tree must not block the loop
         * (the S_ISREG check then refuses it). */
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (i + 1 < n ? O_DIRECTORY : O_NONBLOCK);
        int next = openat(fd, seg[i], flags);
        close(fd);
        fd = next;
    }
    return fd;
}

int gw_artifact_open(const char *dir, const char *root, const char *self, const char *relpath)
{
    char *copy = gw_xstrdup(relpath), *seg[MAX_SEGMENTS + 2];
    size_t n;
    int fd, rc = split_checked(copy, seg + 2, &n);
    struct stat st;

    /* The dialog's directories are opened without following links too. */
    seg[0] = (char *)root;
    seg[1] = (char *)self;
    fd = rc == 0 ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    fd = rc == 0 ? open_chain(fd, seg, n + 2) : -1;
    if (rc == 0 && fd < 0)
        rc = -errno;
    /* A hard link may name a file from anywhere on the file system: only a
     * file with one name, the one the gateway gave it, is served. */
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)) {
        close(fd);
        rc = -ENOENT;
    }
    free(copy);
    return rc == 0 ? fd : rc;
}

char *gw_artifact_url(const char *root, const char *self, const char *relpath)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(relpath);
    char *enc = gw_xmalloc(3 * n + 1), *o = enc;

    /* the route decodes `path` once; what needs no encoding in a query
     * (RFC 3986 unreserved and "/") is left as it is, for people to read */
    for (const unsigned char *p = (const unsigned char *)relpath; *p != '\0'; p++) {
        if (isalnum(*p) || strchr("-._~/", *p) != NULL) {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    o = gw_xasprintf("/api/dialogs/%s/%s/artifact?path=%s", root, self, enc);
    free(enc);
    return o;
}
