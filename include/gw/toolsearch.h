/* Tool search: a relevance index over the live catalog (issue 29).
 *
 * Pure data like the catalog: no sockets, no loop. The index never holds a
 * pointer into the catalog; it copies the text it needs and finds a hit's
 * tool again by its final name. It follows the catalog lazily and
 * incrementally: gw_toolsearch_sync() (which every query runs first) does
 * nothing while the catalog's version is the one it saw, and otherwise
 * re-indexes only the toolsets whose registered tools changed (each
 * toolset carries a generation, gw_cat_toolset_gen()). So the call path
 * never touches it; catalog commits and searches do.
 *
 * Building never holds the caller long: gw_toolsearch_step() works for
 * at most a time budget and says whether the index is current; a toolset
 * being re-indexed is served from its previous documents until its new
 * ones are complete, and documents no longer served are removed in later
 * steps. Each document keeps its terms and where its postings sit, so a
 * removal touches only its own postings, and a word no tool uses any more
 * leaves the dictionary: memory follows the current catalog. The daemon
 * steps on its loop (servers_toolsearch.c) once a search was made.
 *
 * Ranking: BM25F over six fields (final name, original name, title or
 * else the description's first sentence, description, parameter names,
 * descriptions and enum values, toolset), with per-field weights and
 * length normalisation; query words also match, at a discount, through a
 * small table of general English synonyms (toolsearch_text.c) and through
 * the words the catalog itself relates to them (the name words most tools
 * using the word share); a path or file name in the query asks for a file
 * or directory, and a question for the verbs of reading. A tool gets a
 * bonus for the share of its name's words (its toolset's name aside) the
 * query reaches. A tool whose final name is the query, or starts with it,
 * ranks before the others.
 *
 * Bounds: a query is at most GW_TOOLSEARCH_QUERY_MAX bytes and at most
 * GW_TOOLSEARCH_TERMS_MAX words are used. Of a tool, the first
 * GW_TOOLSEARCH_TEXT_MAX bytes of its description and title, the first
 * GW_TOOLSEARCH_PARAMS_MAX parameters (GW_TOOLSEARCH_PARAM_MAX bytes of
 * each one's name, of its description, and of its first
 * GW_TOOLSEARCH_ENUM_MAX enum values together) and at most
 * GW_TOOLSEARCH_DOC_TERMS_MAX distinct words are indexed. */
#ifndef GW_TOOLSEARCH_H
#define GW_TOOLSEARCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gw/catalog.h"

#define GW_TOOLSEARCH_QUERY_MAX     512
#define GW_TOOLSEARCH_TERMS_MAX     32
#define GW_TOOLSEARCH_LIMIT_DEFAULT 10
#define GW_TOOLSEARCH_TOKEN_MAX     32 /* longer words are cut */
#define GW_TOOLSEARCH_TEXT_MAX      8192
#define GW_TOOLSEARCH_PARAM_MAX     1024
#define GW_TOOLSEARCH_PARAMS_MAX    64
#define GW_TOOLSEARCH_ENUM_MAX      32 /* enum values per parameter */
#define GW_TOOLSEARCH_DOC_TERMS_MAX 512
#define GW_TOOLSEARCH_SLICE_US      10000 /* a step's budget on the loop */
#define GW_TOOLSEARCH_FIRST_US      50000 /* a query's while it finds a toolset never indexed */

/* Query flags. */
#define GW_TOOLSEARCH_NO_SYNONYMS 1u /* for the benchmark: words match only themselves */

struct gw_toolsearch;

struct gw_toolsearch *gw_toolsearch_new(void);
void gw_toolsearch_free(struct gw_toolsearch *ix);

/* Brings the index up to the catalog's current state at once. Returns how
 * many toolsets were (re-)indexed or dropped (0 when nothing changed). */
size_t gw_toolsearch_sync(struct gw_toolsearch *ix, const struct gw_catalog *cat);

/* Works towards the catalog's current state for about `budget_us` (at
 * least one tool's worth); true when the index is current. */
bool gw_toolsearch_step(struct gw_toolsearch *ix, const struct gw_catalog *cat, uint64_t budget_us);

/* How many tools were indexed since `ix` was made: a re-index takes the
 * tools whose indexed text did not change over without indexing them. */
size_t gw_toolsearch_indexed(const struct gw_toolsearch *ix);

/* Whether a search was ever made (until then nothing is indexed). */
bool gw_toolsearch_in_use(const struct gw_toolsearch *ix);

/* The budget of the step every query makes first (GW_TOOLSEARCH_SLICE_US
 * by default; 0: one tool's worth). */
void gw_toolsearch_set_slice(struct gw_toolsearch *ix, uint64_t us);

/* The most a query steps in all while a toolset it searches has never been
 * indexed (GW_TOOLSEARCH_FIRST_US by default), since there is no previous
 * version of it to serve: the first search after start, or after a server
 * arrived, answers from the whole catalog unless that is very large. */
void gw_toolsearch_set_first(struct gw_toolsearch *ix, uint64_t us);

/* A toolset a caller may see (a client's policy), for the counts below;
 * NULL: every toolset. */
typedef bool (*gw_toolsearch_visible)(const char *toolset, void *arg);

/* How many of the toolsets `toolsets_csv` names (NULL or "" = all) and
 * `visible` accepts cannot be searched yet, never indexed and still
 * building, with how many tools they hold in `*tools` (unless NULL): what a
 * query made now misses. A toolset being re-indexed is served from its
 * previous version and is not counted. */
