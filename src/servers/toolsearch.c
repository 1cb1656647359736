/* Tool search, the index: a dictionary of stemmed words, each with the
 * postings (document, term frequency per field) of the tools that use it,
 * and one segment per catalog toolset, so that a toolset is re-indexed on
 * its own when the catalog changes it (toolsearch.h). */
#include "gw/toolsearch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

enum field { F_NAME, F_ORIG, F_TITLE, F_DESC, F_PARAM, F_SET, NF };

/* BM25F: a word in the name counts three times one in the description;
 * short fields (names) are barely length-normalised, prose is. */
static const double field_w[NF] = {3.0, 1.5, 2.0, 1.0, 0.5, 1.5};
static const double field_b[NF] = {0.3, 0.3, 0.3, 0.75, 0.75, 0.2};
#define K1 1.2
/* Scores a name match adds: an exact match ranks before a prefix match,
 * which ranks before any word match (BM25F scores stay far below). */
#define EXACT_BONUS  2000.0
#define PREFIX_BONUS 1000.0
#define PREFIX_MIN   3
/* Name coverage: a tool gets up to this much more for the share of its
 * final name's words the query uses itself (not through a synonym), so
 * that "take a screenshot" prefers browser_take_screenshot to a tool that
 * only mentions screenshots. Chosen on half of the benchmark's tasks and
 * checked on the other half (docs/performance.md). */
#define NAME_COVER 2.0 /* shorter queries are words, not name prefixes */

struct posting {
    uint32_t doc;
    float wtf; /* BM25F's weighted, length-normalised term frequency (norms) */
    uint8_t tf[NF];
};

struct term {
    char *s;
    struct posting *p;
    uint32_t n, cap;
    uint32_t mark; /* doc + 1 while that doc is being indexed */
    uint32_t slot; /* its place in the doc's scratch list then */
};

struct seg;

struct doc {
    char *name; /* final name; NULL: a free slot */
    char *key;  /* the name lower-cased, '-' as '_', for name matches */
    struct seg *seg;
    uint32_t pos; /* place in the toolset's listing */
    uint16_t len[NF];
    uint32_t *terms;
    uint32_t nterms;
};

struct seg {
    char *name;
    uint64_t gen;
    uint32_t *docs;
    size_t ndocs;
    size_t rank; /* the toolset's place in the catalog */
    bool seen, allowed;
};

struct gw_toolsearch {
    uint64_t version; /* of the catalog last synced; 0: never */
    struct term *terms;
    size_t nterms, capterms;
    uint32_t *slots; /* open addressing: term id + 1, 0 empty */
    size_t nslots;
    struct doc *docs;
    size_t ndocs, capdocs;
    uint32_t *free_docs;
    size_t nfree;
    struct seg **segs;
    size_t nsegs;
    double lensum[NF];
    size_t live;
    /* query scratch, one entry per doc slot */
    double *acc, *gacc;
    uint32_t *astamp, *gstamp, *gtouched;
    uint32_t *nstamp, *nhits; /* the group whose own word is in the name; names words used */
    uint32_t stamp;
    size_t scratch_cap;
};

struct gw_toolsearch *gw_toolsearch_new(void)
{
    struct gw_toolsearch *ix = gw_xcalloc(1, sizeof *ix);

    ix->nslots = 1024;
    ix->slots = gw_xcalloc(ix->nslots, sizeof *ix->slots);
    return ix;
}

static void doc_clear(struct gw_toolsearch *ix, uint32_t d);

static void seg_free(struct gw_toolsearch *ix, struct seg *s)
{
    for (size_t i = 0; i < s->ndocs; i++)
        doc_clear(ix, s->docs[i]);
    free(s->docs);
    free(s->name);
    free(s);
}

void gw_toolsearch_free(struct gw_toolsearch *ix)
{
    if (ix == NULL)
        return;
    for (size_t i = 0; i < ix->nsegs; i++)
        seg_free(ix, ix->segs[i]);
    free(ix->segs);
    for (size_t i = 0; i < ix->nterms; i++) {
        free(ix->terms[i].s);
        free(ix->terms[i].p);
    }
    free(ix->terms);
    free(ix->slots);
    free(ix->docs);
    free(ix->free_docs);
    free(ix->acc);
    free(ix->gacc);
    free(ix->astamp);
    free(ix->gstamp);
    free(ix->gtouched);
    free(ix->nstamp);
    free(ix->nhits);
    free(ix);
}

