/* The gate in front of the REST routes and /mcp (see gw/gate.h). */
#include "gw/gate.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gw/policy.h"
#include "gw/sha256.h"
#include "gw/ui.h"
#include "gw/util.h"

/* Nothing, or ':' and a port of 1-5 digits up to 65535. */
static bool port_ok(const char *s, size_t n)
{
    unsigned long v = 0;

    if (n == 0)
        return true;
    if (s[0] != ':' || n < 2 || n > 6)
        return false;
    for (size_t i = 1; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    return v <= 65535;
}

/* Length of the IPv4 address in 127.0.0.0/8 that `s` starts with, written
 * as four decimal octets of 0-255 without leading zeros; 0 if none. Parsed
 * by hand: sscanf's %u takes signs, so "-4294967169.0.0.1" read as 127. */
static size_t loopback_v4_length(const char *s, size_t n)
{
    size_t i = 0;

    for (int octet = 0; octet < 4; octet++) {
        unsigned v = 0;
        if (octet > 0 && (i >= n || s[i++] != '.'))
            return 0;
        size_t from = i;
        while (i < n && i - from < 3 && isdigit((unsigned char)s[i]))
            v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == from || v > 255 || (s[from] == '0' && i - from > 1) || (octet == 0 && v != 127))
            return 0;
    }
    return i;
}

/* Exactly "localhost" (any case), "[::1]" or a 127.0.0.0/8 address, then
 * an optional port and nothing else: what follows the name must not be
 * able to turn it into another one ("localhost.evil.example",
 * "127.0.0.1:1@evil.example"). */
bool gw_gate_host_is_loopback(const char *host)
{
    size_t n = strlen(host), h;

    if (n >= 9 && strncasecmp(host, "localhost", 9) == 0)
        h = 9;
    else if (strncmp(host, "[::1]", 5) == 0)
        h = 5;
    else
        h = loopback_v4_length(host, n);
    return h > 0 && port_ok(host + h, n - h);
}

/* The port a "host[:port]" authority names (`dflt` without one), or -1;
 * `*hlen` is the length of its host. */
static long authority_port(const char *a, long dflt, size_t *hlen)
{
    const char *colon = a[0] == '[' ? strchr(a, ']') : a;
    long v = 0;

    if (colon == NULL)
        return -1;
    colon = strchr(colon, ':');
    *hlen = colon ? (size_t)(colon - a) : strlen(a);
    if (colon == NULL)
        return dflt;
    for (const char *p = colon + 1; *p; p++) {
        if (!isdigit((unsigned char)*p) || p - colon > 5 || (p == colon + 1 && *p == '0'))
            return -1;
        v = v * 10 + (*p - '0');
    }
    return colon[1] != '\0' && v <= 65535 ? v : -1;
}

static bool is_name(const char *s, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(s, name, n) == 0;
}

/* Is `authority`, of an http:// origin, one of the spellings of the bound
 * address `address`: its own host, or localhost, 127.0.0.1 and [::1] when
 * it is a loopback or wildcard address, with the same port? */
static bool names_listener(const char *authority, const char *address)
{
    size_t ahost, lhost;
    long aport = authority_port(authority, 80, &ahost);
    long lport = address ? authority_port(address, -1, &lhost) : -1;

    if (aport < 0 || aport != lport)
        return false;
    if (ahost == lhost && strncasecmp(authority, address, ahost) == 0)
        return true;
    bool local = is_name(address, lhost, "0.0.0.0") || is_name(address, lhost, "[::]") ||
                 is_name(address, lhost, "[::1]") || strncmp(address, "127.", 4) == 0;
    return local && (is_name(authority, ahost, "localhost") ||
                     is_name(authority, ahost, "127.0.0.1") || is_name(authority, ahost, "[::1]"));
}

