/* `mcpgw sandbox-relay PORT SOCKET -- COMMAND ARGS…`: the first process in
 * a sandbox whose network is an allow-list (gw/sandbox.h). It starts the
 * server as its child, listens on 127.0.0.1:PORT of the sandbox's own
 * loopback and carries each connection to the daemon's proxy on the unix
 * socket SOCKET, byte for byte; it exits with the server, with its status.
 *
 * One poll loop, no libuv: the relay is in every such instance and should
 * cost little beside the server (docs/hardening.md has the figures). The
 * bytes go socket → pipe → socket with splice(2), never through the relay's
 * memory; a pair that cannot have its pipes (fd limit) copies through a
 * buffer instead.
 *
 * A CONNECT the proxy allows comes back as its 200 with the connected
 * socket attached (SCM_RIGHTS): the relay then carries the client to that
 * socket itself, and the daemon is out of the data path. So that no byte
 * of the tunnel reaches the daemon, what the client sends after the
 * CONNECT's head is held until the answer. The socket lives in the host's
 * network namespace, where it could be disconnected and connected
 * anywhere: only this process ever holds it. The relay is not dumpable
 * (the server, its child, can neither trace it nor take its fds), and it
 * makes the proxy's first connection before the server exists and keeps
 * it, which is how the daemon knows it, with its place as bubblewrap's
 * child; bubblewrap runs it as the sandbox's pid 1, which the server cannot
 * kill (docs/hardening.md). */
#include "gw/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw/netaddr.h"
#include "gw/netproxy.h"

#define MAX_PAIRS 256
#define BUF_SIZE  (16u << 10)
/* What one direction holds at most: in the pipe, or in the buffer. */
#define PIPE_SIZE (256u << 10)

static const char established[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

/* What the client has sent so far: SNIFF, the start of a request, not yet
 * known to be a CONNECT; HEAD, a CONNECT's head, up to its blank line;
 * HOLD, the head sent, the rest held until the proxy answers; PLAIN,
 * anything else, carried as it comes. */
enum head { SNIFF, HEAD, HOLD, PLAIN };

/* One connection: [0] the client inside, [1] the proxy (or the socket it
 * handed over, the proxy's connection then kept as `lease`); pipe[i] or
 * buf[i] (inbuf[i]) holds the len[i] bytes read from fd[i] and not yet
 * written to fd[1 - i]. */
struct pair {
    int fd[2], lease;
    int pipe[2][2];
    char *buf[2], *held;
    size_t len[2], off[2], nheld, seen;
    bool eof[2], inbuf[2], answered;
    enum head head;
    unsigned blank; /* bytes of "\r\n\r\n" matched */
};

static struct pair *pairs[MAX_PAIRS];
static size_t npairs;

static void pair_free(size_t i)
{
    struct pair *p = pairs[i];
    close(p->fd[0]);
    close(p->fd[1]);
    if (p->lease >= 0)
        close(p->lease);
    free(p->held);
    for (int k = 0; k < 2; k++)
        if (p->pipe[k][0] >= 0) {
            close(p->pipe[k][0]);
            close(p->pipe[k][1]);
        }
    free(p->buf[0]);
    free(p->buf[1]);
    free(p);
    pairs[i] = pairs[--npairs];
}

static int proxy_connect(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path))
        return -1;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void add_pair(int c, int up)
{
    struct pair *p = calloc(1, sizeof(*p));
    if (!p) {
        close(c);
        close(up);
        return;
    }
    p->fd[0] = c;
    p->fd[1] = up;
    p->lease = -1;
    for (int i = 0; i < 2; i++)
        if (pipe2(p->pipe[i], O_CLOEXEC | O_NONBLOCK) == 0)
            fcntl(p->pipe[i][0], F_SETPIPE_SZ, (int)PIPE_SIZE);
        else
            p->pipe[i][0] = p->pipe[i][1] = -1;
    pairs[npairs++] = p;
}