/* The term id of `s`, or -1; with `add`, created when missing. */
static long term_id(struct gw_toolsearch *ix, const char *s, bool add)
{
    size_t mask = ix->nslots - 1, k = gw_hash_str(s) & mask;

    for (; ix->slots[k] != 0; k = (k + 1) & mask) {
        if (strcmp(ix->terms[ix->slots[k] - 1].s, s) == 0)
            return (long)ix->slots[k] - 1;
    }
    if (!add)
        return -1;
    if (ix->nterms == ix->capterms) {
        ix->capterms = ix->capterms ? ix->capterms * 2 : 256;
        ix->terms = gw_xrealloc(ix->terms, ix->capterms * sizeof *ix->terms);
    }
    memset(&ix->terms[ix->nterms], 0, sizeof *ix->terms);
    ix->terms[ix->nterms].s = gw_xstrdup(s);
    ix->slots[k] = (uint32_t)++ix->nterms;
    if (ix->nterms * 2 > ix->nslots) { /* keep the table at most half full */
        free(ix->slots);
        ix->nslots *= 2;
        ix->slots = gw_xcalloc(ix->nslots, sizeof *ix->slots);
        mask = ix->nslots - 1;
        for (size_t i = 0; i < ix->nterms; i++) {
            for (k = gw_hash_str(ix->terms[i].s) & mask; ix->slots[k] != 0; k = (k + 1) & mask)
                ;
            ix->slots[k] = (uint32_t)i + 1;
        }
    }
    return (long)ix->nterms - 1;
}

/* Indexing one tool: the words of each field gathered with their counts. */
struct collect {
    struct gw_toolsearch *ix;
    uint32_t doc;
    enum field f;
    struct posting *list; /* .doc holds the term id here */
    size_t n, cap;
    uint16_t len[NF];
};

