/* Config loader: mcp.yaml version 1 → an immutable gw_config snapshot.
 *
 * The table of directives below (with the server rows in config_server.c)
 * drives the walk over the YAML tree: each row names a key, its type, its
 * default and the seed it comes from, and docs/config.md documents every
 * row (a unit test checks that). Diagnostics are collected, never logged:
 * the caller decides whether they become Problems, log lines or
 * --check-config output. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "gw/config_internal.h"

#define GW_OFF(field) offsetof(struct gw_gateway_config, field)

static const char *const default_inherit_env[] = {
    "PATH",        "HOME",    "USER",   "LOGNAME",      "LANG", "LC_*",          "TZ",
    "TMPDIR",      "XDG_*",   "NODE_*", "npm_config_*", "UV_*", "SSL_CERT_FILE", "HTTP_PROXY",
    "HTTPS_PROXY", "NO_PROXY"};

static int set_listen(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                      const struct gw_yaml_node *n, const char *key, void *base)
{
    const char *why;
    struct gw_gateway_config *g = base;
    if (gw_cfg_check_listen(g->listen, &why) == 0)
        return 0;
    gw_cfg_err(ld, n, key, "'%s' is not a listen address: '%s'; %s", key, g->listen, why);
    return UV_EINVAL;
}

static int set_auth_token(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                          const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    char *v;
    if (n == NULL || gw_cfg_env_value(ld, n, key, &v) != 0)
        return n == NULL ? 0 : UV_EINVAL;
    gw_cfg_note_literal_secret(ld, n, key);
    if (v[0] == '\0') {
        free(v);
        gw_cfg_err(ld, n, key, "'%s' is empty; remove it to run without a token", key);
        return UV_EINVAL;
    }
    free(g->auth_token);
    g->auth_token = v;
    return 0;
}

static int set_artifacts_dir(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                             const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    const char *s = d->def;
    if (n != NULL && (gw_cfg_scalar_str(n, &s) != 0 || s[0] == '\0')) {
        gw_cfg_err(ld, n, key, "'%s' must be a directory path", key);
        return UV_EINVAL;
    }
    free(g->artifacts_dir);
    g->artifacts_dir = gw_cfg_abspath(ld->c->dir, s);
    return 0;
}

static int set_inherit_env(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                           const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    char **v = NULL;
    size_t nv = 0;
    if (n == NULL) {
        nv = sizeof(default_inherit_env) / sizeof(default_inherit_env[0]);
        v = gw_xmalloc(nv * sizeof(*v));
        for (size_t i = 0; i < nv; i++)
            v[i] = gw_xstrdup(default_inherit_env[i]);
    } else if (gw_cfg_str_list(ld, n, key, &v, &nv) != 0) {
        return UV_EINVAL;
    }
    gw_cfg_free_strv(g->inherit_env, g->ninherit_env);
    g->inherit_env = v;
    g->ninherit_env = nv;
    for (size_t i = 0; i < nv; i++) {
        if (v[i][0] == '\0' || strchr(v[i], '=') != NULL)
            gw_cfg_err(ld, n, key, "'%s' holds '%s', which is not a variable name or pattern", key,
                       v[i]);
    }
    return 0;
}

static int set_origins(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                       const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    for (size_t i = 0; i < g->nallowed_origins; i++) {
        const char *o = g->allowed_origins[i];
        const char *sep = strstr(o, "://");
        if (sep == NULL || sep == o || sep[3] == '\0' || strchr(sep + 3, '/') != NULL)
            gw_cfg_err(ld, n, key,
                       "'%s' holds '%s'; an origin is scheme://host[:port], with no path", key, o);
    }
    return 0;
}

static int set_tool_changes(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    const char *s = "warn";
    if (n != NULL && gw_cfg_scalar_str(n, &s) != 0)
        s = "";
    if (strcmp(s, "warn") == 0 || strcmp(s, "disable") == 0) {
        g->tool_changes = s[0] == 'w' ? GW_TOOL_CHANGES_WARN : GW_TOOL_CHANGES_DISABLE;
        return 0;
    }
    gw_cfg_err(ld, n, key, "'%s' must be 'warn' or 'disable'", key);
    return UV_EINVAL;
}

static const struct gw_cfg_directive top_directives[] = {
    {"version", GW_CFG_CUSTOM, 0, 0, 0, NULL, NULL, "000", "integer (1)"},
    {"gateway", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "design", NULL},
    {"servers", GW_CFG_CUSTOM, 0, 0, 0, NULL, NULL, "000", "map of server id to server"},
};

static const struct gw_cfg_directive gateway_directives[] = {
    {"gateway.listen", GW_CFG_STRING, GW_OFF(listen), 0, 0, "127.0.0.1:7420", set_listen, "design",
     NULL},
    {"gateway.auth_token", GW_CFG_CUSTOM, 0, 0, 0, NULL, set_auth_token, "design",
     "env value (string, ${VAR}, {env: NAME})"},
    {"gateway.max_concurrent", GW_CFG_INT, GW_OFF(max_concurrent), 0, 1, "64", NULL, "004", NULL},
    {"gateway.request_timeout", GW_CFG_DURATION, GW_OFF(request_timeout_ms), 0, 1, "60s", NULL,
     "002", NULL},
    {"gateway.lease_idle_timeout", GW_CFG_DURATION, GW_OFF(lease_idle_timeout_ms), 0, 0, "15m",
     NULL, "000", NULL},
    {"gateway.max_instances_per_server", GW_CFG_INT, GW_OFF(max_instances_per_server), 0, 1, "32",
     NULL, "design", NULL},
    {"gateway.warm_spares", GW_CFG_INT, GW_OFF(warm_spares), 0, 0, "1", NULL, "design", NULL},
    {"gateway.artifacts_dir", GW_CFG_CUSTOM, 0, 0, 0, "./artifacts", set_artifacts_dir, "001",
     "path"},
    {"gateway.artifacts_max_bytes_per_dialog", GW_CFG_SIZE, GW_OFF(artifacts_max_bytes_per_dialog),
     0, 1, "64MiB", NULL, "design", NULL},
    {"gateway.artifacts_max_bytes", GW_CFG_SIZE, GW_OFF(artifacts_max_bytes), 0, 1, "1GiB", NULL,
     "design", NULL},
    {"gateway.allowed_commands", GW_CFG_STRLIST, GW_OFF(allowed_commands),
     GW_OFF(nallowed_commands), 0, "[]", NULL, "002", NULL},
    {"gateway.reserved_tool_names", GW_CFG_STRLIST, GW_OFF(reserved_tool_names),
     GW_OFF(nreserved_tool_names), 0, "[]", NULL, "000", NULL},
    {"gateway.max_body", GW_CFG_SIZE, GW_OFF(max_body), 0, 1, "8MiB", NULL, "design", NULL},
    {"gateway.max_header_bytes", GW_CFG_SIZE, GW_OFF(max_header_bytes), 0, 1024, "16KiB", NULL,
     "design", NULL},
    {"gateway.max_connections", GW_CFG_INT, GW_OFF(max_connections), 0, 1, "1024", NULL, "design",
     NULL},
    {"gateway.header_timeout", GW_CFG_DURATION, GW_OFF(header_timeout_ms), 0, 1, "10s", NULL,
     "design", NULL},
    {"gateway.keepalive_timeout", GW_CFG_DURATION, GW_OFF(keepalive_timeout_ms), 0, 0, "75s", NULL,
     "design", NULL},
    {"gateway.allowed_origins", GW_CFG_STRLIST, GW_OFF(allowed_origins), GW_OFF(nallowed_origins),
     0, "[]", set_origins, "design", NULL},
    {"gateway.inherit_env", GW_CFG_CUSTOM, 0, 0, 0,
     "[PATH, HOME, USER, LOGNAME, LANG, 'LC_*', TZ, TMPDIR, 'XDG_*', 'NODE_*', 'npm_config_*', "
     "'UV_*', SSL_CERT_FILE, HTTP_PROXY, HTTPS_PROXY, NO_PROXY]",
     set_inherit_env, "design", "list of names or patterns ('*' wildcard)"},
    {"gateway.tool_changes", GW_CFG_CUSTOM, 0, 0, 0, "warn", set_tool_changes, "design",
     "warn | disable"},
    {"gateway.shutdown_grace", GW_CFG_DURATION, GW_OFF(shutdown_grace_ms), 0, 0, "10s", NULL,
     "design", NULL},
    {"gateway.reload", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "000", NULL},
    {"gateway.reload.debounce_ms", GW_CFG_MS, GW_OFF(reload_debounce_ms), 0, 0, "200", NULL, "000",
     NULL},
    {"gateway.reload.poll_interval_ms", GW_CFG_MS, GW_OFF(reload_poll_interval_ms), 0, 10, "1000",
     NULL, "000", NULL},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct table {
    const struct gw_cfg_directive *rows;
    size_t n;
};

static struct table table_at(size_t i)
{
    struct table t[] = {{top_directives, NELEM(top_directives)},
                        {gateway_directives, NELEM(gateway_directives)},
                        {gw_cfg_server_directives, gw_cfg_nserver_directives}};
    return i < 3 ? t[i] : (struct table){NULL, 0};
}

static const struct gw_cfg_directive *find_directive(const char *key)
{
    for (size_t t = 0; t < 3; t++) {
        struct table tb = table_at(t);
        for (size_t i = 0; i < tb.n; i++) {
            if (strcmp(tb.rows[i].key, key) == 0)
                return &tb.rows[i];
        }
    }
    return NULL;
}

static const char *type_name(const struct gw_cfg_directive *d)
{
    static const char *const names[] = {"boolean",         "integer", "duration",
                                        "milliseconds",    "size",    "string",
                                        "list of strings", "map",     "custom"};
    return d->type_doc ? d->type_doc : names[d->type];
}

int gw_config_directive(size_t i, struct gw_config_directive_info *out)
{
    for (size_t t = 0; t < 3; t++) {
        struct table tb = table_at(t);
        if (i < tb.n) {
            out->key = tb.rows[i].key;
            out->type = type_name(&tb.rows[i]);
            out->def = tb.rows[i].def ? tb.rows[i].def : "";
            out->seed = tb.rows[i].seed;
            return 0;
        }
        i -= tb.n;
    }
    return UV_ENOENT;
}

void gw_cfg_diag_at(struct gw_cfg_ld *ld, enum gw_severity sev, enum gw_scope scope,
                    const char *server, const char *file, int line, int col, const char *key,
                    const char *msg)
{
    struct gw_config *c = ld->c;
    if (c->ndiags == ld->capdiags) {
        ld->capdiags = ld->capdiags ? ld->capdiags * 2 : 16;
        c->diags = gw_xrealloc(c->diags, ld->capdiags * sizeof(*c->diags));
    }
    struct gw_diag *d = &c->diags[c->ndiags++];
    d->severity = sev;
    d->scope = scope;
    d->file = gw_xstrdup(file ? file : ld->file);
    d->line = line;
    d->col = col;
    d->server = gw_xstrdup(server);
    d->key = gw_xstrdup(key ? key : "");
    d->message = gw_xstrdup(msg);
    if (sev != GW_SEV_ERROR)
        return;
    if (scope == GW_SCOPE_WORKSPACE) {
        c->ok = false;
    } else if (ld->srv != NULL && server != NULL && strcmp(ld->srv->id, server) == 0) {
        ld->srv->ok = false;
        if (ld->srv->error == NULL)
            ld->srv->error = gw_xstrdup(msg);
    }
}

void gw_cfg_diag(struct gw_cfg_ld *ld, enum gw_severity sev, const struct gw_yaml_node *n,
                 const char *key, const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0) {
        fputs("mcpgw: out of memory\n", stderr);
        abort();
    }
    va_end(ap);
    enum gw_scope scope = ld->srv ? GW_SCOPE_SERVER : GW_SCOPE_WORKSPACE;
    gw_cfg_diag_at(ld, sev, scope, ld->srv ? ld->srv->id : NULL, NULL, n ? n->line : 0,
                   n ? n->col : 0, key, msg);
    free(msg);
}

/* The last component of a dotted key. */
static const char *leaf(const char *key)
{
    const char *dot = strrchr(key, '.');
    return dot ? dot + 1 : key;
}

