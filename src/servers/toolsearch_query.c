/* Tool search, the ranking: BM25F over the index's live documents, with
 * synonyms at a discount and name matches first (toolsearch.h). */
#include "gw/toolsearch_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/util.h"

/* BM25F: a word in the name counts three times one in the description;
 * short fields (names) are barely length-normalised, prose is. Name
 * coverage: a tool gets up to `cover` more for the share of its final
 * name's words (its toolset's name aside: a prefix says whose tool, not
 * what it does) the query uses, a word reached through a synonym or an
 * association counting its weight times `syncover`, so that "take a
 * screenshot" prefers browser_take_screenshot to a tool that only
 * mentions screenshots, and "give me the ticket" get_issue. Field weights
 * chosen by coordinate search on fold A of the external task set and
 * mcpgw's own tasks lost 5 points of recall@5 on fold B, which no choice
 * saw: these hand-set ones generalise better (docs/performance.md,
 * *Tool search, second pass*), and none chosen by cross-validation over
 * servers beat them on the servers it did not see (*fourth pass*). */
static struct gw_ts_weights W = {
    .w = {3.0, 1.5, 2.0, 1.0, 0.5, 1.5},
    .b = {0.3, 0.3, 0.3, 0.75, 0.75, 0.2},
    .k1 = 1.2,
    .cover = 2.0,
    .syn = 1.0,
    .assoc = 0.6,
    .syncover = 1.0,
    .path = 0.5,
    .ask = 0.3,
    .verb = 0.3,
    .payload = 0.3,
};
/* Scores a name match adds: an exact match ranks before a prefix match,
 * which ranks before any word match (BM25F scores stay far below). */
#define EXACT_BONUS  2000.0
#define PREFIX_BONUS 1000.0
#define PREFIX_MIN   3 /* shorter queries are words, not name prefixes */

void gw_ts_tune(const struct gw_ts_weights *w, struct gw_ts_weights *old)
{
    if (old != NULL)
        *old = W;
    if (w != NULL)
        W = *w;
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
    double wt; /* 1 but for the words a path stands for */
};

struct qwords {
    struct qword v[GW_TOOLSEARCH_TERMS_MAX];
    size_t n;
};

/* Asks for `w` at `wt`, unless the query already asks for it (at the
 * weight it was asked for first) or holds as many words as it may. */
static void add_word(struct qwords *q, const char *w, double wt)
{
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->v[i].w, w) == 0)
            return;
    if (q->n < GW_TOOLSEARCH_TERMS_MAX) {
        snprintf(q->v[q->n].w, sizeof q->v[0].w, "%s", w);
        q->v[q->n++].wt = wt;
    }
}

static void query_word(const char *w, void *arg)
{
    add_word(arg, w, 1.0);
}

/* A request's payload: what it says to store, send or name rather than
 * what to do ("remember that Alice prefers email", "a 'Receipts' label").
 * Its words still count, weakly: they are the arguments, which a tool's
 * description rarely uses, and other tools' descriptions match them by
 * chance. The payload is a quoted span, and what follows a "that" before
 * a name, a pronoun or an article ("note that Bob…", "reply that the
 * fix…"; "that file" and "that PR" are a determiner's). */
static bool quote_opens(const char *q, size_t i)
{
    return (q[i] == '\'' || q[i] == '"') && (i == 0 || isspace((unsigned char)q[i - 1])) &&
           q[i + 1] != '\0' && !isspace((unsigned char)q[i + 1]);
}

/* The quote that closes the one at i (the same character, not before a
 * letter or digit: "what's" is no end), or 0: a quote never closed is
 * none. */
static size_t quote_close(const char *q, size_t i, size_t n)
{
    for (size_t j = i + 2; j < n; j++)
        if (q[j] == q[i] && !isalnum((unsigned char)q[j + 1]))
            return j;
    return 0;
}

