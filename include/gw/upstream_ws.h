/* The WebSocket upstream transport (`transport: websocket`, seed 002): one
 * WebSocket connection per instance carrying one JSON-RPC message per text
 * frame (a fragmented message is reassembled), as a gw_transport, so the MCP
 * client runs over it as over stdio and HTTP.
 *
 * It is built on Debian's libwebsockets (4.1) with its libuv event library
 * on the caller's loop (a "foreign" loop to lws). Every instance's
 * connection lives in one lws context, made by the first start and kept
 * until gw_upstream_ws_shutdown(): stopping one instance never waits for
 * another.
 *
 * Connecting: cfg->url is ws://host[:port][/path] or wss://…; the host is
 * resolved off the loop (uv_getaddrinfo), then the connection is made to
 * the chosen address with the URL's host in the Host header (and, for wss,
 * for SNI and certificate verification, which is always on). Plain ws:// is
 * only ever connected to a loopback address (127.0.0.0/8, ::1): a name that
 * resolves elsewhere is refused, and the peer address of the connected socket
 * is checked again before the upgrade request (with its headers) is sent
 * (security.md S10's rule for HTTP upstreams). The upgrade request asks for
 * the subprotocol `mcp` (a server that picks none is accepted) and carries
 * cfg->headers, which are never logged. Sends before the upgrade completed
 * wait, at most GW_WS_MAX_PENDING bytes.
 *
 * The instance goes down (on_down) when: the connection cannot be made or
 * the upgrade does not complete within cfg->timeout_ms (UV_ETIMEDOUT); the
 * address is refused (GW_WS_E_REFUSED); a message exceeds GW_WS_MAX_MESSAGE
 * (GW_WS_E_TOO_BIG, security.md S2); the server closes the connection or it
 * breaks (GW_WS_E_CLOSED); nothing (not even a pong to the transport's
 * pings) came for cfg->sse_read_timeout_ms (GW_WS_E_CLOSED); stop or kill
 * (UV_ECANCELED). Binary messages are not JSON-RPC: they are dropped and
 * counted.
 *
 * Lifetime: the caller owns the instance from start until on_closed, after
 * which it is freed. on_down fires exactly once before on_closed. After a
 * failure the instance closes by itself; stop sends a close frame (1000) and
 * waits for the close handshake at most GW_WS_CLOSE_GRACE_MS; kill closes at
 * once; on_closed comes on a later loop turn. */
#ifndef GW_UPSTREAM_WS_H
#define GW_UPSTREAM_WS_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "gw/errors.h"
#include "gw/config.h"
#include "gw/transport.h"

#define GW_WS_MAX_MESSAGE    (16u << 20) /* one message from the server */
#define GW_WS_MAX_PENDING    (64u << 20) /* bytes queued to send */
#define GW_WS_CLOSE_GRACE_MS 1000        /* close handshake on stop */

/* on_down codes (range: errors.h). */
enum {
    GW_WS_E_TOO_BIG = GW_E_WS_BASE - 1, /* a message over GW_WS_MAX_MESSAGE */
    GW_WS_E_CLOSED = GW_E_WS_BASE - 2,  /* the connection failed, broke or was closed */
    GW_WS_E_REFUSED = GW_E_WS_BASE - 3, /* ws:// to an address that is not loopback */
};

struct gw_upstream_ws;

struct gw_upstream_ws_stats {
    uint64_t messages_in; /* on_message calls */
    uint64_t messages_out;
    uint64_t bytes_in;
    uint64_t bytes_out;
    uint64_t binary_dropped; /* binary messages, not delivered */
    int connected;           /* the upgrade completed and the connection is up */
};

/* Creates an instance for cfg (url, headers, timeout_ms, sse_read_timeout_ms
 * are used; `cfg` is read only during the call) and starts connecting.
 * With `oauth` (the server's client, which must outlive the instance) the
 * upgrade request carries its access token as a Bearer Authorization
 * (unless cfg's headers set Authorization), and a 401 answer's
 * WWW-Authenticate goes to gw_oauth_challenged.
 * `*cbs` is copied. Returns 0 and sets *out, or with a sentence in `why`
 * UV_EINVAL (wrong transport, a URL that is not ws:// or wss:// with a host)
 * or UV_ENOTSUP (libwebsockets or its libuv event library cannot be used);
 * then nothing was allocated and no callback fires. */
struct gw_oauth;
int gw_upstream_ws_start(uv_loop_t *loop, const struct gw_server_config *cfg,
                         struct gw_oauth *oauth, const struct gw_transport_cbs *cbs,
                         struct gw_upstream_ws **out, char *why, size_t whylen);

/* The instance as a gw_transport: send queues one text message (0,
 * UV_ENOBUFS past GW_WS_MAX_PENDING or GW_WS_MAX_MESSAGE, UV_EPIPE once down
 * or stopping); stop is gw_upstream_ws_stop(). */
struct gw_transport *gw_upstream_ws_transport(struct gw_upstream_ws *w);

/* Close handshake (bounded), on_down (UV_ECANCELED) if not yet, then
 * on_closed on a later loop turn. Idempotent. */
void gw_upstream_ws_stop(struct gw_upstream_ws *w);

/* As stop, without the close handshake. Idempotent. */
void gw_upstream_ws_kill(struct gw_upstream_ws *w);

/* cfg->url without userinfo or query, for logs and /v1/servers. */
const char *gw_upstream_ws_url(const struct gw_upstream_ws *w);

/* The last failure as a sentence, or NULL when none. */
const char *gw_upstream_ws_last_error(const struct gw_upstream_ws *w);

void gw_upstream_ws_get_stats(const struct gw_upstream_ws *w, struct gw_upstream_ws_stats *out);

/* The gateway stops: no instance starts any more, and the lws context is
 * destroyed once the last one closed (its handles close over the next loop
 * turns, so the loop can end). */
void gw_upstream_ws_shutdown(void);

#endif
