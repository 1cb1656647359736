/* bubblewrap's command line for one instance, the probe of whether the host
 * can run it, and the instances' homes (see gw/sandbox.h). */
#include "gw/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "gw/netproxy.h"
#include "gw/log.h"
#include "gw/util.h"

/* What programs need of /etc to run, resolve names and trust TLS: nothing
 * else of it is visible (docs/hardening.md lists them). */
static const char *const etc_files[] = {
    "alternatives", "ca-certificates", "ca-certificates.conf", "gai.conf",   "group",
    "host.conf",    "hosts",           "ld.so.cache",          "ld.so.conf", "ld.so.conf.d",
    "localtime",    "mime.types",      "nsswitch.conf",        "npmrc",      "os-release",
    "passwd",       "protocols",       "resolv.conf",          "services",   "ssl",
    "timezone",
};

/* A plain file of /etc up to this size is copied into the sandbox's root
 * (bwrap reads it from a descriptor: no mount); a larger one, or a
 * directory, is bound. Each bind is a mount, a read-only remount and a
 * parse of the namespace's whole mountinfo by bwrap: the copies take
 * 13 % of bwrap's CPU time and 29 of its 72 mounts off each start
 * (docs/performance.md), for ~70 KiB of the instance's memory;
 * ld.so.cache and mime.types stay bound. */
#define ETC_COPY_MAX (16 * 1024)

/* The top-level names a merged-/usr system links into /usr. */
static const char *const usr_links[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};

struct vec {
    char **v;
    size_t n, cap;
};

static void put(struct vec *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->v = gw_xrealloc(a->v, a->cap * sizeof(*a->v));
    }
    a->v[a->n++] = gw_xstrdup(s);
    a->v[a->n] = NULL;
}

static void put2(struct vec *a, const char *x, const char *y)
{
    put(a, x);
    put(a, y);
}

static void put3(struct vec *a, const char *x, const char *y, const char *z)
{
    put(a, x);
    put2(a, y, z);
}

/* True when `path` is `dir` or lies under it. */
static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* The directory to bind for a command outside /usr: for one inside a
 * node_modules tree, that whole tree (its package finds its dependencies
 * there); else the command's own directory. NULL when under /usr. */
static char *command_dir(const char *path)
{
    if (under(path, "/usr"))
        return NULL;
    const char *nm = strstr(path, "/node_modules/");
    if (nm)
        return gw_xstrndup(path, (size_t)(nm - path) + strlen("/node_modules"));
    const char *slash = strrchr(path, '/');
    return slash && slash != path ? gw_xstrndup(path, (size_t)(slash - path)) : NULL;
}

/* One name of etc_files: a link into /usr stays a link (/usr is there);
 * a small plain file is copied; anything else is bound when it exists. */
static void etc_entry(struct vec *a, struct gw_sandbox_fds *fds, const char *name)
{
    char p[64], link[PATH_MAX], real[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof(p), "/etc/%s", name);
    if (lstat(p, &st) != 0)
        return;
    if (S_ISLNK(st.st_mode)) {
        ssize_t n = readlink(p, link, sizeof(link) - 1);
        link[n > 0 ? n : 0] = '\0';
        /* The link's own target must lie under /usr too: one through a
         * path the sandbox lacks would dangle inside. */
        if ((under(link, "/usr") || strncmp(link, "../usr/", 7) == 0) && realpath(p, real) &&
            under(real, "/usr")) {
            put3(a, "--symlink", link, p);
            return;
        }
        if (stat(p, &st) != 0)
            return;
    }
    int fd = S_ISREG(st.st_mode) && st.st_size <= ETC_COPY_MAX && fds->n < GW_SANDBOX_MAX_FDS
                 ? open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
                 : -1;
    if (fd >= 0) {
        char num[16];
        snprintf(num, sizeof(num), "%zu", 3 + fds->n);
        fds->fd[fds->n++] = fd;
        put3(a, "--file", num, p);
    } else {
        put3(a, "--ro-bind-try", p, p);
    }
}

