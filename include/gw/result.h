/* Turns an MCP CallToolResult into the gateway's result R (design §7,
 * seed 001): {"isError":bool,"contentItems":[…],"structuredContent"?}.
 *
 *   text                      → {"type":"input_text","text"}
 *   image (jpeg, png, gif, webp; a data: prefix allowed)
 *                             → saved as an artifact,
 *                               {"type":"input_image","mimeType","byteLength",
 *                                "artifact":{"rootId","selfId","relPath","url"}}
 *   other images, audio, blob resources
 *                             → saved as an artifact, described by an input_text
 *                               with the same "artifact"
 *   resource_link, text resources → input_text naming them
 *   binary content larger than an artifact cap → an input_text saying so */
#ifndef GW_RESULT_H
#define GW_RESULT_H

#include <jansson.h>
#include <stdbool.h>

#include "gw/errors.h"
#include "gw/artifacts.h"
#include "gw/json_out.h"

struct gw_result_ctx {
    struct gw_artifacts *artifacts; /* where binary content is saved (borrowed) */
    struct gw_artifact_caps caps;
    const char *root, *self; /* the dialog; "anonymous" when the call had none */
    const char *dir_root;    /* root's directory: root scoped by the client (gw_dialog_scope) */
    const char *server;      /* server id */
    const char *tool;        /* ORIGINAL tool name */
};

enum {
    GW_RESULT_E_SHAPE = GW_E_RESULT_BASE - 1,  /* not an object, or `content` not an array */
    GW_RESULT_E_ENCODE = GW_E_RESULT_BASE - 2, /* structuredContent or lease cannot be written */
};

/* Appends R as JSON text to `b`, with "lease": `lease` last when it is not
 * NULL, and tells whether it is an error result. `result` and `lease` are
 * borrowed. On an error `b` holds a partial text to discard. */
int gw_result_write(struct gw_jbuf *b, json_t *result, const struct gw_result_ctx *ctx,
                    const json_t *lease, bool *is_error);

#endif
