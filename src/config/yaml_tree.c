/* libyaml events → gw_yaml_node tree. Limits are checked as events arrive,
 * so an alias bomb is refused after at most max_nodes units of work, never
 * expanded in memory (aliases share the anchored node). */
#include "gw/util.h"
#include "gw/yaml_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <yaml.h>

struct anchor {
    char *name;
    struct gw_yaml_node *node;
};

struct gw_yaml_doc {
    struct gw_yaml_node *root;
    struct gw_yaml_node **all; /* every node allocated, for freeing */
    size_t nall, capall;
    struct anchor *anchors;
    size_t nanchors, capanchors;
};

struct builder {
    yaml_parser_t parser;
    struct gw_yaml_doc *doc;
    struct gw_yaml_node *stack[256];
    char *stack_anchor[256]; /* anchor of each open collection, or NULL */
    int depth;
    size_t total; /* nodes with aliases expanded, so far */
    size_t max_nodes;
    int max_depth;
    int ndocs;
    struct gw_yaml_error *err;
};

static int fail(struct builder *b, const yaml_mark_t *m, const char *fmt, const char *arg)
{
    snprintf(b->err->message, sizeof(b->err->message), fmt, arg);
    b->err->line = m ? (int)m->line + 1 : 0;
    b->err->col = m ? (int)m->column + 1 : 0;
    return UV_EINVAL;
}

static int fail_limit(struct builder *b, const yaml_mark_t *m)
{
    char lim[64];
    snprintf(lim, sizeof(lim), "%zu", b->max_nodes);
    return fail(b, m,
                "YAML aliases expand to more than %s nodes (an alias bomb?); "
                "the loader refuses such documents",
                lim);
}

static int fail_depth(struct builder *b, const yaml_mark_t *m)
{
    char lim[32];
    snprintf(lim, sizeof(lim), "%d", b->max_depth);
    return fail(b, m, "YAML nesting is deeper than %s levels", lim);
}

static struct gw_yaml_node *new_node(struct builder *b, enum gw_yaml_kind kind,
                                     const yaml_event_t *ev, const yaml_char_t *tag)
{
    struct gw_yaml_doc *d = b->doc;
    struct gw_yaml_node *n = gw_xrealloc(NULL, sizeof(*n));
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->line = (int)ev->start_mark.line + 1;
    n->col = (int)ev->start_mark.column + 1;
    n->tag = tag ? strdup((const char *)tag) : NULL;
    n->expanded = 1;
    n->height = 1;
    if (d->nall == d->capall) {
        d->capall = d->capall ? d->capall * 2 : 64;
        d->all = gw_xrealloc(d->all, d->capall * sizeof(*d->all));
    }
    d->all[d->nall++] = n;
    return n;
}

static void add_anchor(struct builder *b, const yaml_char_t *name, struct gw_yaml_node *n)
{
    struct gw_yaml_doc *d = b->doc;
    if (name == NULL)
        return;
    if (d->nanchors == d->capanchors) {
        d->capanchors = d->capanchors ? d->capanchors * 2 : 8;
        d->anchors = gw_xrealloc(d->anchors, d->capanchors * sizeof(*d->anchors));
    }
    d->anchors[d->nanchors].name = strdup((const char *)name);
    d->anchors[d->nanchors].node = n;
    d->nanchors++;
}

/* The latest definition wins: YAML allows an anchor name to be reused. An
 * anchor is registered only once its node is complete, so a node cannot
 * contain an alias to itself. */
static struct gw_yaml_node *find_anchor(struct builder *b, const yaml_char_t *name)
{
    struct gw_yaml_doc *d = b->doc;
    for (size_t i = d->nanchors; i-- > 0;) {
        if (strcmp(d->anchors[i].name, (const char *)name) == 0)
            return d->anchors[i].node;
    }
    return NULL;
}

static int attach(struct builder *b, struct gw_yaml_node *n)
{
    if (b->depth == 0) {
        b->doc->root = n;
        return 0;
    }
    struct gw_yaml_node *p = b->stack[b->depth - 1];
    p->kids = gw_xrealloc(p->kids, (p->nkids + 1) * sizeof(*p->kids));
    p->kids[p->nkids++] = n;
    return 0;
}

static int count(struct builder *b, size_t add, const yaml_mark_t *m)
{
    if (add > b->max_nodes || b->total + add > b->max_nodes)
        return fail_limit(b, m);
    b->total += add;
    return 0;
}

static int on_scalar(struct builder *b, yaml_event_t *ev)
{
    int rc = count(b, 1, &ev->start_mark);
    if (rc != 0)
        return rc;
    struct gw_yaml_node *n = new_node(b, GW_YAML_SCALAR, ev, ev->data.scalar.tag);
    n->len = ev->data.scalar.length;
    n->str = gw_xrealloc(NULL, n->len + 1);
    memcpy(n->str, ev->data.scalar.value, n->len);
    n->str[n->len] = '\0';
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    add_anchor(b, ev->data.scalar.anchor, n);
    return attach(b, n);
}

