/* Streamable HTTP's own rules for 2026-07-28 requests (the transport spec
 * of that revision): the headers that repeat the body (MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name, and Mcp-Param-* for the tool parameters marked
 * `x-mcp-header`), tools whose marks are invalid dropped from tools/list
 * (a client over HTTP MUST), a refusal's JSON-RPC error kept whatever its
 * status, and cancellation by closing the request's stream. A request is
 * 2026-07-28 when its `_meta` names that version: the MCP client above
 * decided, and this file only reads the messages it sends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw/base64.h"
#include "gw/json_in.h"
#include "gw/log.h"
#include "gw/trace.h"
#include "gw/upstream_http_internal.h"
#include "gw/util.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define HEADER_MAX   256 /* bytes of an x-mcp-header name */

/* ---- header values ---- */

/* A value goes as written only when it is visible ASCII or inner spaces,
 * with no space at either end, and does not look like the encoded form;
 * anything else as =?base64?<UTF-8>?=. */
static char *header_value(const char *s)
{
    size_t n = strlen(s);
    bool plain = n == 0 || (s[0] != ' ' && s[n - 1] != ' ');
    char *b, *out;

    for (size_t i = 0; plain && i < n; i++)
        plain = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f;
    if (plain && !(n >= 11 && strncasecmp(s, "=?base64?", 9) == 0 && strcmp(s + n - 2, "?=") == 0))
        return gw_xstrdup(s);
    b = gw_base64_encode((const unsigned char *)s, n);
    out = gw_xasprintf("=?base64?%s?=", b);
    free(b);
    return out;
}

/* "Name;" is libcurl's way to send an empty value ("Name:" removes it). */
static struct curl_slist *add(struct curl_slist *l, const char *name, const char *value)
{
    char *v = header_value(value);
    char *line = v[0] ? gw_xasprintf("%s: %s", name, v) : gw_xasprintf("%s;", name);

    l = gw_http_xfer_line(l, line);
    free(line);
    free(v);
    return l;
}

/* Mcp-Param-<Header> for each marked argument present and not null:
 * integers in decimal, booleans as true/false. */
static struct curl_slist *param_headers(struct curl_slist *l, json_t *marks, json_t *args)
{
    size_t i;
    json_t *mark;

    json_array_foreach(marks, i, mark)
    {
        json_t *v = json_object_get(args, json_string_value(json_array_get(mark, 0)));
        char name[HEADER_MAX + 16], num[32];
        const char *text = NULL;

        snprintf(name, sizeof name, "Mcp-Param-%s", json_string_value(json_array_get(mark, 1)));
        if (json_is_string(v))
            text = json_string_value(v);
        else if (json_is_integer(v) &&
                 snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v)) > 0)
            text = num;
        else if (json_is_boolean(v))
            text = json_is_true(v) ? "true" : "false";
        if (text != NULL)
            l = add(l, name, text);
    }
    return l;
}

void gw_upstream_http__modern_classify(struct xfer *x, json_t *m)
{
    json_t *params = json_object_get(m, "params");
    const char *version =
        json_string_value(json_object_get(json_object_get(params, "_meta"), META_VERSION));
    const char *method = json_string_value(json_object_get(m, "method"));
    const char *name = NULL;
    const struct gw_trace_ctx *trace = gw_trace_current(); /* the request's CLIENT span */
    struct curl_slist *l = NULL;

    if (trace != NULL) { /* W3C Trace Context over HTTP, whatever the revision */
        char tp[GW_TRACEPARENT_LEN + 1];
        gw_trace_format(trace, tp);
        l = add(l, "traceparent", tp);
        if (trace->tracestate != NULL)
            l = add(l, "tracestate", trace->tracestate);
    }
    x->mhdrs = l;
    if (version == NULL || method == NULL ||
        !gw_http_xfer_header_safe(version, strlen(version), 64))
        return;
    x->modern = 1;
    x->lists_tools = strcmp(method, "tools/list") == 0;
    l = add(l, "MCP-Protocol-Version", version);
    l = add(l, "Mcp-Method", method);
    if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
        name = json_string_value(json_object_get(params, "name"));
    else if (strcmp(method, "resources/read") == 0)
        name = json_string_value(json_object_get(params, "uri"));
    if (name != NULL)
        l = add(l, "Mcp-Name", name);
    if (strcmp(method, "tools/call") == 0 && name != NULL)
        l = param_headers(l, json_object_get(x->h->param_marks, name),
                          json_object_get(params, "arguments"));
    x->mhdrs = l;
}

