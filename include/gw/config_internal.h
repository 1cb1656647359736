/* Internals shared by the config loader's files (config.c, config_server.c,
 * config_value.c). Nothing outside the config module includes this. */
#ifndef GW_CONFIG_INTERNAL_H
#define GW_CONFIG_INTERNAL_H

#include <stdarg.h>

#include "gw/config.h"
#include "gw/util.h"
#include "gw/yaml_tree.h"

struct gw_cfg_ld;
struct gw_cfg_directive;

/* Custom setter of a directive, or the validator of a typed one (then
 * called after the value is stored). With n == NULL it applies the
 * directive's default. `key` is the dotted key as the user sees it. */
typedef int (*gw_cfg_fn)(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                         const struct gw_yaml_node *n, const char *key, void *base);

enum gw_cfg_type {
    GW_CFG_BOOL,
    GW_CFG_INT,      /* int field */
    GW_CFG_DURATION, /* uint64_t ms; a bare number is seconds */
    GW_CFG_MS,       /* uint64_t ms; a bare number is milliseconds */
    GW_CFG_SIZE,     /* uint64_t bytes */
    GW_CFG_STRING,   /* char * */
    GW_CFG_STRLIST,  /* char ** at off, size_t at off2 */
    GW_CFG_SECTION,  /* a map whose keys are directives "key.sub" */
    GW_CFG_CUSTOM    /* fn does everything */
};

/* One row of the table of directives (style.md §7): it drives the loader
 * and is what docs/config.md is checked against. */
struct gw_cfg_directive {
    const char *key; /* full dotted key; "<id>" stands for a server id */
    enum gw_cfg_type type;
    size_t off, off2;
    int64_t min;     /* ints; ms for durations; bytes for sizes */
    const char *def; /* default as written in the docs; NULL: none */
    gw_cfg_fn fn;
    const char *seed;
    const char *type_doc; /* type as the docs name it (custom rows) */
};

/* The rows, in the order docs/config.md lists them: config.c's, then
 * config_server.c's. */
extern const struct gw_cfg_directive gw_cfg_top_directives[];
extern const size_t gw_cfg_ntop_directives;
extern const struct gw_cfg_directive gw_cfg_gateway_directives[];
extern const size_t gw_cfg_ngateway_directives;
extern const struct gw_cfg_directive gw_cfg_server_directives[];
extern const size_t gw_cfg_nserver_directives;
extern const struct gw_cfg_directive gw_cfg_client_directives[];
extern const size_t gw_cfg_nclient_directives;

/* A load in progress. `srv` is the server whose keys are being read (NULL
 * for the top level and `gateway`): errors then clear that server's `ok`
 * instead of the whole config's. */
struct gw_cfg_ld {
    struct gw_config *c;
    struct gw_server_config *srv;
    const char *file; /* diag file name, normally c->path */
    size_t capdiags;
    /* nodes stashed while walking a server, resolved when it is finished */
    const struct gw_yaml_node *env, *headers, *env_file;
    const char *transport_written;
    /* The first secret written literally (auth_token, a header value), for
     * the warning about a config file that others can read. */
    char *literal_secret_key; /* NULL: none seen */
    int literal_secret_line, literal_secret_col;
};

/* Remembers `n` when it is a secret written as a literal string (not
 * {env: NAME}, no ${VAR}): the first one found is named in the warning
 * about a config file readable by others. */
void gw_cfg_note_literal_secret(struct gw_cfg_ld *ld, const struct gw_yaml_node *n,
                                const char *key);

/* Records a diagnostic at node `n` (may be NULL). With `ld->srv` set, the
 * scope is that server; otherwise the workspace. An error clears the `ok`
 * of its scope. */
