/* The proxy's rules (gw/netproxy.h): a request's head read strictly, and
 * a destination matched against the allow-list. */
#include "gw/netproxy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/util.h"

static bool tchar(unsigned char c)
{
    return isalnum(c) || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* host[:port] or [v6][:port] of `n` bytes into r; `dflt` 0 requires a
 * port. */
static bool authority(const char *a, size_t n, unsigned dflt, struct gw_netproxy_req *r)
{
    const char *end = a + n, *p;
    if (n > 0 && a[0] == '[') {
        const char *rb = memchr(a, ']', n);
        char tmp[INET6_ADDRSTRLEN];
        struct in6_addr a6;
        if (!rb || (size_t)(rb - a - 1) >= sizeof(tmp))
            return false;
        memcpy(tmp, a + 1, (size_t)(rb - a - 1));
        tmp[rb - a - 1] = '\0';
        if (inet_pton(AF_INET6, tmp, &a6) != 1)
            return false;
        inet_ntop(AF_INET6, &a6, r->host, sizeof(r->host));
        p = rb + 1;
    } else {
        p = memchr(a, ':', n);
        p = p ? p : end;
        size_t hl = (size_t)(p - a);
        if (hl == 0 || hl > 253)
            return false;
        for (size_t i = 0; i < hl; i++) {
            unsigned char c = (unsigned char)a[i];
            if (!isalnum(c) && c != '-' && c != '.' && c != '_')
                return false;
            r->host[i] = (char)tolower(c);
        }
        r->host[hl] = '\0';
    }
    if (p == end) {
        r->port = dflt;
        return dflt != 0;
    }
    if (*p != ':' || end - p < 2 || end - p > 6)
        return false;
    unsigned long port = 0;
    for (p++; p < end; p++) {
        if (!isdigit((unsigned char)*p))
            return false;
        port = port * 10 + (unsigned long)(*p - '0');
    }
    if (port == 0 || port > 65535)
        return false;
    r->port = (unsigned)port;
    return true;
}

/* A Host header names the request's destination or is refused: a CONNECT
 * to one host that says Host: another is how a second host is smuggled
 * past a proxy that checks only one of them. */
static bool host_agrees(const char *v, size_t n, const struct gw_netproxy_req *r)
{
    struct gw_netproxy_req h = {0};
    if (!authority(v, n, r->port, &h))
        return false;
    return strcmp(h.host, r->host) == 0 && h.port == r->port;
}

static bool header_is(const char *line, size_t nlen, const char *name)
{
    return strlen(name) == nlen && strncasecmp(line, name, nlen) == 0;
}

/* The request line: METHOD SP target SP HTTP/1.x. */
static int request_line(const char *b, size_t n, struct gw_netproxy_req *r, const char **method,
                        size_t *mlen, const char **path, size_t *plen)
{
    const char *sp1 = memchr(b, ' ', n);
    if (!sp1 || sp1 == b)
        return 400;
    for (const char *p = b; p < sp1; p++)
        if (*p < 'A' || *p > 'Z')
            return 400;
    const char *t = sp1 + 1, *sp2 = memchr(t, ' ', (size_t)(b + n - t));
    if (!sp2 || sp2 == t)
        return 400;
    size_t vlen = (size_t)(b + n - sp2 - 1);
    if (vlen != 8 || (memcmp(sp2 + 1, "HTTP/1.1", 8) != 0 && memcmp(sp2 + 1, "HTTP/1.0", 8) != 0))
        return 400;
    for (const char *p = t; p < sp2; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return 400;
    *method = b;
    *mlen = (size_t)(sp1 - b);
    size_t tl = (size_t)(sp2 - t);
    r->connect = *mlen == 7 && memcmp(b, "CONNECT", 7) == 0;
    if (r->connect)
        return authority(t, tl, 0, r) ? 0 : 400;
    if (tl < 7 || strncasecmp(t, "http://", 7) != 0)
        return tl >= 8 && strncasecmp(t, "https://", 8) == 0 ? 400 : 405;
    t += 7;
    tl -= 7;
    size_t al = strcspn(t, "/? ");
    al = al > tl ? tl : al;
    if (memchr(t, '@', al) || !authority(t, al, 80, r))
        return 400;
    *path = t + al;
    *plen = tl - al;
    return 0;
}

int gw_netproxy_parse(const char *buf, size_t len, struct gw_netproxy_req *r)
{
    memset(r, 0, sizeof(*r));
    size_t lim = len < GW_NETPROXY_HEAD_MAX ? len : GW_NETPROXY_HEAD_MAX;
    const char *eol = memchr(buf, '\n', lim);
    if (!eol)
        return len >= GW_NETPROXY_HEAD_MAX ? 414 : 1;
    if (eol == buf || eol[-1] != '\r')
        return 400;
    const char *method, *path = NULL;
    size_t mlen, plen = 0;
    int rc = request_line(buf, (size_t)(eol - 1 - buf), r, &method, &mlen, &path, &plen);
    if (rc != 0)
        return rc;
    char *fwd = NULL;
    size_t flen = 0, fcap = 0;
    if (!r->connect) {
        fcap = GW_NETPROXY_HEAD_MAX + 64;
        fwd = gw_xmalloc(fcap);
        flen = (size_t)snprintf(fwd, fcap, "%.*s %s%.*s %.8s\r\n", (int)mlen, method,
                                plen && path[0] == '/' ? "" : "/", (int)plen, path, eol - 9);
    }
    int hosts = 0, te = 0, cl = 0;
    for (const char *line = eol + 1;;) {
        size_t left = (size_t)(buf + lim - line);
        const char *nl = memchr(line, '\n', left);
        if (!nl) {
            rc = len >= GW_NETPROXY_HEAD_MAX ? 431 : 1;
            break;
        }
        if (nl == line || nl[-1] != '\r') {
            rc = 400;
            break;
        }
        size_t ll = (size_t)(nl - 1 - line);
        if (ll == 0) {
            r->head_len = (size_t)(nl + 1 - buf);
            rc = te && cl ? 400 : 0;
            break;
        }
        const char *colon = memchr(line, ':', ll);
        size_t nlen = colon ? (size_t)(colon - line) : 0;
        bool ok = nlen > 0;
        for (size_t i = 0; ok && i < nlen; i++)
            ok = tchar((unsigned char)line[i]);
        for (size_t i = 0; ok && i < ll; i++)
            ok = line[i] != '\0' && line[i] != '\r';
        if (!ok) {
            rc = 400;
            break;
        }
        const char *v = colon + 1, *vend = line + ll;
        while (v < vend && (*v == ' ' || *v == '\t'))
            v++;
        while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
            vend--;
        if (header_is(line, nlen, "host")) {
            if (++hosts > 1 || !host_agrees(v, (size_t)(vend - v), r)) {
                rc = 400;
                break;
            }
        }
        te += header_is(line, nlen, "transfer-encoding");
        cl += header_is(line, nlen, "content-length");
        bool drop = header_is(line, nlen, "connection") || header_is(line, nlen, "keep-alive") ||
                    (nlen > 6 && strncasecmp(line, "proxy-", 6) == 0);
        if (fwd && !drop) {
            memcpy(fwd + flen, line, ll + 2);
            flen += ll + 2;
        }
        line = nl + 1;
    }
    if (rc != 0) {
        free(fwd);
        return rc;
    }
    if (fwd) {
        memcpy(fwd + flen, "Connection: close\r\n\r\n", sizeof("Connection: close\r\n\r\n"));
        r->forward = fwd;
    }
    return 0;
}

/* ---- the allow-list ---- */

static bool same_ip(const char *a, const char *b)
{
    unsigned char x[16], y[16];
    int fa = strchr(a, ':') ? AF_INET6 : AF_INET, fb = strchr(b, ':') ? AF_INET6 : AF_INET;
    return fa == fb && inet_pton(fa, a, x) == 1 && inet_pton(fb, b, y) == 1 &&
           memcmp(x, y, fa == AF_INET ? 4 : 16) == 0;
}

int gw_netproxy_match(char *const *allow, size_t nallow, const char *host, unsigned port,
                      bool *exact)
{
    for (size_t i = 0; i < nallow; i++) {
        const char *e = allow[i];
        bool wild = strncmp(e, "*.", 2) == 0;
        struct gw_netproxy_req en = {0};
        if (!authority(wild ? e + 2 : e, strlen(wild ? e + 2 : e), 443, &en) || en.port != port)
            continue;
        bool hit;
        if (wild) {
            size_t hl = strlen(host), sl = strlen(en.host);
            hit = hl > sl + 1 && host[hl - sl - 1] == '.' && strcmp(host + hl - sl, en.host) == 0;
        } else {
            hit = strcmp(host, en.host) == 0 || same_ip(host, en.host);
        }
        if (hit) {
            *exact = !wild;
            return (int)i;
        }
    }
    return -1;
}

void gw_netproxy_entry(const char *host, unsigned port, char *out, size_t cap)
{
    bool v6 = strchr(host, ':') != NULL;
    if (port == 443 && !v6)
        snprintf(out, cap, "%s", host);
    else if (port == 443)
        snprintf(out, cap, "[%s]", host);
    else
        snprintf(out, cap, "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
}
