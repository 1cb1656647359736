/* The decision of gw/policy.h. It reads the config it is given each time,
 * so a reload that takes a right away takes it at the next call. */
#include "gw/policy.h"

#include <stdlib.h>
#include <string.h>

#include "gw/catalog_prompts_resources.h"
#include "gw/servers_internal.h"
#include "gw/sha256.h"
#include "gw/util.h"

/* NULL when every caller may use everything (no clients configured). A
 * client the config does not know is a client with no rights: a zeroed
 * one with an empty `servers:`. */
static const struct gw_client_config *client_of(const struct gw_config *c, const char *name,
                                                bool *unknown)
{
    const struct gw_client_config *cl;

    *unknown = false;
    if (c->nclients == 0)
        return NULL;
    cl = gw_config_client(c, name);
    *unknown = cl == NULL;
    return cl;
}

const char *gw_policy_client_by_digest(const struct gw_config *c, const unsigned char digest[32])
{
    const struct gw_client_config *cl;
    const char *found = NULL;
    uint64_t want[4], have[4];
    size_t at = 0;

    /* The index finds the clients whose digest starts as this one does
     * (almost always one); the whole digest is then compared without a
     * branch on a byte. What the probe's length can tell is whether some
     * client's digest starts like the caller's own: bits of a SHA-256,
     * which say nothing of a token. */
    memcpy(want, digest, sizeof want);
    while ((cl = gw_config_client_by_digest(c, digest, &at)) != NULL) {
        uint64_t diff = 0;
        memcpy(have, cl->token_sha256, sizeof have);
        for (size_t j = 0; j < 4; j++)
            diff |= have[j] ^ want[j];
        found = diff == 0 ? cl->name : found;
    }
    return found;
}

static bool server_ok(const struct gw_client_config *cl, const char *server)
{
    if (!cl->has_servers)
        return true;
    for (size_t i = 0; i < cl->nservers; i++) {
        if (strcmp(cl->servers[i], server) == 0)
            return true;
    }
    return false;
}

bool gw_policy_server(const struct gw_config *c, const char *client, const char *server)
{
    bool unknown;
    const struct gw_client_config *cl = client_of(c, client, &unknown);

    return !unknown && (cl == NULL || server_ok(cl, server));
}

/* The first glob of `pats` that matches `name`, or NULL. */
static const char *matching(char *const *pats, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (gw_catalog_pattern_match(pats[i], name))
            return pats[i];
    }
    return NULL;
}

static bool decide(const struct gw_client_config *cl, const char *server, const char *tool,
                   const char **rule)
{
    const char *deny;

    *rule = NULL;
    if (!server_ok(cl, server)) {
        *rule = "servers";
        return false;
    }
    if ((deny = matching(cl->deny, cl->ndeny, tool)) != NULL) {
        *rule = deny;
        return false;
    }
    if (!cl->has_tools)
        return true;
    *rule = matching(cl->tools, cl->ntools, tool);
    if (*rule != NULL)
        return true;
    *rule = "tools";
    return false;
}

/* decide(), remembered in the client's slots of this snapshot: a call
 * asks for its tool from several places, and 20 globs per client cost
 * more than a hash and a compare. A slot taken by another name is
 * overwritten. */
static bool decide_cached(const struct gw_client_config *cl, const char *server, const char *tool,
                          const char **rule)
{
    size_t ns = 0, nt = 0, n;
    uint64_t h = 1469598103934665603ull;
    struct gw_client_verdict *v;

    for (; server[ns] != '\0'; ns++)
        h = (h ^ (unsigned char)server[ns]) * 1099511628211ull;
    h *= 1099511628211ull; /* the NUL between the two */
    for (; tool[nt] != '\0'; nt++)
        h = (h ^ (unsigned char)tool[nt]) * 1099511628211ull;
    n = ns + 1 + nt;
    if (cl->verdicts == NULL) /* the one mutable part of a snapshot (config.h) */
        ((struct gw_client_config *)cl)->verdicts =
            gw_xcalloc(GW_CLIENT_VERDICTS, sizeof *cl->verdicts);
    v = &cl->verdicts[h % GW_CLIENT_VERDICTS];
    if (v->key != NULL && v->hash == h && v->keylen == n && memcmp(v->key, server, ns + 1) == 0 &&
        memcmp(v->key + ns + 1, tool, nt + 1) == 0) {
        *rule = v->rule;
        return v->ok;
    }
    free(v->key);
    v->key = gw_xmalloc(n + 1);
    memcpy(v->key, server, ns + 1);
    memcpy(v->key + ns + 1, tool, nt + 1);
    v->hash = h;
    v->keylen = n;
    v->ok = decide(cl, server, tool, &v->rule);
    *rule = v->rule;
    return v->ok;
}

