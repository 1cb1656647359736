/* The sandbox keys (docs/config.md, "Sandbox"): gateway.sandbox.* holds the
 * defaults, servers.<id>.sandbox is true, false or a map over them. The
 * setters find the sandbox they fill at the row's offset, so one setter
 * serves both tables. A server's effective sandbox is the gateway's copied,
 * then its own keys on top. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>

#include "gw/config_internal.h"
#include "gw/util.h"

static struct gw_sandbox_config *sandbox_at(const struct gw_cfg_directive *d, void *base)
{
    return (struct gw_sandbox_config *)((char *)base + d->off);
}

static char **strv_dup(char *const *v, size_t n)
{
    if (n == 0)
        return NULL;
    char **out = gw_xmalloc(n * sizeof(*out));
    for (size_t i = 0; i < n; i++)
        out[i] = gw_xstrdup(v[i]);
    return out;
}

void gw_cfg_sandbox_free(struct gw_sandbox_config *sb)
{
    gw_cfg_free_strv(sb->allow, sb->nallow);
    gw_cfg_free_strv(sb->read, sb->nread);
    gw_cfg_free_strv(sb->write, sb->nwrite);
    memset(sb, 0, sizeof(*sb));
}

static void sandbox_copy(struct gw_sandbox_config *dst, const struct gw_sandbox_config *src)
{
    gw_cfg_sandbox_free(dst);
    *dst = *src;
    dst->allow = strv_dup(src->allow, src->nallow);
    dst->read = strv_dup(src->read, src->nread);
    dst->write = strv_dup(src->write, src->nwrite);
}

int gw_cfg_set_sandbox_default(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                               const struct gw_yaml_node *n, const char *key, void *base)
{
    const char *v;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_scalar_str(n, &v) == 0 && (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
        sandbox_at(d, base)->enabled = v[1] == 'n';
        return 0;
    }
    gw_cfg_err(ld, n, key, "'%s' must be on or off (every stdio server sandboxed or not)", key);
    return UV_EINVAL;
}

/* A destination of network: [list]: NAME, *.NAME, IPv4 or [IPv6], each
 * with an optional :PORT. What a name resolves to is checked when the
 * proxy connects, not here. */
static bool destination_ok(const char *e)
{
    if (strcmp(e, "registry") == 0)
        return true;
    const char *host = strncmp(e, "*.", 2) == 0 ? e + 2 : e;
    size_t hl;
    const char *port;
    if (host[0] == '[') {
        const char *close = strchr(host, ']');
        if (!close)
            return false;
        hl = (size_t)(close - host) + 1;
        port = close[1] == ':' ? close + 2 : close[1] == '\0' ? NULL : "";
    } else {
        hl = strcspn(host, ":");
        port = host[hl] == ':' ? host + hl + 1 : NULL;
        for (size_t i = 0; i < hl; i++) {
            char c = host[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '.'))
                return false;
        }
    }
    if (hl == 0 || hl > 253)
        return false;
    if (port == NULL)
        return true;
    char *end;
    errno = 0;
    unsigned long p = strtoul(port, &end, 10);
    return port[0] >= '0' && port[0] <= '9' && *end == '\0' && errno == 0 && p >= 1 && p <= 65535;
}

int gw_cfg_set_sandbox_network(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                               const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_sandbox_config *sb = sandbox_at(d, base);
    const char *v;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (n->kind == GW_YAML_SCALAR && gw_cfg_scalar_str(n, &v) == 0 &&
        (strcmp(v, "none") == 0 || strcmp(v, "host") == 0)) {
        gw_cfg_free_strv(sb->allow, sb->nallow);
        sb->allow = NULL;
        sb->nallow = 0;
        sb->network = v[0] == 'n' ? GW_SANDBOX_NET_NONE : GW_SANDBOX_NET_HOST;
        return 0;
    }
    char **list;
    size_t nlist;
    if (n->kind != GW_YAML_SEQ || gw_cfg_str_list(ld, n, key, &list, &nlist) != 0) {
        gw_cfg_err(ld, n, key,
                   "'%s' must be none, host or a list of destinations (\"api.github.com\", "
                   "\"*.linear.app\", \"example.org:8443\", \"10.1.2.3:5432\", registry)",
                   key);
        return UV_EINVAL;
    }
    for (size_t i = 0; i < nlist; i++) {
        if (!destination_ok(list[i])) {
            gw_cfg_err(ld, n->kids[i], key,
                       "'%s': '%s' is not a destination: a host name, *.domain, an IPv4 "
                       "address or [IPv6], with an optional :port (1-65535), or registry",
                       key, list[i]);
            gw_cfg_free_strv(list, nlist);
            return UV_EINVAL;
        }
    }
    gw_cfg_free_strv(sb->allow, sb->nallow);
    sb->allow = list;
    sb->nallow = nlist;
    sb->network = GW_SANDBOX_NET_LIST;
    return 0;
}

/* read / write: paths with ${VAR}, relative to the config's directory,
 * each of which must exist now. */
