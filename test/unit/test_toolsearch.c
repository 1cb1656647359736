/* Unit tests of tool search (issue 29): the tokenizer and stemmer, the
 * synonym table, BM25F ranking and its name matches, the incremental
 * index (only the toolsets a commit changed are indexed again, in steps,
 * forgetting what left, bounded per tool), query
 * checks and the per-dialog activations. */
#include "gw/toolsearch_internal.h"
#include "gw/util.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct gw_server_config server(const char *id)
{
    struct gw_server_config s;

    memset(&s, 0, sizeof(s));
    s.id = (char *)id;
    s.ok = true;
    s.load_tools = true;
    s.mode = GW_MODE_UNSET;
    return s;
}

/* Commits `id` with tools given as name, description pairs (NULL ends). */
static void put(struct gw_catalog *cat, const char *id, ...)
{
    struct gw_server_config s = server(id);
    json_t *list = json_array();
    va_list ap;

    va_start(ap, id);
    for (const char *n = va_arg(ap, const char *); n != NULL; n = va_arg(ap, const char *)) {
        const char *d = va_arg(ap, const char *);
        json_array_append_new(list, json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}}}}", "name", n,
                                              "description", d, "inputSchema", "type", "object",
                                              "properties", "target", "type", "string",
                                              "description", "what it acts on"));
    }
    va_end(ap);
    ck_assert_int_ge(
        gw_catalog_commit(cat, gw_catalog_derive(&s, list), GW_TOOL_CHANGES_WARN, NULL), 0);
    json_decref(list);
}

struct toks {
    char v[16][GW_TOOLSEARCH_TOKEN_MAX];
    size_t n;
};

static void tok(const char *w, void *arg)
{
    struct toks *t = arg;

    if (t->n < 16)
        snprintf(t->v[t->n++], sizeof t->v[0], "%s", w);
}

static char *joined(const char *text)
{
    struct toks t = {0};
    static char out[256];

    gw_toolsearch_tokens(text, strlen(text), tok, &t);
    out[0] = '\0';
    for (size_t i = 0; i < t.n; i++) {
        if (i > 0)
            strcat(out, " ");
        strcat(out, t.v[i]);
    }
    return out;
}

START_TEST(test_tokens_split_identifiers)
{
    ck_assert_str_eq(joined("getHTTPServer2"), "get http server 2");
    ck_assert_str_eq(joined("browser_take_screenshot"), "browser take screenshot");
    ck_assert_str_eq(joined("API-retrieve-a-page"), "api retriev page");
    ck_assert_str_eq(joined("v1.tools/list"), "1 tool list");
    ck_assert_str_eq(joined("s3Bucket"), "3 bucket");
    ck_assert_str_eq(joined("open PRs and URLs"), "open pr url");
    ck_assert_str_eq(joined("caf\xc3\xa9Menu"), "caf\xc3\xa9 menu");
    /* stop words and one-letter words go; the rest is lower-cased */
    ck_assert_str_eq(joined("Take a screenshot of THE page"), "take screenshot page");
    ck_assert_str_eq(joined("  "), "");
}
END_TEST

/* Two buffers in turn, so that stem(x) and stem(y) can be compared. */
static const char *stem(const char *w)
{
    static char b[2][GW_TOOLSEARCH_TOKEN_MAX];
    static int i;

    i = !i;
    snprintf(b[i], sizeof b[i], "%s", w);
    gw_toolsearch_stem(b[i]);
    return b[i];
}

START_TEST(test_stemmer)
{
    /* the forms of one word meet */
    ck_assert_str_eq(stem("issues"), stem("issue"));
    ck_assert_str_eq(stem("created"), stem("create"));
    ck_assert_str_eq(stem("creating"), stem("creates"));
    ck_assert_str_eq(stem("repositories"), stem("repository"));
    ck_assert_str_eq(stem("running"), "run");
    ck_assert_str_eq(stem("stopped"), "stop");
    ck_assert_str_eq(stem("branches"), "branch");
    ck_assert_str_eq(stem("listing"), "list");
    /* and short or Latin-ending words are left alone */
    ck_assert_str_eq(stem("pass"), "pass");
    ck_assert_str_eq(stem("status"), "status");
    ck_assert_str_eq(stem("analysis"), "analysis");
    ck_assert_str_eq(stem("added"), "add");
    ck_assert_str_eq(stem("filled"), "fill");
    ck_assert_str_eq(stem("go"), "go");
    /* issue 34: a suffix that took an e gives it back, so the forms meet */
    ck_assert_str_eq(stem("making"), stem("make"));
    ck_assert_str_eq(stem("named"), stem("name"));
    ck_assert_str_eq(stem("typing"), stem("type"));
    ck_assert_str_eq(stem("sizes"), stem("size"));
    ck_assert_str_eq(stem("sized"), stem("size"));
    ck_assert_str_eq(stem("fixed"), "fix");
    ck_assert_str_eq(stem("getting"), "get");
    /* issue 34 item 11: irregular forms meet their word */
    ck_assert_str_eq(stem("wrote"), stem("write"));
    ck_assert_str_eq(stem("written"), stem("writes"));
    ck_assert_str_eq(stem("sent"), stem("send"));
    ck_assert_str_eq(stem("built"), stem("building"));
    ck_assert_str_eq(stem("children"), stem("child"));
    ck_assert_str_eq(stem("people"), stem("persons"));
}
END_TEST

