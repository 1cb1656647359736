/* sd_notify(3) written by hand: readiness, reload, stop and watchdog
 * messages to systemd over $NOTIFY_SOCKET, without linking libsystemd.
 *
 * The protocol is one datagram per message on an AF_UNIX socket, holding
 * newline-separated VAR=value assignments. $NOTIFY_SOCKET is a filesystem
 * path ("/run/systemd/notify") or, with a leading '@', a name in the
 * abstract namespace. The module keeps one process-wide socket (there is
 * one service manager per process), so its functions need no handle.
 *
 * Without $NOTIFY_SOCKET (not started by systemd, or Type=simple) every
 * function is a no-op that returns 0. Sends never block the loop: the
 * socket is non-blocking, and a message the manager cannot take at once is
 * an error code, not a wait. */
#ifndef GW_SDNOTIFY_H
#define GW_SDNOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* Reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID, then unsets all
 * three so that no child (npx, uvx, …) ever sees them and notifies systemd
 * in our name. Opens a SOCK_DGRAM|SOCK_CLOEXEC|SOCK_NONBLOCK socket when
 * $NOTIFY_SOCKET is set. Call once, early, before spawning anything; a
 * second call closes the previous socket and reads the (now unset)
 * environment again, which tests use to reset the module.
 * Returns 0 (also when $NOTIFY_SOCKET is unset), UV_EINVAL for an address
 * that is neither an absolute path nor '@name' (vsock: is not supported),
 * UV_ENAMETOOLONG for one that does not fit sockaddr_un, or the socket()
 * error. After an error the module stays disabled (every call a no-op). */
int gw_sdnotify_init(void);

/* True when a notify socket is open. */
bool gw_sdnotify_enabled(void);

/* Sends `state` as is ("READY=1\nSTATUS=…"). Returns 0 on success or when
 * disabled, else a negative errno (UV_EAGAIN when the manager's queue is
 * full, UV_ECONNREFUSED or UV_ENOENT when nobody listens). */
int gw_sdnotify_send(const char *state);

/* "READY=1", followed by "STATUS=<status>" when status is not NULL. Sent
 * after the first load and after each reload. */
int gw_sdnotify_ready(const char *status);

/* "RELOADING=1\nMONOTONIC_USEC=<CLOCK_MONOTONIC µs>": systemd (≥ 253,
 * Type=notify-reload) uses the timestamp to tell this reload from an
 * earlier one; older versions ignore it. Follow with gw_sdnotify_ready(). */
int gw_sdnotify_reloading(void);

/* "STOPPING=1", sent when a graceful stop begins. */
int gw_sdnotify_stopping(void);

/* "STATUS=<printf text>" (shown by systemctl status). Newlines in the text
 * become spaces: a newline would start another assignment, so a server
 * name or an error text could otherwise smuggle "MAINPID=…" in. */
int gw_sdnotify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The watchdog interval from $WATCHDOG_USEC in µs, 0 when there is none
 * (unset, invalid, or $WATCHDOG_PID names another process). */
uint64_t gw_sdnotify_watchdog_usec(void);

/* Arms an unref'd uv_timer_t (it never keeps the loop alive) that sends
 * "WATCHDOG=1" every half interval, as sd_watchdog_enabled(3) advises.
 * Returns 0, also when disabled or without a watchdog (no timer then), or
 * UV_EBUSY when already started. */
int gw_sdnotify_watchdog_start(uv_loop_t *loop);

/* Stops and closes the watchdog timer. Returns 0 and calls cb(data) from
 * the loop once the handle is closed (cb may be NULL), or UV_ENOENT when no
 * timer is running, in which case cb is never called. The loop must close
 * it before uv_loop_close() can succeed. */
int gw_sdnotify_watchdog_close(void (*cb)(void *data), void *data);

#endif
