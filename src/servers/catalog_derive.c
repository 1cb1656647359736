/* Catalog, step 1: derive a server's prepared toolset from its config and
 * its raw tools/list result. Pure: no catalog, no I/O. Seed 000 gives the
 * filtering, transform and validity rules, seed 003 the handling of
 * untrusted metadata (fail closed, bounded), seed 004 strict/dynamic. */
#include "gw/catalog.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/util.h"

/* How much of an invalid, untrusted name a message quotes. */
#define QUOTE_MAX 80

static const char *const kind_names[] = {
    [GW_CAT_BAD_LISTING] = "bad_listing",
    [GW_CAT_RESERVED_ID] = "reserved_id",
    [GW_CAT_BAD_ENTRY] = "bad_entry",
    [GW_CAT_NOT_WHITELISTED] = "not_whitelisted",
    [GW_CAT_BLACKLISTED] = "blacklisted",
    [GW_CAT_INVALID_NAME] = "invalid_name",
    [GW_CAT_INVALID_FINAL_NAME] = "invalid_final_name",
    [GW_CAT_BAD_SCHEMA] = "bad_schema",
    [GW_CAT_BAD_ANNOTATIONS] = "bad_annotations",
    [GW_CAT_BAD_META] = "bad_meta",
    [GW_CAT_DUPLICATE] = "duplicate",
    [GW_CAT_STRICT_UNCONFIGURED] = "strict_unconfigured",
    [GW_CAT_CONFIGURED_MISSING] = "configured_missing",
    [GW_CAT_EMPTY_LIST] = "empty_list",
    [GW_CAT_DEFAULT_CONFIG] = "default_config",
    [GW_CAT_NEW_TOOL] = "new_tool",
    [GW_CAT_COLLISION] = "collision",
    [GW_CAT_REOFFERED] = "reoffered",
    [GW_CAT_DEFINITION_CHANGED] = "definition_changed",
    [GW_CAT_FIRSTS_FULL] = "first_definitions_full",
};

const char *gw_cat_diag_kind_name(enum gw_cat_diag_kind k)
{
    if ((size_t)k < GW_ARRAY_SIZE(kind_names) && kind_names[k] != NULL)
        return kind_names[k];
    return "unknown";
}

void gw_cat_diags_add(struct gw_cat_diags *d, enum gw_severity sev, enum gw_cat_diag_kind kind,
                      const char *server, const char *tool, const char *fmt, ...)
{
    struct gw_cat_diag *g;
    va_list ap;
    int n;

    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        d->v = gw_xrealloc(d->v, d->cap * sizeof(*d->v));
    }
    g = &d->v[d->n++];
    g->severity = sev;
    g->kind = kind;
    g->server = gw_xstrdup(server);
    g->tool = tool ? gw_xstrdup(tool) : NULL;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    g->message = gw_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(g->message, (size_t)n + 1, fmt, ap);
    va_end(ap);
}

void gw_cat_diags_free(struct gw_cat_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].server);
        free(d->v[i].tool);
        free(d->v[i].message);
    }
    free(d->v);
    memset(d, 0, sizeof(*d));
}

