/* libFuzzer target for the config loader: YAML → model → validation
 * (gw_config_load_buffer), then everything that renders a loaded config:
 * each diagnostic formatted, each server's public JSON view, its tool
 * policies, and lookups by id.
 *
 * The config "file" lives in a temporary directory made once, holding an
 * envFile (app.env) and an executable (tool.sh), so relative envFile, cwd
 * and command values in the corpus resolve and reach their parsers. Run it
 * with stdin redirected from /dev/null: an envFile of /dev/stdin would
 * otherwise wait for a terminal (fuzz.mk does). */
#include "gw/config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw/log.h"

static char cfg_path[256];

static void write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, mode) != 0)
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char dir[] = "/tmp/mcpgw-fuzz-config-XXXXXX";

    if (mkdtemp(dir) == NULL)
        abort();
    write_file(dir, "app.env", "# comment\nTOKEN=abc\nexport NAME=\"x y\"\nEMPTY=\n", 0600);
    write_file(dir, "tool.sh", "#!/bin/sh\nexit 0\n", 0755);
    if (mkdir(strcat(strcpy(cfg_path, dir), "/work"), 0755) != 0)
        abort();
    snprintf(cfg_path, sizeof cfg_path, "%s/mcp.yaml", dir);
    gw_log_set_level(GW_LOG_DEBUG);
    return 0;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The public view of an HTTP server redacts a password in the URL's
 * userinfo: the password may appear in the view only as often as it does
 * in the rest of the original URL (host or path could contain the same
 * text by chance). */
static void check_url_redacted(const char *url, const char *shown)
{
    const char *auth = strstr(url, "://");
    if (auth == NULL || shown == NULL)
        return;
    auth += 3;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memrchr(auth, '@', alen), *colon = memchr(auth, ':', at ? at - auth : 0);
    if (at == NULL || colon == NULL || at - colon - 1 < 6)
        return;
    char *pass = strndup(colon + 1, (size_t)(at - colon - 1));
    char *userinfo = strndup(auth, (size_t)(at - auth));
    size_t rest = count(url, pass) - count(userinfo, pass);
    free(userinfo);
    if (count(shown, pass) > rest) {
        fprintf(stderr, "fuzz_config: URL password shown in /v1/servers view: %s\n", shown);
        abort();
    }
    free(pass);
}

static void check_server(const struct gw_config *c, const struct gw_server_config *s)
{
    struct gw_tool_config t;
    json_t *j = gw_server_config_to_json(s);

    if (s->url != NULL)
        check_url_redacted(s->url, json_string_value(json_object_get(j, "url")));
    free(json_dumps(j, JSON_COMPACT));
    json_decref(j);
    if (s->id != NULL && gw_config_server(c, s->id) == NULL)
        abort();
    for (size_t i = 0; i < s->ntool_configs; i++)
        gw_config_tool_policy(s, s->tool_configs[i].name, &t);
    gw_config_tool_policy(s, "not_configured_tool", &t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gw_config *c;

    if (gw_config_load_buffer(cfg_path, (const char *)data, size, &c) != 0)
        return 0;
    for (size_t i = 0; i < c->ndiags; i++)
        free(gw_diag_format(&c->diags[i]));
    for (size_t i = 0; i < c->nservers; i++)
        check_server(c, &c->servers[i]);
    /* A snapshot is shared by reference: take and drop one more. */
    gw_config_unref(gw_config_ref(c));
    gw_config_unref(c);
    return 0;
}
