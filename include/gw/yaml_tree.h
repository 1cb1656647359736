/* YAML tree: libyaml's event stream turned into nodes that keep their
 * line:column, with the loader's limits (security.md F1) enforced while
 * parsing, before anything is built from the document.
 *
 * Aliases are resolved to the anchored node itself (shared, not copied):
 * the tree is a DAG owned by its gw_yaml_doc, freed with it. Mappings keep
 * every key, duplicates included, so the caller can report duplicates with
 * the scope it knows (libyaml itself does not reject them). */
#ifndef GW_YAML_TREE_H
#define GW_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>

enum gw_yaml_kind { GW_YAML_SCALAR, GW_YAML_SEQ, GW_YAML_MAP };

struct gw_yaml_node {
    enum gw_yaml_kind kind;
    int line, col; /* 1-based start of the node */
    char *tag;     /* explicit tag as resolved by libyaml, NULL if none */
    bool plain;    /* scalar written without quotes or block style */
    char *str;     /* scalar text, NUL-terminated (may hold NULs: see len) */
    size_t len;
    struct gw_yaml_node **kids; /* seq: items; map: key, value, key, value… */
    size_t nkids;
    size_t expanded; /* nodes in this subtree with aliases expanded */
    int height;      /* levels in this subtree, 1 for a scalar */
};

struct gw_yaml_doc;

struct gw_yaml_error {
    char message[256];
    int line, col; /* 1-based; 0 when unknown */
};

/* Limits: at most `max_nodes` nodes with aliases expanded and `max_depth`
 * levels of nesting. Returns 0 and sets *out (its root is NULL for an empty
 * stream), UV_EINVAL with *err filled for bad or over-limit YAML, or
 * UV_ENOMEM. */
int gw_yaml_parse(const char *buf, size_t len, size_t max_nodes, int max_depth,
                  struct gw_yaml_doc **out, struct gw_yaml_error *err);

const struct gw_yaml_node *gw_yaml_root(const struct gw_yaml_doc *doc);
void gw_yaml_free(struct gw_yaml_doc *doc);

/* Mapping helpers: pairs are numbered 0..gw_yaml_map_len()-1. */
size_t gw_yaml_map_len(const struct gw_yaml_node *map);
const struct gw_yaml_node *gw_yaml_map_key(const struct gw_yaml_node *map, size_t i);
const struct gw_yaml_node *gw_yaml_map_value(const struct gw_yaml_node *map, size_t i);

/* True for a plain scalar that YAML reads as null ("", "~", "null"). */
bool gw_yaml_is_null(const struct gw_yaml_node *n);

#endif