START_TEST(test_synonyms)
{
    const char *out[32];
    double w[32];
    size_t n = gw_toolsearch_synonyms(stem("delete"), out, w, 32);
    bool remove = false;

    for (size_t i = 0; i < n; i++) {
        ck_assert(w[i] > 0 && w[i] < 1);
        ck_assert_str_ne(out[i], stem("delete"));
        remove = remove || strcmp(out[i], stem("remove")) == 0;
    }
    ck_assert(remove);
    ck_assert_uint_eq(gw_toolsearch_synonyms("zzzz", out, w, 32), 0);
    ck_assert_uint_le(gw_toolsearch_synonyms(stem("list"), out, w, 2), 2);
}
END_TEST

/* A query's first step builds the whole index, however slow the machine
 * (the tests of stepping set their own budget). */
static void whole(struct gw_toolsearch *ix)
{
    gw_toolsearch_set_slice(ix, 60u * 1000 * 1000);
}

static struct gw_catalog *sample(void)
{
    struct gw_catalog *cat = gw_catalog_new();

    put(cat, "github", "create_issue", "Create a new issue in a GitHub repository", "list_commits",
        "Get list of commits of a branch in a GitHub repository", "search_code",
        "Search for code across GitHub repositories", NULL);
    put(cat, "playwright", "browser_navigate", "Navigate to a URL", "browser_take_screenshot",
        "Take a screenshot of the current page", "browser_click", "Perform click on a web page",
        NULL);
    put(cat, "slack", "slack_post_message", "Post a new message to a Slack channel", NULL);
    return cat;
}

static const char *first(struct gw_toolsearch *ix, struct gw_catalog *cat, const char *q,
                         unsigned flags)
{
    struct gw_toolsearch_hit h[5];

    return gw_toolsearch_query(ix, cat, q, NULL, flags, h, 5) > 0 ? h[0].tool->name : "";
}

