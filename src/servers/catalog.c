/* Catalog, step 2: the live catalog. Commits swap a server's prepared build
 * in (seed 000's order: its old tools out, then its new tools in), keep the
 * owner of a contested name, re-offer names when they are freed, track
 * definition changes (security.md S8) and project the result for the
 * routes. Pure data: the daemon calls it on the loop thread. */
#include "gw/catalog.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/catalog_internal.h"
#include "gw/util.h"

enum tool_state { ST_REGISTERED, ST_SKIPPED, ST_WITHDRAWN };

/* One toolset: the built-in or a server's. It owns its build. */
struct gw_cat_toolset {
    char *name;
    bool builtin;
    struct gw_toolset_build *build;
    unsigned char *state;     /* per build tool: enum tool_state */
    struct gw_cat_tool **reg; /* the registered tools, in listing order */
    size_t nreg;
    struct gw_cat_firsts *firsts; /* servers' toolsets only (S8) */
    uint64_t gen;                 /* changes whenever reg does (gw_cat_toolset_gen) */
};

/* Final name → registered tool. Chained, so removals are simple; keys are
 * borrowed from the tools. */
struct node {
    struct gw_cat_tool *tool;
    struct node *next;
};

struct name_map {
    struct node **b;
    size_t nb, n;
};

struct gw_catalog {
    uint64_t version;
    struct gw_cat_toolset **sets; /* [0] is the built-in, then by name */
    size_t nsets, cap;
    struct name_map names;
    bool settled;    /* the first load is over: holders keep their names */
    char **reserved; /* gateway.reserved_tool_names */
    size_t nreserved;
};

static struct gw_cat_tool *map_get(const struct name_map *m, const char *name)
{
    for (struct node *n = m->b[gw_hash_str(name) % m->nb]; n != NULL; n = n->next) {
        if (strcmp(n->tool->name, name) == 0)
            return n->tool;
    }
    return NULL;
}

static void map_grow(struct name_map *m)
{
    size_t nb = m->nb * 2;
    struct node **b = gw_xcalloc(nb, sizeof(*b));

    for (size_t i = 0; i < m->nb; i++) {
        struct node *n = m->b[i], *next;
        for (; n != NULL; n = next) {
            size_t k = gw_hash_str(n->tool->name) % nb;
            next = n->next;
            n->next = b[k];
            b[k] = n;
        }
    }
    free(m->b);
    m->b = b;
    m->nb = nb;
}

/* The caller has checked that the name is free. */
static void map_put(struct name_map *m, struct gw_cat_tool *t)
{
    struct node *n = gw_xmalloc(sizeof(*n));
    size_t k;

    if (m->n >= m->nb)
        map_grow(m);
    k = gw_hash_str(t->name) % m->nb;
    n->tool = t;
    n->next = m->b[k];
    m->b[k] = n;
    m->n++;
}

/* Removes `t`'s name only if `t` itself owns it: a server never removes a
 * name someone else holds. */
static void map_del(struct name_map *m, const struct gw_cat_tool *t)
{
    struct node **pp = &m->b[gw_hash_str(t->name) % m->nb];

    for (; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->tool == t) {
            struct node *n = *pp;
            *pp = n->next;
            free(n);
            m->n--;
            return;
        }
    }
}

static void map_free(struct name_map *m)
{
    for (size_t i = 0; i < m->nb; i++) {
        struct node *n = m->b[i], *next;
        for (; n != NULL; n = next) {
            next = n->next;
            free(n);
        }
    }
    free(m->b);
}

static void set_free(struct gw_cat_toolset *ts)
{
    if (ts == NULL)
        return;
    gw_toolset_build_free(ts->build);
    free(ts->state);
    free(ts->reg);
    gw_cat_firsts_free(ts->firsts);
    free(ts->name);
    free(ts);
}

/* Generations are unique across catalogs, so that an index that outlives
 * one catalog never mistakes another's toolset for what it indexed. */
static uint64_t last_gen;

/* Rebuilds the registered view of a toolset from its states. */
static void set_index(struct gw_cat_toolset *ts)
{
    ts->gen = ++last_gen;
    free(ts->reg);
    ts->reg = gw_xcalloc(ts->build->ntools, sizeof(*ts->reg));
    ts->nreg = 0;
    for (size_t i = 0; i < ts->build->ntools; i++) {
        if (ts->state[i] == ST_REGISTERED)
            ts->reg[ts->nreg++] = ts->build->tools[i];
    }
}

