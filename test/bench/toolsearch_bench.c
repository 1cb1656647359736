/* Tool search benchmark (issues 29, 34): retrieval quality and speed.
 *
 *   toolsearch_bench CATALOG.json TASKS.json [EXT_CATALOG.json EXT_TASKS.jsonl] [-v]
 *
 * The external set (toolsearch/external/: tasks written by someone else
 * for 24 of its 38 servers, every server prefixed "<id>_") is reported in
 * two folds split by server (the servers with tasks, sorted, alternately):
 * fold A is the one ranking changes were tuned on, fold B is only ever
 * reported.
 *
 * Quality: every server of CATALOG (captured tools/list listings, see
 * toolsearch/capture.mjs) is derived and committed into a real catalog;
 * each task sentence of TASKS ({"q", "tools": ["server/original name"…]})
 * is asked of three rankers, and recall@1, recall@5 and MRR (the first
 * relevant tool's reciprocal rank, 0 past rank 100) are printed:
 *   - plain Okapi BM25 over name + description (written here, as the
 *     baseline: words split on anything but letters and digits, lower-cased,
 *     no stemming, k1 1.2, b 0.75);
 *   - mcpgw's ranking without the synonym table;
 *   - mcpgw's ranking.
 * -v lists the tasks mcpgw's ranking misses at 5 with its first answers.
 *
 * Speed: the catalog's servers are committed again under other ids until
 * 2,000 tools are served; every task is asked 20 times and the percentiles
 * of one query are printed (and the slowest query's best time, which
 * preemption on a shared machine does not inflate), with the index's memory and the cost of a full
 * index and of re-indexing one server after a commit. */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw/catalog.h"
#include "gw/toolsearch_internal.h"

#define TOP 100

static json_t *load(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);

    if (j == NULL) {
        fprintf(stderr, "%s:%d: %s\n", path, err.line, err.text);
        exit(2);
    }
    return j;
}

/* Commits a server's listing; `prefix` (or NULL) is a prefix transform,
 * as an operator writes for servers whose tool names collide. */
static void commit(struct gw_catalog *cat, const char *id, json_t *tools, const char *prefix)
{
    struct gw_server_config s;
    struct gw_transform tr = {.kind = GW_TRANSFORM_PREFIX, .add = (char *)prefix};

    memset(&s, 0, sizeof s);
    s.id = (char *)id;
    s.ok = true;
    s.load_tools = true;
    s.mode = GW_MODE_UNSET;
    s.transforms = prefix ? &tr : NULL;
    s.ntransforms = prefix != NULL;
    if (gw_catalog_commit(cat, gw_catalog_derive(&s, tools), GW_TOOL_CHANGES_WARN, NULL) < 0) {
        fprintf(stderr, "server %s refused\n", id);
        exit(2);
    }
}

/* ---- the baseline: plain Okapi BM25 over name + description ---- */

struct bdoc {
    const char *name;
    char **w;
    size_t n;
};

struct base {
    struct bdoc *d;
    size_t n;
    double avg;
};