void gw_cfg_diag(struct gw_cfg_ld *ld, enum gw_severity sev, const struct gw_yaml_node *n,
                 const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
#define gw_cfg_err(ld, n, key, ...)  gw_cfg_diag(ld, GW_SEV_ERROR, n, key, __VA_ARGS__)
#define gw_cfg_warn(ld, n, key, ...) gw_cfg_diag(ld, GW_SEV_WARNING, n, key, __VA_ARGS__)

/* Same with an explicit place and scope, for the few diags that are not
 * about a node of the YAML file (envFile lines, skipped server ids). */
void gw_cfg_diag_at(struct gw_cfg_ld *ld, enum gw_severity sev, enum gw_scope scope,
                    const char *server, const char *file, int line, int col, const char *key,
                    const char *msg);

/* config_oauth.c: the setters of the OAuth keys and what frees them. */
int gw_cfg_set_state_dir(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                         const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_redirect_uri(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_client_metadata_url(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                                   const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_oauth_issuer(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base);
/* config_tracing.c: gateway.tracing's keys, each from the OTEL_* variable
 * of the OpenTelemetry SDKs when the file leaves it out. */
int gw_cfg_set_tracing(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                       const struct gw_yaml_node *n, const char *key, void *base);
void gw_cfg_free_tracing(struct gw_gateway_config *g);
int gw_cfg_set_oauth_secret(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_oauth_private_key(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                                 const struct gw_yaml_node *n, const char *key, void *base);
/* A server's oauth keys that depend on each other, once all are read:
 * private_key_jwt needs a private_key. */
void gw_cfg_finish_oauth(struct gw_cfg_ld *ld, const struct gw_server_config *s,
                         const struct gw_yaml_node *at, const char *shown);
int gw_cfg_set_oauth_method(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_oauth_resource(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                              const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_oauth_grant(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                           const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_oauth_scopes(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base);
void gw_cfg_free_server_oauth(struct gw_server_config *s);

/* Memory: abort with a message on exhaustion, as the daemon does. */

/* "a.b" + "." + "c" */
char *gw_cfg_join_key(const char *a, const char *b);
/* `p` made absolute against `dir` with "." components and repeated slashes
 * removed. New string. */
char *gw_cfg_abspath(const char *dir, const char *p);

/* Scalar conversions. Each returns 0 or UV_EINVAL and writes nothing on
 * error; the caller words the diagnostic. */
int gw_cfg_scalar_str(const struct gw_yaml_node *n, const char **out);
int gw_cfg_parse_bool(const char *s, bool *out);
int gw_cfg_parse_int(const char *s, int64_t *out);
/* A duration where a bare number means milliseconds ("200", "250ms", "1s"). */
int gw_cfg_parse_ms(const char *s, uint64_t *out_ms);
/* For a key that takes a number: 0 when `n` (NULL: a default) is not a
 * number written in quotes (or tagged !!str); else an error naming the key
 * and UV_EINVAL. YAML reads "64" as a string: a loader that took it as 64
 * would read a file differently from every other YAML tool. */
int gw_cfg_check_unquoted(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key);

/* `${NAME}` substitution, once (security.md F3): returns 0 and a new
 * string, or UV_ENOENT with the missing variable's name in *missing (new
 * string). */
int gw_cfg_subst(const char *s, char **out, char **missing);
/* The same, also giving the text as shown (each variable as ***; NULL
 * `shown` skips it) and appending the value of each variable used to
 * `values` (NULL skips it). */
int gw_cfg_subst_ex(const char *s, char **out, char **shown, struct gw_cfg_strv *values,
                    char **missing);

/* An env/header value node: a string (with ${VAR}), a number or bool
 * scalar taken as text, or {env: NAME}. Returns 0 and a new string, or
 * reports the problem at `key` and returns UV_EINVAL. */
int gw_cfg_env_value(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                     char **out);

/* The text of the small regular file that {file: PATH} names at `v` (${VAR}
 * substituted, relative to the config's directory), opened non-blocking so
 * that a FIFO cannot hang a load or reload. 0: *text (heap, NUL-terminated,
 * *len bytes before the NUL; the caller wipes and frees it) and, when
 * `shown` is not NULL, the absolute path (heap) for messages. Else an error
 * at `v` under `key` naming the path, never the text: missing, not a regular
 * file, over `max` bytes. */
int gw_cfg_read_file_value(struct gw_cfg_ld *ld, const struct gw_yaml_node *v, const char *key,
                           size_t max, char **text, size_t *len, char **shown);

/* A secret: an env value, or {file: PATH} (${VAR} substituted, relative
 * to the configuration's directory): the file's one line, without its
 * final newline. Returns 0 and a new string, or reports the problem at
 * `key` and returns UV_EINVAL. */
int gw_cfg_secret_value(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                        char **out);

/* Parses envFile text (KEY=VALUE lines) into kv/nkv, appending.
 * Reports each bad line as a diag at `file`:line. Returns 0 or UV_EINVAL. */
int gw_cfg_parse_env_file(struct gw_cfg_ld *ld, const char *file, const char *text,
                          struct gw_kv **kv, size_t *nkv);

/* Sets name=value in the list, replacing an earlier value of the same
 * name; takes ownership of both strings. */
void gw_cfg_kv_set(struct gw_kv **kv, size_t *nkv, char *name, char *value);

/* Reports every duplicate key in the subtree of `n` (scope per ld->srv). */
/* Index of the first pair of map `m` before i with the same key, or i. */
size_t gw_cfg_first_same_key(const struct gw_yaml_node *m, size_t i);

void gw_cfg_check_dups(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *shown,
                       int depth);

/* Warning for an unknown key under table path `path`, with a suggestion
 * when a known key there is within edit distance 2. */
void gw_cfg_unknown_key(struct gw_cfg_ld *ld, const char *path, const char *shown,
                        const struct gw_yaml_node *k);

bool gw_cfg_is_token(const char *s);
bool gw_cfg_has_ctl(const char *s, size_t len); /* CR, LF or NUL */
/* 0, or UV_EINVAL with a sentence in *why (static). */
int gw_cfg_check_listen(const char *s, const char **why);
/* 0 for https:// or http:// to a loopback host (127.0.0.0/8, ::1,
 * localhost) — with `ws`, wss:// or ws:// to a loopback host instead;
 * UV_EINVAL otherwise, with *malformed set when the text is not a URL with
 * a host at all. */
int gw_cfg_check_url(const char *url, bool ws, bool *malformed);
/* The url with userinfo and query hidden, for the public view. New string. */
char *gw_cfg_redact_url(const char *url);

/* Levenshtein distance, capped: returns cap+1 when larger. */
int gw_cfg_edit_distance(const char *a, const char *b, int cap);

/* FNV-1a 64 of the server's spawn-relevant and catalog-relevant fields. */
void gw_cfg_hash_server(struct gw_server_config *s);

/* Per-server key walking and the final transport checks (config_server.c). */
void gw_cfg_load_server(struct gw_cfg_ld *ld, const struct gw_yaml_node *idn,
                        const struct gw_yaml_node *body);
void gw_cfg_free_server(struct gw_server_config *s);

/* The directive table (config.c): walks map `m` at dotted `path` ("gateway",
 * "servers.<id>", "servers.<id>.tools") storing into `base`. `shown` is the
 * path as the user sees it ("servers.fs"). */
void gw_cfg_walk(struct gw_cfg_ld *ld, const char *path, const char *shown,
                 const struct gw_yaml_node *m, void *base);
/* Applies the table's defaults for entries under `path`. */
void gw_cfg_apply_defaults(struct gw_cfg_ld *ld, const char *path, void *base);

/* String list helper: a sequence of scalars (or null = empty). */
int gw_cfg_str_list(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                    char ***out, size_t *nout);
void gw_cfg_free_strv(char **v, size_t n);

/* config_server.c: the value node of `name` in a server's map, else
 * `dflt`, to point a diagnostic at the line that caused it. */
const struct gw_yaml_node *gw_cfg_place(const struct gw_yaml_node *body, const char *name,
                                        const struct gw_yaml_node *dflt);
/* config_sandbox.c: the sandbox keys. Each setter fills the sandbox at
 * its row's offset, so the gateway's rows and a server's share them. */
int gw_cfg_set_sandbox_default(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                               const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_sandbox_network(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                               const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_sandbox_read(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_sandbox_write(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                             const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_sandbox_home(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_sandbox_cpu(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                           const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_server_sandbox(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                              const struct gw_yaml_node *n, const char *key, void *base);
/* After a server's keys: only a stdio server is sandboxed. */
void gw_cfg_finish_sandbox(struct gw_cfg_ld *ld, struct gw_server_config *s);
void gw_cfg_sandbox_free(struct gw_sandbox_config *sb);

/* The offset of a field of the sandbox at `off` in a row's base. */
#define GW_SANDBOX_OFF(off, field) ((off) + offsetof(struct gw_sandbox_config, field))

/* config_clients.c: the `clients:` map, then (once gateway is read) the
 * default client of gateway.auth_token, the checks across clients and the
 * policy's digest; and what frees them. */
void gw_cfg_load_clients(struct gw_cfg_ld *ld, const struct gw_yaml_node *m);
void gw_cfg_finish_clients(struct gw_cfg_ld *ld, const struct gw_yaml_node *at);
void gw_cfg_free_clients(struct gw_config *c);
/* config_clients.c: gateway.audit's path and arguments. */
int gw_cfg_set_audit_path(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                          const struct gw_yaml_node *n, const char *key, void *base);
int gw_cfg_set_audit_arguments(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                               const struct gw_yaml_node *n, const char *key, void *base);

/* config_json.c: servers.<id>.config, YAML read into initialize's JSON. */
int gw_cfg_set_init_config(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                           const struct gw_yaml_node *n, const char *key, void *base);
/* config_vars.c: envFile read into the server's env. */
void gw_cfg_resolve_env_file(struct gw_cfg_ld *ld, struct gw_server_config *s, const char *key);
/* env (headers: false) or headers (true) pairs, ${VAR} resolved. */
void gw_cfg_resolve_pairs(struct gw_cfg_ld *ld, const struct gw_yaml_node *m, const char *key,
                          bool headers, struct gw_kv **kv, size_t *nkv);
/* config_vars.c: ${VAR} in the server's args, url, sessionId and config. */
void gw_cfg_subst_server(struct gw_cfg_ld *ld, struct gw_server_config *s,
                         const struct gw_yaml_node *idn, const struct gw_yaml_node *body,
                         const char *shown);

#endif
