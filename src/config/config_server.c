/* The servers.<id> part of the config: its rows of the directive table,
 * their setters, the checks that need the whole server (transport, env,
 * command), the stable hashes and the public, secret-free view. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "gw/config_internal.h"

#define SRV_OFF(field) offsetof(struct gw_server_config, field)

static int set_transport(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                         const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    const char *t = "stdio";
    if (n != NULL && gw_cfg_scalar_str(n, &t) != 0)
        t = "";
    ld->transport_written = n ? n->str : "stdio";
    if (strcmp(t, "stdio") == 0)
        s->transport = GW_TRANSPORT_STDIO;
    else if (strcmp(t, "streamable_http") == 0 || strcmp(t, "http") == 0)
        s->transport = GW_TRANSPORT_STREAMABLE_HTTP;
    else if (strcmp(t, "sse") == 0)
        s->transport = GW_TRANSPORT_SSE;
    else if (strcmp(t, "websocket") == 0)
        s->transport = GW_TRANSPORT_WEBSOCKET;
    else {
        gw_cfg_err(ld, n, key,
                   "unknown transport '%s'; accepted: stdio, streamable_http (alias http), sse, "
                   "websocket",
                   n->kind == GW_YAML_SCALAR ? n->str : "");
        return UV_EINVAL;
    }
    return 0;
}

static int set_protocol(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                        const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    const char *p = "";
    if (n == NULL)
        return 0;
    if (gw_cfg_scalar_str(n, &p) != 0)
        p = "";
    if (strcmp(p, "auto") == 0)
        s->protocol = GW_PROTOCOL_AUTO;
    else if (strcmp(p, "legacy") == 0)
        s->protocol = GW_PROTOCOL_LEGACY;
    else if (strcmp(p, "modern") == 0)
        s->protocol = GW_PROTOCOL_MODERN;
    else {
        gw_cfg_err(ld, n, key, "unknown protocol '%s'; accepted: auto, legacy, modern",
                   n->kind == GW_YAML_SCALAR ? n->str : "");
        return UV_EINVAL;
    }
    return 0;
}

static int set_cwd(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                   const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    const char *p = ".";
    char *v = NULL, *shown = NULL, *missing = NULL;
    if (n != NULL && (gw_cfg_scalar_str(n, &p) != 0 || p[0] == '\0')) {
        gw_cfg_err(ld, n, key, "'%s' must be a directory path", key);
        return UV_EINVAL;
    }
    if (gw_cfg_subst_ex(p, &v, &shown, &s->var_values, &missing) != 0) {
        gw_cfg_err(ld, n, key, "ConfigError: Environment variable '%s' not found", missing);
        free(missing);
        return UV_EINVAL;
    }
    free(s->cwd);
    free(s->cwd_shown);
    s->cwd = gw_cfg_abspath(ld->c->dir, v);
    s->cwd_set = n != NULL;
    /* a variable that brings in an absolute path is shown as *** alone */
    s->cwd_shown = strcmp(v, p) == 0 ? NULL
                   : v[0] == '/'     ? gw_xstrdup(shown)
                                     : gw_cfg_abspath(ld->c->dir, shown);
    free(v);
    free(shown);
    return 0;
}

/* Absent (or null) and [] differ: every prompt against none. */
static int set_prompts(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                       const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    char **v = NULL;
    size_t nv = 0;

    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_str_list(ld, n, key, &v, &nv) != 0)
        return UV_EINVAL;
    gw_cfg_free_strv(s->prompts, s->nprompts);
    s->prompts = v;
    s->nprompts = nv;
    s->has_prompts = true;
    return 0;
}

/* env, headers and envFile are resolved once the whole server is read:
 * envFile may come after env, and the command is searched in the PATH
 * they set. */
static int stash(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                 const struct gw_yaml_node *n, const char *key, void *base)
{
    if (n == NULL)
        return 0;
    if (strcmp(d->key, "servers.<id>.env") == 0)
        ld->env = n;
    else if (strcmp(d->key, "servers.<id>.headers") == 0)
        ld->headers = n;
    else
        ld->env_file = n;
    return 0;
}

static int set_encoding(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                        const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    if (strcasecmp(s->encoding, "utf-8") == 0 || strcasecmp(s->encoding, "utf8") == 0)
        return 0;
    gw_cfg_err(ld, n, key, "encoding '%s' is not supported; MCP messages are JSON in utf-8",
               s->encoding);
    return UV_EINVAL;
}

