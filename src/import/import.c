/* `mcpgw import FILE`: other tools' MCP configurations → mcp.yaml v1.
 *
 * The input is read into a jansson tree (import_read.c), one importer per
 * format fills a model that already has mcp.yaml's shape (a `gateway`
 * object, a `servers` object in output order, a comment per server), and
 * only when that succeeded is YAML written (import_yaml.c). */
#include "gw/import_internal.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gw/util.h"

void gw_import_vwarn(FILE *err, const char *file, const char *fmt, va_list ap)
{
    fprintf(err, "%s: warning: ", file);
    vfprintf(err, fmt, ap);
    fputc('\n', err);
}

void gw_import_warn(struct imp *im, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    gw_import_vwarn(im->err, im->file, fmt, ap);
    va_end(ap);
}

/* ---- the output model ---- */

static bool id_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* A new server object under an id made from `name` (^[a-zA-Z0-9_-]{1,64}$,
 * unique, not the reserved mcp_admin). Renames are reported. Returns the
 * object (borrowed) and sets *id to its key (borrowed). */
static json_t *new_server(struct imp *im, const char *name, const char *what, const char **id)
{
    char base[65], cand[80];
    size_t n = 0;
    json_t *srv = json_object();

    for (const char *p = name; *p != '\0' && n < 64; p++)
        base[n++] = id_char(*p) ? *p : '_';
    base[n] = '\0';
    if (n == 0)
        strcpy(base, "server");
    snprintf(cand, sizeof cand, "%s", base);
    for (int i = 2; json_object_get(im->servers, cand) != NULL || strcmp(cand, "mcp_admin") == 0;
         i++) {
        char suffix[16];
        int sl = snprintf(suffix, sizeof suffix, "-%d", i);
        snprintf(cand, sizeof cand, "%.*s%s", 64 - sl, base, suffix);
    }
    if (strcmp(cand, name) != 0)
        gw_import_warn(
            im, "%s '%s' became server id '%s' (ids match ^[a-zA-Z0-9_-]{1,64}$ and are unique)",
            what, name, cand);
    json_object_set_new(im->servers, cand, srv);
    *id = json_object_iter_key(json_object_iter_at(im->servers, cand));
    return srv;
}

/* Appends a line to the comment above server `id`; trailing newlines (a
 * YAML block scalar's) are dropped so no empty comment line appears. */
static void add_note(struct imp *im, const char *id, const char *text)
{
    json_t *old = json_object_get(im->notes, id);
    size_t n = strlen(text);
    char *both;

    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
        n--;
    if (old == NULL) {
        json_object_set_new(im->notes, id, json_stringn(text, n));
        return;
    }
    both = gw_xasprintf("%s\n%.*s", json_string_value(old), (int)n, text);
    json_object_set_new(im->notes, id, json_string(both));
    free(both);
}

/* A scalar as text (numbers and booleans as their JSON text), or NULL. */
static char *scalar_text(const json_t *v)
{
    if (json_is_string(v))
        return gw_xstrdup(json_string_value(v));
    if (json_is_integer(v))
        return gw_xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
    if (json_is_real(v))
        return gw_xasprintf("%.17g", json_real_value(v));
    if (json_is_boolean(v))
        return gw_xstrdup(json_is_true(v) ? "true" : "false");
    return NULL;
}

/* ---- copying fields into a server ---- */

enum kind { K_STR, K_ARGS, K_ENV, K_DURATION, K_BOOL, K_ANY, K_DONE };

struct field {
    const char *src; /* key in the input entry */
    const char *dst; /* key in mcp.yaml; NULL for K_DONE */
    enum kind kind;
};

static void copy_str(struct imp *im, json_t *srv, const struct field *f, json_t *v,
                     const char *where)
{
    char *s = scalar_text(v);

    if (s == NULL) {
        gw_import_warn(im, "%s was not imported: it must be a string", where);
        return;
    }
    if (strcmp(f->dst, "command") == 0) {
        gw_import_check_literal(im, where, s);
        json_object_set_new(srv, f->dst, json_string(s));
    } else {
        char *c = gw_import_convert_refs(im, where, s);
        json_object_set_new(srv, f->dst, json_string(c));
        free(c);
    }
    free(s);
}