static size_t words(const char *text, char ***out)
{
    size_t n = 0, cap = 16;
    char **w = malloc(cap * sizeof *w);

    for (const char *p = text; *p != '\0';) {
        size_t l = 0;
        while (*p != '\0' && !isalnum((unsigned char)*p))
            p++;
        while (isalnum((unsigned char)p[l]))
            l++;
        if (l == 0)
            break;
        if (n == cap)
            w = realloc(w, (cap *= 2) * sizeof *w);
        w[n] = strndup(p, l);
        for (char *c = w[n]; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        n++;
        p += l;
    }
    *out = w;
    return n;
}

static void base_build(struct base *b, const struct gw_catalog *cat)
{
    const struct gw_cat_toolset *ts;
    double sum = 0;

    for (size_t i = 0; (ts = gw_catalog_toolset_at(cat, i)) != NULL; i++) {
        for (size_t j = 0; j < gw_cat_toolset_ntools(ts); j++) {
            const struct gw_cat_tool *t = gw_cat_toolset_tool(ts, j);
            char *text;
            b->d = realloc(b->d, (b->n + 1) * sizeof *b->d);
            if (asprintf(&text, "%s %s", t->name, t->description) < 0)
                exit(2);
            b->d[b->n].name = t->name;
            b->d[b->n].n = words(text, &b->d[b->n].w);
            sum += (double)b->d[b->n].n;
            b->n++;
            free(text);
        }
    }
    b->avg = sum / (double)b->n;
}

static void base_free(struct base *b)
{
    for (size_t i = 0; i < b->n; i++) {
        for (size_t k = 0; k < b->d[i].n; k++)
            free(b->d[i].w[k]);
        free(b->d[i].w);
    }
    free(b->d);
}

struct scored {
    const char *name;
    double s;
};

static int by_score(const void *a, const void *b)
{
    const struct scored *x = a, *y = b;
    return x->s > y->s ? -1 : x->s < y->s;
}

/* Fills `out` with at most TOP names, best first; returns how many. */
static size_t base_query(const struct base *b, const char *q, const char **out)
{
    char **qw;
    size_t nq = words(q, &qw), n = 0;
    struct scored *sc = calloc(b->n, sizeof *sc);

    for (size_t i = 0; i < b->n; i++)
        sc[i].name = b->d[i].name;
    for (size_t k = 0; k < nq; k++) {
        size_t df = 0;
        double idf;
        bool dup = false;
        for (size_t j = 0; j < k; j++)
            dup = dup || strcmp(qw[j], qw[k]) == 0;
        if (dup)
            continue;
        for (size_t i = 0; i < b->n; i++) {
            for (size_t m = 0; m < b->d[i].n; m++) {
                if (strcmp(b->d[i].w[m], qw[k]) == 0) {
                    df++;
                    break;
                }
            }
        }
        idf = log(1.0 + ((double)b->n - (double)df + 0.5) / ((double)df + 0.5));
        for (size_t i = 0; i < b->n; i++) {
            double tf = 0;
            for (size_t m = 0; m < b->d[i].n; m++)
                tf += strcmp(b->d[i].w[m], qw[k]) == 0;
            if (tf > 0)
                sc[i].s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * (double)b->d[i].n / b->avg));
        }
    }
    qsort(sc, b->n, sizeof *sc, by_score);
    for (size_t i = 0; i < b->n && n < TOP && sc[i].s > 0; i++)
        out[n++] = sc[i].name;
    for (size_t k = 0; k < nq; k++)
        free(qw[k]);
    free(qw);
    free(sc);
    return n;
}

/* ---- quality ---- */

/* The final name of "server/original" in the catalog, or NULL. */
static const char *label_name(const struct gw_catalog *cat, const char *label)
{
    const char *slash = strchr(label, '/');
    char server[128];
    const struct gw_cat_toolset *ts;

    if (slash == NULL || (size_t)(slash - label) >= sizeof server)
        return NULL;
    snprintf(server, sizeof server, "%.*s", (int)(slash - label), label);
    if ((ts = gw_catalog_toolset(cat, server)) == NULL)
        return NULL;
    for (size_t i = 0; i < gw_cat_toolset_ntools(ts); i++)
        if (strcmp(gw_cat_toolset_tool(ts, i)->original_name, slash + 1) == 0)
            return gw_cat_toolset_tool(ts, i)->name;
    return NULL;
}

enum ranker { R_BASE, R_NOSYN, R_FULL, NRANKERS };
static const char *const ranker_name[NRANKERS] = {
    "Okapi BM25, name + description (baseline)",
    "mcpgw BM25F, no synonyms",
    "mcpgw BM25F + synonyms",
};

/* The server a task is for: its first relevant tool's. */
static void task_server(json_t *t, char *out, size_t cap)
{
    const char *l = json_string_value(json_array_get(json_object_get(t, "tools"), 0));
    snprintf(out, cap, "%.*s", (int)strcspn(l, "/"), l);
}

