/* First definitions of a server's tools and their withdrawals (see
 * catalog_internal.h). */
#include "gw/catalog_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/sha256.h"
#include "gw/util.h"

enum part { P_TITLE, P_DESCRIPTION, P_INPUT, P_OUTPUT, P_ANNOTATIONS, NPARTS };

static const char *const part_names[NPARTS] = {"title", "description", "inputSchema",
                                               "outputSchema", "annotations"};

typedef unsigned char digests[NPARTS][GW_SHA256_LEN];

struct first {
    struct first *next;
    digests d;
    unsigned changed; /* parts (bits) that differed while withdrawn */
    bool withdrawn;
    char name[]; /* original name: valid, so at most 64 bytes */
};

struct gw_cat_firsts {
    char config[sizeof(((struct gw_toolset_build *)0)->config_hash)];
    struct first **b;
    size_t nb, n;
};

struct gw_cat_firsts *gw_cat_firsts_new(void)
{
    struct gw_cat_firsts *f = gw_xcalloc(1, sizeof(*f));

    f->nb = 16;
    f->b = gw_xcalloc(f->nb, sizeof(*f->b));
    return f;
}

static void forget_all(struct gw_cat_firsts *f)
{
    for (size_t i = 0; i < f->nb; i++) {
        struct first *e = f->b[i], *next;
        for (; e != NULL; e = next) {
            next = e->next;
            free(e);
        }
        f->b[i] = NULL;
    }
    f->n = 0;
}

void gw_cat_firsts_free(struct gw_cat_firsts *f)
{
    if (f == NULL)
        return;
    forget_all(f);
    free(f->b);
    free(f);
}

static struct first *find(const struct gw_cat_firsts *f, const char *name)
{
    for (struct first *e = f->b[gw_hash_str(name) % f->nb]; e != NULL; e = e->next) {
        if (strcmp(e->name, name) == 0)
            return e;
    }
    return NULL;
}

static void grow(struct gw_cat_firsts *f)
{
    size_t nb = f->nb * 2;
    struct first **b = gw_xcalloc(nb, sizeof(*b));

    for (size_t i = 0; i < f->nb; i++) {
        struct first *e = f->b[i], *next;
        for (; e != NULL; e = next) {
            size_t k = gw_hash_str(e->name) % nb;
            next = e->next;
            e->next = b[k];
            b[k] = e;
        }
    }
    free(f->b);
    f->b = b;
    f->nb = nb;
}

static void put(struct gw_cat_firsts *f, const char *name, digests d)
{
    size_t len = strlen(name);
    struct first *e = gw_xcalloc(1, sizeof(*e) + len + 1);
    size_t k;

    if (f->n >= f->nb)
        grow(f);
    memcpy(e->d, d, sizeof(digests));
    memcpy(e->name, name, len + 1);
    k = gw_hash_str(name) % f->nb;
    e->next = f->b[k];
    f->b[k] = e;
    f->n++;
}

/* A tag byte first, so that an absent part never equals a present one. */
static void digest_text(const char *s, unsigned char out[GW_SHA256_LEN])
{
    struct gw_sha256 c;

    gw_sha256_init(&c);
    gw_sha256_update(&c, s != NULL ? "s" : "-", 1);
    if (s != NULL)
        gw_sha256_update(&c, s, strlen(s));
    gw_sha256_final(&c, out);
}

static int feed(const char *buf, size_t size, void *data)
{
    gw_sha256_update(data, buf, size);
    return 0;
}

/* Sorted keys, so that a server reordering an object changes nothing. The
 * dump cannot fail: these trees were parsed, so they hold no cycle. */
static void digest_json(const json_t *j, unsigned char out[GW_SHA256_LEN])
{
    struct gw_sha256 c;

    gw_sha256_init(&c);
    gw_sha256_update(&c, j != NULL ? "j" : "-", 1);
    if (j != NULL)
        json_dump_callback(j, feed, &c, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    gw_sha256_final(&c, out);
}

static void digest_tool(const struct gw_cat_tool *t, digests d)
{
    digest_text(t->title, d[P_TITLE]);
    digest_text(t->description, d[P_DESCRIPTION]);
    digest_json(t->input_schema, d[P_INPUT]);
    digest_json(t->output_schema, d[P_OUTPUT]);
    digest_json(t->annotations, d[P_ANNOTATIONS]);
}

/* "title", "title and description", "title, description and inputSchema". */
static void parts_text(unsigned mask, char *buf, size_t cap)
{
    size_t left = (size_t)__builtin_popcount(mask), o = 0;

    buf[0] = '\0';
    for (int p = 0; p < NPARTS && o < cap; p++) {
        if (!(mask & (1u << p)))
            continue;
        left--;
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", part_names[p],
                              left > 1   ? ", "
                              : left > 0 ? " and "
                                         : "");
    }
}

static void report(struct gw_cat_diags *d, const char *server, const struct first *e, unsigned mask)
{
    char parts[96];

    parts_text(mask, parts, sizeof(parts));
    gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_DEFINITION_CHANGED, server, e->name,
                     "Tool '%s' from MCP server '%s' changed its %s since it was first "
                     "listed%s",
                     e->name, server, parts,
                     e->withdrawn ? "; it is withdrawn until a reload changes the server's "
                                    "configuration"
                                  : "");
}

size_t gw_cat_firsts_check(struct gw_cat_firsts *f, const struct gw_toolset_build *b,
                           enum gw_tool_changes mode, struct gw_cat_diags *d)
{
    size_t withdrawn = 0, unremembered = 0;

    if (strcmp(f->config, b->config_hash) != 0) {
        forget_all(f);
        memcpy(f->config, b->config_hash, sizeof(f->config));
    }
    for (size_t i = 0; i < b->ntools; i++) {
        const struct gw_cat_tool *t = b->tools[i];
        struct first *e = find(f, t->original_name);
        unsigned diff = 0;
        digests now;

        digest_tool(t, now);
        if (e == NULL) {
            if (f->n < GW_CATALOG_MAX_FIRSTS)
                put(f, t->original_name, now);
            else
                unremembered++;
            continue;
        }
        for (int p = 0; p < NPARTS; p++)
            diff |= (unsigned)(memcmp(e->d[p], now[p], GW_SHA256_LEN) != 0) << p;
        if (mode == GW_TOOL_CHANGES_DISABLE && diff != 0 && !e->withdrawn) {
            e->withdrawn = true;
            withdrawn++;
        }
        if (e->withdrawn)
            e->changed |= diff;
        if (diff != 0 || e->withdrawn)
            report(d, b->server, e, e->withdrawn ? e->changed : diff);
    }
    if (unremembered > 0)
        gw_cat_diags_add(d, GW_SEV_WARNING, GW_CAT_FIRSTS_FULL, b->server, NULL,
                         "MCP server '%s' has listed more than %d distinct tool names since its "
                         "configuration was loaded; changes to %zu of its tools are not detected "
                         "until a reload changes that configuration",
                         b->server, GW_CATALOG_MAX_FIRSTS, unremembered);
    return withdrawn;
}

bool gw_cat_firsts_withdrawn(const struct gw_cat_firsts *f, const char *original_name)
{
    const struct first *e = find(f, original_name);

    return e != NULL && e->withdrawn;
}
