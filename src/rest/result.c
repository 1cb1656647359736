#include "gw/result.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/artifacts.h"
#include "gw/base64.h"
#include "gw/log.h"
#include "gw/util.h"

static const char *const image_types[] = {"image/jpeg", "image/png", "image/gif", "image/webp"};

/* NULL for text that is not UTF-8 (the item is left out). */
static json_t *input_text(const char *text)
{
    json_t *s = json_string(text), *item;

    if (s == NULL)
        return NULL;
    item = json_object();
    json_object_set_new(item, "type", json_string("input_text"));
    json_object_set_new(item, "text", s);
    return item;
}

static json_t *input_text_new(char *text)
{
    json_t *item = input_text(text);

    free(text);
    return item;
}

static const char *str(json_t *o, const char *key, const char *fallback)
{
    const char *v = json_string_value(json_object_get(o, key));

    return v ? v : fallback;
}

static bool is_image_type(const char *mime)
{
    for (size_t i = 0; i < GW_ARRAY_SIZE(image_types); i++) {
        if (strcmp(image_types[i], mime) == 0)
            return true;
    }
    return false;
}

/* Splits "data:<mime>;base64,<payload>" when present. */
static const char *strip_data_url(const char *data, char *mime, size_t cap)
{
    const char *comma, *semi;

    if (strncmp(data, "data:", 5) != 0 || (comma = strchr(data, ',')) == NULL)
        return data;
    semi = memchr(data + 5, ';', (size_t)(comma - data - 5));
    if (semi != NULL && (size_t)(semi - data - 5) < cap) {
        memcpy(mime, data + 5, (size_t)(semi - data - 5));
        mime[semi - data - 5] = '\0';
    }
    return comma + 1;
}

static json_t *save_binary(const struct gw_result_ctx *ctx, const char *kind, const char *b64,
                           const char *given_mime)
{
    char mime[128];
    const char *payload;
    unsigned char *bytes;
    long n;
    char *rel = NULL, *url;
    int rc;
    json_t *item, *artifact;

    snprintf(mime, sizeof mime, "%s", given_mime ? given_mime : "");
    payload = strip_data_url(b64, mime, sizeof mime);
    bytes = gw_xmalloc(strlen(payload) / 4 * 3 + 3);
    n = gw_base64_decode(payload, strlen(payload), bytes);
    if (n < 0) {
        free(bytes);
        return input_text_new(
            gw_xasprintf("[%s content that is not valid base64 was dropped]", kind));
    }
    rc = gw_artifact_save(ctx->artifacts, &ctx->caps, ctx->dir_root ? ctx->dir_root : ctx->root,
                          ctx->self, ctx->server, ctx->tool, mime, bytes, (size_t)n, &rel);
    free(bytes);
    if (rc == -EFBIG) {
        gw_log(GW_LOG_WARN, "an artifact is larger than the artifacts cap and was not saved",
               "server", ctx->server, "tool", ctx->tool, NULL);
        return input_text_new(gw_xasprintf("[%s content of %ld bytes was not saved: it is larger "
                                           "than the gateway's artifact cap]",
                                           kind, n));
    }
    if (rc != 0) {
        gw_log(GW_LOG_ERROR, "cannot save an artifact", "server", ctx->server, "tool", ctx->tool,
               "error", strerror(-rc), NULL);
        return input_text_new(gw_xasprintf("[%s content of %ld bytes could not be saved: %s]", kind,
                                           n, strerror(-rc)));
    }
    url = gw_artifact_url(ctx->root, ctx->self, rel);
    artifact = json_pack("{s:s, s:s, s:s, s:s}", "rootId", ctx->root, "selfId", ctx->self,
                         "relPath", rel, "url", url);
    if (strcmp(kind, "image") == 0 && is_image_type(mime)) {
        item = json_pack("{s:s, s:s, s:I, s:o}", "type", "input_image", "mimeType", mime,
                         "byteLength", (json_int_t)n, "artifact", artifact);
    } else {
        item = input_text_new(gw_xasprintf("[%s content (%s, %ld bytes) saved as artifact %s]",
                                           kind, mime[0] ? mime : "unknown type", n, rel));
        json_object_set_new(item, "artifact", artifact);
    }
    free(url);
    free(rel);
    return item;
}

