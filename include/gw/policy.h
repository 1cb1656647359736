/* Clients and what they may use (issue 35): the one decision every surface
 * asks, from the current config, the client's name and the final name.
 *
 * A config without clients lets every caller use everything (the
 * gateway's token, if any, aside: it is the admin client `default`). With
 * clients, a name the config does not know (a client a reload removed)
 * may use nothing. A tool the client may not use does not exist for it:
 * the surfaces answer as for an unknown name. */
#ifndef GW_POLICY_H
#define GW_POLICY_H

#include <jansson.h>
#include <stdbool.h>

#include "gw/catalog.h"
#include "gw/config.h"
#include "gw/servers.h"

/* The client whose token has this SHA-256, by its name (static: the
 * config's), or NULL. The config's index of digests gives the candidates
 * (those whose first 8 bytes are the same), each compared in full with no
 * early exit, so the time does not tell how close a guess came. */
const char *gw_policy_client_by_digest(const struct gw_config *c, const unsigned char digest[32]);

/* Whether the client may use server `server`'s prompts, resources and
 * tools at all: `servers:` lists it, or is absent. */
bool gw_policy_server(const struct gw_config *c, const char *client, const char *server);

/* Whether the tool exists for the client: the gateway's own tools (NULL
 * `server`) always; else its server is the client's, a glob of `tools:`
 * (absent: all) matches the final name and none of `deny:` does. `rule`
 * (may be NULL) gets what decided: the glob, "servers", "tools" or NULL
 * when nothing restricts (static, the config's). The verdict is kept in
 * the client's slots of `c` (config.h), so the globs are tried once per
 * name and snapshot. */
bool gw_policy_tool(const struct gw_config *c, const char *client, const char *server,
                    const char *tool, const char **rule);

/* Whether the client may reload, release any dialog, authorize and forget
 * OAuth grants and read /metrics. */
bool gw_policy_admin(const struct gw_config *c, const char *client);

/* Removes from `tools` (an array of tools in `fmt`, by their final name)
 * those the client may not use. */
void gw_policy_filter_tools(const struct gw_config *c, const char *client,
                            const struct gw_catalog *cat, json_t *tools, enum gw_tool_format fmt);

/* The same over the servers' catalog and newest config. */
void gw_policy_filter_tools_of(const struct gw_servers *s, const char *client, json_t *tools,
                               enum gw_tool_format fmt);

/* The tool of this final name when it exists for the client, else NULL
 * (the servers' catalog and newest config). */
const struct gw_cat_tool *gw_policy_lookup(const struct gw_servers *s, const char *client,
                                           const char *name);

/* Whether the client may see toolset `toolset` (gw_policy_server; the
 * built-in toolset is every client's), as a search says what it could not
 * search yet (gw_toolsearch_visible): `view` is a struct gw_policy_view. */
struct gw_policy_view {
    const struct gw_servers *servers;
    const char *client;
};
bool gw_policy_view_toolset(const char *toolset, void *view);

/* gw_catalog_toolsets_json without the client's foreign toolsets and
 * tools. New reference. */
json_t *gw_policy_toolsets_json(const struct gw_config *c, const char *client,
                                const struct gw_catalog *cat);

/* gw_servers_extras_json without what the client may not use: what its
 * servers do not offer, and prompts whose final names its `tools`/`deny`
 * globs take away, as they would a tool's. New reference. */
json_t *gw_policy_extras_json(const struct gw_servers *s, const char *client,
                              enum gw_extra_kind kind, bool rest);

/* The server that offers prompt `name` (kind GW_EXTRA_PROMPTS) or
 * resource/template `uri` is the client's, and a prompt's name passes
 * its globs (gw_policy_tool). */
bool gw_policy_extra(const struct gw_servers *s, const char *client, enum gw_extra_kind kind,
                     const char *key);

/* The same for a request gw_extra_route sent to `server`: prompts/get and
 * a completion of a prompt decide by the prompt's final name. */
bool gw_policy_route(const struct gw_config *c, const char *client, const char *server,
                     const char *method, const json_t *params);

/* Whether the servers' newest config has clients; whether it knows this
 * one. */
bool gw_policy_clients(const struct gw_servers *s);
bool gw_policy_known(const struct gw_servers *s, const char *client);

/* The SHA-256 of the client's tools/list (every tool it may use, as /mcp
 * lists them): another digest means its view changed. */
void gw_policy_view_digest(const struct gw_servers *s, const char *client, unsigned char out[32]);

/* Limits per client (`rate`, `max_concurrent`): whether a tool call of
 * the client may start now. 0 (the call is counted in flight until
 * gw_policy_done), or GW_SERVERS_E_RATE_LIMITED with the wait before it
 * could in *retry_ms. A client without limits (or no clients) always
 * may. */
int gw_policy_admit(struct gw_servers *s, const char *client, uint64_t now_ms, uint64_t *retry_ms);
void gw_policy_done(struct gw_servers *s, const char *client);
/* The wait before the client's next call could start, in ms (0: now). */
uint64_t gw_policy_retry_ms(struct gw_servers *s, const char *client, uint64_t now_ms);
/* The Prometheus lines of each configured client's limits (calls in
 * flight, calls refused): one series per client of the config, so the
 * label is bounded. New string. */
char *gw_policy_metrics(const struct gw_servers *s);

#endif
