/* paced_http: the download server of the proxy benchmark at a link's rate.
 * Loopback moves bytes as fast as the CPUs copy them, which is not what a
 * server on a network does; this one sends at the rate a request asks for,
 * paced by the kernel (SO_MAX_PACING_RATE: TCP's own pacing, no qdisc
 * needed), so the bench can compare direct and proxied downloads as a real
 * 1 or 10 Gbit/s link would show them.
 *
 *   paced_http          (listens on 127.0.0.1, prints "listening PORT")
 *   GET /MB/MBIT        MB MiB at MBIT Mbit/s (0: unpaced), then close
 *
 * One connection at a time: the bench downloads one after the other. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_MAX_PACING_RATE
#define SO_MAX_PACING_RATE 47
#endif

static char chunk[1 << 20];

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void serve(int c)
{
    char head[4096];
    size_t len = 0;
    while (len < sizeof(head) - 1) {
        ssize_t n = read(c, head + len, sizeof(head) - 1 - len);
        if (n <= 0)
            return;
        len += (size_t)n;
        head[len] = '\0';
        if (strstr(head, "\r\n\r\n"))
            break;
    }
    unsigned mb = 0, mbit = 0;
    if (sscanf(head, "GET /%u/%u ", &mb, &mbit) != 2)
        return;
    if (mbit > 0) {
        unsigned long rate = (unsigned long)mbit * 1000000ul / 8;
        setsockopt(c, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
    }
    char reply[128];
    int n = snprintf(reply, sizeof(reply),
                     "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\nConnection: close\r\n\r\n",
                     (unsigned long long)mb << 20);
    if (write_all(c, reply, (size_t)n) != 0)
        return;
    for (unsigned i = 0; i < mb; i++)
        if (write_all(c, chunk, sizeof(chunk)) != 0)
            return;
    shutdown(c, SHUT_WR);
    while (read(c, head, sizeof(head)) > 0)
        ;
}

int main(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 16) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &al) != 0) {
        perror("paced_http");
        return 1;
    }
    memset(chunk, 'x', sizeof(chunk));
    printf("listening %u\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c < 0)
            continue;
        serve(c);
        close(c);
    }
}