static int set_paths(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                     char ***out, size_t *nout)
{
    char **list;
    size_t nlist;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_str_list(ld, n, key, &list, &nlist) != 0)
        return UV_EINVAL;
    char **abs = nlist ? gw_xcalloc(nlist, sizeof(*abs)) : NULL;
    int rc = 0;
    for (size_t i = 0; i < nlist && rc == 0; i++) {
        char *v = NULL, *missing = NULL;
        struct stat st;
        if (gw_cfg_subst(list[i], &v, &missing) != 0) {
            gw_cfg_err(ld, n->kids[i], key, "ConfigError: Environment variable '%s' not found",
                       missing);
            free(missing);
            rc = UV_EINVAL;
            break;
        }
        abs[i] = gw_cfg_abspath(ld->c->dir, v);
        free(v);
        if (stat(abs[i], &st) != 0) {
            gw_cfg_err(ld, n->kids[i], key, "'%s': path '%s' does not exist (%s)", key, abs[i],
                       strerror(errno));
            rc = UV_EINVAL;
        }
    }
    gw_cfg_free_strv(list, nlist);
    if (rc != 0) {
        for (size_t i = 0; i < nlist; i++)
            free(abs[i]);
        free(abs);
        return rc;
    }
    gw_cfg_free_strv(*out, *nout);
    *out = abs;
    *nout = nlist;
    return 0;
}

int gw_cfg_set_sandbox_read(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_sandbox_config *sb = sandbox_at(d, base);
    return set_paths(ld, n, key, &sb->read, &sb->nread);
}

int gw_cfg_set_sandbox_write(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                             const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_sandbox_config *sb = sandbox_at(d, base);
    return set_paths(ld, n, key, &sb->write, &sb->nwrite);
}

int gw_cfg_set_sandbox_home(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    const char *v;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_scalar_str(n, &v) == 0 && (strcmp(v, "server") == 0 || strcmp(v, "dialog") == 0)) {
        sandbox_at(d, base)->home = v[0] == 's' ? GW_SANDBOX_HOME_SERVER : GW_SANDBOX_HOME_DIALOG;
        return 0;
    }
    gw_cfg_err(ld, n, key,
               "'%s' must be server (one home kept per server) or dialog (a fresh home per "
               "instance, removed with it)",
               key);
    return UV_EINVAL;
}

/* cpu: cores as a decimal ("0.5", "2"), kept in thousandths. */
int gw_cfg_set_sandbox_cpu(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                           const struct gw_yaml_node *n, const char *key, void *base)
{
    const char *v;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    uint64_t whole = 0, frac = 0, scale = 1000;
    const char *p = NULL;
    if (gw_cfg_scalar_str(n, &v) == 0 && v[0] >= '0' && v[0] <= '9') {
        for (p = v; *p >= '0' && *p <= '9' && whole < 100000; p++)
            whole = whole * 10 + (uint64_t)(*p - '0');
        if (*p == '.' && p[1] >= '0' && p[1] <= '9')
            for (p++; *p >= '0' && *p <= '9'; p++)
                if (scale > 1)
                    frac += (uint64_t)(*p - '0') * (scale /= 10);
    }
    uint64_t milli = whole * 1000 + frac;
    if (p == NULL || *p != '\0' || whole >= 100000 || milli < 10) {
        gw_cfg_err(ld, n, key, "'%s' must be a number of cores, at least 0.01 (0.5, 1, 2.5)", key);
        return UV_EINVAL;
    }
    sandbox_at(d, base)->cpu_milli = milli;
    return 0;
}

/* servers.<id>.sandbox: absent takes the gateway's defaults (on only with
 * gateway.sandbox.default: on), true or false turns it on or off with
 * them, a map turns it on with its keys over them. */
int gw_cfg_set_server_sandbox(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                              const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    bool on;
    const char *v;
    sandbox_copy(&s->sandbox, &ld->c->gateway.sandbox);
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (n->kind == GW_YAML_MAP) {
        s->sandbox.enabled = true;
        gw_cfg_walk(ld, "servers.<id>.sandbox", key, n, s);
        return 0;
    }
    if (gw_cfg_scalar_str(n, &v) == 0 && gw_cfg_parse_bool(v, &on) == 0) {
        s->sandbox.enabled = on;
        return 0;
    }
    gw_cfg_err(ld, n, key, "'%s' must be true, false or a map of sandbox settings", key);
    return UV_EINVAL;
}

void gw_cfg_finish_sandbox(struct gw_cfg_ld *ld, struct gw_server_config *s)
{
    if (s->transport != GW_TRANSPORT_STDIO)
        s->sandbox.enabled = false;
    (void)ld;
}

json_t *gw_sandbox_config_json(const struct gw_sandbox_config *sb)
{
    static const char *const nets[] = {"none", "host"};
    json_t *net;
    if (sb->network == GW_SANDBOX_NET_LIST) {
        net = json_array();
        for (size_t i = 0; i < sb->nallow; i++)
            json_array_append_new(net, json_string(sb->allow[i]));
    } else {
        net = json_string(nets[sb->network]);
    }
    json_t *rd = json_array(), *wr = json_array(), *lim = json_object();
    for (size_t i = 0; i < sb->nread; i++)
        json_array_append_new(rd, json_string(sb->read[i]));
    for (size_t i = 0; i < sb->nwrite; i++)
        json_array_append_new(wr, json_string(sb->write[i]));
    if (sb->memory)
        json_object_set_new(lim, "memory", json_integer((json_int_t)sb->memory));
    if (sb->pids)
        json_object_set_new(lim, "pids", json_integer((json_int_t)sb->pids));
    if (sb->cpu_milli)
        json_object_set_new(lim, "cpu", json_real((double)sb->cpu_milli / 1000.0));
    json_object_set_new(lim, "tmp", json_integer((json_int_t)sb->tmp));
    return json_pack("{s:b, s:o, s:o, s:o, s:s, s:o}", "enabled", sb->enabled, "network", net,
                     "read", rd, "write", wr, "home",
                     sb->home == GW_SANDBOX_HOME_SERVER ? "server" : "dialog", "limits", lim);
}
