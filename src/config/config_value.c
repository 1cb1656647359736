/* Values of the config: durations, sizes, booleans, env values with
 * ${VAR}, envFile text, listen addresses, URLs, and the stable hashes.
 * Pure functions of their input (plus getenv), so they are easy to test. */
#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "gw/config_internal.h"

char *gw_cfg_join_key(const char *a, const char *b)
{
    return a[0] ? gw_xasprintf("%s.%s", a, b) : gw_xstrdup(b);
}

char *gw_cfg_abspath(const char *dir, const char *p)
{
    char *joined = p[0] == '/' ? gw_xstrdup(p) : gw_xasprintf("%s/%s", dir, p);
    char *out = gw_xmalloc(strlen(joined) + 2);
    size_t n = 0;
    for (const char *s = joined; *s;) {
        while (*s == '/')
            s++;
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len > 0 && !(len == 1 && s[0] == '.')) {
            out[n++] = '/';
            memcpy(out + n, s, len);
            n += len;
        }
        s += len;
    }
    if (n == 0)
        out[n++] = '/';
    out[n] = '\0';
    free(joined);
    return out;
}

/* Reads digits[.digits] at *pp and returns the value times unit_ms in
 * *out, truncated to whole milliseconds. Overflow is an error. */
static int decimal_times(const char **pp, uint64_t unit, uint64_t *out)
{
    const char *p = *pp;
    uint64_t ip = 0, num = 0, den = 1;
    int nd = 0;
    for (; isdigit((unsigned char)*p); p++, nd++) {
        if (ip > (UINT64_MAX - 9) / 10)
            return UV_EINVAL;
        ip = ip * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        int fd = 0;
        for (p++; isdigit((unsigned char)*p); p++, fd++) {
            if (fd < 9) { /* beyond nanoseconds nothing changes a millisecond */
                num = num * 10 + (uint64_t)(*p - '0');
                den *= 10;
            }
        }
        if (fd == 0)
            return UV_EINVAL;
        nd += fd;
    }
    if (nd == 0 || (ip != 0 && unit > UINT64_MAX / ip))
        return UV_EINVAL;
    uint64_t v = ip * unit, frac = num * unit / den;
    if (v > UINT64_MAX - frac)
        return UV_EINVAL;
    *out = v + frac;
    *pp = p;
    return 0;
}

static int add_ms(uint64_t *sum, uint64_t v)
{
    if (*sum > UINT64_MAX - v)
        return UV_EINVAL;
    *sum += v;
    return 0;
}

/* The end of the number at p (digits and at most one '.'). */
static const char *number_end(const char *p)
{
    while (isdigit((unsigned char)*p) || *p == '.')
        p++;
    return p;
}

/* P[nD][T[nH][nM][nS]], fractions allowed; years, months and weeks are
 * refused because their length in milliseconds is not fixed. */
static int parse_iso_duration(const char *s, uint64_t *out_ms)
{
    static const struct {
        char c;
        uint64_t ms;
        int time; /* after the T */
    } parts[] = {{'D', 86400000, 0}, {'H', 3600000, 1}, {'M', 60000, 1}, {'S', 1000, 1}};
    const char *p = s + 1;
    uint64_t sum = 0, v;
    int in_time = 0, next = 0, nparts = 0;
    while (*p) {
        if (*p == 'T' && !in_time) {
            in_time = 1;
            if (p[1] == '\0')
                return UV_EINVAL;
            p++;
            continue;
        }
        const char *unit = number_end(p);
        int k = next;
        while (k < 4 && !(parts[k].c == *unit && parts[k].time == in_time))
            k++;
        if (k == 4 || decimal_times(&p, parts[k].ms, &v) != 0 || p != unit)
            return UV_EINVAL;
        if (add_ms(&sum, v) != 0)
            return UV_EINVAL;
        next = k + 1;
        nparts++;
        p++;
    }
    if (nparts == 0)
        return UV_EINVAL;
    *out_ms = sum;
    return 0;
}