bool gw_catalog_pattern_match(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;

    /* Greedy with one backtrack point: the last '*' seen absorbs one more
     * character each time the rest fails. Linear space, O(n*m) worst. */
    while (*s != '\0') {
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (*p == *s) {
            p++;
            s++;
        } else if (star != NULL) {
            p = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

bool gw_catalog_name_valid(const char *name)
{
    size_t n = 0;

    for (; name[n] != '\0'; n++) {
        char c = name[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        if (!ok || n >= GW_CATALOG_NAME_MAX)
            return false;
    }
    return n >= 1;
}

/* A bounded, printable rendering of an untrusted string for messages: an
 * invalid name may be huge or hold control characters. */
static char *quote_untrusted(const char *s, size_t len)
{
    size_t n = len < QUOTE_MAX ? len : QUOTE_MAX;
    char *out = gw_xmalloc(n + 4);

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    strcpy(out + n, len > n ? "..." : "");
    return out;
}

bool gw_catalog_match_any(char *const *pats, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (gw_catalog_pattern_match(pats[i], name))
            return true;
    }
    return false;
}

/* Seed 000: with no blacklist a non-empty whitelist is the universe; with a
 * blacklist, the whitelist only rescues blacklisted names. Returns 0 (keep)
 * or the kind of exclusion. */
int gw_catalog_filter_verdict(const struct gw_server_config *s, const char *name)
{
    bool white = gw_catalog_match_any(s->whitelist, s->nwhitelist, name);

    if (s->nblacklist == 0)
        return (s->nwhitelist == 0 || white) ? 0 : GW_CAT_NOT_WHITELISTED;
    if (white || !gw_catalog_match_any(s->blacklist, s->nblacklist, name))
        return 0;
    return GW_CAT_BLACKLISTED;
}

char *gw_catalog_transform_name(const struct gw_server_config *s, const char *name)
{
    char *cur = gw_xstrdup(name);

    for (size_t i = 0; i < s->ntransforms; i++) {
        const struct gw_transform *t = &s->transforms[i];
        const char *add = t->add ? t->add : "";
        const char *base = cur;
        char *next;

        if (t->kind == GW_TRANSFORM_SUFFIX) {
            next = gw_xasprintf("%s%s", cur, add);
        } else {
            size_t rl = t->remove ? strlen(t->remove) : 0;
            if (t->kind == GW_TRANSFORM_PREFIX_REPLACE && rl > 0 &&
                strncmp(cur, t->remove, rl) == 0)
                base = cur + rl;
            next = gw_xasprintf("%s%s", add, base);
        }
        free(cur);
        cur = next;
    }
    return cur;
}

static const struct gw_tool_config *configured(const struct gw_server_config *s, const char *name)
{
    for (size_t i = 0; i < s->ntool_configs; i++) {
        if (s->tool_configs[i].name != NULL && strcmp(s->tool_configs[i].name, name) == 0)
            return &s->tool_configs[i];
    }
    return NULL;
}

/* 1 when `j` nests containers deeper than `max`, counting `j` as `depth`. */
static int too_deep(const json_t *j, int depth, int max)
{
    const char *key;
    json_t *v;
    size_t i;

    if (!json_is_object(j) && !json_is_array(j))
        return 0;
    if (depth > max)
        return 1;
    if (json_is_array(j)) {
        json_array_foreach((json_t *)j, i, v)
        {
            if (too_deep(v, depth + 1, max))
                return 1;
        }
        return 0;
    }
    json_object_foreach((json_t *)j, key, v)
    {
        if (too_deep(v, depth + 1, max))
            return 1;
    }
    return 0;
}

struct size_count {
    size_t n, max;
};

static int count_bytes(const char *buf, size_t size, void *data)
{
    struct size_count *c = data;

    (void)buf;
    c->n += size;
    return c->n > c->max ? -1 : 0; /* stop serialising past the bound */
}

/* NULL when `j` is within the depth and size bounds, else why not. */
static const char *check_bounds(const json_t *j)
{
    struct size_count c = {0, GW_CATALOG_SCHEMA_MAX_BYTES};

    if (too_deep(j, 1, GW_CATALOG_SCHEMA_MAX_DEPTH))
        return "is nested deeper than 32 levels";
    if (json_dump_callback(j, count_bytes, &c, JSON_COMPACT) != 0)
        return "is larger than 64 KiB";
    return NULL;
}

/* NULL when `schema` is acceptable as an input or output schema. */
static const char *check_schema(const json_t *schema)
{
    const json_t *type;

    if (!json_is_object(schema))
        return "is not a JSON object";
    type = json_object_get(schema, "type");
    if (!json_is_string(type) || strcmp(json_string_value(type), "object") != 0)
        return "does not have \"type\": \"object\"";
    return check_bounds(schema);
}

/* Length of the UTF-8 sequence starting with `c` (jansson strings are valid
 * UTF-8, so the lead byte tells). */
static size_t utf8_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xf0)
        return 4;
    if (c >= 0xe0)
        return 3;
    return 2;
}

/* Whether the character of `l` bytes at `s` is one a server must not pass
 * to a person or a model unseen: C0 controls but \n and \t, DEL, C1 (Unicode
 * Cc); the bidirectional formatting characters, which make text display
 * in another order than a model reads it (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069, the "Trojan Source" set); and the tag
 * characters U+E0000-U+E007F, invisible ASCII a model still reads. */
static bool hidden_char(const unsigned char *s, size_t l)
{
    switch (l) {
    case 1:
        return (s[0] < 0x20 && s[0] != '\n' && s[0] != '\t') || s[0] == 0x7f;
    case 2:
        return (s[0] == 0xc2 && s[1] <= 0x9f) || (s[0] == 0xd8 && s[1] == 0x9c);
    case 3:
        if (s[0] != 0xe2)
            return false;
        if (s[1] == 0x80)
            return s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae);
        return s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9;
    default:
        return s[0] == 0xf3 && s[1] == 0xa0 && (s[2] == 0x80 || s[2] == 0x81);
    }
}

