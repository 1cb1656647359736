/* Tool search, the words: identifier splitting, stop words, a light
 * stemmer, compounds written apart, a description's first sentence, and
 * the synonym table that bridges the words people use to ask for a tool
 * and the words tools are described with.
 *
 * The table is general English (and the common words of software work:
 * repo, PR, commit): each group is a set of words people use for one
 * another, with the weight a match through it gets (a word always matches
 * itself at 1). It names no product, server or tool, and holds no group
 * of one server's vocabulary, and none was added after reading a task
 * set's misses (issue 34 took out those that were: k8s, Redis, Postgres,
 * an LLM's sampling, a knowledge graph's observations, file extensions,
 * URL words, heights, forget), so that it serves catalogs it was never
 * shown (docs/performance.md, *Tool search, second pass*). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/toolsearch_internal.h"
#include "gw/util.h"

static const char *const stop_words[] = {
    "a",    "about", "all",  "am",   "an",    "and",   "any",    "are",    "as",    "at",   "be",
    "been", "but",   "by",   "can",  "could", "did",   "do",     "does",   "for",   "from", "have",
    "how",  "if",    "in",   "into", "is",    "it",    "its",    "just",   "let",   "lets", "me",
    "mine", "my",    "of",   "on",   "or",    "our",   "please", "should", "so",    "some", "that",
    "the",  "their", "them", "then", "there", "these", "they",   "this",   "those", "to",   "us",
    "was",  "we",    "were", "what", "when",  "which", "will",   "with",   "would", "you",  "your",
};

static bool is_stop(const char *w)
{
    size_t lo = 0, hi = sizeof stop_words / sizeof *stop_words;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(w, stop_words[mid]);
        if (c == 0)
            return true;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

static bool vowel(char c);

static bool ends(const char *w, size_t n, const char *suf)
{
    size_t l = strlen(suf);
    return n >= l && memcmp(w + n - l, suf, l) == 0;
}

static bool vowel(char c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

/* Irregular forms, which no suffix rule reaches ("wrote" and "written"
 * are "write"), sorted for a binary search: the common irregular verbs
 * and plurals of English, not words chosen from any task set. A word
 * that also means something else ("left", "saw", "found") is not here. */
static const char *const irregular[][2] = {
    {"bought", "buy"},    {"broke", "break"},   {"broken", "break"},
    {"brought", "bring"}, {"built", "build"},   {"children", "child"},
    {"chose", "choose"},  {"chosen", "choose"}, {"drawn", "draw"},
    {"drew", "draw"},     {"driven", "drive"},  {"drove", "drive"},
    {"gave", "give"},     {"given", "give"},    {"gone", "go"},
    {"got", "get"},       {"gotten", "get"},    {"held", "hold"},
    {"indices", "index"}, {"kept", "keep"},     {"knew", "know"},
    {"known", "know"},    {"lost", "lose"},     {"made", "make"},
    {"meant", "mean"},    {"paid", "pay"},      {"people", "person"},
    {"ran", "run"},       {"said", "say"},      {"seen", "see"},
    {"sent", "send"},     {"shown", "show"},    {"sold", "sell"},
    {"spent", "spend"},   {"stole", "steal"},   {"stolen", "steal"},
    {"taken", "take"},    {"taught", "teach"},  {"thought", "think"},
    {"told", "tell"},     {"took", "take"},     {"understood", "understand"},
    {"went", "go"},       {"woke", "wake"},     {"written", "write"},
    {"wrote", "write"},
};

#define NIRREGULAR (sizeof irregular / sizeof *irregular)

/* Every word is stemmed when a tool is indexed: a bit per (first letter,
 * last letter) of the forms keeps most words from the search. */
static uint8_t irregular_ends[(26 * 26 + 7) / 8];
static bool irregular_ready;

static size_t ends_bit(const char *w, size_t n)
{
    return (size_t)(w[0] - 'a') * 26 + (size_t)(w[n - 1] - 'a');
}