static bool clause_opens(const char *q, size_t i)
{
    static const char *const next[] = {"the", "a",     "an",    "it",   "we",    "i",    "you",
                                       "he",  "she",   "they",  "this", "our",   "my",   "his",
                                       "her", "their", "there", "its",  "these", "those"};
    const char *w = q + i + 4;
    size_t n;

    if (i == 0 || strncasecmp(q + i, "that", 4) != 0 || !isspace((unsigned char)q[i - 1]) ||
        !isspace((unsigned char)q[i + 4]))
        return false;
    w += strspn(w, " \t");
    n = strcspn(w, " \t\r\n,.;:!?");
    if (n > 1 && isupper((unsigned char)w[0]) && islower((unsigned char)w[1]))
        return true; /* a name; PR, API are not */
    for (size_t k = 0; k < sizeof next / sizeof *next; k++)
        if (strlen(next[k]) == n && strncasecmp(w, next[k], n) == 0)
            return true;
    return false;
}

/* Splits `query` into what it asks (`ask`) and its payload (`pay`), each
 * the query's length with the other's bytes blanked; both hold
 * GW_TOOLSEARCH_QUERY_MAX + 1 bytes (a longer query is cut, as its
 * callers refuse it: gw_toolsearch_query_problem). */
static void payload_split(const char *query, char *ask, char *pay)
{
    size_t n = strnlen(query, GW_TOOLSEARCH_QUERY_MAX), close = 0;
    bool quoted = false, clause = false;

    for (size_t i = 0; i < n; i++) {
        bool in;
        if (!quoted && !clause && quote_opens(query, i) && (close = quote_close(query, i, n)) > 0)
            quoted = true;
        if (!quoted && !clause && clause_opens(query, i))
            clause = true;
        in = quoted || clause;
        ask[i] = in ? ' ' : query[i];
        pay[i] = in ? query[i] : ' ';
        if (quoted && i == close)
            quoted = false;
    }
    ask[n] = pay[n] = '\0';
}

static void payload_word(const char *w, void *arg)
{
    add_word(arg, w, W.payload);
}

/* A compound the query writes apart ("roll back", "sign-in") that the
 * catalog uses as one word (rollback, signin): asked for as a word of
 * the query, beside its parts. */
struct compound_arg {
    const struct gw_toolsearch *ix;
    struct qwords *q;
};

static void compound_word(const char *w, void *arg)
{
    struct compound_arg *c = arg;

    if (gw_ts_term_find(c->ix, w) >= 0)
        query_word(w, c->q);
}

/* A blank-separated piece of the query shaped as a path or a file name
 * (src/app.js, ~/notes, .env, report.pdf) stands for a file or a
 * directory, which tools say and people often do not: 1 for a file (a
 * name with an extension of 1-5 letters or digits), 2 for a directory
 * (a path without one), else 0. */
static int path_kind(const char *p, size_t n)
{
    size_t dot, slash;

    while (n > 0 && strchr("\"'`?!,;:)", p[n - 1]) != NULL)
        n--;
    while (n > 0 && strchr("\"'`(", p[0]) != NULL) {
        p++;
        n--;
    }
    dot = slash = n;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '.')
            dot = i;
        else if (p[i] == '/')
            slash = i;
    }
    if (n >= 2 && dot < n - 1 && (slash == n || dot > slash) && n - dot - 1 <= 5) {
        for (size_t i = dot + 1; i < n; i++)
            if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
                  (p[i] >= '0' && p[i] <= '9')))
                return 0;
        return dot > 0 && p[dot - 1] >= '0' && p[dot - 1] <= '9' ? 0 : 1; /* not 2.3 */
    }
    return slash < n && (p[0] == '~' || p[0] == '/' || p[0] == '.' || (slash > 0 && slash < n - 1))
               ? 2
               : 0;
}

static void path_words(const char *query, struct qwords *q)
{
    static const char *const word[] = {NULL, "file", "directory"};
    bool seen[3] = {false, false, false};

    for (const char *p = query; *p != '\0';) {
        size_t n;
        int k;
        p += strspn(p, " \t\r\n");
        n = strcspn(p, " \t\r\n");
        k = path_kind(p, n);
        if (k != 0 && !seen[k]) {
            seen[k] = true;
            add_word(q, word[k], W.path);
        }
        p += n;
    }
}

