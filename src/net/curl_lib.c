/* The libcurl loader and the forwarders that stand for libcurl's own
 * functions (see gw/curl_lib.h). The forwarders are defined under libcurl's
 * names, so <curl/curl.h>'s type-checking macros, which would rename their
 * definitions, are turned off in this file only. */
#define CURL_DISABLE_TYPECHECK 1
#include "gw/curl_lib.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/dynlib.h"
#include "gw/log.h"
#include "gw/util.h"

/* Every libcurl function mcpgw calls (without its curl_ prefix): the table's
 * fields, typed by libcurl's own declarations, and the names resolved. */
#define CURL_FUNCS(X)                                                                              \
    X(global_init)                                                                                 \
    X(easy_init)                                                                                   \
    X(easy_cleanup)                                                                                \
    X(easy_setopt)                                                                                 \
    X(easy_perform)                                                                                \
    X(easy_getinfo)                                                                                \
    X(easy_strerror)                                                                               \
    X(multi_init)                                                                                  \
    X(multi_cleanup)                                                                               \
    X(multi_setopt)                                                                                \
    X(multi_add_handle)                                                                            \
    X(multi_remove_handle)                                                                         \
    X(multi_socket_action)                                                                         \
    X(multi_info_read)                                                                             \
    X(multi_assign)                                                                                \
    X(slist_append)                                                                                \
    X(slist_free_all)                                                                              \
    X(url)                                                                                         \
    X(url_cleanup)                                                                                 \
    X(url_set)                                                                                     \
    X(url_get)                                                                                     \
    X(free)

#define FIELD(name) __typeof__(curl_##name) *name;
static struct {
    CURL_FUNCS(FIELD)
} fn;
#undef FIELD

#define SYM(name) {"curl_" #name, offsetof(__typeof__(fn), name)},
static const struct gw_dynsym syms[] = {CURL_FUNCS(SYM)};
#undef SYM

static bool loaded;

static int load(char *why, size_t cap)
{
    static const struct gw_dynlib lib = {
        .soname = GW_CURL_LIB,
        .flags = RTLD_LOCAL,
        .needed_by = "HTTP upstreams need (Debian package libcurl4)",
        .version = "libcurl 7.85 or later is needed",
        .syms = syms,
        .nsyms = sizeof(syms) / sizeof(syms[0]),
    };
    void *h;
    int err = gw_dynlib_open(&lib, &fn, &h, why, cap);
    if (err != 0)
        return err;
    /* The library stays mapped after a failed init: it may have initialised
     * some of its own dependencies, which are not safe to unload. */
    CURLcode rc = fn.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        gw_say(why, cap, "%s: curl_global_init failed: %s", GW_CURL_LIB, fn.easy_strerror(rc));
        return UV_ENOTSUP;
    }
    return 0;
}

int gw_curl_lib_load(char *why, size_t cap)
{
    if (loaded)
        return 0;
    int rc = load(why, cap);
    if (rc != 0)
        return rc;
    loaded = true;
    gw_log(GW_LOG_INFO, "libcurl loaded", "library", GW_CURL_LIB, NULL);
    return 0;
}

/* For a forwarder: the table, loaded now if it was not. Every caller that
 * can fail loaded it first, so a failure here is a bug: abort, as on
 * memory exhaustion. */
static void need(void)
{
    char why[512];
    if (loaded || gw_curl_lib_load(why, sizeof(why)) == 0)
        return;
    fprintf(stderr, "mcpgw: libcurl is called but cannot be loaded: %s\n", why);
    abort();
}

/* ---- forwarders ----
 *
 * The variadic ones pass their one argument on with the type libcurl reads
 * it as, which the option's number range says (CURLOPTTYPE_*, shared by
 * curl_easy_setopt and curl_multi_setopt); curl_easy_getinfo always takes a
 * pointer. */

/* The body of a variadic setter: `rc` = f(h, o, the argument read with
 * the type option `o` says). */
