/* gateway.tool_search on /mcp (issue 29): when it is on, a dialog's
 * tools/list holds the built-in tools, the always-loaded ones, what the
 * dialog activated, and two more built-ins: find_tools, whose result lists
 * the best matches of a query (name, description, input schema) and
 * activates them, and forget_tools, which deactivates. Calling a tool that
 * is not listed works (the catalog is no permission system) and activates
 * it. A change of the dialog's list is announced with
 * notifications/tools/list_changed to its sessions' GET streams (2025-11-25)
 * and its subscriptions/listen streams (2026-07-28). A 2026-07-28 request
 * left without a dialog (gateway.mcp_default_dialog: none) finds tools but
 * activates none. */
#include "gw/mcp_server_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gw/policy.h"
#include "gw/toolsearch.h"
#include "gw/util.h"

#define FIND_TOOLS   "find_tools"
#define FORGET_TOOLS "forget_tools"

static json_t *find_tools_def(void)
{
    return json_pack(
        "{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:i, s:i, s:s}}, s:[s]}}", "name", FIND_TOOLS,
        "description",
        "Finds the gateway's tools for a task among all its servers' tools, and makes them "
        "available: describe what you want to do in a few words. The tools found are added to "
        "your tool list.",
        "inputSchema", "type", "object", "properties", "query", "type", "string", "description",
        "What you want to do, in a few words (\"take a screenshot of the page\")", "limit", "type",
        "integer", "minimum", 1, "maximum", GW_TOOLSEARCH_LIMIT_MAX, "description",
        "How many tools to return at most", "required", "query");
}

static json_t *forget_tools_def(void)
{
    return json_pack(
        "{s:s, s:s, s:{s:s, s:{s:{s:s, s:{s:s}, s:s}}}}", "name", FORGET_TOOLS, "description",
        "Removes tools found with find_tools from your tool list when you no longer "
        "need them.",
        "inputSchema", "type", "object", "properties", "names", "type", "array", "items", "type",
        "string", "description", "The tools to remove; without it, every tool found so far");
}

static const char *dialog_of(const struct gw_mcp_session *s)
{
    return s->dialog[0] != '\0' ? s->dialog : NULL;
}

json_t *gw_mcp__ts_tools(struct gw_mcp_session *s)
{
    json_t *tools;
    size_t builtins = 0;

    if (!gw_servers_tool_search(s->ms->servers, NULL))
        return NULL;
    tools = gw_servers_ts_listing(s->ms->servers, dialog_of(s));
    for (size_t i = json_array_size(tools); i-- > 0;) { /* the built-ins hide them */
        const char *n = json_string_value(json_object_get(json_array_get(tools, i), "name"));
        if (strcmp(n, FIND_TOOLS) == 0 || strcmp(n, FORGET_TOOLS) == 0)
            json_array_remove(tools, i);
    }
    /* after the catalog's own built-ins, which come first */
    while (builtins < json_array_size(tools) &&
           strcmp(json_string_value(json_object_get(json_array_get(tools, builtins), "name")),
                  GW_CATALOG_RELEASE_TOOL) == 0)
        builtins++;
    json_array_insert_new(tools, builtins, forget_tools_def());
    json_array_insert_new(tools, builtins, find_tools_def());
    return tools;
}

/* notifications/tools/list_changed to every stream of the dialog. */
static void list_changed(struct gw_mcp_session *s)
{
    static const char *const method = "notifications/tools/list_changed";
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);

    for (struct gw_mcp_session *o = s->ms->head; o != NULL; o = o->next) {
        if (o->had_get && strcmp(o->dialog, s->dialog) == 0)
            gw_mcp__session_send(o, msg);
    }
    json_decref(msg);
    gw_mcp__listeners_notify(s->ms, method, s->dialog);
}

static json_t *text_result(bool is_error, const char *text)
{
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError",
                     is_error);
}