/* "30", "0.5" (seconds) or number+unit pairs: "250ms", "1m30s". */
static int parse_unit_duration(const char *s, uint64_t *out_ms)
{
    static const struct {
        const char *u;
        uint64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"", 1000}};
    const char *p = s;
    uint64_t sum = 0, v;
    do {
        const char *u = number_end(p);
        size_t k = 0, ulen = 0;
        for (; k < sizeof(units) / sizeof(units[0]); k++) {
            ulen = strlen(units[k].u);
            if (strncmp(u, units[k].u, ulen) == 0 && !isalpha((unsigned char)u[ulen]))
                break;
        }
        if (k == sizeof(units) / sizeof(units[0]) || (ulen == 0 && p != s))
            return UV_EINVAL;
        if (decimal_times(&p, units[k].ms, &v) != 0 || p != u || add_ms(&sum, v) != 0)
            return UV_EINVAL;
        p = u + ulen;
    } while (*p);
    *out_ms = sum;
    return 0;
}

int gw_parse_duration(const char *s, uint64_t *out_ms)
{
    uint64_t v;
    if (s == NULL || *s == '\0')
        return UV_EINVAL;
    int rc = s[0] == 'P' ? parse_iso_duration(s, &v) : parse_unit_duration(s, &v);
    if (rc != 0)
        return rc;
    *out_ms = v;
    return 0;
}

int gw_cfg_parse_ms(const char *s, uint64_t *out_ms)
{
    const char *p = s;
    uint64_t v;
    if (s != NULL && *s && strspn(s, "0123456789") == strlen(s)) {
        if (decimal_times(&p, 1, &v) != 0)
            return UV_EINVAL;
        *out_ms = v;
        return 0;
    }
    return gw_parse_duration(s, out_ms);
}

int gw_parse_size(const char *s, uint64_t *out_bytes)
{
    static const struct {
        const char *u;
        uint64_t mult;
    } units[] = {{"", 1},
                 {"B", 1},
                 {"KiB", 1ull << 10},
                 {"MiB", 1ull << 20},
                 {"GiB", 1ull << 30},
                 {"TiB", 1ull << 40},
                 {"kB", 1000},
                 {"KB", 1000},
                 {"MB", 1000000},
                 {"GB", 1000000000},
                 {"TB", 1000000000000ull}};
    if (s == NULL || !isdigit((unsigned char)*s))
        return UV_EINVAL;
    const char *p = s;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return UV_EINVAL;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
        if (strcmp(p, units[k].u) != 0)
            continue;
        if (v != 0 && units[k].mult > UINT64_MAX / v)
            return UV_EINVAL;
        *out_bytes = v * units[k].mult;
        return 0;
    }
    return UV_EINVAL;
}

int gw_cfg_parse_bool(const char *s, bool *out)
{
    static const char *const t[] = {"true", "True", "TRUE"}, *const f[] = {"false", "False",
                                                                           "FALSE"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, t[i]) == 0 || strcmp(s, f[i]) == 0) {
            *out = strcmp(s, t[i]) == 0;
            return 0;
        }
    }
    return UV_EINVAL;
}

int gw_cfg_parse_int(const char *s, int64_t *out)
{
    const char *p = s;
    int neg = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (!isdigit((unsigned char)*p))
        return UV_EINVAL;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > (uint64_t)INT64_MAX)
            return UV_EINVAL;
    }
    if (*p != '\0')
        return UV_EINVAL;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* Text a plain YAML scalar would read as a number: [+-]digits[.digits]. */
static bool number_text(const char *s)
{
    size_t n;

    s += *s == '+' || *s == '-';
    n = strspn(s, "0123456789");
    if (n > 0 && s[n] == '.')
        n += 1 + strspn(s + n + 1, "0123456789");
    return n > 0 && s[n] == '\0';
}

int gw_cfg_check_unquoted(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key)
{
    if (n == NULL || n->kind != GW_YAML_SCALAR || strlen(n->str) != n->len ||
        !number_text(n->str) || (n->plain && (n->tag == NULL || strstr(n->tag, ":str") == NULL)))
        return 0;
    gw_cfg_err(ld, n, key,
               "'%s' is the string \"%s\": a number in quotes is text in YAML; write it "
               "without quotes (%s)",
               key, n->str, n->str);
    return UV_EINVAL;
}

int gw_cfg_scalar_str(const struct gw_yaml_node *n, const char **out)
{
    if (n == NULL || n->kind != GW_YAML_SCALAR || strlen(n->str) != n->len)
        return UV_EINVAL;
    *out = n->str;
    return 0;
}