static int transform_prefix_map(struct gw_cfg_ld *ld, const struct gw_yaml_node *v, const char *key,
                                struct gw_transform *t)
{
    const char *add = "", *remove = NULL;
    for (size_t i = 0; i < gw_yaml_map_len(v); i++) {
        const char *k = gw_yaml_map_key(v, i)->str, *s;
        const struct gw_yaml_node *val = gw_yaml_map_value(v, i);
        if (k == NULL || (strcmp(k, "add") != 0 && strcmp(k, "remove") != 0) ||
            gw_cfg_scalar_str(val, &s) != 0 || gw_yaml_is_null(val)) {
            gw_cfg_err(ld, val, key,
                       "'%s': prefix takes a string or {remove: 'old_', add: 'new_'}; '%s' is "
                       "not one of its keys or has no string value",
                       key, k ? k : "?");
            return UV_EINVAL;
        }
        *(k[0] == 'a' ? &add : &remove) = s;
    }
    if (remove == NULL) {
        gw_cfg_err(ld, v, key, "'%s': prefix {remove, add} needs 'remove'", key);
        return UV_EINVAL;
    }
    t->kind = GW_TRANSFORM_PREFIX_REPLACE;
    t->add = gw_xstrdup(add);
    t->remove = gw_xstrdup(remove);
    return 0;
}

static int transform_item(struct gw_cfg_ld *ld, const struct gw_yaml_node *item, const char *key,
                          struct gw_transform *t)
{
    const char *k = NULL, *s;
    if (gw_yaml_map_len(item) == 1)
        k = gw_yaml_map_key(item, 0)->str;
    if (k == NULL || (strcmp(k, "prefix") != 0 && strcmp(k, "suffix") != 0)) {
        gw_cfg_err(ld, item, key,
                   "each item of '%s' must be a map with exactly one key, 'prefix' or 'suffix', "
                   "e.g. - prefix: 'pw_'",
                   key);
        return UV_EINVAL;
    }
    const struct gw_yaml_node *v = gw_yaml_map_value(item, 0);
    if (k[0] == 'p' && v->kind == GW_YAML_MAP)
        return transform_prefix_map(ld, v, key, t);
    if (gw_cfg_scalar_str(v, &s) != 0 || gw_yaml_is_null(v)) {
        gw_cfg_err(ld, v, key, "'%s': %s takes a string%s", key, k,
                   k[0] == 'p' ? " or {remove: 'old_', add: 'new_'}" : "");
        return UV_EINVAL;
    }
    t->kind = k[0] == 'p' ? GW_TRANSFORM_PREFIX : GW_TRANSFORM_SUFFIX;
    t->add = gw_xstrdup(s);
    return 0;
}

static int set_transform(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                         const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (n->kind != GW_YAML_SEQ) {
        gw_cfg_err(ld, n, key, "'%s' must be a list such as [{prefix: 'pw_'}, {suffix: '_x'}]",
                   key);
        return UV_EINVAL;
    }
    s->transforms = gw_xrealloc(NULL, n->nkids * sizeof(*s->transforms));
    memset(s->transforms, 0, n->nkids * sizeof(*s->transforms));
    for (size_t i = 0; i < n->nkids; i++) {
        if (transform_item(ld, n->kids[i], key, &s->transforms[s->ntransforms]) == 0)
            s->ntransforms++;
    }
    return 0;
}

static int set_mode(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                    const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    const char *m;
    if (n == NULL)
        return 0;
    if (gw_cfg_scalar_str(n, &m) == 0 && strcmp(m, "strict") == 0)
        s->mode = GW_MODE_STRICT;
    else if (gw_cfg_scalar_str(n, &m) == 0 && strcmp(m, "dynamic") == 0)
        s->mode = GW_MODE_DYNAMIC;
    else {
        gw_cfg_err(ld, n, key, "'%s' must be 'strict' or 'dynamic' (or left out)", key);
        return UV_EINVAL;
    }
    return 0;
}

static const char *const tool_keys[] = {"max_instances", "timeout"};

