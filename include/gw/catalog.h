/* Catalog: the merged, filtered, renamed tool catalog (design §5).
 *
 * A pure data module: no sockets, processes or loop. Work is split in two
 * steps, as seed 000's reload asks ("prepare outside, swap inside"):
 *
 *   1. gw_catalog_derive() turns one server's config and its raw `tools/list`
 *      array into a prepared gw_toolset_build: filtered (whitelist/blacklist
 *      on the ORIGINAL name), renamed (transforms in order), validated (names
 *      ^[a-zA-Z0-9_-]{1,64}$), normalised (untrusted metadata, seed 003) and
 *      with each tool's effective policy (seed 004). It touches no catalog
 *      and may run at any time. Everything left out is a diagnostic.
 *   2. gw_catalog_commit() swaps that build into the catalog for its server:
 *      the server's old tools are unregistered first, then the new ones are
 *      registered. A final name owned by another server or by the built-in
 *      keeps its owner; the newcomer is skipped with a warning.
 *
 * Ownership and lifetimes:
 *   - The catalog owns every committed build and every gw_cat_tool in it.
 *     Pointers returned by lookups and iteration are borrowed and stay valid
 *     until the next gw_catalog_commit/remove/free.
 *   - A build belongs to its caller until it is passed to gw_catalog_commit(),
 *     which always takes it (frees it when it refuses it).
 *   - Every json_t inside a tool is the catalog's own deep copy of what the
 *     server sent, and is never modified after derive. The JSON returned by
 *     the projection functions is a new reference owned by the caller, but
 *     it shares those schema objects (json_incref): treat it as read-only.
 *     It stays valid after the catalog changes, since it holds references.
 *   - gw_cat_diags own their strings; free them with gw_cat_diags_free().
 *
 * Ordering (deterministic): the built-in toolset `mcp_admin` first, then the
 * servers' toolsets by server id (byte order); inside a toolset, tools in the
 * order the server listed them.
 *
 * Collisions get another chance: the catalog keeps each server's whole
 * prepared build, including tools skipped for a collision. When a commit or
 * a removal frees a name, skipped tools of the other servers are offered it
 * again (toolsets in the order above, tools in listing order), in the same
 * commit and under the same version bump.
 *
 * Version: starts at 1 (the built-in alone) and is incremented by exactly
 * one by each commit or removal that changed what the catalog serves
 * (tools, their content or policies, or the set of toolsets) or withdrew a
 * tool (security.md S8: even one that was not being served, so that the
 * change is announced); an operation that changed nothing leaves it alone.
 * The caller quotes it for ETag. */
#ifndef GW_CATALOG_H
#define GW_CATALOG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gw/config.h"
#include "gw/problems.h"

#define GW_CATALOG_ADMIN_TOOLSET "mcp_admin"
#define GW_CATALOG_RELEASE_TOOL  "mcp_release"

/* Untrusted metadata bounds (design §5, security.md S7). */
#define GW_CATALOG_NAME_MAX         64
#define GW_CATALOG_SCHEMA_MAX_BYTES (64u * 1024u) /* compact serialisation */
#define GW_CATALOG_SCHEMA_MAX_DEPTH 32            /* the schema object is depth 1 */
#define GW_CATALOG_TEXT_MAX         (8u * 1024u)  /* description, title: bytes */
#define GW_CATALOG_MAX_TOOLS        10000         /* per server listing */

/* What a diagnostic is about, so a caller can key Problems by it (see
 * gw_cat_diag_kind_name()). */
