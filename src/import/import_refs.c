/* References to variables in other tools' configurations (${VAR},
 * ${env:VAR}, ${input:id}, …) turned into mcp.yaml's ${VAR}. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/import_internal.h"
#include "gw/util.h"

static size_t name_len(const char *s)
{
    size_t n = 0;

    if (!isalpha((unsigned char)s[0]) && s[0] != '_')
        return 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    return n;
}

/* VS Code's input id "api-key" as a variable name: API_KEY. */
static char *input_var(const char *id, size_t n)
{
    char *v = gw_xmalloc(n + 2), *p = v;

    if (n == 0 || isdigit((unsigned char)id[0]))
        *p++ = '_';
    for (size_t i = 0; i < n; i++)
        *p++ = isalnum((unsigned char)id[i]) ? (char)toupper((unsigned char)id[i]) : '_';
    *p = '\0';
    return v;
}

/* Rewrites one reference `${inner}` for a server string, where
 * mcp.yaml substitutes ${NAME}: appends the replacement to *out. */
static void convert_ref(struct imp *im, const char *where, const char *inner, size_t n, char **out)
{
    size_t nl = name_len(inner);
    char *r;

    if (nl == n) {
        r = gw_xasprintf("${%.*s}", (int)n, inner);
    } else if (strncmp(inner, "env:", 4) == 0 && name_len(inner + 4) == n - 4) {
        r = gw_xasprintf("${%.*s}", (int)(n - 4), inner + 4);
    } else if (strncmp(inner, "input:", 6) == 0) {
        char *var = input_var(inner + 6, n - 6);
        gw_import_warn(
            im,
            "'${%.*s}' in %s was not imported: mcpgw cannot prompt for input; it now reads "
            "${%s} from the daemon's environment",
            (int)n, inner, where, var);
        r = gw_xasprintf("${%s}", var);
        free(var);
    } else if (nl > 0 && inner[nl] == ':' && inner[nl + 1] == '-') {
        gw_import_warn(
            im,
            "the default of '${%.*s}' in %s was not imported: mcp.yaml has no ${VAR:-default}; "
            "%.*s must be set",
            (int)n, inner, where, (int)nl, inner);
        r = gw_xasprintf("${%.*s}", (int)nl, inner);
    } else {
        gw_import_warn(
            im, "'${%.*s}' in %s is not a variable mcpgw can substitute: kept as literal text",
            (int)n, inner, where);
        r = gw_xasprintf("$${%.*s}", (int)n, inner);
    }
    char *joined = gw_xasprintf("%s%s", *out, r);
    free(*out);
    free(r);
    *out = joined;
}

char *gw_import_convert_refs(struct imp *im, const char *where, const char *s)
{
    char *out = gw_xstrdup("");

    while (*s != '\0') {
        const char *open = strstr(s, "${");
        const char *close = open ? strchr(open + 2, '}') : NULL;
        char *joined;
        if (close == NULL) {
            joined = gw_xasprintf("%s%s", out, s);
            free(out);
            return joined;
        }
        joined = gw_xasprintf("%s%.*s", out, (int)(open - s), s);
        free(out);
        out = joined;
        convert_ref(im, where, open + 2, (size_t)(close - open - 2), &out);
        s = close + 1;
    }
    return out;
}

/* mcp.yaml substitutes ${VAR} in every string of a server but its
 * command (a program resolved at load time). */
void gw_import_check_literal(struct imp *im, const char *where, const char *s)
{
    if (strstr(s, "${") != NULL)
        gw_import_warn(
            im, "'%s' in %s is passed as written: mcpgw does not substitute ${VAR} in a command", s,
            where);
}

/* Every string of a tree (a server's `config`) with its references
 * rewritten for mcp.yaml, in place. */
void gw_import_convert_tree(struct imp *im, const char *where, json_t *v)
{
    const char *k;
    json_t *item;
    size_t i;

    if (json_is_string(v) && strstr(json_string_value(v), "${") != NULL) {
        char *c = gw_import_convert_refs(im, where, json_string_value(v));
        json_string_set(v, c);
        free(c);
    } else if (json_is_object(v)) {
        json_object_foreach(v, k, item)
        {
            char *w = gw_xasprintf("%s.%s", where, k);
            gw_import_convert_tree(im, w, item);
            free(w);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            char *w = gw_xasprintf("%s[%zu]", where, i);
            gw_import_convert_tree(im, w, item);
            free(w);
        }
    }
}