size_t gw_toolsearch_unindexed(const struct gw_toolsearch *ix, const char *toolsets_csv,
                               gw_toolsearch_visible visible, void *arg, size_t *tools);

/* Those counts as {"toolsets":N,"tools":M}, or NULL when nothing is
 * missing. New reference. */
json_t *gw_toolsearch_indexing_json(const struct gw_toolsearch *ix, const char *toolsets_csv,
                                    gw_toolsearch_visible visible, void *arg);

/* Bytes the index holds (dictionary, postings, documents). */
size_t gw_toolsearch_memory(const struct gw_toolsearch *ix);

struct gw_toolsearch_hit {
    const struct gw_cat_tool *tool; /* borrowed from the catalog */
    double score;
};

/* Steps (gw_toolsearch_set_slice; up to gw_toolsearch_set_first's budget
 * while a toolset it searches was never indexed), then ranks the catalog's tools for `query`
 * (NUL-terminated text). `toolsets_csv` as gw_catalog_tools_json's (NULL or "" = all). Writes at
 * most `k` hits, best first (ties: catalog order), to `out`; tools that match no query word are
 * left out. Returns how many. */
size_t gw_toolsearch_query(struct gw_toolsearch *ix, const struct gw_catalog *cat,
                           const char *query, const char *toolsets_csv, unsigned flags,
                           struct gw_toolsearch_hit *out, size_t k);

/* Whether `query` is acceptable: 0, or a sentence saying why not (static). */
const char *gw_toolsearch_query_problem(const char *query);

/* {"version":N,"query":q,"tools":[tool in `fmt` + "score"]} for
 * GET /v1/tools?q=, with "indexing" (gw_toolsearch_indexing_json, of the
 * toolsets `visible` accepts) when toolsets searched could not be yet; `query` is one
 * gw_toolsearch_query_problem() accepts (UTF-8). New reference. */
json_t *gw_toolsearch_json(struct gw_toolsearch *ix, const struct gw_catalog *cat,
                           const char *query, const char *toolsets_csv, enum gw_tool_format fmt,
                           size_t limit, gw_toolsearch_visible visible, void *arg);

/* Activations (toolsearch_active.c): per dialog, the tools a client of
 * /mcp has activated (find_tools, or a call), when gateway.tool_search is
 * on. Bounded: at most GW_TS_ACTIVE_TOOLS names per dialog (the oldest
 * activation goes first) and GW_TS_ACTIVE_DIALOGS dialogs (the one used
 * least recently goes). */
#define GW_TS_ACTIVE_TOOLS   256
#define GW_TS_ACTIVE_DIALOGS 4096

struct gw_ts_active;

struct gw_ts_active *gw_ts_active_new(void);
void gw_ts_active_free(struct gw_ts_active *a);

/* Activates `name` for `dialog`; 1 if it was not active, else 0. `now`
 * (ms) is the dialog's last use. */
int gw_ts_active_add(struct gw_ts_active *a, const char *dialog, const char *name, uint64_t now);
/* Deactivates `name` (NULL: every tool) for `dialog`; returns how many. */
size_t gw_ts_active_remove(struct gw_ts_active *a, const char *dialog, const char *name);
/* Is `name` active for `dialog` (NULL: has the dialog any activation)? */
bool gw_ts_active_has(const struct gw_ts_active *a, const char *dialog, const char *name);
/* The dialog's active names in activation order (a new array), or NULL
 * when it has none. */
json_t *gw_ts_active_json(const struct gw_ts_active *a, const char *dialog);
/* Calls fn for each dialog with activations. */
void gw_ts_active_each(const struct gw_ts_active *a, void (*fn)(const char *dialog, void *arg),
                       void *arg);
/* Forgets dialogs unused for `idle_ms` (0: never). */
void gw_ts_active_sweep(struct gw_ts_active *a, uint64_t now, uint64_t idle_ms);

/* Text processing (toolsearch_text.c), exposed for tests and the
 * benchmark. */

/* Splits `text` (n bytes) into lower-cased, stemmed words: on every byte
 * that is not an ASCII letter or digit or a UTF-8 byte, between letters
 * and digits, and on case changes ("getHTTPServer2" → get, http, server,
 * 2). Stop words and one-letter words are dropped. Calls `fn` for each
 * (NUL-terminated, at most GW_TOOLSEARCH_TOKEN_MAX - 1 bytes). */
void gw_toolsearch_tokens(const char *text, size_t n, void (*fn)(const char *tok, void *arg),
                          void *arg);

/* The words a compound written apart would be ("roll back", "sign-in",
 * "screen shot": rollback, signin, screenshot): each two words of
 * letters of `text` separated by one blank or hyphen, joined, lower-cased
 * and stemmed; identifiers (camelCase) and words with digits are not
 * joined. Calls `fn` for each. */
void gw_toolsearch_compounds(const char *text, size_t n, void (*fn)(const char *tok, void *arg),
                             void *arg);

/* The light stemmer: irregular forms (wrote → write), plurals, -ing,
 * -ed, a final e. In place. */
void gw_toolsearch_stem(char *w);

/* The stemmed words the synonym table relates to stemmed `w`, with the
 * weight of each (< 1): up to `max` written, count returned. */
size_t gw_toolsearch_synonyms(const char *w, const char **out, double *weight, size_t max);

#endif