static json_t *release_schema(void)
{
    return json_pack("{s:s, s:{s:{s:s, s:s}}, s:[s]}", "type", "object", "properties", "serverId",
                     "type", "string", "description",
                     "The id of the MCP server (its toolset name) to release", "required",
                     "serverId");
}

/* The built-in `mcp_release` of toolset `mcp_admin` (seed 000). */
static struct gw_cat_tool *release_tool(void)
{
    struct gw_cat_tool *t = gw_xcalloc(1, sizeof(*t));

    t->name = gw_xstrdup(GW_CATALOG_RELEASE_TOOL);
    t->original_name = gw_xstrdup(GW_CATALOG_RELEASE_TOOL);
    t->toolset = gw_xstrdup(GW_CATALOG_ADMIN_TOOLSET);
    t->title = gw_xstrdup("Release an MCP server lease");
    t->description = gw_xstrdup(
        "Release the MCP server instance leased to this dialog for the toolset named by "
        "serverId. Call it when you are confident you will not need that toolset's tools again "
        "soon: the instance is stopped once its in-flight calls finish, and a later call to one "
        "of its tools leases a fresh instance.");
    t->input_schema = release_schema();
    t->annotations = json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", 0, "destructiveHint", 0,
                               "idempotentHint", 1, "openWorldHint", 0);
    if (t->input_schema == NULL || t->annotations == NULL)
        abort(); /* json_pack fails only when out of memory */
    return t;
}

static struct gw_cat_toolset *builtin_set(void)
{
    struct gw_cat_toolset *ts = gw_xcalloc(1, sizeof(*ts));

    ts->name = gw_xstrdup(GW_CATALOG_ADMIN_TOOLSET);
    ts->builtin = true;
    ts->build = gw_xcalloc(1, sizeof(*ts->build));
    ts->build->server = gw_xstrdup(GW_CATALOG_ADMIN_TOOLSET);
    ts->build->ok = true;
    ts->build->tools = gw_xcalloc(1, sizeof(*ts->build->tools));
    ts->build->tools[0] = release_tool();
    ts->build->ntools = 1;
    ts->state = gw_xcalloc(1, 1); /* ST_REGISTERED */
    set_index(ts);
    return ts;
}

struct gw_catalog *gw_catalog_new(void)
{
    struct gw_catalog *cat = gw_xcalloc(1, sizeof(*cat));

    cat->version = 1;
    cat->names.nb = 64;
    cat->names.b = gw_xcalloc(cat->names.nb, sizeof(*cat->names.b));
    cat->cap = 8;
    cat->sets = gw_xcalloc(cat->cap, sizeof(*cat->sets));
    cat->sets[cat->nsets++] = builtin_set();
    map_put(&cat->names, cat->sets[0]->reg[0]);
    return cat;
}

void gw_catalog_free(struct gw_catalog *cat)
{
    if (cat == NULL)
        return;
    for (size_t i = 0; i < cat->nsets; i++)
        set_free(cat->sets[i]);
    free(cat->sets);
    map_free(&cat->names);
    for (size_t i = 0; i < cat->nreserved; i++)
        free(cat->reserved[i]);
    free(cat->reserved);
    free(cat);
}

uint64_t gw_catalog_version(const struct gw_catalog *cat)
{
    return cat->version;
}

/* The index of server toolset `name`, or where it would be inserted (the
 * built-in at 0 is never a server's). */