/* Direct children of `path` in the tables: rows "path.x" with no further
 * dot. For the top level `path` is "". */
static bool is_child(const char *path, const char *key)
{
    size_t n = strlen(path);
    if (n == 0)
        return strchr(key, '.') == NULL;
    return strncmp(key, path, n) == 0 && key[n] == '.' && strchr(key + n + 1, '.') == NULL;
}

void gw_cfg_unknown_key(struct gw_cfg_ld *ld, const char *path, const char *shown,
                        const struct gw_yaml_node *k)
{
    const char *best = NULL;
    int bestd = 3;
    for (size_t t = 0; t < 3; t++) {
        struct table tb = table_at(t);
        for (size_t i = 0; i < tb.n; i++) {
            if (!is_child(path, tb.rows[i].key))
                continue;
            int d = gw_cfg_edit_distance(k->str, leaf(tb.rows[i].key), 2);
            if (d < bestd) {
                bestd = d;
                best = leaf(tb.rows[i].key);
            }
        }
    }
    char *key = shown[0] ? gw_cfg_join_key(shown, k->str) : gw_xstrdup(k->str);
    const char *where = shown[0] ? shown : "the top level";
    if (best)
        gw_cfg_warn(ld, k, key, "unknown key '%s' in %s is ignored; did you mean '%s'?", k->str,
                    where, best);
    else
        gw_cfg_warn(ld, k, key, "unknown key '%s' in %s is ignored", k->str, where);
    free(key);
}