/* ---- tools/list: the marks of each tool ---- */

static bool token_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The [[property, header], …] of a tool's top-level properties, or NULL
 * with `why` when a mark is invalid: not a non-empty token, on a type
 * that is not string, integer or boolean, or a header twice (any case). */
static json_t *tool_marks(json_t *tool, const char **why)
{
    json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
    json_t *marks = json_array(), *p;
    const char *prop;

    json_object_foreach(props, prop, p)
    {
        json_t *mark = json_object_get(p, "x-mcp-header");
        const char *h = json_string_value(mark),
                   *type = json_string_value(json_object_get(p, "type"));
        size_t i, n = h ? strlen(h) : 0;
        json_t *seen;

        if (mark == NULL)
            continue;
        *why = "its x-mcp-header is not a non-empty HTTP token";
        for (i = 0; i < n && token_char((unsigned char)h[i]); i++)
            ;
        if (n == 0 || i < n || n > HEADER_MAX)
            goto bad;
        *why = "x-mcp-header is only allowed on string, integer and boolean parameters";
        if (type == NULL || (strcmp(type, "string") != 0 && strcmp(type, "integer") != 0 &&
                             strcmp(type, "boolean") != 0))
            goto bad;
        *why = "two parameters have the same x-mcp-header";
        json_array_foreach(marks, i, seen)
        {
            if (strcasecmp(json_string_value(json_array_get(seen, 1)), h) == 0)
                goto bad;
        }
        json_array_append_new(marks, json_pack("[s, s]", prop, h));
    }
    return marks;
bad:
    json_decref(marks);
    return NULL;
}

char *gw_upstream_http__modern_tools(struct gw_upstream_http *h, const char *data, size_t len,
                                     size_t *outlen)
{
    json_t *m = gw_json_loadb(data, len, 0, NULL);
    json_t *tools = json_object_get(json_object_get(m, "result"), "tools");
    json_t *kept = json_array(), *t;
    char *out = NULL;
    size_t i;

    if (h->param_marks == NULL)
        h->param_marks = json_object();
    json_array_foreach(tools, i, t)
    {
        const char *name = json_string_value(json_object_get(t, "name")), *why = NULL;
        json_t *marks = tool_marks(t, &why);

        if (marks == NULL) {
            gw_log(GW_LOG_WARN, "upstream tool dropped: invalid x-mcp-header", "server", h->id,
                   "tool", name, "error", why, NULL);
            continue;
        }
        if (name != NULL && json_array_size(marks) > 0)
            json_object_set(h->param_marks, name, marks);
        else if (name != NULL)
            json_object_del(h->param_marks, name);
        json_decref(marks);
        json_array_append(kept, t);
    }
    if (json_array_size(kept) < json_array_size(tools)) {
        json_object_set(json_object_get(m, "result"), "tools", kept);
        out = json_dumps(m, JSON_COMPACT);
        *outlen = out ? strlen(out) : 0;
    }
    json_decref(kept);
    json_decref(m);
    return out;
}

/* ---- refusals and cancellation ---- */

int gw_upstream_http__modern_error(struct xfer *x)
{
    json_t *m = x->modern && x->rpc_id ? gw_json_loadb(x->t.rbody, x->t.rlen, 0, NULL) : NULL;
    int mine = json_is_object(json_object_get(m, "error")) &&
               json_equal(json_object_get(m, "id"), x->rpc_id);

    json_decref(m);
    if (!mine)
        return 0;
    gw_upstream_http__enqueue(x->h, x->t.rbody, x->t.rlen);
    return 1;
}

int gw_upstream_http__modern_cancel(struct gw_upstream_http *h, const char *msg, size_t len)
{
    json_t *m, *id;
    struct xfer *x;

    if (memmem(msg, len, "notifications/cancelled", 23) == NULL)
        return 0;
    m = gw_json_loadb(msg, len, 0, NULL);
    id = json_object_get(json_object_get(m, "params"), "requestId");
    for (x = h->xfers; x != NULL; x = x->next) {
        if (x->kind == XK_POST && x->modern && x->rpc_id && json_equal(x->rpc_id, id))
            break;
    }
    json_decref(m);
    if (x == NULL)
        return 0;
    gw_curl_uv_remove(h->multi, &x->t.cx);
    gw_upstream_http__xfer_free(x);
    gw_upstream_http__reschedule(h);
    return 1;
}