static size_t set_find(const struct gw_catalog *cat, const char *name, bool *found)
{
    size_t lo = 1, hi = cat->nsets;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(cat->sets[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static struct gw_cat_toolset *set_insert(struct gw_catalog *cat, size_t at, const char *name)
{
    struct gw_cat_toolset *ts = gw_xcalloc(1, sizeof(*ts));

    if (cat->nsets == cat->cap) {
        cat->cap *= 2;
        cat->sets = gw_xrealloc(cat->sets, cat->cap * sizeof(*cat->sets));
    }
    memmove(&cat->sets[at + 1], &cat->sets[at], (cat->nsets - at) * sizeof(*cat->sets));
    cat->sets[at] = ts;
    cat->nsets++;
    ts->name = gw_xstrdup(name);
    ts->firsts = gw_cat_firsts_new();
    return ts;
}

static bool str_eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

static bool json_eq(const json_t *a, const json_t *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return json_equal(a, b);
}

/* Whether two tools serve the same thing: what `changed` is computed from. */
static bool tool_same(const struct gw_cat_tool *a, const struct gw_cat_tool *b)
{
    const struct gw_tool_config *p = &a->policy, *q = &b->policy;

    if (!str_eq(a->name, b->name) || !str_eq(a->original_name, b->original_name) ||
        !str_eq(a->title, b->title) || !str_eq(a->description, b->description))
        return false;
    if (!json_eq(a->input_schema, b->input_schema) ||
        !json_eq(a->output_schema, b->output_schema) || !json_eq(a->annotations, b->annotations) ||
        !json_eq(a->meta, b->meta))
        return false;
    if (a->has_policy != b->has_policy)
        return false;
    return !a->has_policy ||
           (p->max_instances == q->max_instances && p->timeout_ms == q->timeout_ms);
}

static bool lists_same(struct gw_cat_tool *const *a, size_t na, struct gw_cat_tool *const *b,
                       size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!tool_same(a[i], b[i]))
            return false;
    }
    return true;
}

static const struct gw_cat_tool *find_original(const struct gw_toolset_build *b, const char *orig)
{
    for (size_t i = 0; b != NULL && i < b->ntools; i++) {
        if (strcmp(b->tools[i]->original_name, orig) == 0)
            return b->tools[i];
    }
    return NULL;
}

/* Seed 004 §3.4.1: a tool new since the last commit that falls back to the
 * default configuration is logged. */
static void new_tools(const struct gw_toolset_build *old, const struct gw_toolset_build *b,
                      struct gw_cat_diags *d)
{
    for (size_t i = 0; old != NULL && i < b->ntools; i++) {
        const struct gw_cat_tool *t = b->tools[i];
        if (t->default_policy && find_original(old, t->original_name) == NULL)
            gw_cat_diags_add(d, GW_SEV_INFO, GW_CAT_NEW_TOOL, b->server, t->original_name,
                             "New tool '%s' discovered from MCP server '%s', registering "
                             "with default configuration",
                             t->original_name, b->server);
    }
}

static bool is_reserved(const struct gw_catalog *cat, const char *name)
{
    return gw_catalog_match_any(cat->reserved, cat->nreserved, name);
}

static void reserved_diag(struct gw_cat_diags *d, const struct gw_cat_tool *t)
{
    gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_COLLISION, t->server, t->original_name,
                     "Tool '%s' from MCP server '%s' (original name '%s') is skipped: the name "
                     "is reserved for the agent runtime's own tools "
                     "(gateway.reserved_tool_names)",
                     t->name, t->server, t->original_name);
}

static void collision(struct gw_cat_diags *d, const struct gw_cat_tool *t,
                      const struct gw_cat_tool *owner)
{
    if (owner->server == NULL)
        gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_COLLISION, t->server, t->original_name,
                         "Tool '%s' from MCP server '%s' (original name '%s') is skipped: the "
                         "name belongs to the built-in toolset '%s'",
                         t->name, t->server, t->original_name, owner->toolset);
    else
        gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_COLLISION, t->server, t->original_name,
                         "Tool '%s' from MCP server '%s' (original name '%s') is skipped: the "
                         "name is already registered by MCP server '%s' (original name '%s')",
                         t->name, t->server, t->original_name, owner->server, owner->original_name);
}

/* The toolset and build index of a registered tool. */
static struct gw_cat_toolset *holder_of(struct gw_catalog *cat, const struct gw_cat_tool *t,
                                        size_t *at)
{
    bool found;
    struct gw_cat_toolset *ts;

    if (t->server == NULL)
        return NULL;
    ts = cat->sets[set_find(cat, t->server, &found)];
    for (size_t i = 0; found && i < ts->build->ntools; i++) {
        if (ts->build->tools[i] == t) {
            *at = i;
            return ts;
        }
    }
    return NULL;
}

/* During the first load a name goes to the server earlier in the file,
 * whichever listed first: the holder, if later, gives it up. Returns
 * whether `t` may take the name from `owner`. */
static bool take_over(struct gw_catalog *cat, const struct gw_cat_toolset *ts,
                      const struct gw_cat_tool *t, const struct gw_cat_tool *owner,
                      struct gw_cat_diags *d)
{
    size_t at = 0;
    struct gw_cat_toolset *h;

    if (cat->settled || (h = holder_of(cat, owner, &at)) == NULL || h == ts ||
        h->build->rank <= ts->build->rank)
        return false;
    map_del(&cat->names, owner);
    h->state[at] = ST_SKIPPED;
    set_index(h);
    collision(d, owner, t);
    return true;
}