/* Index of the first pair before i with the same key, or i. */
static size_t first_same_key(const struct gw_yaml_node *m, size_t i)
{
    const struct gw_yaml_node *k = gw_yaml_map_key(m, i);
    for (size_t j = 0; j < i; j++) {
        const struct gw_yaml_node *o = gw_yaml_map_key(m, j);
        if (o->kind == GW_YAML_SCALAR && k->kind == GW_YAML_SCALAR && o->len == k->len &&
            memcmp(o->str, k->str, k->len) == 0)
            return j;
    }
    return i;
}

void gw_cfg_check_dups(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *shown,
                       int depth)
{
    if (depth > GW_CONFIG_MAX_DEPTH || n->kind == GW_YAML_SCALAR)
        return;
    for (size_t i = 0; n->kind == GW_YAML_SEQ && i < n->nkids; i++) {
        char *sub = gw_xasprintf("%s[%zu]", shown, i);
        gw_cfg_check_dups(ld, n->kids[i], sub, depth + 1);
        free(sub);
    }
    for (size_t i = 0; i < gw_yaml_map_len(n); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(n, i);
        size_t j = first_same_key(n, i);
        const char *ks = k->kind == GW_YAML_SCALAR ? k->str : "?";
        char *sub = shown[0] ? gw_cfg_join_key(shown, ks) : gw_xstrdup(ks);
        if (j != i)
            gw_cfg_err(ld, k, sub, "duplicate key '%s' in %s (first written at line %d)", ks,
                       shown[0] ? shown : "the top level", gw_yaml_map_key(n, j)->line);
        else
            gw_cfg_check_dups(ld, gw_yaml_map_value(n, i), sub, depth + 1);
        free(sub);
    }
}

