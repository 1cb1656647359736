/* Tool search, the index: a dictionary of stemmed words, each with the
 * postings (document, term frequency per field) of the tools that use it,
 * and one segment per catalog toolset, built in time-bounded steps and
 * published whole (toolsearch.h). */
#include "gw/toolsearch_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw/util.h"

#define SLOTS_MIN 1024

struct gw_toolsearch *gw_toolsearch_new(void)
{
    struct gw_toolsearch *ix = gw_xcalloc(1, sizeof *ix);

    ix->nslots = SLOTS_MIN;
    ix->slots = gw_xcalloc(ix->nslots, sizeof *ix->slots);
    ix->slice_us = GW_TOOLSEARCH_SLICE_US;
    ix->first_us = GW_TOOLSEARCH_FIRST_US;
    return ix;
}

static void seg_free(struct gw_ts_seg *s)
{
    free(s->omap);
    free(s->docs);
    free(s->bdocs);
    free(s->name);
    free(s);
}

void gw_toolsearch_free(struct gw_toolsearch *ix)
{
    if (ix == NULL)
        return;
    for (size_t i = 0; i < ix->nsegs; i++)
        seg_free(ix->segs[i]);
    free(ix->segs);
    for (size_t i = 0; i < ix->nterms; i++) {
        free(ix->terms[i].s);
        free(ix->terms[i].p);
    }
    for (size_t i = 0; i < ix->ndocs; i++) {
        free(ix->docs[i].name);
        free(ix->docs[i].key);
        free(ix->docs[i].terms);
    }
    free(ix->terms);
    free(ix->free_terms);
    free(ix->slots);
    free(ix->docs);
    free(ix->free_docs);
    free(ix->garbage);
    gw_ts_scratch_free(ix);
    free(ix);
}

void gw_toolsearch_set_slice(struct gw_toolsearch *ix, uint64_t us)
{
    ix->slice_us = us;
}

void gw_toolsearch_set_first(struct gw_toolsearch *ix, uint64_t us)
{
    ix->first_us = us;
}

bool gw_toolsearch_in_use(const struct gw_toolsearch *ix)
{
    return ix->version != 0;
}

/* ---- the dictionary: open addressing, linear probing ---- */

long gw_ts_term_find(const struct gw_toolsearch *ix, const char *s)
{
    size_t mask = ix->nslots - 1;

    for (size_t k = gw_hash_str(s) & mask; ix->slots[k] != 0; k = (k + 1) & mask) {
        if (strcmp(ix->terms[ix->slots[k] - 1].s, s) == 0)
            return (long)ix->slots[k] - 1;
    }
    return -1;
}

static void slots_resize(struct gw_toolsearch *ix, size_t n)
{
    size_t mask = n - 1;

    free(ix->slots);
    ix->nslots = n;
    ix->slots = gw_xcalloc(n, sizeof *ix->slots);
    for (size_t i = 0; i < ix->nterms; i++) {
        size_t k;
        if (ix->terms[i].s == NULL)
            continue;
        for (k = ix->terms[i].hash & mask; ix->slots[k] != 0; k = (k + 1) & mask)
            ;
        ix->slots[k] = (uint32_t)i + 1;
    }
}

static uint32_t term_add(struct gw_toolsearch *ix, const char *s)
{
    uint32_t id, h = (uint32_t)gw_hash_str(s);
    size_t mask = ix->nslots - 1, k;

    if (ix->nfree_terms > 0) {
        id = ix->free_terms[--ix->nfree_terms];
    } else {
        if (ix->nterms == ix->capterms) {
            ix->capterms = ix->capterms ? ix->capterms * 2 : 256;
            ix->terms = gw_xrealloc(ix->terms, ix->capterms * sizeof *ix->terms);
            ix->free_terms = gw_xrealloc(ix->free_terms, ix->capterms * sizeof *ix->free_terms);
        }
        id = (uint32_t)ix->nterms++;
    }
    memset(&ix->terms[id], 0, sizeof *ix->terms);
    ix->terms[id].s = gw_xstrdup(s);
    ix->terms[id].hash = h;
    for (k = h & mask; ix->slots[k] != 0; k = (k + 1) & mask)
        ;
    ix->slots[k] = id + 1;
    if (++ix->liveterms * 2 > ix->nslots) /* at most half full */
        slots_resize(ix, ix->nslots * 2);
    return id;
}

