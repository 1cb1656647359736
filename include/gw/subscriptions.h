/* Resource subscriptions (MCP resources/subscribe) that downstream clients
 * hold through the gateway.
 *
 * A subscription is made by a resources/subscribe request routed like
 * resources/read (gw_dispatch_request with a subscriber): it goes to the
 * instance the client's dialog uses for the resource's server (its leased
 * instance, or the shared one of a truely-stateless server) and, once that
 * upstream answered, is recorded on that instance. A
 * notifications/resources/updated from the instance reaches every
 * subscriber holding the URI (or a URI it is a sub-resource of) there, and
 * no one else. Subscriptions end with gw_subscriber_drop(), with the
 * subscriber, or when their instance is released, replaced or dies (the
 * client is not told; MCP has no message for it).
 *
 * The gateway is one client to each upstream instance, so several
 * subscribers of one URI on one instance share one upstream subscription:
 * resources/unsubscribe goes upstream only when the last of them lets go.
 *
 * Ownership: the caller owns a subscriber from gw_subscriber_new() until
 * gw_subscriber_free(), which must come before gw_servers_close() calls
 * back. Hooks fire on the loop, never inside a call into this module; a
 * hook may free any subscriber, its own included (the others due to hear
 * the same update then do not). */
#ifndef GW_SUBSCRIPTIONS_H
#define GW_SUBSCRIPTIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "gw/servers.h"

/* Subscriptions of one subscriber, those being made included; beyond,
 * resources/subscribe fails with GW_SERVERS_E_SUBS_FULL. */
#define GW_SUBS_PER_SUBSCRIBER 1000
/* Distinct URIs subscribed on one upstream instance (by all subscribers
 * together); beyond, the same. */
#define GW_SUBS_URIS_PER_INSTANCE 4096

struct gw_subscriber_hooks {
    /* notifications/resources/updated for a URI the subscriber holds;
     * `params` (borrowed) carry the URI as the client knows it (namespaced
     * when the server's resource_namespace is on). Once per notification,
     * however many of its subscriptions cover the URI. */
    void (*on_updated)(void *data, json_t *params);
};

/* A subscriber with no subscriptions; `hooks` must outlive it. */
struct gw_subscriber *gw_subscriber_new(struct gw_servers *s,
                                        const struct gw_subscriber_hooks *hooks, void *data);

/* Ends every subscription of `sub` and frees it (a subscribe still in
 * flight lets go when it finishes). With `tell_upstream`, an instance that
 * is still serving gets resources/unsubscribe for each URI no other
 * subscriber holds there; without it (daemon shutdown), nothing is sent. */
void gw_subscriber_free(struct gw_subscriber *sub, bool tell_upstream);

/* resources/unsubscribe: ends the subscriber's subscriptions to `uri` (as
 * the client knows it), telling the upstream as above. Returns 0 (also
 * when it held none, if some server offers the URI), or
 * GW_SERVERS_E_NO_TOOL when it held none and no server offers the URI. */
int gw_subscriber_drop(struct gw_subscriber *sub, const char *uri);

/* Subscriptions held now (not those being made). */
size_t gw_subscriber_count(const struct gw_subscriber *sub);

#endif