START_TEST(test_ranking)
{
    struct gw_catalog *cat = sample();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    struct gw_toolsearch_hit h[10];
    size_t n;

    whole(ix);
    ck_assert_str_eq(first(ix, cat, "take a screenshot of the page", 0), "browser_take_screenshot");
    ck_assert_str_eq(first(ix, cat, "github issues", 0), "create_issue");
    ck_assert_str_eq(first(ix, cat, "show the commits on main", 0), "list_commits");
    /* only through the synonym table: remove nothing, "send" → post */
    ck_assert_str_eq(first(ix, cat, "send a note to the team channel", 0), "slack_post_message");
    ck_assert_str_eq(first(ix, cat, "go to a website", 0), "browser_navigate");
    ck_assert_str_eq(first(ix, cat, "go to a website", GW_TOOLSEARCH_NO_SYNONYMS), "");
    /* exact and prefix names rank first, with a score far above words */
    ck_assert_str_eq(first(ix, cat, "browser_click", 0), "browser_click");
    ck_assert_str_eq(first(ix, cat, "Browser-Cl", 0), "browser_click");
    n = gw_toolsearch_query(ix, cat, "browser", NULL, 0, h, 10);
    ck_assert_uint_ge(n, 3);
    for (size_t i = 1; i < n; i++)
        ck_assert(h[i - 1].score >= h[i].score);
    /* the three browser tools prefix-match; a tie keeps catalog order */
    ck_assert_str_eq(h[0].tool->name, "browser_navigate");
    ck_assert(h[2].score > 1000 && (n == 3 || h[3].score < 1000));
    /* toolset filter, limit, no match */
    n = gw_toolsearch_query(ix, cat, "create new", "slack,nosuch", 0, h, 10);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(h[i].tool->toolset, "slack");
    ck_assert_uint_eq(gw_toolsearch_query(ix, cat, "page", NULL, 0, h, 1), 1);
    ck_assert_uint_eq(gw_toolsearch_query(ix, cat, "zzzqqq", NULL, 0, h, 10), 0);
    ck_assert_uint_eq(gw_toolsearch_query(ix, cat, "page", NULL, 0, h, 0), 0);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* Each two words of letters with one blank or hyphen between, joined. */
static void compound(const char *w, void *arg)
{
    char *out = arg;

    if (out[0] != '\0')
        strcat(out, " ");
    strcat(out, w);
}

START_TEST(test_compounds)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    char out[256] = "";
    const char *q = "roll back, sign-in  now getFile v2 up";

    gw_toolsearch_compounds(q, strlen(q), compound, out);
    ck_assert_str_eq(out, "rollback signin");
    /* "roll back the release" finds the tool named for a rollback, which
     * says neither word apart, not the one that backs a release up */
    put(cat, "deploy", "release_rollback", "Return a release to its last good state",
        "release_back_up", "Back up a release and its notes to storage", NULL);
    whole(ix);
    ck_assert_str_eq(first(ix, cat, "roll back the release", 0), "release_rollback");
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

START_TEST(test_incremental)
{
    struct gw_catalog *cat = sample();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    size_t mem;

    ck_assert_uint_eq(gw_toolsearch_sync(ix, cat), 4); /* mcp_admin and three servers */
    ck_assert_uint_eq(gw_toolsearch_sync(ix, cat), 0);
    mem = gw_toolsearch_memory(ix);
    ck_assert_uint_gt(mem, 0);
    /* one server changes: only its toolset is indexed again */
    put(cat, "slack", "slack_add_reaction", "Add a reaction emoji to a message", NULL);
    ck_assert_uint_eq(gw_toolsearch_sync(ix, cat), 1);
    ck_assert_str_eq(first(ix, cat, "add an emoji", 0), "slack_add_reaction");
    ck_assert_str_ne(first(ix, cat, "slack_post_message", 0), "slack_post_message");
    /* a removed server leaves the index */
    ck_assert_int_eq(gw_catalog_remove(cat, "playwright", NULL), 1);
    ck_assert_uint_eq(gw_toolsearch_sync(ix, cat), 1);
    ck_assert_str_eq(first(ix, cat, "take a screenshot", 0), "");
    /* the same commit again changes nothing the index sees */
    put(cat, "slack", "slack_add_reaction", "Add a reaction emoji to a message", NULL);
    ck_assert_uint_eq(gw_toolsearch_sync(ix, cat), 0);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* A word of letters for `v` ("qb", "qc", …) and a blank; its length. */
static size_t letters(char *out, int v)
{
    size_t n = 0;

    out[n++] = 'q';
    do {
        out[n++] = (char)('b' + v % 24);
        v /= 24;
    } while (v > 0);
    out[n++] = ' ';
    out[n] = '\0';
    return n;
}

/* Commits `id` with `n` tools whose descriptions hold fresh words. */
static void put_fresh(struct gw_catalog *cat, const char *id, int n, int round)
{
    struct gw_server_config s = server(id);
    json_t *list = json_array();
    char name[32], desc[1024];

    for (int i = 0; i < n; i++) {
        size_t len = 0;
        snprintf(name, sizeof name, "tool_%d", i);
        for (int w = 0; w < 20; w++)
            len += letters(desc + len, (round * 1000 + i) * 20 + w);
        json_array_append_new(list, json_pack("{s:s, s:s, s:{s:s}}", "name", name, "description",
                                              desc, "inputSchema", "type", "object"));
    }
    ck_assert_int_ge(
        gw_catalog_commit(cat, gw_catalog_derive(&s, list), GW_TOOL_CHANGES_WARN, NULL), 0);
    json_decref(list);
}

/* Issue 34: the words of tools that left go with them; the index of a
 * server that re-lists with new words does not grow. */
START_TEST(test_forgets)
{
    struct gw_catalog *cat = sample();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    size_t base, one;
    char word[16];

    gw_toolsearch_sync(ix, cat);
    base = gw_toolsearch_memory(ix);
    put_fresh(cat, "churn", 300, 0);
    gw_toolsearch_sync(ix, cat);
    one = gw_toolsearch_memory(ix);
    letters(word, 7 * 20 + 3);
    ck_assert_str_eq(first(ix, cat, word, 0), "tool_7");
    for (int r = 1; r <= 10; r++) {
        put_fresh(cat, "churn", 300, r);
        gw_toolsearch_sync(ix, cat);
    }
    ck_assert_str_eq(first(ix, cat, word, 0), "");
    letters(word, (10 * 1000 + 7) * 20 + 3);
    ck_assert_str_eq(first(ix, cat, word, 0), "tool_7");
    ck_assert_uint_le(gw_toolsearch_memory(ix), 2 * one);
    /* and a server that leaves takes its words along */
    ck_assert_int_eq(gw_catalog_remove(cat, "churn", NULL), 1);
    gw_toolsearch_sync(ix, cat);
    ck_assert_uint_le(gw_toolsearch_memory(ix), base + (one - base) / 4);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* Issue 34: a build goes in steps, the previous documents served until
 * the new ones are complete. */
START_TEST(test_steps)
{
    struct gw_catalog *cat = sample();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    size_t steps = 0;

    ck_assert(!gw_toolsearch_in_use(ix));
    gw_toolsearch_sync(ix, cat);
    ck_assert(gw_toolsearch_in_use(ix));
    put(cat, "github", "create_issue", "Open a new ticket in a GitHub repository", "list_commits",
        "Get list of commits of a branch in a GitHub repository", "search_code",
        "Search for code across GitHub repositories", "fork_repository", "Fork it", "get_me",
        "Who am I", NULL);
    gw_toolsearch_set_slice(ix, 0); /* a query does one tool's worth */
    ck_assert(!gw_toolsearch_step(ix, cat, 0));
    ck_assert_str_eq(first(ix, cat, "issue", 0), "create_issue");
    ck_assert_str_eq(first(ix, cat, "ticket", GW_TOOLSEARCH_NO_SYNONYMS), "");
    while (!gw_toolsearch_step(ix, cat, 0))
        ck_assert_uint_lt(++steps, 100);
    ck_assert_uint_ge(steps, 1);
    ck_assert_str_eq(first(ix, cat, "ticket", GW_TOOLSEARCH_NO_SYNONYMS), "create_issue");
    /* a commit during a build starts it again from the newest listing */
    put(cat, "github", "create_issue", "one", "list_commits", "two", "search_code", "three", NULL);
    ck_assert(!gw_toolsearch_step(ix, cat, 0));
    put(cat, "github", "create_issue", "four", "list_commits", "five", "search_code", "six", NULL);
    ck_assert_uint_eq(gw_toolsearch_sync(ix, cat), 1);
    ck_assert_str_eq(first(ix, cat, "six", GW_TOOLSEARCH_NO_SYNONYMS), "search_code");
    ck_assert_str_eq(first(ix, cat, "three", GW_TOOLSEARCH_NO_SYNONYMS), "");
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

static bool not_linear(const char *toolset, void *arg)
{
    (void)arg;
    return strcmp(toolset, "linear") != 0;
}

/* Issue 34 item 10 without a silent first answer: a query that searches
 * a toolset never indexed steps on, up to the first budget, before it
 * ranks; one that could not finish says what it misses; a query of other
 * toolsets does not wait for it (and a toolset being re-indexed is served
 * from its old version meanwhile: test_steps). */
START_TEST(test_first_query)
{
    struct gw_catalog *cat = sample();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    struct gw_toolsearch_hit h[5];
    size_t tools = 0;
    json_t *j;

    gw_toolsearch_set_slice(ix, 0); /* a step is one tool's worth */
    /* slack is indexed last: one step would not reach it */
    ck_assert_str_eq(first(ix, cat, "post a message to slack", 0), "slack_post_message");
    ck_assert_uint_eq(gw_toolsearch_unindexed(ix, NULL, NULL, NULL, &tools), 0);
    ck_assert_uint_eq(tools, 0);

    put(cat, "linear", "linear_create_ticket", "File a ticket", "linear_update_ticket", "Edit it",
        "linear_get_ticket", "Read it", "linear_list_projects", "Projects", "linear_list_teams",
        "List the teams", NULL);
    /* a query of other toolsets: one step, and linear is not missed */
    ck_assert_uint_eq(gw_toolsearch_query(ix, cat, "issue", "github", 0, h, 5), 1);
    ck_assert_uint_eq(gw_toolsearch_unindexed(ix, "github", NULL, NULL, &tools), 0);
    ck_assert_uint_eq(gw_toolsearch_unindexed(ix, NULL, NULL, NULL, &tools), 1);
    ck_assert_uint_eq(tools, 5);
    /* nor for a caller who may not see it (a client's policy) */
    ck_assert_uint_eq(gw_toolsearch_unindexed(ix, NULL, not_linear, NULL, &tools), 0);
    /* no budget beyond the one step: the answer misses linear and says so */
    gw_toolsearch_set_first(ix, 0);
    j = gw_toolsearch_json(ix, cat, "teams", NULL, GW_TOOL_FORMAT_MCP, 5, NULL, NULL);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "tools")), 0);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(j, "indexing"), "toolsets")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "indexing"), "tools")),
                     5);
    json_decref(j);
    /* with it, the next query completes linear first */
    gw_toolsearch_set_first(ix, GW_TOOLSEARCH_FIRST_US);
    j = gw_toolsearch_json(ix, cat, "teams", NULL, GW_TOOL_FORMAT_MCP, 5, NULL, NULL);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(json_object_get(j, "tools"), 0), "name")),
        "linear_list_teams");
    ck_assert_ptr_null(json_object_get(j, "indexing"));
    json_decref(j);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* What a tool can make the index hold is bounded. */