struct sbuf {
    char *p;
    size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = gw_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* Length of a NAME at s ([A-Za-z_][A-Za-z0-9_]*), 0 if none. */
static size_t name_len(const char *s)
{
    size_t n = 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    return n;
}

/* One left-to-right pass: the text a variable brings in is never scanned
 * again, so "${${X}}" becomes "${" + value of X + "}" and nothing more, and
 * a value holding "${Y}" stays literal. "$${" writes a literal "${"; any
 * other '$' is kept as written. */
int gw_cfg_subst_ex(const char *s, char **out, char **shown, struct gw_cfg_strv *values,
                    char **missing)
{
    struct sbuf b = {0}, sh = {0};
    sb_add(&b, "", 0);
    sb_add(&sh, "", 0);
    for (const char *p = s; *p;) {
        size_t n = p[0] == '$' && p[1] == '{' ? name_len(p + 2) : 0;
        if (p[0] == '$' && p[1] == '$' && p[2] == '{') {
            sb_add(&b, "${", 2);
            sb_add(&sh, "${", 2);
            p += 3;
        } else if (n > 0 && p[2 + n] == '}') {
            char *name = gw_xstrndup(p + 2, n);
            const char *v = getenv(name);
            if (v == NULL) {
                free(b.p);
                free(sh.p);
                *missing = name;
                return UV_ENOENT;
            }
            free(name);
            sb_add(&b, v, strlen(v));
            sb_add(&sh, "***", 3);
            if (values != NULL) {
                values->v = gw_xrealloc(values->v, (values->n + 1) * sizeof(*values->v));
                values->v[values->n++] = gw_xstrdup(v);
            }
            p += 3 + n;
        } else {
            sb_add(&b, p, 1);
            sb_add(&sh, p, 1);
            p++;
        }
    }
    *out = b.p;
    if (shown != NULL)
        *shown = sh.p;
    else
        free(sh.p);
    return 0;
}

int gw_cfg_subst(const char *s, char **out, char **missing)
{
    return gw_cfg_subst_ex(s, out, NULL, NULL, missing);
}

bool gw_cfg_has_ctl(const char *s, size_t len)
{
    return strlen(s) != len || strpbrk(s, "\r\n") != NULL;
}

static int env_ref(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key, char **out)
{
    const char *name;
    const char *k;
    if (gw_yaml_map_len(n) != 1 || gw_cfg_scalar_str(gw_yaml_map_key(n, 0), &k) != 0 ||
        strcmp(k, "env") != 0 || gw_cfg_scalar_str(gw_yaml_map_value(n, 0), &name) != 0 ||
        name[0] == '\0') {
        gw_cfg_err(ld, n, key,
                   "'%s' must be a string or a map with the one key 'env' naming a variable "
                   "of the daemon's environment, e.g. {env: API_TOKEN}",
                   key);
        return UV_EINVAL;
    }
    const char *v = getenv(name);
    if (v == NULL) {
        gw_cfg_err(ld, gw_yaml_map_value(n, 0), key,
                   "ConfigError: Environment variable '%s' not found", name);
        return UV_EINVAL;
    }
    *out = gw_xstrdup(v);
    return 0;
}

int gw_cfg_env_value(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key,
                     char **out)
{
    char *v = NULL, *missing = NULL;
    if (n->kind == GW_YAML_MAP) {
        if (env_ref(ld, n, key, &v) != 0)
            return UV_EINVAL;
    } else if (n->kind != GW_YAML_SCALAR || gw_yaml_is_null(n)) {
        gw_cfg_err(ld, n, key, "'%s' needs a value: a string or {env: NAME}", key);
        return UV_EINVAL;
    } else if (strlen(n->str) != n->len) {
        gw_cfg_err(ld, n, key, "'%s' contains a NUL character", key);
        return UV_EINVAL;
    } else if (gw_cfg_subst(n->str, &v, &missing) != 0) {
        gw_cfg_err(ld, n, key, "ConfigError: Environment variable '%s' not found", missing);
        free(missing);
        return UV_EINVAL;
    }
    if (gw_cfg_has_ctl(v, strlen(v))) {
        gw_cfg_err(ld, n, key,
                   "the value of '%s' contains a CR or LF character; such values could "
                   "inject HTTP headers, so they are refused",
                   key);
        free(v);
        return UV_EINVAL;
    }
    *out = v;
    return 0;
}

static void env_file_err(struct gw_cfg_ld *ld, const char *file, int line, int col,
                         const char *what)
{
    char *key = ld->srv ? gw_xasprintf("servers.%s.envFile", ld->srv->id) : gw_xstrdup("envFile");
    char *msg = gw_xasprintf("envFile line %d: %s", line, what);
    gw_cfg_diag_at(ld, GW_SEV_ERROR, GW_SCOPE_SERVER, ld->srv ? ld->srv->id : NULL, file, line, col,
                   key, msg);
    free(key);
    free(msg);
}

/* A quoted value starting at *p (the quote). Double quotes know the
 * escapes \n \t \r \" \\ \$; single quotes none. Returns NULL when the
 * quote is not closed on the line. */
static char *quoted(const char *p, const char **end)
{
    char q = *p++;
    struct sbuf b = {0};
    sb_add(&b, "", 0);
    for (; *p && *p != q; p++) {
        char c = *p;
        if (q == '"' && c == '\\' && p[1]) {
            c = *++p;
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
        }
        sb_add(&b, &c, 1);
    }
    if (*p != q) {
        free(b.p);
        return NULL;
    }
    *end = p + 1;
    return b.p;
}

/* The value part of one line: quoted, or bare up to a " #" comment with
 * surrounding blanks trimmed. */
static int env_file_value(const char *p, char **out)
{
    p += strspn(p, " \t");
    if (*p == '"' || *p == '\'') {
        const char *end;
        char *v = quoted(p, &end);
        if (v == NULL)
            return UV_EINVAL;
        end += strspn(end, " \t");
        if (*end != '\0' && *end != '#') {
            free(v);
            return UV_EINVAL;
        }
        *out = v;
        return 0;
    }
    size_t n = 0;
    while (p[n] && !(p[n] == '#' && (n == 0 || p[n - 1] == ' ' || p[n - 1] == '\t')))
        n++;
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    *out = gw_xstrndup(p, n);
    return 0;
}

void gw_cfg_kv_set(struct gw_kv **kv, size_t *nkv, char *name, char *value)
{
    for (size_t i = 0; i < *nkv; i++) {
        if (strcmp((*kv)[i].name, name) == 0) {
            free((*kv)[i].value);
            free(name);
            (*kv)[i].value = value;
            return;
        }
    }
    *kv = gw_xrealloc(*kv, (*nkv + 1) * sizeof(**kv));
    (*kv)[*nkv].name = name;
    (*kv)[*nkv].value = value;
    (*nkv)++;
}

static int env_file_line(struct gw_cfg_ld *ld, const char *file, int lineno, char *line,
                         struct gw_kv **kv, size_t *nkv)
{
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    char *p = line + strspn(line, " \t");
    if (*p == '\0' || *p == '#')
        return 0;
    if (strncmp(p, "export", 6) == 0 && (p[6] == ' ' || p[6] == '\t'))
        p += 6 + strspn(p + 6, " \t");
    size_t n = name_len(p);
    char *eq = p + n + strspn(p + n, " \t");
    if (n == 0 || *eq != '=') {
        env_file_err(ld, file, lineno, (int)(p - line) + 1,
                     "expected NAME=VALUE (NAME of letters, digits and '_')");
        return UV_EINVAL;
    }
    char *value;
    if (env_file_value(eq + 1, &value) != 0) {
        env_file_err(ld, file, lineno, (int)(eq - line) + 2,
                     "a quoted value is not closed, or text follows its closing quote");
        return UV_EINVAL;
    }
    if (gw_cfg_has_ctl(value, strlen(value))) {
        free(value);
        env_file_err(ld, file, lineno, (int)(eq - line) + 2,
                     "the value contains a CR or LF character");
        return UV_EINVAL;
    }
    gw_cfg_kv_set(kv, nkv, gw_xstrndup(p, n), value);
    return 0;
}

int gw_cfg_parse_env_file(struct gw_cfg_ld *ld, const char *file, const char *text,
                          struct gw_kv **kv, size_t *nkv)
{
    int rc = 0, lineno = 0;
    char *copy = gw_xstrdup(text), *save = copy;
    for (char *line = copy; line != NULL;) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        if (env_file_line(ld, file, ++lineno, line, kv, nkv) != 0)
            rc = UV_EINVAL;
        line = nl ? nl + 1 : NULL;
    }
    free(save);
    return rc;
}