static void copy_args(struct imp *im, json_t *srv, json_t *v, const char *where)
{
    json_t *args = json_array(), *item;
    size_t i;

    if (json_is_string(v)) {
        gw_import_warn(im, "%s is one string: imported as a single argument", where);
        v = json_pack("[O]", v);
    } else if (!json_is_array(v)) {
        gw_import_warn(im, "%s was not imported: it must be a list of strings", where);
        json_decref(args);
        return;
    } else {
        json_incref(v);
    }
    json_array_foreach(v, i, item)
    {
        char *s = scalar_text(item);
        char *w = gw_xasprintf("%s[%zu]", where, i);
        if (s == NULL) {
            gw_import_warn(im, "%s was not imported: it is not a string", w);
        } else {
            char *c = gw_import_convert_refs(im, w, s);
            json_array_append_new(args, json_string(c));
            free(c);
        }
        free(s);
        free(w);
    }
    json_decref(v);
    json_object_set_new(srv, "args", args);
}

static void copy_env(struct imp *im, json_t *srv, const struct field *f, json_t *v,
                     const char *where)
{
    json_t *out = json_object(), *item;
    const char *k;

    if (!json_is_object(v)) {
        gw_import_warn(im, "%s was not imported: it must be a map of names to values", where);
        json_decref(out);
        return;
    }
    json_object_foreach(v, k, item)
    {
        char *w = gw_xasprintf("%s.%s", where, k);
        char *s = scalar_text(item);
        if (s == NULL) {
            gw_import_warn(im, "%s was not imported: its value must be a string", w);
        } else {
            char *c = gw_import_convert_refs(im, w, s);
            json_object_set_new(out, k, json_string(c));
            free(c);
        }
        free(s);
        free(w);
    }
    json_object_set_new(srv, f->dst, out);
}

/* `v` as mcp.yaml takes a number: a string of digits (a source that quoted
 * it) becomes the number, which mcp.yaml refuses in quotes. New reference. */
static json_t *number_value(json_t *v)
{
    const char *s = json_string_value(v);
    json_t *n;

    if (s != NULL && s[0] != '\0' && strspn(s, "0123456789.") == strlen(s) &&
        (n = json_loads(s, JSON_DECODE_ANY, NULL)) != NULL)
        return n;
    return json_incref(v);
}

static void copy_field(struct imp *im, json_t *srv, const char *id, const struct field *f,
                       json_t *v)
{
    char *where = gw_xasprintf("servers.%s.%s", id, f->dst);

    if (f->kind == K_STR)
        copy_str(im, srv, f, v, where);
    else if (f->kind == K_ARGS)
        copy_args(im, srv, v, where);
    else if (f->kind == K_ENV)
        copy_env(im, srv, f, v, where);
    else if (f->kind == K_DURATION && (json_is_number(v) || json_is_string(v)))
        json_object_set_new(srv, f->dst, number_value(v));
    else if (f->kind == K_BOOL && json_is_boolean(v))
        json_object_set(srv, f->dst, v);
    else if (f->kind == K_ANY && !json_is_null(v)) {
        json_t *copy = json_deep_copy(v);
        gw_import_convert_tree(im, where, copy);
        json_object_set_new(srv, f->dst, copy);
    } else if (!json_is_null(v))
        gw_import_warn(im, "%s was not imported: it must be a %s", where,
                       f->kind == K_BOOL ? "boolean" : "number of seconds or a duration");
    free(where);
}

/* Copies the table's fields in table order (so the output reads the same
 * whatever the input order), then reports every key the table lacks. */
static void copy_fields(struct imp *im, json_t *srv, const char *id, json_t *entry,
                        const struct field *table)
{
    const char *k;
    json_t *v;

    for (const struct field *f = table; f->src != NULL; f++) {
        v = json_object_get(entry, f->src);
        if (v != NULL && f->kind != K_DONE)
            copy_field(im, srv, id, f, v);
    }
    json_object_foreach(entry, k, v)
    {
        const struct field *f = table;
        while (f->src != NULL && strcmp(f->src, k) != 0)
            f++;
        if (f->src == NULL)
            gw_import_warn(im, "'%s' of server '%s' was not imported: mcp.yaml has no such setting",
                           k, id);
    }
}

