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
#include <stdbool.h>
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
    /* A sandboxed instance asked its proxy for a destination (gw/netproxy.h:
     * `entry` as an allow-list entry; `why` NULL when allowed). May be
     * NULL. */
    void (*on_netcheck)(void *data, const char *entry, bool allowed, const char *why);
};

/* What each transport implements; the instance above knows no other
 * entry points. */
struct gw_transport_ops {
    int (*send)(struct gw_transport *t, const char *msg, size_t len);
    void (*stop)(struct gw_transport *t);
    /* Now, for a hard shutdown: on_down (if not yet fired) may fire during
     * the call, on_closed follows on a later loop turn. Idempotent. */
    void (*kill)(struct gw_transport *t);
    /* The last lines the upstream wrote for people (a process's stderr),
     * oldest first, as a new JSON array; NULL when it has no such stream. */
    json_t *(*stderr_tail)(const struct gw_transport *t);
    /* Adds the transport's own fields to an instance's /v1/servers object
     * `o`: "pid", or "url", "session" and "lastError". */
    void (*describe)(const struct gw_transport *t, json_t *o);
    /* The upstream's session id (HTTP's Mcp-Session-Id), or NULL. */
    const char *(*session_id)(const struct gw_transport *t);
    /* The process id, or 0 when the upstream is not a child process. */
    int (*pid)(const struct gw_transport *t);
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

static inline void gw_transport_kill(struct gw_transport *t)
{
    t->ops->kill(t);
}

static inline json_t *gw_transport_stderr_tail(const struct gw_transport *t)
{
    return t->ops->stderr_tail(t);
}

static inline void gw_transport_describe(const struct gw_transport *t, json_t *o)
{
    t->ops->describe(t, o);
}

static inline const char *gw_transport_session_id(const struct gw_transport *t)
{
    return t->ops->session_id(t);
}

static inline int gw_transport_pid(const struct gw_transport *t)
{
    return t->ops->pid(t);
}

#endif
