/* Catalog extras: the prompts, resources and resource templates the
 * servers offer beside their tools (design §5, last paragraph).
 *
 * A pure data module like the catalog: no sockets, processes or loop.
 * Prompt names follow the tool rules — the server's whitelist/blacklist on
 * the ORIGINAL name, its transforms, ^[a-zA-Z0-9_-]{1,64}$ before and after
 * (the catalog's own functions do it) — and a final name offered by two
 * servers keeps its first owner. Resource URIs and URI templates pass
 * through unchanged; a URI (or template) offered by two servers keeps its
 * first owner. A server with resource_namespace has its URIs and templates
 * served as "mcpgw:<id>/<uri>" instead (a template keeps its expressions,
 * so it stays an RFC 6570 template matching the namespaced URIs); another
 * server's URIs in that scheme are not served, so namespaced ones never
 * collide. "First" is the order in which servers first gave a listing;
 * a server that goes away frees its names and URIs for the others (their
 * skipped entries are offered again at once).
 *
 * Ownership: gw_extras owns copies of every listing it was given and what
 * it derived from them. Strings returned by lookups are borrowed and valid
 * until the next set/remove/free. JSON returned by the projections is a new
 * reference owned by the caller. */
#ifndef GW_CATALOG_EXTRA_H
#define GW_CATALOG_EXTRA_H

#include <jansson.h>
#include <stdint.h>

#include "gw/catalog.h"
#include "gw/config.h"

enum gw_extra_kind { GW_EXTRA_PROMPTS, GW_EXTRA_RESOURCES, GW_EXTRA_TEMPLATES, GW_EXTRA_KINDS };

/* Bounds on untrusted entries (security.md S7): an entry larger than this
 * (compact JSON) or with a longer URI is not served (warning). */
#define GW_EXTRA_ENTRY_MAX_BYTES (64u * 1024u)
#define GW_EXTRA_URI_MAX         2048u

struct gw_extras;

struct gw_extras *gw_extras_new(void);
void gw_extras_free(struct gw_extras *e);

/* Replaces what server `cfg->id` offers of `kind` with `listing` (the raw
 * list result array, borrowed; NULL: nothing) and resolves ownership
 * again. Returns a bit mask (1u << kind) of the kinds whose served lists
 * changed. */
unsigned gw_extras_set(struct gw_extras *e, const struct gw_server_config *cfg,
                       enum gw_extra_kind kind, json_t *listing);

/* Forgets a server entirely; returns the changed-kinds mask as above. */
unsigned gw_extras_remove(struct gw_extras *e, const char *server);

/* The served list of `kind`: [Prompt] under final names, [Resource] or
 * [ResourceTemplate] as the servers sent them. New reference. */
json_t *gw_extras_json(const struct gw_extras *e, enum gw_extra_kind kind);

/* The same with "server" (and "originalName" for prompts,
 * "originalUri" / "originalUriTemplate" for namespaced resources and
 * templates) added to each entry, for GET /v1/prompts and /v1/resources.
 * New reference. */
json_t *gw_extras_rest_json(const struct gw_extras *e, enum gw_extra_kind kind);

/* Owner lookups; NULL when nothing matches. */
const char *gw_extras_prompt(const struct gw_extras *e, const char *final, const char **original);
/* A listed URI, else the first owned template (in serving order) that
 * matches it (RFC 6570 level 1–3 expressions, matched loosely). */
const char *gw_extras_resource(const struct gw_extras *e, const char *uri);
const char *gw_extras_template(const struct gw_extras *e, const char *uri_template);

/* Does any server currently serve something of `kind`? */
bool gw_extras_any(const struct gw_extras *e, enum gw_extra_kind kind);

/* The diagnostics of server `server` (what was left out and why), or NULL
 * if the server is unknown. Borrowed. */
const struct gw_cat_diags *gw_extras_diags(const struct gw_extras *e, const char *server);

/* Server ids known to the extras, i from 0 while non-NULL. */
const char *gw_extras_server_at(const struct gw_extras *e, size_t i);

/* Exposed for tests: does `uri` match the URI template `tmpl`? */
bool gw_extras_template_match(const char *tmpl, const char *uri);

#endif
