/* libwebsockets, loaded when the first WebSocket upstream needs it.
 *
 * mcpgw does not link libwebsockets: it brings OpenSSL and more into every
 * daemon, 1.9 MB of RSS at idle (2.6 → 4.5 MB), and most configurations have
 * no WebSocket upstream. gw_ws_lib_load() dlopen()s GW_WS_LIB and resolves
 * every libwebsockets function mcpgw calls, as curl_lib does for libcurl.
 *
 * The rest of the code calls libwebsockets by its own names with
 * <libwebsockets.h>'s types: ws_lib.c defines each of those functions as a
 * forwarder to the loaded library, so a call to a function it does not
 * forward fails at link time. A forwarder called before a successful
 * gw_ws_lib_load() loads the library then, and aborts with a message if it
 * cannot: code that can fail calls gw_ws_lib_load() first (every WebSocket
 * upstream starts with it). Loop thread only. */
#ifndef GW_WS_LIB_H
#define GW_WS_LIB_H

#include <stddef.h>

/* Debian 12's libwebsockets 4.1 (package libwebsockets17). Its libuv event
 * library (libwebsockets-evlib-uv) is loaded by libwebsockets itself. */
#define GW_WS_LIB "libwebsockets.so.17"

/* Loads libwebsockets, once per process (logged at info). Returns 0 (also
 * when it is already loaded) or UV_ENOTSUP with a sentence naming the
 * library and the loader's reason in `why` (capacity `cap`), for the
 * caller to report (the server's start Problem); a later call tries again. */
int gw_ws_lib_load(char *why, size_t cap);

#endif