START_TEST(test_bounds)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    struct gw_server_config s = server("huge");
    size_t cap = 200000, len = 0, mem;
    char *desc = malloc(cap + 16);
    json_t *list;

    for (int v = 0; len < cap; v++)
        len += letters(desc + len, v);
    list = json_pack("[{s:s, s:s, s:{s:s}}]", "name", "huge_tool", "description", desc,
                     "inputSchema", "type", "object");
    ck_assert_int_ge(
        gw_catalog_commit(cat, gw_catalog_derive(&s, list), GW_TOOL_CHANGES_WARN, NULL), 0);
    json_decref(list);
    gw_toolsearch_sync(ix, cat);
    mem = gw_toolsearch_memory(ix);
    /* 512 words at most, each well under 200 bytes with its posting */
    ck_assert_uint_lt(mem, 200 * GW_TOOLSEARCH_DOC_TERMS_MAX);
    letters(desc, 3);
    ck_assert_str_eq(first(ix, cat, desc, 0), "huge_tool");
    letters(desc, 20000);
    ck_assert_str_eq(first(ix, cat, desc, 0), "");
    free(desc);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* Issue 34: words the catalog relates: "login" is said of the tools named
 * *_user, so a *_user tool that never says login is found too; and what
 * a path in a query stands for. */