static void base_system(struct vec *a, struct gw_sandbox_fds *fds)
{
    put3(a, "--ro-bind", "/usr", "/usr");
    for (size_t i = 0; i < sizeof(usr_links) / sizeof(usr_links[0]); i++) {
        char top[32], target[PATH_MAX];
        struct stat st;
        snprintf(top, sizeof(top), "/%s", usr_links[i]);
        if (lstat(top, &st) != 0)
            continue;
        ssize_t n = S_ISLNK(st.st_mode) ? readlink(top, target, sizeof(target) - 1) : -1;
        if (n > 0) {
            target[n] = '\0';
            put3(a, "--symlink", target, top);
        } else if (S_ISDIR(st.st_mode)) {
            put3(a, "--ro-bind", top, top);
        }
    }
    for (size_t i = 0; i < sizeof(etc_files) / sizeof(etc_files[0]); i++)
        etc_entry(a, fds, etc_files[i]);
}

/* Each hidden path that a bound one holds gets an empty directory, or
 * /dev/null for a file, mounted over it. */
static void hide_paths(struct vec *a, const struct gw_sandbox_spec *sp, const char *const *bound,
                       size_t nbound)
{
    for (size_t i = 0; i < sp->nhide; i++) {
        struct stat st;
        const char *h = sp->hide[i];
        if (!h || h[0] != '/' || stat(h, &st) != 0)
            continue;
        bool visible = false;
        for (size_t j = 0; j < nbound && !visible; j++)
            visible = bound[j] && under(h, bound[j]);
        if (!visible)
            continue;
        if (S_ISDIR(st.st_mode))
            put2(a, "--tmpfs", h);
        else
            put3(a, "--ro-bind", "/dev/null", h);
    }
}

/* Every client library's proxy variables, pointed at the relay; NO_PROXY
 * empty, so nothing goes around it (and nothing could: the namespace has
 * no other route). */
static void proxy_env(struct vec *a)
{
    static const char *const names[] = {"HTTP_PROXY",       "HTTPS_PROXY",           "ALL_PROXY",
                                        "http_proxy",       "https_proxy",           "all_proxy",
                                        "npm_config_proxy", "npm_config_https_proxy"};
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", GW_NETPROXY_PORT);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        put3(a, "--setenv", names[i], url);
    put3(a, "--setenv", "NODE_USE_ENV_PROXY", "1");
    put3(a, "--setenv", "NO_PROXY", "");
    put3(a, "--setenv", "no_proxy", "");
}