/* Takes every connection waiting: one left in the backlog too long makes
 * the client's SYN go unanswered, and it waits a second to send another. */
static void accept_all(int lfd, const char *sock)
{
    int c;
    while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
        int up = npairs < MAX_PAIRS ? proxy_connect(sock) : -1;
        if (up < 0) {
            close(c);
            continue;
        }
        add_pair(c, up);
    }
}

/* Scans the n bytes the client sent (in buf[0]) and keeps aside what
 * follows a CONNECT's head: len[0] is what may go to the proxy now. */
static void sniff(struct pair *p, size_t n)
{
    static const char method[] = "CONNECT ", blank[] = "\r\n\r\n";
    const char *b = p->buf[0];
    for (size_t k = 0; k < n && p->head != PLAIN; k++, p->seen++) {
        if (p->head == SNIFF) {
            if (b[k] != method[p->seen])
                p->head = PLAIN;
            else if (p->seen + 1 == sizeof(method) - 1)
                p->head = HEAD;
            continue;
        }
        p->blank = b[k] == blank[p->blank] ? p->blank + 1 : b[k] == '\r';
        if (p->blank == 4) {
            p->head = HOLD;
            if (k + 1 < n) {
                p->nheld = n - k - 1;
                p->held = malloc(p->nheld);
                if (!p->held) {
                    p->nheld = 0;
                    p->head = PLAIN;
                    return;
                }
                memcpy(p->held, b + k + 1, p->nheld);
            }
            p->len[0] = k + 1;
            return;
        }
        /* Longer than the proxy reads: it refuses it, carried as is. */
        if (p->seen >= GW_NETPROXY_HEAD_MAX)
            p->head = PLAIN;
    }
}

/* The proxy's first answer, read with what it may carry: the socket of an
 * allowed CONNECT, taken only with the 200 alone, and only as the answer
 * to a CONNECT whose head this relay sent and whose rest it holds. false:
 * something else came with descriptors; the pair ends. */
static bool answer(struct pair *p, ssize_t n, struct msghdr *m)
{
    int got[4], ngot = 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h))
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
            for (size_t k = 0; k < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int) && ngot < 4; k++)
                memcpy(&got[ngot++], CMSG_DATA(h) + k * sizeof(int), sizeof(int));
    bool held = p->head == HOLD;
    p->answered = true;
    if (held)
        p->head = PLAIN;
    if (ngot == 0 && !(m->msg_flags & MSG_CTRUNC))
        return true;
    int type = 0;
    socklen_t tl = sizeof(type);
    bool ok = ngot == 1 && !(m->msg_flags & MSG_CTRUNC) && held && p->len[0] == 0 &&
              n == (ssize_t)sizeof(established) - 1 &&
              memcmp(p->buf[1], established, (size_t)n) == 0 &&
              getsockopt(got[0], SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM;
    if (!ok) {
        for (int k = 0; k < ngot; k++)
            close(got[k]);
        return false;
    }
    p->lease = p->fd[1];
    p->fd[1] = got[0];
    return true;
}

/* Moves what the socket has into the pair's pipe, or, while the head of
 * either side is still being read (or without pipes), into a buffer.
 * Splicing toward the client is cheap because its connection is Reno
 * (listen_on): paced, the spliced pages, fragments of the server's
 * segments, would leave in many small paced segments, and the client would
 * read them at three times the CPU of a copied stream (docs/performance.md,
 * issue 36). */