/* ---- mcpServers JSON and VS Code ---- */

static const struct field client_fields[] = {
    {"command", "command", K_STR}, {"args", "args", K_ARGS},      {"cwd", "cwd", K_STR},
    {"env", "env", K_ENV},         {"envFile", "envFile", K_STR}, {"url", "url", K_STR},
    {"headers", "headers", K_ENV}, {"type", NULL, K_DONE},        {"transport", NULL, K_DONE},
    {"disabled", NULL, K_DONE},    {NULL, NULL, K_DONE}};

/* The mcp.yaml transport of a client entry, or NULL (reported). */
static const char *client_transport(struct imp *im, const char *name, json_t *e)
{
    json_t *t = json_object_get(e, "type");
    const char *ts, *url;

    if (t == NULL)
        t = json_object_get(e, "transport");
    ts = json_string_value(t);
    if (ts == NULL && json_object_get(e, "command") != NULL)
        return "stdio";
    if (ts == NULL && (url = json_string_value(json_object_get(e, "url"))) != NULL) {
        size_t n = strcspn(url, "?#");
        bool sse = n >= 4 && strncmp(url + n - 4, "/sse", 4) == 0;
        gw_import_warn(im, "server '%s' names no type: transport %s was chosen from its URL", name,
                       sse ? "sse" : "streamable_http");
        return sse ? "sse" : "streamable_http";
    }
    if (ts == NULL) {
        gw_import_warn(im, "server '%s' was not imported: it has neither a command nor a url",
                       name);
        return NULL;
    }
    if (strcmp(ts, "stdio") == 0 || strcmp(ts, "sse") == 0)
        return strcmp(ts, "sse") == 0 ? "sse" : "stdio";
    if (strcmp(ts, "http") == 0 || strcmp(ts, "streamable-http") == 0 ||
        strcmp(ts, "streamable_http") == 0 || strcmp(ts, "streamableHttp") == 0)
        return "streamable_http";
    gw_import_warn(im, "server '%s' was not imported: type '%s' is not stdio, http or sse", name,
                   ts);
    return NULL;
}

static void import_client_entry(struct imp *im, const char *name, json_t *e)
{
    const char *transport, *id;
    json_t *srv;

    if (!json_is_object(e)) {
        gw_import_warn(im, "server '%s' was not imported: its entry is not an object", name);
        return;
    }
    if (json_is_true(json_object_get(e, "disabled"))) {
        gw_import_warn(im, "server '%s' was not imported: it is disabled", name);
        return;
    }
    transport = client_transport(im, name, e);
    if (transport == NULL)
        return;
    srv = new_server(im, name, "server name", &id);
    json_object_set_new(srv, "transport", json_string(transport));
    copy_fields(im, srv, id, e, client_fields);
}

static void import_clients(struct imp *im, json_t *servers)
{
    const char *k;
    json_t *v;

    json_object_foreach(servers, k, v) import_client_entry(im, k, v);
}

static void import_vscode(struct imp *im, json_t *root)
{
    json_t *inputs = json_object_get(root, "inputs");
    const char *k;
    json_t *v;

    im->format = "VS Code mcp.json";
    if (json_array_size(inputs) > 0)
        gw_import_warn(im,
                       "inputs (%zu) were not imported: mcpgw cannot prompt for values; each "
                       "${input:ID} in env or headers now names an environment variable",
                       json_array_size(inputs));
    json_object_foreach(root, k, v)
    {
        if (strcmp(k, "servers") != 0 && strcmp(k, "inputs") != 0)
            gw_import_warn(im, "'%s' was not imported: it is not part of VS Code's MCP servers", k);
    }
    import_clients(im, json_object_get(root, "servers"));
}

/* ---- HoloDeck agent.yaml (seed 002) ---- */