void gw_cfg_free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int gw_cfg_str_list(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                    char ***out, size_t *nout)
{
    if (gw_yaml_is_null(n)) {
        *out = NULL;
        *nout = 0;
        return 0;
    }
    if (n->kind != GW_YAML_SEQ) {
        gw_cfg_err(ld, n, key, "'%s' must be a list of strings, e.g. ['a', 'b']", key);
        return UV_EINVAL;
    }
    for (size_t i = 0; i < n->nkids; i++) {
        const char *s;
        if (gw_cfg_scalar_str(n->kids[i], &s) != 0 || gw_yaml_is_null(n->kids[i])) {
            gw_cfg_err(ld, n->kids[i], key, "item %zu of '%s' must be a string", i + 1, key);
            return UV_EINVAL;
        }
    }
    char **v = gw_xmalloc(n->nkids * sizeof(*v));
    for (size_t i = 0; i < n->nkids; i++)
        v[i] = gw_xstrdup(n->kids[i]->str);
    *out = v;
    *nout = n->nkids;
    return 0;
}

static const char *const duration_forms =
    "a number of seconds (30, 0.5), a number with a unit (250ms, 30s, 5m, 1h, 1m30s) or "
    "ISO-8601 (PT30S, P0DT0H1M0S, P1D)";
static const char *const size_forms =
    "a number of bytes (1048576) or a whole number with a unit: KiB, MiB, GiB (powers of "
    "1024) or KB, MB, GB (powers of 1000), e.g. 8MiB";

/* Converts scalar text for a typed row and stores it at base+off. With
 * n == NULL the text is the row's default and cannot fail. */