static ssize_t fill(struct pair *p, int i)
{
    bool copy = i == 0 ? p->head != PLAIN : !p->answered;
    if (p->pipe[i][0] >= 0 && !copy) {
        p->inbuf[i] = false;
        return splice(p->fd[i], NULL, p->pipe[i][1], NULL, PIPE_SIZE,
                      SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    }
    free(p->buf[i]); /* empty: len[i] is 0 */
    if (!(p->buf[i] = malloc(BUF_SIZE))) {
        errno = ENOMEM;
        return -1;
    }
    p->off[i] = 0;
    p->inbuf[i] = true;
    if (i == 1 && !p->answered) {
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(4 * sizeof(int))];
        } ctl;
        struct iovec iov = {p->buf[1], BUF_SIZE};
        struct msghdr m = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = ctl.b,
                           .msg_controllen = sizeof(ctl.b)};
        ssize_t n = recvmsg(p->fd[1], &m, MSG_CMSG_CLOEXEC);
        if (n > 0 && !answer(p, n, &m)) {
            errno = EPROTO;
            return -1;
        }
        if (n == 0) {
            p->answered = true;
            if (p->head == HOLD)
                p->head = PLAIN;
        }
        return n;
    }
    ssize_t n = read(p->fd[i], p->buf[i], BUF_SIZE);
    if (i == 0 && n > 0) {
        p->len[0] = (size_t)n;
        sniff(p, (size_t)n);
        return (ssize_t)p->len[0];
    }
    return n;
}