static const struct field holodeck_fields[] = {{"command", "command", K_STR},
                                               {"args", "args", K_ARGS},
                                               {"env", "env", K_ENV},
                                               {"envFile", "envFile", K_STR},
                                               {"encoding", "encoding", K_STR},
                                               {"url", "url", K_STR},
                                               {"headers", "headers", K_ENV},
                                               {"timeout", "timeout", K_DURATION},
                                               {"sse_read_timeout", "sse_read_timeout", K_DURATION},
                                               {"terminate_on_close", "terminate_on_close", K_BOOL},
                                               {"request_timeout", "request_timeout", K_DURATION},
                                               {"config", "config", K_ANY},
                                               {"load_tools", "load_tools", K_BOOL},
                                               {"load_prompts", "load_prompts", K_BOOL},
                                               {"name", NULL, K_DONE},
                                               {"description", NULL, K_DONE},
                                               {"type", NULL, K_DONE},
                                               {"server", NULL, K_DONE},
                                               {"transport", NULL, K_DONE},
                                               {NULL, NULL, K_DONE}};

/* One part of an npm package name: lower case letters, digits, "-._~",
 * not starting with '.' or '_'. */
static bool npm_part(const char *s, size_t n)
{
    if (n == 0 || n > 214 || s[0] == '.' || s[0] == '_')
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) &&
            strchr("-._~", s[i]) == NULL)
            return false;
    }
    return true;
}

/* npm's package name rule: "name" or "@scope/name". */
static bool npm_name(const char *s)
{
    const char *slash = strchr(s, '/');

    if (s[0] != '@')
        return npm_part(s, strlen(s));
    return slash != NULL && npm_part(s + 1, (size_t)(slash - s - 1)) &&
           npm_part(slash + 1, strlen(slash + 1));
}

static const char *holodeck_transport(struct imp *im, const char *name, json_t *t)
{
    const char *ts = json_string_value(t);

    if (ts == NULL || strcmp(ts, "stdio") == 0)
        return "stdio";
    if (strcmp(ts, "http") == 0)
        return "streamable_http";
    if (strcmp(ts, "sse") != 0 && strcmp(ts, "websocket") != 0)
        gw_import_warn(im, "tool '%s' has transport '%s', which mcp.yaml does not know", name, ts);
    return ts;
}

/* The legacy form (no transport, no command, no url): HoloDeck runs the
 * `server` npm package with npx. Returns false when it cannot tell. */
static bool holodeck_legacy(struct imp *im, const char *name, json_t *e, json_t *srv)
{
    const char *pkg = json_string_value(json_object_get(e, "server"));

    if (pkg == NULL || !npm_name(pkg)) {
        gw_import_warn(
            im,
            "tool '%s' was not imported: it uses HoloDeck's legacy format (no transport or "
            "command) and its server '%s' is not an npm package",
            name, pkg ? pkg : "");
        return false;
    }
    gw_import_warn(im,
                   "tool '%s' uses HoloDeck's deprecated legacy format (no transport or command): "
                   "imported as 'npx -y %s'",
                   name, pkg);
    json_object_set_new(srv, "command", json_string("npx"));
    json_object_set_new(srv, "args", json_pack("[ss]", "-y", pkg));
    return true;
}

static void holodeck_tool(struct imp *im, json_t *e, size_t i)
{
    const char *name = json_string_value(json_object_get(e, "name"));
    const char *type = json_string_value(json_object_get(e, "type"));
    const char *desc = json_string_value(json_object_get(e, "description"));
    const char *id;
    bool legacy;
    json_t *srv;

    if (type == NULL || strcmp(type, "mcp") != 0) {
        gw_import_warn(im,
                       "tool '%s' (type %s) was not imported: only type: mcp tools are MCP servers",
                       name ? name : "?", type ? type : "missing");
        return;
    }
    if (name == NULL)
        name = json_string_value(json_object_get(e, "server"));
    if (name == NULL) {
        gw_import_warn(im, "tools[%zu] was not imported: it has no name", i);
        return;
    }
    legacy = !json_object_get(e, "transport") && !json_object_get(e, "command") &&
             !json_object_get(e, "url");
    srv = json_object();
    json_object_set_new(srv, "transport",
                        json_string(holodeck_transport(im, name, json_object_get(e, "transport"))));
    if (legacy && !holodeck_legacy(im, name, e, srv)) {
        json_decref(srv);
        return;
    }
    json_t *made = new_server(im, name, "tool name", &id);
    json_object_update(made, srv);
    json_decref(srv);
    copy_fields(im, made, id, e, holodeck_fields);
    if (desc != NULL)
        add_note(im, id, desc);
    if (json_string_value(json_object_get(e, "server")) != NULL) {
        char *note =
            gw_xasprintf("HoloDeck server: %s", json_string_value(json_object_get(e, "server")));
        add_note(im, id, note);
        free(note);
    }
}

