/* The one place that knows every transport: starts the one a server's
 * config names and hands back its gw_transport. Everything above (the
 * instance, the MCP client) sees only transport.h. */
#ifndef GW_UPSTREAM_H
#define GW_UPSTREAM_H

#include <stddef.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/curl_uv.h"
#include "gw/oauth.h"
#include "gw/transport.h"

/* Starts cfg's transport (stdio, streamable HTTP or SSE through `multi`,
 * WebSocket) with the gateway settings of `gw` that reach transports (the
 * variables a child inherits, the secrets masked in its stderr). Returns 0
 * and sets *out, or a negative code with a sentence in `why` (capacity
 * `whylen`); then no callback fires. `multi` may be NULL, and then an HTTP
 * server fails with UV_ENOTSUP. `oauth` (may be NULL) is the server's
 * OAuth client, which an HTTP or SSE transport uses (gw/upstream_http.h). */
int gw_upstream_start(uv_loop_t *loop, struct gw_curl_uv *multi, const struct gw_gateway_config *gw,
                      const struct gw_server_config *cfg, struct gw_oauth *oauth,
                      const struct gw_transport_cbs *cbs, struct gw_transport **out, char *why,
                      size_t whylen);

#endif
