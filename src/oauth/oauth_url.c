/* URLs of the OAuth client (gw/oauth.h): parsing, the address rules that
 * keep metadata from steering a fetch at the gateway's own network, the
 * discovery order and the form encoding. */
#include "gw/oauth.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "gw/netaddr.h"
#include "gw/util.h"

void gw_oauth_url_clear(struct gw_oauth_url *u)
{
    free(u->origin);
    free(u->path);
    free(u->query);
    memset(u, 0, sizeof(*u));
}

static bool host_char(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_';
}

/* Visible ASCII without the characters that have no place in a URL we
 * pass on (space, quotes, angle brackets, backslash). */
static bool url_chars_ok(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f || *p == '"' || *p == '<' || *p == '>' || *p == '\\')
            return false;
    return true;
}

static int parse_authority(const char *a, size_t n, struct gw_oauth_url *u, char *why, size_t cap)
{
    const char *end = a + n, *hend, *colon = NULL;
    if (memchr(a, '@', n)) {
        gw_say(why, cap, "a URL with user information is refused");
        return -EINVAL;
    }
    if (n > 0 && a[0] == '[') {
        const char *rb = memchr(a, ']', n);
        char tmp[INET6_ADDRSTRLEN];
        struct in6_addr a6;
        if (!rb || (size_t)(rb - a - 1) >= sizeof(tmp)) {
            gw_say(why, cap, "the URL's IPv6 host is malformed");
            return -EINVAL;
        }
        memcpy(tmp, a + 1, (size_t)(rb - a - 1));
        tmp[rb - a - 1] = 0;
        if (inet_pton(AF_INET6, tmp, &a6) != 1) {
            gw_say(why, cap, "the URL's IPv6 host is malformed");
            return -EINVAL;
        }
        inet_ntop(AF_INET6, &a6, u->host, sizeof(u->host));
        u->ip = true;
        hend = rb + 1;
        if (hend < end && *hend != ':') {
            gw_say(why, cap, "the URL's authority is malformed");
            return -EINVAL;
        }
        colon = hend < end ? hend : NULL;
    } else {
        colon = memchr(a, ':', n);
        hend = colon ? colon : end;
        size_t hl = (size_t)(hend - a);
        if (hl == 0 || hl >= sizeof(u->host)) {
            gw_say(why, cap, "the URL has no usable host");
            return -EINVAL;
        }
        for (size_t i = 0; i < hl; i++) {
            if (!host_char((unsigned char)a[i])) {
                gw_say(why, cap, "the URL's host has a character outside [A-Za-z0-9.-_]");
                return -EINVAL;
            }
            u->host[i] = (char)tolower((unsigned char)a[i]);
        }
        u->host[hl] = 0;
        struct in_addr a4;
        u->ip = inet_pton(AF_INET, u->host, &a4) == 1;
    }
    u->port = u->https ? 443 : 80;
    if (colon) {
        const char *p = colon + 1;
        unsigned long port = 0;
        if (p == end || end - p > 5) {
            gw_say(why, cap, "the URL's port is malformed");
            return -EINVAL;
        }
        for (; p < end; p++) {
            if (!isdigit((unsigned char)*p)) {
                gw_say(why, cap, "the URL's port is malformed");
                return -EINVAL;
            }
            port = port * 10 + (unsigned long)(*p - '0');
        }
        if (port == 0 || port > 65535) {
            gw_say(why, cap, "the URL's port is out of range");
            return -EINVAL;
        }
        u->port = (unsigned)port;
    }
    return 0;
}

