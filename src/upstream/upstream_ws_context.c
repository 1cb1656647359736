/* The one lws context every WebSocket upstream's connection lives in: its
 * client TLS context holds the system CA store, about 700 KiB, so there is
 * one copy, not one per instance. It is created by the first start and
 * lives until gw_upstream_ws_shutdown() and the last instance's close.
 *
 * It is destroyed only then because lws 4.1 closes the descriptor of its
 * event pipe (an eventfd) twice when a context on a foreign libuv loop is
 * destroyed: once at once, and again when the pipe's poll handle has closed,
 * at the end of the loop turn. A connection accepted in between gets that
 * number and is closed under its owner (libuv then aborts). At shutdown
 * nothing is accepted any more.
 *
 * With a foreign loop the destruction takes two lws_context_destroy()
 * calls: the first starts closing lws's connections; their uv handles close
 * over the next loop turns, and the last one makes lws close its own idle
 * and timer handles, embedded in the context. Once none of those is left in
 * the loop, the second call frees the context. */
#include "gw/upstream_ws.h"
#include "gw/upstream_ws_internal.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/util.h"
#include "gw/ws_lib.h"

/* Loop turns the context's destruction waits for lws's handles before it
 * gives up (and leaks the context rather than free it under them). */
#define MAX_CLOSE_TURNS 10000

static struct {
    uv_loop_t *loop;
    const struct lws_protocols *protocols;
    struct lws_context *ctx;
    unsigned users;  /* instances started and not yet closed */
    int closing;     /* gw_upstream_ws_shutdown() was called */
    int destroying;  /* the first lws_context_destroy() ran */
    unsigned turns;  /* loop turns spent waiting for lws's handles */
    uv_idle_t *idle; /* drives the destruction; freed in its close callback */
} shared;

/* ---- logging ---- */

static void log_emit(int level, const char *line)
{
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    char *copy = gw_xstrndup(line, n);
    gw_log(GW_LOG_DEBUG, "libwebsockets", "says", copy, NULL);
    free(copy);
}

/* ---- the shared context ---- */

static int shared_create(char *why, size_t whylen)
{
    struct lws_context_creation_info info;
    void *loops[1] = {shared.loop};

    if (gw_ws_lib_load(why, whylen) != 0)
        return UV_ENOTSUP;
    /* lws logs to stderr in its own format by default; ours is logfmt. */
    lws_set_log_level(LLL_ERR | LLL_WARN, log_emit);
    memset(&info, 0, sizeof info);
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = shared.protocols;
    info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    info.foreign_loops = loops;
    info.gid = -1;
    info.uid = -1;
    info.pt_serv_buf_size = GW_WS_HEADER_BUF;
    /* Our own timers bound connecting and upgrading (cfg->timeout_ms). */
    info.timeout_secs = 3600;
    info.connect_timeout_secs = 3600;
    shared.ctx = lws_create_context(&info);
    if (shared.ctx == NULL) {
        gw_say(why, whylen,
               "libwebsockets cannot start on the event loop (is libwebsockets-evlib-uv "
               "installed?)");
        return UV_ENOTSUP;
    }
    return 0;
}

static void on_shared_idle_closed(uv_handle_t *h)
{
    free(h);
}

struct ctx_probe {
    const char *lo, *hi;
    int found;
};

static void probe_handle(uv_handle_t *h, void *arg)
{
    struct ctx_probe *p = arg;
    if ((const char *)h >= p->lo && (const char *)h < p->hi)
        p->found = 1;
}

/* lws's own handles of the context (idle, timer) are embedded in the
 * context's allocation and stay in the loop until their close callbacks
 * ran. Found by address: other modules' handles may leave `data` unset. */
static int handles_left(void)
{
    const char *lo = (const char *)shared.ctx;
    struct ctx_probe p = {lo, lo + malloc_usable_size(shared.ctx), 0};
    uv_walk(shared.loop, probe_handle, &p);
    return p.found;
}

/* An idle handle, not a 0 ms timer: a timer restarted from its own
 * callback runs again before the loop reaches its close callbacks, which
 * are what the destruction waits for. */
static void on_shared_idle(uv_idle_t *h)
{
    if (!shared.destroying) {
        shared.destroying = 1;
        shared.turns = 0;
        lws_context_destroy(shared.ctx);
        return;
    }
    if (handles_left() && ++shared.turns < MAX_CLOSE_TURNS)
        return;
    if (shared.turns >= MAX_CLOSE_TURNS)
        gw_log(GW_LOG_ERROR, "libwebsockets did not close its handles; leaking its context", NULL);
    else
        lws_context_destroy(shared.ctx); /* the second call frees it */
    shared.ctx = NULL;
    shared.destroying = 0;
    uv_close((uv_handle_t *)h, on_shared_idle_closed);
    shared.idle = NULL;
}

static void start_destroy(void)
{
    if (shared.ctx == NULL || shared.destroying || shared.idle != NULL)
        return;
    shared.idle = gw_xmalloc(sizeof *shared.idle);
    uv_idle_init(shared.loop, shared.idle);
    uv_idle_start(shared.idle, on_shared_idle);
}

int gw_ws__ctx_acquire(uv_loop_t *loop, const struct lws_protocols *protocols,
                       struct lws_context **ctx, char *why, size_t whylen)
{
    if (shared.closing) {
        gw_say(why, whylen, "the gateway is stopping");
        return UV_ECANCELED;
    }
    if (shared.ctx != NULL && shared.loop != loop) {
        gw_say(why, whylen, "websocket upstreams run on one event loop only");
        return UV_EINVAL;
    }
    shared.loop = loop;
    shared.protocols = protocols;
    if (shared.ctx == NULL && shared_create(why, whylen) != 0)
        return UV_ENOTSUP;
    shared.users++;
    *ctx = shared.ctx;
    return 0;
}

void gw_ws__ctx_release(void)
{
    if (--shared.users == 0 && shared.closing)
        start_destroy();
}

void gw_upstream_ws_shutdown(void)
{
    shared.closing = 1;
    if (shared.users == 0)
        start_destroy();
}