static void quality(struct gw_catalog *cat, json_t *tasks, const char *title, bool verbose)
{
    struct gw_toolsearch *ix = gw_toolsearch_new();
    struct base b = {0};
    double r1[NRANKERS] = {0}, r5[NRANKERS] = {0}, mrr[NRANKERS] = {0};
    size_t n = json_array_size(tasks), unservable = 0;

    printf("%s\n\n", title);
    base_build(&b, cat);
    gw_toolsearch_sync(ix, cat); /* whole: queries would otherwise step it within their budget */
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(tasks, i), *labels = json_object_get(t, "tools"), *l;
        const char *q = json_string_value(json_object_get(t, "q"));
        const char *want[8];
        size_t nwant = 0, li;

        json_array_foreach(labels, li, l)
        {
            const char *name = label_name(cat, json_string_value(l));
            if (name != NULL && nwant < 8)
                want[nwant++] = name;
        }
        unservable += nwant == 0; /* counted as a miss */
        for (int r = 0; r < NRANKERS; r++) {
            const char *got[TOP];
            struct gw_toolsearch_hit hits[TOP];
            size_t ngot, rank = 0;
            if (r == R_BASE) {
                ngot = base_query(&b, q, got);
            } else {
                ngot = gw_toolsearch_query(ix, cat, q, NULL,
                                           r == R_NOSYN ? GW_TOOLSEARCH_NO_SYNONYMS : 0, hits, TOP);
                for (size_t k = 0; k < ngot; k++)
                    got[k] = hits[k].tool->name;
            }
            for (size_t k = 0; k < ngot && rank == 0; k++)
                for (size_t w = 0; w < nwant; w++)
                    if (strcmp(got[k], want[w]) == 0)
                        rank = k + 1;
            r1[r] += rank == 1;
            r5[r] += rank >= 1 && rank <= 5;
            mrr[r] += rank ? 1.0 / (double)rank : 0;
            if (getenv("TS_RANKS") != NULL && r == R_FULL) {
                char sv[128];
                task_server(t, sv, sizeof sv);
                printf("rank %zu %s \"%s\" got %s\n", rank, sv, q, ngot ? got[0] : "");
            }
            if (verbose && r == R_FULL && (rank == 0 || rank > 5)) {
                printf("miss (rank %zu) \"%s\" wants %s; got", rank, q,
                       nwant ? want[0] : "(refused)");
                for (size_t k = 0; k < ngot && k < 3; k++)
                    printf(" %s", got[k]);
                printf("\n");
            }
        }
    }
    printf("| ranker | recall@1 | recall@5 | MRR |\n|---|---|---|---|\n");
    for (int r = 0; r < NRANKERS; r++)
        printf("| %s | %.3f | %.3f | %.3f |\n", ranker_name[r], r1[r] / (double)n,
               r5[r] / (double)n, mrr[r] / (double)n);
    printf("(%zu tasks", n);
    if (unservable > 0)
        printf("; %zu whose tools the catalog refuses (an inputSchema without \"type\": "
               "\"object\"), counted as misses",
               unservable);
    printf(")\n\n");
    base_free(&b);
    gw_toolsearch_free(ix);
}

/* ---- speed ---- */

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t served(const struct gw_catalog *cat)
{
    const struct gw_cat_toolset *ts;
    size_t n = 0;

    for (size_t i = 0; (ts = gw_catalog_toolset_at(cat, i)) != NULL; i++)
        n += gw_cat_toolset_ntools(ts);
    return n;
}

/* Steps the index to the catalog as the daemon's loop does; prints how
 * many steps, the longest, and the total. The first allocation of a few
 * KiB after a commit that freed thousands of small blocks makes glibc
 * consolidate them (tens of ms for 5,000 tools); whoever allocates first
 * pays it, in the daemon usually the commit's own follow-up, so it is
 * timed apart here. */