static void collect_word(const char *w, void *arg)
{
    struct collect *c = arg;
    long id = term_id(c->ix, w, true); /* may move the terms */
    struct term *t = &c->ix->terms[id];
    struct posting *p;

    if (t->mark != c->doc + 1) {
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

static void collect_text(struct collect *c, enum field f, const char *text)
{
    c->f = f;
    if (text != NULL)
        gw_toolsearch_tokens(text, strlen(text), collect_word, c);
}

/* Parameter names and descriptions: the top level of the input schema. */
static void collect_params(struct collect *c, const json_t *schema)
{
    const json_t *props = json_object_get(schema, "properties"), *v;
    const char *key;

    json_object_foreach((json_t *)props, key, v)
    {
        collect_text(c, F_PARAM, key);
        collect_text(c, F_PARAM, json_string_value(json_object_get(v, "description")));
    }
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

static void doc_add(struct gw_toolsearch *ix, struct seg *s, uint32_t pos,
                    const struct gw_cat_tool *t)
{
    uint32_t d = doc_alloc(ix);
    struct doc *doc = &ix->docs[d];
    struct collect c = {.ix = ix, .doc = d};

    collect_text(&c, F_NAME, t->name);
    if (strcmp(t->original_name, t->name) != 0)
        collect_text(&c, F_ORIG, t->original_name);
    collect_text(&c, F_TITLE, t->title);
    collect_text(&c, F_DESC, t->description);
    collect_params(&c, t->input_schema);
    collect_text(&c, F_SET, t->toolset);
    memset(doc, 0, sizeof *doc);
    doc->name = gw_xstrdup(t->name);
    doc->key = gw_xstrdup(t->name);
    for (char *p = doc->key; *p != '\0'; p++)
        *p = *p == '-' ? '_' : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    doc->seg = s;
    doc->pos = pos;
    memcpy(doc->len, c.len, sizeof doc->len);
    doc->terms = gw_xcalloc(c.n ? c.n : 1, sizeof *doc->terms);
    doc->nterms = (uint32_t)c.n;
    for (size_t i = 0; i < c.n; i++) {
        struct term *t2 = &ix->terms[c.list[i].doc];
        doc->terms[i] = c.list[i].doc;
        t2->mark = 0;
        if (t2->n == t2->cap) {
            t2->cap = t2->cap ? t2->cap * 2 : 4;
            t2->p = gw_xrealloc(t2->p, t2->cap * sizeof *t2->p);
        }
        t2->p[t2->n] = c.list[i];
        t2->p[t2->n++].doc = d;
    }
    free(c.list);
    for (int f = 0; f < NF; f++)
        ix->lensum[f] += doc->len[f];
    ix->live++;
    s->docs[s->ndocs++] = d;
}

static void doc_clear(struct gw_toolsearch *ix, uint32_t d)
{
    struct doc *doc = &ix->docs[d];

    for (uint32_t i = 0; i < doc->nterms; i++) {
        struct term *t = &ix->terms[doc->terms[i]];
        for (uint32_t j = 0; j < t->n; j++) {
            if (t->p[j].doc == d) {
                t->p[j] = t->p[--t->n];
                break;
            }
        }
    }
    for (int f = 0; f < NF; f++)
        ix->lensum[f] -= doc->len[f];
    ix->live--;
    free(doc->terms);
    free(doc->name);
    free(doc->key);
    memset(doc, 0, sizeof *doc);
    ix->free_docs[ix->nfree++] = d;
}

static void seg_index(struct gw_toolsearch *ix, struct seg *s, const struct gw_cat_toolset *ts)
{
    size_t n = gw_cat_toolset_ntools(ts);

    for (size_t i = 0; i < s->ndocs; i++)
        doc_clear(ix, s->docs[i]);
    free(s->docs);
    s->docs = gw_xcalloc(n ? n : 1, sizeof *s->docs);
    s->ndocs = 0;
    for (size_t i = 0; i < n; i++)
        doc_add(ix, s, (uint32_t)i, gw_cat_toolset_tool(ts, i));
    s->gen = gw_cat_toolset_gen(ts);
}

/* BM25F's weighted term frequency of every posting: the average field
 * lengths moved, so it is computed here, once per sync that changed
 * something, rather than at every posting a query reads. */
static void norms(struct gw_toolsearch *ix)
{
    double avg[NF];

    for (int f = 0; f < NF; f++)
        avg[f] = ix->live && ix->lensum[f] > 0 ? ix->lensum[f] / (double)ix->live : 1.0;
    for (size_t i = 0; i < ix->nterms; i++) {
        const struct term *t = &ix->terms[i];
        for (uint32_t j = 0; j < t->n; j++) {
            struct posting *p = &t->p[j];
            const struct doc *d = &ix->docs[p->doc];
            double tf = 0;
            for (int f = 0; f < NF; f++) {
                if (p->tf[f] != 0)
                    tf += field_w[f] * p->tf[f] /
                          (1.0 - field_b[f] + field_b[f] * d->len[f] / avg[f]);
            }
            p->wtf = (float)tf;
        }
    }
}

size_t gw_toolsearch_sync(struct gw_toolsearch *ix, const struct gw_catalog *cat)
{
    const struct gw_cat_toolset *ts;
    size_t changed = 0, kept = 0;

    if (ix->version == gw_catalog_version(cat))
        return 0;
    for (size_t i = 0; i < ix->nsegs; i++)
        ix->segs[i]->seen = false;
    for (size_t i = 0; (ts = gw_catalog_toolset_at(cat, i)) != NULL; i++) {
        struct seg *s = NULL;
        for (size_t j = 0; j < ix->nsegs && s == NULL; j++)
            if (strcmp(ix->segs[j]->name, gw_cat_toolset_name(ts)) == 0)
                s = ix->segs[j];
        if (s == NULL) {
            ix->segs = gw_xrealloc(ix->segs, (ix->nsegs + 1) * sizeof *ix->segs);
            s = ix->segs[ix->nsegs++] = gw_xcalloc(1, sizeof *s);
            s->name = gw_xstrdup(gw_cat_toolset_name(ts));
        }
        if (s->docs == NULL || s->gen != gw_cat_toolset_gen(ts)) {
            seg_index(ix, s, ts);
            changed++;
        }
        s->seen = true;
        s->rank = i;
    }
    for (size_t i = 0; i < ix->nsegs; i++) {
        if (ix->segs[i]->seen) {
            ix->segs[kept++] = ix->segs[i];
        } else {
            seg_free(ix, ix->segs[i]);
            changed++;
        }
    }
    ix->nsegs = kept;
    ix->version = gw_catalog_version(cat);
    if (changed > 0)
        norms(ix);
    return changed;
}

size_t gw_toolsearch_memory(const struct gw_toolsearch *ix)
{
    size_t m = sizeof *ix + ix->capterms * sizeof *ix->terms + ix->nslots * sizeof *ix->slots +
               ix->capdocs * (sizeof *ix->docs + sizeof *ix->free_docs) +
               ix->nsegs * (sizeof(struct seg) + sizeof *ix->segs) +
               ix->scratch_cap * (2 * sizeof(double) + 5 * sizeof(uint32_t));

    for (size_t i = 0; i < ix->nterms; i++)
        m += strlen(ix->terms[i].s) + 1 + ix->terms[i].cap * sizeof(struct posting);
    for (size_t i = 0; i < ix->ndocs; i++) {
        const struct doc *d = &ix->docs[i];
        if (d->name != NULL)
            m += 2 * (strlen(d->name) + 1) + d->nterms * sizeof *d->terms;
    }
    for (size_t i = 0; i < ix->nsegs; i++)
        m += strlen(ix->segs[i]->name) + 1 + ix->segs[i]->ndocs * sizeof(uint32_t);
    return m;
}

static bool utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t l =
            (unsigned char)s[i] < 0x80 ? 1 : gw_utf8_seq_len((const unsigned char *)s + i, n - i);
        if (l == 0)
            return false;
        i += l;
    }
    return true;
}

const char *gw_toolsearch_query_problem(const char *query)
{
    size_t n = strlen(query);

    if (n > GW_TOOLSEARCH_QUERY_MAX)
        return "the query is longer than 512 bytes";
    if (query[strspn(query, " \t\r\n")] == '\0')
        return "the query must hold at least one word";
    if (!utf8_valid(query, n))
        return "the query must be UTF-8 text";
    return NULL;
}

/* A query word and what it also matches. */
struct qword {
    char w[GW_TOOLSEARCH_TOKEN_MAX];
};

struct qwords {
    struct qword v[GW_TOOLSEARCH_TERMS_MAX];
    size_t n;
};

static void query_word(const char *w, void *arg)
{
    struct qwords *q = arg;

    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->v[i].w, w) == 0)
            return;
    if (q->n < GW_TOOLSEARCH_TERMS_MAX)
        snprintf(q->v[q->n++].w, sizeof q->v[0].w, "%s", w);
}