enum gw_cat_diag_kind {
    GW_CAT_BAD_LISTING,         /* error: listing not an array, or too long */
    GW_CAT_RESERVED_ID,         /* error: server id is the built-in toolset's */
    GW_CAT_BAD_ENTRY,           /* warning: an entry is not a Tool object */
    GW_CAT_NOT_WHITELISTED,     /* warning: excluded by whitelist-only mode */
    GW_CAT_BLACKLISTED,         /* warning: matched the blacklist only */
    GW_CAT_INVALID_NAME,        /* warning: original name invalid */
    GW_CAT_INVALID_FINAL_NAME,  /* warning: name invalid after transforms */
    GW_CAT_BAD_SCHEMA,          /* warning: inputSchema/outputSchema/text refused */
    GW_CAT_BAD_ANNOTATIONS,     /* warning: annotations dropped, tool kept */
    GW_CAT_BAD_META,            /* warning: _meta dropped, tool kept */
    GW_CAT_DUPLICATE,           /* error: two tools share a final name */
    GW_CAT_STRICT_UNCONFIGURED, /* error: seed 004 §3.3.1 */
    GW_CAT_CONFIGURED_MISSING,  /* warning: seed 004 §3.4.2 */
    GW_CAT_EMPTY_LIST,          /* warning: seed 004 §3.3.3 */
    GW_CAT_DEFAULT_CONFIG,      /* info: seed 004 §3.4.1, dynamic, unlisted */
    GW_CAT_NEW_TOOL,            /* info: seed 004 §3.4.1, dynamic, new since last commit */
    GW_CAT_COLLISION,           /* warning: name owned elsewhere, tool skipped */
    GW_CAT_REOFFERED,           /* info: a skipped tool got its name after all */
    GW_CAT_DEFINITION_CHANGED,  /* warning: definition differs from the first one (S8) */
    GW_CAT_FIRSTS_FULL,         /* warning: too many names to remember first definitions */
};

struct gw_cat_diag {
    enum gw_severity severity;
    enum gw_cat_diag_kind kind;
    char *server;  /* server id; never NULL */
    char *tool;    /* ORIGINAL tool name when one is concerned, else NULL; an
                    * invalid name is given as a bounded printable rendering */
    char *message; /* a sentence (or seed 004's multi-line text) */
};

/* A growable list of diagnostics, zero-initialised by the caller. */
struct gw_cat_diags {
    struct gw_cat_diag *v;
    size_t n, cap;
};

/* Frees the diagnostics' contents and empties the list (the struct itself is
 * the caller's). */
void gw_cat_diags_free(struct gw_cat_diags *d);