static const char *irregular_base(const char *w, size_t n)
{
    size_t lo = 0, hi = NIRREGULAR, bit;

    if (!irregular_ready) {
        for (size_t i = 0; i < NIRREGULAR; i++) {
            bit = ends_bit(irregular[i][0], strlen(irregular[i][0]));
            irregular_ends[bit / 8] |= (uint8_t)(1u << bit % 8);
        }
        irregular_ready = true;
    }
    if (w[0] < 'a' || w[0] > 'z' || w[n - 1] < 'a' || w[n - 1] > 'z')
        return NULL;
    bit = ends_bit(w, n);
    if (!(irregular_ends[bit / 8] & 1u << bit % 8))
        return NULL;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(w, irregular[mid][0]);
        if (c == 0)
            return irregular[mid][1];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

void gw_toolsearch_stem(char *w)
{
    size_t n = strlen(w);
    bool cut = false;
    const char *base = n >= 3 && n <= 10 ? irregular_base(w, n) : NULL;

    if (base != NULL) {
        strcpy(w, base); /* never longer than the form */
        n = strlen(w);
    }
    if (n > 4 && ends(w, n, "ies")) {
        strcpy(w + n - 3, "y");
        n -= 2;
    } else if (n > 4 && (ends(w, n, "sses") || ends(w, n, "xes") || ends(w, n, "ches") ||
                         ends(w, n, "shes") || ends(w, n, "zzes"))) {
        n -= 2;
    } else if (n > 3 && w[n - 1] == 's' && !ends(w, n, "ss") && !ends(w, n, "us") &&
               !ends(w, n, "is")) {
        n -= 1;
    } else if (n == 3 && w[2] == 's' && !vowel(w[1]) && w[1] != 's') {
        n -= 1; /* abbreviations: prs, ids, dbs */
    }
    w[n] = '\0';
    if (n > 5 && ends(w, n, "ing")) {
        n -= 3;
        cut = true;
    } else if (n > 4 && ends(w, n, "ied")) {
        strcpy(w + n - 3, "y");
        n -= 2;
    } else if (n > 4 && ends(w, n, "ed") && !ends(w, n, "eed")) {
        n -= 2;
        cut = true;
    }
    /* running → run, stopped → stop; but not pass/fill/add */
    if (cut && n > 2 && w[n - 1] == w[n - 2] && !vowel(w[n - 1]) && w[n - 1] != 's' &&
        w[n - 1] != 'l' && w[n - 1] != 'd') {
        n--;
    } else if (cut && n == 3 && !vowel(w[0]) && (vowel(w[1]) || w[1] == 'y') && !vowel(w[2]) &&
               w[2] != 'w' && w[2] != 'x' && w[2] != 'y') {
        /* making → make, named → name, typing → type: the e the suffix
         * took, as the word without a suffix keeps it (4 letters) */
        w[n++] = 'e';
    }
    if (n > 4 && w[n - 1] == 'e')
        n--;
    w[n] = '\0';
}

enum cls { C_SEP, C_LOWER, C_UPPER, C_DIGIT };

static enum cls cls_of(unsigned char c)
{
    if (c >= 'a' && c <= 'z')
        return C_LOWER;
    if (c >= 'A' && c <= 'Z')
        return C_UPPER;
    if (c >= '0' && c <= '9')
        return C_DIGIT;
    return c >= 0x80 ? C_LOWER : C_SEP; /* UTF-8 bytes: in words, of no case */
}

static void emit(char *w, size_t n, void (*fn)(const char *, void *), void *arg)
{
    if (n < 2 && !(n == 1 && isdigit((unsigned char)w[0])))
        return;
    w[n] = '\0';
    if (is_stop(w))
        return;
    gw_toolsearch_stem(w);
    fn(w, arg);
}

void gw_toolsearch_tokens(const char *text, size_t n, void (*fn)(const char *tok, void *arg),
                          void *arg)
{
    char w[GW_TOOLSEARCH_TOKEN_MAX];
    size_t len = 0;
    enum cls prev = C_SEP;

    for (size_t i = 0; i <= n; i++) {
        enum cls c = i < n ? cls_of((unsigned char)text[i]) : C_SEP;
        bool boundary;

        /* A word ends at a separator, between letters and digits, before an
         * upper-case letter after a lower-case one (getFile), and before the
         * last capital of a run followed by a lower-case letter (HTTPServer),
         * unless that is a plural's s (PRs, URLs). */
        boundary = c == C_SEP || (prev == C_DIGIT) != (c == C_DIGIT) ||
                   (prev == C_LOWER && c == C_UPPER) ||
                   (prev == C_UPPER && c == C_UPPER && i + 1 < n &&
                    cls_of((unsigned char)text[i + 1]) == C_LOWER &&
                    !(text[i + 1] == 's' &&
                      (i + 2 == n || cls_of((unsigned char)text[i + 2]) != C_LOWER)));
        if (boundary && len > 0) {
            emit(w, len, fn, arg);
            len = 0;
        }
        if (c != C_SEP && len < sizeof w - 1)
            w[len++] = (char)tolower((unsigned char)text[i]);
        prev = c;
    }
}

void gw_toolsearch_compounds(const char *text, size_t n, void (*fn)(const char *tok, void *arg),
                             void *arg)
{
    size_t prev = 0, plen = 0; /* the last word of letters, if it may join */

    for (size_t i = 0; i < n;) {
        size_t j = i, len;
        bool camel = false, word;

        if (cls_of((unsigned char)text[i]) == C_SEP) {
            if (i - (prev + plen) > 0 || (text[i] != ' ' && text[i] != '-'))
                plen = 0; /* more than one blank or hyphen: not a compound */
            i++;
            continue;
        }
        while (j < n && cls_of((unsigned char)text[j]) != C_SEP)
            j++;
        len = j - i;
        word = len >= 2;
        for (size_t k = i; k < j && word; k++) {
            word = isalpha((unsigned char)text[k]) != 0;
            camel = camel || (k > i && isupper((unsigned char)text[k]) &&
                              islower((unsigned char)text[k - 1]));
        }
        word = word && !camel;
        if (word && plen > 0 && i == prev + plen + 1 && plen + len < GW_TOOLSEARCH_TOKEN_MAX) {
            char w[GW_TOOLSEARCH_TOKEN_MAX];
            for (size_t k = 0; k < plen; k++)
                w[k] = (char)tolower((unsigned char)text[prev + k]);
            for (size_t k = 0; k < len; k++)
                w[plen + k] = (char)tolower((unsigned char)text[i + k]);
            w[plen + len] = '\0';
            gw_toolsearch_stem(w);
            fn(w, arg);
        }
        prev = i;
        plen = word ? len : 0;
        i = j;
    }
}

/* Synonym groups: a weight, then words (NULL-terminated). */
struct group {
    double weight;
    const char *words[20];
};

static const struct group groups[] = {
    /* reading and finding */
    {0.7, {"list", "show", "enumerate", "display", "view", "browse", "overview", "every"}},
    {0.6, {"get", "fetch", "retrieve", "read", "obtain", "load", "show", "view", "see", "give"}},
    {0.6, {"search", "find", "lookup", "look", "query", "locate", "discover", "grep", "seek"}},
    {0.4, {"search", "list", "filter", "match"}},
    {0.5,
     {"info", "information", "detail", "metadata", "stat", "property", "attribute", "about",
      "describe", "description", "inspect"}},
    {0.5, {"status", "state", "health", "check", "progress"}},
    {0.5, {"check", "verify", "validate", "test", "confirm"}},
    {0.5, {"count", "number", "total", "many", "size"}},
    /* making and changing */
    {0.6, {"create", "add", "new", "make", "insert", "register", "generate", "build", "start"}},
    {0.4, {"create", "open", "file", "submit", "raise", "report"}},
    {0.6,
     {"update", "edit", "modify", "change", "patch", "set", "alter", "amend", "adjust", "replace",
      "rewrite"}},
    {0.6,
     {"delete", "remove", "erase", "drop", "destroy", "trash", "discard", "purge", "clear",
      "unlink", "rm"}},
    {0.5, {"close", "resolve", "finish", "complete", "archive", "done", "end", "shut"}},
    {0.6, {"write", "save", "store", "put", "record", "persist", "overwrite"}},
    {0.6, {"move", "rename", "relocate", "mv", "transfer"}},
    {0.5, {"copy", "duplicate", "clone", "fork", "cp"}},
    {0.5, {"upload", "attach", "push", "put"}},
    {0.5, {"download", "save", "export"}},
    {0.5, {"merge", "combine", "integrate", "land"}},
    {0.5, {"assign", "assignee", "owner", "give", "hand", "delegate"}},
    {0.6, {"label", "tag", "category", "categorize", "mark"}},
    /* talking */
    {0.6,
     {"send", "post", "message", "publish", "reply", "notify", "tell", "say", "share", "dm", "chat",
      "announce", "ping"}},
    {0.6, {"message", "msg", "chat", "conversation", "thread", "text", "dm"}},
    {0.5, {"comment", "note", "reply", "remark", "feedback", "review", "respond"}},
    {0.6, {"channel", "room", "group", "conversation", "space"}},
    {0.5,
     {"user", "person", "member", "people", "profile", "account", "who", "someone", "teammate",
      "colleague", "contact"}},
    {0.5, {"reaction", "react", "emoji", "like"}},
    {0.5, {"email", "mail", "inbox"}},
    {0.5, {"organization", "org", "team", "workspace", "company"}},
    /* code hosting */
    {0.7, {"repository", "repo", "project", "codebase"}},
    {0.6, {"issue", "bug", "ticket", "problem", "defect", "task"}},
    {0.6, {"pr", "pull", "merge", "mr"}},
    {0.5, {"commit", "change", "revision", "history", "log", "diff"}},
    {0.5, {"branch", "ref", "head"}},
    {0.5, {"code", "source", "snippet", "function", "implementation"}},
    {0.5, {"release", "version", "tag"}},
    /* files */
    {0.7, {"directory", "folder", "dir", "tree"}},
    {0.5, {"file", "document", "doc", "content"}},
    {0.4, {"path", "location", "directory", "where"}},
    {0.5, {"allow", "allowed", "permit", "access", "permission"}},
    /* browser */
    {0.6, {"navigate", "go", "visit", "open", "goto", "url", "link", "load"}},
    {0.6, {"page", "site", "website", "webpage", "browser", "tab", "web", "url"}},
    {0.6, {"screenshot", "capture", "snapshot", "image", "picture", "screen", "grab", "photo"}},
    {0.6, {"click", "press", "tap", "select", "hit", "button"}},
    {0.5, {"type", "fill", "enter", "input", "field", "form", "text"}},
    {0.6, {"key", "press", "keyboard", "keystroke", "shortcut"}},
    {0.5, {"hover", "mouse", "pointer", "cursor"}},
    {0.5, {"drag", "drop"}},
    {0.5, {"evaluate", "javascript", "js", "script", "eval"}},
    {0.5, {"dialog", "alert", "popup", "prompt", "modal"}},
    {0.5, {"resize", "size", "window", "viewport", "dimension"}},
    {0.5, {"back", "previous", "history", "return"}},
    {0.5, {"console", "log", "error", "debug", "output", "message"}},
    {0.5, {"network", "request", "http", "traffic", "call"}},
    {0.5, {"wait", "sleep", "pause", "delay"}},
    {0.5, {"scrape", "crawl", "extract", "spider", "harvest"}},
    {0.5, {"web", "internet", "online"}},
    /* running things */
    {0.6, {"run", "execute", "exec", "launch", "invoke", "perform", "start"}},
    {0.5, {"command", "shell", "terminal", "cmd", "bash", "process"}},
    {0.6, {"stop", "kill", "terminate", "cancel", "abort", "halt", "quit", "end"}},
    {0.5, {"install", "setup", "dependency", "package"}},
    {0.5, {"environment", "env", "variable", "config", "configuration", "setting"}},
    /* data */
    {0.5, {"database", "db", "table", "sql", "row", "record", "schema"}},
    {0.5, {"cache", "key", "value", "store"}},
    {0.5, {"memory", "remember", "knowledge", "recall"}},
    {0.5, {"entity", "node", "thing", "object", "item"}},
    {0.6, {"relation", "relationship", "link", "connect", "connection", "edge"}},
    {0.5, {"doc", "documentation", "library", "api", "reference", "manual", "guide"}},
    /* places */
    {0.5,
     {"map", "location", "place", "address", "geocode", "coordinate", "near", "nearby", "where",
      "latitude", "longitude"}},
    {0.5, {"direction", "route", "distance", "travel", "drive", "walk", "far"}},
    {0.4, {"restaurant", "cafe", "shop", "store", "business", "place"}},
    /* misc */
    {0.5, {"think", "reason", "plan", "thought", "reflect", "brainstorm"}},
    {0.5, {"image", "picture", "photo", "art", "draw", "illustration", "generate"}},
    {0.5, {"time", "date", "now", "clock", "timezone"}},
    {0.6, {"add", "sum", "plus", "calculate", "compute", "math", "total"}},
    {0.5, {"echo", "repeat", "back"}},
    {0.5, {"schedule", "event", "calendar", "meeting"}},
    {0.5, {"notification", "alert", "notify"}},
    {0.5, {"resource", "reference", "link"}},
};

#define NGROUPS (sizeof groups / sizeof *groups)

/* The stemmed table, built once: (stem, group) pairs sorted by stem. */
struct pair {
    char stem[GW_TOOLSEARCH_TOKEN_MAX];
    unsigned short group;
};

static struct {
    struct pair *v;
    size_t n;
    char (*stems)[20][GW_TOOLSEARCH_TOKEN_MAX]; /* per group, per word */
} tab;

static int pair_cmp(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    int c = strcmp(x->stem, y->stem);
    return c != 0 ? c : (int)x->group - (int)y->group;
}

/* One group word stemmed as the tokenizer would ("get rid" → "rid"): its
 * last word. */
static void stem_word(const char *word, char *out)
{
    const char *sp = strrchr(word, ' ');

    snprintf(out, GW_TOOLSEARCH_TOKEN_MAX, "%s", sp ? sp + 1 : word);
    gw_toolsearch_stem(out);
}

static void table_build(void)
{
    size_t cap = 0;

    for (size_t g = 0; g < NGROUPS; g++)
        for (size_t i = 0; groups[g].words[i] != NULL; i++)
            cap++;
    tab.v = gw_xcalloc(cap, sizeof *tab.v);
    tab.stems = gw_xcalloc(NGROUPS, sizeof *tab.stems);
    for (size_t g = 0; g < NGROUPS; g++) {
        for (size_t i = 0; groups[g].words[i] != NULL; i++) {
            stem_word(groups[g].words[i], tab.stems[g][i]);
            memcpy(tab.v[tab.n].stem, tab.stems[g][i], GW_TOOLSEARCH_TOKEN_MAX);
            tab.v[tab.n++].group = (unsigned short)g;
        }
    }
    qsort(tab.v, tab.n, sizeof *tab.v, pair_cmp);
}

size_t gw_toolsearch_synonyms(const char *w, const char **out, double *weight, size_t max)
{
    size_t lo = 0, hi, n = 0;
    const struct pair *p;

    if (tab.v == NULL)
        table_build();
    for (hi = tab.n; lo < hi;) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(tab.v[mid].stem, w) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    p = &tab.v[lo];
    for (; p < tab.v + tab.n && strcmp(p->stem, w) == 0; p++) {
        const struct group *g = &groups[p->group];
        for (size_t i = 0; g->words[i] != NULL; i++) {
            const char *s = tab.stems[p->group][i];
            size_t j;
            if (strcmp(s, w) == 0)
                continue;
            for (j = 0; j < n && strcmp(out[j], s) != 0; j++)
                ;
            if (j < n) {
                if (weight[j] < g->weight)
                    weight[j] = g->weight;
                continue;
            }
            if (n == max)
                return n;
            out[n] = s;
            weight[n++] = g->weight;
        }
    }
    return n;
}

/* Summaries (gw_ts_summary). Many descriptions open with a blank line,
 * an indent, a heading ("🎯 Purpose:") or a list marker ("1. Retrieves…"),
 * or with a section that is not the summary (hubspot's write tools open
 * with their guardrails, their purpose follows). */
#define SUMMARY_MAX 200 /* bytes of a summary */
#define HEADING_MAX 40  /* a section's heading is a line no longer */

/* The bytes of the letter at p (before `end`), 0 if none: an ASCII
 * letter, or a 2- or 3-byte UTF-8 character, as the tokenizer reads them;
 * a 4-byte one is taken for a symbol (the emoji of a heading). */
static inline size_t letter_at(const char *p, const char *end)
{
    unsigned char c = (unsigned char)*p;
    size_t n = c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 1;

    if (c < 0x80 ? !isalpha(c) : c < 0xC2 || c >= 0xF0)
        return 0;
    return (size_t)(end - p) >= n ? n : 0;
}

static size_t words_in(const char *p, const char *end)
{
    size_t words = 0;
    bool in = false;

    while (p < end) {
        size_t n = letter_at(p, end);
        words += n > 0 && !in;
        in = n > 0;
        p += n > 0 ? n : 1;
    }
    return words;
}

static bool letters_after(const char *p, const char *end)
{
    for (; p < end; p++)
        if (letter_at(p, end) > 0)
            return true;
    return false;
}

static const char *skip(const char *p, const char *end, const char *set)
{
    for (; p < end; p++) {
        const char *c = set;
        while (*c != '\0' && *c != *p)
            c++;
        if (*c == '\0')
            break;
    }
    return p;
}

/* Past a list marker at a line's start ("1. ", "- ", "## "); "1.5x" is
 * no marker. */
static const char *past_marker(const char *p, const char *end)
{
    const char *q = p;

    if (p < end && strchr("#-*>", *p) != NULL)
        return skip(p, end, "#-*> \t");
    while (q < end && isdigit((unsigned char)*q))
        q++;
    if (q > p && q + 1 < end && (*q == '.' || *q == ')') && (q[1] == ' ' || q[1] == '\t'))
        return skip(q + 1, end, " \t");
    return p;
}

/* The first sentence from `p` on (to a full stop followed by a blank, or
 * a line's end) that sums a tool up: one of three words or more, or a
 * shorter one that is a sentence ("Search issues. Supports…",
 * "Forecast.") or all that is left; not a heading ("🎯 Purpose",
 * "Returns:"). NULL if none. */
static const char *first_sentence(const char *p, const char *from, const char *end, size_t *len)
{
    while (p < end) {
        const char *s = skip(p, end, " \t\r");
        size_t n = 0, words;
        if (p == from || p[-1] == '\n')
            s = past_marker(s, end);
        while (n < SUMMARY_MAX && s + n < end && s[n] != '\n' &&
               !(s[n] == '.' && (s + n + 1 == end || isspace((unsigned char)s[n + 1]))))
            n++;
        words = words_in(s, s + n);
        if (words >= 3 || (words > 0 && ((s + n < end && s[n] == '.') ||
                                         (s[n - 1] != ':' && !letters_after(s + n, end))))) {
            *len = n;
            return s;
        }
        p = s + n < end ? s + n + 1 : end;
    }
    return NULL;
}

/* Where a section headed as the summary starts ("🎯 Purpose:",
 * "Description"), or NULL: a line of the description's top level (its
 * first line's indent: "  summary:" under "Args:" is a parameter) that
 * holds no more than the heading. */
static const char *summary_section(const char *d, const char *end)
{
    static const char *const heads[] = {"purpose", "summary", "description", "overview"};
    const char *first = skip(d, end, " \t\r\n"), *start = first;

    while (start > d && start[-1] != '\n')
        start--;
    for (const char *line = d; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line)), *stop = nl ? nl : end;
        const char *w = skip(line, stop, " \t");
        if (w - line == first - start && stop - w <= HEADING_MAX) {
            while (w < stop && !isalpha((unsigned char)*w))
                w++;
            for (size_t i = 0; i < sizeof heads / sizeof *heads; i++) {
                size_t n = strlen(heads[i]);
                if ((size_t)(stop - w) >= n && strncasecmp(w, heads[i], n) == 0 &&
                    skip(w + n, stop, ": \t\r") == stop)
                    return nl != NULL ? nl + 1 : NULL;
            }
        }
        if (nl == NULL)
            break;
        line = nl + 1;
    }
    return NULL;
}

