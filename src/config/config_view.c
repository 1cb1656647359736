/* What other modules see of a server's config: the stable hashes that
 * drive reload diffs (design §8), the effective per-tool policy (seed 004)
 * and the public, secret-free JSON view (security.md P6). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/config_internal.h"

/* FNV-1a 64 over a canonical serialization: each field is its name, its
 * length and its bytes, so no two different configs serialize alike. */
struct fnv {
    uint64_t h;
};

static void fnv_bytes(struct fnv *f, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        f->h ^= b[i];
        f->h *= 0x100000001b3ull;
    }
}

static void fnv_str(struct fnv *f, const char *name, const char *v)
{
    char len[32];
    fnv_bytes(f, name, strlen(name) + 1);
    snprintf(len, sizeof(len), v ? "%zu:" : "null:", v ? strlen(v) : 0);
    fnv_bytes(f, len, strlen(len));
    if (v)
        fnv_bytes(f, v, strlen(v));
}

static void fnv_u64(struct fnv *f, const char *name, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRIu64, v);
    fnv_str(f, name, buf);
}

static void fnv_strv(struct fnv *f, const char *name, char **v, size_t n)
{
    fnv_u64(f, name, n);
    for (size_t i = 0; i < n; i++)
        fnv_str(f, name, v[i]);
}

static void fnv_kv(struct fnv *f, const char *name, const struct gw_kv *kv, size_t n)
{
    fnv_u64(f, name, n);
    for (size_t i = 0; i < n; i++) {
        fnv_str(f, name, kv[i].name);
        fnv_str(f, name, kv[i].value);
    }
}

static void fnv_tool(struct fnv *f, const struct gw_tool_config *t)
{
    fnv_str(f, "tool", t->name);
    fnv_u64(f, "max_instances", t->has_max_instances ? (uint64_t)t->max_instances + 1 : 0);
    fnv_u64(f, "timeout", t->has_timeout ? t->timeout_ms + 1 : 0);
}