static void tool_key(struct gw_cfg_ld *ld, const struct gw_yaml_node *k,
                     const struct gw_yaml_node *v, const char *key, struct gw_tool_config *t)
{
    const char *s = NULL;
    int64_t iv;
    uint64_t ms;
    char *sub = gw_cfg_join_key(key, k->str);
    bool scalar = gw_cfg_scalar_str(v, &s) == 0 && !gw_yaml_is_null(v);
    bool instances = strcmp(k->str, "max_instances") == 0;
    if (!instances && strcmp(k->str, "timeout") != 0) {
        int d0 = gw_cfg_edit_distance(k->str, tool_keys[0], 2);
        int d1 = gw_cfg_edit_distance(k->str, tool_keys[1], 2);
        const char *best = d0 <= 2 || d1 <= 2 ? tool_keys[d0 <= d1 ? 0 : 1] : NULL;
        gw_cfg_warn(ld, k, sub, "unknown key '%s' in %s is ignored%s%s%s", k->str, key,
                    best ? "; did you mean '" : "", best ? best : "", best ? "'?" : "");
    } else if (gw_cfg_check_unquoted(ld, v, sub) != 0) {
        /* reported: the value is not read */
    } else if (instances) {
        if (scalar && gw_cfg_parse_int(s, &iv) == 0 && iv >= 1 && iv <= INT_MAX) {
            t->max_instances = (int)iv;
            t->has_max_instances = true;
        } else
            gw_cfg_err(ld, v, sub, "'%s' must be a positive whole number", sub);
    } else if (scalar && gw_parse_duration(s, &ms) == 0 && ms > 0) {
        t->timeout_ms = ms;
        t->has_timeout = true;
    } else {
        gw_cfg_err(ld, v, sub,
                   "'%s' is not a positive duration; write seconds (30), 30s, 5m or "
                   "ISO-8601 (P0DT0H0M30S)",
                   sub);
    }
    free(sub);
}

/* seed 004's ToolConfig: a field left out keeps its default (5, 30s). */
static int tool_config(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                       struct gw_tool_config *t)
{
    t->max_instances = 5;
    t->timeout_ms = 30000;
    t->line = n->line;
    t->col = n->col;
    if (gw_yaml_is_null(n))
        return 0;
    if (n->kind != GW_YAML_MAP) {
        gw_cfg_err(ld, n, key, "'%s' must be a map such as {max_instances: 5, timeout: 30s}", key);
        return UV_EINVAL;
    }
    for (size_t i = 0; i < gw_yaml_map_len(n); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(n, i);
        if (k->kind == GW_YAML_SCALAR)
            tool_key(ld, k, gw_yaml_map_value(n, i), key, t);
    }
    return 0;
}

static int set_default_tool_config(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                                   const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    if (n == NULL) {
        s->default_tool_config.max_instances = 5;
        s->default_tool_config.timeout_ms = 30000;
        return 0;
    }
    s->has_default_tool_config = true;
    return tool_config(ld, n, key, &s->default_tool_config);
}

static int set_tool_configs(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (n->kind != GW_YAML_MAP) {
        gw_cfg_err(ld, n, key,
                   "'%s' must be a map of tool names (as the server lists them) to "
                   "{max_instances, timeout}",
                   key);
        return UV_EINVAL;
    }
    size_t np = gw_yaml_map_len(n);
    s->tool_configs = gw_xrealloc(NULL, np * sizeof(*s->tool_configs));
    for (size_t i = 0; i < np; i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(n, i);
        if (k->kind != GW_YAML_SCALAR || k->len == 0)
            continue;
        struct gw_tool_config *t = &s->tool_configs[s->ntool_configs];
        memset(t, 0, sizeof(*t));
        char *sub = gw_cfg_join_key(key, k->str);
        tool_config(ld, gw_yaml_map_value(n, i), sub, t);
        free(sub);
        t->name = gw_xstrdup(k->str);
        t->line = k->line;
        t->col = k->col;
        s->ntool_configs++;
    }
    return 0;
}

static int holodeck_field(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                          const struct gw_yaml_node *n, const char *key, void *base)
{
    if (n != NULL)
        gw_cfg_warn(ld, n, key,
                    "'%s' is a HoloDeck agent.yaml field and is ignored here; it belongs in "
                    "agent.yaml (`mcpgw import` maps it)",
                    strrchr(key, '.') + 1);
    return 0;
}

#define ENV_DOC "map of NAME to env value (string with ${VAR}, or {env: NAME})"