/* A word no document uses any more leaves the dictionary; the slots after
 * it that probed past it move back (no tombstones). */
static void term_drop(struct gw_toolsearch *ix, uint32_t id)
{
    struct gw_ts_term *t = &ix->terms[id];
    size_t mask = ix->nslots - 1, k = t->hash & mask, j;

    while (ix->slots[k] != id + 1)
        k = (k + 1) & mask;
    ix->slots[k] = 0;
    for (j = (k + 1) & mask; ix->slots[j] != 0; j = (j + 1) & mask) {
        size_t home = ix->terms[ix->slots[j] - 1].hash & mask;
        /* stays when its home lies cyclically in (k, j] */
        if (k <= j ? (home > k && home <= j) : (home > k || home <= j))
            continue;
        ix->slots[k] = ix->slots[j];
        ix->slots[j] = 0;
        k = j;
    }
    free(t->s);
    free(t->p);
    memset(t, 0, sizeof *t);
    ix->free_terms[ix->nfree_terms++] = id;
    ix->liveterms--;
}

/* ---- documents ---- */

/* Indexing one tool: the words of each field gathered with their counts. */
struct collect {
    struct gw_toolsearch *ix;
    uint32_t doc;
    enum gw_ts_field f;
    struct gw_ts_posting *list; /* .doc holds the term id here */
    size_t n, cap;
    uint16_t len[NF];
};

static void collect_word(const char *w, void *arg)
{
    struct collect *c = arg;
    long id = gw_ts_term_find(c->ix, w);
    struct gw_ts_term *t;
    struct gw_ts_posting *p;

    if (id < 0 && c->n == GW_TOOLSEARCH_DOC_TERMS_MAX)
        return;
    if (id < 0)
        id = term_add(c->ix, w); /* may move the terms */
    t = &c->ix->terms[id];
    if (t->mark != c->doc + 1) {
        if (c->n == GW_TOOLSEARCH_DOC_TERMS_MAX)
            return;
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 32;
            c->list = gw_xrealloc(c->list, c->cap * sizeof *c->list);
        }
        t->mark = c->doc + 1;
        t->slot = (uint32_t)c->n;
        memset(&c->list[c->n], 0, sizeof *c->list);
        c->list[c->n++].doc = (uint32_t)(t - c->ix->terms);
    }
    p = &c->list[t->slot];
    if (p->tf[c->f] < UINT8_MAX)
        p->tf[c->f]++;
    if (c->len[c->f] < UINT16_MAX)
        c->len[c->f]++;
}

static void collect_text(struct collect *c, enum gw_ts_field f, const char *text, size_t max)
{
    c->f = f;
    if (text != NULL)
        gw_toolsearch_tokens(text, strnlen(text, max), collect_word, c);
}

/* A parameter's string enum values, the first GW_TOOLSEARCH_ENUM_MAX and
 * GW_TOOLSEARCH_PARAM_MAX bytes of them together: what a tool can be
 * asked to do is often there ("closed" for a state, a travel mode, a
 * merge method). Returns how many, with each one's length to index. */
static size_t enum_values(const json_t *param, const char **v, size_t *len)
{
    const json_t *e = json_object_get(param, "enum");
    size_t n = 0, left = GW_TOOLSEARCH_PARAM_MAX;

    for (size_t i = 0; i < json_array_size(e) && n < GW_TOOLSEARCH_ENUM_MAX && left > 0; i++) {
        const char *s = json_string_value(json_array_get(e, i));
        if (s == NULL)
            continue;
        v[n] = s;
        len[n] = strnlen(s, left);
        left -= len[n++];
    }
    return n;
}

/* Parameter names, descriptions and enum values: the top level of the
 * input schema. */
static void collect_params(struct collect *c, const json_t *schema)
{
    const json_t *props = json_object_get(schema, "properties"), *v;
    const char *key;
    size_t n = 0;

    json_object_foreach((json_t *)props, key, v)
    {
        if (n++ == GW_TOOLSEARCH_PARAMS_MAX)
            break;
        collect_text(c, F_PARAM, key, GW_TOOLSEARCH_PARAM_MAX);
        collect_text(c, F_PARAM, json_string_value(json_object_get(v, "description")),
                     GW_TOOLSEARCH_PARAM_MAX);
        const char *ev[GW_TOOLSEARCH_ENUM_MAX];
        size_t elen[GW_TOOLSEARCH_ENUM_MAX];
        c->f = F_PARAM;
        for (size_t i = 0, m = enum_values(v, ev, elen); i < m; i++)
            gw_toolsearch_tokens(ev[i], elen[i], collect_word, c);
    }
}

