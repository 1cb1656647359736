#include "gw/catalog.h"

#include <stdbool.h>
#include <string.h>
#include <uv.h>

#include "gw/util.h"

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

char *gw_catalog_ns_uri(const char *server, const char *uri)
{
    if (has_prefix(uri, GW_CATALOG_UI_SCHEME))
        return gw_xasprintf(GW_CATALOG_UI_SCHEME "%s/%s", server,
                            uri + strlen(GW_CATALOG_UI_SCHEME));
    return gw_xasprintf(GW_CATALOG_NS_SCHEME "%s/%s", server, uri);
}

int gw_catalog_ns_split(const char *uri, char *server, char **original)
{
    bool ui = uri != NULL && has_prefix(uri, GW_CATALOG_UI_SCHEME);
    size_t skip, n;

    if (uri == NULL || (!ui && !has_prefix(uri, GW_CATALOG_NS_SCHEME)))
        return UV_EINVAL;
    skip = strlen(ui ? GW_CATALOG_UI_SCHEME : GW_CATALOG_NS_SCHEME);
    n = strcspn(uri + skip, "/");
    if (n == 0 || n > GW_CATALOG_NS_ID_MAX || uri[skip + n] != '/')
        return UV_EINVAL;
    memcpy(server, uri + skip, n);
    server[n] = '\0';
    *original = ui ? gw_xasprintf(GW_CATALOG_UI_SCHEME "%s", uri + skip + n + 1)
                   : gw_xstrdup(uri + skip + n + 1);
    return 0;
}
