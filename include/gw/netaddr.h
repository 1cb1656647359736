/* The class of an address: what a connection to it would reach. The OAuth
 * client (what metadata may steer a fetch at) and the sandbox's proxy
 * (what an allow-list entry may open) apply their rules to it. */
#ifndef GW_NETADDR_H
#define GW_NETADDR_H

#include <sys/socket.h>

enum gw_netaddr_class {
    GW_NETADDR_PUBLIC,
    GW_NETADDR_LOOPBACK,
    GW_NETADDR_PRIVATE,    /* RFC 1918, RFC 6598, unique local, unspecified */
    GW_NETADDR_LINK_LOCAL, /* 169.254/16, fe80::/10 */
    GW_NETADDR_METADATA,   /* a cloud's instance-metadata service */
};

/* The class of an address being connected, or of a host as written (an IP
 * literal, or a name: "localhost" and "*.localhost" are loopback,
 * metadata.google.internal is metadata, any other name is public until it
 * resolves). A family other than IPv4 or IPv6 is private. */
enum gw_netaddr_class gw_netaddr_class(const struct sockaddr *sa);
enum gw_netaddr_class gw_netaddr_host_class(const char *host);

/* Makes a TCP socket use Reno when `addr`, its peer (for a listening
 * socket, its own address), is loopback; any other address keeps the
 * host's congestion control, the operator's choice for a real link. Over
 * loopback there is no link to pace for, but a host whose congestion
 * control paces (BBR without the fq queue) arms a timer for every segment
 * sent, which is most of what sending costs there in a VM. Reno, which any
 * user may set on a socket, does not pace. A listening socket passes it to
 * the connections it accepts. Best effort: a refusal changes nothing else. */
void gw_netaddr_set_unpaced(int fd, const struct sockaddr *addr);

#endif