START_TEST(test_associations)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    struct gw_toolsearch_hit h[10];
    size_t n;
    bool found = false;

    whole(ix);
    put(cat, "auth", "create_user", "Create a user who can login", "delete_user",
        "Delete a user: no more login", "get_user_profile", "Profile details", "list_logs",
        "List the logs", NULL);
    n = gw_toolsearch_query(ix, cat, "login", NULL, 0, h, 10);
    for (size_t i = 0; i < n; i++)
        found = found || strcmp(h[i].tool->name, "get_user_profile") == 0;
    ck_assert(found);
    ck_assert_uint_eq(gw_toolsearch_query(ix, cat, "login", NULL, GW_TOOLSEARCH_NO_SYNONYMS, h, 10),
                      2);
    /* a path or a file name in the query stands for a file or a directory */
    put(cat, "fs", "read_text", "Read the contents of a file", "list_dir", "What a directory holds",
        NULL);
    ck_assert_str_eq(first(ix, cat, "notes.txt", 0), "read_text");
    ck_assert_str_eq(first(ix, cat, "'notes.txt'?", 0), "read_text");
    ck_assert_str_eq(first(ix, cat, "~/projects/src", 0), "list_dir");
    ck_assert_str_eq(first(ix, cat, "notes.txt", GW_TOOLSEARCH_NO_SYNONYMS), "");
    ck_assert_str_ne(first(ix, cat, "version 2.3", 0), "read_text");
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* Issue 34: a re-index costs what changed: one tool of 300 changed, one
 * tool is indexed again; the others are served all along. */
START_TEST(test_reindex_changed)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    struct gw_server_config s = server("big");
    json_t *list = json_array();
    char name[32], desc[64];
    size_t before;

    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "tool_%d", i);
        letters(desc, i);
        json_array_append_new(list, json_pack("{s:s, s:s, s:{s:s}}", "name", name, "description",
                                              desc, "inputSchema", "type", "object"));
    }
    ck_assert_int_ge(
        gw_catalog_commit(cat, gw_catalog_derive(&s, list), GW_TOOL_CHANGES_WARN, NULL), 0);
    gw_toolsearch_sync(ix, cat);
    before = gw_toolsearch_indexed(ix);
    ck_assert_uint_eq(before, 301); /* and mcp_release */
    json_object_set_new(json_array_get(list, 17), "description", json_string("Changed words"));
    json_array_remove(list, 3);
    ck_assert_int_ge(
        gw_catalog_commit(cat, gw_catalog_derive(&s, list), GW_TOOL_CHANGES_WARN, NULL), 0);
    ck_assert_uint_eq(gw_toolsearch_sync(ix, cat), 1);
    ck_assert_uint_eq(gw_toolsearch_indexed(ix) - before, 1);
    ck_assert_str_eq(first(ix, cat, "changed words", 0), "tool_17");
    letters(desc, 17);
    ck_assert_str_eq(first(ix, cat, desc, 0), "");
    letters(desc, 3);
    ck_assert_str_eq(first(ix, cat, desc, 0), "");
    letters(desc, 250);
    ck_assert_str_eq(first(ix, cat, desc, 0), "tool_250");
    json_decref(list);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* Issue 34: a parameter's enum values are the tool's words too ("closed"
 * for a state), and a change of them re-indexes the tool. */