static void steps_row(const char *what, struct gw_toolsearch *ix, const struct gw_catalog *cat)
{
    double longest = 0, total = 0, t0 = now_us(), glibc;
    size_t n = 0, indexed = gw_toolsearch_indexed(ix);
    bool done;
    void *volatile block = malloc(4096);

    free(block);
    glibc = now_us() - t0;

    do {
        double t0 = now_us(), dt;
        done = gw_toolsearch_step(ix, cat, GW_TOOLSEARCH_SLICE_US);
        dt = now_us() - t0;
        total += dt;
        longest = dt > longest ? dt : longest;
        n++;
    } while (!done);
    printf("| %s | %zu | %zu | %.1f ms | %.1f ms | %.1f ms |\n", what,
           gw_toolsearch_indexed(ix) - indexed, n, longest / 1e3, total / 1e3, glibc / 1e3);
}

/* One server of 5,000 tools (the captured ones again, renamed), indexed
 * in steps of GW_TOOLSEARCH_SLICE_US; then one tool of it changes; then
 * it leaves. No step may hold the loop over 50 ms (issue 34). */
static void big_server(json_t *servers)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    json_t *tl = json_array();
    size_t copy = 0;

    while (json_array_size(tl) < 5000) {
        json_t *sv = json_array_get(servers, copy % json_array_size(servers)), *t;
        size_t i;
        json_array_foreach(json_object_get(sv, "tools"), i, t)
        {
            char name[80];
            json_t *c;
            if (json_array_size(tl) == 5000)
                break;
            c = json_deep_copy(t);
            snprintf(name, sizeof name, "c%zu_%s", copy,
                     json_string_value(json_object_get(t, "name")));
            json_object_set_new(c, "name", json_string(name));
            json_array_append_new(tl, c);
        }
        copy++;
    }
    commit(cat, "big", tl, NULL);
    printf("| one server of 5,000 tools, steps of %d ms | tools indexed | steps | longest step | "
           "total | glibc's consolidation before |\n|---|---|---|---|---|---|\n",
           GW_TOOLSEARCH_SLICE_US / 1000);
    steps_row("first index", ix, cat);
    json_object_set_new(json_array_get(tl, 17), "description", json_string("Changed."));
    commit(cat, "big", tl, NULL);
    steps_row("one tool's description changed", ix, cat);
    gw_catalog_remove(cat, "big", NULL);
    steps_row("the server left", ix, cat);
    printf("\nindex memory after it left: %.0f KiB\n\n", (double)gw_toolsearch_memory(ix) / 1024.0);
    json_decref(tl);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}