int gw_oauth_url_parse(const char *s, struct gw_oauth_url *u, char *why, size_t cap)
{
    memset(u, 0, sizeof(*u));
    if (!s || strlen(s) > GW_OAUTH_URL_MAX || !url_chars_ok(s)) {
        gw_say(why, cap, "not a URL (empty, too long, or with characters a URL cannot hold)");
        return -EINVAL;
    }
    if (strncasecmp(s, "https://", 8) == 0) {
        u->https = true;
        s += 8;
    } else if (strncasecmp(s, "http://", 7) == 0) {
        s += 7;
    } else {
        gw_say(why, cap, "only http and https URLs are fetched");
        return -EINVAL;
    }
    if (strchr(s, '#')) {
        gw_say(why, cap, "a URL with a fragment is refused");
        return -EINVAL;
    }
    size_t alen = strcspn(s, "/?");
    if (parse_authority(s, alen, u, why, cap) < 0) {
        memset(u, 0, sizeof(*u));
        return -EINVAL;
    }
    const char *rest = s + alen;
    size_t plen = strcspn(rest, "?");
    bool v6 = strchr(u->host, ':') != NULL;
    bool dflt = u->port == (u->https ? 443u : 80u);
    char port[8] = "";
    if (!dflt)
        snprintf(port, sizeof(port), ":%u", u->port);
    u->origin = gw_xasprintf("%s://%s%s%s%s", u->https ? "https" : "http", v6 ? "[" : "", u->host,
                             v6 ? "]" : "", port);
    u->path = plen ? gw_xstrndup(rest, plen) : gw_xstrdup("/");
    if (rest[plen] == '?')
        u->query = gw_xstrdup(rest + plen + 1);
    return 0;
}

/* ---- addresses ---- */

enum gw_oauth_addr gw_oauth_addr_class(const struct sockaddr *sa)
{
    return (enum gw_oauth_addr)gw_netaddr_class(sa);
}

enum gw_oauth_addr gw_oauth_host_class(const char *host)
{
    return (enum gw_oauth_addr)gw_netaddr_host_class(host);
}

int gw_oauth_url_check(const char *url, const char *server_host, char *why, size_t cap)
{
    struct gw_oauth_url u;
    if (gw_oauth_url_parse(url, &u, why, cap) < 0)
        return -EINVAL;
    enum gw_oauth_addr c = gw_oauth_host_class(u.host);
    bool own = server_host && strcasecmp(u.host, server_host) == 0;
    bool server_loopback =
        server_host && gw_oauth_host_class(server_host) == GW_OAUTH_ADDR_LOOPBACK;
    int rc = 0;
    if (!u.https && c != GW_OAUTH_ADDR_LOOPBACK) {
        gw_say(why, cap, "http is allowed only to a loopback host; %s must be https", u.host);
        rc = -EACCES;
    } else if (c == GW_OAUTH_ADDR_LOOPBACK && !own && !server_loopback) {
        gw_say(why, cap, "%s is a loopback host and the MCP server is not on loopback", u.host);
        rc = -EACCES;
    } else if (c == GW_OAUTH_ADDR_METADATA && !own) {
        gw_say(why, cap, "%s is a cloud metadata address", u.host);
        rc = -EACCES;
    } else if ((c == GW_OAUTH_ADDR_PRIVATE || c == GW_OAUTH_ADDR_LINK_LOCAL) && !own) {
        gw_say(why, cap, "%s is a %s address and not the server's own host", u.host,
               c == GW_OAUTH_ADDR_PRIVATE ? "private" : "link-local");
        rc = -EACCES;
    }
    gw_oauth_url_clear(&u);
    return rc;
}

const char *gw_oauth_addr_refused(const struct sockaddr *sa, const struct gw_oauth_reach *r)
{
    enum gw_oauth_addr c = gw_oauth_addr_class(sa);
    if (!r->https)
        return c == GW_OAUTH_ADDR_LOOPBACK ? NULL : "an http URL reaches only loopback";
    if (r->own_host || c == GW_OAUTH_ADDR_PUBLIC)
        return NULL;
    switch (c) {
    case GW_OAUTH_ADDR_LOOPBACK:
        return r->server_loopback ? NULL : "a loopback address, and the MCP server is not on one";
    case GW_OAUTH_ADDR_METADATA:
        return "a cloud metadata address";
    case GW_OAUTH_ADDR_LINK_LOCAL:
        return "a link-local address";
    default:
        return "a private address";
    }
}

void gw_oauth_reach_init(struct gw_oauth_reach *r, const struct gw_oauth_url *u,
                         const char *server_host)
{
    *r = (struct gw_oauth_reach){
        .https = u->https,
        .own_host = strcmp(u->host, server_host) == 0,
        .server_loopback = gw_oauth_host_class(server_host) == GW_OAUTH_ADDR_LOOPBACK,
    };
}

int gw_oauth_reach_ok(void *reach, const struct sockaddr *sa)
{
    struct gw_oauth_reach *r = reach;
    const char *why = gw_oauth_addr_refused(sa, r);
    if (why)
        r->refused = why;
    return why == NULL;
}

