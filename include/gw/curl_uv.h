/* libcurl's multi interface driven by the libuv loop (the pattern of curl's
 * docs/examples/multi-uv.c): CURLMOPT_SOCKETFUNCTION gives each socket a
 * uv_poll_t (freed in its close callback), CURLMOPT_TIMERFUNCTION drives one
 * uv_timer_t, and curl_multi_info_read() is drained after every action.
 * No call here ever blocks.
 *
 * One gw_curl_uv per loop, shared by every HTTP upstream, so connections to
 * one server are reused across instances. The daemon (or a test) owns it
 * from gw_curl_uv_new() until gw_curl_uv_close(); every transport using it
 * must have closed before that call.
 *
 * Every easy handle added here gets the upstream security options of
 * security.md S10 (protocols http and https only, redirects never followed,
 * TLS verification on, no signals) and opens its sockets itself, with
 * SOCK_CLOEXEC (P1) and, for a transfer marked loopback_only, only towards
 * 127.0.0.0/8 or ::1: the check is on the address being connected, so a
 * name that resolves elsewhere fails with CURLE_COULDNT_CONNECT.
 *
 * A guarded transfer (one with addr_ok: the OAuth client's, whose URLs come
 * from a server's metadata) is checked on every connection it makes: it
 * opens a fresh one and keeps none (a pooled connection was opened, and
 * checked, for another transfer), ignores proxies named by the environment
 * (the connected address would be the proxy's), and never connects to the
 * gateway's own listen address (gw_curl_uv_set_own), whatever addr_ok says.
 *
 * Callbacks: a transfer's `done` runs from the loop (never from inside a
 * libcurl callback), so it may add and remove transfers. Nothing in this
 * module may be called from inside a libcurl callback (write, header,
 * socket): libcurl refuses recursive multi calls. */
#ifndef GW_CURL_UV_H
#define GW_CURL_UV_H

#include <curl/curl.h>
#include <stddef.h>
#include <uv.h>

struct gw_curl_uv;
struct gw_curl_uv_xfer;

typedef void (*gw_curl_uv_done_cb)(struct gw_curl_uv_xfer *x, CURLcode result);

/* Embedded by the caller in its own transfer object, which it owns; the
 * fields above the line are the caller's to set before gw_curl_uv_add(). */
struct gw_curl_uv_xfer {
    CURL *easy;
    gw_curl_uv_done_cb done;
    int loopback_only; /* refuse to connect anywhere but loopback */
    /* When set, the transfer is guarded (above), and an address for which
     * addr_ok(addr_data, address) answers 0 is refused like a non-loopback
     * one under loopback_only (the OAuth client's rules, gw/oauth.h). */
    int (*addr_ok)(void *addr_data, const struct sockaddr *sa);
    void *addr_data;
    /* ---- set by this module ---- */
    struct gw_curl_uv *m;
    int added;
    struct gw_curl_uv_xfer *next, *prev; /* the multi's list of added transfers */
    /* Non-empty: a connection was refused ("<address> port <port>"), by the
     * loopback rule, addr_ok, or (refused_own) as the gateway's own. */
    char refused[80];
    int refused_own;
};

/* Creates the shared object without touching libcurl (which is loaded on
 * first need: gw/curl_lib.h); gw_curl_uv_open() makes it usable. */
struct gw_curl_uv *gw_curl_uv_new(uv_loop_t *loop);

/* Loads libcurl if it is not yet (gw_curl_lib_load) and creates the multi
 * handle, once; every user calls it before its first libcurl call. Returns
 * 0, or a negative code with a sentence in `why` (capacity `cap`, may be
 * 0): UV_ENOTSUP (libcurl cannot be loaded), UV_ENOMEM, or UV_EINVAL (the
 * multi is closing). A failed call may be retried. */
int gw_curl_uv_open(struct gw_curl_uv *m, char *why, size_t cap);

/* Applies the S10 options to x->easy (CURLOPT_PRIVATE becomes x) and starts
 * the transfer. `done` fires exactly once, on a later loop turn, unless
 * gw_curl_uv_remove() is called first. Returns 0, UV_EINVAL (already added,
 * not opened, or the multi is closing) or UV_EIO (libcurl refused the
 * handle). */
int gw_curl_uv_add(struct gw_curl_uv *m, struct gw_curl_uv_xfer *x);

/* Stops a running transfer without calling `done`. The easy handle stays
 * the caller's (it may be added again). Idempotent. */
void gw_curl_uv_remove(struct gw_curl_uv *m, struct gw_curl_uv_xfer *x);

/* The gateway's own listen address (copied; a wildcard one stands for
 * every local address at its port): no guarded transfer connects to it. */
void gw_curl_uv_set_own(struct gw_curl_uv *m, const struct sockaddr *sa);

/* Transfers currently added. */
size_t gw_curl_uv_active(const struct gw_curl_uv *m);

/* Removes any transfer left (without `done`), cleans the multi handle up,
 * closes every poll and the timer, then calls cb(data) (may be NULL) on a
 * later loop turn and frees `m`. Safe from inside a `done` callback. */
void gw_curl_uv_close(struct gw_curl_uv *m, void (*cb)(void *data), void *data);

#endif