const struct gw_cfg_directive gw_cfg_server_directives[] = {
    {"servers.<id>.truely-stateless", GW_CFG_BOOL, SRV_OFF(truely_stateless), 0, 0, "false", NULL,
     "000", NULL},
    {"servers.<id>.transport", GW_CFG_CUSTOM, 0, 0, 0, "stdio", set_transport, "000, 002",
     "stdio | streamable_http (alias http) | sse | websocket"},
    {"servers.<id>.protocol", GW_CFG_CUSTOM, 0, 0, 0, "auto", set_protocol, "design",
     "auto | legacy (2025-11-25 and before) | modern (2026-07-28)"},
    {"servers.<id>.required", GW_CFG_BOOL, SRV_OFF(required), 0, 0, "false", NULL, "004", NULL},
    {"servers.<id>.command", GW_CFG_STRING, SRV_OFF(command), 0, 0, NULL, NULL, "000, 002", NULL},
    {"servers.<id>.args", GW_CFG_STRLIST, SRV_OFF(args), SRV_OFF(nargs), 0, "[]", NULL, "000",
     NULL},
    {"servers.<id>.cwd", GW_CFG_CUSTOM, 0, 0, 0, ".", set_cwd, "design", "path"},
    {"servers.<id>.env", GW_CFG_CUSTOM, 0, 0, 0, "{}", stash, "000, 002", ENV_DOC},
    {"servers.<id>.envFile", GW_CFG_CUSTOM, 0, 0, 0, NULL, stash, "002", "path"},
    {"servers.<id>.encoding", GW_CFG_STRING, SRV_OFF(encoding), 0, 0, "utf-8", set_encoding, "002",
     NULL},
    {"servers.<id>.url", GW_CFG_STRING, SRV_OFF(url), 0, 0, NULL, NULL, "000, 002", NULL},
    {"servers.<id>.headers", GW_CFG_CUSTOM, 0, 0, 0, "{}", stash, "000, 002", ENV_DOC},
    {"servers.<id>.sessionId", GW_CFG_STRING, SRV_OFF(session_id), 0, 0, NULL, NULL, "000", NULL},
    {"servers.<id>.timeout", GW_CFG_DURATION, SRV_OFF(timeout_ms), 0, 1, "10s", NULL, "002", NULL},
    {"servers.<id>.sse_read_timeout", GW_CFG_DURATION, SRV_OFF(sse_read_timeout_ms), 0, 1, "300s",
     NULL, "002", NULL},
    {"servers.<id>.terminate_on_close", GW_CFG_BOOL, SRV_OFF(terminate_on_close), 0, 0, "true",
     NULL, "002", NULL},
    {"servers.<id>.request_timeout", GW_CFG_DURATION, SRV_OFF(request_timeout_ms), 0, 1, NULL, NULL,
     "002", NULL},
    {"servers.<id>.config", GW_CFG_CUSTOM, 0, 0, 0, NULL, gw_cfg_set_init_config, "002",
     "any YAML value"},
    {"servers.<id>.load_tools", GW_CFG_BOOL, SRV_OFF(load_tools), 0, 0, "true", NULL, "002", NULL},
    {"servers.<id>.load_prompts", GW_CFG_BOOL, SRV_OFF(load_prompts), 0, 0, "true", NULL, "002",
     NULL},
    {"servers.<id>.load_resources", GW_CFG_BOOL, SRV_OFF(load_resources), 0, 0, "true", NULL,
     "design", NULL},
    {"servers.<id>.resource_namespace", GW_CFG_BOOL, SRV_OFF(resource_namespace), 0, 0, "false",
     NULL, "design", NULL},
    {"servers.<id>.prompts", GW_CFG_CUSTOM, 0, 0, 0, NULL, set_prompts, "004",
     "list of prompt-name globs; absent: every prompt, []: none"},
    {"servers.<id>.sandbox", GW_CFG_CUSTOM, 0, 0, 0, NULL, gw_cfg_set_server_sandbox, "design",
     "true | false | map of sandbox keys"},
    {"servers.<id>.sandbox.network", GW_CFG_CUSTOM, SRV_OFF(sandbox), 0, 0, "none",
     gw_cfg_set_sandbox_network, "design", "none | host | list of destinations"},
    {"servers.<id>.sandbox.read", GW_CFG_CUSTOM, SRV_OFF(sandbox), 0, 0, "[]",
     gw_cfg_set_sandbox_read, "design", "list of paths (bound read-only)"},
    {"servers.<id>.sandbox.write", GW_CFG_CUSTOM, SRV_OFF(sandbox), 0, 0, "[]",
     gw_cfg_set_sandbox_write, "design", "list of paths (bound read-write)"},
    {"servers.<id>.sandbox.home", GW_CFG_CUSTOM, SRV_OFF(sandbox), 0, 0, "server",
     gw_cfg_set_sandbox_home, "design", "server | dialog"},
    {"servers.<id>.sandbox.memory", GW_CFG_SIZE, GW_SANDBOX_OFF(SRV_OFF(sandbox), memory), 0,
     1048576, NULL, NULL, "design", NULL},
    {"servers.<id>.sandbox.pids", GW_CFG_INT, GW_SANDBOX_OFF(SRV_OFF(sandbox), pids), 0, 1, NULL,
     NULL, "design", NULL},
    {"servers.<id>.sandbox.cpu", GW_CFG_CUSTOM, SRV_OFF(sandbox), 0, 0, NULL,
     gw_cfg_set_sandbox_cpu, "design", "number of cores (0.5, 2)"},
    {"servers.<id>.sandbox.tmp", GW_CFG_SIZE, GW_SANDBOX_OFF(SRV_OFF(sandbox), tmp), 0, 1048576,
     NULL, NULL, "design", NULL},
    {"servers.<id>.oauth", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "design", NULL},
    {"servers.<id>.oauth.off", GW_CFG_BOOL, SRV_OFF(oauth_off), 0, 0, "false", NULL, "design",
     NULL},
    {"servers.<id>.oauth.client_id", GW_CFG_STRING, SRV_OFF(oauth_client_id), 0, 0, NULL, NULL,
     "design", NULL},
    {"servers.<id>.oauth.issuer", GW_CFG_STRING, SRV_OFF(oauth_issuer), 0, 0, NULL,
     gw_cfg_set_oauth_issuer, "design", NULL},
    {"servers.<id>.oauth.client_secret", GW_CFG_CUSTOM, 0, 0, 0, NULL, gw_cfg_set_oauth_secret,
     "design", "env value"},
    {"servers.<id>.oauth.token_endpoint_auth_method", GW_CFG_CUSTOM, 0, 0, 0, NULL,
     gw_cfg_set_oauth_method, "design",
     "none | client_secret_basic | client_secret_post | private_key_jwt"},
    {"servers.<id>.oauth.private_key", GW_CFG_CUSTOM, 0, 0, 0, NULL, gw_cfg_set_oauth_private_key,
     "design", "PEM text | {env: NAME} | {file: PATH}"},
    {"servers.<id>.oauth.scopes", GW_CFG_CUSTOM, 0, 0, 0, NULL, gw_cfg_set_oauth_scopes, "design",
     "list of strings"},
    {"servers.<id>.oauth.grant", GW_CFG_CUSTOM, 0, 0, 0, "authorization_code",
     gw_cfg_set_oauth_grant, "design", "authorization_code | client_credentials"},
    {"servers.<id>.oauth.resource", GW_CFG_CUSTOM, 0, 0, 0, NULL, gw_cfg_set_oauth_resource,
     "design", "omit"},
    {"servers.<id>.tools", GW_CFG_SECTION, 0, 0, 0, NULL, NULL, "000", NULL},
    {"servers.<id>.tools.whitelist", GW_CFG_STRLIST, SRV_OFF(whitelist), SRV_OFF(nwhitelist), 0,
     "[]", NULL, "000", NULL},
    {"servers.<id>.tools.blacklist", GW_CFG_STRLIST, SRV_OFF(blacklist), SRV_OFF(nblacklist), 0,
     "[]", NULL, "000", NULL},
    {"servers.<id>.transform", GW_CFG_CUSTOM, 0, 0, 0, "[]", set_transform, "000",
     "list of {prefix: s} | {prefix: {remove, add}} | {suffix: s}"},
    {"servers.<id>.mode", GW_CFG_CUSTOM, 0, 0, 0, NULL, set_mode, "004", "strict | dynamic"},
    {"servers.<id>.default_tool_config", GW_CFG_CUSTOM, 0, 0, 0, "{max_instances: 5, timeout: 30s}",
     set_default_tool_config, "004", "{max_instances, timeout}"},
    {"servers.<id>.tool_config", GW_CFG_CUSTOM, 0, 0, 0, "{}", set_tool_configs, "004",
     "map of ORIGINAL tool name to {max_instances, timeout}"},
    {"servers.<id>.name", GW_CFG_CUSTOM, 0, 0, 0, NULL, holodeck_field, "002", "ignored"},
    {"servers.<id>.description", GW_CFG_CUSTOM, 0, 0, 0, NULL, holodeck_field, "002", "ignored"},
    {"servers.<id>.type", GW_CFG_CUSTOM, 0, 0, 0, NULL, holodeck_field, "002", "ignored"},
    {"servers.<id>.server", GW_CFG_CUSTOM, 0, 0, 0, NULL, holodeck_field, "002", "ignored"},
};