char *gw_catalog_clean_text(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0;
    char *out = gw_xmalloc((n < GW_CATALOG_TEXT_MAX ? n : GW_CATALOG_TEXT_MAX) + 1);

    for (size_t i = 0; i < n;) {
        size_t l = utf8_len(s[i]);
        if (i + l > n)
            break;
        if (!hidden_char(s + i, l)) {
            if (o + l > GW_CATALOG_TEXT_MAX)
                break;
            memcpy(out + o, s + i, l);
            o += l;
        }
        i += l;
    }
    out[o] = '\0';
    return out;
}

static char *clean_text(const json_t *v)
{
    return gw_catalog_clean_text(json_string_value(v), json_string_length(v));
}

static void tool_free(struct gw_cat_tool *t)
{
    if (t == NULL)
        return;
    free(t->name);
    free(t->original_name);
    free(t->toolset);
    free(t->server);
    free(t->title);
    free(t->description);
    json_decref(t->input_schema);
    json_decref(t->output_schema);
    json_decref(t->annotations);
    json_decref(t->meta);
    free(t);
}

void gw_toolset_build_free(struct gw_toolset_build *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->ntools; i++)
        tool_free(b->tools[i]);
    free(b->tools);
    gw_cat_diags_free(&b->diags);
    json_decref(b->listing);
    free(b->server);
    free(b);
}

/* A deep copy of untrusted JSON, so nothing the caller later does to the
 * listing reaches the catalog. json_deep_copy fails only without memory. */
static json_t *copy(const json_t *j)
{
    json_t *c = json_deep_copy(j);

    if (c == NULL)
        abort();
    return c;
}

/* Reports a tool refused for its metadata and returns NULL. */
static struct gw_cat_tool *refuse(struct gw_toolset_build *b, const char *orig, const char *field,
                                  const char *why)
{
    gw_cat_diags_add(&b->diags, GW_SEV_WARNING, GW_CAT_BAD_SCHEMA, b->server, orig,
                     "Tool '%s' from MCP server '%s' is not registered: its %s %s", orig, b->server,
                     field, why);
    return NULL;
}

/* Checks and copies the metadata of a tool whose names passed. NULL (with a
 * diagnostic) when any of it is refused: fail closed, never half a tool. */
/* MCP Apps link a tool to its UI by a `ui://` resource URI in `_meta`
 * (`ui.resourceUri`, and the older flat `ui/resourceUri`); a namespaced
 * server's resources are served under other URIs, so the links follow. */
static void namespace_ui_links(const struct gw_server_config *s, json_t *meta)
{
    json_t *ui = json_object_get(meta, "ui");
    json_t *holders[] = {json_is_object(ui) ? ui : NULL, meta};
    const char *keys[] = {"resourceUri", "ui/resourceUri"};

    for (size_t i = 0; i < GW_ARRAY_SIZE(keys); i++) {
        const char *uri = json_string_value(json_object_get(holders[i], keys[i]));
        char *ns;
        if (uri == NULL)
            continue;
        ns = gw_catalog_ns_uri(s->id, uri);
        json_object_set_new(holders[i], keys[i], json_string(ns));
        free(ns);
    }
}

/* A tool's `_meta` is passed on as sent (MCP Apps, FastMCP tags) within the
 * bounds of a schema; beyond them it is dropped and the tool kept. */
static void take_meta(struct gw_toolset_build *b, const struct gw_server_config *s, const json_t *e,
                      const char *orig, struct gw_cat_tool *t)
{
    const json_t *meta = json_object_get(e, "_meta");
    const char *why = "is not a JSON object";

    if (meta == NULL || json_is_null(meta))
        return;
    if (json_is_object(meta) && (why = check_bounds(meta)) == NULL) {
        t->meta = json_deep_copy(meta);
        if (s->resource_namespace)
            namespace_ui_links(s, t->meta);
        return;
    }
    gw_cat_diags_add(&b->diags, GW_SEV_WARNING, GW_CAT_BAD_META, b->server, orig,
                     "Tool '%s' from MCP server '%s': its _meta %s and was dropped", orig,
                     b->server, why);
}