static void hash_spawn(struct fnv *f, const struct gw_server_config *s)
{
    char *cfg = s->init_config
                    ? json_dumps(s->init_config, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
                    : NULL;
    fnv_str(f, "transport", gw_transport_name(s->transport));
    fnv_str(f, "protocol", gw_protocol_name(s->protocol));
    fnv_str(f, "command", s->command);
    fnv_str(f, "command_path", s->command_path);
    fnv_strv(f, "args", s->args, s->nargs);
    fnv_str(f, "cwd", s->cwd);
    fnv_kv(f, "env", s->env, s->nenv);
    fnv_str(f, "encoding", s->encoding);
    fnv_str(f, "url", s->url);
    fnv_kv(f, "headers", s->headers, s->nheaders);
    fnv_str(f, "sessionId", s->session_id);
    fnv_u64(f, "timeout", s->timeout_ms);
    fnv_u64(f, "sse_read_timeout", s->sse_read_timeout_ms);
    fnv_u64(f, "terminate_on_close", s->terminate_on_close);
    fnv_u64(f, "request_timeout", s->request_timeout_ms);
    fnv_u64(f, "truely-stateless", s->truely_stateless);
    fnv_u64(f, "oauth.off", s->oauth_off);
    fnv_str(f, "oauth.client_id", s->oauth_client_id);
    fnv_str(f, "oauth.client_secret", s->oauth_client_secret);
    fnv_str(f, "oauth.issuer", s->oauth_issuer);
    fnv_str(f, "oauth.private_key", s->oauth_private_key);
    fnv_u64(f, "oauth.method", (uint64_t)s->oauth_method);
    fnv_u64(f, "oauth.has_scopes", s->has_oauth_scopes);
    fnv_strv(f, "oauth.scopes", s->oauth_scopes, s->noauth_scopes);
    fnv_u64(f, "oauth.omit_resource", s->oauth_omit_resource);
    fnv_u64(f, "oauth.client_credentials", s->oauth_client_credentials);
    fnv_str(f, "config", cfg);
    free(cfg);
    const struct gw_sandbox_config *sb = &s->sandbox;
    fnv_u64(f, "sandbox", sb->enabled);
    fnv_u64(f, "sandbox.network", sb->network);
    fnv_strv(f, "sandbox.allow", sb->allow, sb->nallow);
    fnv_strv(f, "sandbox.read", sb->read, sb->nread);
    fnv_strv(f, "sandbox.write", sb->write, sb->nwrite);
    fnv_u64(f, "sandbox.home", sb->home);
    fnv_u64(f, "sandbox.memory", sb->memory);
    fnv_u64(f, "sandbox.pids", (uint64_t)sb->pids);
    fnv_u64(f, "sandbox.cpu", sb->cpu_milli);
    fnv_u64(f, "sandbox.tmp", sb->tmp);
}

static int tool_cmp(const void *a, const void *b)
{
    const struct gw_tool_config *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* Tool configs are hashed sorted by name: reordering them changes
 * nothing, so it must not look like a change. */
static void hash_catalog(struct fnv *f, const struct gw_server_config *s)
{
    fnv_strv(f, "whitelist", s->whitelist, s->nwhitelist);
    fnv_strv(f, "blacklist", s->blacklist, s->nblacklist);
    fnv_u64(f, "transform", s->ntransforms);
    for (size_t i = 0; i < s->ntransforms; i++) {
        fnv_u64(f, "kind", s->transforms[i].kind);
        fnv_str(f, "add", s->transforms[i].add);
        fnv_str(f, "remove", s->transforms[i].remove);
    }
    fnv_u64(f, "mode", s->mode);
    fnv_u64(f, "has_default", s->has_default_tool_config);
    fnv_tool(f, &s->default_tool_config);
    const struct gw_tool_config **v = gw_xmalloc(s->ntool_configs * sizeof(*v));
    for (size_t i = 0; i < s->ntool_configs; i++)
        v[i] = &s->tool_configs[i];
    qsort(v, s->ntool_configs, sizeof(*v), tool_cmp);
    fnv_u64(f, "tool_config", s->ntool_configs);
    for (size_t i = 0; i < s->ntool_configs; i++)
        fnv_tool(f, v[i]);
    free(v);
    fnv_u64(f, "load_tools", s->load_tools);
    fnv_u64(f, "load_prompts", s->load_prompts);
    fnv_u64(f, "load_resources", s->load_resources);
    fnv_u64(f, "resource_namespace", s->resource_namespace);
    fnv_u64(f, "has_prompts", s->has_prompts);
    fnv_strv(f, "prompts", s->prompts, s->nprompts);
}

void gw_cfg_hash_server(struct gw_server_config *s)
{
    struct fnv f = {0xcbf29ce484222325ull};
    hash_spawn(&f, s);
    snprintf(s->spawn_hash, sizeof(s->spawn_hash), "%016" PRIx64, f.h);
    f.h = 0xcbf29ce484222325ull;
    hash_catalog(&f, s);
    snprintf(s->catalog_hash, sizeof(s->catalog_hash), "%016" PRIx64, f.h);
}

int gw_config_tool_policy(const struct gw_server_config *s, const char *tool,
                          struct gw_tool_config *out)
{
    const struct gw_tool_config *listed = NULL;
    for (size_t i = 0; i < s->ntool_configs; i++) {
        if (strcmp(s->tool_configs[i].name, tool) == 0)
            listed = &s->tool_configs[i];
    }
    if (s->mode == GW_MODE_UNSET || (s->mode == GW_MODE_STRICT && listed == NULL))
        return UV_ENOENT;
    if (s->mode == GW_MODE_STRICT) {
        *out = *listed;
        return 0;
    }
    struct gw_tool_config t = s->default_tool_config;
    t.name = listed ? listed->name : NULL;
    if (listed && listed->has_max_instances)
        t.max_instances = listed->max_instances;
    if (listed && listed->has_timeout)
        t.timeout_ms = listed->timeout_ms;
    if (listed) {
        t.line = listed->line;
        t.col = listed->col;
    }
    *out = t;
    return 0;
}

static json_t *strv_json(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

/* Names only: every value is shown as "***" (security.md P6). */
static json_t *kv_names_json(const struct gw_kv *kv, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(o, kv[i].name, json_string("***"));
    return o;
}

static json_t *tool_json(const struct gw_tool_config *t)
{
    return json_pack("{s:i, s:I}", "max_instances", t->max_instances, "timeout_ms",
                     (json_int_t)t->timeout_ms);
}

static json_t *transforms_json(const struct gw_server_config *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->ntransforms; i++) {
        const struct gw_transform *t = &s->transforms[i];
        if (t->kind == GW_TRANSFORM_PREFIX_REPLACE)
            json_array_append_new(
                a, json_pack("{s:{s:s, s:s}}", "prefix", "remove", t->remove, "add", t->add));
        else
            json_array_append_new(
                a,
                json_pack("{s:s}", t->kind == GW_TRANSFORM_PREFIX ? "prefix" : "suffix", t->add));
    }
    return a;
}

static void stdio_json(json_t *o, const struct gw_server_config *s)
{
    json_object_set_new(o, "command", s->command ? json_string(s->command) : json_null());
    json_object_set_new(o, "command_path",
                        s->command_path ? json_string(s->command_path) : json_null());
    json_object_set_new(o, "args", strv_json(s->args_shown ? s->args_shown : s->args, s->nargs));
    json_object_set_new(o, "cwd", json_string(s->cwd_shown ? s->cwd_shown : s->cwd));
    json_object_set_new(o, "envFile", s->env_file ? json_string(s->env_file) : json_null());
    json_object_set_new(o, "env", kv_names_json(s->env, s->nenv));
    json_object_set_new(o, "encoding", json_string(s->encoding));
    json_object_set_new(o, "sandbox", gw_sandbox_config_json(&s->sandbox));
}

static void http_json(json_t *o, const struct gw_server_config *s)
{
    char *url = s->url ? gw_cfg_redact_url(s->url_shown ? s->url_shown : s->url) : NULL;
    json_object_set_new(o, "url", url ? json_string(url) : json_null());
    free(url);
    json_object_set_new(o, "headers", kv_names_json(s->headers, s->nheaders));
    json_object_set_new(o, "sessionId", s->session_id ? json_string("***") : json_null());
    json_object_set_new(o, "timeout_ms", json_integer((json_int_t)s->timeout_ms));
    json_object_set_new(o, "sse_read_timeout_ms", json_integer((json_int_t)s->sse_read_timeout_ms));
    json_object_set_new(o, "terminate_on_close", json_boolean(s->terminate_on_close));
    static const char *const methods[] = {NULL, "none", "client_secret_basic", "client_secret_post",
                                          "private_key_jwt"};
    json_object_set_new(
        o, "oauth",
        json_pack("{s:b, s:s?, s:s?, s:s?, s:s?, s:s?, s:o, s:s?}", "off", s->oauth_off,
                  "client_id", s->oauth_client_id, "issuer", s->oauth_issuer, "client_secret",
                  s->oauth_client_secret ? "***" : NULL, "private_key",
                  s->oauth_private_key ? "***" : NULL, "token_endpoint_auth_method",
                  methods[s->oauth_method], "scopes",
                  s->has_oauth_scopes ? strv_json(s->oauth_scopes, s->noauth_scopes) : json_null(),
                  "resource", s->oauth_omit_resource ? "omit" : NULL));
}

static void catalog_json(json_t *o, const struct gw_server_config *s)
{
    static const char *const modes[] = {"unset", "dynamic", "strict"};
    json_object_set_new(o, "load_tools", json_boolean(s->load_tools));
    json_object_set_new(o, "load_prompts", json_boolean(s->load_prompts));
    json_object_set_new(o, "load_resources", json_boolean(s->load_resources));
    json_object_set_new(o, "resource_namespace", json_boolean(s->resource_namespace));
    json_object_set_new(o, "prompts",
                        s->has_prompts ? strv_json(s->prompts, s->nprompts) : json_null());
    json_object_set_new(o, "tools",
                        json_pack("{s:o, s:o}", "whitelist", strv_json(s->whitelist, s->nwhitelist),
                                  "blacklist", strv_json(s->blacklist, s->nblacklist)));
    json_object_set_new(o, "transform", transforms_json(s));
    json_object_set_new(o, "mode",
                        s->mode == GW_MODE_UNSET ? json_null() : json_string(modes[s->mode]));
    json_object_set_new(o, "default_tool_config",
                        s->has_default_tool_config ? tool_json(&s->default_tool_config)
                                                   : json_null());
    json_t *tc = json_object();
    for (size_t i = 0; i < s->ntool_configs; i++)
        json_object_set_new(tc, s->tool_configs[i].name, tool_json(&s->tool_configs[i]));
    json_object_set_new(o, "tool_config", tc);
}

/* `config` may hold credentials, so only its presence is shown. */
json_t *gw_server_config_to_json(const struct gw_server_config *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(s->id));
    json_object_set_new(o, "ok", json_boolean(s->ok));
    json_object_set_new(o, "error", s->error ? json_string(s->error) : json_null());
    json_object_set_new(o, "transport", json_string(gw_transport_name(s->transport)));
    json_object_set_new(o, "protocol", json_string(gw_protocol_name(s->protocol)));
    json_object_set_new(o, "truely-stateless", json_boolean(s->truely_stateless));
    json_object_set_new(o, "required", json_boolean(s->required));
    if (s->transport == GW_TRANSPORT_STDIO)
        stdio_json(o, s);
    else
        http_json(o, s);
    json_object_set_new(o, "request_timeout_ms",
                        s->request_timeout_ms ? json_integer((json_int_t)s->request_timeout_ms)
                                              : json_null());
    json_object_set_new(o, "config", s->init_config ? json_string("***") : json_null());
    catalog_json(o, s);
    json_object_set_new(o, "spawn_hash", json_string(s->spawn_hash));
    json_object_set_new(o, "catalog_hash", json_string(s->catalog_hash));
    return o;
}