static void speed(json_t *servers, json_t *tasks)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    struct gw_toolsearch_hit hits[GW_TOOLSEARCH_LIMIT_DEFAULT];
    size_t ntasks = json_array_size(tasks), nt, rounds = 20, nq = 0, copy = 0;
    double t0, *lat, worst = 0;
    json_t *first = NULL;

    /* Copies of the captured servers under new ids, with the tool names
     * prefixed so that none collides, until 2,000 tools are served. */
    while (served(cat) < 2000) {
        json_t *s = json_array_get(servers, copy % json_array_size(servers)), *tl, *t;
        char id[64];
        size_t i;
        snprintf(id, sizeof id, "%s%zu", json_string_value(json_object_get(s, "id")), copy);
        tl = json_array();
        json_array_foreach(json_object_get(s, "tools"), i, t)
        {
            json_t *c;
            char name[80];
            if (served(cat) + i >= 2000)
                break;
            c = json_copy(t);
            snprintf(name, sizeof name, "c%zu_%s", copy,
                     json_string_value(json_object_get(t, "name")));
            json_object_set_new(c, "name", json_string(name));
            json_array_append_new(tl, c);
        }
        if (first == NULL)
            first = json_incref(tl);
        commit(cat, id, tl, NULL);
        json_decref(tl);
        copy++;
    }
    nt = served(cat);
    t0 = now_us();
    gw_toolsearch_sync(ix, cat);
    t0 = now_us() - t0;
    gw_toolsearch_query(ix, cat, "list", NULL, 0, hits, 1); /* its scratch counts too */
    printf("| tools | index build | index memory | per 1,000 tools |\n|---|---|---|---|\n");
    printf("| %zu | %.1f ms | %.0f KiB | %.0f KiB |\n\n", nt, t0 / 1e3,
           (double)gw_toolsearch_memory(ix) / 1024.0,
           (double)gw_toolsearch_memory(ix) / 1024.0 / ((double)nt / 1000.0));
    /* One server's toolset changes (a description): only it is re-indexed. */
    {
        json_t *tl = json_deep_copy(first);
        size_t re;
        json_object_set_new(json_array_get(tl, 0), "description", json_string("Changed."));
        commit(cat, json_string_value(json_object_get(json_array_get(servers, 0), "id")), tl, NULL);
        json_decref(tl);
        t0 = now_us();
        re = gw_toolsearch_sync(ix, cat);
        printf("re-index after one server's commit: %zu toolset(s), %.0f µs\n\n", re,
               now_us() - t0);
    }
    lat = calloc(ntasks * rounds, sizeof *lat);
    for (size_t r = 0; r < rounds; r++) {
        for (size_t i = 0; i < ntasks; i++) {
            const char *q = json_string_value(json_object_get(json_array_get(tasks, i), "q"));
            t0 = now_us();
            gw_toolsearch_query(ix, cat, q, NULL, 0, hits, GW_TOOLSEARCH_LIMIT_DEFAULT);
            lat[nq++] = now_us() - t0;
        }
    }
    /* The worst query's best time: what a query costs when the core is not
     * taken by another process meanwhile (a shared machine's p99 is mostly
     * preemption). */
    for (size_t i = 0; i < ntasks; i++) {
        double best = lat[i];
        for (size_t r = 1; r < rounds; r++)
            if (lat[r * ntasks + i] < best)
                best = lat[r * ntasks + i];
        if (best > worst)
            worst = best;
    }
    qsort(lat, nq, sizeof *lat, by_double);
    printf("| search over %zu tools (%zu queries, limit 10) | p50 | p90 | p99 | max | slowest "
           "query's best |\n|---|---|---|---|---|---|\n",
           nt, nq);
    printf("| one query | %.0f µs | %.0f µs | %.0f µs | %.0f µs | %.0f µs |\n", lat[nq / 2],
           lat[nq * 9 / 10], lat[nq * 99 / 100], lat[nq - 1], worst);
    free(lat);
    json_decref(first);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}

/* The external set: {"servers": {id: {"tools": […]}}}, each server under
 * the prefix "<id>_", as its README says users run it. */
static struct gw_catalog *external_catalog(json_t *catalog)
{
    struct gw_catalog *cat = gw_catalog_new();
    const char *id;
    json_t *s;

    json_object_foreach(json_object_get(catalog, "servers"), id, s)
    {
        char prefix[80];
        snprintf(prefix, sizeof prefix, "%s_", id);
        commit(cat, id, json_object_get(s, "tools"), prefix);
    }
    return cat;
}

