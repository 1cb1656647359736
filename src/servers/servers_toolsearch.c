/* The search index on the loop, and gateway.tool_search for /mcp (issue
 * 29). The index follows the catalog in steps of GW_TOOLSEARCH_SLICE_US
 * after each turn of the loop, once a search was made, so that a big
 * catalog change never holds the loop long (issue 34): while a step is
 * left, an idle handle keeps the loop from blocking in its poll. A search
 * that answered before the index was complete (it says so) left work,
 * which the check after that same turn goes on with. Then:
 * what a dialog's tools/list
 * holds when tool search is on (the built-in toolset, the tools
 * gateway.tool_search.always_loaded names, and the tools the dialog has
 * activated), and the activations themselves (toolsearch_active.c), which
 * live as long as the dialog's leases: released with them, and swept after
 * lease_idle_timeout without use. */
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/servers_internal.h"
#include "gw/toolsearch.h"
#include "gw/util.h"

static void on_ts_idle(uv_idle_t *h)
{
    (void)h; /* the check after this turn's poll does the work */
}

static void on_ts_check(uv_check_t *h)
{
    struct gw_servers *s = h->data;
    bool done;

    if (!gw_toolsearch_in_use(s->search))
        return;
    done = gw_toolsearch_step(s->search, s->catalog, GW_TOOLSEARCH_SLICE_US);
    if (!done && !uv_is_active((uv_handle_t *)&s->ts_idle))
        uv_idle_start(&s->ts_idle, on_ts_idle);
    else if (done && uv_is_active((uv_handle_t *)&s->ts_idle))
        uv_idle_stop(&s->ts_idle);
}

/* MCPGW_TOOLSEARCH_QUERY_US (docs/config.md): the most a search builds
 * before it answers, which tests shorten to see an answer made while the
 * index is incomplete. The loop's own steps keep their slice. */
static void query_budget(struct gw_toolsearch *ix)
{
    const char *v = getenv("MCPGW_TOOLSEARCH_QUERY_US");
    char *end = NULL;
    unsigned long long us = v != NULL ? strtoull(v, &end, 10) : 0;

    if (v == NULL)
        return;
    if (end == v || *end != '\0' || us > GW_TOOLSEARCH_FIRST_US) {
        gw_log(GW_LOG_WARN,
               "MCPGW_TOOLSEARCH_QUERY_US is not a number of microseconds from 0 to 50000; "
               "using the default",
               "value", v, NULL);
        return;
    }
    gw_toolsearch_set_first(ix, us);
    gw_toolsearch_set_slice(ix, us < GW_TOOLSEARCH_SLICE_US ? us : GW_TOOLSEARCH_SLICE_US);
}

void gw_servers_ts_init(struct gw_servers *s)
{
    query_budget(s->search);
    uv_check_init(s->loop, &s->ts_check);
    s->ts_check.data = s;
    uv_check_start(&s->ts_check, on_ts_check);
    uv_unref((uv_handle_t *)&s->ts_check);
    uv_idle_init(s->loop, &s->ts_idle);
    s->ts_idle.data = s;
    uv_unref((uv_handle_t *)&s->ts_idle);
}

bool gw_servers_tool_search(const struct gw_servers *s, int *max_results)
{
    if (s->gw == NULL || !s->gw->tool_search_enabled)
        return false;
    if (max_results != NULL)
        *max_results = s->gw->tool_search_max_results;
    return true;
}

/* Listed whatever the dialog activated: the built-ins and always_loaded. */
static bool always_listed(const struct gw_servers *s, const struct gw_cat_tool *t)
{
    return t->server == NULL || gw_catalog_match_any(s->gw->tool_search_always_loaded,
                                                     s->gw->ntool_search_always_loaded, t->name);
}

json_t *gw_servers_ts_listing(struct gw_servers *s, const char *dialog)
{
    const struct gw_cat_toolset *ts;
    json_t *tools = json_array();

    for (size_t i = 0; (ts = gw_catalog_toolset_at(s->catalog, i)) != NULL; i++) {
        for (size_t j = 0; j < gw_cat_toolset_ntools(ts); j++) {
            const struct gw_cat_tool *t = gw_cat_toolset_tool(ts, j);
            if (always_listed(s, t) ||
                (dialog != NULL && gw_ts_active_has(s->active, dialog, t->name)))
                json_array_append_new(tools, gw_cat_tool_to_json(t, GW_TOOL_FORMAT_MCP_WIRE));
        }
    }
    return tools;
}

int gw_servers_ts_activate(struct gw_servers *s, const char *dialog, const char *name)
{
    const struct gw_cat_tool *t = gw_catalog_lookup(s->catalog, name);

    if (t == NULL || dialog == NULL || always_listed(s, t))
        return 0;
    return gw_ts_active_add(s->active, dialog, name, gw_now_ms());
}

size_t gw_servers_ts_forget(struct gw_servers *s, const char *dialog, const char *name)
{
    return dialog != NULL ? gw_ts_active_remove(s->active, dialog, name) : 0;
}

json_t *gw_servers_ts_active(const struct gw_servers *s, const char *dialog)
{
    return gw_ts_active_json(s->active, dialog);
}