/* FNV-1a over what a tool's document is made of, as far as it is indexed:
 * a tool whose hash and name are those of a served document is not
 * indexed again. */
static uint64_t fnv(uint64_t h, const char *s, size_t max)
{
    size_t n = s != NULL ? strnlen(s, max) : 0;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    return (h ^ (s != NULL ? 0x1e : 0x1f)) * 0x100000001b3u; /* ends the field */
}

static uint64_t tool_hash(const struct gw_cat_tool *t)
{
    const json_t *props = json_object_get(t->input_schema, "properties"), *v;
    uint64_t h = 0xcbf29ce484222325u;
    const char *key;
    size_t n = 0;

    h = fnv(h, t->name, GW_TOOLSEARCH_TEXT_MAX);
    h = fnv(h, t->original_name, GW_TOOLSEARCH_TEXT_MAX);
    h = fnv(h, t->title, GW_TOOLSEARCH_TEXT_MAX);
    h = fnv(h, t->description, GW_TOOLSEARCH_TEXT_MAX);
    h = fnv(h, t->toolset, GW_TOOLSEARCH_TEXT_MAX);
    json_object_foreach((json_t *)props, key, v)
    {
        if (n++ == GW_TOOLSEARCH_PARAMS_MAX)
            break;
        h = fnv(h, key, GW_TOOLSEARCH_PARAM_MAX);
        h = fnv(h, json_string_value(json_object_get(v, "description")), GW_TOOLSEARCH_PARAM_MAX);
        const char *ev[GW_TOOLSEARCH_ENUM_MAX];
        size_t elen[GW_TOOLSEARCH_ENUM_MAX];
        for (size_t i = 0, m = enum_values(v, ev, elen); i < m; i++)
            h = fnv(h, ev[i], elen[i]);
    }
    return h;
}

static uint32_t doc_alloc(struct gw_toolsearch *ix)
{
    if (ix->nfree > 0)
        return ix->free_docs[--ix->nfree];
    if (ix->ndocs == ix->capdocs) {
        ix->capdocs = ix->capdocs ? ix->capdocs * 2 : 64;
        ix->docs = gw_xrealloc(ix->docs, ix->capdocs * sizeof *ix->docs);
        ix->free_docs = gw_xrealloc(ix->free_docs, ix->capdocs * sizeof *ix->free_docs);
    }
    return (uint32_t)ix->ndocs++;
}

/* Indexes one tool into `s`'s build; not served until the build is
 * published. */
static void doc_add(struct gw_toolsearch *ix, struct gw_ts_seg *s, const struct gw_cat_tool *t,
                    uint64_t hash)
{
    uint32_t d = doc_alloc(ix);
    struct gw_ts_doc *doc;
    struct collect c = {.ix = ix, .doc = d};

    collect_text(&c, F_NAME, t->name, GW_TOOLSEARCH_TEXT_MAX);
    if (strcmp(t->original_name, t->name) != 0)
        collect_text(&c, F_ORIG, t->original_name, GW_TOOLSEARCH_TEXT_MAX);
    if (t->title != NULL && t->title[0] != '\0')
        collect_text(&c, F_TITLE, t->title, GW_TOOLSEARCH_TEXT_MAX);
    else if (t->description != NULL) {
        size_t n;
        const char *first = gw_ts_summary(t->description, &n);
        collect_text(&c, F_TITLE, first, n);
    }
    collect_text(&c, F_DESC, t->description, GW_TOOLSEARCH_TEXT_MAX);
    collect_params(&c, t->input_schema);
    collect_text(&c, F_SET, t->toolset, GW_TOOLSEARCH_TEXT_MAX);
    doc = &ix->docs[d];
    memset(doc, 0, sizeof *doc);
    doc->name = gw_xstrdup(t->name);
    doc->key = gw_xstrdup(t->name);
    for (char *p = doc->key; *p != '\0'; p++)
        *p = *p == '-' ? '_' : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    doc->verbs = (uint8_t)gw_ts_name_verbs(t->name, s->name);
    doc->seg = s;
    doc->hash = hash;
    doc->pos = (uint32_t)s->nb;
    memcpy(doc->len, c.len, sizeof doc->len);
    doc->ncover = c.len[F_NAME];
    doc->terms = gw_xcalloc(c.n ? c.n : 1, sizeof *doc->terms);
    doc->nterms = (uint16_t)c.n;
    for (size_t i = 0; i < c.n; i++) {
        struct gw_ts_term *t2 = &ix->terms[c.list[i].doc];
        t2->mark = 0;
        if (t2->n == t2->cap) {
            t2->cap = t2->cap ? t2->cap * 2 : 2;
            t2->p = gw_xrealloc(t2->p, t2->cap * sizeof *t2->p);
        }
        doc->terms[i] = (struct gw_ts_dterm){c.list[i].doc, t2->n};
        if (c.list[i].tf[F_SET] > 0) /* a prefix: says whose tool, not what it does */
            doc->ncover -= c.list[i].tf[F_NAME];
        t2->p[t2->n] = c.list[i];
        t2->p[t2->n].doc = d;
        t2->p[t2->n++].slot = (uint16_t)i;
    }
    free(c.list);
    s->bdocs[s->nb++] = d;
    ix->indexed++;
}