char **gw_sandbox_argv(const struct gw_sandbox_spec *sp, struct gw_sandbox_fds *fds)
{
    const struct gw_sandbox_config *c = sp->cfg;
    struct vec a = {0};
    char num[32], real[PATH_MAX];
    put(&a, sp->bwrap);
    /* --unshare-user is explicit: --disable-userns needs it, and
     * --unshare-all alone would go on without a user namespace. */
    put3(&a, "--unshare-all", "--unshare-user", "--disable-userns");
    if (c->network == GW_SANDBOX_NET_HOST)
        put(&a, "--share-net");
    put3(&a, "--die-with-parent", "--new-session", "--cap-drop");
    put(&a, "ALL");
    put2(&a, "--hostname", "mcpgw-sandbox");
    fds->n = 0;
    base_system(&a, fds);
    put2(&a, "--proc", "/proc");
    put2(&a, "--dev", "/dev");
    snprintf(num, sizeof(num), "%llu", (unsigned long long)c->tmp);
    put2(&a, "--size", num);
    put2(&a, "--tmpfs", "/tmp");
    put3(&a, "--bind", sp->home, GW_SANDBOX_HOME);
    /* Every path bound from the host, for hide_paths: the command's
     * directory (by its path and its real path), cwd, read, write. */
    size_t nbound = 3 + c->nread + c->nwrite;
    const char **bound = gw_xcalloc(nbound, sizeof(*bound));
    char *dirs[2] = {command_dir(sp->command_path),
                     realpath(sp->command_path, real) ? command_dir(real) : NULL};
    if (dirs[0] && dirs[1] && strcmp(dirs[0], dirs[1]) == 0) {
        free(dirs[1]);
        dirs[1] = NULL;
    }
    for (int i = 0; i < 2; i++) {
        if (dirs[i])
            put3(&a, "--ro-bind", dirs[i], dirs[i]);
        bound[i] = dirs[i];
    }
    if (sp->cwd_set) {
        put3(&a, "--ro-bind", sp->cwd, sp->cwd);
        bound[2] = sp->cwd;
    }
    for (size_t i = 0; i < c->nread; i++) {
        put3(&a, "--ro-bind", c->read[i], c->read[i]);
        bound[3 + i] = c->read[i];
    }
    for (size_t i = 0; i < c->nwrite; i++) {
        put3(&a, "--bind", c->write[i], c->write[i]);
        bound[3 + c->nread + i] = c->write[i];
    }
    hide_paths(&a, sp, bound, nbound);
    free(dirs[0]);
    free(dirs[1]);
    free(bound);
    bool relay = c->network == GW_SANDBOX_NET_LIST && sp->relay_exe && sp->proxy_dir;
    if (relay) {
        put3(&a, "--ro-bind", sp->relay_exe, GW_SANDBOX_RUN "/relay");
        put3(&a, "--bind", sp->proxy_dir, GW_SANDBOX_RUN "/proxy");
    }
    /* Last of the mounts: the root, where the copies of /etc and every
     * mount point live, becomes read-only like the binds. */
    put2(&a, "--remount-ro", "/");
    put2(&a, "--chdir", sp->cwd_set ? sp->cwd : GW_SANDBOX_HOME);
    /* Tools keep their caches in the home, where they last between starts
     * of a home: server and go with a home: dialog. */
    put3(&a, "--setenv", "HOME", GW_SANDBOX_HOME);
    put3(&a, "--setenv", "TMPDIR", "/tmp");
    put3(&a, "--setenv", "XDG_CACHE_HOME", GW_SANDBOX_HOME "/.cache");
    put3(&a, "--setenv", "XDG_CONFIG_HOME", GW_SANDBOX_HOME "/.config");
    put3(&a, "--setenv", "XDG_DATA_HOME", GW_SANDBOX_HOME "/.local/share");
    put3(&a, "--setenv", "XDG_STATE_HOME", GW_SANDBOX_HOME "/.local/state");
    put3(&a, "--setenv", "npm_config_cache", GW_SANDBOX_HOME "/.npm");
    put3(&a, "--setenv", "UV_CACHE_DIR", GW_SANDBOX_HOME "/.cache/uv");
    if (relay) {
        proxy_env(&a);
        /* The relay is the namespace's pid 1: the server cannot kill it
         * (signals from inside to an init are dropped), and it is the
         * only child bubblewrap has, as the proxy checks. */
        put(&a, "--as-pid-1");
        put3(&a, "--", GW_SANDBOX_RUN "/relay", "sandbox-relay");
        snprintf(num, sizeof(num), "%d", GW_NETPROXY_PORT);
        put3(&a, num, GW_SANDBOX_RUN "/proxy/proxy.sock", "--");
        put(&a, sp->command_path);
    } else {
        put2(&a, "--", sp->command_path);
    }
    for (size_t i = 0; i < sp->nargs; i++)
        put(&a, sp->args[i]);
    return a.v;
}

void gw_sandbox_argv_free(char **argv)
{
    for (char **p = argv; p && *p; p++)
        free(*p);
    free(argv);
}

void gw_sandbox_fds_close(struct gw_sandbox_fds *fds)
{
    for (size_t i = 0; i < fds->n; i++)
        close(fds->fd[i]);
    fds->n = 0;
}

/* ---- can this host sandbox? ---- */

static char found_bwrap[PATH_MAX];
static int probe_rc = 1; /* 1: not probed */
static char probe_why[PATH_MAX + 256];
static time_t probe_at;

