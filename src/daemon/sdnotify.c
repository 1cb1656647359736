/* sd_notify by hand: see include/gw/sdnotify.h for the protocol. */
#include "gw/sdnotify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* One notify socket per process, like libsystemd's sd_notify(). */
static struct {
    int fd; /* -1 when disabled */
    struct sockaddr_un addr;
    socklen_t addrlen;
    uint64_t watchdog_usec; /* 0: no watchdog */
    bool timer_active;      /* watchdog timer initialised and not closing */
    uv_timer_t timer;
    void (*close_cb)(void *data);
    void *close_data;
} sd = {.fd = -1};

/* Fills sd.addr from $NOTIFY_SOCKET. The abstract form keeps its leading
 * NUL and is not NUL-terminated: its length is part of the name. */
static int parse_address(const char *s)
{
    size_t n = strlen(s);

    if (s[0] != '/' && s[0] != '@')
        return UV_EINVAL;
    if (n < 2 && s[0] == '@')
        return UV_EINVAL;
    if (n >= sizeof sd.addr.sun_path)
        return UV_ENAMETOOLONG;
    memset(&sd.addr, 0, sizeof sd.addr);
    sd.addr.sun_family = AF_UNIX;
    memcpy(sd.addr.sun_path, s, n);
    if (s[0] == '@') {
        sd.addr.sun_path[0] = '\0';
        sd.addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
        sd.addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    }
    return 0;
}

/* $WATCHDOG_USEC applies only when $WATCHDOG_PID is unset or names us: a
 * value inherited from a parent that was itself watched is not ours. */
static uint64_t parse_watchdog(const char *usec, const char *pid)
{
    char *end;
    unsigned long long v;

    if (usec == NULL || *usec == '\0')
        return 0;
    errno = 0;
    v = strtoull(usec, &end, 10);
    if (errno != 0 || *end != '\0' || usec[0] == '-')
        return 0;
    if (pid != NULL && *pid != '\0') {
        long p = strtol(pid, &end, 10);
        if (*end != '\0' || p != (long)getpid())
            return 0;
    }
    return (uint64_t)v;
}

static void close_socket(void)
{
    if (sd.fd >= 0)
        close(sd.fd);
    sd.fd = -1;
}

int gw_sdnotify_init(void)
{
    const char *sock = getenv("NOTIFY_SOCKET");
    int rc = 0;

    close_socket();
    sd.watchdog_usec = 0;
    if (sock != NULL && *sock != '\0') {
        rc = parse_address(sock);
        if (rc == 0) {
            sd.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
            if (sd.fd < 0)
                rc = -errno;
        }
        if (rc == 0)
            sd.watchdog_usec = parse_watchdog(getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"));
    }
    /* getenv's pointers die with unsetenv, so this comes after every use. */
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    return rc;
}

bool gw_sdnotify_enabled(void)
{
    return sd.fd >= 0;
}

int gw_sdnotify_send(const char *state)
{
    ssize_t n;

    if (sd.fd < 0)
        return 0;
    do
        n = sendto(sd.fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sd.addr,
                   sd.addrlen);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : 0;
}

/* Sends `head` followed by "STATUS=<text>" with newlines made spaces, in
 * one datagram so systemd sees both at once. Takes `text`. */
static int send_with_status(const char *head, char *text)
{
    char *msg;
    int rc;

    for (char *p = text; *p != '\0'; p++) {
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    }
    rc = asprintf(&msg, "%sSTATUS=%s", head, text);
    free(text);
    if (rc < 0)
        return UV_ENOMEM;
    rc = gw_sdnotify_send(msg);
    free(msg);
    return rc;
}

int gw_sdnotify_ready(const char *status)
{
    char *text;

    if (sd.fd < 0)
        return 0;
    if (status == NULL)
        return gw_sdnotify_send("READY=1");
    text = strdup(status);
    if (text == NULL)
        return UV_ENOMEM;
    return send_with_status("READY=1\n", text);
}

int gw_sdnotify_reloading(void)
{
    struct timespec ts;
    char msg[64];

    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%llu",
             (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
    return gw_sdnotify_send(msg);
}

int gw_sdnotify_stopping(void)
{
    return gw_sdnotify_send("STOPPING=1");
}

int gw_sdnotify_status(const char *fmt, ...)
{
    char *text;
    va_list ap;
    int rc;

    if (sd.fd < 0)
        return 0;
    va_start(ap, fmt);
    rc = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (rc < 0)
        return UV_ENOMEM;
    return send_with_status("", text);
}

uint64_t gw_sdnotify_watchdog_usec(void)
{
    return sd.fd >= 0 ? sd.watchdog_usec : 0;
}

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    gw_sdnotify_send("WATCHDOG=1");
}

int gw_sdnotify_watchdog_start(uv_loop_t *loop)
{
    uint64_t ms = gw_sdnotify_watchdog_usec() / 2000;

    if (sd.timer_active)
        return UV_EBUSY;
    if (gw_sdnotify_watchdog_usec() == 0)
        return 0;
    if (ms == 0)
        ms = 1;
    uv_timer_init(loop, &sd.timer);
    uv_unref((uv_handle_t *)&sd.timer);
    sd.timer_active = true;
    /* The first ping goes out at once: systemd's clock started at exec. */
    gw_sdnotify_send("WATCHDOG=1");
    return uv_timer_start(&sd.timer, on_watchdog, ms, ms);
}

static void on_timer_closed(uv_handle_t *h)
{
    void (*cb)(void *) = sd.close_cb;
    void *data = sd.close_data;

    (void)h;
    sd.close_cb = NULL;
    sd.close_data = NULL;
    if (cb != NULL)
        cb(data);
}

int gw_sdnotify_watchdog_close(void (*cb)(void *data), void *data)
{
    if (!sd.timer_active)
        return UV_ENOENT;
    sd.timer_active = false;
    sd.close_cb = cb;
    sd.close_data = data;
    uv_close((uv_handle_t *)&sd.timer, on_timer_closed);
    return 0;
}
