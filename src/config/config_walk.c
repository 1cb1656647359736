/* The walk of mcp.yaml's tree that the directive tables drive: each key
 * found, its row, the value stored at the row's offset (or its function
 * called), defaults for what is absent, and the diagnostics of the walk —
 * unknown keys with a suggestion, duplicate keys, wrong types — each
 * naming file:line and key. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/config_internal.h"

struct table {
    const struct gw_cfg_directive *rows;
    size_t n;
};

static struct table table_at(size_t i)
{
    struct table t[] = {{gw_cfg_top_directives, gw_cfg_ntop_directives},
                        {gw_cfg_gateway_directives, gw_cfg_ngateway_directives},
                        {gw_cfg_server_directives, gw_cfg_nserver_directives},
                        {gw_cfg_client_directives, gw_cfg_nclient_directives}};
    return i < 4 ? t[i] : (struct table){NULL, 0};
}

static const struct gw_cfg_directive *find_directive(const char *key)
{
    for (size_t t = 0; t < 4; t++) {
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
    for (size_t t = 0; t < 4; t++) {
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
    for (size_t t = 0; t < 4; t++) {
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

size_t gw_cfg_first_same_key(const struct gw_yaml_node *m, size_t i)
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
        size_t j = gw_cfg_first_same_key(n, i);
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
    if (gw_cfg_check_unquoted(ld, n, key) != 0)
        return UV_EINVAL;
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
        if (k->kind != GW_YAML_SCALAR || gw_cfg_first_same_key(m, i) != i)
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
    for (size_t t = 0; t < 4; t++) {
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
