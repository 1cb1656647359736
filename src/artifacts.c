#include "gw/artifacts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "gw/util.h"

#define MAX_SEGMENTS 16

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

long gw_base64_decode(const char *in, size_t len, unsigned char *out)
{
    unsigned acc = 0;
    int bits = 0;
    long n = 0;

    while (len > 0 && in[len - 1] == '=')
        len--;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value((unsigned char)in[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return len % 4 == 1 ? -1 : n;
}

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

static void new_name(char *buf, size_t cap, const char *ext)
{
    unsigned char r[16];
    struct timeval tv;
    struct tm tm;
    char ts[32];

    uv_random(NULL, NULL, r, sizeof r, 0, NULL);
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%S", &tm);
    snprintf(buf, cap,
             "%s%03dZ-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x.%s", ts,
             (int)(tv.tv_usec / 1000), r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
             r[10], r[11], r[12], r[13], r[14], r[15], ext);
}

static int write_all(int fd, const unsigned char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int gw_artifact_save(const char *dir, const char *root, const char *self, const char *server,
                     const char *tool, const char *mime, const unsigned char *data, size_t len,
                     char **relpath)
{
    char name[96];
    char *rel, *dirpath, *full;
    int fd, rc;

    new_name(name, sizeof name, gw_mime_ext(mime));
    rel = gw_xasprintf("artifacts/mcp/%s/%s", server, tool);
    dirpath = gw_xasprintf("%s/%s/%s/%s", dir, root, self, rel);
    rc = mkdirs(dirpath);
    full = gw_xasprintf("%s/%s", dirpath, name);
    fd = rc == 0 ? open(full, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640) : -1;
    if (rc == 0 && fd < 0)
        rc = -errno;
    if (fd >= 0) {
        rc = write_all(fd, data, len);
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
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        rc = -ENOENT;
    }
    free(copy);
    return rc == 0 ? fd : rc;
}
