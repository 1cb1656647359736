/* Prompts, resources and resource templates across servers (see
 * catalog_prompts_resources.h). Each server's listing is derived on its own when it is
 * set (names filtered and transformed with the catalog's functions, bad
 * entries dropped); ownership across servers is then resolved again from
 * scratch in first-listing order, so a name or URI freed by one server goes
 * to the next one that offers it without any bookkeeping. Lists are small
 * (bounded by the discovery limits), so a rebuild per change is cheap. */
#include "gw/catalog_prompts_resources.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/util.h"

static const char *const kind_words[] = {"prompt", "resource", "template"};
static const char *const key_fields[] = {"name", "uri", "uriTemplate"};
static const char *const original_fields[] = {"originalName", "originalUri", "originalUriTemplate"};

/* One entry a server offers: its key (final prompt name, URI or template),
 * the original name (prompts) and the JSON to serve. */
struct item {
    char *key;
    char *original;
    json_t *json;
};

struct server_extras {
    struct server_extras *next; /* first-listing order */
    char *id;
    struct item *items[GW_EXTRA_KINDS];
    size_t n[GW_EXTRA_KINDS];
    struct gw_cat_diags derive[GW_EXTRA_KINDS]; /* what the derive left out */
    struct gw_cat_diags diags;                  /* derive + collisions, rebuilt */
};

struct gw_extras {
    struct server_extras *head, *tail;
    json_t *owner[GW_EXTRA_KINDS]; /* key → {"server","index"} */
    json_t *served[GW_EXTRA_KINDS];
};

/* ---- derive one server's listing ---- */

static void items_free(struct item *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].original);
        json_decref(v[i].json);
    }
    free(v);
}

static size_t compact_size(const json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT);
    size_t n = s ? strlen(s) : SIZE_MAX;

    free(s);
    return n;
}

/* Replaces the display strings of `o` (title, description, and `name`
 * unless it is an identifier) with their cleaned text, as for tools
 * (security.md S7). */
static void clean_fields(json_t *o, bool name_too)
{
    static const char *const keys[] = {"title", "description", "name"};

    for (size_t i = 0; i < (name_too ? 3u : 2u); i++) {
        json_t *v = json_object_get(o, keys[i]);
        char *c;
        if (!json_is_string(v))
            continue;
        c = gw_catalog_clean_text(json_string_value(v), json_string_length(v));
        json_object_set_new(o, keys[i], json_string(c));
        free(c);
    }
}

/* A prompt's own strings and its arguments' (whose names stay: a client
 * sends them back). */
static void clean_prompt(json_t *p)
{
    size_t i;
    json_t *arg;

    clean_fields(p, false);
    json_array_foreach(json_object_get(p, "arguments"), i, arg)
    {
        if (json_is_object(arg))
            clean_fields(arg, false);
    }
}

/* The final prompt name, or NULL with a diagnostic (the tool rules). */
static char *prompt_name(struct gw_cat_diags *d, const struct gw_server_config *cfg,
                         const char *orig)
{
    int verdict = gw_catalog_filter_verdict(cfg, orig);
    char *tagged = gw_xasprintf("prompt:%s", orig), *final = NULL;

    if (verdict == 0 && cfg->has_prompts &&
        !gw_catalog_match_any(cfg->prompts, cfg->nprompts, orig))
        gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_NOT_WHITELISTED, cfg->id, tagged,
                         "Prompt '%s' from MCP server '%s' is not served: it matches no pattern "
                         "of the server's 'prompts' list",
                         orig, cfg->id);
    else if (verdict != 0)
        gw_cat_diags_add(d, GW_SEV_WARNING, (enum gw_cat_diag_kind)verdict, cfg->id, tagged,
                         "Prompt '%s' from MCP server '%s' is not served: it matches %s", orig,
                         cfg->id,
                         verdict == GW_CAT_BLACKLISTED ? "the blacklist" : "no whitelist pattern");
    else if (!gw_catalog_name_valid(orig))
        gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_INVALID_NAME, cfg->id, tagged,
                         "Prompt '%.*s' from MCP server '%s' is not served: its name does not "
                         "match ^[a-zA-Z0-9_-]{1,64}$",
                         gw_utf8_cut(orig, 64), orig, cfg->id);
    else if (!gw_catalog_name_valid(final = gw_catalog_transform_name(cfg, orig))) {
        gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_INVALID_FINAL_NAME, cfg->id, tagged,
                         "Prompt '%s' from MCP server '%s' is not served: its name after "
                         "transforms, '%.*s', does not match ^[a-zA-Z0-9_-]{1,64}$",
                         orig, cfg->id, gw_utf8_cut(final, 80), final);
        free(final);
        final = NULL;
    }
    free(tagged);
    return final;
}