bool gw_policy_tool(const struct gw_config *c, const char *client, const char *server,
                    const char *tool, const char **rule)
{
    bool unknown;
    const struct gw_client_config *cl = client_of(c, client, &unknown);
    const char *r = NULL;
    bool ok;

    if (unknown) {
        r = "clients";
        ok = false;
    } else if (cl == NULL || server == NULL) {
        ok = true;
    } else {
        ok = tool != NULL ? decide_cached(cl, server, tool, &r) : decide(cl, server, tool, &r);
    }
    if (rule != NULL)
        *rule = r;
    return ok;
}

bool gw_policy_admin(const struct gw_config *c, const char *client)
{
    bool unknown;
    const struct gw_client_config *cl = client_of(c, client, &unknown);

    return !unknown && (cl == NULL || cl->admin);
}

static const char *tool_name(json_t *t, enum gw_tool_format fmt)
{
    if (fmt == GW_TOOL_FORMAT_OPENAI)
        t = json_object_get(t, "function");
    return json_string_value(json_object_get(t, "name"));
}

static bool tool_visible(const struct gw_config *c, const char *client,
                         const struct gw_catalog *cat, const char *name)
{
    const struct gw_cat_tool *t = name ? gw_catalog_lookup(cat, name) : NULL;

    /* a tool no longer in the catalog is unknown to everyone, and a name
     * listed beside the catalog (find_tools, forget_tools) is the gateway's */
    return t == NULL || gw_policy_tool(c, client, t->server, t->name, NULL);
}

void gw_policy_filter_tools(const struct gw_config *c, const char *client,
                            const struct gw_catalog *cat, json_t *tools, enum gw_tool_format fmt)
{
    size_t i = 0;

    if (c->nclients == 0)
        return;
    while (i < json_array_size(tools)) {
        if (tool_visible(c, client, cat, tool_name(json_array_get(tools, i), fmt)))
            i++;
        else
            json_array_remove(tools, i);
    }
}

json_t *gw_policy_toolsets_json(const struct gw_config *c, const char *client,
                                const struct gw_catalog *cat)
{
    json_t *j = gw_catalog_toolsets_json(cat), *sets = json_object_get(j, "toolsets"), *ts;
    size_t i = 0;

    while (c->nclients > 0 && (ts = json_array_get(sets, i)) != NULL) {
        const char *server = json_string_value(json_object_get(ts, "server"));
        json_t *names = json_object_get(ts, "tools");
        if (server != NULL && !gw_policy_server(c, client, server)) {
            json_array_remove(sets, i);
            continue;
        }
        for (size_t k = 0; k < json_array_size(names);) {
            if (gw_policy_tool(c, client, server, json_string_value(json_array_get(names, k)),
                               NULL))
                k++;
            else
                json_array_remove(names, k);
        }
        i++;
    }
    return j;
}

static const char *extra_owner(const struct gw_servers *s, enum gw_extra_kind kind, const char *key)
{
    if (key == NULL)
        return NULL;
    return kind == GW_EXTRA_PROMPTS     ? gw_extras_prompt(s->extras, key, NULL)
           : kind == GW_EXTRA_RESOURCES ? gw_extras_resource(s->extras, key)
                                        : gw_extras_template(s->extras, key);
}

bool gw_policy_extra(const struct gw_servers *s, const char *client, enum gw_extra_kind kind,
                     const char *key)
{
    const char *owner = extra_owner(s, kind, key);

    if (owner == NULL)
        return false;
    return kind == GW_EXTRA_PROMPTS ? gw_policy_tool(s->config, client, owner, key, NULL)
                                    : gw_policy_server(s->config, client, owner);
}

