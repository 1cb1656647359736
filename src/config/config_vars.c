/* The values of a server block that come from the environment: env,
 * envFile and headers (resolved with their own rules), and ${VAR} in
 * every other string of the block (seed 002): args, url, sessionId and
 * the config object. A missing variable is the server's error, said once
 * per variable; values are secrets (shown as ***). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "gw/config_internal.h"

#define MAX_ENV_FILE (1u << 20)

static const char not_regular[] = "not a regular file", too_large[] = "too large";

/* A config-named file's text, NUL-terminated, for free(); NULL with *why
 * (not_regular, too_large, or the system's reason). Non-blocking, regular
 * files only: a FIFO or a device named in the config must not hang the
 * loader, and so the daemon's reload. */
static char *read_file(const char *path, size_t max, size_t *len, const char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    char *buf = NULL;
    size_t got = 0;
    ssize_t n = 1;

    *why = NULL;
    if (fd < 0)
        *why = strerror(errno);
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        *why = not_regular;
    else if ((size_t)st.st_size > max)
        *why = too_large;
    if (*why == NULL) {
        buf = gw_xmalloc(max + 1);
        while (got <= max && (n = read(fd, buf + got, max + 1 - got)) > 0)
            got += (size_t)n;
        if (n < 0 || got > max)
            *why = n < 0 ? strerror(errno) : too_large;
    }
    if (fd >= 0)
        close(fd);
    if (*why != NULL) {
        if (buf != NULL)
            memset(buf, 0, max + 1); /* it may hold a secret */
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    *len = got;
    return buf;
}

void gw_cfg_resolve_env_file(struct gw_cfg_ld *ld, struct gw_server_config *s, const char *key)
{
    const char *p, *why;
    size_t n;
    char *text;

    if (gw_cfg_scalar_str(ld->env_file, &p) != 0 || p[0] == '\0') {
        gw_cfg_err(ld, ld->env_file, key, "'%s' must be a file path", key);
        return;
    }
    s->env_file = gw_cfg_abspath(ld->c->dir, p);
    text = read_file(s->env_file, MAX_ENV_FILE, &n, &why);
    if (why == not_regular)
        gw_cfg_err(ld, ld->env_file, key, "envFile '%s' is not a regular file", s->env_file);
    else if (why == too_large)
        gw_cfg_err(ld, ld->env_file, key, "envFile '%s' is larger than 1 MiB", s->env_file);
    else if (why != NULL)
        gw_cfg_err(ld, ld->env_file, key, "envFile '%s' cannot be read: %s", s->env_file, why);
    else if (strlen(text) != n)
        gw_cfg_err(ld, ld->env_file, key, "envFile '%s' contains a NUL byte", s->env_file);
    else
        gw_cfg_parse_env_file(ld, s->env_file, text, &s->env, &s->nenv);
    free(text);
}

int gw_cfg_read_file_value(struct gw_cfg_ld *ld, const struct gw_yaml_node *v, const char *key,
                           size_t max, char **text, size_t *len, char **shown)
{
    const char *p, *why;
    char *sub, *missing = NULL, *path;

    if (gw_cfg_scalar_str(v, &p) != 0 || p[0] == '\0') {
        gw_cfg_err(ld, v, key, "'%s': {file: PATH} needs the path of a file", key);
        return UV_EINVAL;
    }
    if (gw_cfg_subst(p, &sub, &missing) != 0) {
        gw_cfg_err(ld, v, key, "ConfigError: Environment variable '%s' not found", missing);
        free(missing);
        return UV_EINVAL;
    }
    path = gw_cfg_abspath(ld->c->dir, sub);
    free(sub);
    *text = read_file(path, max, len, &why);
    if (why != NULL) {
        /* The path is no secret; the file's text is never quoted. */
        if (why == too_large)
            gw_cfg_err(ld, v, key, "'%s': the file '%s' cannot be used: larger than %zu KiB", key,
                       path, max >> 10);
        else
            gw_cfg_err(ld, v, key, "'%s': the file '%s' cannot be used: %s", key, path, why);
        free(path);
        return UV_EINVAL;
    }
    if (shown)
        *shown = path;
    else
        free(path);
    return 0;
}

/* A credential file (systemd's LoadCredential=) holds one secret, maybe
 * with the newline an editor or `echo` leaves. */
#define MAX_SECRET_FILE (64u << 10)

int gw_cfg_secret_value(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                        char **out)
{
    const char *k;
    if (n->kind != GW_YAML_MAP || gw_yaml_map_len(n) != 1 ||
        gw_cfg_scalar_str(gw_yaml_map_key(n, 0), &k) != 0 || strcmp(k, "file") != 0)
        return gw_cfg_env_value(ld, n, key, out);
    const struct gw_yaml_node *v = gw_yaml_map_value(n, 0);
    char *text, *path;
    size_t len;
    if (gw_cfg_read_file_value(ld, v, key, MAX_SECRET_FILE, &text, &len, &path) != 0)
        return UV_EINVAL;
    if (len > 0 && text[len - 1] == '\n')
        text[--len] = '\0';
    if (len > 0 && text[len - 1] == '\r')
        text[--len] = '\0';
    int rc = 0;
    if (gw_cfg_has_ctl(text, len)) {
        gw_cfg_err(ld, v, key,
                   "'%s': the file '%s' cannot be used: more than one line (or a NUL byte)", key,
                   path);
        rc = UV_EINVAL;
    } else {
        *out = gw_xstrndup(text, len);
    }
    free(path);
    memset(text, 0, len);
    free(text);
    return rc;
}

static bool valid_env_name(const char *s, size_t len)
{
    return len > 0 && strlen(s) == len && strchr(s, '=') == NULL;
}

/* Header names that carry credentials: a literal value of one of these is
 * a secret written into the file. */
static bool credential_header(const char *name)
{
    static const char *const words[] = {"auth", "token", "key", "secret", "cookie", "password"};

    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strcasestr(name, words[i]) != NULL)
            return true;
    }
    return false;
}