bool gw_gate_origin_allowed(const char *origin, const char *host, const char *address,
                            const struct gw_gateway_config *gw)
{
    const char *rest = NULL;
    bool https = false;

    for (size_t i = 0; i < gw->nallowed_origins; i++) {
        if (strcasecmp(origin, gw->allowed_origins[i]) == 0)
            return true;
    }
    if (strncasecmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncasecmp(origin, "https://", 8) == 0)
        rest = origin + 8, https = true;
    if (rest == NULL || *rest == '\0' || strpbrk(rest, "/?#@ ") != NULL)
        return false;
    /* The page the request came from has the origin it was sent to: the
     * Host, when that cannot be a name a page of another site chose (DNS
     * rebinding): a loopback name (checked on a loopback listener), or the
     * very address mcpgw listens on. */
    if (host != NULL && strcasecmp(rest, host) == 0 &&
        (gw_gate_host_is_loopback(host) || (address != NULL && strcasecmp(host, address) == 0)))
        return true;
    return !https && names_listener(rest, address);
}

/* Returns 0 when the request may go on, else answers it and returns -1. */
static int check_host_origin(const struct gw_gate *g, struct gw_http_request *req)
{
    const char *host = gw_http_header(req, "host");
    const char *origin = gw_http_header(req, "origin");

    if (host == NULL && !req->is_unix) {
        gw_http_respond_error(req, 400, "bad_request", "an HTTP/1.1 request needs a Host header",
                              NULL);
        return -1;
    }
    if (g->loopback && !req->is_unix && !gw_gate_host_is_loopback(host)) {
        gw_http_respond_error(req, 403, "forbidden_host",
                              "the Host header does not name a loopback address "
                              "(DNS rebinding protection)",
                              NULL);
        return -1;
    }
    if (origin != NULL && !gw_gate_origin_allowed(origin, host, g->address, &g->config->gateway)) {
        gw_http_respond_error(req, 403, "forbidden_origin",
                              "this Origin is neither the gateway's own nor in "
                              "gateway.allowed_origins (another port is another origin)",
                              NULL);
        return -1;
    }
    return 0;
}

/* The client whose token `given` is, or NULL. The token's digest is
 * compared with every client's (gw_policy_client_by_digest): the config
 * holds digests only, and the time does not depend on the bytes. */
static const char *client_of(const struct gw_config *c, const char *given)
{
    unsigned char digest[GW_SHA256_LEN];
    struct gw_sha256 h;
    const char *name;

    gw_sha256_init(&h);
    gw_sha256_update(&h, given, strlen(given));
    gw_sha256_final(&h, digest);
    name = gw_policy_client_by_digest(c, digest);
    memset(&h, 0, sizeof h);
    memset(digest, 0, sizeof digest);
    return name;
}

static int check_auth(const struct gw_gate *g, struct gw_http_request *req)
{
    static const char *const challenge[] = {"WWW-Authenticate: Bearer realm=\"mcpgw\"", NULL};
    const char *given = gw_http_header(req, "authorization"), *name;

    /* The OAuth callback carries its own credential, the flow's state,
     * and the browser coming back has no gateway token. */
    if (g->config->nclients == 0 || strcmp(req->path, "/healthz") == 0 ||
        strcmp(req->path, "/oauth/callback") == 0)
        return 0;
    if (given != NULL && strncasecmp(given, "Bearer ", 7) == 0 &&
        (name = client_of(g->config, given + 7)) != NULL) {
        gw_strlcpy(req->client, name, sizeof req->client);
        return 0;
    }
    gw_http_respond_error(req, 401, "unauthorized",
                          "this route needs an Authorization: Bearer token", challenge);
    return -1;
}

void gw_gate_handle(struct gw_http_request *req, void *data)
{
    struct gw_gate *g = data;

    req->client[0] = '\0';
    if (check_host_origin(g, req) != 0)
        return;
    /* The page's files hold no data; its data routes need the token. */
    if (g->config->gateway.ui && gw_ui_handle(req))
        return;
    if (check_auth(g, req) != 0)
        return;
    /* /mcp and /mcp/d/{dialog} take every method themselves (POST, GET,
     * DELETE; 405 with their own Allow header otherwise). */
    if (strcmp(req->path, "/mcp") == 0 ||
        strncmp(req->path, GW_MCP_DIALOG_PATH, strlen(GW_MCP_DIALOG_PATH)) == 0) {
        req->user = (void *)"/mcp"; /* the route label of its metrics */
        if (g->mcp != NULL)
            gw_mcp_server_handle(g->mcp, req);
        else
            gw_http_respond_error(req, 503, "shutting_down", "the gateway is stopping", NULL);
        return;
    }
    gw_api_handle(req, g->api);
}