static int on_start(struct builder *b, yaml_event_t *ev, enum gw_yaml_kind kind)
{
    int rc = count(b, 1, &ev->start_mark);
    if (rc != 0)
        return rc;
    if (b->depth + 1 > b->max_depth)
        return fail_depth(b, &ev->start_mark);
    const yaml_char_t *tag =
        kind == GW_YAML_MAP ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    struct gw_yaml_node *n = new_node(b, kind, ev, tag);
    rc = attach(b, n);
    if (rc != 0)
        return rc;
    const yaml_char_t *anchor =
        kind == GW_YAML_MAP ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    b->stack_anchor[b->depth] = anchor ? strdup((const char *)anchor) : NULL;
    b->stack[b->depth++] = n;
    return 0;
}

static void on_end(struct builder *b)
{
    struct gw_yaml_node *n = b->stack[--b->depth];
    char *anchor = b->stack_anchor[b->depth];
    n->expanded = 1;
    n->height = 1;
    for (size_t i = 0; i < n->nkids; i++) {
        n->expanded += n->kids[i]->expanded;
        if (n->kids[i]->height + 1 > n->height)
            n->height = n->kids[i]->height + 1;
    }
    add_anchor(b, (const yaml_char_t *)anchor, n);
    free(anchor);
    b->stack_anchor[b->depth] = NULL;
}

static int on_alias(struct builder *b, yaml_event_t *ev)
{
    struct gw_yaml_node *a = find_anchor(b, ev->data.alias.anchor);
    if (a == NULL)
        return fail(b, &ev->start_mark, "YAML alias '*%s' names no complete anchor",
                    (const char *)ev->data.alias.anchor);
    int rc = count(b, a->expanded, &ev->start_mark);
    if (rc != 0)
        return rc;
    if (b->depth + a->height > b->max_depth)
        return fail_depth(b, &ev->start_mark);
    return attach(b, a);
}

static int on_event(struct builder *b, yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++b->ndocs > 1)
            return fail(b, &ev->start_mark, "%s",
                        "the file holds more than one YAML document; keep one");
        return 0;
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(b, ev, GW_YAML_SEQ);
    case YAML_MAPPING_START_EVENT:
        return on_start(b, ev, GW_YAML_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        on_end(b);
        return 0;
    case YAML_ALIAS_EVENT:
        return on_alias(b, ev);
    default:
        return 0;
    }
}

static int parser_error(struct builder *b)
{
    const yaml_parser_t *p = &b->parser;
    if (p->error == YAML_MEMORY_ERROR)
        return UV_ENOMEM;
    snprintf(b->err->message, sizeof(b->err->message), "invalid YAML: %s%s%s",
             p->problem ? p->problem : "unknown error", p->context ? " " : "",
             p->context ? p->context : "");
    b->err->line = (int)p->problem_mark.line + 1;
    b->err->col = (int)p->problem_mark.column + 1;
    return UV_EINVAL;
}

static int run(struct builder *b)
{
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&b->parser, &ev))
            return parser_error(b);
        int done = ev.type == YAML_STREAM_END_EVENT;
        int rc = on_event(b, &ev);
        yaml_event_delete(&ev);
        if (rc != 0)
            return rc;
        if (done)
            return 0;
    }
}

int gw_yaml_parse(const char *buf, size_t len, size_t max_nodes, int max_depth,
                  struct gw_yaml_doc **out, struct gw_yaml_error *err)
{
    struct builder b;
    memset(&b, 0, sizeof(b));
    memset(err, 0, sizeof(*err));
    b.err = err;
    b.max_nodes = max_nodes;
    /* the fixed stacks bound the depth whatever the caller asks */
    b.max_depth = max_depth < 1 || max_depth > 255 ? 255 : max_depth;
    b.doc = gw_xrealloc(NULL, sizeof(*b.doc));
    memset(b.doc, 0, sizeof(*b.doc));
    if (!yaml_parser_initialize(&b.parser)) {
        free(b.doc);
        return UV_ENOMEM;
    }
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)buf, len);
    int rc = run(&b);
    yaml_parser_delete(&b.parser);
    for (int i = 0; i < b.depth; i++)
        free(b.stack_anchor[i]);
    if (rc != 0) {
        gw_yaml_free(b.doc);
        return rc;
    }
    *out = b.doc;
    return 0;
}

const struct gw_yaml_node *gw_yaml_root(const struct gw_yaml_doc *doc)
{
    return doc->root;
}

void gw_yaml_free(struct gw_yaml_doc *doc)
{
    if (doc == NULL)
        return;
    for (size_t i = 0; i < doc->nall; i++) {
        free(doc->all[i]->tag);
        free(doc->all[i]->str);
        free(doc->all[i]->kids);
        free(doc->all[i]);
    }
    for (size_t i = 0; i < doc->nanchors; i++)
        free(doc->anchors[i].name);
    free(doc->all);
    free(doc->anchors);
    free(doc);
}

size_t gw_yaml_map_len(const struct gw_yaml_node *map)
{
    return map->kind == GW_YAML_MAP ? map->nkids / 2 : 0;
}

const struct gw_yaml_node *gw_yaml_map_key(const struct gw_yaml_node *map, size_t i)
{
    return map->kids[2 * i];
}

const struct gw_yaml_node *gw_yaml_map_value(const struct gw_yaml_node *map, size_t i)
{
    return map->kids[2 * i + 1];
}

bool gw_yaml_is_null(const struct gw_yaml_node *n)
{
    if (n->kind != GW_YAML_SCALAR || !n->plain)
        return false;
    return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
           strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}