const size_t gw_cfg_nserver_directives =
    sizeof(gw_cfg_server_directives) / sizeof(gw_cfg_server_directives[0]);

static bool is_exec_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static const char *env_lookup(const struct gw_server_config *s, const char *name)
{
    for (size_t i = s->nenv; i-- > 0;) {
        if (strcmp(s->env[i].name, name) == 0)
            return s->env[i].value;
    }
    return NULL;
}

/* A name with a '/' is a path relative to the config's directory; a bare
 * name is searched in the PATH the child will get (its env PATH when set,
 * else the daemon's), so what is checked is what will run. */
static void resolve_command(struct gw_cfg_ld *ld, struct gw_server_config *s,
                            const struct gw_yaml_node *at, const char *key)
{
    if (strchr(s->command, '/') != NULL) {
        char *p = gw_cfg_abspath(ld->c->dir, s->command);
        if (is_exec_file(p)) {
            s->command_path = p;
            return;
        }
        gw_cfg_err(ld, at, key, "command '%s' (%s) is not an executable file", s->command, p);
        free(p);
        return;
    }
    const char *path = env_lookup(s, "PATH");
    const char *which = path ? "the PATH set in its env" : "the daemon's PATH";
    if (path == NULL)
        path = getenv("PATH") ? getenv("PATH") : "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && p[0] == '/') {
            char *cand = gw_xasprintf("%.*s/%s", (int)n, p, s->command);
            if (is_exec_file(cand)) {
                s->command_path = cand;
                return;
            }
            free(cand);
        }
        p += n + (p[n] == ':');
    }
    gw_cfg_err(ld, at, key, "command '%s' was not found in %s; install it or give its path",
               s->command, which);
}