static int find_bwrap(void)
{
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && n + sizeof("/bwrap") < sizeof(found_bwrap)) {
            memcpy(found_bwrap, p, n);
            memcpy(found_bwrap + n, "/bwrap", sizeof("/bwrap"));
            if (found_bwrap[0] == '/' && access(found_bwrap, X_OK) == 0)
                return 0;
        }
        p += n + (p[n] == ':');
    }
    found_bwrap[0] = '\0';
    return -ENOENT;
}

/* Runs bwrap with the namespaces an instance gets and /bin/true inside:
 * what fails here (user namespaces off, a seccomp filter on unshare)
 * would fail every instance. */
static int probe(void)
{
    if (find_bwrap() != 0) {
        snprintf(probe_why, sizeof(probe_why),
                 "bubblewrap (bwrap) is not on the daemon's PATH (Debian package bubblewrap)");
        return -ENOENT;
    }
    char *argv[] = {found_bwrap,
                    "--unshare-all",
                    "--unshare-user",
                    "--disable-userns",
                    "--die-with-parent",
                    "--ro-bind",
                    "/",
                    "/",
                    "--proc",
                    "/proc",
                    "--dev",
                    "/dev",
                    "--",
                    "/bin/true",
                    NULL};
    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(err[1], 2);
        execv(found_bwrap, argv);
        _exit(127);
    }
    close(err[1]);
    char msg[200] = "";
    ssize_t n = pid > 0 ? read(err[0], msg, sizeof(msg) - 1) : 0;
    close(err[0]);
    msg[n > 0 ? n : 0] = '\0';
    msg[strcspn(msg, "\n")] = '\0';
    int status = 0;
    if (pid < 0)
        return -errno;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    snprintf(probe_why, sizeof(probe_why), "%s cannot make a sandbox here: %s", found_bwrap,
             msg[0] ? msg : "it failed without saying why");
    return -EPERM;
}

int gw_sandbox_available(const char **bwrap, char *why, size_t cap)
{
    time_t now = time(NULL);
    if (probe_rc == 1 || (probe_rc < 0 && now - probe_at >= 60)) {
        probe_rc = probe();
        probe_at = now;
    }
    if (probe_rc == 0) {
        *bwrap = found_bwrap;
        return 0;
    }
    gw_say(why, cap, "%s", probe_why);
    return probe_rc;
}

/* ---- homes ---- */