/* Removes a document no longer served: each of its postings is swapped
 * with its term's last, whose document learns where it went. */
static void doc_clear(struct gw_toolsearch *ix, uint32_t d)
{
    struct gw_ts_doc *doc = &ix->docs[d];

    for (uint32_t i = 0; i < doc->nterms; i++) {
        uint32_t id = doc->terms[i].term, at = doc->terms[i].at;
        struct gw_ts_term *t = &ix->terms[id];
        if (--t->n == 0) {
            term_drop(ix, id);
            continue;
        }
        if (at != t->n) {
            t->p[at] = t->p[t->n];
            ix->docs[t->p[at].doc].terms[t->p[at].slot].at = at;
        }
        if (t->cap > 8 && t->n * 4 < t->cap) { /* a common word that became rare */
            t->cap /= 2;
            t->p = gw_xrealloc(t->p, t->cap * sizeof *t->p);
        }
    }
    free(doc->terms);
    free(doc->name);
    free(doc->key);
    memset(doc, 0, sizeof *doc);
    ix->free_docs[ix->nfree++] = d;
}

/* ---- segments ---- */

static void garbage_push(struct gw_toolsearch *ix, uint32_t d)
{
    if (ix->ngarbage == ix->capgarbage) {
        ix->capgarbage = ix->capgarbage ? ix->capgarbage * 2 : 64;
        ix->garbage = gw_xrealloc(ix->garbage, ix->capgarbage * sizeof *ix->garbage);
    }
    ix->garbage[ix->ngarbage++] = d;
}

/* The documents `s` serves stop being served, but those its build took
 * over unchanged. */
static void seg_retire(struct gw_toolsearch *ix, struct gw_ts_seg *s)
{
    for (size_t i = 0; i < s->ndocs; i++) {
        struct gw_ts_doc *d = &ix->docs[s->docs[i]];
        if (d->reused)
            continue;
        for (int f = 0; f < NF; f++)
            ix->lensum[f] -= d->len[f];
        d->live = false;
        ix->live--;
        garbage_push(ix, s->docs[i]);
    }
    free(s->docs);
    s->docs = NULL;
    s->ndocs = 0;
}

static void build_abort(struct gw_toolsearch *ix, struct gw_ts_seg *s)
{
    if (!s->building)
        return;
    for (size_t i = 0; i < s->nb; i++) {
        if (ix->docs[s->bdocs[i]].reused)
            ix->docs[s->bdocs[i]].reused = false;
        else
            garbage_push(ix, s->bdocs[i]);
    }
    free(s->bdocs);
    free(s->omap);
    s->omap = NULL;
    s->bdocs = NULL;
    s->nb = 0;
    s->building = false;
    ix->nbuilding--;
}

