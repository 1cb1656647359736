/* The HTTP proxy of one sandboxed instance whose network is an allow-list
 * (docs/config.md "Sandbox", docs/hardening.md): it listens on a unix
 * socket of its own, which the sandbox's relay (gw_sandbox_relay) forwards
 * 127.0.0.1:GW_NETPROXY_PORT to, and serves CONNECT host:port (TLS) and
 * absolute-form http://host[:port]/… requests, one per connection.
 *
 * Each request is read strictly and bounded (GW_NETPROXY_HEAD_MAX for the
 * request line and headers; a Host header that names another destination
 * is refused), its destination matched against the list, its name resolved
 * here on the libuv threadpool, and each address checked before it is
 * connected, the check pinned to the connection by connecting that very
 * address: loopback, private, link-local and metadata addresses only
 * through an entry that names the host exactly (an address or a name, not
 * *.domain), the gateway's own listen address never. A refusal answers 403
 * inside and reaches the owner through on_decision, with the entry that
 * would allow it.
 *
 * A CONNECT from the relay (the process of the proxy's first connection,
 * held by its pidfd; bubblewrap's child when expect_relay said so)
 * is then handed to it: the connected socket with the 200 (SCM_RIGHTS), the
 * connection kept as a lease that shuts the socket down when it ends
 * (docs/hardening.md "Handing a tunnel's socket to the relay"). Other
 * bytes flow both ways with uv_read/uv_write, a side read only while the
 * other's write queue is under GW_NETPROXY_QUEUE_MAX, half-closes passed
 * on. An idle timeout (TCP_INFO's for a socket handed over), at most
 * max_conns connections at once, leases included. */
#ifndef GW_NETPROXY_H
#define GW_NETPROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define GW_NETPROXY_PORT      3128         /* the relay's inside the sandbox */
#define GW_NETPROXY_HEAD_MAX  8192         /* request line and headers */
#define GW_NETPROXY_QUEUE_MAX (256u << 10) /* unwritten bytes before a side pauses */

struct gw_netproxy;

struct gw_netproxy_cbs {
    /* A destination asked for: `entry` is it as an allow-list entry
     * ("api.github.com", "example.org:8443", "[::1]:80"); `why` says why
     * it was refused (NULL when allowed). */
    void (*on_decision)(void *data, const char *entry, bool allowed, const char *why);
    void *data;
};

struct gw_netproxy_options {
    char *const *allow; /* entries as gw_netproxy_match reads them; copied */
    size_t nallow;
    unsigned max_conns; /* 0: 256 */
    uint64_t idle_ms;   /* 0: 300 s without a byte either way */
    uint64_t head_ms;   /* 0: 10 s to send the request's head */
};

/* The address the daemon listens on, as it reports it ("127.0.0.1:7420",
 * "[::1]:7420", "unix:…"): no proxy ever connects it. Set once listening;
 * one per process. */
void gw_netproxy_set_own(const char *listen);

/* Makes a private directory under `parent` (made 0700 if missing) with
 * the socket `proxy.sock` in it, and listens. 0 and *out, or a negative
 * code with a sentence in `why`. */
int gw_netproxy_start(uv_loop_t *loop, const char *parent, const struct gw_netproxy_options *o,
                      const struct gw_netproxy_cbs *cbs, struct gw_netproxy **out, char *why,
                      size_t cap);

/* The directory holding proxy.sock (to bind into the sandbox). */
const char *gw_netproxy_dir(const struct gw_netproxy *p);

/* The relay is the child of `sandbox`, the process spawned (bubblewrap,
 * which runs it as the namespace's pid 1): a first connection from any
 * other process (the relay's own lost, the daemon out of descriptors)
 * leaves the relay unknown, and no socket is handed. Call before the loop
 * runs again. */
void gw_netproxy_expect_relay(struct gw_netproxy *p, pid_t sandbox);

/* Stops: no callback from now on; every connection closed, the socket and
 * its directory removed, the memory freed once the handles have closed. */
void gw_netproxy_close(struct gw_netproxy *p);

/* ---- the kernel's word on a connection's ends (netproxy_peer.c) ---- */

/* A pidfd for the process that connected the unix socket `fd` (its
 * SO_PEERCRED pid `pid`): SO_PEERPIDFD, or on a kernel without it
 * pidfd_open of `pid` while `fd`'s peer is still connected (the relay
 * keeps its first connection open for its life). -1: unknown, the process
 * gone. */
int gw_netproxy_peer_pidfd(int fd, pid_t pid);

/* Whether the process `pid` (its pidfd `pidfd`, alive) is a child of
 * `parent`, read from /proc/PID/stat; the pidfd is checked again after the
 * read, so that the pid was that process's throughout. */
bool gw_netproxy_is_child(pid_t pid, int pidfd, pid_t parent);

/* Whether the process of `pidfd` (-1: none) has not ended. */
bool gw_netproxy_pidfd_alive(int pidfd);

/* How long the TCP socket `fd` has carried no data either way, in ms, as
 * the kernel records it (TCP_INFO); UINT64_MAX if it cannot say. */
uint64_t gw_netproxy_quiet_ms(int fd);

/* ---- the rules (netproxy_rules.c), pure ---- */

/* One request's head as read. */
struct gw_netproxy_req {
    bool connect;    /* CONNECT host:port, else absolute-form http:// */
    char host[256];  /* lowercased; an IPv6 literal without brackets */
    unsigned port;   /* explicit, or 80 for http:// */
    size_t head_len; /* bytes of the head, up to and with its blank line */
    char *forward;   /* http://: the head to send on, origin-form, with
                      * Connection: close and no Proxy-* headers */
};

/* 0: a whole head in buf[0..len) (fills *r; free r->forward); 1: more
 * bytes needed; else the HTTP status to refuse it with (400, 405, 414,
 * 431). */
int gw_netproxy_parse(const char *buf, size_t len, struct gw_netproxy_req *r);

/* The index of the first entry of `allow` that admits host:port, or -1.
 * Entries: NAME, *.NAME (subdomains only), IPv4, [IPv6], each with :PORT
 * (443 when none). *exact says whether that entry names the host itself
 * (not *.), which lets it reach a non-public address. */
int gw_netproxy_match(char *const *allow, size_t nallow, const char *host, unsigned port,
                      bool *exact);

/* `host`:`port` as an allow-list entry (the port left out when 443) into
 * out. */
void gw_netproxy_entry(const char *host, unsigned port, char *out, size_t cap);

#endif
