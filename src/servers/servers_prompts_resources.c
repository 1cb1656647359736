/* Prompts, resources and resource templates of the servers (design §5):
 * their discovery after the tools, re-listing on list_changed, and the
 * routing of prompts/get, resources/read, resources/subscribe and
 * completion/complete.
 *
 * A server is listed for a kind only when it declared the capability at
 * initialize and its config loads it (load_prompts, load_resources). A
 * failed list is a warning: the server keeps serving its tools and its last
 * listing of that kind. Problems are keyed "server:<id>:extras:…" so that
 * the tool catalog's own mark-and-sweep of "server:<id>:catalog:" leaves
 * them alone. */
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/servers_internal.h"
#include "gw/util.h"

static const char *const list_methods[] = {"prompts/list", "resources/list",
                                           "resources/templates/list"};
static const char *const list_keys[] = {"prompts", "resources", "resourceTemplates"};
static const char *const kind_caps[] = {"prompts", "resources", "resources"};

/* One list in flight; freed by its callback. */
struct extra_list {
    struct slot *slot;
    enum gw_extra_kind kind;
};

/* Publishes every server's extras diagnostics as Problems, replacing the
 * previous ones (a collision may have moved to another server). */
static void publish(struct gw_servers *s)
{
    const char *id;

    for (size_t i = 0; (id = gw_extras_server_at(s->extras, i)) != NULL; i++) {
        const struct gw_cat_diags *d = gw_extras_diags(s->extras, id);
        char *prefix = gw_xasprintf("server:%s:extras:entry:", id);
        gw_problems_mark(s->problems, prefix);
        for (size_t k = 0; d != NULL && k < d->n; k++) {
            char *pid = gw_xasprintf("%s%s:%s", prefix, gw_cat_diag_kind_name(d->v[k].kind),
                                     d->v[k].tool ? d->v[k].tool : "");
            struct gw_problem p = {.id = pid,
                                   .severity = d->v[k].severity,
                                   .scope = GW_SCOPE_SERVER,
                                   .server = id,
                                   .message = d->v[k].message};
            gw_problems_set(s->problems, &p);
            free(pid);
        }
        gw_problems_sweep(s->problems, prefix);
        free(prefix);
    }
}

/* After a change of the extras: Problems, version, events. */
static void changed(struct gw_servers *s, unsigned mask, const char *server)
{
    publish(s);
    if (mask == 0)
        return;
    s->extras_version++;
    if (mask & (1u << GW_EXTRA_PROMPTS))
        gw_server_emit(s, &(struct gw_servers_event){.kind = GW_EV_PROMPTS,
                                                     .version = s->extras_version,
                                                     .server = server});
    if (mask & ((1u << GW_EXTRA_RESOURCES) | (1u << GW_EXTRA_TEMPLATES)))
        gw_server_emit(s, &(struct gw_servers_event){.kind = GW_EV_RESOURCES,
                                                     .version = s->extras_version,
                                                     .server = server});
}

static void list_problem(struct server *srv, enum gw_extra_kind kind, const char *message)
{
    char *id = gw_xasprintf("server:%s:extras:list:%s", srv->cfg->id, list_keys[kind]);
    char *msg = message ? gw_xasprintf("%s failed: %s; the server's tools are served, and its "
                                       "last %s listing if any",
                                       list_methods[kind], message, list_keys[kind])
                        : NULL;
    struct gw_problem p = {.id = id,
                           .severity = GW_SEV_WARNING,
                           .scope = GW_SCOPE_SERVER,
                           .server = srv->cfg->id,
                           .message = msg};

    if (msg != NULL)
        gw_problems_set(srv->owner->problems, &p);
    else
        gw_problems_clear(srv->owner->problems, id);
    free(msg);
    free(id);
}

static bool wanted(const struct server *srv, struct slot *slot, enum gw_extra_kind kind)
{
    json_t *caps = gw_instance_capabilities(slot->inst);
    bool load = kind == GW_EXTRA_PROMPTS ? srv->cfg->load_prompts : srv->cfg->load_resources;

    return load && json_is_object(json_object_get(caps, kind_caps[kind]));
}