static void scratch_fit(struct gw_toolsearch *ix)
{
    if (ix->scratch_cap >= ix->ndocs)
        return;
    ix->scratch_cap = ix->capdocs;
    ix->acc = gw_xrealloc(ix->acc, ix->scratch_cap * sizeof *ix->acc);
    ix->gacc = gw_xrealloc(ix->gacc, ix->scratch_cap * sizeof *ix->gacc);
    ix->astamp = gw_xrealloc(ix->astamp, ix->scratch_cap * sizeof *ix->astamp);
    ix->gstamp = gw_xrealloc(ix->gstamp, ix->scratch_cap * sizeof *ix->gstamp);
    ix->gtouched = gw_xrealloc(ix->gtouched, ix->scratch_cap * sizeof *ix->gtouched);
    ix->nstamp = gw_xrealloc(ix->nstamp, ix->scratch_cap * sizeof *ix->nstamp);
    ix->nhits = gw_xrealloc(ix->nhits, ix->scratch_cap * sizeof *ix->nhits);
    memset(ix->nstamp, 0, ix->scratch_cap * sizeof *ix->nstamp);
    memset(ix->astamp, 0, ix->scratch_cap * sizeof *ix->astamp);
    memset(ix->gstamp, 0, ix->scratch_cap * sizeof *ix->gstamp);
}