static void import_holodeck(struct imp *im, json_t *tools)
{
    json_t *e;
    size_t i;

    im->format = "HoloDeck agent.yaml";
    json_array_foreach(tools, i, e)
    {
        if (json_is_object(e))
            holodeck_tool(im, e, i);
        else
            gw_import_warn(im, "tools[%zu] was not imported: it is not a map", i);
    }
    /* HoloDeck accepts only these commands; keep that policy. */
    json_object_set_new(im->gateway, "allowed_commands",
                        json_pack("[sss]", "npx", "uvx", "docker"));
}

/* ---- chatagent myai.toolbox (seed 004) ---- */

/* A ToolConfig map (max_instances, timeout) as mcp.yaml's; `name` is
 * dropped (its place is the key), other keys reported. */
static json_t *tool_config(struct imp *im, json_t *in, const char *where, bool keep_name)
{
    json_t *out = json_object(), *v;
    const char *k;

    json_object_foreach(in, k, v)
    {
        if (strcmp(k, "max_instances") == 0 || strcmp(k, "timeout") == 0)
            json_object_set_new(out, k, number_value(v));
        else if (strcmp(k, "name") != 0 || !keep_name)
            gw_import_warn(
                im, "%s.%s was not imported: a tool config has only max_instances and timeout",
                where, k);
    }
    return out;
}

static const char *chatagent_transport(struct imp *im, const char *name, const char *t)
{
    if (t == NULL || strcmp(t, "streamable_http") == 0 || strcmp(t, "http") == 0 ||
        strcmp(t, "streamable-http") == 0)
        return "streamable_http";
    if (strcmp(t, "sse") != 0)
        gw_import_warn(im, "mcp '%s' has transport '%s', which mcp.yaml does not know", name, t);
    return t;
}

/* chatagent takes from an MCP server only the prompts its list names, and
 * the list is empty by default: `prompts` means the same in mcp.yaml, so
 * the list is copied as it is, [] where chatagent has none. */
static void chatagent_prompts(struct imp *im, json_t *srv, const char *name, json_t *prompts)
{
    json_t *out = json_array(), *p;
    size_t i;

    if (prompts != NULL && !json_is_null(prompts) && !json_is_array(prompts))
        gw_import_warn(im, "prompts of mcp '%s' were not imported: not a list; no prompt is served",
                       name);
    json_array_foreach(prompts, i, p)
    {
        if (json_is_string(p))
            json_array_append(out, p);
        else
            gw_import_warn(im, "prompts[%zu] of mcp '%s' was not imported: not a string", i, name);
    }
    json_object_set_new(srv, "prompts", out);
}