START_TEST(test_enum_values)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    struct gw_server_config s = server("tracker");
    json_t *list =
        json_pack("[{s:s, s:s, s:{s:s, s:{s:{s:s, s:[s, s]}}}}, {s:s, s:s, s:{s:s}}]", "name",
                  "update_item", "description", "Change an item", "inputSchema", "type", "object",
                  "properties", "state", "type", "string", "enum", "open", "closed", "name",
                  "get_item", "description", "Read an item", "inputSchema", "type", "object");

    ck_assert_int_ge(
        gw_catalog_commit(cat, gw_catalog_derive(&s, list), GW_TOOL_CHANGES_WARN, NULL), 0);
    gw_toolsearch_sync(ix, cat);
    ck_assert_str_eq(first(ix, cat, "close it", GW_TOOLSEARCH_NO_SYNONYMS), "update_item");
    json_array_set_new(
        json_object_get(
            json_object_get(json_object_get(json_object_get(json_array_get(list, 0), "inputSchema"),
                                            "properties"),
                            "state"),
            "enum"),
        1, json_string("archived"));
    ck_assert_int_ge(
        gw_catalog_commit(cat, gw_catalog_derive(&s, list), GW_TOOL_CHANGES_WARN, NULL), 0);
    gw_toolsearch_sync(ix, cat);
    ck_assert_str_eq(first(ix, cat, "close it", GW_TOOLSEARCH_NO_SYNONYMS), "");
    ck_assert_str_eq(first(ix, cat, "archived", GW_TOOLSEARCH_NO_SYNONYMS), "update_item");
    json_decref(list);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* Issue 34: a tool's name coverage leaves out its toolset's name, which
 * prefixes say twice (a server's own prefix under the operator's): the
 * query's word is the whole of what discord_discord_send does. */
START_TEST(test_cover_prefix)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();

    whole(ix);
    put(cat, "discord", "discord_discord_send", "Posts text.", NULL);
    put(cat, "queue", "send_later", "Posts text later.", NULL);
    ck_assert_str_eq(first(ix, cat, "send it", 0), "discord_discord_send");
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* Issue 34: a question asks to read: of two tools equally worded, the
 * one whose name reads ranks first; an order does not ask it. */
START_TEST(test_question)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();

    whole(ix);
    put(cat, "weather", "create_forecast", "Forecast.", "get_forecast",
        "The forecast of a city for the coming days.", NULL);
    ck_assert_str_eq(first(ix, cat, "what is the forecast for Paris?", 0), "get_forecast");
    ck_assert_str_eq(first(ix, cat, "which forecast holds for Paris", 0), "get_forecast");
    ck_assert_str_eq(first(ix, cat, "forecast for Paris", 0), "create_forecast");
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* Issue 34: a tool without a title is summed up by its description's
 * first sentence, which counts as a title: what a tool does outweighs
 * what its notes mention. */
START_TEST(test_summary)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();

    whole(ix);
    put(cat, "photos", "photo_a", "Rotate a photo. Keeps the colours, the size and the metadata.",
        "photo_b", "Crop a photo. Rotate it if asked.", NULL);
    ck_assert_str_eq(first(ix, cat, "rotate", 0), "photo_a");
    /* the first sentence past a blank line, a heading and a list marker */
    put(cat, "images", "image_a",
        "\n    Purpose:\n      1. Flips an image. Keeps the colours, the size and the metadata.",
        "image_b", "Crop an image. Flip it if asked.", NULL);
    ck_assert_str_eq(first(ix, cat, "flip", 0), "image_a");
    /* the section headed as the summary, whatever comes first */
    put(cat, "videos", "video_a",
        "\n  Guardrails:\n    1. Warning: this tool changes the file.\n\n  Purpose:\n    1. "
        "Reverses a video.\n",
        "video_b", "Trim a video. Reverse it if asked.", NULL);
    ck_assert_str_eq(first(ix, cat, "reverse", 0), "video_a");
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

static const char *summed(const char *description)
{
    static char out[256];
    size_t n;
    const char *s = gw_ts_summary(description, &n);

    snprintf(out, sizeof out, "%.*s", (int)n, s);
    return out;
}

START_TEST(test_summary_text)
{
    char *headings = gw_xcalloc(3 * GW_TOOLSEARCH_TEXT_MAX + 1, 1);

    ck_assert_str_eq(summed("Forecast."), "Forecast");
    ck_assert_str_eq(summed("Search issues. Supports filters.\n\nArgs:\n  query: the text to use"),
                     "Search issues");
    ck_assert_str_eq(
        summed("\n    \xf0\x9f\x8e\xaf Purpose\n      1. Lists the objects of a type.\n"),
        "Lists the objects of a type");
    ck_assert_str_eq(summed("1.5x faster search of files"), "1.5x faster search of files");
    ck_assert_str_eq(summed("\xd0\x9f\xd0\xbe\xd0\xb3\xd0\xbe\xd0\xb4\xd0\xb0 "
                            "\xd0\xb3\xd0\xbe\xd1\x80\xd0\xbe\xd0\xb4\xd0\xb0."),
                     "\xd0\x9f\xd0\xbe\xd0\xb3\xd0\xbe\xd0\xb4\xd0\xb0 "
                     "\xd0\xb3\xd0\xbe\xd1\x80\xd0\xbe\xd0\xb4\xd0\xb0");
    /* a parameter named summary is no section; a heading with nothing after */
    ck_assert_str_eq(summed("Create an issue.\n\nArgs:\n  summary:\n    The one-line summary"),
                     "Create an issue");
    ck_assert_str_eq(summed("Creates a widget.\nDescription:\n"), "Creates a widget");
    ck_assert_str_eq(summed("  Guardrails:\n    1. Warning: it writes.\n  Purpose:\n    1. Makes "
                            "a widget.\n"),
                     "Makes a widget");
    ck_assert_str_eq(summed(" \n\t\n:: --"), "");
    /* no sentence in the bytes indexed: nothing read past them */
    for (size_t i = 0; i < 3 * GW_TOOLSEARCH_TEXT_MAX; i++)
        headings[i] = "1.\n"[i % 3];
    ck_assert_str_eq(summed(headings), "");
    free(headings);
}
END_TEST