/* Whether the /mcp front has headers to check against this tool's
 * arguments (mcp_modern.c): most tools have none, and their calls then
 * skip a lookup per property. */
static bool names_param_headers(const json_t *schema)
{
    const char *key;
    json_t *prop;

    json_object_foreach((json_t *)json_object_get(schema, "properties"), key, prop)
    {
        if (json_object_get(prop, "x-mcp-header") != NULL)
            return true;
    }
    return false;
}

static struct gw_cat_tool *take_metadata(struct gw_toolset_build *b,
                                         const struct gw_server_config *s, const json_t *e,
                                         const char *orig)
{
    const json_t *in = json_object_get(e, "inputSchema");
    const json_t *out = json_object_get(e, "outputSchema");
    const json_t *title = json_object_get(e, "title");
    const json_t *desc = json_object_get(e, "description");
    const json_t *ann = json_object_get(e, "annotations");
    const char *why;
    struct gw_cat_tool *t;

    if ((why = check_schema(in)) != NULL)
        return refuse(b, orig, "inputSchema", in ? why : "is missing");
    if (out != NULL && !json_is_null(out) && (why = check_schema(out)) != NULL)
        return refuse(b, orig, "outputSchema", why);
    if (title != NULL && !json_is_null(title) && !json_is_string(title))
        return refuse(b, orig, "title", "is not a string");
    if (desc != NULL && !json_is_null(desc) && !json_is_string(desc))
        return refuse(b, orig, "description", "is not a string");
    t = gw_xcalloc(1, sizeof(*t));
    t->input_schema = copy(in);
    t->param_headers = names_param_headers(t->input_schema);
    t->output_schema = json_is_object(out) ? copy(out) : NULL;
    t->title = json_is_string(title) ? clean_text(title) : NULL;
    t->description = json_is_string(desc) ? clean_text(desc) : gw_xstrdup("");
    if (ann != NULL && !json_is_null(ann)) {
        if (json_is_object(ann) && check_bounds(ann) == NULL)
            t->annotations = copy(ann);
        else
            gw_cat_diags_add(&b->diags, GW_SEV_WARNING, GW_CAT_BAD_ANNOTATIONS, b->server, orig,
                             "Tool '%s' from MCP server '%s': its annotations are not a bounded "
                             "JSON object and were dropped",
                             orig, b->server);
    }
    take_meta(b, s, e, orig, t);
    return t;
}

static void set_policy(const struct gw_server_config *s, struct gw_cat_tool *t)
{
    struct gw_tool_config p;

    /* mode omitted: no per-tool cap at all (design §4). */
    if (s->mode == GW_MODE_UNSET)
        return;
    if (gw_config_tool_policy(s, t->original_name, &p) != 0)
        return;
    t->has_policy = true;
    t->policy = p;
    t->policy.name = NULL; /* the config's string; the tool has its own names */
    t->default_policy = s->mode == GW_MODE_DYNAMIC && configured(s, t->original_name) == NULL;
}

/* Seed 004 §3.3.1, with the configuration path named as mcpgw spells it. */
static void strict_error(struct gw_toolset_build *b, const struct gw_server_config *s,
                         const char *tool)
{
    size_t cap = 64, len = 0;
    char *list = gw_xmalloc(cap);

    list[0] = '\0';
    for (size_t i = 0; i < s->ntool_configs; i++) {
        const char *n = s->tool_configs[i].name ? s->tool_configs[i].name : "";
        size_t need = len + strlen(n) + 3;
        if (need > cap) {
            cap = need * 2;
            list = gw_xrealloc(list, cap);
        }
        len += (size_t)sprintf(list + len, "%s%s", i ? ", " : "", n);
    }
    gw_cat_diags_add(&b->diags, GW_SEV_ERROR, GW_CAT_STRICT_UNCONFIGURED, s->id, tool,
                     "Tool '%s' from MCP server '%s' is not configured in the toolbox.\n\n"
                     "MCP Server: %s\nMode: strict\nMissing Tool: %s\n\n"
                     "Configured tools: [%s]\n\n"
                     "To resolve:\n"
                     "1. Add the tool to servers.%s.tool_config in your configuration, OR\n"
                     "2. Change the MCP server mode to 'dynamic' and provide default_tool_config",
                     tool, s->id, s->id, tool, list, s->id);
    free(list);
    b->ok = false;
}