static int store_number(const struct gw_cfg_directive *d, const char *s, void *field,
                        const char **forms)
{
    int64_t iv;
    uint64_t uv;
    switch (d->type) {
    case GW_CFG_INT:
        *forms = "a whole number";
        if (gw_cfg_parse_int(s, &iv) != 0 || iv < d->min || iv > INT_MAX)
            return UV_EINVAL;
        *(int *)field = (int)iv;
        return 0;
    case GW_CFG_DURATION:
    case GW_CFG_MS:
        *forms = d->type == GW_CFG_MS ? "a number of milliseconds (200) or a duration with a unit "
                                        "(250ms, 1s)"
                                      : duration_forms;
        if ((d->type == GW_CFG_MS ? gw_cfg_parse_ms(s, &uv) : gw_parse_duration(s, &uv)) != 0 ||
            uv < (uint64_t)d->min)
            return UV_EINVAL;
        *(uint64_t *)field = uv;
        return 0;
    default:
        *forms = size_forms;
        if (gw_parse_size(s, &uv) != 0 || uv < (uint64_t)d->min)
            return UV_EINVAL;
        *(uint64_t *)field = uv;
        return 0;
    }
}

static int store_scalar(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                        const struct gw_yaml_node *n, const char *key, const char *s, void *base)
{
    void *field = (char *)base + d->off;
    const char *forms = "";
    if (d->type == GW_CFG_BOOL) {
        if (gw_cfg_parse_bool(s, (bool *)field) == 0)
            return 0;
        gw_cfg_err(ld, n, key, "'%s' must be true or false, not '%s'", key, s);
        return UV_EINVAL;
    }
    if (d->type == GW_CFG_STRING) {
        free(*(char **)field);
        *(char **)field = gw_xstrdup(s);
        return 0;
    }
    if (store_number(d, s, field, &forms) == 0)
        return 0;
    bool ms = d->type == GW_CFG_DURATION || d->type == GW_CFG_MS;
    if (d->min > 0)
        gw_cfg_err(ld, n, key, "'%s' is '%s'; write %s, at least %lld%s", key, s, forms,
                   (long long)d->min,
                   ms                       ? "ms"
                   : d->type == GW_CFG_SIZE ? " bytes"
                                            : "");
    else
        gw_cfg_err(ld, n, key, "'%s' is '%s'; write %s (not negative)", key, s, forms);
    return UV_EINVAL;
}

static int apply(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                 const struct gw_yaml_node *n, const char *path, const char *key, void *base)
{
    const char *s;
    int rc = 0;
    switch (d->type) {
    case GW_CFG_CUSTOM:
        return d->fn ? d->fn(ld, d, n, key, base) : 0;
    case GW_CFG_SECTION:
        gw_cfg_walk(ld, path, key, n, base);
        return 0;
    case GW_CFG_STRLIST:
        gw_cfg_free_strv(*(char ***)((char *)base + d->off), *(size_t *)((char *)base + d->off2));
        *(char ***)((char *)base + d->off) = NULL;
        *(size_t *)((char *)base + d->off2) = 0;
        rc = gw_cfg_str_list(ld, n, key, (char ***)((char *)base + d->off),
                             (size_t *)((char *)base + d->off2));
        break;
    default:
        if (gw_cfg_scalar_str(n, &s) != 0 || gw_yaml_is_null(n)) {
            gw_cfg_err(ld, n, key, "'%s' needs a single value (%s)", key, type_name(d));
            return UV_EINVAL;
        }
        rc = store_scalar(ld, d, n, key, s, base);
    }
    if (rc == 0 && d->fn != NULL)
        rc = d->fn(ld, d, n, key, base);
    return rc;
}

void gw_cfg_walk(struct gw_cfg_ld *ld, const char *path, const char *shown,
                 const struct gw_yaml_node *m, void *base)
{
    if (gw_yaml_is_null(m))
        return;
    if (m->kind != GW_YAML_MAP) {
        gw_cfg_err(ld, m, shown, "'%s' must be a map of keys to values", shown);
        return;
    }
    for (size_t i = 0; i < gw_yaml_map_len(m); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(m, i);
        if (k->kind != GW_YAML_SCALAR || first_same_key(m, i) != i)
            continue; /* reported by gw_cfg_check_dups or below */
        char *full = gw_cfg_join_key(path, k->str);
        char *key = gw_cfg_join_key(shown, k->str);
        const struct gw_cfg_directive *d = find_directive(full);
        if (d == NULL)
            gw_cfg_unknown_key(ld, path, shown, k);
        else
            apply(ld, d, gw_yaml_map_value(m, i), full, key, base);
        free(full);
        free(key);
    }
}

