/* Address classes (gw/netaddr.h). */
#include "gw/netaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static enum gw_netaddr_class class_v4(uint32_t a)
{
    if (a == 0xA9FEA9FEu) /* 169.254.169.254: AWS, GCP, Azure, ... */
        return GW_NETADDR_METADATA;
    if ((a >> 24) == 127)
        return GW_NETADDR_LOOPBACK;
    if ((a >> 16) == 0xA9FE)
        return GW_NETADDR_LINK_LOCAL;
    if ((a >> 24) == 10 || (a >> 24) == 0 || (a >> 20) == 0xAC1 || (a >> 16) == 0xC0A8 ||
        (a >> 22) == (100u << 2 | 1u) /* 100.64.0.0/10 */ || (a >> 28) >= 0xE /* multicast+ */)
        return GW_NETADDR_PRIVATE;
    return GW_NETADDR_PUBLIC;
}

static enum gw_netaddr_class class_v6(const struct in6_addr *a)
{
    static const unsigned char ec2[16] = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0,    0,
                                          0,    0,    0,    0,    0, 0, 0x02, 0x54};
    if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a)) {
        uint32_t v4;
        memcpy(&v4, a->s6_addr + 12, 4);
        if (IN6_IS_ADDR_V4MAPPED(a) || ntohl(v4) > 1)
            return class_v4(ntohl(v4));
    }
    if (IN6_IS_ADDR_LOOPBACK(a))
        return GW_NETADDR_LOOPBACK;
    if (memcmp(a->s6_addr, ec2, 16) == 0)
        return GW_NETADDR_METADATA;
    if (IN6_IS_ADDR_LINKLOCAL(a))
        return GW_NETADDR_LINK_LOCAL;
    if (IN6_IS_ADDR_UNSPECIFIED(a) || (a->s6_addr[0] & 0xfe) == 0xfc || IN6_IS_ADDR_SITELOCAL(a) ||
        IN6_IS_ADDR_MULTICAST(a))
        return GW_NETADDR_PRIVATE;
    return GW_NETADDR_PUBLIC;
}

enum gw_netaddr_class gw_netaddr_class(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return class_v4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
    if (sa->sa_family == AF_INET6)
        return class_v6(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return GW_NETADDR_PRIVATE;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

enum gw_netaddr_class gw_netaddr_host_class(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return class_v4(ntohl(a4.s_addr));
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return class_v6(&a6);
    if (strcasecmp(host, "localhost") == 0 || ends_with(host, ".localhost"))
        return GW_NETADDR_LOOPBACK;
    if (strcasecmp(host, "metadata.google.internal") == 0 || strcasecmp(host, "metadata") == 0)
        return GW_NETADDR_METADATA;
    return GW_NETADDR_PUBLIC;
}

void gw_netaddr_set_unpaced(int fd, const struct sockaddr *addr)
{
    if (gw_netaddr_class(addr) == GW_NETADDR_LOOPBACK)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4);
}