static void chatagent_mcp(struct imp *im, json_t *e, size_t i)
{
    const char *name = json_string_value(json_object_get(e, "name"));
    const char *mode = json_string_value(json_object_get(e, "mode"));
    json_t *dtc = json_object_get(e, "default_tool_config"), *v, *srv;
    const char *id, *k;

    if (name == NULL) {
        gw_import_warn(im, "mcps[%zu] was not imported: it has no name", i);
        return;
    }
    srv = new_server(im, name, "mcp name", &id);
    json_object_set_new(srv, "transport",
                        json_string(chatagent_transport(
                            im, name, json_string_value(json_object_get(e, "transport")))));
    /* chatagent exits when an MCP server cannot be reached at startup. */
    json_object_set_new(srv, "required", json_true());
    add_note(im, id, "required: chatagent does not start without every MCP server");
    if (json_object_get(e, "url") != NULL) {
        static const struct field url = {"url", "url", K_STR};
        copy_field(im, srv, id, &url, json_object_get(e, "url"));
    }
    if (mode == NULL)
        gw_import_warn(
            im, "mcp '%s' has no mode: imported as strict, chatagent's behaviour before modes",
            name);
    json_object_set_new(srv, "mode", json_string(mode ? mode : "strict"));
    if (json_is_object(dtc)) {
        char *w = gw_xasprintf("mcps[%zu].default_tool_config", i);
        json_object_set_new(srv, "default_tool_config", tool_config(im, dtc, w, false));
        free(w);
    }
    chatagent_prompts(im, srv, name, json_object_get(e, "prompts"));
    json_object_foreach(e, k, v)
    {
        if (strcmp(k, "name") && strcmp(k, "url") && strcmp(k, "transport") && strcmp(k, "mode") &&
            strcmp(k, "default_tool_config") && strcmp(k, "prompts"))
            gw_import_warn(im, "'%s' of mcp '%s' was not imported: mcp.yaml has no such setting", k,
                           name);
    }
}

/* toolbox.tools is one global list in chatagent, matched by name against
 * every MCP server's tools (strict and dynamic alike), and also holding
 * the local tools. mcp.yaml keys tool configs per server. The faithful
 * rule: copy every entry into every server's tool_config, so each server
 * accepts (strict) or overrides (dynamic) exactly what chatagent did; an
 * entry a server does not list only draws mcpgw's "configured tool not
 * listed" warning. */
static void chatagent_tools(struct imp *im, json_t *tools)
{
    json_t *byname = json_object(), *e, *srv;
    const char *id;
    size_t i;

    json_array_foreach(tools, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        char *w = gw_xasprintf("toolbox.tools[%zu]", i);
        if (name == NULL)
            gw_import_warn(im, "%s was not imported: it has no name", w);
        else
            json_object_set_new(byname, name, tool_config(im, e, w, true));
        free(w);
    }
    if (json_object_size(byname) > 0 && json_object_size(im->servers) == 0)
        gw_import_warn(im,
                       "toolbox.tools were not imported: there is no MCP server to attach them to");
    if (json_object_size(byname) > 0 && json_object_size(im->servers) > 1)
        gw_import_warn(
            im,
            "toolbox.tools (%zu) name tools globally, mcp.yaml per server: each was copied "
            "into the tool_config of all %zu servers; remove the ones a server does not list, "
            "and local (non-MCP) tools, which mcpgw does not run",
            json_object_size(byname), json_object_size(im->servers));
    json_object_foreach(im->servers, id, srv)
    {
        if (json_object_size(byname) > 0)
            json_object_set_new(srv, "tool_config", json_deep_copy(byname));
    }
    json_decref(byname);
}

static void import_chatagent(struct imp *im, json_t *box)
{
    json_t *mcps = json_object_get(box, "mcps"), *e, *v;
    const char *k;
    size_t i;

    im->format = "chatagent myai.toolbox";
    v = json_object_get(box, "max_concurrent");
    if (v != NULL)
        json_object_set(im->gateway, "max_concurrent", v);
    json_array_foreach(mcps, i, e)
    {
        if (json_is_object(e))
            chatagent_mcp(im, e, i);
        else
            gw_import_warn(im, "mcps[%zu] was not imported: it is not a map", i);
    }
    chatagent_tools(im, json_object_get(box, "tools"));
    json_object_foreach(box, k, v)
    {
        if (strcmp(k, "max_concurrent") && strcmp(k, "mcps") && strcmp(k, "tools"))
            gw_import_warn(im, "toolbox.%s was not imported: mcp.yaml has no such setting", k);
    }
}

/* ---- detection ---- */

static json_t *path2(json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

/* Launchers that install the server on first start need the network (until
 * sandboxes take destination lists); a container runtime needs its socket,
 * and the container is the server's sandbox. */
static const char *const installers[] = {"npx", "pnpx", "bunx", "uvx", "pipx", "deno"};
static const char *const runtimes[] = {"docker", "podman"};

static bool named(const char *command, const char *const *names, size_t n)
{
    const char *base = strrchr(command, '/') ? strrchr(command, '/') + 1 : command;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(base, names[i]) == 0)
            return true;
    }
    return false;
}