/* Name checks, in seed 000's order: filter on the original name, original
 * validity, strict mode, transforms, final validity. Returns the final name
 * or NULL (with a diagnostic). */
static char *check_names(struct gw_toolset_build *b, const struct gw_server_config *s,
                         const json_t *name)
{
    const char *orig = json_string_value(name);
    size_t len = json_string_length(name);
    char *final, *q;
    int verdict;

    /* Filters first: a tool the operator excluded is excluded, whatever its
     * name. A name with a NUL in it cannot be matched and is invalid. */
    verdict = strlen(orig) == len ? gw_catalog_filter_verdict(s, orig) : 0;
    if (verdict != 0) {
        gw_cat_diags_add(&b->diags, GW_SEV_WARNING, (enum gw_cat_diag_kind)verdict, s->id, orig,
                         verdict == GW_CAT_BLACKLISTED
                             ? "Tool '%s' from MCP server '%s' is not registered: it matches the "
                               "blacklist"
                             : "Tool '%s' from MCP server '%s' is not registered: it matches no "
                               "whitelist pattern",
                         orig, s->id);
        return NULL;
    }
    if (strlen(orig) != len || !gw_catalog_name_valid(orig)) {
        q = quote_untrusted(orig, len);
        gw_cat_diags_add(&b->diags, GW_SEV_WARNING, GW_CAT_INVALID_NAME, s->id, q,
                         "Tool '%s' from MCP server '%s' is not registered: its name does not "
                         "match ^[a-zA-Z0-9_-]{1,64}$",
                         q, s->id);
        free(q);
        return NULL;
    }
    if (s->mode == GW_MODE_STRICT && configured(s, orig) == NULL) {
        strict_error(b, s, orig);
        return NULL;
    }
    final = gw_catalog_transform_name(s, orig);
    if (!gw_catalog_name_valid(final)) {
        q = quote_untrusted(final, strlen(final));
        gw_cat_diags_add(&b->diags, GW_SEV_WARNING, GW_CAT_INVALID_FINAL_NAME, s->id, orig,
                         "Tool '%s' from MCP server '%s' is not registered: its name after "
                         "transforms, '%s', does not match ^[a-zA-Z0-9_-]{1,64}$",
                         orig, s->id, q);
        free(q);
        free(final);
        return NULL;
    }
    return final;
}

/* One entry of the listing: a tool, or NULL with a diagnostic. */
static struct gw_cat_tool *derive_entry(struct gw_toolset_build *b,
                                        const struct gw_server_config *s, const json_t *e,
                                        size_t idx)
{
    const json_t *name = json_object_get(e, "name");
    struct gw_cat_tool *t;
    char *final;

    if (!json_is_object(e) || !json_is_string(name)) {
        gw_cat_diags_add(&b->diags, GW_SEV_WARNING, GW_CAT_BAD_ENTRY, s->id, NULL,
                         "Entry %zu of the tools/list result from MCP server '%s' is not a tool "
                         "with a name; it is ignored",
                         idx, s->id);
        return NULL;
    }
    if ((final = check_names(b, s, name)) == NULL)
        return NULL;
    if ((t = take_metadata(b, s, e, json_string_value(name))) == NULL) {
        free(final);
        return NULL;
    }
    t->name = final;
    t->original_name = gw_xstrdup(json_string_value(name));
    t->toolset = gw_xstrdup(s->id);
    t->server = gw_xstrdup(s->id);
    set_policy(s, t);
    return t;
}

struct ranked {
    const struct gw_cat_tool *t;
    size_t pos; /* listing position, so messages name tools in listing order */
};

static int by_name(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    int c = strcmp(x->t->name, y->t->name);

    if (c != 0)
        return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Two tools of one server with one final name reject the server's update
 * (design §5): the catalog cannot guess which one the operator meant. */
static void check_duplicates(struct gw_toolset_build *b)
{
    struct ranked *r;

    if (b->ntools < 2)
        return;
    r = gw_xmalloc(b->ntools * sizeof(*r));
    for (size_t i = 0; i < b->ntools; i++)
        r[i] = (struct ranked){b->tools[i], i};
    qsort(r, b->ntools, sizeof(*r), by_name);
    for (size_t i = 1; i < b->ntools; i++) {
        if (strcmp(r[i - 1].t->name, r[i].t->name) != 0)
            continue;
        gw_cat_diags_add(&b->diags, GW_SEV_ERROR, GW_CAT_DUPLICATE, b->server,
                         r[i].t->original_name,
                         "Tools '%s' and '%s' of MCP server '%s' both have the name '%s' after "
                         "transforms; the server's update is rejected",
                         r[i - 1].t->original_name, r[i].t->original_name, b->server, r[i].t->name);
        b->ok = false;
    }
    free(r);
}

static bool listed(const json_t *listing, const char *name)
{
    const json_t *e;
    size_t i;

    json_array_foreach((json_t *)listing, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n != NULL && strcmp(n, name) == 0)
            return true;
    }
    return false;
}

