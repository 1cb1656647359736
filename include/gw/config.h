/* Config: mcp.yaml version 1 loaded into a typed, immutable snapshot.
 *
 * gw_config_load() never spawns or connects anything. It returns a snapshot
 * even for a broken file: workspace-level errors (unreadable file, invalid
 * YAML, missing or unsupported version, duplicate keys, …) clear `ok`;
 * per-server errors clear that server's `ok` and leave the others usable.
 * Every error and warning is a gw_diag that names file:line:column, the
 * server and the key. A snapshot is reference counted: the daemon holds the
 * current one, a reload builds a new one and swaps what committed. */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gw/problems.h"

/* Limits of the loader itself (security.md F1). */
#define GW_CONFIG_MAX_FILE  (4u << 20)
#define GW_CONFIG_MAX_NODES 100000
#define GW_CONFIG_MAX_DEPTH 64

enum gw_transport_kind {
    GW_TRANSPORT_STDIO,
    GW_TRANSPORT_STREAMABLE_HTTP,
    GW_TRANSPORT_SSE,
    GW_TRANSPORT_WEBSOCKET
};

/* The MCP revision spoken to a server (`protocol`): auto probes 2026-07-28
 * first and falls back to a 2025-era initialize. */
enum gw_protocol_mode { GW_PROTOCOL_AUTO, GW_PROTOCOL_LEGACY, GW_PROTOCOL_MODERN };

enum gw_tool_mode {
    GW_MODE_UNSET,   /* omitted: dynamic with no per-tool cap (design §4) */
    GW_MODE_DYNAMIC, /* written out: requires default_tool_config */
    GW_MODE_STRICT
};

enum gw_tool_changes { GW_TOOL_CHANGES_WARN, GW_TOOL_CHANGES_DISABLE };

/* A stdio server's sandbox (`gateway.sandbox`, `servers.<id>.sandbox`;
 * docs/config.md, security.md X1-X5). The gateway's holds the defaults; a
 * server's is the effective one, defaults merged key by key. */
enum gw_sandbox_network { GW_SANDBOX_NET_NONE, GW_SANDBOX_NET_HOST, GW_SANDBOX_NET_LIST };
enum gw_sandbox_home { GW_SANDBOX_HOME_SERVER, GW_SANDBOX_HOME_DIALOG };
struct gw_sandbox_config {
    bool enabled;
    enum gw_sandbox_network network;
    char **allow; /* destinations as written, with network: [list] */
    size_t nallow;
    char **read; /* absolute paths, bound read-only */
    size_t nread;
    char **write; /* absolute paths, bound read-write */
    size_t nwrite;
    enum gw_sandbox_home home;
    uint64_t memory;    /* bytes; 0: no limit */
    int pids;           /* 0: no limit */
    uint64_t cpu_milli; /* thousandths of a core; 0: no limit */
    uint64_t tmp;       /* bytes of the private /tmp */
};

/* The dialog of an /mcp 2026-07-28 request that names none
 * (`gateway.mcp_default_dialog`): its client's, one for all, or none (a
 * leased server's tools refuse it). */
enum gw_mcp_default_dialog {
    GW_MCP_DIALOG_CLIENT,
    GW_MCP_DIALOG_SHARED,
    GW_MCP_DIALOG_NONE,
};

/* A resolved name=value pair of `env` or `headers`. Values are secrets:
 * nothing outside the transport may print them. */
struct gw_kv {
    char *name;
    char *value;
};

/* seed 004's ToolConfig; has_* tell which keys were written. */
struct gw_tool_config {
    char *name; /* ORIGINAL tool name; NULL for default_tool_config */
    int line, col;
    bool has_max_instances, has_timeout;
    int max_instances;   /* default 5 */
    uint64_t timeout_ms; /* default 30000 */
};

enum gw_transform_kind {
    GW_TRANSFORM_PREFIX,         /* prefix: s */
    GW_TRANSFORM_PREFIX_REPLACE, /* prefix: {remove, add} */
    GW_TRANSFORM_SUFFIX          /* suffix: s */
};

struct gw_transform {
    enum gw_transform_kind kind;
    char *add;    /* the text prepended or appended ("" allowed) */
    char *remove; /* PREFIX_REPLACE only */
};

/* A list of strings this config owns. */
struct gw_cfg_strv {
    char **v;
    size_t n;
};

/* servers.<id>.oauth.token_endpoint_auth_method */
enum gw_oauth_method {
    GW_OAUTH_METHOD_AUTO, /* chosen from the authorization server's metadata */
    GW_OAUTH_METHOD_NONE,
    GW_OAUTH_METHOD_BASIC,
    GW_OAUTH_METHOD_POST,
    GW_OAUTH_METHOD_JWT, /* private_key_jwt */
};