/* Appends a diagnostic; the strings are copied (`tool` may be NULL). */
void gw_cat_diags_add(struct gw_cat_diags *d, enum gw_severity sev, enum gw_cat_diag_kind kind,
                      const char *server, const char *tool, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* A short snake_case name for a kind ("collision", "blacklisted", …). */
const char *gw_cat_diag_kind_name(enum gw_cat_diag_kind k);

/* One tool as the catalog serves it. All strings and json are owned by the
 * tool (and so by its build); nothing here is NULL unless it says so. */
struct gw_cat_tool {
    char *name;            /* final name, globally unique among registered tools */
    char *original_name;   /* as the server listed it */
    char *toolset;         /* server id, or "mcp_admin" for the built-in */
    char *server;          /* server id; NULL for the built-in */
    char *title;           /* NULL when the server gave none */
    char *description;     /* control characters stripped, capped; "" if none */
    json_t *input_schema;  /* object with "type":"object", as sent */
    bool param_headers;    /* a property of input_schema says "x-mcp-header" */
    json_t *output_schema; /* NULL if none */
    json_t *annotations;   /* NULL if none */
    json_t *meta;          /* `_meta` as sent (MCP Apps' `ui` URIs namespaced
                            * with resource_namespace); NULL if none */
    /* seed 004 effective policy: strict → the listed entry; dynamic →
     * default_tool_config merged with it; mode omitted → none. Its `name`
     * is NULL (the tool's own names are above). */
    bool has_policy;
    struct gw_tool_config policy;
    bool default_policy; /* dynamic mode and not in tool_config (seed 004 info) */
};

/* A server's prepared toolset, made by gw_catalog_derive(). */
struct gw_toolset_build {
    char *server;               /* server id */
    bool ok;                    /* false: the update is rejected (an error diag says why) */
    struct gw_cat_tool **tools; /* in listing order; empty when !ok */
    size_t ntools;
    struct gw_cat_diags diags; /* everything left out and why, in listing order */
    json_t *listing;           /* the raw listing (a reference), for in-place re-derive */
    char config_hash[33];      /* the config's spawn and catalog hashes: another value
                                * means the server's configuration changed (S8) */
    size_t rank;               /* the server's place in the config file: during the first
                                * load the earlier server wins a contested name */
};

void gw_toolset_build_free(struct gw_toolset_build *b);

/* Derives server `s`'s toolset from `listing`, the raw `tools/list` result
 * array (MCP Tool objects, every page joined). Pure: reads its arguments,
 * keeps a reference to `listing`, copies everything else. Never returns
 * NULL (out of memory aborts). `load_tools: false` gives an empty, ok build. */
struct gw_toolset_build *gw_catalog_derive(const struct gw_server_config *s, json_t *listing);

struct gw_catalog;

/* A catalog holding only the built-in toolset `mcp_admin`, version 1. */
struct gw_catalog *gw_catalog_new(void);
void gw_catalog_free(struct gw_catalog *cat);

uint64_t gw_catalog_version(const struct gw_catalog *cat);

/* Swaps `b` into the catalog as its server's toolset, replacing the previous
 * one. Takes `b` in every case. Definition changes (security.md S8) are
 * found by comparing each tool with the first definition the server listed
 * for it under its current configuration (catalog_internal.h); they are
 * reported, and with `changes` = GW_TOOL_CHANGES_DISABLE the tool is
 * withdrawn until a commit of a build derived from another configuration
 * (b->config_hash). Diagnostics of the swap (collisions, definition changes,
 * new tools, re-offers) are appended to `diags` (NULL: dropped). Returns 1
 * if the catalog changed (version bumped), 0 if not, UV_EINVAL if the build
 * was rejected (!b->ok, or the reserved id), which changes nothing. */
int gw_catalog_commit(struct gw_catalog *cat, struct gw_toolset_build *b,
                      enum gw_tool_changes changes, struct gw_cat_diags *diags);

/* Ends the first load (every server of the first configuration tried to
 * start): from now on a name stays with the server that holds it, across
 * reloads and restarts of either server; before, a commit from a server
 * earlier in the file (lower b->rank) takes a contested name over. */
void gw_catalog_settle(struct gw_catalog *cat);

/* The server's place in the config file after a reload that moved it (a
 * build carries the place it was derived at, b->rank). */
void gw_catalog_set_rank(struct gw_catalog *cat, const char *server, size_t rank);

/* Sets gateway.reserved_tool_names: registered tools whose final name
 * matches one of the globs leave the catalog, tools no longer matching are
 * offered their names again; tools committed later that match are skipped
 * with a warning. Copies `pats`. Returns 1 if the catalog changed. */
int gw_catalog_set_reserved(struct gw_catalog *cat, char *const *pats, size_t n,
                            struct gw_cat_diags *diags);

/* Removes a server's toolset and its tools, and forgets its first
 * definitions; never touches another's. Tools of other servers skipped for
 * a collision with it are re-offered. Returns 1 if it was there (version
 * bumped), 0 if not. */
int gw_catalog_remove(struct gw_catalog *cat, const char *server, struct gw_cat_diags *diags);

/* The registered tool with this final name (NULL finds none), or NULL. */
const struct gw_cat_tool *gw_catalog_lookup(const struct gw_catalog *cat, const char *name);

/* The raw listing of the server's committed build (borrowed), or NULL. */
json_t *gw_catalog_listing(const struct gw_catalog *cat, const char *server);

/* Iteration over toolsets in the documented order: i from 0 while the result
 * is non-NULL. A toolset's tools are only its registered ones. */
struct gw_cat_toolset;
const struct gw_cat_toolset *gw_catalog_toolset_at(const struct gw_catalog *cat, size_t i);
const struct gw_cat_toolset *gw_catalog_toolset(const struct gw_catalog *cat, const char *name);
const char *gw_cat_toolset_name(const struct gw_cat_toolset *ts);
const char *gw_cat_toolset_server(const struct gw_cat_toolset *ts); /* NULL: built-in */
size_t gw_cat_toolset_ntools(const struct gw_cat_toolset *ts);
/* A number that changes whenever the toolset's registered tools do (a
 * commit, a collision resolved, a reserved name), for indexes that follow
 * the catalog (toolsearch.h). Never reused. */
uint64_t gw_cat_toolset_gen(const struct gw_cat_toolset *ts);
/* The i-th registered tool in listing order, or NULL past the end. */
const struct gw_cat_tool *gw_cat_toolset_tool(const struct gw_cat_toolset *ts, size_t i);

enum gw_tool_format {
    GW_TOOL_FORMAT_MCP,       /* design §7 T */
    GW_TOOL_FORMAT_OPENAI,    /* {"type":"function","function":{…,"parameters"}} */
    GW_TOOL_FORMAT_ANTHROPIC, /* {"name","description","input_schema"} */
    GW_TOOL_FORMAT_MCP_WIRE,  /* an MCP Tool object under its final name (/mcp) */
};

/* "mcp", "openai", "anthropic" (not "mcp_wire": it is no route format).
 * Returns 0 and sets *out, or UV_EINVAL. */
int gw_tool_format_parse(const char *s, enum gw_tool_format *out);

/* One tool in a format (seed 000's projection: deterministic, no side
 * effects, schemas passed through). New reference. */
json_t *gw_cat_tool_to_json(const struct gw_cat_tool *t, enum gw_tool_format fmt);

/* {"version":N,"tools":[…]} for the toolsets named in `toolsets_csv`
 * ("a,b", empty items ignored; NULL or "" = all), in catalog order. Unknown
 * names match nothing. New reference. */
json_t *gw_catalog_tools_json(const struct gw_catalog *cat, const char *toolsets_csv,
                              enum gw_tool_format fmt);

/* {"version":N,"toolsets":[{"name","server","tools":[names]}]}; the built-in
 * has "server": null. New reference. */
json_t *gw_catalog_toolsets_json(const struct gw_catalog *cat);

/* Matches `name` against a pattern where '*' is any substring (seed 000).
 * Exposed for tests. */
bool gw_catalog_pattern_match(const char *pattern, const char *name);

/* ^[a-zA-Z0-9_-]{1,64}$ (seed 000). */
bool gw_catalog_name_valid(const char *name);

/* The server's whitelist/blacklist verdict on an ORIGINAL name (design §5):
 * 0 (kept), GW_CAT_NOT_WHITELISTED or GW_CAT_BLACKLISTED. Prompt names
 * (catalog_prompts_resources) follow the same rules as tool names. */
int gw_catalog_filter_verdict(const struct gw_server_config *s, const char *name);

/* Whether `name` matches any of the n glob patterns (design §5's '*'). */
bool gw_catalog_match_any(char *const *pats, size_t n, const char *name);

/* Text from a server made fit to show (design §5, security.md S7): control
 * characters (but \n and \t), bidirectional formatting characters and tag
 * characters removed, capped at GW_CATALOG_TEXT_MAX bytes on a character
 * boundary. `text` is `n` bytes of valid UTF-8 (a jansson string; NULs are
 * dropped). Caller frees. */
char *gw_catalog_clean_text(const char *text, size_t n);

/* The name after the server's transforms, in order. Caller frees. */
char *gw_catalog_transform_name(const struct gw_server_config *s, const char *name);

/* Namespaced URIs (resource_namespace, catalog_ns.c): a server's URI as
 * the gateway serves it is "mcpgw:<server id>/<the server's URI>", and an
 * MCP Apps "ui://<rest>" stays in its scheme as "ui://<id>/<rest>". */
#define GW_CATALOG_NS_SCHEME "mcpgw:"
#define GW_CATALOG_UI_SCHEME "ui://"
#define GW_CATALOG_NS_ID_MAX 64 /* a server id's longest */

/* A namespaced server's URI as served: "mcpgw:<server>/<uri>", except that
 * an MCP Apps "ui://<rest>" stays in its scheme (hosts look for it) as
 * "ui://<server>/<rest>". New string. */
char *gw_catalog_ns_uri(const char *server, const char *uri);
/* Undoes gw_catalog_ns_uri: 0 with `server` (GW_CATALOG_NS_ID_MAX + 1 bytes)
 * and *original (a new string) set, or UV_EINVAL when `uri` is neither
 * "mcpgw:<id>/<rest>" nor "ui://<id>/<rest>" with an id of 1 to
 * GW_CATALOG_NS_ID_MAX characters. A "ui://" URI of a server without
 * resource_namespace also splits: callers check that `server` is a
 * namespaced one. */
int gw_catalog_ns_split(const char *uri, char *server, char **original);

#endif