/* Seed 004 §3.3.3 and §3.4.2: warnings about the listing as a whole. */
static void check_listing(struct gw_toolset_build *b, const struct gw_server_config *s,
                          const json_t *listing)
{
    if (json_array_size(listing) == 0) {
        char *where = s->url ? gw_xstrdup(s->url) : gw_xstrdup(s->command ? s->command : "");
        for (size_t i = 0; s->url == NULL && i < s->nargs; i++) {
            char *w = gw_xasprintf("%s %s", where, s->args[i]);
            free(where);
            where = w;
        }
        gw_cat_diags_add(&b->diags, GW_SEV_WARNING, GW_CAT_EMPTY_LIST, s->id, NULL,
                         "MCP server '%s' at %s returned no tools", s->id, where);
        free(where);
    }
    for (size_t i = 0; i < s->ntool_configs; i++) {
        const char *n = s->tool_configs[i].name;
        if (n != NULL && !listed(listing, n))
            gw_cat_diags_add(&b->diags, GW_SEV_WARNING, GW_CAT_CONFIGURED_MISSING, s->id, n,
                             "Tool '%s' was configured but is no longer available from MCP "
                             "server '%s'",
                             n, s->id);
    }
}

static void reject(struct gw_toolset_build *b, enum gw_cat_diag_kind kind, const char *why)
{
    gw_cat_diags_add(&b->diags, GW_SEV_ERROR, kind, b->server, NULL,
                     "The update of MCP server '%s' is rejected: %s", b->server, why);
    b->ok = false;
}

static void derive_all(struct gw_toolset_build *b, const struct gw_server_config *s,
                       const json_t *listing)
{
    size_t n = json_array_size(listing);

    b->tools = gw_xcalloc(n, sizeof(*b->tools));
    for (size_t i = 0; i < n; i++) {
        struct gw_cat_tool *t = derive_entry(b, s, json_array_get(listing, i), i);
        if (t == NULL)
            continue;
        b->tools[b->ntools++] = t;
        if (t->default_policy)
            gw_cat_diags_add(&b->diags, GW_SEV_INFO, GW_CAT_DEFAULT_CONFIG, s->id, t->original_name,
                             "Tool '%s' from MCP '%s' not explicitly configured, using default "
                             "configuration",
                             t->original_name, s->id);
    }
    check_duplicates(b);
}

struct gw_toolset_build *gw_catalog_derive(const struct gw_server_config *s, json_t *listing)
{
    struct gw_toolset_build *b = gw_xcalloc(1, sizeof(*b));

    b->server = gw_xstrdup(s->id);
    b->ok = true;
    b->listing = json_incref(listing);
    snprintf(b->config_hash, sizeof(b->config_hash), "%s%s", s->spawn_hash, s->catalog_hash);
    if (strcmp(s->id, GW_CATALOG_ADMIN_TOOLSET) == 0) {
        reject(b, GW_CAT_RESERVED_ID, "its id 'mcp_admin' is reserved for the built-in toolset");
        return b;
    }
    if (!s->load_tools)
        return b;
    if (!json_is_array(listing)) {
        reject(b, GW_CAT_BAD_LISTING, "its tools/list result is not an array of tools");
        return b;
    }
    if (json_array_size(listing) > GW_CATALOG_MAX_TOOLS) {
        reject(b, GW_CAT_BAD_LISTING, "it lists more than 10000 tools");
        return b;
    }
    check_listing(b, s, listing);
    derive_all(b, s, listing);
    if (!b->ok) {
        /* A rejected build registers nothing; its diagnostics say why. */
        for (size_t i = 0; i < b->ntools; i++)
            tool_free(b->tools[i]);
        b->ntools = 0;
    }
    return b;
}
