/* Tool search, the index's parts shared by its builder (toolsearch.c)
 * and its ranker (toolsearch_query.c). Not for other modules. */
#ifndef GW_TOOLSEARCH_INTERNAL_H
#define GW_TOOLSEARCH_INTERNAL_H

#include "gw/toolsearch.h"

enum gw_ts_field { F_NAME, F_ORIG, F_TITLE, F_DESC, F_PARAM, F_SET, NF };

/* One tool's use of one word: a term's postings hold one per document. */
struct gw_ts_posting {
    uint32_t doc;
    uint16_t slot; /* the place of this term in the document's term list */
    uint8_t tf[NF];
};

struct gw_ts_term {
    char *s; /* NULL: a free id */
    struct gw_ts_posting *p;
    uint32_t n, cap;
    uint32_t hash;
    uint32_t mark; /* doc + 1 while that doc is being indexed */
    uint32_t slot; /* its place in the doc's scratch list then */
};

/* A document's term and where its posting sits in that term's list, so
 * that removing the document touches its own postings only. */
struct gw_ts_dterm {
    uint32_t term, at;
};

struct gw_ts_seg;

struct gw_ts_doc {
    char *name; /* final name; NULL: a free slot */
    char *key;  /* the name lower-cased, '-' as '_', for name matches */
    struct gw_ts_seg *seg;
    uint32_t pos; /* place in the toolset's listing */
    uint16_t len[NF];
    uint16_t ncover; /* the name's words but its toolset's (name coverage) */
    uint16_t nterms;
    uint8_t verbs; /* the kinds of its name's verbs, 1 << enum gw_ts_verb */
    bool live;     /* served: its toolset's build is complete */
    bool reused;   /* a build under way took it over unchanged, to place at npos */
    uint32_t npos;
    uint64_t hash; /* of what it was made of (toolsearch.c, tool_hash) */
    struct gw_ts_dterm *terms;
};

/* A catalog toolset: the documents served, and the next ones while a
 * build is under way (the old ones are served meanwhile). */
struct gw_ts_seg {
    char *name;
    uint64_t gen;
    uint32_t *docs;
    size_t ndocs;
    size_t rank; /* the toolset's place in the catalog */
    bool published, seen, allowed, building;
    uint64_t bgen;
    uint32_t *bdocs;
    size_t nb, btotal;
    uint32_t *omap; /* while building: the served documents by name (id + 1) */
    size_t omask;
};

struct gw_toolsearch {
    uint64_t version; /* of the catalog last planned; 0: never */
    uint64_t slice_us;
    uint64_t first_us;
    size_t changes; /* toolsets published or dropped, ever */
    size_t indexed; /* tools indexed (not taken over unchanged), ever */
    struct gw_ts_term *terms;
    size_t nterms, capterms, liveterms;
    uint32_t *free_terms;
    size_t nfree_terms;
    uint32_t *slots; /* open addressing: term id + 1, 0 empty */
    size_t nslots;
    struct gw_ts_doc *docs;
    size_t ndocs, capdocs;
    uint32_t *free_docs;
    size_t nfree;
    uint32_t *garbage; /* documents no longer served, to be removed */
    size_t ngarbage, capgarbage;
    size_t nbuilding;
    struct gw_ts_seg **segs;
    size_t nsegs;
    double lensum[NF];
    size_t live;
    /* query scratch, one entry per doc slot */
    double *acc, *gacc;
    uint32_t *astamp, *gstamp, *gtouched;
    uint32_t *nstamp;      /* the group with a word in the name */
    double *nhits, *gname; /* name coverage, and the group's best credit for it */
    uint32_t stamp;
    size_t scratch_cap;
};

/* The ranking's constants (toolsearch_query.c), settable for the
 * benchmark's cross-validation: per-field BM25F weights and length
 * normalisation, k1, the name coverage bonus, a factor on every
 * synonym's weight, and the weight of the catalog's own associations. */
struct gw_ts_weights {
    double w[NF], b[NF];
    double k1, cover, syn;
    double assoc;    /* the weight of a word the catalog relates to a query word */
    double syncover; /* name coverage through a related word: this times its weight */
    double path;     /* the weight of "file" or "directory" for a path in the query */
    double ask;      /* the weight of "get" and "list" for a question */
    double verb; /* the share of its score a tool whose name's verb contradicts the query's loses */
    double payload; /* the weight of a word of the request's payload (quoted, or a "that" clause) */
};
/* Sets `w` (unless NULL) after copying the current ones to `old` (unless NULL). */
void gw_ts_tune(const struct gw_ts_weights *w, struct gw_ts_weights *old);

/* Frees the query scratch (toolsearch_query.c); the next query sizes it. */
void gw_ts_scratch_free(struct gw_toolsearch *ix);

/* The step a query makes before it ranks (gw_toolsearch_query). */
void gw_ts_query_step(struct gw_toolsearch *ix, const struct gw_catalog *cat,
                      const char *toolsets_csv);

/* The verb-object shape of tool names: most start with a verb (get_issue,
 * delete_branch). A tool whose verbs do another kind of thing than a
 * query asks (delete when asked to create, write when asked to read)
 * keeps only part of its score. */
enum gw_ts_verb { GW_TS_NONE, GW_TS_READ, GW_TS_CREATE, GW_TS_UPDATE, GW_TS_DELETE };

/* The kind of the verb w[0..n), case aside; GW_TS_NONE if not a verb. */
enum gw_ts_verb gw_ts_verb_kind(const char *w, size_t n);

/* The kinds of a tool name's verbs (1 << kind): its first verb in its
 * first two words after its toolset's name (mongodb_atlas_create_db_user,
 * atlasCreateDbUser), with the verbs it is joined to by "or" or "and"
 * (create_or_update_file). */
unsigned gw_ts_name_verbs(const char *name, const char *toolset);

/* The sentence that sums up a tool without a title: the first of its
 * description (toolsearch_text.c). Returns its start; its length in *len
 * (0: none). */
const char *gw_ts_summary(const char *description, size_t *len);

/* The term id of `s`, or -1. */
long gw_ts_term_find(const struct gw_toolsearch *ix, const char *s);

#endif
