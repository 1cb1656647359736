/* mcpgw import, reading: any input becomes a jansson tree. JSON (with
 * VS Code's comments and trailing commas) through jansson, YAML through
 * gw_yaml_tree with PyYAML's scalar typing, since the YAML formats we
 * import (HoloDeck, chatagent) are read by PyYAML. */
#include "gw/import_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gw/util.h"
#include "gw/yaml_tree.h"

struct rd {
    const char *file;
    FILE *err;
};

static void warn(struct rd *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(struct rd *im, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    gw_import_vwarn(im->err, im->file, fmt, ap);
    va_end(ap);
}

/* Steps through string literals: true when s[*i] belongs to one (an
 * escape takes two bytes, *i moves past the first). */
static bool in_string(const char *s, size_t n, size_t *i, bool *str)
{
    if (*str) {
        if (s[*i] == '\\' && *i + 1 < n)
            (*i)++;
        else if (s[*i] == '"')
            *str = false;
        return true;
    }
    *str = s[*i] == '"';
    return *str;
}

/* Blanks out // and slash-star comments outside strings, keeping newlines
 * so jansson's line numbers still match the file. */
static void strip_comments(char *s, size_t n)
{
    bool str = false;

    for (size_t i = 0; i < n; i++) {
        if (in_string(s, n, &i, &str))
            continue;
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
            for (; i < n && s[i] != '\n'; i++)
                s[i] = ' ';
        } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            size_t j = i + 2;
            while (j + 1 < n && !(s[j] == '*' && s[j + 1] == '/'))
                j++;
            for (size_t end = j + 2 < n ? j + 2 : n; i < end; i++)
                s[i] = s[i] == '\n' ? '\n' : ' ';
            i--;
        }
    }
}

/* Blanks out commas followed only by blanks and a closing bracket (JSONC's
 * trailing commas). Runs after strip_comments. */
static void strip_trailing_commas(char *s, size_t n)
{
    bool str = false;

    for (size_t i = 0; i < n; i++) {
        if (in_string(s, n, &i, &str))
            continue;
        if (s[i] == ',') {
            size_t j = i + 1;
            while (j < n && isspace((unsigned char)s[j]))
                j++;
            if (j < n && (s[j] == '}' || s[j] == ']'))
                s[i] = ' ';
        }
    }
}

static json_t *read_json(struct rd *im, const char *buf, size_t len)
{
    char *copy = gw_xstrndup(buf, len);
    json_error_t e;
    json_t *root;

    strip_comments(copy, len);
    strip_trailing_commas(copy, len);
    root = json_loadb(copy, len, JSON_REJECT_DUPLICATES, &e);
    free(copy);
    if (root == NULL)
        fprintf(im->err, "%s:%d:%d: error: invalid JSON: %s\n", im->file, e.line, e.column, e.text);
    return root;
}

/* PyYAML (YAML 1.1) reads these plain scalars as booleans; HoloDeck and
 * chatagent load their files with it, so `load_tools: yes` means true. */
static int yaml11_bool(const char *s, bool *out)
{
    static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char *const f[] = {"false", "False", "FALSE", "no", "No",
                                    "NO",    "off",   "Off",   "OFF"};

    for (size_t i = 0; i < GW_ARRAY_SIZE(t); i++) {
        if (strcmp(s, t[i]) == 0 || strcmp(s, f[i]) == 0) {
            *out = strcmp(s, t[i]) == 0;
            return 0;
        }
    }
    return -1;
}

static json_t *yaml_scalar(const struct gw_yaml_node *n)
{
    bool b;
    char *end;

    if (!n->plain || (n->tag != NULL && strstr(n->tag, ":str") != NULL))
        return json_stringn(n->str, n->len);
    if (gw_yaml_is_null(n))
        return json_null();
    if (yaml11_bool(n->str, &b) == 0)
        return json_boolean(b);
    if (n->len > 0 && strspn(n->str + (n->str[0] == '-' || n->str[0] == '+'), "0123456789") ==
                          n->len - (n->str[0] == '-' || n->str[0] == '+')) {
        errno = 0;
        long long v = strtoll(n->str, &end, 10);
        if (errno == 0 && *end == '\0' && end != n->str)
            return json_integer(v);
    }
    if (strpbrk(n->str, "0123456789") && strspn(n->str, "0123456789+-.eE") == n->len) {
        double d = strtod(n->str, &end);
        if (*end == '\0' && isfinite(d))
            return json_real(d);
    }
    return json_stringn(n->str, n->len);
}

