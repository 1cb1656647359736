/* The daemon `mcpgw auth` talks to, and one blocking request to it over
 * libcurl's easy interface (loaded lazily, as for HTTP upstreams). */
#include "gw/auth_cli_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/config.h"
#include "gw/curl_lib.h"
#include "gw/util.h"

/* An answer larger than this is not the daemon's. */
#define MAX_BODY (8u << 20)

/* A listen address as a URL a client can connect to: an unspecified host
 * (0.0.0.0, [::]) is reached on loopback. */
static void from_listen(struct gw_cli_daemon *d, const char *listen)
{
    if (strncmp(listen, "unix:", 5) == 0) {
        d->unix_path = gw_xstrdup(listen + 5);
        d->url = gw_xstrdup("http://localhost");
        return;
    }
    const char *colon = strrchr(listen, ':');
    const char *port = colon ? colon + 1 : "7420";
    size_t hostlen = colon ? (size_t)(colon - listen) : strlen(listen);
    if (hostlen == 0 || (hostlen == 7 && memcmp(listen, "0.0.0.0", 7) == 0))
        d->url = gw_xasprintf("http://127.0.0.1:%s", port);
    else if (hostlen == 4 && memcmp(listen, "[::]", 4) == 0)
        d->url = gw_xasprintf("http://[::1]:%s", port);
    else
        d->url = gw_xasprintf("http://%.*s:%s", (int)hostlen, listen, port);
}

/* Does the http(s) URL `url` name a loopback host (127.0.0.0/8, ::1,
 * localhost, *.localhost), as written? */
static bool loopback_url(const char *url)
{
    const char *h = strstr(url, "://");
    char host[256];
    size_t n;
    h = h ? h + 3 : url;
    if (*h == '[') {
        h++;
        n = strcspn(h, "]");
    } else {
        n = strcspn(h, ":/?#");
    }
    if (n == 0 || n >= sizeof(host))
        return false;
    memcpy(host, h, n);
    host[n] = 0;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    size_t len = strlen(host);
    return strcasecmp(host, "localhost") == 0 ||
           (len > 10 && strcasecmp(host + len - 10, ".localhost") == 0);
}

int gw_cli_daemon_init(struct gw_cli_daemon *d, const char *gateway, const char *listen,
                       const char *config_path)
{
    struct gw_config *c = NULL;

    memset(d, 0, sizeof(*d));
    if (config_path && gw_config_load(config_path, &c) == 0 && c->exists) {
        /* An auth_token whose variable this shell lacks is an error of
         * the load that leaves it NULL: $MCPGW_TOKEN then stands in. */
        d->token = gw_xstrdup(c->gateway.auth_token);
        if (!listen)
            listen = c->gateway.listen;
    }
    if (!d->token && getenv("MCPGW_TOKEN") && *getenv("MCPGW_TOKEN"))
        d->token = gw_xstrdup(getenv("MCPGW_TOKEN"));
    if (gateway && strncmp(gateway, "unix:", 5) == 0) {
        from_listen(d, gateway);
    } else if (gateway) {
        if (strncmp(gateway, "http://", 7) != 0 && strncmp(gateway, "https://", 8) != 0) {
            fprintf(stderr,
                    "mcpgw: --gateway must be http://HOST:PORT, https://… or unix:/path, "
                    "not '%s'\n",
                    gateway);
            gw_config_unref(c);
            return 2;
        }
        size_t n = strlen(gateway);
        while (n > 0 && gateway[n - 1] == '/')
            n--;
        d->url = gw_xstrndup(gateway, n);
    } else {
        from_listen(d, listen && *listen ? listen : "127.0.0.1:7420");
    }
    if (c)
        gw_config_unref(c);
    d->name = d->unix_path ? gw_xasprintf("unix:%s", d->unix_path) : gw_xstrdup(d->url);
    /* Plain http past this machine would show the token to the network. */
    if (d->token && !d->unix_path && strncmp(d->url, "http://", 7) == 0 && !loopback_url(d->url)) {
        fprintf(stderr,
                "mcpgw: refusing to send the gateway's token over plain http to %s, which is "
                "not a loopback address: use https://\n",
                d->name);
        return 2;
    }
    return 0;
}

void gw_cli_daemon_free(struct gw_cli_daemon *d)
{
    free(d->url);
    free(d->unix_path);
    free(d->name);
    if (d->token)
        memset(d->token, 0, strlen(d->token));
    free(d->token);
}

