/* The problems registry: a small ordered list keyed by id. Problems number in
 * the tens, so a linear list keeps insertion order for free and costs less
 * than a hash table. */
#include "gw/problems.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/util.h"

struct entry {
    struct gw_problem p; /* every string owned by the entry */
    struct entry *next;
    bool marked;
};

struct gw_problems {
    struct entry *head;
    gw_problems_cb cb;
    void *cb_data;
};

static const char *const severity_names[] = {"error", "warning", "info"};
static const char *const scope_names[] = {"workspace", "server", "tool"};

const char *gw_severity_name(enum gw_severity s)
{
    return severity_names[s];
}

const char *gw_scope_name(enum gw_scope s)
{
    return scope_names[s];
}

struct gw_problems *gw_problems_new(void)
{
    return gw_xcalloc(1, sizeof(struct gw_problems));
}

static void entry_free(struct entry *e)
{
    free((char *)e->p.id);
    free((char *)e->p.server);
    free((char *)e->p.tool);
    free((char *)e->p.message);
    free(e);
}

void gw_problems_free(struct gw_problems *reg)
{
    if (reg == NULL)
        return;
    while (reg->head != NULL) {
        struct entry *e = reg->head;
        reg->head = e->next;
        entry_free(e);
    }
    free(reg);
}

void gw_problems_set_listener(struct gw_problems *reg, gw_problems_cb cb, void *data)
{
    reg->cb = cb;
    reg->cb_data = data;
}

static struct entry **find_slot(struct gw_problems *reg, const char *id)
{
    struct entry **slot = &reg->head;

    while (*slot != NULL && strcmp((*slot)->p.id, id) != 0)
        slot = &(*slot)->next;
    return slot;
}

static int same_text(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

static void log_problem(const struct gw_problem *p)
{
    enum gw_log_level level = p->severity == GW_SEV_ERROR     ? GW_LOG_ERROR
                              : p->severity == GW_SEV_WARNING ? GW_LOG_WARN
                                                              : GW_LOG_INFO;
    gw_log(level, p->message, "problem", p->id, "scope", gw_scope_name(p->scope), "server",
           p->server, "tool", p->tool, NULL);
}

void gw_problems_set(struct gw_problems *reg, const struct gw_problem *p)
{
    struct entry **slot = find_slot(reg, p->id);
    struct entry *e = *slot;

    if (e != NULL)
        e->marked = false;
    if (e != NULL && e->p.severity == p->severity && e->p.scope == p->scope &&
        same_text(e->p.message, p->message) && same_text(e->p.server, p->server) &&
        same_text(e->p.tool, p->tool))
        return;
    if (e == NULL) {
        e = gw_xcalloc(1, sizeof *e);
        e->p.id = gw_xstrdup(p->id);
        e->p.since = time(NULL);
        *slot = e;
    } else {
        if (e->p.severity != p->severity || !same_text(e->p.message, p->message))
            e->p.since = time(NULL);
        free((char *)e->p.server);
        free((char *)e->p.tool);
        free((char *)e->p.message);
    }
    e->p.severity = p->severity;
    e->p.scope = p->scope;
    e->p.server = p->server ? gw_xstrdup(p->server) : NULL;
    e->p.tool = p->tool ? gw_xstrdup(p->tool) : NULL;
    e->p.message = gw_xstrdup(p->message);
    log_problem(&e->p);
    if (reg->cb != NULL)
        reg->cb(&e->p, 0, reg->cb_data);
}

static void unlink_entry(struct gw_problems *reg, struct entry **slot)
{
    struct entry *e = *slot;

    *slot = e->next;
    gw_log(GW_LOG_INFO, "problem cleared", "problem", e->p.id, NULL);
    if (reg->cb != NULL)
        reg->cb(&e->p, 1, reg->cb_data);
    entry_free(e);
}

int gw_problems_clear(struct gw_problems *reg, const char *id)
{
    struct entry **slot = find_slot(reg, id);

    if (*slot == NULL)
        return 0;
    unlink_entry(reg, slot);
    return 1;
}

int gw_problems_clear_prefix(struct gw_problems *reg, const char *prefix)
{
    size_t n = strlen(prefix);
    struct entry **slot = &reg->head;
    int count = 0;

    while (*slot != NULL) {
        if (strncmp((*slot)->p.id, prefix, n) == 0) {
            unlink_entry(reg, slot);
            count++;
        } else {
            slot = &(*slot)->next;
        }
    }
    return count;
}

void gw_problems_mark(struct gw_problems *reg, const char *prefix)
{
    size_t n = strlen(prefix);

    for (struct entry *e = reg->head; e != NULL; e = e->next)
        e->marked = strncmp(e->p.id, prefix, n) == 0;
}

int gw_problems_sweep(struct gw_problems *reg, const char *prefix)
{
    size_t n = strlen(prefix);
    struct entry **slot = &reg->head;
    int count = 0;

    while (*slot != NULL) {
        if ((*slot)->marked && strncmp((*slot)->p.id, prefix, n) == 0) {
            unlink_entry(reg, slot);
            count++;
        } else {
            slot = &(*slot)->next;
        }
    }
    return count;
}

size_t gw_problems_count(const struct gw_problems *reg, enum gw_severity severity)
{
    size_t n = 0;

    for (const struct entry *e = reg->head; e != NULL; e = e->next)
        n += e->p.severity == severity;
    return n;
}

const struct gw_problem *gw_problems_find(const struct gw_problems *reg, const char *id)
{
    for (const struct entry *e = reg->head; e != NULL; e = e->next) {
        if (strcmp(e->p.id, id) == 0)
            return &e->p;
    }
    return NULL;
}

json_t *gw_problem_to_json(const struct gw_problem *p)
{
    char since[32];

    gw_format_time(p->since, since, sizeof since);
    return json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s, s:s}", "id", p->id, "severity",
                     gw_severity_name(p->severity), "scope", gw_scope_name(p->scope), "server",
                     p->server, "tool", p->tool, "message", p->message, "since", since);
}

json_t *gw_problems_to_json(const struct gw_problems *reg)
{
    json_t *list = json_array();

    for (const struct entry *e = reg->head; e != NULL; e = e->next)
        json_array_append_new(list, gw_problem_to_json(&e->p));
    return json_pack("{s:o}", "problems", list);
}