static void on_list(void *data, const struct gw_mcp_reply *reply)
{
    struct extra_list *el = data;
    struct slot *slot = el->slot;
    struct server *srv = slot->srv;
    enum gw_extra_kind kind = el->kind;

    free(el);
    srv->extra_listing &= ~(1u << kind);
    if (srv->removed || srv->replaces != NULL || reply->code == GW_MCP_E_CLOSED)
        return;
    if (reply->code != 0) {
        char *why = gw_servers_mask(srv, reply->message ? reply->message : "");
        gw_log(GW_LOG_WARN, "listing failed", "server", srv->cfg->id, "method", list_methods[kind],
               "error", why, NULL);
        list_problem(srv, kind, why);
        free(why);
    } else {
        list_problem(srv, kind, NULL);
        changed(srv->owner, gw_extras_set(srv->owner->extras, srv->cfg, kind, reply->result),
                srv->cfg->id);
    }
    if ((srv->extra_relist & (1u << kind)) && slot->role != ROLE_RETIRED) {
        srv->extra_relist &= ~(1u << kind);
        gw_extra_discover(srv, slot, 1u << kind);
    }
}

static void list_one(struct server *srv, struct slot *slot, enum gw_extra_kind kind)
{
    uint64_t timeout = srv->cfg->request_timeout_ms ? srv->cfg->request_timeout_ms
                                                    : srv->snap->gateway.request_timeout_ms;
    struct extra_list *el;

    if (!wanted(srv, slot, kind)) {
        changed(srv->owner, gw_extras_set(srv->owner->extras, srv->cfg, kind, NULL), srv->cfg->id);
        return;
    }
    if (srv->extra_listing & (1u << kind)) {
        srv->extra_relist |= 1u << kind;
        return;
    }
    el = gw_xcalloc(1, sizeof *el);
    *el = (struct extra_list){slot, kind};
    if (gw_instance_list(slot->inst, list_methods[kind], list_keys[kind], timeout, on_list, el) !=
        0) {
        free(el);
        return;
    }
    srv->extra_listing |= 1u << kind;
}

void gw_extra_discover(struct server *srv, struct slot *slot, unsigned kinds)
{
    json_t *ext = json_object_get(gw_instance_capabilities(slot->inst), "extensions");

    if (srv->removed || srv->replaces != NULL || srv->owner->closing)
        return;
    if (json_is_object(ext) && !json_equal(ext, srv->extensions)) {
        json_decref(srv->extensions);
        srv->extensions = json_deep_copy(ext);
    }
    for (int k = 0; k < GW_EXTRA_KINDS; k++) {
        if (kinds & (1u << k))
            list_one(srv, slot, (enum gw_extra_kind)k);
    }
}

/* An upstream's list changed: listed again, once the server serves. */
static void on_list_changed(struct slot *slot, const char *method, json_t *params)
{
    unsigned kinds = strcmp(method, "notifications/prompts/list_changed") == 0
                         ? 1u << GW_EXTRA_PROMPTS
                         : (1u << GW_EXTRA_RESOURCES) | (1u << GW_EXTRA_TEMPLATES);

    if (slot->srv->state == SRV_READY && slot->ready)
        gw_extra_discover(slot->srv, slot, kinds);
}

void gw_extra_routes(struct gw_servers *s)
{
    gw_servers_route(s, "notifications/prompts/list_changed", on_list_changed);
    gw_servers_route(s, "notifications/resources/list_changed", on_list_changed);
}

void gw_extra_forget(struct server *srv)
{
    changed(srv->owner, gw_extras_remove(srv->owner->extras, srv->cfg->id), srv->cfg->id);
}

/* ---- routing ---- */

static struct server *route_prompt(struct gw_servers *s, json_t *holder, const char *field,
                                   json_t **out, const char **what)
{
    const char *original = NULL;
    const char *name = json_string_value(json_object_get(holder, field));
    const char *id = name ? gw_extras_prompt(s->extras, name, &original) : NULL;

    if (id == NULL)
        return NULL;
    json_object_set_new(holder, field, json_string(original));
    *what = original;
    (void)out;
    return gw_servers_find(s, id);
}

/* A namespaced server is sent its own URI: the "uri" of `holder` as the
 * server listed it. Returns the URI to send (owned by `holder`). */
static const char *to_upstream(const struct server *srv, json_t *holder, const char *uri)
{
    char id[GW_CATALOG_NS_ID_MAX + 1];
    char *original;

    if (!srv->cfg->resource_namespace || gw_catalog_ns_split(uri, id, &original) != 0)
        return uri;
    if (strcmp(id, srv->cfg->id) == 0)
        json_object_set_new(holder, "uri", json_string(original));
    free(original);
    return json_string_value(json_object_get(holder, "uri"));
}