/* {"q", "relevant": [...]} lines as {"q", "tools": [...]}. */
static json_t *external_tasks(const char *path)
{
    FILE *f = fopen(path, "r");
    json_t *tasks = json_array();
    char line[8192];

    if (f == NULL) {
        perror(path);
        exit(2);
    }
    while (fgets(line, sizeof line, f) != NULL) {
        json_error_t err;
        json_t *t = json_loads(line, 0, &err);
        if (t == NULL)
            continue;
        json_array_append_new(tasks, json_pack("{s:O, s:O}", "q", json_object_get(t, "q"), "tools",
                                               json_object_get(t, "relevant")));
        json_decref(t);
    }
    fclose(f);
    return tasks;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Splits tasks into two folds by server: the servers, sorted, alternately. */
static void folds(json_t *tasks, json_t *fold[2])
{
    const char *ids[256];
    char sv[128];
    size_t n = 0, i, k;
    json_t *t;

    json_array_foreach(tasks, i, t)
    {
        task_server(t, sv, sizeof sv);
        for (k = 0; k < n && strcmp(ids[k], sv) != 0; k++)
            ;
        if (k == n && n < 256)
            ids[n++] = strdup(sv);
    }
    qsort(ids, n, sizeof *ids, by_str);
    fold[0] = json_array();
    fold[1] = json_array();
    json_array_foreach(tasks, i, t)
    {
        task_server(t, sv, sizeof sv);
        for (k = 0; k < n && strcmp(ids[k], sv) != 0; k++)
            ;
        json_array_append(fold[k % 2], t);
    }
    for (k = 0; k < n; k++)
        free((char *)ids[k]);
}

int main(int argc, char **argv)
{
    json_t *catalog, *tasks, *s;
    struct gw_catalog *cat;
    size_t i, ntools = 0;
    bool verbose = false;
    int nargs = 0;
    const char *args[4];

    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-v") == 0)
            verbose = true;
        else if (nargs < 4)
            args[nargs++] = argv[a];
    }
    if (nargs != 2 && nargs != 4) {
        fprintf(stderr,
                "usage: %s CATALOG.json TASKS.json [EXT_CATALOG.json EXT_TASKS.jsonl] [-v]\n",
                argv[0]);
        return 2;
    }
    /* cross-validation: struct gw_ts_weights, its numbers in order */
    if (getenv("TS_TUNE") != NULL) {
        struct gw_ts_weights w;
        double *v = (double *)&w;
        const char *p = getenv("TS_TUNE");
        for (size_t k = 0; k < sizeof w / sizeof(double); k++) {
            char *end;
            v[k] = strtod(p, &end);
            p = *end == ',' ? end + 1 : end;
        }
        gw_ts_tune(&w, NULL);
    }
    catalog = load(args[0]);
    tasks = load(args[1]);
    cat = gw_catalog_new();
    /* A server whose tool names are taken gets its id as a prefix. */
    json_array_foreach(json_object_get(catalog, "servers"), i, s)
    {
        const char *id = json_string_value(json_object_get(s, "id"));
        char prefix[80];
        bool taken = false;
        json_t *t;
        size_t k;
        json_array_foreach(json_object_get(s, "tools"), k, t) taken =
            taken || gw_catalog_lookup(cat, json_string_value(json_object_get(t, "name")));
        snprintf(prefix, sizeof prefix, "%s_", id);
        commit(cat, id, json_object_get(s, "tools"), taken ? prefix : NULL);
        ntools += json_array_size(json_object_get(s, "tools"));
    }
    printf("catalog: %zu servers, %zu tools listed, %zu served\n\n",
           json_array_size(json_object_get(catalog, "servers")), ntools, served(cat) - 1);
    quality(cat, json_object_get(tasks, "tasks"), "**mcpgw's own tasks** (toolsearch/tasks.json)",
            verbose);
    if (nargs == 4) {
        json_t *ext = load(args[2]), *etasks = external_tasks(args[3]), *fold[2];
        struct gw_catalog *ecat = external_catalog(ext);
        printf("external set: %zu servers, %zu tools served, %zu tasks\n\n",
               json_object_size(json_object_get(ext, "servers")), served(ecat) - 1,
               json_array_size(etasks));
        folds(etasks, fold);
        quality(ecat, fold[0], "**external, fold A** (ranking tuned on it)", verbose);
        /* TS_TUNING: fold B stays unseen while a change is chosen */
        if (getenv("TS_TUNING") == NULL) {
            quality(ecat, fold[1], "**external, fold B** (not tuned on; its misses read once)",
                    verbose);
            quality(ecat, etasks, "**external, all**", false);
        }
        json_decref(fold[0]);
        json_decref(fold[1]);
        json_decref(etasks);
        json_decref(ext);
        gw_catalog_free(ecat);
    }
    if (getenv("TS_QUALITY_ONLY") == NULL) {
        speed(json_object_get(catalog, "servers"), json_object_get(tasks, "tasks"));
        big_server(json_object_get(catalog, "servers"));
    }
    gw_catalog_free(cat);
    json_decref(catalog);
    json_decref(tasks);
    return 0;
}