bool gw_cfg_is_token(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++) {
        if (!isalnum((unsigned char)*s) && strchr("!#$%&'*+-.^_`|~", *s) == NULL)
            return false;
    }
    return true;
}

static int check_port(const char *p)
{
    int64_t v;
    if (*p == '\0' || strspn(p, "0123456789") != strlen(p) || gw_cfg_parse_int(p, &v) != 0 ||
        v < 1 || v > 65535)
        return UV_EINVAL;
    return 0;
}

int gw_cfg_check_listen(const char *s, const char **why)
{
    unsigned char addr[16];
    if (strncmp(s, "unix:", 5) == 0) {
        *why = "a unix socket path must be absolute and shorter than 108 bytes (unix:/run/x.sock)";
        return s[5] == '/' && strlen(s + 5) < 108 ? 0 : UV_EINVAL;
    }
    *why = "expected host:port, [v6-address]:port or unix:/absolute/path, with a port 1-65535";
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':' || close - s - 1 >= 64)
            return UV_EINVAL;
        char host[64];
        memcpy(host, s + 1, (size_t)(close - s - 1));
        host[close - s - 1] = '\0';
        if (inet_pton(AF_INET6, host, addr) != 1)
            return UV_EINVAL;
        return check_port(close + 2);
    }
    const char *colon = strrchr(s, ':');
    if (colon == NULL || colon == s || memchr(s, ':', (size_t)(colon - s)) != NULL)
        return UV_EINVAL;
    for (const char *p = s; p < colon; p++) {
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-')
            return UV_EINVAL;
    }
    return check_port(colon + 1);
}

