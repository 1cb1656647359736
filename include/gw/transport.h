/* An upstream transport carries whole JSON-RPC messages between the gateway
 * and one upstream instance (a stdio process, an HTTP session). The MCP
 * client layer sits above it and never knows which transport it uses.
 *
 * The owner of an instance creates the transport with a gw_transport_cbs,
 * sends through gw_transport_send() and stops it with gw_transport_stop().
 * After on_closed the transport is freed and must not be touched. */
#ifndef GW_TRANSPORT_H
#define GW_TRANSPORT_H

#include <jansson.h>
#include <stddef.h>

struct gw_transport;

struct gw_transport_cbs {
    /* One complete message (a stdout line, an SSE event, a JSON body). The
     * bytes are valid only during the call. */
    void (*on_message)(void *data, const char *msg, size_t len);
    /* The transport failed or the process exited: no more messages will
     * come and sends fail. `why` is a sentence for a person (a Problem). */
    void (*on_down)(void *data, int code, const char *why);
    /* The request with JSON-RPC id `id` (borrowed) provably did not run:
     * the server refused it because it no longer knows the session (HTTP
     * 404), and on_down follows at once. Its answer will never come; it
     * may be sent again on a new instance. May be NULL. */
    void (*on_not_run)(void *data, json_t *id, const char *why);
    /* Every handle is closed; the transport has been freed. */
    void (*on_closed)(void *data);
    void *data;
};

struct gw_transport_ops {
    int (*send)(struct gw_transport *t, const char *msg, size_t len);
    void (*stop)(struct gw_transport *t);
};

struct gw_transport {
    const struct gw_transport_ops *ops;
};

/* Queues one message; returns 0 or a negative code (UV_EPIPE once down). */
static inline int gw_transport_send(struct gw_transport *t, const char *msg, size_t len)
{
    return t->ops->send(t, msg, len);
}

/* Starts the transport's stop sequence; on_closed fires when it is done. */
static inline void gw_transport_stop(struct gw_transport *t)
{
    t->ops->stop(t);
}

#endif
