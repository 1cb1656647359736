/* The libwebsockets loader and the forwarders that stand for its functions
 * (see gw/ws_lib.h). */
#include "gw/ws_lib.h"

#include <dlfcn.h>
#include <libwebsockets.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/dynlib.h"
#include "gw/log.h"
#include "gw/util.h"

/* Every libwebsockets function mcpgw calls (without its lws_ prefix): the
 * table's fields, typed by the library's own declarations. */
#define WS_FUNCS(X)                                                                                \
    X(add_http_header_by_name)                                                                     \
    X(callback_http_dummy)                                                                         \
    X(callback_on_writable)                                                                        \
    X(client_connect_via_info)                                                                     \
    X(close_reason)                                                                                \
    X(context_destroy)                                                                             \
    X(create_context)                                                                              \
    X(frame_is_binary)                                                                             \
    X(get_opaque_user_data)                                                                        \
    X(get_socket_fd)                                                                               \
    X(hdr_copy)                                                                                    \
    X(http_client_http_response)                                                                   \
    X(is_final_fragment)                                                                           \
    X(is_first_fragment)                                                                           \
    X(remaining_packet_payload)                                                                    \
    X(set_log_level)                                                                               \
    X(set_opaque_user_data)                                                                        \
    X(set_timeout)                                                                                 \
    X(write)

#define FIELD(name) __typeof__(lws_##name) *name;
static struct {
    WS_FUNCS(FIELD)
} fn;
#undef FIELD

#define SYM(name) {"lws_" #name, offsetof(__typeof__(fn), name)},
static const struct gw_dynsym syms[] = {WS_FUNCS(SYM)};
#undef SYM

static bool loaded;

int gw_ws_lib_load(char *why, size_t cap)
{
    if (loaded)
        return 0;
    /* RTLD_GLOBAL: the event library libwebsockets loads itself
     * (libwebsockets-evlib_uv.so) resolves its symbols against it. */
    static const struct gw_dynlib lib = {
        .soname = GW_WS_LIB,
        .flags = RTLD_GLOBAL,
        .needed_by = "WebSocket upstreams need (Debian packages libwebsockets17 and "
                     "libwebsockets-evlib-uv)",
        .version = "libwebsockets 4.1 or later is needed",
        .syms = syms,
        .nsyms = sizeof(syms) / sizeof(syms[0]),
    };
    void *h;
    int rc = gw_dynlib_open(&lib, &fn, &h, why, cap);
    if (rc != 0)
        return rc;
    loaded = true;
    gw_log(GW_LOG_INFO, "libwebsockets loaded", "library", GW_WS_LIB, NULL);
    return 0;
}

/* For a forwarder: the table, loaded now if it was not. Every caller that
 * can fail loaded it first, so a failure here is a bug: abort, as on
 * memory exhaustion. */
static void need(void)
{
    char why[512];
    if (loaded || gw_ws_lib_load(why, sizeof(why)) == 0)
        return;
    fprintf(stderr, "mcpgw: libwebsockets is called but cannot be loaded: %s\n", why);
    abort();
}

/* ---- forwarders ---- */

int lws_add_http_header_by_name(struct lws *wsi, const unsigned char *name,
                                const unsigned char *value, int length, unsigned char **p,
                                unsigned char *end)
{
    need();
    return fn.add_http_header_by_name(wsi, name, value, length, p, end);
}

int lws_callback_http_dummy(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                            size_t len)
{
    need();
    return fn.callback_http_dummy(wsi, reason, user, in, len);
}

int lws_callback_on_writable(struct lws *wsi)
{
    need();
    return fn.callback_on_writable(wsi);
}

struct lws *lws_client_connect_via_info(const struct lws_client_connect_info *ccinfo)
{
    need();
    return fn.client_connect_via_info(ccinfo);
}

void lws_close_reason(struct lws *wsi, enum lws_close_status status, unsigned char *buf, size_t len)
{
    need();
    fn.close_reason(wsi, status, buf, len);
}

void lws_context_destroy(struct lws_context *context)
{
    need();
    fn.context_destroy(context);
}

struct lws_context *lws_create_context(const struct lws_context_creation_info *info)
{
    need();
    return fn.create_context(info);
}

int lws_hdr_copy(struct lws *wsi, char *dest, int len, enum lws_token_indexes h)
{
    need();
    return fn.hdr_copy(wsi, dest, len, h);
}

unsigned int lws_http_client_http_response(struct lws *wsi)
{
    need();
    return fn.http_client_http_response(wsi);
}

int lws_frame_is_binary(struct lws *wsi)
{
    need();
    return fn.frame_is_binary(wsi);
}

void *lws_get_opaque_user_data(const struct lws *wsi)
{
    need();
    return fn.get_opaque_user_data(wsi);
}

lws_sockfd_type lws_get_socket_fd(struct lws *wsi)
{
    need();
    return fn.get_socket_fd(wsi);
}

int lws_is_final_fragment(struct lws *wsi)
{
    need();
    return fn.is_final_fragment(wsi);
}

int lws_is_first_fragment(struct lws *wsi)
{
    need();
    return fn.is_first_fragment(wsi);
}

size_t lws_remaining_packet_payload(struct lws *wsi)
{
    need();
    return fn.remaining_packet_payload(wsi);
}

void lws_set_log_level(int level, void (*log_emit_function)(int level, const char *line))
{
    need();
    fn.set_log_level(level, log_emit_function);
}

void lws_set_opaque_user_data(struct lws *wsi, void *data)
{
    need();
    fn.set_opaque_user_data(wsi, data);
}

void lws_set_timeout(struct lws *wsi, enum pending_timeout reason, int secs)
{
    need();
    fn.set_timeout(wsi, reason, secs);
}

int lws_write(struct lws *wsi, unsigned char *buf, size_t len, enum lws_write_protocol protocol)
{
    need();
    return fn.write(wsi, buf, len, protocol);
}