static bool is_loopback_host(const char *h, size_t n)
{
    char host[256];
    unsigned char a[16];
    if (n == 0 || n >= sizeof(host))
        return false;
    memcpy(host, h, n);
    host[n] = '\0';
    if (strcasecmp(host, "localhost") == 0)
        return true;
    if (inet_pton(AF_INET, host, a) == 1)
        return a[0] == 127;
    if (host[0] == '[' && host[n - 1] == ']') {
        host[n - 1] = '\0';
        static const unsigned char lo6[16] = {[15] = 1};
        return inet_pton(AF_INET6, host + 1, a) == 1 && memcmp(a, lo6, 16) == 0;
    }
    return false;
}

/* The host part of the authority of url (after "scheme://"), bracketed for
 * IPv6, without userinfo and port. */
static int url_host(const char *auth, const char **host, size_t *hlen)
{
    size_t alen = strcspn(auth, "/?#");
    const char *at = memrchr(auth, '@', alen);
    const char *h = at ? at + 1 : auth;
    size_t n = alen - (size_t)(h - auth);
    if (n > 0 && h[0] == '[') {
        const char *close = memchr(h, ']', n);
        if (close == NULL)
            return UV_EINVAL;
        n = (size_t)(close - h) + 1;
    } else {
        const char *colon = memchr(h, ':', n);
        if (colon)
            n = (size_t)(colon - h);
    }
    if (n == 0)
        return UV_EINVAL;
    *host = h;
    *hlen = n;
    return 0;
}

int gw_cfg_check_url(const char *url, bool ws, bool *malformed)
{
    const char *secure = ws ? "wss://" : "https://", *plain = ws ? "ws://" : "http://";
    const char *host;
    size_t hlen;
    *malformed = false;
    for (const char *p = url; *p; p++) {
        if ((unsigned char)*p <= ' ' || *p == 0x7f) {
            *malformed = true;
            return UV_EINVAL;
        }
    }
    bool tls = strncasecmp(url, secure, strlen(secure)) == 0;
    bool clear = strncasecmp(url, plain, strlen(plain)) == 0;
    if (!tls && !clear)
        return UV_EINVAL;
    if (url_host(url + strlen(tls ? secure : plain), &host, &hlen) != 0) {
        *malformed = true;
        return UV_EINVAL;
    }
    return tls || is_loopback_host(host, hlen) ? 0 : UV_EINVAL;
}

char *gw_cfg_redact_url(const char *url)
{
    const char *sep = strstr(url, "://");
    if (sep == NULL)
        return gw_xstrdup("***");
    const char *auth = sep + 3;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memrchr(auth, '@', alen);
    const char *rest = auth + alen;
    size_t plen = strcspn(rest, "?#");
    return gw_xasprintf("%.*s%s%.*s%.*s%s", (int)(auth - url), url, at ? "***@" : "",
                        (int)(alen - (at ? (size_t)(at + 1 - auth) : 0)), at ? at + 1 : auth,
                        (int)plen, rest, rest[plen] == '?' ? "?***" : "");
}

int gw_cfg_edit_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[65];
    if (la > 64 || lb > 64)
        return cap + 1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > cap ? cap + 1 : row[lb];
}