#define FORWARD_SETOPT(rc, f, h, o)                                                                \
    do {                                                                                           \
        va_list ap;                                                                                \
        need();                                                                                    \
        va_start(ap, o);                                                                           \
        if ((o) < CURLOPTTYPE_OBJECTPOINT)                                                         \
            rc = f(h, o, va_arg(ap, long));                                                        \
        else if ((o) < CURLOPTTYPE_FUNCTIONPOINT)                                                  \
            rc = f(h, o, va_arg(ap, void *));                                                      \
        else if ((o) < CURLOPTTYPE_OFF_T)                                                          \
            rc = f(h, o, va_arg(ap, void (*)(void)));                                              \
        else if ((o) < CURLOPTTYPE_BLOB)                                                           \
            rc = f(h, o, va_arg(ap, curl_off_t));                                                  \
        else                                                                                       \
            rc = f(h, o, va_arg(ap, void *));                                                      \
        va_end(ap);                                                                                \
    } while (0)

CURL *curl_easy_init(void)
{
    need();
    return fn.easy_init();
}

void curl_easy_cleanup(CURL *curl)
{
    need();
    fn.easy_cleanup(curl);
}

CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
    CURLcode rc;

    FORWARD_SETOPT(rc, fn.easy_setopt, curl, option);
    return rc;
}

CURLcode curl_easy_perform(CURL *curl)
{
    need();
    return fn.easy_perform(curl);
}

CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
    va_list ap;
    CURLcode rc;
    need();
    va_start(ap, info);
    rc = fn.easy_getinfo(curl, info, va_arg(ap, void *));
    va_end(ap);
    return rc;
}

const char *curl_easy_strerror(CURLcode code)
{
    need();
    return fn.easy_strerror(code);
}

CURLM *curl_multi_init(void)
{
    need();
    return fn.multi_init();
}

CURLMcode curl_multi_cleanup(CURLM *multi)
{
    need();
    return fn.multi_cleanup(multi);
}

CURLMcode curl_multi_setopt(CURLM *multi, CURLMoption option, ...)
{
    CURLMcode rc;

    FORWARD_SETOPT(rc, fn.multi_setopt, multi, option);
    return rc;
}

CURLMcode curl_multi_add_handle(CURLM *multi, CURL *curl)
{
    need();
    return fn.multi_add_handle(multi, curl);
}

CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *curl)
{
    need();
    return fn.multi_remove_handle(multi, curl);
}

CURLMcode curl_multi_socket_action(CURLM *multi, curl_socket_t s, int ev_bitmask,
                                   int *running_handles)
{
    need();
    return fn.multi_socket_action(multi, s, ev_bitmask, running_handles);
}

CURLMsg *curl_multi_info_read(CURLM *multi, int *msgs_in_queue)
{
    need();
    return fn.multi_info_read(multi, msgs_in_queue);
}

CURLMcode curl_multi_assign(CURLM *multi, curl_socket_t sockfd, void *sockp)
{
    need();
    return fn.multi_assign(multi, sockfd, sockp);
}

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *string)
{
    need();
    return fn.slist_append(list, string);
}

void curl_slist_free_all(struct curl_slist *list)
{
    /* nothing to free must not load libcurl: the exporter's shutdown frees
     * its (empty) headers whether tracing ran or not */
    if (list == NULL)
        return;
    need();
    fn.slist_free_all(list);
}

CURLU *curl_url(void)
{
    need();
    return fn.url();
}

void curl_url_cleanup(CURLU *handle)
{
    need();
    fn.url_cleanup(handle);
}

CURLUcode curl_url_set(CURLU *handle, CURLUPart what, const char *part, unsigned int flags)
{
    need();
    return fn.url_set(handle, what, part, flags);
}

CURLUcode curl_url_get(CURLU *handle, CURLUPart what, char **part, unsigned int flags)
{
    need();
    return fn.url_get(handle, what, part, flags);
}

void curl_free(void *p)
{
    need();
    fn.free(p);
}
