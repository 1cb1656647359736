/* Shared by the WebSocket upstream's files only: upstream_ws.c (an
 * instance: resolve, connect, frames, close) and upstream_ws_context.c
 * (the one lws context every instance's connection lives in). */
#ifndef GW_UPSTREAM_WS_INTERNAL_H
#define GW_UPSTREAM_WS_INTERNAL_H

#include <libwebsockets.h>
#include <stddef.h>
#include <uv.h>

#define GW_WS_HEADER_BUF (16u << 10) /* lws's buffer for the upgrade request */

/* A connection waiting for the next context, while the last one is being
 * destroyed: `ready` gets NULL once it may connect, else why it cannot. */
struct gw_ws_waiter {
    struct gw_ws_waiter *next;
    void (*ready)(struct gw_ws_waiter *wt, const char *why);
    int queued;
};

/* One more user of the context on `loop` (created, with `protocols`, if
 * there is none). Returns 0, UV_EINVAL (another loop) or UV_ENOTSUP (lws
 * cannot be loaded or started), with a sentence in `why`. */
int gw_ws__ctx_acquire(uv_loop_t *loop, const struct lws_protocols *protocols, char *why,
                       size_t whylen);

/* One user less; the last one's release destroys the context, over the
 * next loop turns. */
void gw_ws__ctx_release(void);

/* The context to connect on: 0 and *ctx; 1 while the last context is
 * being destroyed (`wt` is queued and hears `ready`); or a negative code
 * with a sentence in `why`. */
int gw_ws__ctx_get(struct gw_ws_waiter *wt, struct lws_context **ctx, char *why, size_t whylen);

/* Takes `wt` out of the queue, if it is in it. */
void gw_ws__ctx_unwait(struct gw_ws_waiter *wt);

#endif