/* A question ("what are…", "which…", "is my build green?") asks to read,
 * not to change: it also asks, weakly, for the verbs of reading that tool
 * names start with. */
static bool question(const char *query)
{
    static const char *const asks[] = {"what",  "what's", "whats", "which", "who",  "whose",
                                       "where", "when",   "why",   "how",   "is",   "are",
                                       "was",   "were",   "does",  "do",    "did",  "has",
                                       "have",  "can",    "could", "any",   "show", "tell"};
    size_t n;

    query += strspn(query, " \t\r\n\"'");
    n = strcspn(query, " \t\r\n,?");
    if (strchr(query, '?') != NULL)
        return true;
    for (size_t i = 0; i < sizeof asks / sizeof *asks; i++)
        if (strlen(asks[i]) == n && strncasecmp(query, asks[i], n) == 0)
            return true;
    return false;
}

static void question_words(const char *query, struct qwords *q)
{
    static const char *const word[] = {"get", "list"};

    if (!question(query))
        return;
    for (size_t i = 0; i < sizeof word / sizeof *word; i++)
        add_word(q, word[i], W.ask);
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
    ix->gname = gw_xrealloc(ix->gname, ix->scratch_cap * sizeof *ix->gname);
    memset(ix->nstamp, 0, ix->scratch_cap * sizeof *ix->nstamp);
    memset(ix->astamp, 0, ix->scratch_cap * sizeof *ix->astamp);
    memset(ix->gstamp, 0, ix->scratch_cap * sizeof *ix->gstamp);
}