static bool allowed(struct gw_cfg_ld *ld, const struct gw_server_config *s,
                    const struct gw_yaml_node *at, const char *key)
{
    const struct gw_gateway_config *g = &ld->c->gateway;
    size_t len = 0;
    for (size_t i = 0; i < g->nallowed_commands; i++) {
        if (strcmp(g->allowed_commands[i], s->command) == 0)
            return true;
        len += strlen(g->allowed_commands[i]) + 2;
    }
    char *list = gw_xmalloc(len + 1);
    list[0] = '\0';
    for (size_t i = 0; i < g->nallowed_commands; i++) {
        strcat(list, g->allowed_commands[i]);
        if (i + 1 < g->nallowed_commands)
            strcat(list, ", ");
    }
    gw_cfg_err(ld, at, key, "MCPConfigError: Invalid command '%s'. Supported commands: %s",
               s->command, list);
    free(list);
    return false;
}

/* The value node of `name` in the server's map, else `dflt`, to point a
 * diagnostic at the line that caused it. */
const struct gw_yaml_node *gw_cfg_place(const struct gw_yaml_node *body, const char *name,
                                        const struct gw_yaml_node *dflt)
{
    for (size_t i = 0; body && i < gw_yaml_map_len(body); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(body, i);
        if (k->kind == GW_YAML_SCALAR && strcmp(k->str, name) == 0)
            return gw_yaml_map_value(body, i);
    }
    return dflt;
}