struct gw_server_config {
    char *id;
    int line, col; /* of the server's key */
    bool ok;       /* false: a per-server error made it unusable */
    char *error;   /* first per-server error, for /v1/servers; NULL if ok */

    bool truely_stateless;
    enum gw_transport_kind transport;
    enum gw_protocol_mode protocol;
    bool required;

    /* stdio */
    char *command;      /* as written */
    char *command_path; /* resolved executable (absolute), NULL if not found */
    char **args;
    size_t nargs;
    char *cwd;         /* absolute; defaults to the config file's directory */
    bool cwd_set;      /* written in the config, not the default */
    char *env_file;    /* absolute path, NULL if none */
    struct gw_kv *env; /* envFile entries first, then `env` (later wins) */
    size_t nenv;
    char *encoding; /* only "utf-8" is accepted */

    /* streamable_http / sse / websocket */
    char *url;
    struct gw_kv *headers;
    size_t nheaders;
    char *session_id;             /* NULL when empty */
    uint64_t timeout_ms;          /* connect timeout, default 10s */
    uint64_t sse_read_timeout_ms; /* default 300s */
    bool terminate_on_close;      /* default true */
    /* servers.<id>.oauth (docs/config.md): what the OAuth client of a server
     * that answers 401 with a Bearer challenge uses instead of discovery's
     * choices; all optional. */
    bool oauth_off;            /* a 401 stays an error */
    char *oauth_client_id;     /* NULL: register (Dynamic Client Registration) */
    char *oauth_client_secret; /* a secret; NULL when none */
    char *oauth_issuer;        /* the only authorization server of the client; NULL: any */
    char *oauth_private_key;   /* PEM (a secret), checked at load; NULL when none */
    enum gw_oauth_method oauth_method;
    char **oauth_scopes; /* replaces the spec's selection when has_oauth_scopes */
    size_t noauth_scopes;
    bool has_oauth_scopes;
    bool oauth_omit_resource;      /* resource: omit (no RFC 8707 parameter) */
    bool oauth_client_credentials; /* grant: client_credentials (no browser) */

    uint64_t request_timeout_ms; /* 0: gateway.request_timeout applies */
    json_t *init_config;         /* `config`, sent as initialize params.config; NULL if absent */
    bool load_tools, load_prompts, load_resources;
    bool resource_namespace; /* URIs shown as mcpgw:<id>/<uri> (docs/config.md) */

    char **whitelist;
    size_t nwhitelist;
    char **blacklist;
    size_t nblacklist;
    /* `${VAR}` in args, url, cwd, sessionId and config (seed 002): each
     * value a variable brought in is a secret (masked in server output,
     * redact.c); the *_shown forms have *** in its place, NULL where no
     * variable was used. */
    struct gw_cfg_strv var_values;
    char **args_shown; /* nargs entries */
    char *url_shown;
    char *cwd_shown;
    /* `prompts` (seed 004): absent serves every prompt the tool rules keep;
     * a list (globs) serves only the prompts it names, [] none. */
    bool has_prompts;
    char **prompts;
    size_t nprompts;
    struct gw_transform *transforms;
    size_t ntransforms;

    enum gw_tool_mode mode;
    bool has_default_tool_config;
    struct gw_tool_config default_tool_config; /* seed 004 defaults filled in */
    struct gw_tool_config *tool_configs;       /* keyed by ORIGINAL name */
    size_t ntool_configs;

    struct gw_sandbox_config sandbox; /* stdio only; effective */

    /* Stable hashes (16 hex digits) for reload diffs, design §8. */
    char spawn_hash[17];
    char catalog_hash[17];
};

/* The most tools one search answers (REST's limit, find_tools'). */
#define GW_TOOLSEARCH_LIMIT_MAX 100

/* gateway.audit.path's value that sends the lines to the journal. */
#define GW_AUDIT_JOURNAL "journal"

/* What an audit line keeps of a call's arguments. */
enum gw_audit_arguments {
    GW_AUDIT_ARGS_HASH, /* {"sha256": of their RFC 8785 text, "keys": [top-level keys]} */
    GW_AUDIT_ARGS_NONE, /* null */
    GW_AUDIT_ARGS_FULL, /* whole, each string with the server's secrets masked */
};