/* Every imported stdio server runs in a sandbox (docs/config.md, Sandbox):
 * the output turns them on, and keeps the network for the ones whose
 * launcher installs them. */
static void sandbox_servers(struct imp *im)
{
    const char *id;
    json_t *srv;
    bool any = false;
    json_object_foreach(im->servers, id, srv)
    {
        const char *cmd = json_string_value(json_object_get(srv, "command"));
        if (cmd == NULL)
            continue;
        any = true;
        if (named(cmd, runtimes, sizeof(runtimes) / sizeof(runtimes[0])))
            json_object_set_new(srv, "sandbox", json_false());
        else if (named(cmd, installers, sizeof(installers) / sizeof(installers[0])))
            json_object_set_new(srv, "sandbox", json_pack("{s:s}", "network", "host"));
    }
    if (any)
        json_object_set_new(im->gateway, "sandbox", json_pack("{s:s}", "default", "on"));
}

static int import_tree(struct imp *im, json_t *root)
{
    json_t *v;

    if (!json_is_object(root)) {
        fprintf(im->err, "%s: error: the document is not a map\n", im->file);
        return 1;
    }
    if (json_object_get(root, "version") != NULL && json_object_get(root, "servers") != NULL) {
        fprintf(im->err, "%s: error: this is already an mcp.yaml; check it with --check-config\n",
                im->file);
        return 1;
    }
    if (json_is_object(v = json_object_get(root, "mcpServers"))) {
        im->format = "mcpServers JSON";
        import_clients(im, v);
    } else if (json_is_object(json_object_get(root, "servers"))) {
        import_vscode(im, root);
    } else if (json_is_object(path2(root, "mcp", "servers"))) {
        import_vscode(im, json_object_get(root, "mcp"));
    } else if (json_is_array(v = json_object_get(root, "tools"))) {
        import_holodeck(im, v);
    } else if (json_is_object(v = path2(root, "myai", "toolbox")) ||
               json_is_object(v = json_object_get(root, "toolbox")) ||
               json_is_array(json_object_get(v = root, "mcps"))) {
        import_chatagent(im, v);
    } else {
        fprintf(im->err,
                "%s: error: not a format mcpgw import knows (mcpServers JSON, VS Code "
                "servers, HoloDeck agent.yaml tools, chatagent myai.toolbox)\n",
                im->file);
        return 1;
    }
    if (json_object_size(im->servers) == 0)
        gw_import_warn(im, "no MCP server was found: the output has none");
    sandbox_servers(im);
    return 0;
}

int gw_import_buffer(const char *name, const char *buf, size_t len, FILE *out, FILE *err)
{
    struct imp im = {.file = name,
                     .err = err,
                     .gateway = json_object(),
                     .servers = json_object(),
                     .notes = json_object()};
    json_t *root = gw_import_read(name, buf, len, err);
    int rc = 1;

    if (root != NULL)
        rc = import_tree(&im, root);
    if (rc == 0) {
        char *head = gw_xasprintf("Converted by mcpgw import from %s (%s).", name, im.format);
        gw_import_write_yaml(out, head, im.gateway, im.servers, im.notes);
        free(head);
    }
    json_decref(root);
    json_decref(im.gateway);
    json_decref(im.servers);
    json_decref(im.notes);
    return rc;
}

int gw_import(const char *path, FILE *out, FILE *err)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    int rc;

    if (f == NULL) {
        fprintf(err, "%s: error: cannot open: %s\n", path, strerror(errno));
        return 1;
    }
    buf = gw_xmalloc(GW_IMPORT_MAX_FILE + 1);
    n = fread(buf, 1, GW_IMPORT_MAX_FILE + 1, f);
    if (ferror(f) || n > GW_IMPORT_MAX_FILE) {
        fprintf(err, "%s: error: %s\n", path,
                ferror(f) ? strerror(errno) : "larger than 4 MiB, the limit of mcp.yaml too");
        rc = 1;
    } else {
        rc = gw_import_buffer(path, buf, n, out, err);
    }
    free(buf);
    fclose(f);
    return rc;
}