static uint32_t next_stamp(struct gw_toolsearch *ix)
{
    if (++ix->stamp == 0) { /* wrapped: forget every old stamp */
        memset(ix->astamp, 0, ix->scratch_cap * sizeof *ix->astamp);
        memset(ix->gstamp, 0, ix->scratch_cap * sizeof *ix->gstamp);
        memset(ix->nstamp, 0, ix->scratch_cap * sizeof *ix->nstamp);
        ix->stamp = 1;
    }
    return ix->stamp;
}

/* Adds one term's BM25F contribution, times `w`, to the group's scores:
 * a document keeps the best of the group's terms, so a tool that uses two
 * synonyms of one query word is not counted twice. For the query's `own`
 * word (not a synonym), the tools whose final name holds it are noted. */
static size_t score_term(struct gw_toolsearch *ix, const struct term *t, double w, bool own,
                         uint32_t gs, size_t ng, bool all)
{
    double idf = gw_ln(1.0 + ((double)ix->live - t->n + 0.5) / (t->n + 0.5));

    for (uint32_t i = 0; i < t->n; i++) {
        const struct posting *p = &t->p[i];
        double s;
        if (!all && !ix->docs[p->doc].seg->allowed)
            continue;
        s = w * idf * p->wtf / (K1 + p->wtf);
        if (own && p->tf[F_NAME] > 0)
            ix->nstamp[p->doc] = gs;
        if (ix->gstamp[p->doc] != gs) {
            ix->gstamp[p->doc] = gs;
            ix->gacc[p->doc] = s;
            ix->gtouched[ng++] = p->doc;
        } else if (s > ix->gacc[p->doc]) {
            ix->gacc[p->doc] = s;
        }
    }
    return ng;
}

/* Whether the tool's name is the query (2), starts with it (1) or neither:
 * the query as a name, lower-cased, blanks and '-' as '_'. */
static int name_match(const char *key, const char *qname, size_t qlen)
{
    if (qlen < PREFIX_MIN || strncmp(key, qname, qlen) != 0)
        return strcmp(key, qname) == 0 ? 2 : 0;
    return key[qlen] == '\0' ? 2 : 1;
}

