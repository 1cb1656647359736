/* How a 2026-07-28 result goes out: it says what it is (resultType), who
 * answered (the gateway's serverInfo in _meta, whoever answered behind
 * it) and how long it may be kept. gw_mcp__modern_decorate dresses a
 * result tree; gw_mcp__modern_call_answer writes a tools/call's plain
 * answer as text around the upstream's members, the same bytes without
 * the copies and the tree. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gw/json_out.h"
#include "gw/util.h"
#include "gw/version.h"

/* The gateway's serverInfo, built once and shared by every result (only
 * ever serialised): a json_pack per answer cost ~2,500 instructions. */
static json_t *gateway_info(void)
{
    static json_t *info;

    if (info == NULL)
        info = json_pack("{s:s, s:s, s:s}", "name", "mcpgw", "title", "mcpgw MCP gateway",
                         "version", GW_VERSION);
    return info;
}

void gw_mcp__modern_decorate(const char *method, json_t *result)
{
    static const char *const lists[] = {"tools/list", "prompts/list", "resources/list",
                                        "resources/templates/list", NULL};
    json_t *meta = json_object_get(result, "_meta");
    const char *type;

    if (!json_is_object(result))
        return;
    if (json_object_get(result, "resultType") == NULL)
        json_object_set_new(result, "resultType", json_string("complete"));
    /* The result's members may be an upstream's objects, shared: _meta is
     * replaced by a copy before it changes. */
    meta = json_is_object(meta) ? json_copy(meta) : json_object();
    json_object_set_new(result, "_meta", meta);
    /* the client's server is the gateway, whoever answered behind it */
    json_object_set(meta, MCP_META_SERVER, gateway_info());
    type = json_string_value(json_object_get(result, "resultType"));
    if (type == NULL || strcmp(type, "complete") != 0) /* the gateway's own input round */
        return;
    if (gw_mcp__listed(lists, method) && json_object_get(result, "cacheScope") == NULL) {
        json_object_set_new(result, "ttlMs", json_integer(MCP_LIST_TTL_MS));
        json_object_set_new(result, "cacheScope", json_string("public"));
    } else if (strcmp(method, "resources/read") == 0) {
        json_object_set_new(result, "ttlMs", json_integer(MCP_READ_TTL_MS));
        json_object_set_new(result, "cacheScope", json_string("private"));
    }
}

/* The gateway's serverInfo as text, rendered at the first answer and kept
 * for the life of the process, like gateway_info()'s tree it comes from. */
static const char *gateway_info_text(size_t *len)
{
    static char *text;
    static size_t n;

    if (text == NULL)
        text = gw_json_dump(gateway_info(), &n);
    *len = n;
    return text;
}

static void put_key(struct gw_jbuf *b, bool *first, const char *lit, size_t n)
{
    if (!*first)
        gw_jbuf_lit(b, ",");
    *first = false;
    gw_jbuf_put(b, lit, n);
}

/* put_key for a literal: its length is counted by the compiler */
#define PUT_KEY_LIT(b, first, lit) put_key((b), (first), lit, sizeof(lit) - 1)

#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), lit, (n)) == 0)

/* The result's _meta as the tree path leaves it: the upstream's members in
 * their order, "mcpgw/lease" and the serverInfo replaced where they stand,
 * else added in that order. 0, or -1 (not UTF-8). */
static int put_meta(struct gw_jbuf *b, json_t *meta, json_t *lease)
{
    bool first = true, had_lease = false, had_info = false;
    size_t key_len, info_len;
    const char *key, *info = gateway_info_text(&info_len);
    json_t *v;

    gw_jbuf_lit(b, "{");
    GW_MCP_EACH_MEMBER(meta, it)
    {
        key = json_object_iter_key(it);
        key_len = json_object_iter_key_len(it);
        v = json_object_iter_value(it);
        if (!first)
            gw_jbuf_lit(b, ",");
        first = false;
        if (gw_jbuf_string(b, key, key_len) != 0)
            return -1;
        gw_jbuf_lit(b, ":");
        if (KEY_IS(key, key_len, MCP_META_SERVER)) {
            had_info = true;
            gw_jbuf_put(b, info, info_len);
            continue;
        }
        if (lease != NULL && KEY_IS(key, key_len, "mcpgw/lease")) {
            had_lease = true;
            v = lease;
        }
        if (gw_jbuf_value(b, v) != 0)
            return -1;
    }
    if (lease != NULL && !had_lease) {
        PUT_KEY_LIT(b, &first, "\"mcpgw/lease\":");
        if (gw_jbuf_value(b, lease) != 0)
            return -1;
    }
    if (!had_info) {
        PUT_KEY_LIT(b, &first, "\"" MCP_META_SERVER "\":");
        gw_jbuf_put(b, info, info_len);
    }
    gw_jbuf_lit(b, "}");
    return 0;
}

/* The tree path: gw_mcp__call_reply's copy of the result (the lease in
 * _meta), gw_mcp__modern_decorate, gw_json_dump. Here the upstream's
 * members are written where they stand and only the envelope and _meta
 * are the gateway's text, which spares ~12,000 instructions per call. */
char *gw_mcp__modern_call_answer(json_t *id, json_t *result, json_t *lease, size_t *len)
{
    static const struct gw_mcp_member keys[] = {GW_MCP_MEMBER("resultType"),
                                                GW_MCP_MEMBER("_meta")};
    json_t *type, *meta, **out[] = {&type, &meta}, *v;
    const char *key, *t;
    struct gw_jbuf b = {0};
    bool first = true;
    size_t key_len;

    gw_mcp__members(result, keys, out, GW_ARRAY_SIZE(keys));
    t = json_string_value(type);
    if (!json_is_object(result) || (type != NULL && (t == NULL || strcmp(t, "complete") != 0)) ||
        (meta != NULL && !json_is_object(meta)) || (!json_is_string(id) && !json_is_integer(id)))
        return NULL;
    /* 512 holds a short answer (~370 bytes for a line of text) in the
     * thread cache's reach; growing from 256 cost a realloc and a copy */
    gw_jbuf_reserve(&b, 511);
    gw_jbuf_lit(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    if (gw_jbuf_value(&b, id) != 0)
        goto fail;
    gw_jbuf_lit(&b, ",\"result\":{");
    GW_MCP_EACH_MEMBER(result, it)
    {
        key = json_object_iter_key(it);
        key_len = json_object_iter_key_len(it);
        v = json_object_iter_value(it);
        if (!first)
            gw_jbuf_lit(&b, ",");
        first = false;
        if (gw_jbuf_string(&b, key, key_len) != 0)
            goto fail;
        gw_jbuf_lit(&b, ":");
        if ((KEY_IS(key, key_len, "_meta") ? put_meta(&b, meta, lease) : gw_jbuf_value(&b, v)) != 0)
            goto fail;
    }
    /* what the tree path appends, in its order: call_reply's _meta (with
     * a lease), decorate's resultType, then decorate's _meta */
    if (meta == NULL && lease != NULL) {
        PUT_KEY_LIT(&b, &first, "\"_meta\":");
        if (put_meta(&b, NULL, lease) != 0)
            goto fail;
    }
    if (type == NULL)
        PUT_KEY_LIT(&b, &first, "\"resultType\":\"complete\"");
    if (meta == NULL && lease == NULL) {
        PUT_KEY_LIT(&b, &first, "\"_meta\":");
        if (put_meta(&b, NULL, NULL) != 0)
            goto fail;
    }
    gw_jbuf_lit(&b, "}}");
    return gw_jbuf_take(&b, len);
fail:
    free(b.p);
    return NULL;
}
