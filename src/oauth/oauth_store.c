/* Where the OAuth client keeps what must survive a restart (gw/oauth.h):
 * <state_dir>/oauth/ at 0700, one file per client registration (keyed by
 * issuer) and per grant (keyed by the server's URL), each 0600 and
 * written whole: a temporary file, fsync, rename, fsync of the directory,
 * so that a crash leaves the old file or the new one, never half of one.
 *
 * The files are small and written only when a registration or a token
 * changes (minutes apart at the least), so they are written from the loop
 * directly. */
#include "gw/oauth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw/sha256.h"
#include "gw/util.h"

char *gw_oauth_state_dir(const char *configured)
{
    const char *v;
    if (configured && *configured)
        return gw_xstrdup(configured);
    /* systemd's StateDirectory= may list several, separated by ':'. */
    if ((v = getenv("STATE_DIRECTORY")) && v[0] == '/')
        return gw_xstrndup(v, strcspn(v, ":"));
    if ((v = getenv("XDG_STATE_HOME")) && v[0] == '/')
        return gw_xasprintf("%s/mcpgw", v);
    if ((v = getenv("HOME")) && v[0] == '/')
        return gw_xasprintf("%s/.local/state/mcpgw", v);
    return NULL;
}

/* mkdir -p for the parents (their mode left to the umask), `leaf` 0700. */
static int make_dirs(char *path, mode_t leaf)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc < 0 && errno != EEXIST)
            return -errno;
    }
    if (mkdir(path, leaf) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

int gw_oauth_store_open(const char *state_dir, char **dir, char *why, size_t cap)
{
    struct stat st;
    *dir = NULL;
    if (!state_dir || state_dir[0] != '/') {
        gw_say(why, cap, "no state directory (set gateway.state_dir)");
        return -ENOENT;
    }
    char *d = gw_xasprintf("%s/oauth", state_dir);
    int rc = make_dirs(d, 0700);
    if (rc == 0 && lstat(d, &st) < 0)
        rc = -errno;
    if (rc < 0) {
        gw_say(why, cap, "cannot create %s: %s", d, strerror(-rc));
    } else if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        gw_say(why, cap, "%s is not a directory owned by this user", d);
        rc = -EACCES;
    } else if ((st.st_mode & 077) && chmod(d, 0700) < 0) {
        rc = -errno;
        gw_say(why, cap, "cannot restrict %s to its owner: %s", d, strerror(-rc));
    }
    if (rc < 0) {
        free(d);
        return rc;
    }
    *dir = d;
    return 0;
}

void gw_oauth_store_name(const char *kind, const char *key, char out[GW_OAUTH_NAME_LEN])
{
    static const char hex[] = "0123456789abcdef";
    struct gw_sha256 c;
    unsigned char d[GW_SHA256_LEN];
    gw_sha256_init(&c);
    gw_sha256_update(&c, key, strlen(key));
    gw_sha256_final(&c, d);
    int n = snprintf(out, GW_OAUTH_NAME_LEN, "%.8s-", kind);
    for (int i = 0; i < 16; i++) {
        out[n++] = hex[d[i] >> 4];
        out[n++] = hex[d[i] & 15];
    }
    memcpy(out + n, ".json", 6);
}

int gw_oauth_store_write(const char *dir, const char *name, const char *data, size_t len)
{
    char *tmp = gw_xasprintf("%s/.%s.XXXXXX", dir, name);
    char *path = gw_xasprintf("%s/%s", dir, name);
    int rc = 0;
    int fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rc = -errno;
            break;
        }
        off += (size_t)w;
    }
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    close(fd);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0) {
        unlink(tmp);
        goto out;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { /* the rename itself must reach the disk */
        fsync(dfd);
        close(dfd);
    }
out:
    free(tmp);
    free(path);
    return rc;
}

/* What the writer would refuse (gw_oauth_store_open, mkostemp's 0600):
 * another user's, or writable by others, who could have put it there. */
static bool untrusted(const struct stat *st, const char *what, char *why, size_t cap)
{
    if (st->st_uid != geteuid()) {
        gw_say(why, cap, "%s is owned by uid %u, not by this user", what, (unsigned)st->st_uid);
        return true;
    }
    if (st->st_mode & 022) {
        gw_say(why, cap, "%s is writable by its group or by others (mode %03o)", what,
               (unsigned)(st->st_mode & 0777));
        return true;
    }
    return false;
}

char *gw_oauth_store_read(const char *dir, const char *name, size_t max, char *why, size_t cap)
{
    struct stat st;
    char *buf = NULL;
    why[0] = 0;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ELOOP || errno == ENOTDIR)
            gw_say(why, cap, "%s is a symlink or not a directory", dir);
        return NULL;
    }
    int fd = -1;
    if (fstat(dfd, &st) < 0 || untrusted(&st, dir, why, cap))
        goto out;
    fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            gw_say(why, cap, "%s/%s is a symlink", dir, name);
        goto out;
    }
    if (fstat(fd, &st) < 0)
        goto out;
    if (!S_ISREG(st.st_mode)) {
        gw_say(why, cap, "%s/%s is not a regular file", dir, name);
        goto out;
    }
    if (untrusted(&st, name, why, cap))
        goto out;
    if ((size_t)st.st_size > max) {
        gw_say(why, cap, "%s/%s is larger than %zu bytes", dir, name, max);
        goto out;
    }
    size_t n = 0, want = (size_t)st.st_size;
    buf = gw_xmalloc(want + 1);
    while (n < want) {
        ssize_t r = read(fd, buf + n, want - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = 0;
out:
    if (fd >= 0)
        close(fd);
    close(dfd);
    return buf;
}

int gw_oauth_store_remove(const char *dir, const char *name)
{
    char *path = gw_xasprintf("%s/%s", dir, name);
    int rc = unlink(path) < 0 && errno != ENOENT ? -errno : 0;
    free(path);
    return rc;
}