static json_t *yaml_to_json(struct rd *im, const struct gw_yaml_node *n);

static json_t *yaml_map(struct rd *im, const struct gw_yaml_node *n)
{
    json_t *o = json_object();

    for (size_t i = 0; i < gw_yaml_map_len(n); i++) {
        const struct gw_yaml_node *k = gw_yaml_map_key(n, i);
        json_t *v;
        if (k->kind != GW_YAML_SCALAR || strlen(k->str) != k->len) {
            fprintf(im->err, "%s:%d:%d: error: a key is not a string\n", im->file, k->line, k->col);
            json_decref(o);
            return NULL;
        }
        if (json_object_get(o, k->str) != NULL)
            warn(im, "line %d: duplicate key '%s': the last one was imported", k->line, k->str);
        v = yaml_to_json(im, gw_yaml_map_value(n, i));
        if (v == NULL || json_object_set_new(o, k->str, v) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *yaml_to_json(struct rd *im, const struct gw_yaml_node *n)
{
    json_t *v;

    if (n->kind == GW_YAML_MAP)
        return yaml_map(im, n);
    if (n->kind == GW_YAML_SCALAR) {
        v = yaml_scalar(n);
        if (v == NULL)
            fprintf(im->err, "%s:%d:%d: error: a value is not valid UTF-8\n", im->file, n->line,
                    n->col);
        return v;
    }
    v = json_array();
    for (size_t i = 0; i < n->nkids; i++) {
        json_t *item = yaml_to_json(im, n->kids[i]);
        if (item == NULL) {
            json_decref(v);
            return NULL;
        }
        json_array_append_new(v, item);
    }
    return v;
}

static json_t *read_yaml(struct rd *im, const char *buf, size_t len)
{
    struct gw_yaml_doc *doc;
    struct gw_yaml_error e;
    json_t *root = NULL;

    if (gw_yaml_parse(buf, len, 100000, 64, &doc, &e) != 0) {
        fprintf(im->err, "%s:%d:%d: error: %s\n", im->file, e.line, e.col, e.message);
        return NULL;
    }
    if (gw_yaml_root(doc) == NULL)
        fprintf(im->err, "%s: error: the file is empty\n", im->file);
    else
        root = yaml_to_json(im, gw_yaml_root(doc));
    gw_yaml_free(doc);
    return root;
}

/* Runs `read` with messages captured; returns the tree, and the messages
 * in *msg (new string). */
static json_t *captured(struct rd *im, json_t *(*read)(struct rd *, const char *, size_t),
                        const char *buf, size_t len, char **msg)
{
    FILE *real_err = im->err;
    size_t n;
    json_t *root;

    im->err = open_memstream(msg, &n);
    if (im->err == NULL)
        abort();
    root = read(im, buf, len);
    fclose(im->err);
    im->err = real_err;
    return root;
}

/* Where the document proper starts: after blanks and JSONC comments. */
static size_t skip_blanks_and_comments(const char *buf, size_t len)
{
    size_t i = 0;

    for (;;) {
        while (i < len && isspace((unsigned char)buf[i]))
            i++;
        if (i + 1 < len && buf[i] == '/' && buf[i + 1] == '/') {
            while (i < len && buf[i] != '\n')
                i++;
        } else if (i + 1 < len && buf[i] == '/' && buf[i + 1] == '*') {
            const char *end = memmem(buf + i + 2, len - i - 2, "*/", 2);
            i = end ? (size_t)(end - buf) + 2 : len;
        } else {
            return i;
        }
    }
}

/* JSON when the document starts with '{'. A YAML flow map starts so too:
 * when jansson refuses the text and libyaml takes it, it was YAML; when
 * both refuse it, jansson's message is the one that helps. */
json_t *gw_import_read(const char *file, const char *buf, size_t len, FILE *err)
{
    struct rd rd = {.file = file, .err = err}, *im = &rd;
    char *jmsg = NULL, *ymsg = NULL;
    json_t *root;
    size_t i;

    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        buf += 3;
        len -= 3;
    }
    i = skip_blanks_and_comments(buf, len);
    if (i == len || buf[i] != '{')
        return read_yaml(im, buf, len);
    root = captured(im, read_json, buf, len, &jmsg);
    if (root == NULL) {
        root = captured(im, read_yaml, buf, len, &ymsg);
        fputs(root != NULL ? ymsg : jmsg, im->err);
    }
    free(jmsg);
    free(ymsg);
    return root;
}