static void build_start(struct gw_toolsearch *ix, struct gw_ts_seg *s,
                        const struct gw_cat_toolset *ts)
{
    build_abort(ix, s);
    s->building = true;
    s->bgen = gw_cat_toolset_gen(ts);
    s->btotal = gw_cat_toolset_ntools(ts);
    s->bdocs = gw_xcalloc(s->btotal ? s->btotal : 1, sizeof *s->bdocs);
    ix->nbuilding++;
    /* the served documents by name, for the tools that did not change */
    for (s->omask = 1; s->omask < 2 * s->ndocs; s->omask *= 2)
        ;
    s->omap = gw_xcalloc(s->omask--, sizeof *s->omap);
    for (size_t i = 0; i < s->ndocs; i++) {
        size_t k = gw_hash_str(ix->docs[s->docs[i]].name) & s->omask;
        while (s->omap[k] != 0)
            k = (k + 1) & s->omask;
        s->omap[k] = s->docs[i] + 1;
    }
}

/* The served document of `s` named `name`, or -1. */
static long old_doc(const struct gw_toolsearch *ix, const struct gw_ts_seg *s, const char *name)
{
    for (size_t k = gw_hash_str(name) & s->omask; s->omap[k] != 0; k = (k + 1) & s->omask)
        if (strcmp(ix->docs[s->omap[k] - 1].name, name) == 0)
            return (long)s->omap[k] - 1;
    return -1;
}

/* The next tool of `s`'s build: the served document when the tool's
 * indexed text did not change, else indexed anew. */
static void build_next(struct gw_toolsearch *ix, struct gw_ts_seg *s, const struct gw_cat_tool *t)
{
    uint64_t h = tool_hash(t);
    long d = old_doc(ix, s, t->name);

    if (d >= 0 && ix->docs[d].hash == h && !ix->docs[d].reused) {
        ix->docs[d].reused = true;
        ix->docs[d].npos = (uint32_t)s->nb;
        s->bdocs[s->nb++] = (uint32_t)d;
    } else {
        doc_add(ix, s, t, h);
    }
}

static void build_publish(struct gw_toolsearch *ix, struct gw_ts_seg *s)
{
    seg_retire(ix, s);
    s->docs = s->bdocs;
    s->ndocs = s->nb;
    s->bdocs = NULL;
    s->nb = 0;
    free(s->omap);
    s->omap = NULL;
    for (size_t i = 0; i < s->ndocs; i++) {
        struct gw_ts_doc *d = &ix->docs[s->docs[i]];
        if (d->reused) { /* served all along */
            d->reused = false;
            d->pos = d->npos;
            continue;
        }
        for (int f = 0; f < NF; f++)
            ix->lensum[f] += d->len[f];
        d->live = true;
        ix->live++;
    }
    s->gen = s->bgen;
    s->published = true;
    s->building = false;
    ix->nbuilding--;
    ix->changes++;
}

/* Sets the work a new catalog version asks for: a build for each toolset
 * whose tools changed (a build under way for an older state starts
 * again), and the segments of toolsets that left retired. */
static void plan(struct gw_toolsearch *ix, const struct gw_catalog *cat)
{
    const struct gw_cat_toolset *ts;
    size_t kept = 0;

    for (size_t i = 0; i < ix->nsegs; i++)
        ix->segs[i]->seen = false;
    for (size_t i = 0; (ts = gw_catalog_toolset_at(cat, i)) != NULL; i++) {
        struct gw_ts_seg *s = NULL;
        uint64_t gen = gw_cat_toolset_gen(ts);
        for (size_t j = 0; j < ix->nsegs && s == NULL; j++)
            if (strcmp(ix->segs[j]->name, gw_cat_toolset_name(ts)) == 0)
                s = ix->segs[j];
        if (s == NULL) {
            ix->segs = gw_xrealloc(ix->segs, (ix->nsegs + 1) * sizeof *ix->segs);
            s = ix->segs[ix->nsegs++] = gw_xcalloc(1, sizeof *s);
            s->name = gw_xstrdup(gw_cat_toolset_name(ts));
        }
        if (s->published && s->gen == gen)
            build_abort(ix, s);
        else if (!s->building || s->bgen != gen)
            build_start(ix, s, ts);
        s->seen = true;
        s->rank = i;
    }
    for (size_t i = 0; i < ix->nsegs; i++) {
        struct gw_ts_seg *s = ix->segs[i];
        if (s->seen) {
            ix->segs[kept++] = s;
            continue;
        }
        build_abort(ix, s);
        if (s->published)
            ix->changes++;
        seg_retire(ix, s);
        seg_free(s);
    }
    ix->nsegs = kept;
    ix->version = gw_catalog_version(cat);
}

