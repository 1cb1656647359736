/* The child's environment (security.md P4) and its descriptors (P1). */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/child_env.h"
#include "gw/util.h"

extern char **environ;

/* ---- environment ---- */

int gw_env_pattern_match(const char *pattern, const char *name)
{
    const char *star = NULL, *resume = NULL;
    while (*name) {
        if (*pattern == '*') {
            star = pattern++;
            resume = name;
        } else if (*pattern == *name) {
            pattern++;
            name++;
        } else if (star) {
            pattern = star + 1;
            name = ++resume;
        } else {
            return 0;
        }
    }
    while (*pattern == '*')
        pattern++;
    return *pattern == '\0';
}

/* The auth token and every other MCPGW_* setting stay in the daemon (P4). */
static int is_daemon_var(const char *name)
{
    return strncasecmp(name, "MCPGW_", 6) == 0;
}

static int inherited(const char *entry, char *const *pats, size_t npats)
{
    const char *eq = strchr(entry, '=');
    if (!eq || eq == entry)
        return 0;
    size_t n = (size_t)(eq - entry);
    char name[256];
    if (n >= sizeof(name))
        return 0;
    memcpy(name, entry, n);
    name[n] = '\0';
    if (is_daemon_var(name))
        return 0;
    for (size_t i = 0; i < npats; i++) {
        if (gw_env_pattern_match(pats[i], name))
            return 1;
    }
    return 0;
}

/* Replaces the entry named like `kv` ("NAME=value") or appends it. */
static void env_put(char **env, size_t *n, char *kv, size_t namelen)
{
    for (size_t i = 0; i < *n; i++) {
        if (strncmp(env[i], kv, namelen + 1) == 0) {
            free(env[i]);
            env[i] = kv;
            return;
        }
    }
    env[(*n)++] = kv;
}

/* Builds the child's environment: inherited matches, then the configured
 * entries (later wins). Every string is owned by the returned array. */
char **gw_child_env_build(const struct gw_server_config *cfg, char *const *pats, size_t npats)
{
    size_t total = cfg->nenv + 1;
    for (char **e = environ; *e; e++)
        total++;
    char **env = gw_xmalloc(total * sizeof(*env));
    size_t n = 0;
    for (char **e = environ; *e; e++) {
        if (inherited(*e, pats, npats))
            env_put(env, &n, gw_xstrdup(*e), (size_t)(strchr(*e, '=') - *e));
    }
    for (size_t i = 0; i < cfg->nenv; i++) {
        const struct gw_kv *kv = &cfg->env[i];
        if (!kv->name[0] || strchr(kv->name, '=') || is_daemon_var(kv->name))
            continue;
        size_t nl = strlen(kv->name), vl = strlen(kv->value);
        char *entry = gw_xmalloc(nl + vl + 2);
        memcpy(entry, kv->name, nl);
        entry[nl] = '=';
        memcpy(entry + nl + 1, kv->value, vl + 1);
        env_put(env, &n, entry, nl);
    }
    env[n] = NULL;
    return env;
}

void gw_child_env_free(char **v)
{
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

/* libuv opens its descriptors close-on-exec, but a library may not (older
 * libcurl sockets, for one). Marking every descriptor above 2 before each
 * spawn keeps P1 true whoever opened them. */
void gw_child_cloexec_sweep(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        int fd = atoi(e->d_name);
        if (fd <= 2 || fd == self)
            continue;
        int fl = fcntl(fd, F_GETFD);
        if (fl >= 0 && !(fl & FD_CLOEXEC))
            fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
    }
    closedir(d);
}