/* Registers a toolset's tools in listing order; a name someone else holds
 * keeps its owner (design §5), but during the first load the server
 * earlier in the file takes it over. */
static void register_tools(struct gw_catalog *cat, struct gw_cat_toolset *ts,
                           struct gw_cat_diags *d)
{
    for (size_t i = 0; i < ts->build->ntools; i++) {
        struct gw_cat_tool *t = ts->build->tools[i];
        const struct gw_cat_tool *owner;

        if (gw_cat_firsts_withdrawn(ts->firsts, t->original_name)) {
            ts->state[i] = ST_WITHDRAWN;
        } else if (is_reserved(cat, t->name)) {
            ts->state[i] = ST_SKIPPED;
            reserved_diag(d, t);
        } else if ((owner = map_get(&cat->names, t->name)) != NULL &&
                   !take_over(cat, ts, t, owner, d)) {
            ts->state[i] = ST_SKIPPED;
            collision(d, t, owner);
        } else {
            map_put(&cat->names, t);
            ts->state[i] = ST_REGISTERED;
        }
    }
    set_index(ts);
}

/* Gives tools skipped for a collision the names that are free now.
 * Returns how many were registered. */
static int by_rank(const void *a, const void *b)
{
    const struct gw_cat_toolset *const *x = a, *const *y = b;
    size_t rx = (*x)->build->rank, ry = (*y)->build->rank;

    return rx < ry ? -1 : rx > ry;
}

/* Servers are offered freed names in file order, so which one gets a name
 * does not depend on the order their ids sort in. */
static size_t reoffer(struct gw_catalog *cat, struct gw_cat_diags *d)
{
    size_t n = 0, nsets = cat->nsets - 1;
    struct gw_cat_toolset **order = gw_xmalloc((nsets ? nsets : 1) * sizeof(*order));

    memcpy(order, cat->sets + 1, nsets * sizeof(*order));
    qsort(order, nsets, sizeof(*order), by_rank);
    for (size_t i = 0; i < nsets; i++) {
        struct gw_cat_toolset *ts = order[i];
        size_t before = n;

        for (size_t j = 0; j < ts->build->ntools; j++) {
            struct gw_cat_tool *t = ts->build->tools[j];
            if (ts->state[j] != ST_SKIPPED || map_get(&cat->names, t->name) != NULL ||
                is_reserved(cat, t->name))
                continue;
            map_put(&cat->names, t);
            ts->state[j] = ST_REGISTERED;
            n++;
            gw_cat_diags_add(d, GW_SEV_INFO, GW_CAT_REOFFERED, t->server, t->original_name,
                             "Tool '%s' from MCP server '%s' is registered now that its name is "
                             "free",
                             t->name, t->server);
        }
        if (n != before)
            set_index(ts);
    }
    free(order);
    return n;
}

void gw_catalog_settle(struct gw_catalog *cat)
{
    cat->settled = true;
}

void gw_catalog_set_rank(struct gw_catalog *cat, const char *server, size_t rank)
{
    bool found;
    size_t at = set_find(cat, server, &found);

    if (found && !cat->sets[at]->builtin)
        cat->sets[at]->build->rank = rank;
}

static size_t unregister_reserved(struct gw_catalog *cat)
{
    size_t n = 0;

    for (size_t i = 1; i < cat->nsets; i++) {
        struct gw_cat_toolset *ts = cat->sets[i];
        size_t before = n;

        for (size_t j = 0; j < ts->build->ntools; j++) {
            struct gw_cat_tool *t = ts->build->tools[j];
            if (ts->state[j] != ST_REGISTERED || !is_reserved(cat, t->name))
                continue;
            map_del(&cat->names, t);
            ts->state[j] = ST_SKIPPED;
            n++;
        }
        if (n != before)
            set_index(ts);
    }
    return n;
}

/* Every skipped tool has its reason said again, as it stands after the
 * reserved names changed: a reserved name, or the server that holds it
 * now. Each replaces the Problem the old reason raised. */
static void restate_skipped(struct gw_catalog *cat, struct gw_cat_diags *d)
{
    for (size_t i = 1; i < cat->nsets; i++) {
        struct gw_cat_toolset *ts = cat->sets[i];

        for (size_t j = 0; j < ts->build->ntools; j++) {
            struct gw_cat_tool *t = ts->build->tools[j];
            const struct gw_cat_tool *owner;
            if (ts->state[j] != ST_SKIPPED)
                continue;
            if (is_reserved(cat, t->name))
                reserved_diag(d, t);
            else if ((owner = map_get(&cat->names, t->name)) != NULL && owner != t)
                collision(d, t, owner);
        }
    }
}