/* ---- giving memory back ---- */

/* The terms moved down over the free ids: each posting tells its document
 * the new id. */
static void terms_compact(struct gw_toolsearch *ix)
{
    size_t n = 0, slots = SLOTS_MIN;

    for (size_t i = 0; i < ix->nterms; i++) {
        struct gw_ts_term *t = &ix->terms[i];
        if (t->s == NULL)
            continue;
        for (uint32_t j = 0; j < t->n; j++)
            ix->docs[t->p[j].doc].terms[t->p[j].slot].term = (uint32_t)n;
        ix->terms[n++] = *t;
    }
    ix->nterms = n;
    ix->nfree_terms = 0;
    ix->capterms = n > 128 ? n * 2 : 256;
    ix->terms = gw_xrealloc(ix->terms, ix->capterms * sizeof *ix->terms);
    ix->free_terms = gw_xrealloc(ix->free_terms, ix->capterms * sizeof *ix->free_terms);
    while (slots < n * 2)
        slots *= 2;
    slots_resize(ix, slots);
}

/* The documents moved down over the free slots: their postings and
 * segments learn the new ids; the query scratch is sized again. */
static void docs_compact(struct gw_toolsearch *ix)
{
    uint32_t *map = gw_xcalloc(ix->ndocs ? ix->ndocs : 1, sizeof *map);
    size_t n = 0;

    for (size_t i = 0; i < ix->ndocs; i++) {
        struct gw_ts_doc *d = &ix->docs[i];
        if (d->name == NULL)
            continue;
        for (uint32_t j = 0; j < d->nterms; j++)
            ix->terms[d->terms[j].term].p[d->terms[j].at].doc = (uint32_t)n;
        map[i] = (uint32_t)n;
        ix->docs[n++] = *d;
    }
    for (size_t i = 0; i < ix->nsegs; i++)
        for (size_t j = 0; j < ix->segs[i]->ndocs; j++)
            ix->segs[i]->docs[j] = map[ix->segs[i]->docs[j]];
    free(map);
    ix->ndocs = n;
    ix->nfree = 0;
    ix->capdocs = n > 32 ? n * 2 : 64;
    ix->docs = gw_xrealloc(ix->docs, ix->capdocs * sizeof *ix->docs);
    ix->free_docs = gw_xrealloc(ix->free_docs, ix->capdocs * sizeof *ix->free_docs);
    gw_ts_scratch_free(ix);
}

/* Once the index is current: arrays sized for a catalog four times the
 * current one are cut down, so memory follows the catalog (the cost is
 * linear in what is left, a quarter of what was removed). */
static void shrink(struct gw_toolsearch *ix)
{
    if (ix->capgarbage > 0) {
        free(ix->garbage);
        ix->garbage = NULL;
        ix->capgarbage = 0;
    }
    if (ix->capterms > 256 && ix->liveterms * 4 < ix->capterms)
        terms_compact(ix);
    else if (ix->nslots > SLOTS_MIN && ix->liveterms * 8 < ix->nslots)
        slots_resize(ix, ix->nslots / 2);
    if (ix->capdocs > 64 && (ix->ndocs - ix->nfree) * 4 < ix->capdocs)
        docs_compact(ix);
}

static uint64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

bool gw_toolsearch_step(struct gw_toolsearch *ix, const struct gw_catalog *cat, uint64_t budget_us)
{
    uint64_t deadline;

    if (ix->version != gw_catalog_version(cat))
        plan(ix, cat);
    if (ix->ngarbage == 0 && ix->nbuilding == 0)
        return true;
    deadline = budget_us == UINT64_MAX ? UINT64_MAX : now_us() + budget_us;
    /* what left first: its memory serves the builds */
    while (ix->ngarbage > 0) {
        doc_clear(ix, ix->garbage[--ix->ngarbage]);
        if ((ix->ngarbage & 15) == 0 && now_us() >= deadline)
            return false;
    }
    for (size_t i = 0; i < ix->nsegs; i++) {
        struct gw_ts_seg *s = ix->segs[i];
        const struct gw_cat_toolset *ts;
        if (!s->building)
            continue;
        ts = gw_catalog_toolset(cat, s->name); /* planned for this version */
        while (s->nb < s->btotal) {
            build_next(ix, s, gw_cat_toolset_tool(ts, s->nb));
            if (now_us() >= deadline && s->nb < s->btotal)
                return false;
        }
        build_publish(ix, s);
        if (now_us() >= deadline)
            return ix->ngarbage == 0 && ix->nbuilding == 0;
    }
    if (ix->ngarbage > 0)
        return false;
    shrink(ix);
    return true;
}

