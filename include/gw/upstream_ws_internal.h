/* Shared by the WebSocket upstream's files only: upstream_ws.c (an
 * instance: resolve, connect, frames, close) and upstream_ws_context.c
 * (the one lws context every instance's connection lives in). */
#ifndef GW_UPSTREAM_WS_INTERNAL_H
#define GW_UPSTREAM_WS_INTERNAL_H

#include <libwebsockets.h>
#include <stddef.h>
#include <uv.h>

#define GW_WS_HEADER_BUF (16u << 10) /* lws's buffer for the upgrade request */

/* One more user of the context on `loop` (created, with `protocols`, if
 * there is none), in *ctx. Returns 0, UV_EINVAL (another loop),
 * UV_ECANCELED (after gw_upstream_ws_shutdown) or UV_ENOTSUP (lws cannot be
 * loaded or started), with a sentence in `why`. */
int gw_ws__ctx_acquire(uv_loop_t *loop, const struct lws_protocols *protocols,
                       struct lws_context **ctx, char *why, size_t whylen);

/* One user less. After gw_upstream_ws_shutdown(), the last one's release
 * destroys the context, over the next loop turns. */
void gw_ws__ctx_release(void);

#endif
