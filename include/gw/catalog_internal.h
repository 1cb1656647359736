/* The catalog's insides (catalog.c, catalog_firsts.c): the first
 * definition of every tool a server has listed (security.md S8), kept by
 * the catalog for each server toolset.
 *
 * A rug pull is a tool whose definition changes after the agent's operator
 * saw it. Comparing with the previous listing misses a tool removed and
 * listed again, or listed by a new instance after a crash; so each tool's
 * first definition is remembered, by original name, for as long as the
 * server's configuration stays the same, whatever path later listings take
 * (notifications/tools/list_changed, restarts, new lease instances). A
 * listing made under another configuration (a reload that changed the
 * server's config: its spawn or catalog hash) forgets them all and ends
 * every withdrawal: the operator has looked at the server again.
 *
 * What counts as the definition: title, description, inputSchema,
 * outputSchema and annotations, after derive's normalisation (so what the
 * agent is served). Each part is remembered as a SHA-256 digest, since the
 * server chooses both the first and the later text.
 *
 * Bounded: at most GW_CATALOG_MAX_FIRSTS names per server; names past it
 * are not remembered (a warning says so). Pure data; the catalog owns one
 * per server toolset. */
#ifndef GW_CATALOG_INTERNAL_H
#define GW_CATALOG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "gw/catalog.h"

#define GW_CATALOG_MAX_FIRSTS (4 * GW_CATALOG_MAX_TOOLS)

struct gw_cat_firsts;

struct gw_cat_firsts *gw_cat_firsts_new(void);
void gw_cat_firsts_free(struct gw_cat_firsts *f);

/* Compares every tool of `b` with its first definition, remembering the
 * tools seen for the first time. A changed tool gets a warning diagnostic
 * (GW_CAT_DEFINITION_CHANGED) at every check while it differs; with
 * GW_TOOL_CHANGES_DISABLE it is withdrawn, and every later listing of it,
 * changed or not, repeats the warning until the configuration changes.
 * Returns how many tools were withdrawn by this check. */
size_t gw_cat_firsts_check(struct gw_cat_firsts *f, const struct gw_toolset_build *b,
                           enum gw_tool_changes mode, struct gw_cat_diags *d);

/* Whether the tool with this ORIGINAL name is withdrawn. */
bool gw_cat_firsts_withdrawn(const struct gw_cat_firsts *f, const char *original_name);

#endif