void gw_cfg_apply_defaults(struct gw_cfg_ld *ld, const char *path, void *base)
{
    size_t n = strlen(path);
    for (size_t t = 0; t < 3; t++) {
        struct table tb = table_at(t);
        for (size_t i = 0; i < tb.n; i++) {
            const struct gw_cfg_directive *d = &tb.rows[i];
            if (strncmp(d->key, path, n) != 0 || d->key[n] != '.')
                continue;
            if (d->type == GW_CFG_CUSTOM && d->fn != NULL)
                d->fn(ld, d, NULL, d->key, base);
            else if (d->def != NULL && d->type <= GW_CFG_STRING)
                store_scalar(ld, d, NULL, d->key, d->def, base);
        }
    }
}

const char *gw_transport_name(enum gw_transport_kind t)
{
    switch (t) {
    case GW_TRANSPORT_STDIO:
        return "stdio";
    case GW_TRANSPORT_STREAMABLE_HTTP:
        return "streamable_http";
    case GW_TRANSPORT_SSE:
        return "sse";
    default:
        return "websocket";
    }
}

static struct gw_config *new_config(const char *path)
{
    struct gw_config *c = gw_xmalloc(sizeof(*c));
    memset(c, 0, sizeof(*c));
    c->refs = 1;
    c->ok = true;
    char cwd[PATH_MAX];
    if (path[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL)
        c->path = gw_cfg_abspath(cwd, path);
    else
        c->path = gw_cfg_abspath("/", path);
    char *tmp = gw_xstrdup(c->path);
    c->dir = gw_xstrdup(dirname(tmp));
    free(tmp);
    return c;
}

static void check_version(struct gw_cfg_ld *ld, const struct gw_yaml_node *root)
{
    for (size_t i = 0; i < gw_yaml_map_len(root); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(root, i);
        if (k->kind != GW_YAML_SCALAR || strcmp(k->str, "version") != 0)
            continue;
        const struct gw_yaml_node *v = gw_yaml_map_value(root, i);
        const char *s;
        if (gw_cfg_scalar_str(v, &s) == 0 && strcmp(s, "1") == 0)
            return;
        gw_cfg_err(ld, v, "version", "unsupported version '%s'; this mcpgw reads 'version: 1'",
                   v->kind == GW_YAML_SCALAR ? v->str : "(not a number)");
        return;
    }
    gw_cfg_diag_at(ld, GW_SEV_ERROR, GW_SCOPE_WORKSPACE, NULL, NULL, root->line, root->col,
                   "version", "missing 'version'; add 'version: 1' at the top of the file");
}

static void load_servers(struct gw_cfg_ld *ld, const struct gw_yaml_node *m)
{
    if (gw_yaml_is_null(m))
        return;
    if (m->kind != GW_YAML_MAP) {
        gw_cfg_err(ld, m, "servers", "'servers' must be a map of server ids to their settings");
        return;
    }
    for (size_t i = 0; i < gw_yaml_map_len(m); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(m, i);
        size_t j = first_same_key(m, i);
        if (k->kind != GW_YAML_SCALAR) {
            gw_cfg_err(ld, k, "servers", "a server id must be a string");
        } else if (j != i) {
            char *key = gw_xasprintf("servers.%s", k->str);
            gw_cfg_err(ld, k, key, "duplicate server id '%s' (first defined at line %d)", k->str,
                       gw_yaml_map_key(m, j)->line);
            free(key);
        } else {
            gw_cfg_load_server(ld, k, gw_yaml_map_value(m, i));
        }
    }
}

/* Top-level keys: version first, then gateway (servers read its
 * allowed_commands), then servers, whatever their order in the file. */
static void load_root(struct gw_cfg_ld *ld, const struct gw_yaml_node *root)
{
    const struct gw_yaml_node *gw = NULL, *servers = NULL;
    check_version(ld, root);
    for (size_t i = 0; i < gw_yaml_map_len(root); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(root, i);
        const struct gw_yaml_node *v = gw_yaml_map_value(root, i);
        if (k->kind != GW_YAML_SCALAR) {
            gw_cfg_err(ld, k, "", "top-level keys must be strings");
        } else if (first_same_key(root, i) != i) {
            gw_cfg_err(ld, k, k->str,
                       "duplicate key '%s' at the top level (first written at "
                       "line %d)",
                       k->str, gw_yaml_map_key(root, first_same_key(root, i))->line);
        } else if (strcmp(k->str, "gateway") == 0) {
            gw = v;
            gw_cfg_check_dups(ld, v, "gateway", 1);
        } else if (strcmp(k->str, "servers") == 0) {
            servers = v;
        } else if (strcmp(k->str, "version") != 0) {
            gw_cfg_unknown_key(ld, "", "", k);
        }
    }
    if (gw != NULL)
        gw_cfg_walk(ld, "gateway", "gateway", gw, &ld->c->gateway);
    if (servers != NULL)
        load_servers(ld, servers);
}

static void load_text(struct gw_cfg_ld *ld, const char *buf, size_t len)
{
    struct gw_yaml_doc *doc = NULL;
    struct gw_yaml_error err;
    if (len > GW_CONFIG_MAX_FILE) {
        char *msg = gw_xasprintf("the config file '%s' is %zu bytes; the limit is 4 MiB (%u bytes)",
                                 ld->file, len, GW_CONFIG_MAX_FILE);
        gw_cfg_diag_at(ld, GW_SEV_ERROR, GW_SCOPE_WORKSPACE, NULL, NULL, 0, 0, "", msg);
        free(msg);
        return;
    }
    int rc = gw_yaml_parse(buf, len, GW_CONFIG_MAX_NODES, GW_CONFIG_MAX_DEPTH, &doc, &err);
    if (rc != 0) {
        gw_cfg_diag_at(ld, GW_SEV_ERROR, GW_SCOPE_WORKSPACE, NULL, NULL, err.line, err.col, "",
                       rc == UV_ENOMEM ? "out of memory while parsing YAML" : err.message);
        return;
    }
    const struct gw_yaml_node *root = gw_yaml_root(doc);
    if (root == NULL || gw_yaml_is_null(root))
        gw_cfg_diag_at(ld, GW_SEV_ERROR, GW_SCOPE_WORKSPACE, NULL, NULL, 1, 1, "version",
                       "the file is empty; it needs at least 'version: 1'");
    else if (root->kind != GW_YAML_MAP)
        gw_cfg_err(ld, root, "", "the top level must be a map with 'version: 1' and 'servers:'");
    else
        load_root(ld, root);
    gw_yaml_free(doc);
}

void gw_cfg_note_literal_secret(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key)
{
    if (ld->literal_secret_key != NULL || n == NULL || n->kind != GW_YAML_SCALAR ||
        n->str == NULL || strstr(n->str, "${") != NULL)
        return;
    ld->literal_secret_key = gw_xstrdup(key);
    ld->literal_secret_line = n->line;
    ld->literal_secret_col = n->col;
}

/* security.md: a config file holding a secret must not be readable by
 * every user of the machine. */
static void check_secret_mode(struct gw_cfg_ld *ld, const struct stat *st)
{
    if (ld->literal_secret_key != NULL && (st->st_mode & S_IROTH))
        gw_cfg_diag_at(ld, GW_SEV_WARNING, GW_SCOPE_WORKSPACE, NULL, NULL, ld->literal_secret_line,
                       ld->literal_secret_col, ld->literal_secret_key,
                       "this file is readable by every user and holds a secret written "
                       "literally; use {env: NAME} for it, or chmod o-r the file");
}

static struct gw_config *start(const char *path, struct gw_cfg_ld *ld)
{
    struct gw_config *c = new_config(path);
    memset(ld, 0, sizeof(*ld));
    ld->c = c;
    ld->file = c->path;
    gw_cfg_apply_defaults(ld, "gateway", &c->gateway);
    return c;
}

int gw_config_load_buffer(const char *path, const char *buf, size_t len, struct gw_config **out)
{
    struct gw_cfg_ld ld;
    struct gw_config *c = start(path, &ld);
    c->exists = true;
    load_text(&ld, buf, len);
    free(ld.literal_secret_key);
    *out = c;
    return 0;
}

/* Reads at most GW_CONFIG_MAX_FILE + 1 bytes, so a file that grows while
 * it is read is still refused by size. The buffer grows with the file: a
 * 4 MiB buffer allocated for every load is mmapped and unmapped, and that
 * free raises glibc's mmap threshold to 4 MiB for the rest of the process,
 * which then serves every large buffer from the heap and keeps it there. */
static int read_file(int fd, char **buf, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *b = gw_xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap == GW_CONFIG_MAX_FILE + 1)
                break;
            cap = cap * 2 > GW_CONFIG_MAX_FILE + 1 ? GW_CONFIG_MAX_FILE + 1 : cap * 2;
            b = gw_xrealloc(b, cap);
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b);
            return -errno;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *buf = b;
    *len = n;
    return 0;
}