static json_t *convert_resource(const struct gw_result_ctx *ctx, json_t *item)
{
    json_t *res = json_object_get(item, "resource");
    const char *text = json_string_value(json_object_get(res, "text"));
    const char *blob = json_string_value(json_object_get(res, "blob"));

    if (text != NULL)
        return input_text(text);
    if (blob != NULL)
        return save_binary(ctx, "resource", blob,
                           json_string_value(json_object_get(res, "mimeType")));
    return input_text_new(gw_xasprintf("[embedded resource %s]", str(res, "uri", "")));
}

/* Every item but a text, which write_item writes without a tree. */
static json_t *convert_item(const struct gw_result_ctx *ctx, json_t *item)
{
    const char *type = str(item, "type", "");

    if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0)
        return save_binary(ctx, type, str(item, "data", ""),
                           json_string_value(json_object_get(item, "mimeType")));
    if (strcmp(type, "resource_link") == 0)
        return input_text_new(
            gw_xasprintf("[resource link %s: %s]", str(item, "name", ""), str(item, "uri", "")));
    if (strcmp(type, "resource") == 0)
        return convert_resource(ctx, item);
    return input_text_new(gw_xasprintf("[unsupported content type '%s']", type));
}

/* The common item, a text, is written without a tree: its string node is
 * the parsed one, already checked as UTF-8. */
static int write_item(struct gw_jbuf *b, const struct gw_result_ctx *ctx, json_t *item)
{
    json_t *conv;
    int rc;

    if (strcmp(str(item, "type", ""), "text") == 0) {
        const char *text = str(item, "text", "");
        gw_jbuf_lit(b, "{\"type\":\"input_text\",\"text\":");
        rc = gw_jbuf_string(b, text, strlen(text));
        gw_jbuf_lit(b, "}");
        return rc;
    }
    conv = convert_item(ctx, item);
    rc = conv != NULL ? gw_jbuf_value(b, conv) : -1;
    json_decref(conv);
    return rc;
}

int gw_result_write(struct gw_jbuf *b, json_t *result, const struct gw_result_ctx *ctx,
                    const json_t *lease, bool *is_error)
{
    json_t *content = json_object_get(result, "content");
    json_t *structured, *item;
    bool first = true;
    size_t i;

    if (!json_is_object(result) || !json_is_array(content))
        return GW_RESULT_E_SHAPE;
    json_t *flag = json_object_get(result, "isError"); /* json_is_true reads it twice */
    *is_error = json_is_true(flag);
    if (*is_error)
        gw_jbuf_lit(b, "{\"isError\":true");
    else
        gw_jbuf_lit(b, "{\"isError\":false");
    gw_jbuf_lit(b, ",\"contentItems\":[");
    json_array_foreach(content, i, item)
    {
        size_t mark = b->len;

        if (!json_is_object(item))
            continue;
        if (!first)
            gw_jbuf_lit(b, ",");
        if (write_item(b, ctx, item) != 0)
            b->len = mark; /* text that is not UTF-8: the item is left out */
        else
            first = false;
    }
    gw_jbuf_lit(b, "]");
    structured = json_object_get(result, "structuredContent");
    if (structured != NULL) {
        gw_jbuf_lit(b, ",\"structuredContent\":");
        if (gw_jbuf_value(b, structured) != 0)
            return GW_RESULT_E_ENCODE;
    }
    if (lease != NULL) {
        gw_jbuf_lit(b, ",\"lease\":");
        if (gw_jbuf_value(b, lease) != 0)
            return GW_RESULT_E_ENCODE;
    }
    gw_jbuf_lit(b, "}");
    return 0;
}