int gw_catalog_set_reserved(struct gw_catalog *cat, char *const *pats, size_t n,
                            struct gw_cat_diags *diags)
{
    struct gw_cat_diags scratch = {0};
    bool same = n == cat->nreserved;
    size_t changed;

    for (size_t i = 0; same && i < n; i++)
        same = strcmp(pats[i], cat->reserved[i]) == 0;
    if (same)
        return 0;
    for (size_t i = 0; i < cat->nreserved; i++)
        free(cat->reserved[i]);
    free(cat->reserved);
    cat->reserved = n ? gw_xcalloc(n, sizeof(*cat->reserved)) : NULL;
    for (size_t i = 0; i < n; i++)
        cat->reserved[i] = gw_xstrdup(pats[i]);
    cat->nreserved = n;
    if (diags == NULL)
        diags = &scratch;
    changed = unregister_reserved(cat) + reoffer(cat, diags);
    restate_skipped(cat, diags);
    if (changed > 0)
        cat->version++;
    gw_cat_diags_free(&scratch);
    return changed > 0;
}

int gw_catalog_commit(struct gw_catalog *cat, struct gw_toolset_build *b,
                      enum gw_tool_changes changes, struct gw_cat_diags *diags)
{
    struct gw_cat_diags scratch = {0};
    struct gw_cat_toolset *ts;
    struct gw_toolset_build *old;
    struct gw_cat_tool **old_reg;
    size_t at, old_nreg, withdrawn;
    bool found, changed;

    if (!b->ok || strcmp(b->server, GW_CATALOG_ADMIN_TOOLSET) == 0) {
        gw_toolset_build_free(b);
        return UV_EINVAL;
    }
    if (diags == NULL)
        diags = &scratch;
    at = set_find(cat, b->server, &found);
    ts = found ? cat->sets[at] : set_insert(cat, at, b->server);
    old = ts->build;
    old_reg = ts->reg;
    old_nreg = ts->nreg;
    ts->reg = NULL;
    new_tools(old, b, diags);
    withdrawn = gw_cat_firsts_check(ts->firsts, b, changes, diags);
    /* Seed 000's order: this server's old names out, then its new ones in. */
    for (size_t i = 0; i < old_nreg; i++)
        map_del(&cat->names, old_reg[i]);
    free(ts->state);
    ts->build = b;
    ts->state = gw_xcalloc(b->ntools, 1);
    register_tools(cat, ts, diags);
    changed = !found || withdrawn > 0 || !lists_same(old_reg, old_nreg, ts->reg, ts->nreg);
    free(old_reg);
    gw_toolset_build_free(old); /* after the comparison: old_reg points into it */
    if (reoffer(cat, diags) > 0)
        changed = true;
    if (changed)
        cat->version++;
    gw_cat_diags_free(&scratch);
    return changed;
}

int gw_catalog_remove(struct gw_catalog *cat, const char *server, struct gw_cat_diags *diags)
{
    struct gw_cat_diags scratch = {0};
    struct gw_cat_toolset *ts;
    bool found;
    size_t at = set_find(cat, server, &found);

    if (!found)
        return 0;
    ts = cat->sets[at];
    for (size_t i = 0; i < ts->nreg; i++)
        map_del(&cat->names, ts->reg[i]);
    memmove(&cat->sets[at], &cat->sets[at + 1], (cat->nsets - at - 1) * sizeof(*cat->sets));
    cat->nsets--;
    set_free(ts);
    reoffer(cat, diags ? diags : &scratch);
    cat->version++;
    gw_cat_diags_free(&scratch);
    return 1;
}

const struct gw_cat_tool *gw_catalog_lookup(const struct gw_catalog *cat, const char *name)
{
    return name != NULL ? map_get(&cat->names, name) : NULL;
}

json_t *gw_catalog_listing(const struct gw_catalog *cat, const char *server)
{
    bool found;
    size_t at = set_find(cat, server, &found);

    return found ? cat->sets[at]->build->listing : NULL;
}

const struct gw_cat_toolset *gw_catalog_toolset_at(const struct gw_catalog *cat, size_t i)
{
    return i < cat->nsets ? cat->sets[i] : NULL;
}

const struct gw_cat_toolset *gw_catalog_toolset(const struct gw_catalog *cat, const char *name)
{
    bool found;
    size_t at;

    if (strcmp(name, GW_CATALOG_ADMIN_TOOLSET) == 0)
        return cat->sets[0];
    at = set_find(cat, name, &found);
    return found ? cat->sets[at] : NULL;
}