static void file_error(struct gw_cfg_ld *ld, const char *what)
{
    char *msg = gw_xasprintf("cannot read the config file '%s': %s", ld->file, what);
    gw_cfg_diag_at(ld, GW_SEV_ERROR, GW_SCOPE_WORKSPACE, NULL, NULL, 0, 0, "", msg);
    free(msg);
}

/* Returns a descriptor of a regular file, in blocking mode, UV_ENOENT when
 * there is no file (an empty config), or UV_EINVAL after recording why the
 * file cannot be read. It opens non-blocking: open() of a FIFO waits for a
 * writer otherwise, and the daemon's loop (a reload) would wait with it. */
static int open_regular(struct gw_cfg_ld *ld, const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
        return UV_ENOENT;
    if (fd < 0) {
        file_error(ld, strerror(errno));
        return UV_EINVAL;
    }
    if (fstat(fd, st) != 0)
        file_error(ld, strerror(errno));
    else if (!S_ISREG(st->st_mode))
        file_error(ld, S_ISDIR(st->st_mode)    ? "it is a directory, not a regular file"
                       : S_ISFIFO(st->st_mode) ? "it is a FIFO, not a regular file"
                                               : "it is not a regular file");
    else if (fcntl(fd, F_SETFL, 0) != 0)
        file_error(ld, strerror(errno));
    else
        return fd;
    close(fd);
    return UV_EINVAL;
}