static json_t *find_tools(struct gw_mcp_session *s, json_t *args, int max_results)
{
    struct gw_servers *sv = s->ms->servers;
    const char *q = json_string_value(json_object_get(args, "query"));
    json_t *limit = json_object_get(args, "limit"), *found, *r, *indexing;
    struct gw_toolsearch_hit hits[GW_TOOLSEARCH_LIMIT_MAX];
    const char *problem;
    struct gw_policy_view view = {sv, s->client};
    size_t n, k;
    int changed = 0;
    char *text;

    if (q == NULL)
        return text_result(true, "find_tools needs {\"query\": \"<what you want to do>\"}");
    if ((problem = gw_toolsearch_query_problem(q)) != NULL)
        return text_result(true, problem);
    if (limit != NULL && (!json_is_integer(limit) || json_integer_value(limit) < 1 ||
                          json_integer_value(limit) > GW_TOOLSEARCH_LIMIT_MAX))
        return text_result(true, "limit must be an integer from 1 to 100");
    k = limit ? (size_t)json_integer_value(limit) : (size_t)max_results;
    /* the index knows no clients: the most it gives, then the client's view */
    n = gw_toolsearch_query(gw_servers_toolsearch(sv), gw_servers_catalog(sv), q, NULL, 0, hits,
                            GW_TOOLSEARCH_LIMIT_MAX);
    found = json_array();
    for (size_t i = 0; i < n && json_array_size(found) < k; i++) {
        const struct gw_cat_tool *t = gw_policy_lookup(sv, s->client, hits[i].tool->name);
        if (t == NULL)
            continue;
        json_array_append_new(found, json_pack("{s:s, s:s, s:O}", "name", t->name, "description",
                                               t->description, "inputSchema", t->input_schema));
        changed |= gw_servers_ts_activate(sv, dialog_of(s), t->name);
    }
    r = json_pack("{s:{s:O}}", "structuredContent", "tools", found);
    /* a partial answer says so: the rest is still being indexed */
    indexing =
        gw_toolsearch_indexing_json(gw_servers_toolsearch(sv), NULL, gw_policy_view_toolset, &view);
    if (indexing != NULL)
        json_object_set_new(json_object_get(r, "structuredContent"), "indexing", indexing);
    if (json_array_size(found) > 0)
        text = json_dumps(json_object_get(r, "structuredContent"), JSON_COMPACT);
    else if (indexing != NULL)
        text = gw_xasprintf(
            "No tool matches '%s' yet: %lld tools of %lld server%s are still being indexed; "
            "search again in a moment.",
            q, (long long)json_integer_value(json_object_get(indexing, "tools")),
            (long long)json_integer_value(json_object_get(indexing, "toolsets")),
            json_integer_value(json_object_get(indexing, "toolsets")) == 1 ? "" : "s");
    else
        text = gw_xasprintf("No tool matches '%s'; try other words.", q);
    json_object_set_new(r, "content", json_pack("[{s:s, s:s}]", "type", "text", "text", text));
    json_object_set_new(r, "isError", json_false());
    free(text);
    json_decref(found);
    if (changed)
        list_changed(s);
    return r;
}

static json_t *forget_tools(struct gw_mcp_session *s, json_t *args)
{
    json_t *names = json_object_get(args, "names"), *v;
    size_t n = 0, i;
    char *text;
    json_t *r;

    if (names != NULL && !json_is_array(names))
        return text_result(true, "names must be an array of tool names");
    if (names == NULL) {
        n = gw_servers_ts_forget(s->ms->servers, dialog_of(s), NULL);
    } else {
        json_array_foreach(names, i, v)
        {
            if (json_is_string(v))
                n += gw_servers_ts_forget(s->ms->servers, dialog_of(s), json_string_value(v));
        }
    }
    text = gw_xasprintf("%zu tool%s removed from the tool list", n, n == 1 ? "" : "s");
    r = text_result(false, text);
    free(text);
    if (n > 0)
        list_changed(s);
    return r;
}

json_t *gw_mcp__ts_call(struct gw_mcp_session *s, json_t *id, const char *name, json_t *args)
{
    int max_results;

    if (!gw_servers_tool_search(s->ms->servers, &max_results))
        return NULL;
    if (strcmp(name, FIND_TOOLS) == 0)
        return gw_mcp__result(id, find_tools(s, args, max_results));
    if (strcmp(name, FORGET_TOOLS) == 0)
        return gw_mcp__result(id, forget_tools(s, args));
    /* a tool the client may not use is unknown: nothing to activate */
    if (gw_policy_lookup(s->ms->servers, s->client, name) != NULL &&
        gw_servers_ts_activate(s->ms->servers, dialog_of(s), name) > 0)
        list_changed(s);
    return NULL;
}