/* Checks one entry; returns 0 and fills `it`, or -1 with a diagnostic. */
static int derive_item(struct gw_cat_diags *d, const struct gw_server_config *cfg,
                       enum gw_extra_kind kind, json_t *e, struct item *it)
{
    const char *key = json_string_value(json_object_get(e, key_fields[kind]));

    if (!json_is_object(e) || key == NULL || compact_size(e) > GW_EXTRA_ENTRY_MAX_BYTES ||
        strlen(key) != json_string_length(json_object_get(e, key_fields[kind])) ||
        (kind != GW_EXTRA_PROMPTS && (strlen(key) == 0 || strlen(key) > GW_EXTRA_URI_MAX))) {
        gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_BAD_ENTRY, cfg->id, NULL,
                         "MCP server '%s' listed a %s that is not served: not an object with a "
                         "string \"%s\", or larger than the gateway accepts",
                         cfg->id, kind_words[kind], key_fields[kind]);
        return -1;
    }
    *it = (struct item){0};
    if (kind == GW_EXTRA_PROMPTS) {
        it->key = prompt_name(d, cfg, key);
        if (it->key == NULL)
            return -1;
        it->original = gw_xstrdup(key);
        it->json = json_deep_copy(e);
        clean_prompt(it->json);
        json_object_set_new(it->json, "name", json_string(it->key));
        return 0;
    }
    if (strncmp(key, GW_CATALOG_NS_SCHEME, strlen(GW_CATALOG_NS_SCHEME)) == 0 &&
        !cfg->resource_namespace) {
        char *tagged = gw_xasprintf("%s:%.*s", kind_words[kind], gw_utf8_cut(key, 200), key);
        gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_BAD_ENTRY, cfg->id, tagged,
                         "MCP server '%s' listed the %s '%.*s', which is not served: the "
                         "scheme " GW_CATALOG_NS_SCHEME " is the gateway's own "
                         "(resource_namespace)",
                         cfg->id, kind_words[kind], gw_utf8_cut(key, 200), key);
        free(tagged);
        return -1;
    }
    it->json = json_deep_copy(e);
    clean_fields(it->json, true);
    if (!cfg->resource_namespace) {
        it->key = gw_xstrdup(key);
        return 0;
    }
    it->original = gw_xstrdup(key);
    it->key = gw_catalog_ns_uri(cfg->id, key);
    json_object_set_new(it->json, key_fields[kind], json_string(it->key));
    return 0;
}

static bool has_key(const struct item *v, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].key, key) == 0)
            return true;
    }
    return false;
}

static void derive(struct server_extras *se, const struct gw_server_config *cfg,
                   enum gw_extra_kind kind, json_t *listing)
{
    size_t n = json_array_size(listing), k = 0;
    struct item *v = gw_xcalloc(n ? n : 1, sizeof *v);
    struct gw_cat_diags *d = &se->derive[kind];

    gw_cat_diags_free(d);
    for (size_t i = 0; i < n; i++) {
        if (derive_item(d, cfg, kind, json_array_get(listing, i), &v[k]) != 0)
            continue;
        if (has_key(v, k, v[k].key)) {
            char *tagged = gw_xasprintf("%s:%s", kind_words[kind], v[k].key);
            gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_DUPLICATE, cfg->id, tagged,
                             "MCP server '%s' listed the %s '%s' twice; the first is served",
                             cfg->id, kind_words[kind], v[k].key);
            free(tagged);
            free(v[k].key);
            free(v[k].original);
            json_decref(v[k].json);
            continue;
        }
        k++;
    }
    items_free(se->items[kind], se->n[kind]);
    se->items[kind] = v;
    se->n[kind] = k;
}

/* ---- ownership ---- */

static void diags_copy(struct gw_cat_diags *to, const struct gw_cat_diags *from)
{
    for (size_t i = 0; i < from->n; i++)
        gw_cat_diags_add(to, from->v[i].severity, from->v[i].kind, from->v[i].server,
                         from->v[i].tool, "%s", from->v[i].message);
}

