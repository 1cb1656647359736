/* Turns an MCP CallToolResult into the gateway's result R (design §7,
 * seed 001): {"isError":bool,"contentItems":[…],"structuredContent"?}.
 *
 *   text                      → {"type":"input_text","text"}
 *   image (jpeg, png, gif, webp; a data: prefix allowed)
 *                             → saved as an artifact,
 *                               {"type":"input_image","mimeType","byteLength",
 *                                "artifact":{"rootId","selfId","relPath"}}
 *   other images, audio, blob resources
 *                             → saved as an artifact, described by an input_text
 *   resource_link, text resources → input_text naming them */
#ifndef GW_RESULT_H
#define GW_RESULT_H

#include <jansson.h>

struct gw_result_ctx {
    const char *artifacts_dir;
    const char *root, *self; /* the dialog; "anonymous" when the call had none */
    const char *server;      /* server id */
    const char *tool;        /* ORIGINAL tool name */
};

/* `result` is borrowed. Returns a new reference, or NULL when `result` is
 * not a CallToolResult (not an object, or `content` not an array). */
json_t *gw_result_from_mcp(json_t *result, const struct gw_result_ctx *ctx);

#endif