/* `env` or `headers`: NAME → value pairs appended to kv. */
void gw_cfg_resolve_pairs(struct gw_cfg_ld *ld, const struct gw_yaml_node *m, const char *key,
                          bool headers, struct gw_kv **kv, size_t *nkv)
{
    if (gw_yaml_is_null(m))
        return;
    if (m->kind != GW_YAML_MAP) {
        gw_cfg_err(ld, m, key, "'%s' must be a map of names to values", key);
        return;
    }
    for (size_t i = 0; i < gw_yaml_map_len(m); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(m, i);
        char *v, *sub = gw_cfg_join_key(key, k->str ? k->str : "?");
        if (k->kind != GW_YAML_SCALAR ||
            !(headers ? gw_cfg_is_token(k->str) : valid_env_name(k->str, k->len)))
            gw_cfg_err(ld, k, sub,
                       headers ? "header name '%s' is not a valid HTTP token (letters, digits "
                                 "and !#$%%&'*+-.^_`|~)"
                               : "'%s' is not a valid environment variable name",
                       k->str ? k->str : "?");
        else if (gw_cfg_env_value(ld, gw_yaml_map_value(m, i), sub, &v) == 0)
            gw_cfg_kv_set(kv, nkv, gw_xstrdup(k->str), v);
        if (headers && k->str != NULL && credential_header(k->str))
            gw_cfg_note_literal_secret(ld, gw_yaml_map_value(m, i), sub);
        free(sub);
    }
}

/* Variables already reported missing for this server: each is said once. */
struct missing_set {
    struct gw_cfg_strv names;
};

/* Substitutes `${VAR}` in *field (seed 002: every string of a server
 * block), keeping the value as a secret and, when `shown_out` is given, the
 * text with *** in its place. */