static void resolve_kind(struct gw_extras *e, enum gw_extra_kind kind)
{
    json_t *owner = json_object(), *served = json_array();

    for (struct server_extras *se = e->head; se != NULL; se = se->next) {
        for (size_t i = 0; i < se->n[kind]; i++) {
            const struct item *it = &se->items[kind][i];
            json_t *o = json_object_get(owner, it->key);
            if (o != NULL) {
                char *tagged = gw_xasprintf("%s:%s", kind_words[kind], it->key);
                gw_cat_diags_add(&se->diags, GW_SEV_WARNING, GW_CAT_COLLISION, se->id, tagged,
                                 "The %s '%.*s' of MCP server '%s' is not served: MCP server "
                                 "'%s' offers it already",
                                 kind_words[kind], gw_utf8_cut(it->key, 200), it->key, se->id,
                                 json_string_value(json_object_get(o, "server")));
                free(tagged);
                continue;
            }
            json_object_set_new(
                owner, it->key,
                json_pack("{s:s, s:s?}", "server", se->id, "original", it->original));
            json_array_append(served, it->json);
        }
    }
    json_decref(e->owner[kind]);
    e->owner[kind] = owner;
    json_decref(e->served[kind]);
    e->served[kind] = served;
}

/* Resolves every kind again; returns the mask of kinds whose served lists
 * changed. */
static unsigned resolve(struct gw_extras *e)
{
    json_t *before[GW_EXTRA_KINDS], *owners[GW_EXTRA_KINDS];
    unsigned changed = 0;

    for (struct server_extras *se = e->head; se != NULL; se = se->next) {
        gw_cat_diags_free(&se->diags);
        for (int k = 0; k < GW_EXTRA_KINDS; k++)
            diags_copy(&se->diags, &se->derive[k]);
    }
    for (int k = 0; k < GW_EXTRA_KINDS; k++) {
        before[k] = json_incref(e->served[k]);
        owners[k] = json_incref(e->owner[k]);
        resolve_kind(e, (enum gw_extra_kind)k);
        /* an owner change alone counts: requests now go elsewhere */
        if (!json_equal(before[k], e->served[k]) || !json_equal(owners[k], e->owner[k]))
            changed |= 1u << k;
        json_decref(before[k]);
        json_decref(owners[k]);
    }
    return changed;
}

/* ---- the set ---- */

struct gw_extras *gw_extras_new(void)
{
    struct gw_extras *e = gw_xcalloc(1, sizeof *e);

    for (int k = 0; k < GW_EXTRA_KINDS; k++) {
        e->owner[k] = json_object();
        e->served[k] = json_array();
    }
    return e;
}

static void server_free(struct server_extras *se)
{
    for (int k = 0; k < GW_EXTRA_KINDS; k++) {
        items_free(se->items[k], se->n[k]);
        gw_cat_diags_free(&se->derive[k]);
    }
    gw_cat_diags_free(&se->diags);
    free(se->id);
    free(se);
}

void gw_extras_free(struct gw_extras *e)
{
    if (e == NULL)
        return;
    while (e->head != NULL) {
        struct server_extras *se = e->head;
        e->head = se->next;
        server_free(se);
    }
    for (int k = 0; k < GW_EXTRA_KINDS; k++) {
        json_decref(e->owner[k]);
        json_decref(e->served[k]);
    }
    free(e);
}

static struct server_extras *find(const struct gw_extras *e, const char *id)
{
    for (struct server_extras *se = e->head; se != NULL; se = se->next) {
        if (strcmp(se->id, id) == 0)
            return se;
    }
    return NULL;
}

unsigned gw_extras_set(struct gw_extras *e, const struct gw_server_config *cfg,
                       enum gw_extra_kind kind, json_t *listing)
{
    struct server_extras *se = find(e, cfg->id);

    if (se == NULL) {
        se = gw_xcalloc(1, sizeof *se);
        se->id = gw_xstrdup(cfg->id);
        if (e->tail != NULL)
            e->tail->next = se;
        else
            e->head = se;
        e->tail = se;
    }
    derive(se, cfg, kind, listing);
    return resolve(e);
}