int gw_config_load(const char *path, struct gw_config **out)
{
    struct gw_cfg_ld ld;
    struct gw_config *c = start(path, &ld);
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int rc, fd = open_regular(&ld, c->path, &st);
    *out = c;
    if (fd == UV_ENOENT)
        return 0;
    c->exists = true;
    if (fd < 0)
        return 0;
    rc = read_file(fd, &buf, &len);
    if (rc != 0) {
        file_error(&ld, strerror(-rc));
    } else {
        load_text(&ld, buf, len);
        check_secret_mode(&ld, &st);
        free(buf);
    }
    close(fd);
    free(ld.literal_secret_key);
    return 0;
}

struct gw_config *gw_config_ref(struct gw_config *c)
{
    c->refs++;
    return c;
}

void gw_config_unref(struct gw_config *c)
{
    if (c == NULL || --c->refs > 0)
        return;
    struct gw_gateway_config *g = &c->gateway;
    free(g->listen);
    free(g->auth_token);
    free(g->artifacts_dir);
    gw_cfg_free_strv(g->allowed_commands, g->nallowed_commands);
    gw_cfg_free_strv(g->reserved_tool_names, g->nreserved_tool_names);
    gw_cfg_free_strv(g->allowed_origins, g->nallowed_origins);
    gw_cfg_free_strv(g->inherit_env, g->ninherit_env);
    for (size_t i = 0; i < c->nservers; i++)
        gw_cfg_free_server(&c->servers[i]);
    free(c->servers);
    for (size_t i = 0; i < c->ndiags; i++) {
        free(c->diags[i].file);
        free(c->diags[i].server);
        free(c->diags[i].key);
        free(c->diags[i].message);
    }
    free(c->diags);
    free(c->path);
    free(c->dir);
    free(c);
}

const struct gw_server_config *gw_config_server(const struct gw_config *c, const char *id)
{
    for (size_t i = 0; i < c->nservers; i++) {
        if (strcmp(c->servers[i].id, id) == 0)
            return &c->servers[i];
    }
    return NULL;
}

char *gw_diag_format(const struct gw_diag *d)
{
    char place[64] = "";
    char *srv = d->server ? gw_xasprintf("[server %s] ", d->server) : gw_xstrdup("");
    if (d->line > 0)
        snprintf(place, sizeof(place), ":%d:%d", d->line, d->col);
    char *s = gw_xasprintf("%s%s: %s: %s%s", d->file, place,
                           d->severity == GW_SEV_ERROR ? "error" : "warning", srv, d->message);
    free(srv);
    return s;
}
