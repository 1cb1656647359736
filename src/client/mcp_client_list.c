/* Paginated lists: every page of tools/list, prompts/list, … gathered
 * into one array, within the discovery bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/mcp_client_internal.h"
#include "gw/util.h"

struct pager {
    struct gw_mcp_client *c;
    char *method;
    char *key;
    json_t *items;
    unsigned pages;
    uint64_t timeout_ms;
    gw_mcp_reply_cb cb;
    void *data;
    gw_mcp_handle op;
};

/* Paginated lists. */

static void pager_report(struct pager *pg, const struct gw_mcp_reply *r)
{
    pg->cb(pg->data, r);
    json_decref(pg->items);
    free(pg->method);
    free(pg->key);
    free(pg);
}

static void pager_fail(struct pager *pg, int code, const char *why, json_t *error)
{
    struct gw_mcp_reply r = {.code = code, .message = why, .error = error};

    pager_report(pg, &r);
}

static void page_done(void *data, const struct gw_mcp_reply *r);

/* Checks one page and appends its items; returns 0 or a code with `buf`. */
static int pager_take(struct pager *pg, json_t *result, char *buf, size_t cap)
{
    json_t *arr = json_object_get(result, pg->key);

    if (!json_is_array(arr)) {
        snprintf(buf, cap, "%s page %u is not an object with a \"%s\" array", pg->method, pg->pages,
                 pg->key);
        return GW_MCP_E_PROTOCOL;
    }
    if (json_array_size(pg->items) + json_array_size(arr) > GW_MCP_MAX_LIST_ITEMS) {
        snprintf(buf, cap, "%s returned more than %d %s; mcpgw reads at most that many", pg->method,
                 GW_MCP_MAX_LIST_ITEMS, pg->key);
        return GW_MCP_E_LIMIT;
    }
    json_array_extend(pg->items, arr);
    return 0;
}

/* The cursor of the next page, or NULL at the end. A null or empty
 * nextCursor also ends the list: some servers send one instead of leaving
 * it out, and following "" would start over at the first page. */
static int next_cursor(struct pager *pg, json_t *result, const char **out, char *buf, size_t cap)
{
    json_t *cur = json_object_get(result, "nextCursor");

    *out = NULL;
    if (cur == NULL || json_is_null(cur))
        return 0;
    if (!json_is_string(cur)) {
        snprintf(buf, cap, "%s page %u has a nextCursor that is not a string", pg->method,
                 pg->pages);
        return GW_MCP_E_PROTOCOL;
    }
    if (json_string_length(cur) == 0)
        return 0;
    if (pg->pages >= GW_MCP_MAX_LIST_PAGES) {
        snprintf(buf, cap, "%s still had a nextCursor after %d pages; mcpgw reads at most %d",
                 pg->method, GW_MCP_MAX_LIST_PAGES, GW_MCP_MAX_LIST_PAGES);
        return GW_MCP_E_LIMIT;
    }
    *out = json_string_value(cur);
    return 0;
}

static void page_done(void *data, const struct gw_mcp_reply *r)
{
    struct pager *pg = data;
    char buf[TEXT_BYTES];
    const char *cursor;
    json_t *params;
    int rc;

    pg->pages++;
    if (r->code != 0) {
        snprintf(buf, sizeof buf, "%s page %u: %s", pg->method, pg->pages, r->message);
        pager_fail(pg, r->code, buf, r->error);
        return;
    }
    rc = pager_take(pg, r->result, buf, sizeof buf);
    if (rc == 0)
        rc = next_cursor(pg, r->result, &cursor, buf, sizeof buf);
    if (rc < 0) {
        gw_log(GW_LOG_WARN, "list rejected", "server", pg->c->server_id, "error", buf, NULL);
        pager_fail(pg, rc, buf, NULL);
        return;
    }
    if (cursor == NULL) {
        struct gw_mcp_reply ok = {.code = 0, .result = pg->items};
        pager_report(pg, &ok);
        return;
    }
    params = json_pack("{s:s}", "cursor", cursor);
    rc = gw_mcp__send_request(pg->c, pg->method, params, pg->timeout_ms, page_done, pg, pg->op,
                              NULL);
    json_decref(params);
    if (rc < 0) {
        snprintf(buf, sizeof buf, "could not request %s page %u: %s", pg->method, pg->pages + 1,
                 gw_mcp_strerror(rc));
        pager_fail(pg, rc, buf, NULL);
    }
}

int gw_mcp_client_list_all(struct gw_mcp_client *c, const char *method, const char *key,
                           uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                           gw_mcp_handle *handle)
{
    struct pager *pg;
    int rc = gw_mcp__check_ready(c);

    if (rc < 0)
        return rc;
    if (method == NULL || key == NULL || cb == NULL)
        return UV_EINVAL;
    pg = gw_xcalloc(1, sizeof *pg);
    *pg = (struct pager){.c = c, .timeout_ms = timeout_ms, .cb = cb, .data = data};
    pg->method = gw_xstrdup(method);
    pg->key = gw_xstrdup(key);
    pg->items = json_array();
    rc = gw_mcp__send_request(c, method, NULL, timeout_ms, page_done, pg, 0, &pg->op);
    if (rc < 0) {
        json_decref(pg->items);
        free(pg->method);
        free(pg->key);
        free(pg);
        return rc;
    }
    if (handle)
        *handle = pg->op;
    return 0;
}

int gw_mcp_client_list_tools(struct gw_mcp_client *c, uint64_t timeout_ms, gw_mcp_reply_cb cb,
                             void *data, gw_mcp_handle *handle)
{
    return gw_mcp_client_list_all(c, "tools/list", "tools", timeout_ms, cb, data, handle);
}

/* Cancellation: the handle is the id of the operation's first request;
 * later pages of a list carry it in `op`, so fall back to a walk. */