unsigned gw_extras_remove(struct gw_extras *e, const char *server)
{
    struct server_extras **link = &e->head, *prev = NULL;

    while (*link != NULL && strcmp((*link)->id, server) != 0) {
        prev = *link;
        link = &(*link)->next;
    }
    if (*link == NULL)
        return 0;
    struct server_extras *se = *link;
    *link = se->next;
    if (e->tail == se)
        e->tail = prev;
    server_free(se);
    return resolve(e);
}

/* ---- projections and lookups ---- */

json_t *gw_extras_json(const struct gw_extras *e, enum gw_extra_kind kind)
{
    return json_copy(e->served[kind]);
}

json_t *gw_extras_rest_json(const struct gw_extras *e, enum gw_extra_kind kind)
{
    json_t *out = json_array(), *v;
    size_t i;

    json_array_foreach(e->served[kind], i, v)
    {
        const char *key = json_string_value(json_object_get(v, key_fields[kind]));
        json_t *o = json_object_get(e->owner[kind], key), *copy = json_copy(v);
        json_object_set(copy, "server", json_object_get(o, "server"));
        if (json_is_string(json_object_get(o, "original")))
            json_object_set(copy, original_fields[kind], json_object_get(o, "original"));
        json_array_append_new(out, copy);
    }
    return out;
}

const char *gw_extras_prompt(const struct gw_extras *e, const char *final, const char **original)
{
    json_t *o = json_object_get(e->owner[GW_EXTRA_PROMPTS], final);

    if (o == NULL)
        return NULL;
    if (original != NULL)
        *original = json_string_value(json_object_get(o, "original"));
    return json_string_value(json_object_get(o, "server"));
}

const char *gw_extras_template(const struct gw_extras *e, const char *uri_template)
{
    return json_string_value(
        json_object_get(json_object_get(e->owner[GW_EXTRA_TEMPLATES], uri_template), "server"));
}

const char *gw_extras_resource(const struct gw_extras *e, const char *uri)
{
    json_t *o = json_object_get(e->owner[GW_EXTRA_RESOURCES], uri), *v;
    size_t i;

    if (o != NULL)
        return json_string_value(json_object_get(o, "server"));
    json_array_foreach(e->served[GW_EXTRA_TEMPLATES], i, v)
    {
        const char *t = json_string_value(json_object_get(v, "uriTemplate"));
        if (gw_extras_template_match(t, uri))
            return gw_extras_template(e, t);
    }
    return NULL;
}

bool gw_extras_any(const struct gw_extras *e, enum gw_extra_kind kind)
{
    return json_array_size(e->served[kind]) > 0;
}

const struct gw_cat_diags *gw_extras_diags(const struct gw_extras *e, const char *server)
{
    struct server_extras *se = find(e, server);

    return se ? &se->diags : NULL;
}

const char *gw_extras_server_at(const struct gw_extras *e, size_t i)
{
    struct server_extras *se = e->head;

    while (se != NULL && i-- > 0)
        se = se->next;
    return se ? se->id : NULL;
}

/* ---- URI templates ---- */

/* Matches `uri` from `u` against the template from `t`. An expression
 * {x} (or {.x}, {;x}…) takes a run of characters without '/', '?' or '#';
 * {+x} and {#x} take any run; {/x} takes "/…"; {?x} and {&x} take an
 * optional query part. Backtracks; templates and URIs are bounded. */
static bool match_from(const char *t, const char *u, int depth)
{
    if (depth > 32)
        return false;
    while (*t != '\0' && *t != '{') {
        if (*t++ != *u++)
            return false;
    }
    if (*t == '\0')
        return *u == '\0';
    const char *close = strchr(t, '}');
    if (close == NULL)
        return false;
    char op = t[1];
    bool any = op == '+' || op == '#' || op == '?' || op == '&' || op == '/';
    bool optional = op == '?' || op == '&';
    for (const char *end = u;; end++) {
        if ((end > u || optional) && match_from(close + 1, end, depth + 1))
            return true;
        if (*end == '\0' || (!any && (*end == '/' || *end == '?' || *end == '#')))
            return false;
    }
}

bool gw_extras_template_match(const char *tmpl, const char *uri)
{
    /* A namespaced template is longer than its server's by its prefix. */
    size_t most = GW_EXTRA_URI_MAX + strlen(GW_CATALOG_NS_SCHEME) + GW_CATALOG_NS_ID_MAX + 1;

    if (tmpl == NULL || uri == NULL || strlen(tmpl) > most || strlen(uri) > 4 * most)
        return false;
    return match_from(tmpl, uri, 0);
}