const char *gw_ts_summary(const char *d, size_t *len)
{
    const char *end = d + strnlen(d, GW_TOOLSEARCH_TEXT_MAX), *section = summary_section(d, end);
    const char *s = section != NULL ? first_sentence(section, section, end, len) : NULL;

    if (s == NULL && (s = first_sentence(d, d, end, len)) == NULL)
        *len = 0;
    return s != NULL ? s : d;
}

/* The verbs of tool names and queries, by kind (toolsearch_internal.h). */
enum gw_ts_verb gw_ts_verb_kind(const char *w, size_t n)
{
    static const struct {
        const char *w;
        enum gw_ts_verb v;
    } verbs[] = {
        {"get", GW_TS_READ},        {"list", GW_TS_READ},       {"read", GW_TS_READ},
        {"fetch", GW_TS_READ},      {"search", GW_TS_READ},     {"find", GW_TS_READ},
        {"show", GW_TS_READ},       {"view", GW_TS_READ},       {"describe", GW_TS_READ},
        {"retrieve", GW_TS_READ},   {"query", GW_TS_READ},      {"lookup", GW_TS_READ},
        {"look", GW_TS_READ},       {"browse", GW_TS_READ},     {"count", GW_TS_READ},
        {"inspect", GW_TS_READ},    {"create", GW_TS_CREATE},   {"add", GW_TS_CREATE},
        {"new", GW_TS_CREATE},      {"make", GW_TS_CREATE},     {"insert", GW_TS_CREATE},
        {"generate", GW_TS_CREATE}, {"register", GW_TS_CREATE}, {"update", GW_TS_UPDATE},
        {"edit", GW_TS_UPDATE},     {"modify", GW_TS_UPDATE},   {"change", GW_TS_UPDATE},
        {"rename", GW_TS_UPDATE},   {"patch", GW_TS_UPDATE},    {"replace", GW_TS_UPDATE},
        {"set", GW_TS_UPDATE},      {"delete", GW_TS_DELETE},   {"remove", GW_TS_DELETE},
        {"drop", GW_TS_DELETE},     {"destroy", GW_TS_DELETE},  {"erase", GW_TS_DELETE},
        {"purge", GW_TS_DELETE},    {"forget", GW_TS_DELETE},   {"uninstall", GW_TS_DELETE},
    };

    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        if (strlen(verbs[i].w) == n && strncasecmp(w, verbs[i].w, n) == 0)
            return verbs[i].v;
    return GW_TS_NONE;
}