struct gw_gateway_config {
    char *listen;     /* "127.0.0.1:7420", "[::1]:7420" or "unix:/path" */
    char *auth_token; /* NULL when unset; a secret */
    int max_concurrent;
    uint64_t request_timeout_ms;
    uint64_t lease_idle_timeout_ms; /* 0 = never */
    int max_instances_per_server;
    int warm_spares;
    char *artifacts_dir;                     /* absolute */
    uint64_t artifacts_max_bytes_per_dialog; /* oldest of the dialog removed beyond */
    uint64_t artifacts_max_bytes;            /* oldest of all removed beyond */
    char **allowed_commands;                 /* empty: any command */
    size_t nallowed_commands;
    char **reserved_tool_names; /* globs: final names left to the agent runtime (seed 000) */
    size_t nreserved_tool_names;
    uint64_t max_body;
    uint64_t max_header_bytes;
    int max_connections;
    uint64_t header_timeout_ms;
    uint64_t keepalive_timeout_ms;
    char **allowed_origins;
    size_t nallowed_origins;
    char **inherit_env; /* patterns, '*' wildcard */
    size_t ninherit_env;
    enum gw_tool_changes tool_changes;
    enum gw_mcp_default_dialog mcp_default_dialog;
    uint64_t shutdown_grace_ms;
    uint64_t reload_debounce_ms;
    uint64_t reload_poll_interval_ms;
    bool ui; /* the status page at GET / (gw/ui.h) */
    /* gateway.tool_search (issue 29): /mcp serves find_tools/forget_tools */
    bool tool_search_enabled;
    char **tool_search_always_loaded; /* globs on final names */
    size_t ntool_search_always_loaded;
    int tool_search_max_results; /* find_tools' default limit, at most GW_TOOLSEARCH_LIMIT_MAX */
    char *state_dir; /* NULL: $STATE_DIRECTORY, $XDG_STATE_HOME/mcpgw, ~/.local/state/mcpgw */
    /* gateway.sandbox: the defaults of every server's sandbox; `enabled`
     * is `default: on`. `require`: a server whose sandbox cannot be made
     * fails instead of running unsandboxed. */
    struct gw_sandbox_config sandbox;
    bool sandbox_require;
    const char *config_file;         /* the file this was loaded from (the gw_config's path) */
    char *oauth_redirect_uri;        /* NULL: http://<listen>/oauth/callback */
    char *oauth_client_metadata_url; /* the gateway's Client ID Metadata Document; NULL: none */
    /* gateway.tracing (issue 37), or the OTEL_* variables it leaves unsaid */
    char *tracing_endpoint;        /* the OTLP/HTTP traces URL (…/v1/traces); NULL: tracing off */
    struct gw_kv *tracing_headers; /* sent with every export; values are secrets */
    size_t ntracing_headers;
    double tracing_sample;      /* 0 to 1: the share of new traces recorded */
    char *tracing_service_name; /* the resource's service.name */
    /* gateway.audit (issue 35): one JSON line per tool call and refusal */
    char *audit_path; /* absolute, or GW_AUDIT_JOURNAL; NULL: no audit log */
    enum gw_audit_arguments audit_arguments;
    bool audit_required; /* calls are refused while the log cannot be written */
};

/* A caller of the gateway (`clients.<name>`, or `default` for
 * gateway.auth_token): who it is by its token's SHA-256, and what it may
 * use (servers/policy.c decides). */
#define GW_CLIENT_NAME_MAX 64
#define GW_CLIENT_DEFAULT  "default"

/* A decision of servers/policy.c remembered for one client of one
 * snapshot: a reload makes a new snapshot, so a right taken away is gone
 * at the next call; the key is the server id and the final name, in full. */
#define GW_CLIENT_VERDICTS 64
struct gw_client_verdict {
    uint64_t hash; /* of key */
    char *key;     /* "server\0tool"; NULL: a free slot */
    size_t keylen;
    const char *rule; /* a glob of the client's or a setting's name; NULL: none */
    bool ok;
};

struct gw_client_config {
    char *name;         /* ^[a-zA-Z0-9_-]{1,64}$ */
    uint64_t name_hash; /* gw_hash_str(name): every call looks its client up by name */
    unsigned char token_sha256[32];
    bool has_token; /* token or token_sha256 given */
    char **servers; /* server ids; all when !has_servers */
    size_t nservers;
    bool has_servers;
    char **tools; /* globs over final names; all when !has_tools */
    size_t ntools;
    bool has_tools;
    char **deny; /* globs over final names; deny wins */
    size_t ndeny;
    bool admin;
    unsigned rate_n;         /* calls per rate_window_ms, a bucket refilled continuously; 0: none */
    uint64_t rate_window_ms; /* 1000 (`N/s`) or 60000 (`N/min`) */
    int max_concurrent;      /* its tool calls in flight at most; 0: no cap of its own */
    /* GW_CLIENT_VERDICTS slots, made at its first decision; the config is
     * read by the loop's thread only, so the one cache needs no lock */
    struct gw_client_verdict *verdicts;
};