static void subst_string(struct gw_cfg_ld *ld, struct gw_server_config *s, struct missing_set *ms,
                         const struct gw_yaml_node *at, const char *key, char **field,
                         char **shown_out)
{
    char *v = NULL, *shown = NULL, *missing = NULL;

    if (*field == NULL || strstr(*field, "${") == NULL)
        return;
    if (gw_cfg_subst_ex(*field, &v, &shown, &s->var_values, &missing) != 0) {
        bool said = false;
        for (size_t i = 0; i < ms->names.n && !said; i++)
            said = strcmp(ms->names.v[i], missing) == 0;
        if (!said) {
            gw_cfg_err(ld, at, key, "ConfigError: Environment variable '%s' not found", missing);
            ms->names.v = gw_xrealloc(ms->names.v, (ms->names.n + 1) * sizeof(char *));
            ms->names.v[ms->names.n++] = missing;
        } else {
            free(missing);
        }
        return;
    }
    free(*field);
    *field = v;
    if (shown_out != NULL) {
        free(*shown_out);
        *shown_out = shown;
    } else {
        free(shown);
    }
}

static void subst_json(struct gw_cfg_ld *ld, struct gw_server_config *s, struct missing_set *ms,
                       const struct gw_yaml_node *at, const char *key, json_t *j);

/* `v` substituted: a new string for a string, else NULL (`v` itself is
 * substituted in place when it is an object or array). */
static json_t *subst_value(struct gw_cfg_ld *ld, struct gw_server_config *s, struct missing_set *ms,
                           const struct gw_yaml_node *at, const char *key, json_t *v)
{
    char *str;
    json_t *out;

    if (!json_is_string(v)) {
        subst_json(ld, s, ms, at, key, v);
        return NULL;
    }
    str = gw_xstrdup(json_string_value(v));
    subst_string(ld, s, ms, at, key, &str, NULL);
    out = json_string(str);
    free(str);
    return out;
}

static void subst_json(struct gw_cfg_ld *ld, struct gw_server_config *s, struct missing_set *ms,
                       const struct gw_yaml_node *at, const char *key, json_t *j)
{
    const char *k;
    size_t i;
    json_t *v, *n;

    json_object_foreach(j, k, v)
    {
        if ((n = subst_value(ld, s, ms, at, key, v)) != NULL)
            json_object_set_new(j, k, n);
    }
    json_array_foreach(j, i, v)
    {
        if ((n = subst_value(ld, s, ms, at, key, v)) != NULL)
            json_array_set_new(j, i, n);
    }
}

void gw_cfg_subst_server(struct gw_cfg_ld *ld, struct gw_server_config *s,
                         const struct gw_yaml_node *idn, const struct gw_yaml_node *body,
                         const char *shown)
{
    struct missing_set ms = {{0}};
    char *key = gw_xasprintf("%s.args", shown);

    for (size_t i = 0; i < s->nargs; i++) {
        char *one = NULL;
        subst_string(ld, s, &ms, gw_cfg_place(body, "args", idn), key, &s->args[i], &one);
        if (one != NULL && s->args_shown == NULL)
            s->args_shown = gw_xcalloc(s->nargs, sizeof(char *));
        if (one != NULL)
            s->args_shown[i] = one;
    }
    for (size_t i = 0; s->args_shown != NULL && i < s->nargs; i++) {
        if (s->args_shown[i] == NULL)
            s->args_shown[i] = gw_xstrdup(s->args[i]);
    }
    free(key);
    key = gw_xasprintf("%s.url", shown);
    subst_string(ld, s, &ms, gw_cfg_place(body, "url", idn), key, &s->url, &s->url_shown);
    free(key);
    key = gw_xasprintf("%s.sessionId", shown);
    subst_string(ld, s, &ms, gw_cfg_place(body, "sessionId", idn), key, &s->session_id, NULL);
    free(key);
    key = gw_xasprintf("%s.config", shown);
    subst_json(ld, s, &ms, gw_cfg_place(body, "config", idn), key, s->init_config);
    free(key);
    gw_cfg_free_strv(ms.names.v, ms.names.n);
}
