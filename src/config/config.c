/* Config loader: mcp.yaml version 1 → an immutable gw_config snapshot.
 *
 * The tables of directives below (with the server rows in config_server.c)
 * drive the walk over the YAML tree (config_walk.c): each row names a key,
 * its type, its default and the seed it comes from, and docs/config.md
 * documents every row (a unit test checks that). Diagnostics are
 * collected, never logged: the caller decides whether they become
 * Problems, log lines or --check-config output. */
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

static int set_default_dialog(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                              const struct gw_yaml_node *n, const char *key, void *base)
{
    static const char *const names[] = {[GW_MCP_DIALOG_CLIENT] = "client",
                                        [GW_MCP_DIALOG_SHARED] = "shared",
                                        [GW_MCP_DIALOG_NONE] = "none"};
    struct gw_gateway_config *g = base;
    const char *s = d->def;

    if (n != NULL && gw_cfg_scalar_str(n, &s) != 0)
        s = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(s, names[i]) == 0) {
            g->mcp_default_dialog = (enum gw_mcp_default_dialog)i;
            return 0;
        }
    }
    gw_cfg_err(ld, n, key, "'%s' must be 'client', 'shared' or 'none'", key);
    return UV_EINVAL;
}

static int check_max_results(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                             const struct gw_yaml_node *n, const char *key, void *base)
{
    const struct gw_gateway_config *g = base;

    if (g->tool_search_max_results <= GW_TOOLSEARCH_LIMIT_MAX)
        return 0;
    gw_cfg_err(ld, n, key, "'%s' must be at most %d", key, GW_TOOLSEARCH_LIMIT_MAX);
    return UV_EINVAL;
}

const struct gw_cfg_directive gw_cfg_top_directives[] = {
    {"version", GW_CFG_CUSTOM, 0, 0, 0, NULL, NULL, "000", "integer (1)"},
    {"gateway", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "design", NULL},
    {"servers", GW_CFG_CUSTOM, 0, 0, 0, NULL, NULL, "000", "map of server id to server"},
    {"clients", GW_CFG_CUSTOM, 0, 0, 0, NULL, NULL, "design", "map of client name to client"},
};

const struct gw_cfg_directive gw_cfg_gateway_directives[] = {
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
    {"gateway.mcp_default_dialog", GW_CFG_CUSTOM, 0, 0, 0, "client", set_default_dialog, "design",
     "client | shared | none"},
    {"gateway.shutdown_grace", GW_CFG_DURATION, GW_OFF(shutdown_grace_ms), 0, 0, "10s", NULL,
     "design", NULL},
    {"gateway.ui", GW_CFG_BOOL, GW_OFF(ui), 0, 0, "true", NULL, "design", NULL},
    {"gateway.state_dir", GW_CFG_STRING, GW_OFF(state_dir), 0, 0, NULL, gw_cfg_set_state_dir,
     "design", NULL},
    {"gateway.sandbox", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "design", NULL},
    {"gateway.sandbox.default", GW_CFG_CUSTOM, GW_OFF(sandbox), 0, 0, "off",
     gw_cfg_set_sandbox_default, "design", "on | off"},
    {"gateway.sandbox.require", GW_CFG_BOOL, GW_OFF(sandbox_require), 0, 0, "false", NULL, "design",
     NULL},
    {"gateway.sandbox.network", GW_CFG_CUSTOM, GW_OFF(sandbox), 0, 0, "none",
     gw_cfg_set_sandbox_network, "design", "none | host | list of destinations"},
    {"gateway.sandbox.read", GW_CFG_CUSTOM, GW_OFF(sandbox), 0, 0, "[]", gw_cfg_set_sandbox_read,
     "design", "list of paths (bound read-only)"},
    {"gateway.sandbox.write", GW_CFG_CUSTOM, GW_OFF(sandbox), 0, 0, "[]", gw_cfg_set_sandbox_write,
     "design", "list of paths (bound read-write)"},
    {"gateway.sandbox.home", GW_CFG_CUSTOM, GW_OFF(sandbox), 0, 0, "server",
     gw_cfg_set_sandbox_home, "design", "server | dialog"},
    {"gateway.sandbox.memory", GW_CFG_SIZE, GW_SANDBOX_OFF(GW_OFF(sandbox), memory), 0, 1048576,
     NULL, NULL, "design", NULL},
    {"gateway.sandbox.pids", GW_CFG_INT, GW_SANDBOX_OFF(GW_OFF(sandbox), pids), 0, 1, NULL, NULL,
     "design", NULL},
    {"gateway.sandbox.cpu", GW_CFG_CUSTOM, GW_OFF(sandbox), 0, 0, NULL, gw_cfg_set_sandbox_cpu,
     "design", "number of cores (0.5, 2)"},
    {"gateway.sandbox.tmp", GW_CFG_SIZE, GW_SANDBOX_OFF(GW_OFF(sandbox), tmp), 0, 1048576, "64MiB",
     NULL, "design", NULL},
    {"gateway.oauth", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "design", NULL},
    {"gateway.oauth.redirect_uri", GW_CFG_STRING, GW_OFF(oauth_redirect_uri), 0, 0, NULL,
     gw_cfg_set_redirect_uri, "design", NULL},
    {"gateway.oauth.client_metadata_url", GW_CFG_STRING, GW_OFF(oauth_client_metadata_url), 0, 0,
     NULL, gw_cfg_set_client_metadata_url, "design", NULL},
    {"gateway.tracing", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "design", NULL},
    {"gateway.tracing.endpoint", GW_CFG_CUSTOM, 0, 0, 0, "", gw_cfg_set_tracing, "design",
     "URL (http://127.0.0.1:4318; $OTEL_EXPORTER_OTLP_ENDPOINT)"},
    {"gateway.tracing.headers", GW_CFG_CUSTOM, 0, 0, 0, "{}", gw_cfg_set_tracing, "design",
     "map of header name to env value ($OTEL_EXPORTER_OTLP_HEADERS)"},
    {"gateway.tracing.sample", GW_CFG_CUSTOM, 0, 0, 0, "1", gw_cfg_set_tracing, "design",
     "number 0–1"},
    {"gateway.tracing.service_name", GW_CFG_CUSTOM, 0, 0, 0, "mcpgw", gw_cfg_set_tracing, "design",
     "string ($OTEL_SERVICE_NAME)"},
    {"gateway.reload", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "000", NULL},
    {"gateway.reload.debounce_ms", GW_CFG_MS, GW_OFF(reload_debounce_ms), 0, 0, "200", NULL, "000",
     NULL},
    {"gateway.reload.poll_interval_ms", GW_CFG_MS, GW_OFF(reload_poll_interval_ms), 0, 10, "1000",
     NULL, "000", NULL},
    {"gateway.audit", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "design", NULL},
    {"gateway.audit.path", GW_CFG_CUSTOM, 0, 0, 0, NULL, gw_cfg_set_audit_path, "design", "path"},
    {"gateway.audit.arguments", GW_CFG_CUSTOM, 0, 0, 0, "hash", gw_cfg_set_audit_arguments,
     "design", "hash | none"},
    {"gateway.audit.required", GW_CFG_BOOL, GW_OFF(audit_required), 0, 0, "false", NULL, "design",
     NULL},
    {"gateway.tool_search", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "design", NULL},
    {"gateway.tool_search.enabled", GW_CFG_BOOL, GW_OFF(tool_search_enabled), 0, 0, "false", NULL,
     "design", NULL},
    {"gateway.tool_search.always_loaded", GW_CFG_STRLIST, GW_OFF(tool_search_always_loaded),
     GW_OFF(ntool_search_always_loaded), 0, "[]", NULL, "design", NULL},
    {"gateway.tool_search.max_results", GW_CFG_INT, GW_OFF(tool_search_max_results), 0, 1, "5",
     check_max_results, "design", NULL},
};