/* The length of the name's word at `w`: up to a '_', '-', '.' or ' ', or
 * to a capital after a small letter (getIssue, listPullRequests). */
static size_t name_word(const char *w)
{
    size_t n = 0;

    while (w[n] != '\0' && strchr("_-. ", w[n]) == NULL &&
           !(n > 0 && isupper((unsigned char)w[n]) && islower((unsigned char)w[n - 1])))
        n++;
    return n;
}

unsigned gw_ts_name_verbs(const char *name, const char *toolset)
{
    size_t sn = strlen(toolset);
    unsigned kinds = 0;

    while (sn > 0 && strncasecmp(name, toolset, sn) == 0 && name[sn] != '\0' &&
           strchr("_-.", name[sn]) != NULL)
        name += sn + 1;
    for (int i = 0; *name != '\0' && (kinds != 0 || i < 2); i++) {
        size_t n = name_word(name);
        enum gw_ts_verb v = gw_ts_verb_kind(name, n);
        if (v != GW_TS_NONE)
            kinds |= 1u << v;
        else if (kinds != 0 && !((n == 2 && strncasecmp(name, "or", 2) == 0) ||
                                 (n == 3 && strncasecmp(name, "and", 3) == 0)))
            break;
        name += n + (name[n] != '\0' && strchr("_-. ", name[n]) != NULL);
    }
    return kinds;
}