static ssize_t drain(struct pair *p, int i)
{
    if (!p->inbuf[i])
        return splice(p->pipe[i][0], NULL, p->fd[1 - i], NULL, p->len[i],
                      SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    return send(p->fd[1 - i], p->buf[i] + p->off[i], p->len[i], MSG_NOSIGNAL);
}

/* Moves bytes for one pair as far as the sockets take them; false when
 * the pair is done (both ways ended, or an error). */
static bool pump(struct pair *p, const struct pollfd *pf)
{
    for (int i = 0; i < 2; i++) {
        int o = 1 - i;
        if (p->len[i] == 0 && !p->eof[i] && !(i == 0 && p->head == HOLD) &&
            (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t n = fill(p, i);
            if (n > 0) {
                p->len[i] = (size_t)n;
            } else if (n == 0) {
                p->eof[i] = true;
                shutdown(p->fd[o], SHUT_WR);
            } else if (errno != EAGAIN && errno != EINTR) {
                return false;
            }
        }
        if (p->len[i] > 0) {
            ssize_t n = drain(p, i);
            if (n > 0) {
                p->off[i] += (size_t)n;
                p->len[i] -= (size_t)n;
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                return false;
            }
            if (p->len[i] == 0 && p->eof[i])
                shutdown(p->fd[o], SHUT_WR);
        }
        /* An idle connection keeps no buffer. */
        if (p->len[i] == 0) {
            free(p->buf[i]);
            p->buf[i] = NULL;
            p->inbuf[i] = false;
        }
    }
    /* Answered: what was held goes on, to the socket handed over or to
     * the proxy (which refused, and closes). */
    if (p->head == PLAIN && p->held && p->len[0] == 0) {
        p->buf[0] = p->held;
        p->off[0] = 0;
        p->len[0] = p->nheld;
        p->inbuf[0] = true;
        p->held = NULL;
        p->nheld = 0;
    }
    return !(p->eof[0] && p->eof[1] && p->len[0] == 0 && p->len[1] == 0);
}

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    /* every client is inside the sandbox, on its loopback */
    gw_netaddr_set_unpaced(fd, (struct sockaddr *)&a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, MAX_PAIRS) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Ends the relay as the server ended: its exit code, or its signal (as
 * the sandbox's pid 1 the relay cannot take its own: 128 + the signal,
 * what bubblewrap reports for it either way). */
static void exit_like(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        sigset_t all;
        signal(sig, SIG_DFL);
        sigemptyset(&all);
        sigaddset(&all, sig);
        sigprocmask(SIG_UNBLOCK, &all, NULL);
        raise(sig);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* Collects every child that ended: as the sandbox's pid 1 the relay has
 * the server's orphans too. Ends with the server. */
static void reap(pid_t server)
{
    for (;;) {
        int status;
        pid_t w = waitpid(-1, &status, WNOHANG);
        if (w <= 0)
            return;
        if (w == server)
            exit_like(status);
    }
}

static char self[PATH_MAX];

void gw_sandbox_set_self(const char *argv0)
{
    if (!realpath(argv0 && strchr(argv0, '/') ? argv0 : "/proc/self/exe", self))
        self[0] = '\0';
}

const char *gw_sandbox_self(void)
{
    return self[0] ? self : NULL;
}

int gw_sandbox_relay(int argc, char **argv)
{
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: mcpgw sandbox-relay PORT SOCKET -- COMMAND [ARGS...]\n");
        return 2;
    }
    const char *sock = argv[2];
    int lfd = listen_on(atoi(argv[1]));
    if (lfd < 0) {
        fprintf(stderr, "mcpgw sandbox-relay: cannot listen on 127.0.0.1:%s: %s\n", argv[1],
                strerror(errno));
        return 1;
    }
    /* Not dumpable: the server cannot trace the relay or take its fds
     * (pidfd_getfd, /proc/PID/fd), the sockets handed over among them. */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    /* The proxy's first connection, made before the server exists, tells
     * the daemon which process is the relay; kept open while the relay
     * lives, for a kernel that cannot name the connecting process
     * (gw_netproxy_peer_pidfd). */
    if (proxy_connect(sock) < 0) {
        fprintf(stderr, "mcpgw sandbox-relay: cannot reach the proxy at %s: %s\n", sock,
                strerror(errno));
        return 1;
    }
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    pid_t child = fork();
    /* splice(2) into a socket whose peer is gone raises SIGPIPE (it has no
     * MSG_NOSIGNAL); the server gets the default back. */
    signal(SIGPIPE, SIG_IGN);
    if (child == 0) {
        signal(SIGPIPE, SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        execv(argv[4], argv + 4);
        fprintf(stderr, "mcpgw sandbox-relay: cannot run %s: %s\n", argv[4], strerror(errno));
        _exit(127);
    }
    if (child < 0 || sfd < 0) {
        fprintf(stderr, "mcpgw sandbox-relay: cannot start %s: %s\n", argv[4], strerror(errno));
        return 1;
    }
    /* The server's stdin and stdout are its own: the daemon sees them end
     * when the server ends. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    dup2(null, 0);
    dup2(null, 1);
    if (null > 1)
        close(null);
    /* A pair takes up to 7 fds (a socket handed over, its lease, pipes);
     * a socket that comes when none is left is lost with its connection.
     * The server keeps the limit it was started with. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    static struct pollfd pf[2 + 2 * MAX_PAIRS];
    for (;;) {
        pf[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
        pf[1] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (size_t i = 0; i < npairs; i++) {
            struct pair *p = pairs[i];
            for (int k = 0; k < 2; k++) {
                short ev = 0;
                if (p->len[k] == 0 && !p->eof[k] && (k == 1 || p->head != HOLD))
                    ev |= POLLIN;
                if (p->len[1 - k] > 0)
                    ev |= POLLOUT;
                /* An fd with nothing to wait for is left out: its hang-up alone
                 * would wake the loop again and again. */
                pf[2 + 2 * i + k] = (struct pollfd){.fd = ev ? p->fd[k] : -1, .events = ev};
            }
        }
        size_t n = npairs;
        if (poll(pf, 2 + 2 * n, -1) < 0 && errno != EINTR)
            return 1;
        struct signalfd_siginfo si;
        while ((pf[0].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si)) {
            if (si.ssi_signo != SIGCHLD)
                kill(child, (int)si.ssi_signo);
            else
                reap(child);
        }
        for (size_t i = n; i-- > 0;)
            if (!pump(pairs[i], &pf[2 + 2 * i]))
                pair_free(i);
        if (pf[1].revents & POLLIN)
            accept_all(lfd, sock);
    }
}
