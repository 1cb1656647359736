/* libFuzzer target for the artifact path resolver (gw_artifact_open), the
 * guard of GET /api/dialogs/{root}/{self}/artifact?path=… (security.md C11).
 *
 * A fixed tree is made once under a temporary directory:
 *
 *   <base>/outside.txt                  a file outside every dialog
 *   <base>/art/                         the artifacts_dir
 *   <base>/art/r/s/artifacts/mcp/srv/tool/a.png, b.txt
 *   <base>/art/r/s/artifacts/sub/c.json, sub/deeper/d.txt
 *   <base>/art/r/s/artifacts/up   -> ../../../../outside.txt   (file link)
 *   <base>/art/r/s/artifacts/etc  -> /etc                      (dir link)
 *   <base>/art/r/s/artifacts/rel  -> sub                       (dir link inside)
 *   <base>/art/r/s/artifacts/other -> ../../o/artifacts        (other dialog)
 *   <base>/art/r/s/artifacts/mcp/srv/tool/hard.png             hard link of outside.txt
 *   <base>/art/r/s/secret.txt           in the dialog but not under artifacts/
 *   <base>/art/r/o/artifacts/x.txt      another dialog of the same root
 *   <base>/art/r/r/artifacts/y.txt      the root's own dialog (self = root)
 *   <base>/art/l -> r                   a linked root directory
 *
 * The first input byte picks the dialog (root/self), the rest is the
 * relative path. Whenever an fd comes back, its /proc/self/fd link must
 * lie under <art>/<root>/<self>/artifacts/, name a regular file with one
 * link (a hard link's /proc path looks inside the tree), and no component
 * of the requested path may be a symlink; the fd must be close-on-exec; no
 * fd may leak. Any violation aborts. */
#include "gw/artifacts.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw/log.h"

static char base[PATH_MAX], art[PATH_MAX];

static void mkpath(const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    for (char *s = p + strlen(base) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    if (mkdir(p, 0755) != 0)
        abort();
}

static void mkfile(const char *rel, const char *text)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    FILE *f = fopen(p, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static void mkhardlink(const char *target, const char *rel)
{
    char t[PATH_MAX], p[PATH_MAX];
    snprintf(t, sizeof t, "%s/%s", base, target);
    snprintf(p, sizeof p, "%s/%s", base, rel);
    if (link(t, p) != 0)
        abort();
}

static void mklink(const char *target, const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    if (symlink(target, p) != 0)
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char tmpl[] = "/tmp/mcpgw-fuzz-art-XXXXXX";
    char *dir = mkdtemp(tmpl);

    /* /tmp may itself be a link: compare against the resolved path. */
    if (dir == NULL || realpath(dir, base) == NULL)
        abort();
    snprintf(art, sizeof art, "%s/art", base);
    mkfile("outside.txt", "outside\n");
    mkpath("art/r/s/artifacts/mcp/srv/tool");
    mkpath("art/r/s/artifacts/sub/deeper");
    mkpath("art/r/o/artifacts");
    mkpath("art/r/r/artifacts");
    mkfile("art/r/s/artifacts/mcp/srv/tool/a.png", "\x89PNG");
    mkfile("art/r/s/artifacts/mcp/srv/tool/b.txt", "b\n");
    mkfile("art/r/s/artifacts/sub/c.json", "{}");
    mkfile("art/r/s/artifacts/sub/deeper/d.txt", "d\n");
    mkfile("art/r/s/secret.txt", "secret\n");
    mkfile("art/r/o/artifacts/x.txt", "x\n");
    mkfile("art/r/r/artifacts/y.txt", "y\n");
    mklink("../../../../outside.txt", "art/r/s/artifacts/up");
    mklink("/etc", "art/r/s/artifacts/etc");
    mklink("sub", "art/r/s/artifacts/rel");
    mklink("../../o/artifacts", "art/r/s/artifacts/other");
    mklink("r", "art/l");
    mkhardlink("outside.txt", "art/r/s/artifacts/mcp/srv/tool/hard.png");
    gw_log_set_level(GW_LOG_ERROR);
    return 0;
}

/* Aborts when some prefix of <art>/<root>/<self>/<rel> is a symlink. */
static void check_no_link(const char *root, const char *self, const char *rel)
{
    char p[PATH_MAX * 2];
    struct stat st;
    int n = snprintf(p, sizeof p, "%s/%s/%s/%s", art, root, self, rel);

    if (n < 0 || (size_t)n >= sizeof p)
        return;
    for (char *s = p + strlen(art) + 1;; s++) {
        char *slash = strchr(s, '/');
        if (slash != NULL)
            *slash = '\0';
        if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) {
            fprintf(stderr, "fuzz_artifact_path: opened through the symlink %s\n", p);
            abort();
        }
        if (slash == NULL)
            return;
        *slash = '/';
        s = slash;
    }
}

static void check_fd(int fd, const char *root, const char *self, const char *rel)
{
    char link[64], target[PATH_MAX], want[PATH_MAX];
    struct stat st;

    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        abort();
    target[n] = '\0';
    snprintf(want, sizeof want, "%s/%s/%s/artifacts/", art, root, self);
    if (strncmp(target, want, strlen(want)) != 0) {
        fprintf(stderr, "fuzz_artifact_path: \"%s\" opened %s, outside %s\n", rel, target, want);
        abort();
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        abort();
    if (st.st_nlink != 1) {
        fprintf(stderr, "fuzz_artifact_path: \"%s\" opened a file with %ju links\n", rel,
                (uintmax_t)st.st_nlink);
        abort();
    }
    if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC))
        abort();
    check_no_link(root, self, rel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const dialogs[][2] = {{"r", "s"}, {"r", "r"}, {"r", "o"}, {"l", "s"}};
    int probe = dup(0);

    if (size == 0 || probe < 0)
        return 0;
    close(probe);
    const char *root = dialogs[data[0] & 3][0], *self = dialogs[data[0] & 3][1];
    char *rel = strndup((const char *)data + 1, size - 1);
    int fd = gw_artifact_open(art, root, self, rel);
    if (fd >= 0) {
        /* The linked root "l" may never give a file: its directory is a link. */
        if (strcmp(root, "l") == 0)
            abort();
        check_fd(fd, root, self, rel);
        close(fd);
    }
    free(rel);
    /* Every descriptor the resolver opened along the way is closed again. */
    int after = dup(0);
    if (after != probe) {
        fprintf(stderr, "fuzz_artifact_path: descriptor leak (%d then %d)\n", probe, after);
        abort();
    }
    close(after);
    return 0;
}
