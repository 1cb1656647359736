#include "gw/result.h"

#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

static json_t *input_text(const char *text)
{
    return json_pack("{s:s, s:s}", "type", "input_text", "text", text);
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

/* Binary content not stored yet: say what it was and how big. */
static json_t *describe_binary(const char *type, json_t *item)
{
    const char *data = str(item, "data", "");
    size_t approx = strlen(data) / 4 * 3;

    return input_text_new(gw_xasprintf("[%s content, %s, about %zu bytes, not stored]", type,
                                       str(item, "mimeType", "unknown type"), approx));
}

static json_t *convert_resource(json_t *item)
{
    json_t *res = json_object_get(item, "resource");
    const char *uri = str(res, "uri", "");
    const char *text = json_string_value(json_object_get(res, "text"));

    if (text != NULL)
        return input_text(text);
    return input_text_new(gw_xasprintf("[embedded resource %s, %s]", uri,
                                       str(res, "mimeType", "binary")));
}

static json_t *convert_item(json_t *item)
{
    const char *type = str(item, "type", "");

    if (strcmp(type, "text") == 0)
        return input_text(str(item, "text", ""));
    if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0)
        return describe_binary(type, item);
    if (strcmp(type, "resource_link") == 0)
        return input_text_new(gw_xasprintf("[resource link %s: %s]", str(item, "name", ""),
                                           str(item, "uri", "")));
    if (strcmp(type, "resource") == 0)
        return convert_resource(item);
    return input_text_new(gw_xasprintf("[unsupported content type '%s']", type));
}

json_t *gw_result_from_mcp(json_t *result)
{
    json_t *content = json_object_get(result, "content");
    json_t *items, *out, *structured;
    size_t i;
    json_t *item;

    if (!json_is_object(result) || !json_is_array(content))
        return NULL;
    items = json_array();
    json_array_foreach(content, i, item)
    {
        if (json_is_object(item))
            json_array_append_new(items, convert_item(item));
    }
    out = json_pack("{s:b, s:o}", "isError", json_is_true(json_object_get(result, "isError")),
                    "contentItems", items);
    structured = json_object_get(result, "structuredContent");
    if (structured != NULL)
        json_object_set(out, "structuredContent", structured);
    return out;
}