struct body {
    char *p;
    size_t n;
};

static size_t on_data(char *p, size_t size, size_t nmemb, void *data)
{
    struct body *b = data;
    size_t n = size * nmemb;
    if (b->n + n > MAX_BODY)
        return 0;
    b->p = gw_xrealloc(b->p, b->n + n + 1);
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

/* Every string in `v` with its control characters (C0, DEL, C1) as '?':
 * what the daemon relays (a server's lastError, an issuer, a Problem)
 * is the servers' text, printed on a terminal that would obey them. */
static void clean_strings(json_t *v)
{
    const char *key;
    json_t *item;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach(v, key, item)
        {
            clean_strings(item);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            clean_strings(item);
        }
    } else if (json_is_string(v)) {
        const unsigned char *u = (const unsigned char *)json_string_value(v);
        size_t n = json_string_length(v), o = 0;
        char *out = gw_xmalloc(n + 1);
        bool changed = false;
        for (i = 0; i < n; i++) {
            bool c1 = u[i] == 0xC2 && i + 1 < n && u[i + 1] >= 0x80 && u[i + 1] <= 0x9F;
            if (u[i] < 0x20 || u[i] == 0x7F || c1) {
                out[o++] = '?';
                i += c1;
                changed = true;
            } else {
                out[o++] = (char)u[i];
            }
        }
        if (changed)
            json_string_setn(v, out, o);
        free(out);
    }
}

int gw_cli_request(const struct gw_cli_daemon *d, const char *method, const char *path,
                   const json_t *body, struct gw_cli_answer *a)
{
    char why[512], errbuf[CURL_ERROR_SIZE] = "";
    memset(a, 0, sizeof(*a));
    if (gw_curl_lib_load(why, sizeof(why)) != 0) {
        fprintf(stderr, "mcpgw: cannot talk to the daemon: %s\n", why);
        return -1;
    }
    CURL *h = curl_easy_init();
    if (!h) {
        fprintf(stderr, "mcpgw: cannot talk to the daemon: libcurl failed to start\n");
        return -1;
    }
    char *url = gw_xasprintf("%s%s", d->url, path);
    char *auth = d->token ? gw_xasprintf("Authorization: Bearer %s", d->token) : NULL;
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct curl_slist *headers = curl_slist_append(NULL, "Accept: application/json");
    if (auth)
        headers = curl_slist_append(headers, auth);
    if (text)
        headers = curl_slist_append(headers, "Content-Type: application/json");
    struct body got = {0};

    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    if (text)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
    if (d->unix_path)
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, d->unix_path);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* The daemon is reached directly: a proxy from the environment would
     * see the token, and the loopback check above would mean nothing. */
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    /* The authorize route may wait on a slow authorization server: the
     * daemon bounds each of its fetches at 10 s. */
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);

    CURLcode rc = curl_easy_perform(h);
    int ret = 0;
    if (rc != CURLE_OK) {
        long os = 0;
        char oswhy[128] = "";
        curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os);
        if (os) {
            /* "connection refused", in the sentence below */
            snprintf(oswhy, sizeof(oswhy), "%s", strerror((int)os));
            oswhy[0] = (char)tolower((unsigned char)oswhy[0]);
        }
        const char *reason = os                               ? oswhy
                             : rc == CURLE_OPERATION_TIMEDOUT ? "no answer in time"
                             : errbuf[0]                      ? errbuf
                                                              : curl_easy_strerror(rc);
        fprintf(stderr, "mcpgw: cannot reach the daemon at %s: %s\n", d->name, reason);
        ret = -1;
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
        if (got.p)
            a->json = json_loadb(got.p, got.n, 0, NULL);
        clean_strings(a->json);
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    free(got.p);
    free(text);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    free(url);
    return ret;
}

void gw_cli_problem(const struct gw_cli_daemon *d, const char *what, const struct gw_cli_answer *a)
{
    json_t *e = json_object_get(a->json, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    if (a->status == 401) {
        fprintf(stderr,
                "mcpgw: %s: the daemon at %s refused the token (401): give it with the "
                "configuration's gateway.auth_token (-c FILE) or $MCPGW_TOKEN\n",
                what, d->name);
    } else if (msg) {
        fprintf(stderr, "mcpgw: %s: %s (%ld %s)\n", what, msg, a->status, code ? code : "error");
    } else {
        fprintf(stderr, "mcpgw: %s: the daemon at %s answered %ld\n", what, d->name, a->status);
    }
}