void gw_ts_scratch_free(struct gw_toolsearch *ix)
{
    free(ix->acc);
    free(ix->gacc);
    free(ix->astamp);
    free(ix->gstamp);
    free(ix->gtouched);
    free(ix->nstamp);
    free(ix->nhits);
    free(ix->gname);
    ix->acc = ix->gacc = ix->nhits = ix->gname = NULL;
    ix->astamp = ix->gstamp = ix->gtouched = ix->nstamp = NULL;
    ix->scratch_cap = 0;
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
static size_t score_term(struct gw_toolsearch *ix, const struct gw_ts_term *t, double w, bool own,
                         uint32_t gs, size_t ng, bool all, const double *avg)
{
    double rest = (double)ix->live - t->n;
    double idf = gw_ln(1.0 + ((rest > 0 ? rest : 0.0) + 0.5) / (t->n + 0.5));
    double cw = own ? 1.0 : W.syncover * w; /* its credit for name coverage */

    for (uint32_t i = 0; i < t->n; i++) {
        const struct gw_ts_posting *p = &t->p[i];
        const struct gw_ts_doc *d = &ix->docs[p->doc];
        double s, wtf = 0;
        if (!d->live || (!all && !d->seg->allowed))
            continue;
        for (int f = 0; f < NF; f++) {
            if (p->tf[f] != 0)
                wtf += W.w[f] * p->tf[f] / (1.0 - W.b[f] + W.b[f] * d->len[f] / avg[f]);
        }
        s = w * idf * wtf / (W.k1 + wtf);
        if (p->tf[F_NAME] > 0 && p->tf[F_SET] == 0 && cw > 0) {
            if (ix->nstamp[p->doc] != gs) {
                ix->nstamp[p->doc] = gs;
                ix->gname[p->doc] = cw;
            } else if (cw > ix->gname[p->doc]) {
                ix->gname[p->doc] = cw;
            }
        }
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

/* Words the catalog itself relates to a query word: of the tools that use
 * it, the words of their names (the verb and object of get_x, list_x)
 * that at least half of them have, but not their toolset's name (a
 * server's name goes with every one of its tools), ranked by that share
 * times their idf. A word in more than ASSOC_DF_MAX tools says little of
 * any topic and gets none. So "login", used in the descriptions of tools
 * named *_user, also finds a *_user tool whose text never says login. */
#define ASSOC_DF_MAX 50
#define ASSOC_MAX    4

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static size_t associations(const struct gw_toolsearch *ix, uint32_t id, const char **alt,
                           double *wt, size_t n, size_t max)
{
    const struct gw_ts_term *t = &ix->terms[id];
    uint32_t best[ASSOC_MAX];
    double bscore[ASSOC_MAX], bshare[ASSOC_MAX];
    size_t nids = 0, live = 0, nbest = 0;
    uint32_t *ids;

    if (W.assoc <= 0 || t->n < 2 || t->n > ASSOC_DF_MAX)
        return n;
    ids = gw_xmalloc((size_t)t->n * GW_TOOLSEARCH_DOC_TERMS_MAX * sizeof *ids);
    for (uint32_t i = 0; i < t->n; i++) {
        const struct gw_ts_doc *d = &ix->docs[t->p[i].doc];
        if (!d->live)
            continue;
        live++;
        for (uint32_t j = 0; j < d->nterms; j++) {
            const struct gw_ts_dterm *dt = &d->terms[j];
            if (dt->term != id && ix->terms[dt->term].p[dt->at].tf[F_SET] == 0 &&
                ix->terms[dt->term].p[dt->at].tf[F_NAME] > 0)
                ids[nids++] = dt->term;
        }
    }
    qsort(ids, nids, sizeof *ids, cmp_u32);
    for (size_t i = 0, j; i < nids; i = j) {
        double share, score;
        size_t k;
        for (j = i; j < nids && ids[j] == ids[i]; j++)
            ;
        if ((j - i) * 3 < live || j - i < 2)
            continue;
        share = (double)(j - i) / (double)live;
        score = share * gw_ln(1.0 + (double)ix->live / ix->terms[ids[i]].n);
        for (k = nbest; k > 0 && bscore[k - 1] < score; k--) {
            if (k < ASSOC_MAX) {
                best[k] = best[k - 1];
                bscore[k] = bscore[k - 1];
                bshare[k] = bshare[k - 1];
            }
        }
        if (k < ASSOC_MAX) {
            best[k] = ids[i];
            bscore[k] = score;
            bshare[k] = share;
            nbest += nbest < ASSOC_MAX;
        }
    }
    for (size_t i = 0; i < nbest && n < max; i++) {
        alt[n] = ix->terms[best[i]].s;
        wt[n++] = W.assoc * bshare[i];
    }
    free(ids);
    return n;
}

struct cand {
    uint32_t doc;
    double score;
};

/* Whether candidate x ranks before y: score, then catalog order. */
static bool before(const struct gw_toolsearch *ix, const struct cand *x, const struct cand *y)
{
    const struct gw_ts_doc *dx = &ix->docs[x->doc], *dy = &ix->docs[y->doc];

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

/* The query's first word after the words of courtesy ("can you please
 * delete…" asks to delete); its length in *n. */
static const char *first_word(const char *query, size_t *n)
{
    static const char *const polite[] = {"please", "can",   "could", "would", "will",
                                         "you",    "i",     "we",    "want",  "need",
                                         "to",     "let's", "lets",  "just",  "kindly"};
    const char *p = query;

    for (;;) {
        size_t i = 0;
        p += strspn(p, " \t\r\n\"',");
        *n = strcspn(p, " \t\r\n,.!?:;");
        while (i < sizeof polite / sizeof *polite &&
               !(strlen(polite[i]) == *n && strncasecmp(p, polite[i], *n) == 0))
            i++;
        if (i == sizeof polite / sizeof *polite)
            return p;
        p += *n;
    }
}

/* A verb and its particle mean another thing than the verb: "set up a
 * repo" creates one, "pull up a ticket" reads, "clean up the branches"
 * deletes them. The kind of the phrasal verb whose verb is the n bytes at
 * `p`, or GW_TS_NONE. */
static enum gw_ts_verb phrasal_kind(const char *p, size_t n)
{
    static const struct {
        const char *verb, *particle;
        enum gw_ts_verb kind;
    } phrasals[] = {
        {"set", "up", GW_TS_CREATE},    {"spin", "up", GW_TS_CREATE},
        {"sign", "up", GW_TS_CREATE},   {"pull", "up", GW_TS_READ},
        {"dig", "up", GW_TS_READ},      {"clean", "up", GW_TS_DELETE},
        {"tear", "down", GW_TS_DELETE}, {"take", "down", GW_TS_DELETE},
        {"wipe", "out", GW_TS_DELETE},  {"throw", "away", GW_TS_DELETE},
        {"get", "rid", GW_TS_DELETE},   {"give", "me", GW_TS_READ},
        {"tell", "me", GW_TS_READ},
    };
    const char *q = p + n;
    size_t m;

    q += strspn(q, " \t");
    m = strcspn(q, " \t\r\n,.!?:;");
    for (size_t i = 0; i < sizeof phrasals / sizeof *phrasals; i++)
        if (strlen(phrasals[i].verb) == n && strncasecmp(p, phrasals[i].verb, n) == 0 &&
            strlen(phrasals[i].particle) == m && strncasecmp(q, phrasals[i].particle, m) == 0)
            return phrasals[i].kind;
    return GW_TS_NONE;
}

/* What a query asks to do (toolsearch_internal.h, enum gw_ts_verb): its
 * first word after the words of courtesy ("remove the label", "show my
 * open PRs", "can you please delete…") if a verb, or its phrasal verb's
 * kind, else reading for a question. */
static enum gw_ts_verb query_verb(const char *query)
{
    size_t n;
    const char *p = first_word(query, &n);
    enum gw_ts_verb v = phrasal_kind(p, n);

    if (v != GW_TS_NONE)
        return v;
    v = gw_ts_verb_kind(p, n);
    return v != GW_TS_NONE || !question(query) ? v : GW_TS_READ;
}

/* Adds each query word's score, and its synonyms' and associations'
 * unless `bare`, to the documents' accumulators of stamp `as`. */
static void score_words(struct gw_toolsearch *ix, const struct qwords *q, bool bare, uint32_t as,
                        bool all, const double *avg)
{
    for (size_t i = 0; i < q->n; i++) {
        const char *alt[24];
        double wt[24];
        size_t nalt = bare ? 0 : gw_toolsearch_synonyms(q->v[i].w, alt, wt, 19);
        uint32_t gs = next_stamp(ix);
        size_t ng = 0;
        long id = gw_ts_term_find(ix, q->v[i].w);

        if (id >= 0 && !bare)
            nalt = associations(ix, (uint32_t)id, alt, wt, nalt, 23);
        alt[nalt] = q->v[i].w;
        wt[nalt++] = 1.0;
        for (size_t j = 0; j < nalt; j++)
            if ((id = gw_ts_term_find(ix, alt[j])) >= 0)
                ng = score_term(ix, &ix->terms[id],
                                j == nalt - 1
                                    ? q->v[i].wt
                                    : (wt[j] * W.syn < 1.0 ? wt[j] * W.syn : 1.0) * q->v[i].wt,
                                j == nalt - 1 && q->v[i].wt == 1.0, gs, ng, all, avg);
        for (size_t j = 0; j < ng; j++) {
            uint32_t d = ix->gtouched[j];
            if (ix->astamp[d] != as) {
                ix->astamp[d] = as;
                ix->acc[d] = 0;
                ix->nhits[d] = 0;
            }
            ix->acc[d] += ix->gacc[d];
            if (ix->nstamp[d] == gs)
                ix->nhits[d] += ix->gname[d];
        }
    }
}

/* The best k documents of the allowed toolsets by their accumulated
 * score, name coverage and name match. */
static size_t rank_docs(struct gw_toolsearch *ix, uint32_t as, const char *qname, size_t qlen,
                        enum gw_ts_verb qv, struct cand *cands, size_t k)
{
    size_t ncand = 0;

    for (size_t i = 0; i < ix->nsegs; i++) {
        const struct gw_ts_seg *s = ix->segs[i];
        for (size_t j = 0; s->allowed && j < s->ndocs; j++) {
            uint32_t d = s->docs[j];
            int m = name_match(ix->docs[d].key, qname, qlen);
            double score = ix->astamp[d] == as ? ix->acc[d] : 0;
            if (ix->astamp[d] == as && ix->docs[d].ncover > 0)
                score += W.cover * ix->nhits[d] / ix->docs[d].ncover;
            if (qv != GW_TS_NONE && ix->docs[d].verbs != 0 && !(ix->docs[d].verbs & 1u << qv))
                score *= 1.0 - W.verb; /* it does another kind of thing than asked */
            if (m != 0)
                score += m == 2 ? EXACT_BONUS : PREFIX_BONUS;
            if (score > 0)
                ncand = top_add(ix, cands, ncand, k, (struct cand){d, score});
        }
    }
    return ncand;
}

size_t gw_toolsearch_query(struct gw_toolsearch *ix, const struct gw_catalog *cat,
                           const char *query, const char *toolsets_csv, unsigned flags,
                           struct gw_toolsearch_hit *out, size_t k)
{
    bool all = toolsets_csv == NULL || toolsets_csv[strspn(toolsets_csv, ",")] == '\0';
    bool bare = flags & GW_TOOLSEARCH_NO_SYNONYMS;
    char qname[GW_TOOLSEARCH_QUERY_MAX + 1];
    /* what the query asks and its payload (payload_split), but bare */
    char ask[GW_TOOLSEARCH_QUERY_MAX + 1], pay[GW_TOOLSEARCH_QUERY_MAX + 1];
    const char *asked = query;
    struct qwords q = {0};
    uint32_t as;
    size_t ncand, nout = 0, qlen;
    struct cand *cands;
    double avg[NF];

    gw_ts_query_step(ix, cat, toolsets_csv);
    if (k == 0)
        return 0;
    scratch_fit(ix);
    for (int f = 0; f < NF; f++)
        avg[f] = ix->live && ix->lensum[f] > 0 ? ix->lensum[f] / (double)ix->live : 1.0;
    for (size_t i = 0; i < ix->nsegs; i++)
        ix->segs[i]->allowed = all || gw_csv_has(toolsets_csv, ix->segs[i]->name);
    if (!bare) {
        payload_split(query, ask, pay);
        asked = ask;
    }
    gw_toolsearch_tokens(asked, strlen(asked), query_word, &q);
    if (!bare)
        gw_toolsearch_tokens(pay, strlen(pay), payload_word, &q);
    gw_toolsearch_compounds(asked, strlen(asked), compound_word,
                            &(struct compound_arg){.ix = ix, .q = &q});
    if (!bare)
        path_words(query, &q);
    if (!bare)
        question_words(query, &q);
    as = next_stamp(ix);
    score_words(ix, &q, bare, as, all, avg);
    query_name(query, qname, sizeof qname);
    qlen = strlen(qname);
    cands = gw_xcalloc(k, sizeof *cands);
    ncand = rank_docs(ix, as, qname, qlen, bare ? GW_TS_NONE : query_verb(query), cands, k);
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
                           size_t limit, gw_toolsearch_visible visible, void *arg)
{
    struct gw_toolsearch_hit *hits = gw_xcalloc(limit ? limit : 1, sizeof *hits);
    size_t n = gw_toolsearch_query(ix, cat, query, toolsets_csv, 0, hits, limit);
    json_t *tools = json_array(), *r, *indexing;

    for (size_t i = 0; i < n; i++) {
        json_t *j = gw_cat_tool_to_json(hits[i].tool, fmt);
        json_object_set_new(j, "score", json_real(milli(hits[i].score)));
        json_array_append_new(tools, j);
    }
    free(hits);
    r = json_pack("{s:I, s:s, s:o}", "version", (json_int_t)gw_catalog_version(cat), "query", query,
                  "tools", tools);
    if ((indexing = gw_toolsearch_indexing_json(ix, toolsets_csv, visible, arg)) != NULL)
        json_object_set_new(r, "indexing", indexing);
    return r;
}
