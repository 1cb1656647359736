/* Problems: the structured record of what is wrong, served by
 * GET /v1/problems and logged when it appears.
 *
 * A problem is keyed by a caller-chosen id (for example
 * "config/server/fs/env"), so the module that raised it can replace or clear
 * it when the cause changes. The registry owns copies of every string. */
#ifndef GW_PROBLEMS_H
#define GW_PROBLEMS_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

enum gw_severity { GW_SEV_ERROR, GW_SEV_WARNING, GW_SEV_INFO };
enum gw_scope { GW_SCOPE_WORKSPACE, GW_SCOPE_SERVER, GW_SCOPE_TOOL };

struct gw_problem {
    const char *id;
    enum gw_severity severity;
    enum gw_scope scope;
    const char *server; /* NULL when not tied to a server */
    const char *tool;   /* NULL when not tied to a tool */
    const char *message;
    time_t since; /* set by the registry */
};

struct gw_problems;

/* Called after a problem is added, changed or cleared (for events). */
typedef void (*gw_problems_cb)(const struct gw_problem *p, int cleared, void *data);

struct gw_problems *gw_problems_new(void);
void gw_problems_free(struct gw_problems *reg);
void gw_problems_set_listener(struct gw_problems *reg, gw_problems_cb cb, void *data);

/* Adds a problem or replaces the one with the same id. `since` is kept when
 * severity and message are unchanged, so a problem that persists across
 * reloads keeps its age. Logs the problem when it is new or changed. */
void gw_problems_set(struct gw_problems *reg, const struct gw_problem *p);

/* Removes the problem with this id; returns 1 if one was removed. */
int gw_problems_clear(struct gw_problems *reg, const char *id);

/* Removes every problem whose id starts with `prefix`; returns the count. */
int gw_problems_clear_prefix(struct gw_problems *reg, const char *prefix);

/* Replacing a whole family without flapping: gw_problems_mark() marks
 * every problem whose id starts with `prefix`; gw_problems_set() unmarks
 * the ones set again; gw_problems_sweep() clears those still marked. An
 * unchanged problem is neither cleared nor re-announced. */
void gw_problems_mark(struct gw_problems *reg, const char *prefix);
int gw_problems_sweep(struct gw_problems *reg, const char *prefix);

size_t gw_problems_count(const struct gw_problems *reg, enum gw_severity severity);
const struct gw_problem *gw_problems_find(const struct gw_problems *reg, const char *id);

/* {"problems":[{"id","severity","scope","server","tool","message","since"}]}
 * in insertion order; `since` is RFC 3339 UTC. New reference. */
json_t *gw_problems_to_json(const struct gw_problems *reg);

/* One problem as the JSON object of GET /v1/problems. New reference. */
json_t *gw_problem_to_json(const struct gw_problem *p);

const char *gw_severity_name(enum gw_severity s);
const char *gw_scope_name(enum gw_scope s);

#endif