const size_t gw_cfg_ntop_directives =
    sizeof(gw_cfg_top_directives) / sizeof(gw_cfg_top_directives[0]);
const size_t gw_cfg_ngateway_directives =
    sizeof(gw_cfg_gateway_directives) / sizeof(gw_cfg_gateway_directives[0]);

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

const char *gw_protocol_name(enum gw_protocol_mode p)
{
    switch (p) {
    case GW_PROTOCOL_LEGACY:
        return "legacy";
    case GW_PROTOCOL_MODERN:
        return "modern";
    default:
        return "auto";
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
        if (gw_cfg_check_unquoted(ld, v, "version") != 0)
            return;
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
        size_t j = gw_cfg_first_same_key(m, i);
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
    const struct gw_yaml_node *gw = NULL, *servers = NULL, *clients = NULL;
    check_version(ld, root);
    for (size_t i = 0; i < gw_yaml_map_len(root); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(root, i);
        const struct gw_yaml_node *v = gw_yaml_map_value(root, i);
        if (k->kind != GW_YAML_SCALAR) {
            gw_cfg_err(ld, k, "", "top-level keys must be strings");
        } else if (gw_cfg_first_same_key(root, i) != i) {
            gw_cfg_err(ld, k, k->str,
                       "duplicate key '%s' at the top level (first written at "
                       "line %d)",
                       k->str, gw_yaml_map_key(root, gw_cfg_first_same_key(root, i))->line);
        } else if (strcmp(k->str, "gateway") == 0) {
            gw = v;
            gw_cfg_check_dups(ld, v, "gateway", 1);
        } else if (strcmp(k->str, "servers") == 0) {
            servers = v;
        } else if (strcmp(k->str, "clients") == 0) {
            clients = v;
        } else if (strcmp(k->str, "version") != 0) {
            gw_cfg_unknown_key(ld, "", "", k);
        }
    }
    if (gw != NULL)
        gw_cfg_walk(ld, "gateway", "gateway", gw, &ld->c->gateway);
    if (servers != NULL)
        load_servers(ld, servers);
    if (clients != NULL)
        gw_cfg_load_clients(ld, clients);
    gw_cfg_finish_clients(ld, clients ? clients : root);
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
    c->gateway.config_file = c->path;
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
    free(g->state_dir);
    gw_cfg_sandbox_free(&g->sandbox);
    free(g->oauth_redirect_uri);
    free(g->oauth_client_metadata_url);
    gw_cfg_free_tracing(g);
    free(g->audit_path);
    gw_cfg_free_strv(g->allowed_commands, g->nallowed_commands);
    gw_cfg_free_strv(g->reserved_tool_names, g->nreserved_tool_names);
    gw_cfg_free_strv(g->tool_search_always_loaded, g->ntool_search_always_loaded);
    gw_cfg_free_strv(g->allowed_origins, g->nallowed_origins);
    gw_cfg_free_strv(g->inherit_env, g->ninherit_env);
    for (size_t i = 0; i < c->nservers; i++)
        gw_cfg_free_server(&c->servers[i]);
    free(c->servers);
    gw_cfg_free_clients(c);
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