static int make_dir(const char *p, mode_t mode)
{
    if (mkdir(p, mode) == 0)
        return 0;
    struct stat st;
    if (errno == EEXIST && lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
        return 0;
    return errno == EEXIST ? -EEXIST : -errno;
}

int gw_sandbox_home_make(const char *state_dir, const char *server, enum gw_sandbox_home kind,
                         char **out, char *why, size_t cap)
{
    static unsigned seq;
    *out = NULL;
    if (!state_dir || state_dir[0] != '/') {
        gw_say(why, cap, "no state directory for the sandbox's home (set gateway.state_dir)");
        return -ENOENT;
    }
    char *homes = gw_xasprintf("%s/homes", state_dir);
    int rc = make_dir(state_dir, 0700);
    /* The default, ~/.local/state/mcpgw, may lack its parents too (their
     * mode left to the umask, as the OAuth store's); only the first start
     * makes them, not every instance's. */
    if (rc == -ENOENT) {
        char *parent = gw_xstrdup(state_dir);
        for (char *p = strchr(parent + 1, '/'); p; p = strchr(p + 1, '/')) {
            *p = '\0';
            mkdir(parent, 0755);
            *p = '/';
        }
        free(parent);
        rc = make_dir(state_dir, 0700);
    }
    rc = rc ? rc : make_dir(homes, 0700);
    char *dir = kind == GW_SANDBOX_HOME_SERVER ? gw_xasprintf("%s/%s", homes, server)
                                               : gw_xasprintf("%s/%s.d", homes, server);
    rc = rc ? rc : make_dir(dir, 0700);
    if (rc == 0 && kind == GW_SANDBOX_HOME_DIALOG) {
        char *inst = gw_xasprintf("%s/%d-%u", dir, (int)getpid(), ++seq);
        rc = mkdir(inst, 0700) == 0 ? 0 : -errno;
        free(dir);
        dir = inst;
    }
    free(homes);
    if (rc != 0) {
        gw_say(why, cap, "cannot make the sandbox's home %s: %s%s", dir, strerror(-rc),
               rc == -EEXIST ? " (not a directory of the daemon's user)" : "");
        free(dir);
        return rc;
    }
    *out = dir;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    /* FTW_PHYS: a symlink is removed as a link, never followed. */
    return (type == FTW_DP ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT ? 0 : -errno;
}

int gw_sandbox_home_remove(const char *home)
{
    return nftw(home, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* ---- homes a daemon that died left ---- */

/* One <server>.d directory: its <pid>-<n> entries whose pid names no
 * process (a pid another user runs is alive: EPERM), removed, or only
 * counted. */
static int sweep_server(const char *dir, bool remove)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int removed = 0;
    while (d && (e = readdir(d)) != NULL) {
        int pid;
        unsigned n;
        char tail;
        if (sscanf(e->d_name, "%d-%u%c", &pid, &n, &tail) != 2 || pid <= 0 ||
            pid == (int)getpid() || kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        if (!remove) {
            removed++;
            continue;
        }
        char *home = gw_xasprintf("%s/%s", dir, e->d_name);
        removed += gw_sandbox_home_remove(home) == 0;
        free(home);
    }
    if (d)
        closedir(d);
    return removed;
}

static int sweep(const char *state_dir, bool remove)
{
    char *homes = gw_xasprintf("%s/homes", state_dir);
    DIR *d = opendir(homes);
    struct dirent *e;
    int removed = 0;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        struct stat st;
        char *dir = gw_xasprintf("%s/%s", homes, e->d_name);
        if (len > 2 && strcmp(e->d_name + len - 2, ".d") == 0 && lstat(dir, &st) == 0 &&
            S_ISDIR(st.st_mode))
            removed += sweep_server(dir, remove);
        free(dir);
    }
    if (d)
        closedir(d);
    free(homes);
    return removed;
}

int gw_sandbox_homes_sweep(const char *state_dir)
{
    return sweep(state_dir, true);
}

struct sweep {
    uv_work_t w;
    char *state_dir;
    int removed;
};

static void sweep_work(uv_work_t *w)
{
    struct sweep *sw = w->data;
    sw->removed = gw_sandbox_homes_sweep(sw->state_dir);
}

static void sweep_done(uv_work_t *w, int status)
{
    struct sweep *sw = w->data;
    char n[16];
    snprintf(n, sizeof(n), "%d", sw->removed);
    if (sw->removed > 0)
        gw_log(GW_LOG_INFO, "removed the sandbox homes of daemons that are gone", "count", n,
               "state_dir", sw->state_dir, NULL);
    free(sw->state_dir);
    free(sw);
}

void gw_sandbox_homes_sweep_start(uv_loop_t *loop, const char *state_dir)
{
    if (!state_dir || state_dir[0] != '/')
        return;
    /* Removing homes goes to libuv's threads (a home may hold a whole npm
     * cache), whose pool, once started, keeps four threads for the
     * daemon's life and glibc in its multi-threaded mode (a lock in every
     * malloc and free). Most starts have nothing to remove: the loop looks
     * first, a readdir of each server's homes and a kill(pid, 0) each. */
    if (sweep(state_dir, false) == 0)
        return;
    struct sweep *sw = gw_xcalloc(1, sizeof(*sw));
    sw->state_dir = gw_xstrdup(state_dir);
    sw->w.data = sw;
    if (uv_queue_work(loop, &sw->w, sweep_work, sweep_done) != 0) {
        free(sw->state_dir);
        free(sw);
    }
}
