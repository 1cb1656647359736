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
 * buffer instead. */
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
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PAIRS 256
#define BUF_SIZE  (16u << 10)
/* What one direction holds at most: in the pipe, or in the buffer. */
#define PIPE_SIZE (256u << 10)

/* One connection: [0] the client inside, [1] the proxy; pipe[i] (or buf[i])
 * holds the len[i] bytes read from fd[i] and not yet written to fd[1 - i]. */
struct pair {
    int fd[2];
    int pipe[2][2];
    char *buf[2];
    size_t len[2], off[2];
    bool eof[2];
};

static struct pair *pairs[MAX_PAIRS];
static size_t npairs;

static void pair_free(size_t i)
{
    struct pair *p = pairs[i];
    close(p->fd[0]);
    close(p->fd[1]);
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

static ssize_t fill(struct pair *p, int i)
{
    if (p->pipe[i][0] >= 0)
        return splice(p->fd[i], NULL, p->pipe[i][1], NULL, PIPE_SIZE,
                      SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (!p->buf[i] && !(p->buf[i] = malloc(BUF_SIZE))) {
        errno = ENOMEM;
        return -1;
    }
    p->off[i] = 0;
    return read(p->fd[i], p->buf[i], BUF_SIZE);
}

static ssize_t drain(struct pair *p, int i)
{
    if (p->pipe[i][0] >= 0)
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
        if (p->len[i] == 0 && !p->eof[i] && (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
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
        }
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
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, MAX_PAIRS) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Ends the relay as the server ended: its exit code, or its signal. */
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
    static struct pollfd pf[2 + 2 * MAX_PAIRS];
    for (;;) {
        pf[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
        pf[1] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (size_t i = 0; i < npairs; i++) {
            struct pair *p = pairs[i];
            for (int k = 0; k < 2; k++) {
                short ev = 0;
                if (p->len[k] == 0 && !p->eof[k])
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
            int status;
            if (si.ssi_signo != SIGCHLD)
                kill(child, (int)si.ssi_signo);
            else if (waitpid(child, &status, WNOHANG) == child)
                exit_like(status);
        }
        for (size_t i = n; i-- > 0;)
            if (!pump(pairs[i], &pf[2 + 2 * i]))
                pair_free(i);
        if (pf[1].revents & POLLIN)
            accept_all(lfd, sock);
    }
}
