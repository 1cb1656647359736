/* Tool search, activations: which tools each dialog of /mcp has activated
 * (toolsearch.h). A list of dialogs, most recently used first, each with
 * its names in activation order: a dialog activates a handful of tools,
 * and only dialogs of /mcp with gateway.tool_search on have an entry. */
#include <stdlib.h>
#include <string.h>

#include "gw/toolsearch.h"
#include "gw/util.h"

struct entry {
    struct entry *prev, *next;
    char *dialog;
    char **names;
    size_t n;
    uint64_t used; /* ms */
};

struct gw_ts_active {
    struct entry *head, *tail;
    size_t n;
};

struct gw_ts_active *gw_ts_active_new(void)
{
    return gw_xcalloc(1, sizeof(struct gw_ts_active));
}

static void unlink_entry(struct gw_ts_active *a, struct entry *e)
{
    if (e->prev != NULL)
        e->prev->next = e->next;
    else
        a->head = e->next;
    if (e->next != NULL)
        e->next->prev = e->prev;
    else
        a->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(struct gw_ts_active *a, struct entry *e)
{
    e->next = a->head;
    if (a->head != NULL)
        a->head->prev = e;
    a->head = e;
    if (a->tail == NULL)
        a->tail = e;
}

static void entry_free(struct gw_ts_active *a, struct entry *e)
{
    unlink_entry(a, e);
    for (size_t i = 0; i < e->n; i++)
        free(e->names[i]);
    free(e->names);
    free(e->dialog);
    free(e);
    a->n--;
}

void gw_ts_active_free(struct gw_ts_active *a)
{
    if (a == NULL)
        return;
    while (a->head != NULL)
        entry_free(a, a->head);
    free(a);
}

static struct entry *find(const struct gw_ts_active *a, const char *dialog)
{
    for (struct entry *e = a->head; e != NULL; e = e->next)
        if (strcmp(e->dialog, dialog) == 0)
            return e;
    return NULL;
}

static size_t name_at(const struct entry *e, const char *name)
{
    size_t i = 0;

    while (i < e->n && strcmp(e->names[i], name) != 0)
        i++;
    return i;
}

int gw_ts_active_add(struct gw_ts_active *a, const char *dialog, const char *name, uint64_t now)
{
    struct entry *e = find(a, dialog);

    if (e == NULL) {
        if (a->n == GW_TS_ACTIVE_DIALOGS)
            entry_free(a, a->tail);
        e = gw_xcalloc(1, sizeof *e);
        e->dialog = gw_xstrdup(dialog);
        e->names = gw_xcalloc(GW_TS_ACTIVE_TOOLS, sizeof *e->names);
        a->n++;
    } else {
        unlink_entry(a, e);
    }
    push_front(a, e);
    e->used = now;
    if (name_at(e, name) < e->n)
        return 0;
    if (e->n == GW_TS_ACTIVE_TOOLS) {
        free(e->names[0]);
        memmove(e->names, e->names + 1, (e->n - 1) * sizeof *e->names);
        e->n--;
    }
    e->names[e->n++] = gw_xstrdup(name);
    return 1;
}

size_t gw_ts_active_remove(struct gw_ts_active *a, const char *dialog, const char *name)
{
    struct entry *e = find(a, dialog);
    size_t i, n;

    if (e == NULL)
        return 0;
    if (name == NULL) {
        n = e->n;
        entry_free(a, e);
        return n;
    }
    if ((i = name_at(e, name)) == e->n)
        return 0;
    free(e->names[i]);
    memmove(e->names + i, e->names + i + 1, (e->n - i - 1) * sizeof *e->names);
    if (--e->n == 0)
        entry_free(a, e);
    return 1;
}

bool gw_ts_active_has(const struct gw_ts_active *a, const char *dialog, const char *name)
{
    const struct entry *e = find(a, dialog);

    return e != NULL && (name == NULL ? e->n > 0 : name_at(e, name) < e->n);
}

json_t *gw_ts_active_json(const struct gw_ts_active *a, const char *dialog)
{
    const struct entry *e = find(a, dialog);
    json_t *names;

    if (e == NULL)
        return NULL;
    names = json_array();
    for (size_t i = 0; i < e->n; i++)
        json_array_append_new(names, json_string(e->names[i]));
    return names;
}

void gw_ts_active_each(const struct gw_ts_active *a, void (*fn)(const char *dialog, void *arg),
                       void *arg)
{
    for (const struct entry *e = a->head; e != NULL; e = e->next)
        fn(e->dialog, arg);
}

void gw_ts_active_sweep(struct gw_ts_active *a, uint64_t now, uint64_t idle_ms)
{
    /* least recently used last: stop at the first one still in use */
    while (idle_ms > 0 && a->tail != NULL && now - a->tail->used >= idle_ms)
        entry_free(a, a->tail);
}