/* ---- discovery ---- */

int gw_oauth_discovery_urls(enum gw_oauth_wellknown kind, const char *url, char *out[3])
{
    struct gw_oauth_url u;
    char why[8];
    if (gw_oauth_url_parse(url, &u, why, sizeof(why)) < 0)
        return -EINVAL;
    /* RFC 8414 section 3.1 and RFC 9728 section 3.1: a terminating "/" is
     * not part of the path that is inserted. */
    size_t plen = strlen(u.path);
    while (plen > 0 && u.path[plen - 1] == '/')
        plen--;
    int n = 0;
    if (kind == GW_OAUTH_PRM) {
        if (plen > 0)
            out[n++] = gw_xasprintf("%s/.well-known/oauth-protected-resource%.*s", u.origin,
                                    (int)plen, u.path);
        out[n++] = gw_xasprintf("%s/.well-known/oauth-protected-resource", u.origin);
    } else if (plen > 0) {
        out[n++] = gw_xasprintf("%s/.well-known/oauth-authorization-server%.*s", u.origin,
                                (int)plen, u.path);
        out[n++] =
            gw_xasprintf("%s/.well-known/openid-configuration%.*s", u.origin, (int)plen, u.path);
        out[n++] =
            gw_xasprintf("%s%.*s/.well-known/openid-configuration", u.origin, (int)plen, u.path);
    } else {
        out[n++] = gw_xasprintf("%s/.well-known/oauth-authorization-server", u.origin);
        out[n++] = gw_xasprintf("%s/.well-known/openid-configuration", u.origin);
    }
    gw_oauth_url_clear(&u);
    return n;
}

bool gw_oauth_resource_matches(const char *resource, const char *server_url)
{
    struct gw_oauth_url r, s;
    char why[8];
    bool ok = false;
    if (gw_oauth_url_parse(resource, &r, why, sizeof(why)) < 0)
        return false;
    if (gw_oauth_url_parse(server_url, &s, why, sizeof(why)) == 0) {
        size_t rl = strlen(r.path);
        while (rl > 0 && r.path[rl - 1] == '/')
            rl--;
        ok = strcmp(r.origin, s.origin) == 0 && !r.query && strncmp(r.path, s.path, rl) == 0 &&
             (s.path[rl] == 0 || s.path[rl] == '/');
        gw_oauth_url_clear(&s);
    }
    gw_oauth_url_clear(&r);
    return ok;
}

/* ---- forms ---- */

static void append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = gw_xrealloc(*buf, *cap);
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = 0;
}

static void append_encoded(char **buf, size_t *len, size_t *cap, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            append(buf, len, cap, (const char *)p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            append(buf, len, cap, e, 3);
        }
    }
}

void gw_oauth_form_add(char **buf, const char *name, const char *value)
{
    size_t len = *buf ? strlen(*buf) : 0, cap = *buf ? len + 1 : 0;
    if (len)
        append(buf, &len, &cap, "&", 1);
    append_encoded(buf, &len, &cap, name);
    append(buf, &len, &cap, "=", 1);
    append_encoded(buf, &len, &cap, value);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static char *decode(const char *s, size_t n)
{
    char *out = gw_xmalloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') {
            out[o++] = ' ';
        } else if (s[i] == '%') {
            int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
            int lo = i + 2 < n ? hexval(s[i + 2]) : -1;
            /* A NUL inside a value would cut it short where C reads it. */
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                free(out);
                return NULL;
            }
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = 0;
    return out;
}

char *gw_oauth_form_get(const char *query, const char *name, bool *dup)
{
    char *found = NULL;
    size_t nl = strlen(name);
    *dup = false;
    for (const char *p = query; p && *p;) {
        size_t plen = strcspn(p, "&");
        const char *eq = memchr(p, '=', plen);
        size_t klen = eq ? (size_t)(eq - p) : plen;
        if (klen == nl && memcmp(p, name, nl) == 0) {
            if (found) {
                *dup = true;
                free(found);
                return NULL;
            }
            found = eq ? decode(eq + 1, plen - klen - 1) : gw_xstrdup("");
            if (!found)
                return NULL;
        }
        p += plen;
        if (*p == '&')
            p++;
    }
    return found;
}