static void finish_stdio(struct gw_cfg_ld *ld, struct gw_server_config *s,
                         const struct gw_yaml_node *idn, const struct gw_yaml_node *body,
                         const char *shown)
{
    const struct gw_yaml_node *at = gw_cfg_place(body, "command", idn);
    char *key = gw_xasprintf("%s.command", shown);
    struct stat st;
    if (s->command == NULL || s->command[0] == '\0')
        gw_cfg_err(ld, at, key, "MCPConfigError: 'command' is required for stdio transport");
    else if (ld->c->gateway.nallowed_commands > 0 && !allowed(ld, s, at, key))
        ; /* refused: where it would be found does not matter */
    else
        resolve_command(ld, s, at, key);
    free(key);
    if (stat(s->cwd, &st) != 0 || !S_ISDIR(st.st_mode)) {
        key = gw_xasprintf("%s.cwd", shown);
        gw_cfg_err(ld, gw_cfg_place(body, "cwd", idn), key, "cwd '%s' is not a directory",
                   s->cwd_shown ? s->cwd_shown : s->cwd);
        free(key);
    }
}

static void finish_http(struct gw_cfg_ld *ld, struct gw_server_config *s,
                        const struct gw_yaml_node *idn, const struct gw_yaml_node *body,
                        const char *shown)
{
    const struct gw_yaml_node *at = gw_cfg_place(body, "url", idn);
    char *key = gw_xasprintf("%s.url", shown);
    bool malformed, ws = s->transport == GW_TRANSPORT_WEBSOCKET;
    if (s->url == NULL || s->url[0] == '\0') {
        gw_cfg_err(ld, at, key, "MCPConfigError: 'url' is required for %s transport",
                   ld->transport_written);
    } else if (gw_cfg_check_url(s->url, ws, &malformed) != 0) {
        if (malformed) {
            char *shown_url = gw_cfg_redact_url(s->url_shown ? s->url_shown : s->url);
            gw_cfg_err(ld, at, key, "'url' is not a valid URL with a host: '%s'", shown_url);
            free(shown_url);
        } else {
            gw_cfg_err(ld, at, key, "MCPConfigError: 'url' must use %s:// (or %s:// for localhost)",
                       ws ? "wss" : "https", ws ? "ws" : "http");
        }
    }
    free(key);
}

static void finish_modes(struct gw_cfg_ld *ld, struct gw_server_config *s,
                         const struct gw_yaml_node *idn, const struct gw_yaml_node *body,
                         const char *shown)
{
    char *key = gw_xasprintf("%s.mode", shown);
    if (s->mode == GW_MODE_DYNAMIC && !s->has_default_tool_config)
        gw_cfg_err(ld, gw_cfg_place(body, "mode", idn), key,
                   "MCP server '%s' is configured with mode='dynamic' but missing required "
                   "field 'default_tool_config'",
                   s->id);
    if (s->mode == GW_MODE_UNSET && (s->ntool_configs > 0 || s->has_default_tool_config))
        gw_cfg_warn(
            ld, gw_cfg_place(body, "tool_config", gw_cfg_place(body, "default_tool_config", idn)),
            key,
            "tool_config and default_tool_config apply only with 'mode: strict' or "
            "'mode: dynamic'; without a mode they are ignored");
    free(key);
}

static void finish_server(struct gw_cfg_ld *ld, struct gw_server_config *s,
                          const struct gw_yaml_node *idn, const struct gw_yaml_node *body,
                          const char *shown)
{
    char *key;
    gw_cfg_subst_server(ld, s, idn, body, shown);
    if (ld->env_file) {
        key = gw_xasprintf("%s.envFile", shown);
        gw_cfg_resolve_env_file(ld, s, key);
        free(key);
    }
    key = gw_xasprintf("%s.env", shown);
    if (ld->env)
        gw_cfg_resolve_pairs(ld, ld->env, key, false, &s->env, &s->nenv);
    free(key);
    key = gw_xasprintf("%s.headers", shown);
    if (ld->headers)
        gw_cfg_resolve_pairs(ld, ld->headers, key, true, &s->headers, &s->nheaders);
    free(key);
    if (s->session_id != NULL && s->session_id[0] == '\0') {
        free(s->session_id);
        s->session_id = NULL;
    }
    if (s->transport == GW_TRANSPORT_STDIO)
        finish_stdio(ld, s, idn, body, shown);
    else
        finish_http(ld, s, idn, body, shown);
    if (s->transport == GW_TRANSPORT_SSE && s->protocol == GW_PROTOCOL_MODERN) {
        key = gw_xasprintf("%s.protocol", shown);
        gw_cfg_warn(ld, gw_cfg_place(body, "protocol", idn), key,
                    "protocol 'modern' is ignored for an sse server: that transport exists only "
                    "before 2026-07-28, so it is opened with initialize");
        free(key);
    }
    finish_modes(ld, s, idn, body, shown);
    gw_cfg_finish_oauth(ld, s, gw_cfg_place(body, "oauth", idn), shown);
    gw_cfg_finish_sandbox(ld, s);
}

