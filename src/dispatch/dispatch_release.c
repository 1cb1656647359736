/* The built-in mcp_release tool's answer (seed 000), apart from the call
 * machinery of dispatch.c that delivers it. */
#include "gw/dispatch_internal.h"

#include <stdlib.h>

#include "gw/util.h"

static json_t *text_result(bool is_error, char *text)
{
    json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text,
                          "isError", is_error);

    free(text);
    return r;
}

/* The built-in mcp_release({"serverId"}) (seed 000) for the call's dialog,
 * whichever front end asks. Input problems are tool errors (isError), as
 * MCP 2025-11-25 asks. */
json_t *gw_dispatch__release_result(struct gw_servers *s, const char *dialog, json_t *args)
{
    const char *id = json_string_value(json_object_get(args, "serverId"));
    json_t *released, *r;

    if (id == NULL)
        return text_result(true, gw_xstrdup("mcp_release needs {\"serverId\": \"<server id>\"}"));
    released = json_array();
    if (gw_servers_release(s, dialog, id, released) != 0)
        r = text_result(true, gw_xasprintf("no server is named '%s'", id));
    else if (json_array_size(released) == 0)
        r = text_result(false, gw_xasprintf("this dialog held no lease on '%s'", id));
    else
        r = text_result(false, gw_xasprintf("released the lease on '%s'", id));
    json_decref(released);
    return r;
}