struct server *gw_extra_route(struct gw_servers *s, const char *method, json_t *params,
                              json_t **out_params, const char **what)
{
    json_t *p = json_deep_copy(params), *ref = json_object_get(p, "ref"), *holder = p;
    const char *uri = json_string_value(json_object_get(p, "uri"));
    const char *type = json_string_value(json_object_get(ref, "type"));
    const char *id = NULL;
    struct server *srv = NULL;

    if (strcmp(method, "prompts/get") == 0) {
        srv = route_prompt(s, p, "name", out_params, what);
    } else if ((strcmp(method, "resources/read") == 0 ||
                strcmp(method, "resources/subscribe") == 0) &&
               uri != NULL) {
        id = gw_extras_resource(s->extras, uri);
    } else if (strcmp(method, "completion/complete") == 0 && type != NULL) {
        if (strcmp(type, "ref/prompt") == 0) {
            srv = route_prompt(s, ref, "name", out_params, what);
        } else if (strcmp(type, "ref/resource") == 0 &&
                   (uri = json_string_value(json_object_get(ref, "uri"))) != NULL) {
            id = gw_extras_template(s->extras, uri);
            if (id == NULL)
                id = gw_extras_resource(s->extras, uri);
            holder = ref;
        }
    }
    if (id != NULL)
        srv = gw_servers_find(s, id);
    if (srv == NULL) {
        json_decref(p);
        return NULL;
    }
    if (id != NULL)
        *what = to_upstream(srv, holder, uri);
    *out_params = p;
    return srv;
}

/* A copy of `item` whose string "uri" (if any) is namespaced. */
static json_t *ns_item(const char *server, json_t *item)
{
    const char *uri = json_string_value(json_object_get(item, "uri"));
    json_t *copy;
    char *ns;

    if (uri == NULL)
        return json_incref(item);
    copy = json_copy(item);
    ns = gw_catalog_ns_uri(server, uri);
    json_object_set_new(copy, "uri", json_string(ns));
    free(ns);
    return copy;
}

json_t *gw_extra_contents(const char *server, json_t *result)
{
    json_t *shown = json_copy(result), *contents = json_array(), *item;
    size_t i;

    json_array_foreach(json_object_get(result, "contents"), i, item)
        json_array_append_new(contents, ns_item(server, item));
    json_object_set_new(shown, "contents", contents);
    return shown;
}

json_t *gw_extra_links(const char *server, json_t *result)
{
    json_t *shown = json_copy(result), *content = json_array(), *item;
    size_t i;

    if (!json_is_array(json_object_get(result, "content")))
        return shown;
    json_array_foreach(json_object_get(result, "content"), i, item)
    {
        const char *type = json_string_value(json_object_get(item, "type"));
        json_t *res = json_object_get(item, "resource");
        if (type != NULL && strcmp(type, "resource_link") == 0) {
            json_array_append_new(content, ns_item(server, item));
        } else if (type != NULL && strcmp(type, "resource") == 0 && json_is_object(res)) {
            json_t *copy = json_copy(item);
            json_object_set_new(copy, "resource", ns_item(server, res));
            json_array_append_new(content, copy);
        } else {
            json_array_append(content, item);
        }
    }
    json_object_set_new(shown, "content", content);
    return shown;
}

/* ---- projections ---- */

json_t *gw_servers_extras_json(const struct gw_servers *s, enum gw_extra_kind kind, bool rest)
{
    return rest ? gw_extras_rest_json(s->extras, kind) : gw_extras_json(s->extras, kind);
}

bool gw_servers_offers(const struct gw_servers *s, enum gw_extra_kind kind)
{
    return gw_extras_any(s->extras, kind);
}

json_t *gw_servers_extensions(const struct gw_servers *s)
{
    json_t *all = json_object(), *v;
    const char *key;

    for (const struct server *srv = s->head; srv != NULL; srv = srv->next) {
        json_object_foreach(srv->extensions, key, v)
        {
            if (json_object_get(all, key) == NULL)
                json_object_set(all, key, v);
        }
    }
    return all;
}

uint64_t gw_servers_extras_version(const struct gw_servers *s)
{
    return s->extras_version;
}
