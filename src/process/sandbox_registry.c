/* `registry` in a sandbox's network list (gw/sandbox.h): the hosts the
 * server's launcher installs from, read where the launcher reads them. */
#include "gw/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/util.h"

struct list {
    char **v;
    size_t n;
};

static void add(struct list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return;
    l->v = gw_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
    l->v[l->n++] = gw_xstrdup(s);
}

/* http(s)://host[:port]/… as an entry: host (https, 443), host:port. */
static void add_url(struct list *l, const char *url, size_t n)
{
    bool https = n > 8 && strncasecmp(url, "https://", 8) == 0;
    if (!https && !(n > 7 && strncasecmp(url, "http://", 7) == 0))
        return;
    const char *a = url + (https ? 8 : 7);
    size_t al = strcspn(a, "/?#\"' \t\r\n");
    if ((size_t)(a - url) + al > n)
        al = n - (size_t)(a - url);
    const char *at = memchr(a, '@', al);
    if (at) {
        al -= (size_t)(at + 1 - a);
        a = at + 1;
    }
    if (al == 0 || al > 260)
        return;
    char entry[280];
    const char *rb = a[0] == '[' ? memchr(a, ']', al) : NULL;
    bool has_port = rb ? rb + 1 < a + al && rb[1] == ':' : memchr(a, ':', al) != NULL;
    if (has_port || https)
        snprintf(entry, sizeof(entry), "%.*s", (int)al, a);
    else
        snprintf(entry, sizeof(entry), "%.*s:80", (int)al, a);
    add(l, entry);
}

/* `name` in the instance's environment: the daemon's own variables only
 * when inherit_env passes them on, as npm and uv inside see them. */
static const char *env_of(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (char *const *e = env; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* Each `KEY = VALUE` line of `path` whose key ends with `suffix` (npmrc:
 * registry, @scope:registry; uv.toml: index-url, url). */
static void read_file(struct list *l, const char *path, const char *const *keys)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[1024];
    while (f && fgets(line, sizeof(line), f)) {
        char *eq = strchr(line, '=');
        if (!eq || line[0] == '#' || line[0] == ';')
            continue;
        char *k = line, *kend = eq;
        while (*k == ' ' || *k == '\t')
            k++;
        while (kend > k && (kend[-1] == ' ' || kend[-1] == '\t'))
            kend--;
        *kend = '\0';
        bool want = false;
        for (const char *const *key = keys; *key && !want; key++) {
            size_t kl = strlen(k), sl = strlen(*key);
            want = kl >= sl && strcmp(k + kl - sl, *key) == 0 &&
                   (kl == sl || k[kl - sl - 1] == ':' || k[kl - sl - 1] == '-');
        }
        if (!want)
            continue;
        char *v = eq + 1;
        while (*v == ' ' || *v == '\t' || *v == '"' || *v == '\'')
            v++;
        add_url(l, v, strlen(v));
    }
    if (f)
        fclose(f);
}

/* The directory the launcher runs in, as the sandbox shows it: the
 * server's cwd when it sets one; else its home (added as the user's
 * config below), never the config's directory, which is hidden inside. */
static const char *project_dir(const struct gw_server_config *cfg)
{
    return cfg->cwd_set ? cfg->cwd : NULL;
}

static void npm_registries(struct list *l, const struct gw_server_config *cfg, const char *home,
                           char *const *env)
{
    static const char *const keys[] = {"registry", NULL};
    const char *v;
    size_t before = l->n;
    if ((v = env_of(env, "npm_config_registry")) || (v = env_of(env, "NPM_CONFIG_REGISTRY")))
        add_url(l, v, strlen(v));
    /* npm's order: the project's, the user's, the global npmrc. */
    const char *dir = project_dir(cfg);
    char *project = dir ? gw_xasprintf("%s/.npmrc", dir) : NULL;
    char *user = home ? gw_xasprintf("%s/.npmrc", home) : NULL;
    read_file(l, project, keys);
    read_file(l, env_of(env, "npm_config_userconfig"), keys);
    read_file(l, user, keys);
    read_file(l, env_of(env, "npm_config_globalconfig"), keys);
    read_file(l, "/etc/npmrc", keys);
    read_file(l, "/usr/etc/npmrc", keys);
    free(project);
    free(user);
    /* npm's own default, when nothing configured one. */
    if (l->n == before)
        add(l, "registry.npmjs.org");
}

static void uv_indexes(struct list *l, const struct gw_server_config *cfg, const char *home,
                       char *const *env)
{
    static const char *const keys[] = {"index-url", "url", NULL};
    static const char *const vars[] = {"UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_INDEX",
                                       "UV_EXTRA_INDEX_URL", "PIP_INDEX_URL"};
    size_t before = l->n;
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = env_of(env, vars[i]);
        for (; v && *v; v += strcspn(v, " ")) {
            v += strspn(v, " ");
            const char *u = strstr(v, "://");
            size_t len = strcspn(v, " ");
            /* UV_INDEX entries may be name=url. */
            const char *eq = memchr(v, '=', len);
            if (eq && u && eq < u)
                add_url(l, eq + 1, len - (size_t)(eq + 1 - v));
            else
                add_url(l, v, len);
        }
    }
    char *paths[3] = {
        project_dir(cfg) ? gw_xasprintf("%s/uv.toml", project_dir(cfg)) : NULL,
        home ? gw_xasprintf("%s/.config/uv/uv.toml", home) : NULL,
        gw_xstrdup("/etc/uv/uv.toml"),
    };
    for (size_t i = 0; i < 3; i++) {
        read_file(l, paths[i], keys);
        free(paths[i]);
    }
    /* uv's default index, and where its files are served from. */
    if (l->n == before) {
        add(l, "pypi.org");
        add(l, "files.pythonhosted.org");
    }
}

void gw_sandbox_allow_list(const struct gw_server_config *cfg, const char *home, char *const *env,
                           char ***out, size_t *nout)
{
    const struct gw_sandbox_config *sb = &cfg->sandbox;
    struct list l = {0};
    const char *cmd = cfg->command_path ? strrchr(cfg->command_path, '/') : NULL;
    cmd = cmd ? cmd + 1 : "";
    for (size_t i = 0; i < sb->nallow; i++) {
        if (strcmp(sb->allow[i], "registry") != 0) {
            add(&l, sb->allow[i]);
        } else if (strcmp(cmd, "npx") == 0 || strcmp(cmd, "npm") == 0 || strcmp(cmd, "pnpm") == 0 ||
                   strcmp(cmd, "yarn") == 0) {
            npm_registries(&l, cfg, home, env);
        } else if (strcmp(cmd, "uvx") == 0 || strcmp(cmd, "uv") == 0) {
            uv_indexes(&l, cfg, home, env);
        }
    }
    *out = l.v;
    *nout = l.n;
}
