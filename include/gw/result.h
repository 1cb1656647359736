/* Turns an MCP CallToolResult into the gateway's result R (design §7):
 * {"isError":bool,"contentItems":[…],"structuredContent"?}. Text becomes
 * {"type":"input_text","text"}; resource links and embedded text resources
 * become input_text naming them; binary content the caller cannot store is
 * described by an input_text. */
#ifndef GW_RESULT_H
#define GW_RESULT_H

#include <jansson.h>

/* `result` is borrowed. Returns a new reference, or NULL when `result` is
 * not a CallToolResult (not an object, or `content` not an array). */
json_t *gw_result_from_mcp(json_t *result);

#endif
