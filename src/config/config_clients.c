/* The `clients:` map: who may call the gateway, by the SHA-256 of a token,
 * and what each may use. The token itself is hashed as it is read and
 * wiped: the snapshot never holds it, so nothing can log it. With
 * gateway.auth_token the snapshot gets one more client, `default`, an
 * admin that may use everything. */
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/config_internal.h"
#include "gw/sha256.h"

#define CL_OFF(field) offsetof(struct gw_client_config, field)

static bool name_valid(const char *s)
{
    size_t n = strlen(s);

    return n >= 1 && n <= GW_CLIENT_NAME_MAX &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

static void digest_of(const char *token, unsigned char out[GW_SHA256_LEN])
{
    struct gw_sha256 h;

    gw_sha256_init(&h);
    gw_sha256_update(&h, token, strlen(token));
    gw_sha256_final(&h, out);
    memset(&h, 0, sizeof h);
}

static int set_token(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                     const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_client_config *cl = base;
    char *v;

    if (n == NULL)
        return 0;
    if (cl->has_token) {
        gw_cfg_err(ld, n, key, "'%s': give token or token_sha256, not both", key);
        return UV_EINVAL;
    }
    if (gw_cfg_secret_value(ld, n, key, &v) != 0)
        return UV_EINVAL;
    gw_cfg_note_literal_secret(ld, n, key);
    if (strlen(v) < 16)
        gw_cfg_err(ld, n, key,
                   "'%s' is shorter than 16 characters; `mcpgw client token %s` makes one", key,
                   cl->name);
    digest_of(v, cl->token_sha256);
    memset(v, 0, strlen(v));
    free(v);
    cl->has_token = true;
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int set_token_sha256(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                            const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_client_config *cl = base;
    const char *s = "";

    if (n == NULL)
        return 0;
    if (cl->has_token) {
        gw_cfg_err(ld, n, key, "'%s': give token or token_sha256, not both", key);
        return UV_EINVAL;
    }
    if (gw_cfg_scalar_str(n, &s) != 0 || strlen(s) != 2 * GW_SHA256_LEN)
        s = "";
    for (size_t i = 0; s[0] != '\0' && i < GW_SHA256_LEN; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            s = "";
        else
            cl->token_sha256[i] = (unsigned char)(hi * 16 + lo);
    }
    if (s[0] == '\0') {
        gw_cfg_err(ld, n, key, "'%s' must be 64 lowercase hex digits (sha256sum of the token)",
                   key);
        return UV_EINVAL;
    }
    cl->has_token = true;
    return 0;
}

static int mark_servers(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                        const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_client_config *cl = base;

    cl->has_servers = true;
    for (size_t i = 0; i < cl->nservers; i++) {
        if (gw_config_server(ld->c, cl->servers[i]) == NULL)
            gw_cfg_warn(ld, n, key, "'%s' names '%s', which is no configured server", key,
                        cl->servers[i]);
    }
    return 0;
}

static int mark_tools(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                      const struct gw_yaml_node *n, const char *key, void *base)
{
    ((struct gw_client_config *)base)->has_tools = true;
    return 0;
}

/* "N/s" or "N/min", N from 1 to 1,000,000. */
static int set_rate(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                    const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_client_config *cl = base;
    const char *s = "";
    char *end = NULL;
    unsigned long v;

    if (n == NULL)
        return 0;
    if (gw_cfg_scalar_str(n, &s) != 0)
        s = "";
    v = strtoul(s, &end, 10);
    if (s[0] >= '1' && s[0] <= '9' && v <= 1000000 && end != NULL &&
        (strcmp(end, "/s") == 0 || strcmp(end, "/min") == 0)) {
        cl->rate_n = (unsigned)v;
        cl->rate_window_ms = strcmp(end, "/s") == 0 ? 1000 : 60000;
        return 0;
    }
    gw_cfg_err(ld, n, key, "'%s' must be N/s or N/min (N calls, 1 to 1000000), e.g. 120/min", key);
    return UV_EINVAL;
}

const struct gw_cfg_directive gw_cfg_client_directives[] = {
    {"clients.<id>.token", GW_CFG_CUSTOM, 0, 0, 0, NULL, set_token, "design",
     "secret (env value or {file: PATH})"},
    {"clients.<id>.token_sha256", GW_CFG_CUSTOM, 0, 0, 0, NULL, set_token_sha256, "design",
     "64 hex digits"},
    {"clients.<id>.servers", GW_CFG_STRLIST, CL_OFF(servers), CL_OFF(nservers), 0, NULL,
     mark_servers, "design", NULL},
    {"clients.<id>.tools", GW_CFG_STRLIST, CL_OFF(tools), CL_OFF(ntools), 0, NULL, mark_tools,
     "design", NULL},
    {"clients.<id>.deny", GW_CFG_STRLIST, CL_OFF(deny), CL_OFF(ndeny), 0, "[]", NULL, "design",
     NULL},
    {"clients.<id>.admin", GW_CFG_BOOL, CL_OFF(admin), 0, 0, "false", NULL, "design", NULL},
    {"clients.<id>.rate", GW_CFG_CUSTOM, 0, 0, 0, NULL, set_rate, "design", "N/s | N/min"},
    {"clients.<id>.max_concurrent", GW_CFG_INT, CL_OFF(max_concurrent), 0, 1, NULL, NULL, "design",
     NULL},
};

const size_t gw_cfg_nclient_directives =
    sizeof(gw_cfg_client_directives) / sizeof(gw_cfg_client_directives[0]);

static struct gw_client_config *add_client(struct gw_config *c, const char *name)
{
    struct gw_client_config *cl;

    c->clients = gw_xrealloc(c->clients, (c->nclients + 1) * sizeof(*c->clients));
    cl = &c->clients[c->nclients++];
    memset(cl, 0, sizeof *cl);
    cl->name = gw_xstrdup(name);
    cl->name_hash = gw_hash_str(name);
    return cl;
}

static void load_client(struct gw_cfg_ld *ld, const struct gw_yaml_node *k,
                        const struct gw_yaml_node *body)
{
    char *shown = gw_xasprintf("clients.%s", k->str);
    struct gw_client_config *cl;

    if (!name_valid(k->str) || strcmp(k->str, GW_CLIENT_DEFAULT) == 0) {
        gw_cfg_err(ld, k, shown,
                   strcmp(k->str, GW_CLIENT_DEFAULT) == 0
                       ? "the client name 'default' is gateway.auth_token's; choose another"
                       : "a client name is 1 to 64 of A-Z, a-z, 0-9, '_' and '-'");
        free(shown);
        return;
    }
    cl = add_client(ld->c, k->str);
    gw_cfg_check_dups(ld, body, shown, 2);
    if (body->kind != GW_YAML_MAP) {
        gw_cfg_err(ld, gw_yaml_is_null(body) ? k : body, shown,
                   "client '%s' must be a map of its settings (at least a token)", k->str);
    } else {
        gw_cfg_apply_defaults(ld, "clients.<id>", cl);
        gw_cfg_walk(ld, "clients.<id>", shown, body, cl);
    }
    if (!cl->has_token && body->kind == GW_YAML_MAP)
        gw_cfg_err(ld, k, shown, "client '%s' needs a token or a token_sha256", k->str);
    free(shown);
}

void gw_cfg_load_clients(struct gw_cfg_ld *ld, const struct gw_yaml_node *m)
{
    if (gw_yaml_is_null(m))
        return;
    if (m->kind != GW_YAML_MAP) {
        gw_cfg_err(ld, m, "clients", "'clients' must be a map of client names to their settings");
        return;
    }
    for (size_t i = 0; i < gw_yaml_map_len(m); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(m, i);
        size_t j = gw_cfg_first_same_key(m, i);
        if (k->kind != GW_YAML_SCALAR) {
            gw_cfg_err(ld, k, "clients", "a client name must be a string");
        } else if (j != i) {
            char *key = gw_xasprintf("clients.%s", k->str);
            gw_cfg_err(ld, k, key, "duplicate client '%s' (first defined at line %d)", k->str,
                       gw_yaml_map_key(m, j)->line);
            free(key);
        } else {
            load_client(ld, k, gw_yaml_map_value(m, i));
        }
    }
}

static void hash_strv(struct gw_sha256 *h, char *const *v, size_t n, bool has)
{
    unsigned char tag = has ? 1 : 0;

    gw_sha256_update(h, &tag, 1);
    for (size_t i = 0; i < n; i++)
        gw_sha256_update(h, v[i], strlen(v[i]) + 1);
    gw_sha256_update(h, "", 1);
}

/* Everything that decides a call, in order: a reload that changes a right
 * changes the digest, and one that changes nothing keeps it. */
static void hash_policy(struct gw_config *c)
{
    struct gw_sha256 h;

    gw_sha256_init(&h);
    for (size_t i = 0; i < c->nclients; i++) {
        const struct gw_client_config *cl = &c->clients[i];
        gw_sha256_update(&h, cl->name, strlen(cl->name) + 1);
        gw_sha256_update(&h, cl->token_sha256, sizeof cl->token_sha256);
        hash_strv(&h, cl->servers, cl->nservers, cl->has_servers);
        hash_strv(&h, cl->tools, cl->ntools, cl->has_tools);
        hash_strv(&h, cl->deny, cl->ndeny, true);
        gw_sha256_update(&h, cl->admin ? "A" : "-", 1);
        gw_sha256_update(&h, &cl->rate_n, sizeof cl->rate_n);
        gw_sha256_update(&h, &cl->rate_window_ms, sizeof cl->rate_window_ms);
        gw_sha256_update(&h, &cl->max_concurrent, sizeof cl->max_concurrent);
    }
    gw_sha256_final(&h, c->clients_sha256);
}

static uint64_t digest_key(const unsigned char digest[GW_SHA256_LEN])
{
    uint64_t k;

    memcpy(&k, digest, sizeof k);
    return k;
}

static void index_put(uint32_t *slots, size_t mask, uint64_t h, size_t i)
{
    while (slots[h & mask] != 0)
        h++;
    slots[h & mask] = (uint32_t)i + 1;
}

static void index_clients(struct gw_config *c)
{
    size_t n = 16;

    while (n < 2 * c->nclients)
        n *= 2;
    c->client_slots = n;
    c->client_by_name = gw_xcalloc(n, sizeof *c->client_by_name);
    c->client_by_token = gw_xcalloc(n, sizeof *c->client_by_token);
    for (size_t i = 0; i < c->nclients; i++) {
        index_put(c->client_by_name, n - 1, c->clients[i].name_hash, i);
        if (c->clients[i].has_token)
            index_put(c->client_by_token, n - 1, digest_key(c->clients[i].token_sha256), i);
        c->client_limits |= c->clients[i].rate_n > 0 || c->clients[i].max_concurrent > 0;
    }
}

void gw_cfg_finish_clients(struct gw_cfg_ld *ld, const struct gw_yaml_node *at)
{
    struct gw_config *c = ld->c;
    const char *token = c->gateway.auth_token;

    if (token != NULL) {
        struct gw_client_config *cl = add_client(c, GW_CLIENT_DEFAULT);
        digest_of(token, cl->token_sha256);
        cl->has_token = cl->admin = true;
    }
    /* Compared in full, digest by digest: which two clients share a token
     * is the config's business, not a timing channel. */
    for (size_t i = 0; i < c->nclients; i++) {
        for (size_t j = i + 1; j < c->nclients; j++) {
            if (c->clients[i].has_token && c->clients[j].has_token &&
                memcmp(c->clients[i].token_sha256, c->clients[j].token_sha256, GW_SHA256_LEN) ==
                    0) {
                char *key = gw_xasprintf("clients.%s", c->clients[j].name);
                gw_cfg_err(ld, at, key, "clients '%s' and '%s' have the same token",
                           c->clients[i].name, c->clients[j].name);
                free(key);
            }
        }
    }
    hash_policy(c);
    index_clients(c);
}

void gw_cfg_free_clients(struct gw_config *c)
{
    for (size_t i = 0; i < c->nclients; i++) {
        struct gw_client_config *cl = &c->clients[i];
        free(cl->name);
        gw_cfg_free_strv(cl->servers, cl->nservers);
        gw_cfg_free_strv(cl->tools, cl->ntools);
        gw_cfg_free_strv(cl->deny, cl->ndeny);
        for (size_t j = 0; cl->verdicts != NULL && j < GW_CLIENT_VERDICTS; j++)
            free(cl->verdicts[j].key);
        free(cl->verdicts);
    }
    free(c->clients);
    free(c->client_by_name);
    free(c->client_by_token);
}

const struct gw_client_config *gw_config_client(const struct gw_config *c, const char *name)
{
    size_t mask = c->client_slots - 1;
    uint64_t h;

    if (name == NULL || c->client_by_name == NULL)
        return NULL;
    for (h = gw_hash_str(name); c->client_by_name[h & mask] != 0; h++) {
        const struct gw_client_config *cl = &c->clients[c->client_by_name[h & mask] - 1];
        if (strcmp(cl->name, name) == 0)
            return cl;
    }
    return NULL;
}

const struct gw_client_config *
gw_config_client_by_digest(const struct gw_config *c, const unsigned char digest[32], size_t *at)
{
    size_t mask = c->client_slots - 1;
    uint64_t k = digest_key(digest);

    for (; c->client_by_token != NULL && c->client_by_token[(k + *at) & mask] != 0; (*at)++) {
        const struct gw_client_config *cl = &c->clients[c->client_by_token[(k + *at) & mask] - 1];
        if (digest_key(cl->token_sha256) == k) {
            (*at)++;
            return cl;
        }
    }
    return NULL;
}

int gw_cfg_set_audit_path(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                          const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    const char *s;

    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    if (gw_cfg_scalar_str(n, &s) != 0 || s[0] == '\0') {
        gw_cfg_err(ld, n, key, "'%s' must be a file path", key);
        return UV_EINVAL;
    }
    free(g->audit_path);
    /* a file named so is written ./journal */
    g->audit_path =
        strcmp(s, GW_AUDIT_JOURNAL) == 0 ? gw_xstrdup(s) : gw_cfg_abspath(ld->c->dir, s);
    return 0;
}

int gw_cfg_set_audit_arguments(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                               const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_gateway_config *g = base;
    const char *s = "hash";

    if (n != NULL && gw_cfg_scalar_str(n, &s) != 0)
        s = "";
    if (strcmp(s, "hash") == 0 || strcmp(s, "none") == 0 || strcmp(s, "full") == 0) {
        g->audit_arguments = s[0] == 'h'   ? GW_AUDIT_ARGS_HASH
                             : s[0] == 'n' ? GW_AUDIT_ARGS_NONE
                                           : GW_AUDIT_ARGS_FULL;
        return 0;
    }
    gw_cfg_err(ld, n, key, "'%s' must be 'hash', 'full' or 'none'", key);
    return UV_EINVAL;
}
