/* libcurl, loaded when the first HTTP upstream needs it (or `mcpgw auth`,
 * whose blocking requests to the daemon use curl_easy_perform).
 *
 * mcpgw does not link libcurl: loading it and its ~30 dependencies
 * (OpenSSL, GnuTLS, nettle, krb5, LDAP, SASL, libssh2, nghttp2…) cost each
 * exec 10-25 ms and the daemon ~8 MB of RSS (docs/performance.md), and most
 * configurations have no HTTP upstream. gw_curl_lib_load() dlopen()s GW_CURL_LIB, resolves every
 * libcurl function mcpgw calls and runs curl_global_init() once.
 *
 * The rest of the code keeps calling libcurl by its own names
 * (curl_easy_setopt, curl_url_get…) with <curl/curl.h>'s types, constants and
 * compile-time option checks: curl_lib.c defines each of those functions as
 * a forwarder to the loaded library, so a call to a libcurl function it does
 * not forward fails at link time. A forwarder called before a successful
 * gw_curl_lib_load() loads the library then, and aborts with a message if it
 * cannot: code that can fail calls gw_curl_lib_load() first (gw_curl_uv_open
 * does, and every HTTP upstream starts with it). Loop thread only. */
#ifndef GW_CURL_LIB_H
#define GW_CURL_LIB_H

#include <stddef.h>

/* The soname of libcurl 7.x and 8.x: Debian's libcurl4 (OpenSSL), which
 * libcurl4-openssl-dev depends on. */
#define GW_CURL_LIB "libcurl.so.4"

/* Loads and initialises libcurl, once per process (logged at info). Returns
 * 0 (also when it is already loaded) or UV_ENOTSUP with a sentence naming
 * the library and the loader's reason in `why` (capacity `cap`, may be 0),
 * for the caller to report (an HTTP server's start Problem); a later call
 * tries again (the package may have been installed meanwhile). */
int gw_curl_lib_load(char *why, size_t cap);

#endif