size_t gw_toolsearch_unindexed(const struct gw_toolsearch *ix, const char *toolsets_csv,
                               gw_toolsearch_visible visible, void *arg, size_t *tools)
{
    bool all = toolsets_csv == NULL || toolsets_csv[strspn(toolsets_csv, ",")] == '\0';
    size_t n = 0, m = 0;

    for (size_t i = 0; i < ix->nsegs; i++) {
        const struct gw_ts_seg *s = ix->segs[i];
        if (!s->published && (all || gw_csv_has(toolsets_csv, s->name)) &&
            (visible == NULL || visible(s->name, arg))) {
            n++;
            m += s->btotal;
        }
    }
    if (tools != NULL)
        *tools = m;
    return n;
}

json_t *gw_toolsearch_indexing_json(const struct gw_toolsearch *ix, const char *toolsets_csv,
                                    gw_toolsearch_visible visible, void *arg)
{
    size_t tools, n = gw_toolsearch_unindexed(ix, toolsets_csv, visible, arg, &tools);

    return n == 0 ? NULL
                  : json_pack("{s:I, s:I}", "toolsets", (json_int_t)n, "tools", (json_int_t)tools);
}

/* One step, and more while a toolset the query searches was never
 * indexed: it has no previous version to serve, and a first search that
 * silently missed it would be wrong. Each step stays within the slice, all
 * of them within first_us, the most issue 34 lets a build hold the loop. */
void gw_ts_query_step(struct gw_toolsearch *ix, const struct gw_catalog *cat,
                      const char *toolsets_csv)
{
    uint64_t start = now_us(), budget = ix->slice_us, spent;

    while (!gw_toolsearch_step(ix, cat, budget) &&
           gw_toolsearch_unindexed(ix, toolsets_csv, NULL, NULL, NULL) > 0 &&
           (spent = now_us() - start) < ix->first_us)
        budget = ix->first_us - spent < ix->slice_us ? ix->first_us - spent : ix->slice_us;
}

size_t gw_toolsearch_indexed(const struct gw_toolsearch *ix)
{
    return ix->indexed;
}

size_t gw_toolsearch_sync(struct gw_toolsearch *ix, const struct gw_catalog *cat)
{
    size_t before = ix->changes;

    while (!gw_toolsearch_step(ix, cat, UINT64_MAX))
        ;
    return ix->changes - before;
}

size_t gw_toolsearch_memory(const struct gw_toolsearch *ix)
{
    size_t m = sizeof *ix + ix->capterms * (sizeof *ix->terms + sizeof *ix->free_terms) +
               ix->nslots * sizeof *ix->slots +
               ix->capdocs * (sizeof *ix->docs + sizeof *ix->free_docs) +
               ix->capgarbage * sizeof *ix->garbage +
               ix->nsegs * (sizeof(struct gw_ts_seg) + sizeof *ix->segs) +
               ix->scratch_cap * (4 * sizeof(double) + 4 * sizeof(uint32_t));

    for (size_t i = 0; i < ix->nterms; i++)
        if (ix->terms[i].s != NULL)
            m += strlen(ix->terms[i].s) + 1 + ix->terms[i].cap * sizeof(struct gw_ts_posting);
    for (size_t i = 0; i < ix->ndocs; i++) {
        const struct gw_ts_doc *d = &ix->docs[i];
        if (d->name != NULL)
            m += 2 * (strlen(d->name) + 1) + d->nterms * sizeof *d->terms;
    }
    for (size_t i = 0; i < ix->nsegs; i++)
        m += strlen(ix->segs[i]->name) + 1 +
             (ix->segs[i]->ndocs + ix->segs[i]->btotal) * sizeof(uint32_t) +
             (ix->segs[i]->omap != NULL ? (ix->segs[i]->omask + 1) * sizeof(uint32_t) : 0);
    return m;
}