static void query_name(const char *query, char *out, size_t cap)
{
    size_t n = 0;

    query += strspn(query, " \t");
    for (; *query != '\0' && n + 1 < cap; query++) {
        char c = *query;
        out[n++] = c == ' ' || c == '-' || c == '\t' ? '_' : (c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    while (n > 0 && out[n - 1] == '_')
        n--;
    out[n] = '\0';
}

struct cand {
    uint32_t doc;
    double score;
};

/* Whether candidate x ranks before y: score, then catalog order. */
static bool before(const struct gw_toolsearch *ix, const struct cand *x, const struct cand *y)
{
    const struct doc *dx = &ix->docs[x->doc], *dy = &ix->docs[y->doc];

    if (x->score != y->score)
        return x->score > y->score;
    if (dx->seg->rank != dy->seg->rank)
        return dx->seg->rank < dy->seg->rank;
    return dx->pos < dy->pos;
}

/* Keeps the best k candidates in `top`, sorted (k is small: an insertion
 * costs less than sorting every candidate). */
static size_t top_add(const struct gw_toolsearch *ix, struct cand *top, size_t n, size_t k,
                      struct cand c)
{
    size_t i;

    if (n == k && !before(ix, &c, &top[k - 1]))
        return n;
    i = n < k ? n++ : k - 1;
    for (; i > 0 && before(ix, &c, &top[i - 1]); i--)
        top[i] = top[i - 1];
    top[i] = c;
    return n;
}

size_t gw_toolsearch_query(struct gw_toolsearch *ix, const struct gw_catalog *cat,
                           const char *query, const char *toolsets_csv, unsigned flags,
                           struct gw_toolsearch_hit *out, size_t k)
{
    bool all = toolsets_csv == NULL || toolsets_csv[strspn(toolsets_csv, ",")] == '\0';
    char qname[GW_TOOLSEARCH_QUERY_MAX + 1];
    struct qwords q = {0};
    uint32_t as;
    size_t ncand = 0, nout = 0, qlen;
    struct cand *cands;

    gw_toolsearch_sync(ix, cat);
    if (k == 0)
        return 0;
    scratch_fit(ix);
    for (size_t i = 0; i < ix->nsegs; i++)
        ix->segs[i]->allowed = all || gw_csv_has(toolsets_csv, ix->segs[i]->name);
    gw_toolsearch_tokens(query, strlen(query), query_word, &q);
    as = next_stamp(ix);
    for (size_t i = 0; i < q.n; i++) {
        const char *alt[24];
        double wt[24];
        size_t nalt =
            flags & GW_TOOLSEARCH_NO_SYNONYMS ? 0 : gw_toolsearch_synonyms(q.v[i].w, alt, wt, 23);
        uint32_t gs = next_stamp(ix);
        size_t ng = 0;
        long id;

        alt[nalt] = q.v[i].w;
        wt[nalt++] = 1.0;
        for (size_t j = 0; j < nalt; j++)
            if ((id = term_id(ix, alt[j], false)) >= 0)
                ng = score_term(ix, &ix->terms[id], wt[j], j == nalt - 1, gs, ng, all);
        for (size_t j = 0; j < ng; j++) {
            uint32_t d = ix->gtouched[j];
            if (ix->astamp[d] != as) {
                ix->astamp[d] = as;
                ix->acc[d] = 0;
                ix->nhits[d] = 0;
            }
            ix->acc[d] += ix->gacc[d];
            if (ix->nstamp[d] == gs)
                ix->nhits[d]++;
        }
    }
    query_name(query, qname, sizeof qname);
    qlen = strlen(qname);
    cands = gw_xcalloc(k, sizeof *cands);
    for (size_t i = 0; i < ix->nsegs; i++) {
        const struct seg *s = ix->segs[i];
        for (size_t j = 0; s->allowed && j < s->ndocs; j++) {
            uint32_t d = s->docs[j];
            int m = name_match(ix->docs[d].key, qname, qlen);
            double score = ix->astamp[d] == as ? ix->acc[d] : 0;
            if (ix->astamp[d] == as && ix->docs[d].len[F_NAME] > 0)
                score += NAME_COVER * ix->nhits[d] / ix->docs[d].len[F_NAME];
            if (m != 0)
                score += m == 2 ? EXACT_BONUS : PREFIX_BONUS;
            if (score > 0)
                ncand = top_add(ix, cands, ncand, k, (struct cand){d, score});
        }
    }
    for (size_t i = 0; i < ncand; i++) {
        const struct gw_cat_tool *t = gw_catalog_lookup(cat, ix->docs[cands[i].doc].name);
        if (t != NULL)
            out[nout++] = (struct gw_toolsearch_hit){t, cands[i].score};
    }
    free(cands);
    return nout;
}

/* A score to three decimals, halves away from zero as round() does (no
 * libm: gw_ln in gw/util.h). */
static double milli(double score)
{
    double v = score * 1000.0;
    return (double)(long long)(v < 0 ? v - 0.5 : v + 0.5) / 1000.0;
}

json_t *gw_toolsearch_json(struct gw_toolsearch *ix, const struct gw_catalog *cat,
                           const char *query, const char *toolsets_csv, enum gw_tool_format fmt,
                           size_t limit)
{
    struct gw_toolsearch_hit *hits = gw_xcalloc(limit ? limit : 1, sizeof *hits);
    size_t n = gw_toolsearch_query(ix, cat, query, toolsets_csv, 0, hits, limit);
    json_t *tools = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *j = gw_cat_tool_to_json(hits[i].tool, fmt);
        json_object_set_new(j, "score", json_real(milli(hits[i].score)));
        json_array_append_new(tools, j);
    }
    free(hits);
    return json_pack("{s:I, s:s, s:o}", "version", (json_int_t)gw_catalog_version(cat), "query",
                     query, "tools", tools);
}
