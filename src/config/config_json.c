/* servers.<id>.config (seed 002): YAML turned into the JSON sent as
 * initialize params.config, with YAML's core schema deciding what a plain
 * scalar is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/config_internal.h"

static json_t *yaml_to_json(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key);

/* A plain scalar is a number, boolean or null when YAML's core schema
 * reads it so; everything quoted (or tagged !!str) stays a string. */
static json_t *scalar_to_json(const struct gw_yaml_node *n)
{
    int64_t iv;
    bool bv;
    if (!n->plain || (n->tag && strstr(n->tag, ":str")))
        return json_stringn(n->str, n->len);
    if (gw_yaml_is_null(n))
        return json_null();
    if (gw_cfg_parse_bool(n->str, &bv) == 0)
        return json_boolean(bv);
    if (gw_cfg_parse_int(n->str, &iv) == 0)
        return json_integer(iv);
    char *end;
    if (strpbrk(n->str, "0123456789") && strspn(n->str, "0123456789+-.eE") == n->len) {
        double dv = strtod(n->str, &end);
        if (*end == '\0' && isfinite(dv))
            return json_real(dv);
    }
    return json_stringn(n->str, n->len);
}

static json_t *map_to_json(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key)
{
    json_t *o = json_object();
    for (size_t i = 0; i < gw_yaml_map_len(n); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(n, i);
        if (k->kind != GW_YAML_SCALAR || strlen(k->str) != k->len) {
            gw_cfg_err(ld, k, key, "keys inside '%s' must be strings", key);
            json_decref(o);
            return NULL;
        }
        json_t *v = yaml_to_json(ld, gw_yaml_map_value(n, i), key);
        if (v == NULL) {
            json_decref(o);
            return NULL;
        }
        json_object_set_new(o, k->str, v);
    }
    return o;
}

static json_t *yaml_to_json(struct gw_cfg_ld *ld, const struct gw_yaml_node *n, const char *key)
{
    if (n->kind == GW_YAML_MAP)
        return map_to_json(ld, n, key);
    if (n->kind == GW_YAML_SCALAR) {
        json_t *v = scalar_to_json(n);
        if (v == NULL)
            gw_cfg_err(ld, n, key, "a value inside '%s' is not valid UTF-8", key);
        return v;
    }
    json_t *a = json_array();
    for (size_t i = 0; i < n->nkids; i++) {
        json_t *v = yaml_to_json(ld, n->kids[i], key);
        if (v == NULL) {
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, v);
    }
    return a;
}

int gw_cfg_set_init_config(struct gw_cfg_ld *ld, const struct gw_cfg_directive *d,
                           const struct gw_yaml_node *n, const char *key, void *base)
{
    struct gw_server_config *s = base;
    if (n == NULL || gw_yaml_is_null(n))
        return 0;
    json_t *v = yaml_to_json(ld, n, key);
    if (v == NULL)
        return UV_EINVAL;
    json_decref(s->init_config);
    s->init_config = v;
    return 0;
}