/* Issue 34 item 11: the verb-object shape of tool names. A tool whose
 * name's verb does another kind of thing than the query's asks keeps only
 * part of its score: "forget" (not a synonym of any name here) asks to
 * delete, so create_label, shorter, no longer outranks delete_label; a
 * name's verbs joined by "or" count together; "get rid of" deletes. */
START_TEST(test_verbs)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();

    whole(ix);
    put(cat, "notes", "create_label", "Label a note.", "delete_label",
        "Takes a label off a note, which otherwise stays as it was: its text, its other labels "
        "and its history.",
        "create_or_update_note", "Writes a note, new or not, with its text and its labels.", NULL);
    ck_assert_str_eq(first(ix, cat, "forget the label of the note", 0), "delete_label");
    ck_assert_str_eq(first(ix, cat, "get rid of the label of the note", 0), "delete_label");
    /* a request put as a question asks for its verb, not to read */
    ck_assert_str_eq(first(ix, cat, "could you forget the label of the note?", 0), "delete_label");
    ck_assert_str_eq(first(ix, cat, "label the note", 0), "create_label");
    ck_assert_str_eq(first(ix, cat, "change the note and its labels", 0), "create_or_update_note");
    ck_assert_uint_eq(gw_ts_name_verbs("create_or_update_note", "notes"),
                      1u << GW_TS_CREATE | 1u << GW_TS_UPDATE);
    ck_assert_uint_eq(gw_ts_name_verbs("mongodb_atlas_create_db_user", "mongodb"),
                      1u << GW_TS_CREATE);
    ck_assert_uint_eq(gw_ts_name_verbs("linear_linear_get_user_issues", "linear"),
                      1u << GW_TS_READ);
    ck_assert_uint_eq(gw_ts_name_verbs("browser_tab_close", "playwright"), 0);
    ck_assert_uint_eq(gw_ts_name_verbs("Notes-deleteLabel", "notes"), 1u << GW_TS_DELETE);
    ck_assert_uint_eq(gw_ts_name_verbs("API-get-self", "notion"), 1u << GW_TS_READ);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* A request's payload (a quoted name, a "that" clause) counts less than
 * what it asks: the words of the fact to remember are not the tool. */
START_TEST(test_payload)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();

    whole(ix);
    put(cat, "notes", "remember_fact", "Remember a fact for later.", "send_email",
        "Send an email to an email address or a phone.", "create_label", "Create a label.",
        "create_receipt", "Create a receipt.", "close_pull_request",
        "Closes a pull request (PR) without merging it.", "close_issue", "Closes an issue.", NULL);
    ck_assert_str_eq(first(ix, cat, "remember that Alice prefers email over phone calls", 0),
                     "remember_fact");
    ck_assert_str_eq(first(ix, cat, "add a 'Receipts' label", 0), "create_label");
    /* "that" before a noun is a determiner's, before an acronym too; a
     * quote never closed is none */
    ck_assert_str_eq(first(ix, cat, "send that email", 0), "send_email");
    ck_assert_str_eq(first(ix, cat, "close that PR", 0), "close_pull_request");
    ck_assert_str_eq(first(ix, cat, "'send email", 0), "send_email");
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