/* ^[a-zA-Z0-9_-]{1,64}$, and not the built-in toolset's name. */
static char *bad_id(const struct gw_yaml_node *k)
{
    if (k->len == 0)
        return gw_xstrdup("ValidationError: 'server' must be a non-empty identifier");
    if (k->len > 64 || strspn(k->str, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_-") != k->len)
        return gw_xasprintf("server id '%s' is invalid: use 1 to 64 ASCII letters, digits, '_' "
                            "or '-' (it is also the toolset name); this server is skipped",
                            k->str);
    if (strcmp(k->str, "mcp_admin") == 0)
        return gw_xstrdup("server id 'mcp_admin' is reserved for the built-in toolset; "
                          "this server is skipped");
    return NULL;
}

void gw_cfg_load_server(struct gw_cfg_ld *ld, const struct gw_yaml_node *idn,
                        const struct gw_yaml_node *body)
{
    struct gw_config *c = ld->c;
    char *msg = bad_id(idn);
    if (msg != NULL) {
        char *key = gw_xasprintf("servers.%s", idn->str);
        gw_cfg_diag_at(ld, GW_SEV_ERROR, GW_SCOPE_SERVER, NULL, NULL, idn->line, idn->col, key,
                       msg);
        free(msg);
        free(key);
        return;
    }
    c->servers = gw_xrealloc(c->servers, (c->nservers + 1) * sizeof(*c->servers));
    struct gw_server_config *s = &c->servers[c->nservers++];
    memset(s, 0, sizeof(*s));
    s->id = gw_xstrdup(idn->str);
    s->line = idn->line;
    s->col = idn->col;
    s->ok = true;
    ld->srv = s;
    ld->env = ld->headers = ld->env_file = NULL;
    gw_cfg_apply_defaults(ld, "servers.<id>", s);
    char *shown = gw_xasprintf("servers.%s", s->id);
    gw_cfg_check_dups(ld, body, shown, 2);
    if (body->kind != GW_YAML_MAP)
        gw_cfg_err(ld, gw_yaml_is_null(body) ? idn : body, shown,
                   "server '%s' must be a map of its settings (at least a command or a url)",
                   s->id);
    else {
        gw_cfg_walk(ld, "servers.<id>", shown, body, s);
        finish_server(ld, s, idn, body, shown);
    }
    /* `prompts: []` asks for none: the server is not even asked for its
     * prompts, and no prompt draws a "not served" warning. */
    if (s->has_prompts && s->nprompts == 0)
        s->load_prompts = false;
    gw_cfg_hash_server(s);
    free(shown);
    ld->srv = NULL;
}

static void free_kv(struct gw_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].name);
        free(kv[i].value);
    }
    free(kv);
}

void gw_cfg_free_server(struct gw_server_config *s)
{
    free(s->id);
    free(s->error);
    free(s->command);
    free(s->command_path);
    gw_cfg_free_strv(s->args_shown, s->args_shown ? s->nargs : 0);
    gw_cfg_free_strv(s->args, s->nargs);
    gw_cfg_free_strv(s->var_values.v, s->var_values.n);
    free(s->url_shown);
    free(s->cwd_shown);
    free(s->cwd);
    free(s->env_file);
    free_kv(s->env, s->nenv);
    free(s->encoding);
    free(s->url);
    free_kv(s->headers, s->nheaders);
    free(s->session_id);
    gw_cfg_free_server_oauth(s);
    gw_cfg_sandbox_free(&s->sandbox);
    json_decref(s->init_config);
    gw_cfg_free_strv(s->whitelist, s->nwhitelist);
    gw_cfg_free_strv(s->blacklist, s->nblacklist);
    gw_cfg_free_strv(s->prompts, s->nprompts);
    for (size_t i = 0; i < s->ntransforms; i++) {
        free(s->transforms[i].add);
        free(s->transforms[i].remove);
    }
    free(s->transforms);
    for (size_t i = 0; i < s->ntool_configs; i++)
        free(s->tool_configs[i].name);
    free(s->tool_configs);
}