bool gw_policy_route(const struct gw_config *c, const char *client, const char *server,
                     const char *method, const json_t *params)
{
    const json_t *ref = json_object_get(params, "ref");
    const char *prompt = NULL;

    if (strcmp(method, "prompts/get") == 0)
        prompt = json_string_value(json_object_get(params, "name"));
    else if (strcmp(method, "completion/complete") == 0 &&
             json_is_string(json_object_get(ref, "type")) &&
             strcmp(json_string_value(json_object_get(ref, "type")), "ref/prompt") == 0)
        prompt = json_string_value(json_object_get(ref, "name"));
    return prompt != NULL ? gw_policy_tool(c, client, server, prompt, NULL)
                          : gw_policy_server(c, client, server);
}

json_t *gw_policy_extras_json(const struct gw_servers *s, const char *client,
                              enum gw_extra_kind kind, bool rest)
{
    static const char *const keys[] = {"name", "uri", "uriTemplate"};
    json_t *all = gw_servers_extras_json(s, kind, rest);
    size_t i = 0;

    while (s->config->nclients > 0 && i < json_array_size(all)) {
        json_t *e = json_array_get(all, i);
        if (gw_policy_extra(s, client, kind, json_string_value(json_object_get(e, keys[kind]))))
            i++;
        else
            json_array_remove(all, i);
    }
    return all;
}

void gw_policy_filter_tools_of(const struct gw_servers *s, const char *client, json_t *tools,
                               enum gw_tool_format fmt)
{
    gw_policy_filter_tools(s->config, client, s->catalog, tools, fmt);
}

const struct gw_cat_tool *gw_policy_lookup(const struct gw_servers *s, const char *client,
                                           const char *name)
{
    const struct gw_cat_tool *t = gw_catalog_lookup(s->catalog, name);

    return t != NULL && gw_policy_tool(s->config, client, t->server, t->name, NULL) ? t : NULL;
}

bool gw_policy_clients(const struct gw_servers *s)
{
    return s->config->nclients > 0;
}

bool gw_policy_view_toolset(const char *toolset, void *view)
{
    const struct gw_policy_view *v = view;

    return strcmp(toolset, GW_CATALOG_ADMIN_TOOLSET) == 0 ||
           gw_policy_server(v->servers->config, v->client, toolset);
}

bool gw_policy_known(const struct gw_servers *s, const char *client)
{
    return gw_config_client(s->config, client) != NULL;
}

void gw_policy_view_digest(const struct gw_servers *s, const char *client,
                           unsigned char out[GW_SHA256_LEN])
{
    json_t *all = gw_catalog_tools_json(s->catalog, NULL, GW_TOOL_FORMAT_MCP_WIRE);
    json_t *tools = json_object_get(all, "tools");
    char *text;
    struct gw_sha256 h;

    gw_policy_filter_tools(s->config, client, s->catalog, tools, GW_TOOL_FORMAT_MCP_WIRE);
    text = json_dumps(tools, JSON_COMPACT);
    gw_sha256_init(&h);
    gw_sha256_update(&h, text, strlen(text));
    gw_sha256_final(&h, out);
    free(text);
    json_decref(all);
}

/* ---- limits ---- */

struct limit {
    char client[GW_CLIENT_NAME_MAX + 1];
    double tokens; /* the bucket: calls it may start now, at most rate_n */
    uint64_t at_ms;
    unsigned in_flight;
    uint64_t refused;
};

struct gw_policy_limits {
    struct limit *v;
    size_t n;
};

/* The client's state, made on its first call; NULL for a client without
 * limits. States of clients the config no longer has are few (a client
 * renamed by a reload) and cost a struct each. */
static struct limit *limit_of(struct gw_servers *s, const struct gw_client_config *cl,
                              uint64_t now_ms)
{
    struct gw_policy_limits *l = s->limits;
    struct limit *e;

    if (cl == NULL || (cl->rate_n == 0 && cl->max_concurrent == 0))
        return NULL;
    if (l == NULL)
        l = s->limits = gw_xcalloc(1, sizeof *l);
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].client, cl->name) == 0)
            return &l->v[i];
    }
    l->v = gw_xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    e = &l->v[l->n++];
    memset(e, 0, sizeof *e);
    gw_strlcpy(e->client, cl->name, sizeof e->client);
    e->tokens = cl->rate_n;
    e->at_ms = now_ms;
    return e;
}