/* A verb with its particle is read as one: "set up" creates. */
START_TEST(test_phrasal)
{
    struct gw_catalog *cat = gw_catalog_new();
    struct gw_toolsearch *ix = gw_toolsearch_new();

    whole(ix);
    put(cat, "repos", "create_repository", "Creates a repository of the account.",
        "rename_repository", "Gives a repository a new name.", "delete_branches",
        "Deletes merged branches of a repository.", "get_user", "Returns a user's profile.", NULL);
    ck_assert_str_eq(first(ix, cat, "set up a repository", 0), "create_repository");
    ck_assert_str_eq(first(ix, cat, "rename the repository", 0), "rename_repository");
    ck_assert_str_eq(first(ix, cat, "clean up the repository's branches", 0), "delete_branches");
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

START_TEST(test_query_problems)
{
    char big[GW_TOOLSEARCH_QUERY_MAX + 2];

    ck_assert_ptr_null(gw_toolsearch_query_problem("take a screenshot"));
    ck_assert_str_eq(gw_toolsearch_query_problem(" \t"), "the query must hold at least one word");
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_str_eq(gw_toolsearch_query_problem(big), "the query is longer than 512 bytes");
    big[GW_TOOLSEARCH_QUERY_MAX] = '\0';
    ck_assert_ptr_null(gw_toolsearch_query_problem(big));
    ck_assert_str_eq(gw_toolsearch_query_problem("caf\xc3"), "the query must be UTF-8 text");
    ck_assert_ptr_null(gw_toolsearch_query_problem("caf\xc3\xa9"));
}
END_TEST

START_TEST(test_json)
{
    struct gw_catalog *cat = sample();
    struct gw_toolsearch *ix = gw_toolsearch_new();
    json_t *j, *t0;

    whole(ix);
    j = gw_toolsearch_json(ix, cat, "take a screenshot", NULL, GW_TOOL_FORMAT_ANTHROPIC, 2, NULL,
                           NULL);
    t0 = json_array_get(json_object_get(j, "tools"), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "version")),
                     (json_int_t)gw_catalog_version(cat));
    ck_assert_str_eq(json_string_value(json_object_get(j, "query")), "take a screenshot");
    ck_assert_str_eq(json_string_value(json_object_get(t0, "name")), "browser_take_screenshot");
    ck_assert_ptr_nonnull(json_object_get(t0, "input_schema"));
    ck_assert(json_real_value(json_object_get(t0, "score")) > 0);
    ck_assert_uint_le(json_array_size(json_object_get(j, "tools")), 2);
    json_decref(j);
    gw_toolsearch_free(ix);
    gw_catalog_free(cat);
}
END_TEST

START_TEST(test_activations)
{
    struct gw_ts_active *a = gw_ts_active_new();
    json_t *names;
    char name[32];

    ck_assert_int_eq(gw_ts_active_add(a, "d1", "create_issue", 10), 1);
    ck_assert_int_eq(gw_ts_active_add(a, "d1", "create_issue", 11), 0);
    ck_assert_int_eq(gw_ts_active_add(a, "d1", "list_commits", 12), 1);
    ck_assert(gw_ts_active_has(a, "d1", "create_issue"));
    ck_assert(!gw_ts_active_has(a, "d2", "create_issue"));
    ck_assert(gw_ts_active_has(a, "d1", NULL));
    ck_assert(!gw_ts_active_has(a, "d2", NULL));
    names = gw_ts_active_json(a, "d1");
    ck_assert_uint_eq(json_array_size(names), 2);
    json_decref(names);
    ck_assert_ptr_null(gw_ts_active_json(a, "d2"));
    ck_assert_uint_eq(gw_ts_active_remove(a, "d1", "create_issue"), 1);
    ck_assert_uint_eq(gw_ts_active_remove(a, "d1", "create_issue"), 0);
    /* bounded: the oldest activation goes */
    for (int i = 0; i < GW_TS_ACTIVE_TOOLS + 5; i++) {
        snprintf(name, sizeof name, "t%d", i);
        gw_ts_active_add(a, "d3", name, 20);
    }
    ck_assert(!gw_ts_active_has(a, "d3", "t0"));
    ck_assert(gw_ts_active_has(a, "d3", "t260"));
    /* idle dialogs are swept, least recently used first */
    gw_ts_active_sweep(a, 1000, 985);
    ck_assert(!gw_ts_active_has(a, "d1", "list_commits"));
    ck_assert(gw_ts_active_has(a, "d3", "t260"));
    ck_assert_uint_eq(gw_ts_active_remove(a, "d3", NULL), GW_TS_ACTIVE_TOOLS);
    ck_assert_ptr_null(gw_ts_active_json(a, "d3"));
    ck_assert(!gw_ts_active_has(a, "d3", NULL));
    gw_ts_active_free(a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("toolsearch");
    TCase *tc = tcase_create("toolsearch");

    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_tokens_split_identifiers);
    tcase_add_test(tc, test_stemmer);
    tcase_add_test(tc, test_synonyms);
    tcase_add_test(tc, test_ranking);
    tcase_add_test(tc, test_incremental);
    tcase_add_test(tc, test_forgets);
    tcase_add_test(tc, test_enum_values);
    tcase_add_test(tc, test_cover_prefix);
    tcase_add_test(tc, test_question);
    tcase_add_test(tc, test_compounds);
    tcase_add_test(tc, test_summary);
    tcase_add_test(tc, test_summary_text);
    tcase_add_test(tc, test_verbs);
    tcase_add_test(tc, test_payload);
    tcase_add_test(tc, test_phrasal);
    tcase_add_test(tc, test_steps);
    tcase_add_test(tc, test_first_query);
    tcase_add_test(tc, test_reindex_changed);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_associations);
    tcase_add_test(tc, test_query_problems);
    tcase_add_test(tc, test_json);
    tcase_add_test(tc, test_activations);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
