/* gateway.tracing (docs/config.md, docs/operations.md "Tracing"): where
 * traces go. A key the file leaves out takes the variable the
 * OpenTelemetry SDKs read (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
 * OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_SERVICE_NAME), so that a unit's drop-in can turn tracing on. */
#include "gw/config_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/util.h"

#define ENV_ENDPOINT        "OTEL_EXPORTER_OTLP_ENDPOINT"
#define ENV_TRACES_ENDPOINT "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
#define ENV_HEADERS         "OTEL_EXPORTER_OTLP_HEADERS"
#define ENV_SERVICE         "OTEL_SERVICE_NAME"

static void free_headers(struct gw_gateway_config *g)
{
    for (size_t i = 0; i < g->ntracing_headers; i++) {
        free(g->tracing_headers[i].name);
        free(g->tracing_headers[i].value);
    }
    free(g->tracing_headers);
    g->tracing_headers = NULL;
    g->ntracing_headers = 0;
}

void gw_cfg_free_tracing(struct gw_gateway_config *g)
{
    free(g->tracing_endpoint);
    free(g->tracing_service_name);
    free_headers(g);
    g->tracing_endpoint = g->tracing_service_name = NULL;
}

/* The base URL with the signal's path appended, as the OTLP exporter
 * specification says of OTEL_EXPORTER_OTLP_ENDPOINT. */
static char *traces_url(const char *base)
{
    size_t n = strlen(base);

    while (n > 0 && base[n - 1] == '/')
        n--;
    return gw_xasprintf("%.*s/v1/traces", (int)n, base);
}

static int set_endpoint(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                        struct gw_gateway_config *g)
{
    const char *s = NULL, *from = key;
    char *url = NULL;
    bool malformed = false;

    if (n != NULL) {
        if (gw_cfg_scalar_str(n, &s) != 0) {
            gw_cfg_err(ld, n, key, "'%s' must be a URL such as http://127.0.0.1:4318", key);
            return UV_EINVAL;
        }
        url = s[0] != '\0' ? traces_url(s) : NULL;
    } else if ((s = getenv(ENV_TRACES_ENDPOINT)) != NULL && s[0] != '\0') {
        url = gw_xstrdup(s);
        from = ENV_TRACES_ENDPOINT;
    } else if ((s = getenv(ENV_ENDPOINT)) != NULL && s[0] != '\0') {
        url = traces_url(s);
        from = ENV_ENDPOINT;
    }
    free(g->tracing_endpoint);
    g->tracing_endpoint = NULL;
    if (url == NULL)
        return 0;
    if (gw_cfg_has_ctl(url, strlen(url)) || gw_cfg_check_url(url, false, &malformed) != 0) {
        /* a variable's mistake leaves tracing off; the file's is the file's error */
        gw_cfg_diag(ld, n != NULL ? GW_SEV_ERROR : GW_SEV_WARNING, n, key,
                    "%s is '%s'; traces go to an https:// URL, or http:// on a loopback address "
                    "(127.0.0.1, ::1, localhost)%s",
                    from, s, malformed ? " (this is not a URL with a host)" : "");
        free(url);
        return n != NULL ? UV_EINVAL : 0;
    }
    g->tracing_endpoint = url;
    return 0;
}

static int unhex(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* OTEL_EXPORTER_OTLP_HEADERS: "name=value,name=value", values
 * percent-encoded (the W3C Baggage form the specification names). */
static void env_headers(struct gw_cfg_ld *ld, const char *key, const char *text,
                        struct gw_gateway_config *g)
{
    char *copy = gw_xstrdup(text), *save = NULL;

    for (char *item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), *name = item, *v, *out;
        if (eq == NULL)
            continue;
        *eq = '\0';
        while (isspace((unsigned char)*name))
            name++;
        for (char *e = eq; e > name && isspace((unsigned char)e[-1]); *--e = '\0')
            ;
        v = out = eq + 1;
        while (isspace((unsigned char)*v))
            v++;
        for (char *p = v; *p != '\0'; p++) {
            if (p[0] == '%' && unhex(p[1]) >= 0 && unhex(p[2]) >= 0) {
                *out++ = (char)(unhex(p[1]) << 4 | unhex(p[2]));
                p += 2;
            } else {
                *out++ = *p;
            }
        }
        *out = '\0';
        while (out > eq + 1 && isspace((unsigned char)out[-1]))
            *--out = '\0';
        if (!gw_cfg_is_token(name) || gw_cfg_has_ctl(eq + 1, strlen(eq + 1))) {
            gw_cfg_warn(ld, NULL, key, "%s holds a header '%s' that is not name=value", ENV_HEADERS,
                        name);
            continue;
        }
        gw_cfg_kv_set(&g->tracing_headers, &g->ntracing_headers, gw_xstrdup(name),
                      gw_xstrdup(eq + 1));
    }
    free(copy);
}

static int set_sample(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                      struct gw_gateway_config *g)
{
    const char *s = "1";
    char *end = NULL;
    double v;

    if (n != NULL && gw_cfg_scalar_str(n, &s) != 0)
        s = "";
    v = strtod(s, &end);
    if (s[0] == '\0' || end == NULL || *end != '\0' || !(v >= 0.0 && v <= 1.0)) {
        gw_cfg_err(ld, n, key, "'%s' must be a number from 0 to 1 (the share of new traces kept)",
                   key);
        return UV_EINVAL;
    }
    g->tracing_sample = v;
    return 0;
}

int gw_cfg_set_tracing(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                       const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    const char *leaf = strrchr(d->key, '.') + 1, *s;

    if (strcmp(leaf, "endpoint") == 0)
        return set_endpoint(ld, n, key, g);
    if (strcmp(leaf, "sample") == 0)
        return set_sample(ld, n, key, g);
    if (strcmp(leaf, "headers") == 0) {
        free_headers(g);
        if (n != NULL)
            gw_cfg_resolve_pairs(ld, n, key, true, &g->tracing_headers, &g->ntracing_headers);
        else if ((s = getenv(ENV_HEADERS)) != NULL)
            env_headers(ld, key, s, g);
        return 0;
    }
    s = n == NULL ? getenv(ENV_SERVICE) : NULL;
    if (n != NULL && (gw_cfg_scalar_str(n, &s) != 0 || s[0] == '\0')) {
        gw_cfg_err(ld, n, key, "'%s' must be a non-empty string", key);
        return UV_EINVAL;
    }
    free(g->tracing_service_name);
    g->tracing_service_name = gw_xstrdup(s != NULL && s[0] != '\0' ? s : d->def);
    return 0;
}