struct gw_diag {
    enum gw_severity severity; /* GW_SEV_ERROR or GW_SEV_WARNING */
    enum gw_scope scope;       /* WORKSPACE or SERVER */
    char *file;
    int line, col; /* 1-based; 0 when not tied to a place */
    char *server;  /* NULL for workspace-level */
    char *key;     /* dotted path, e.g. "servers.fs.env.TOKEN" */
    char *message;
};

struct gw_config {
    int refs;
    char *path;  /* absolute path of the file read (may not exist) */
    char *dir;   /* its directory */
    bool ok;     /* false: a workspace-level error; keep the last known good */
    bool exists; /* false: the file was absent (an empty config) */
    struct gw_gateway_config gateway;
    struct gw_server_config *servers; /* in file order */
    size_t nservers;
    /* `clients:` in file order, then `default` for gateway.auth_token;
     * none: every caller may use everything (the token, if any, aside) */
    struct gw_client_config *clients;
    size_t nclients;
    unsigned char clients_sha256[32]; /* of the clients as loaded: the policy's version */
    /* Open-addressed indexes of `clients` (index + 1; 0: free), by name and
     * by the first 8 bytes of the token's digest: a call finds its client
     * in a probe or two instead of a pass over every client. */
    uint32_t *client_by_name, *client_by_token;
    size_t client_slots;   /* a power of two, at least twice nclients */
    bool client_limits;    /* some client has a rate or max_concurrent */
    struct gw_diag *diags; /* in file order */
    size_t ndiags;
};

/* Loads `path`. A missing file gives an empty, ok config with exists=false
 * (the caller decides whether that is an error). Returns 0 and sets *out to
 * a snapshot with one reference, or a negative code on out-of-memory only. */
int gw_config_load(const char *path, struct gw_config **out);

/* Same, from a buffer; `path` names it in diagnostics and anchors relative
 * paths. Used by tests and the fuzz target. */
int gw_config_load_buffer(const char *path, const char *buf, size_t len, struct gw_config **out);

struct gw_config *gw_config_ref(struct gw_config *c);
void gw_config_unref(struct gw_config *c);

const struct gw_server_config *gw_config_server(const struct gw_config *c, const char *id);

/* The effective tool config of a server's ORIGINAL tool name (design §5,
 * seed 004): strict → the listed entry or NULL; dynamic → defaults merged
 * with the listed entry; mode omitted → NULL (no per-tool cap). Returns 0
 * and fills *out (out->name points into `s`, NULL for a tool that only
 * takes the defaults), or UV_ENOENT for the NULL cases. */
int gw_config_tool_policy(const struct gw_server_config *s, const char *tool,
                          struct gw_tool_config *out);

/* The client of that name, or NULL. */
const struct gw_client_config *gw_config_client(const struct gw_config *c, const char *name);
/* The clients whose token digest may be `digest` (same first 8 bytes), one
 * per call with *at = 0 first; NULL after the last. */
const struct gw_client_config *
gw_config_client_by_digest(const struct gw_config *c, const unsigned char digest[32], size_t *at);

/* "file:line:col: error: [server id] message" (as --check-config prints). */
char *gw_diag_format(const struct gw_diag *d);

/* Public, secret-free view of the config for /v1/servers: env and header
 * names with "***" values, never the auth token. New reference. */
json_t *gw_server_config_to_json(const struct gw_server_config *s);

/* Parsers shared with other modules, exposed for tests. Each returns 0 and
 * sets *out, or UV_EINVAL. */
int gw_parse_duration(const char *s, uint64_t *out_ms);
int gw_parse_size(const char *s, uint64_t *out_bytes);

const char *gw_transport_name(enum gw_transport_kind t);
/* "auto", "legacy" or "modern". */
const char *gw_protocol_name(enum gw_protocol_mode p);

/* A sandbox as /v1/servers and `--check-config -v` show it. New object. */
json_t *gw_sandbox_config_json(const struct gw_sandbox_config *sb);

/* One row of the table of directives that drives the loader (style.md §7)
 * and is documented in docs/config.md. Keys are dotted; "<id>" stands for
 * a server id. Strings are static. */
struct gw_config_directive_info {
    const char *key;
    const char *type;
    const char *def; /* default as documented; "" when there is none */
    const char *seed;
};

/* Row i of the table; returns 0, or UV_ENOENT past the last row. */
int gw_config_directive(size_t i, struct gw_config_directive_info *out);

#endif