static void refill(struct limit *e, const struct gw_client_config *cl, uint64_t now_ms)
{
    if (cl->rate_n == 0)
        return;
    if (now_ms > e->at_ms)
        e->tokens += (double)(now_ms - e->at_ms) * cl->rate_n / (double)cl->rate_window_ms;
    if (e->tokens > cl->rate_n)
        e->tokens = cl->rate_n;
    e->at_ms = now_ms;
}

static uint64_t wait_ms(const struct limit *e, const struct gw_client_config *cl)
{
    if (cl->max_concurrent > 0 && e->in_flight >= (unsigned)cl->max_concurrent)
        return 1000; /* a call must end first: no time says when */
    if (cl->rate_n == 0 || e->tokens >= 1.0)
        return 0;
    return (uint64_t)((1.0 - e->tokens) * (double)cl->rate_window_ms / cl->rate_n) + 1;
}

int gw_policy_admit(struct gw_servers *s, const char *client, uint64_t now_ms, uint64_t *retry_ms)
{
    const struct gw_client_config *cl;
    struct limit *e;

    *retry_ms = 0;
    if (!s->config->client_limits) /* no lookup for a config without limits */
        return 0;
    cl = gw_config_client(s->config, client);
    e = limit_of(s, cl, now_ms);
    if (e == NULL)
        return 0;
    refill(e, cl, now_ms);
    *retry_ms = wait_ms(e, cl);
    if (*retry_ms > 0) {
        e->refused++;
        return GW_SERVERS_E_RATE_LIMITED;
    }
    if (cl->rate_n > 0)
        e->tokens -= 1.0;
    e->in_flight++;
    return 0;
}

void gw_policy_done(struct gw_servers *s, const char *client)
{
    struct gw_policy_limits *l = s->limits;

    for (size_t i = 0; l != NULL && i < l->n; i++) {
        if (strcmp(l->v[i].client, client) == 0 && l->v[i].in_flight > 0)
            l->v[i].in_flight--;
    }
}

uint64_t gw_policy_retry_ms(struct gw_servers *s, const char *client, uint64_t now_ms)
{
    const struct gw_client_config *cl = gw_config_client(s->config, client);
    struct limit *e = limit_of(s, cl, now_ms);

    if (e == NULL)
        return 0;
    refill(e, cl, now_ms);
    return wait_ms(e, cl);
}

char *gw_policy_metrics(const struct gw_servers *s)
{
    const struct gw_config *c = s->config;
    char *out = gw_xstrdup(""), *next;

    if (c->nclients == 0)
        return out;
    for (int k = 0; k < 2; k++) {
        next = gw_xasprintf("%s# HELP %s\n# TYPE %s %s\n", out,
                            k == 0 ? "mcpgw_client_calls_in_flight Tool calls of the client in "
                                     "flight (clients.<name>.max_concurrent)"
                                   : "mcpgw_client_calls_refused_total Tool calls of the client "
                                     "refused by its rate or max_concurrent",
                            k == 0 ? "mcpgw_client_calls_in_flight"
                                   : "mcpgw_client_calls_refused_total",
                            k == 0 ? "gauge" : "counter");
        free(out);
        out = next;
        for (size_t i = 0; i < c->nclients; i++) {
            const struct limit *e = NULL;
            for (size_t j = 0; s->limits != NULL && j < s->limits->n; j++) {
                if (strcmp(s->limits->v[j].client, c->clients[i].name) == 0)
                    e = &s->limits->v[j];
            }
            next = gw_xasprintf("%s%s{client=\"%s\"} %llu\n", out,
                                k == 0 ? "mcpgw_client_calls_in_flight"
                                       : "mcpgw_client_calls_refused_total",
                                c->clients[i].name,
                                (unsigned long long)(e == NULL ? 0
                                                     : k == 0  ? e->in_flight
                                                               : e->refused));
            free(out);
            out = next;
        }
    }
    return out;
}

void gw_policy_limits_free(struct gw_policy_limits *l)
{
    if (l != NULL)
        free(l->v);
    free(l);
}
