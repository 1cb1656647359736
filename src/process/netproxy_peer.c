/* What the sandbox's proxy asks the kernel about a connection's ends
 * (gw/netproxy.h): which process the relay is, whether it still is, and
 * how long a socket handed to it has been quiet. */
#include "gw/netproxy.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int gw_netproxy_peer_pidfd(int fd, pid_t pid)
{
    int pfd = -1;
    socklen_t len = sizeof(pfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len) == 0)
        return pfd;
    if (errno != ENOPROTOOPT)
        return -1;
    pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return -1;
    /* Before 6.5 the pid is all there is. The relay keeps this connection
     * open while it lives, and its descriptors close before its pid is
     * free: still connected after pidfd_open, the pid was the relay's. */
    struct pollfd pf = {.fd = fd, .events = POLLRDHUP};
    if (poll(&pf, 1, 0) != 0) {
        close(pfd);
        return -1;
    }
    return pfd;
}

/* The parent of `pid`, from the field after its command's closing ')'. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close_paren = strrchr(buf, ')');
    int ppid;
    return close_paren && sscanf(close_paren + 1, " %*c %d", &ppid) == 1 ? ppid : -1;
}

bool gw_netproxy_is_child(pid_t pid, int pidfd, pid_t parent)
{
    return parent > 0 && parent_of(pid) == parent && gw_netproxy_pidfd_alive(pidfd);
}

bool gw_netproxy_pidfd_alive(int pidfd)
{
    struct pollfd pf = {.fd = pidfd, .events = POLLIN};
    return pidfd >= 0 && poll(&pf, 1, 0) == 0;
}

uint64_t gw_netproxy_quiet_ms(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
        return UINT64_MAX;
    return ti.tcpi_last_data_recv < ti.tcpi_last_data_sent ? ti.tcpi_last_data_recv
                                                           : ti.tcpi_last_data_sent;
}