const char *gw_cat_toolset_name(const struct gw_cat_toolset *ts)
{
    return ts->name;
}

const char *gw_cat_toolset_server(const struct gw_cat_toolset *ts)
{
    return ts->builtin ? NULL : ts->name;
}

uint64_t gw_cat_toolset_gen(const struct gw_cat_toolset *ts)
{
    return ts->gen;
}

size_t gw_cat_toolset_ntools(const struct gw_cat_toolset *ts)
{
    return ts->nreg;
}

const struct gw_cat_tool *gw_cat_toolset_tool(const struct gw_cat_toolset *ts, size_t i)
{
    return i < ts->nreg ? ts->reg[i] : NULL;
}

int gw_tool_format_parse(const char *s, enum gw_tool_format *out)
{
    static const char *const names[] = {"mcp", "openai", "anthropic"};

    for (size_t i = 0; i < GW_ARRAY_SIZE(names); i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (enum gw_tool_format)i;
            return 0;
        }
    }
    return UV_EINVAL;
}

/* Adds `v` under `key` when it is not NULL, sharing the reference. */
static void set_shared(json_t *obj, const char *key, json_t *v)
{
    if (v != NULL)
        json_object_set(obj, key, v);
}

static json_t *tool_mcp(const struct gw_cat_tool *t, bool wire)
{
    json_t *j = json_object();

    json_object_set_new(j, "name", json_string(t->name));
    if (!wire) {
        json_object_set_new(j, "toolset", json_string(t->toolset));
        json_object_set_new(j, "server", t->server ? json_string(t->server) : json_null());
        json_object_set_new(j, "originalName", json_string(t->original_name));
    }
    if (t->title != NULL)
        json_object_set_new(j, "title", json_string(t->title));
    json_object_set_new(j, "description", json_string(t->description));
    set_shared(j, "inputSchema", t->input_schema);
    set_shared(j, "outputSchema", t->output_schema);
    set_shared(j, "annotations", t->annotations);
    set_shared(j, "_meta", t->meta);
    return j;
}

json_t *gw_cat_tool_to_json(const struct gw_cat_tool *t, enum gw_tool_format fmt)
{
    switch (fmt) {
    case GW_TOOL_FORMAT_OPENAI:
        return json_pack("{s:s, s:{s:s, s:s, s:O}}", "type", "function", "function", "name",
                         t->name, "description", t->description, "parameters", t->input_schema);
    case GW_TOOL_FORMAT_ANTHROPIC:
        return json_pack("{s:s, s:s, s:O}", "name", t->name, "description", t->description,
                         "input_schema", t->input_schema);
    case GW_TOOL_FORMAT_MCP_WIRE:
        return tool_mcp(t, true);
    case GW_TOOL_FORMAT_MCP:
    default:
        return tool_mcp(t, false);
    }
}

json_t *gw_catalog_tools_json(const struct gw_catalog *cat, const char *toolsets_csv,
                              enum gw_tool_format fmt)
{
    bool all = toolsets_csv == NULL || toolsets_csv[strspn(toolsets_csv, ",")] == '\0';
    json_t *tools = json_array();

    for (size_t i = 0; i < cat->nsets; i++) {
        const struct gw_cat_toolset *ts = cat->sets[i];
        if (!all && !gw_csv_has(toolsets_csv, ts->name))
            continue;
        for (size_t j = 0; j < ts->nreg; j++)
            json_array_append_new(tools, gw_cat_tool_to_json(ts->reg[j], fmt));
    }
    return json_pack("{s:I, s:o}", "version", (json_int_t)cat->version, "tools", tools);
}

json_t *gw_catalog_toolsets_json(const struct gw_catalog *cat)
{
    json_t *sets = json_array();

    for (size_t i = 0; i < cat->nsets; i++) {
        const struct gw_cat_toolset *ts = cat->sets[i];
        json_t *names = json_array();
        for (size_t j = 0; j < ts->nreg; j++)
            json_array_append_new(names, json_string(ts->reg[j]->name));
        json_array_append_new(sets, json_pack("{s:s, s:o, s:o}", "name", ts->name, "server",
                                              ts->builtin ? json_null() : json_string(ts->name),
                                              "tools", names));
    }
    return json_pack("{s:I, s:o}", "version", (json_int_t)cat->version, "toolsets", sets);
}
