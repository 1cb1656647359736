/* mcpgw import, writing: a jansson tree as block-style YAML, by hand.
 * libyaml's emitter writes `yes`, `123` or `~` plain when asked for a
 * string: resolving plain scalars to booleans and numbers is a reader's
 * job it leaves out. Here a string is plain only when no YAML reader (1.1
 * or 1.2) could take it for anything else, single-quoted when it can be,
 * and double-quoted with escapes otherwise. test_import.c reloads hostile
 * strings through the config loader to hold this to account. */
#include "gw/import_internal.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "gw/util.h"

static bool is_special_word(const char *s)
{
    static const char *const w[] = {"null", "~",   "true", "false", "yes", "no",
                                    "on",   "off", "y",    "n",     "nan", "inf"};

    for (size_t i = 0; i < GW_ARRAY_SIZE(w); i++) {
        if (strcasecmp(s, w[i]) == 0)
            return true;
    }
    return false;
}

/* Plain only when no YAML reader could take it for anything but this
 * string: a conservative character set, a letter or '_' or '/' first, no
 * ": ", "#", flow indicators, and not a 1.1 boolean or null. */
static bool plain_ok(const char *s)
{
    if (!isalpha((unsigned char)s[0]) && s[0] != '_' && s[0] != '/')
        return false;
    for (const char *p = s; *p != '\0'; p++) {
        if (!isalnum((unsigned char)*p) && strchr("_-./@=+", *p) == NULL)
            return false;
    }
    return !is_special_word(s) && strlen(s) <= 120;
}

/* Characters YAML allows in a quoted scalar without escaping (its
 * printable set, YAML 1.1 §5.1), decoded from UTF-8. Returns the length
 * of the sequence at s when printable, else 0. */
static size_t printable_at(const unsigned char *s, unsigned *cp)
{
    size_t n = s[0] < 0x80 ? 1 : (s[0] >> 5) == 6 ? 2 : (s[0] >> 4) == 14 ? 3 : 4;
    unsigned c = n == 1 ? s[0] : n == 2 ? s[0] & 0x1F : n == 3 ? s[0] & 0x0F : s[0] & 0x07;

    for (size_t i = 1; i < n; i++)
        c = (c << 6) | (s[i] & 0x3F);
    *cp = c;
    /* NEL, LS and PS are printable but YAML 1.1 folds them as line breaks. */
    if (c == 0x85 || c == 0x2028 || c == 0x2029)
        return 0;
    if (c == '\t' || (c >= 0x20 && c <= 0x7E) || (c >= 0xA0 && c <= 0xD7FF) ||
        (c >= 0xE000 && c <= 0xFFFD && c != 0xFEFF) || (c >= 0x10000 && c <= 0x10FFFF))
        return n;
    return 0;
}

static bool single_quote_ok(const char *s)
{
    unsigned cp;

    for (const unsigned char *p = (const unsigned char *)s; *p != '\0';) {
        size_t n = printable_at(p, &cp);
        if (n == 0 || cp == '\t')
            return false;
        p += n;
    }
    return true;
}

static void emit_double_quoted(FILE *out, const char *s)
{
    unsigned cp;

    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0';) {
        size_t n = printable_at(p, &cp);
        if (n > 0 && cp != '"' && cp != '\\' && cp != '\t') {
            fwrite(p, 1, n, out);
            p += n;
            continue;
        }
        if (n == 0)
            n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : 4;
        if (cp == '"' || cp == '\\')
            fprintf(out, "\\%c", (char)cp);
        else if (cp == '\n' || cp == '\t' || cp == '\r')
            fprintf(out, "\\%c", cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r');
        else if (cp <= 0xFFFF)
            fprintf(out, "\\u%04X", cp);
        else
            fprintf(out, "\\U%08X", cp);
        p += n;
    }
    fputc('"', out);
}

static void emit_string(FILE *out, const char *s)
{
    if (plain_ok(s)) {
        fputs(s, out);
    } else if (single_quote_ok(s)) {
        fputc('\'', out);
        for (; *s != '\0'; s++) {
            if (*s == '\'')
                fputc('\'', out);
            fputc(*s, out);
        }
        fputc('\'', out);
    } else {
        emit_double_quoted(out, s);
    }
}

static void emit_scalar(FILE *out, const json_t *v)
{
    if (json_is_string(v)) {
        emit_string(out, json_string_value(v));
    } else if (json_is_integer(v)) {
        fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else if (json_is_real(v)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
        /* keep it a float for readers that type numbers */
        fprintf(out, "%s%s", buf, strpbrk(buf, ".eE") ? "" : ".0");
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "true" : "false", out);
    } else {
        fputs("null", out);
    }
}

static bool is_scalar(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

static bool all_scalars(const json_t *a)
{
    json_t *v;
    size_t i;

    json_array_foreach(a, i, v)
    {
        if (!is_scalar(v))
            return false;
    }
    return true;
}

static void emit_block(FILE *out, const json_t *v, int indent, bool inline_first);

/* The text after "key:" or "- ": a scalar, a flow list of scalars, {} or
 * [], or a newline and a nested block. */
static void emit_after_indicator(FILE *out, const json_t *v, int indent)
{
    if (is_scalar(v)) {
        fputc(' ', out);
        emit_scalar(out, v);
        fputc('\n', out);
    } else if (json_is_object(v) && json_object_size(v) == 0) {
        fputs(" {}\n", out);
    } else if (json_is_array(v) && all_scalars(v)) {
        json_t *item;
        size_t i;
        fputs(" [", out);
        json_array_foreach(v, i, item)
        {
            fputs(i ? ", " : "", out);
            emit_scalar(out, item);
        }
        fputs("]\n", out);
    } else {
        fputc('\n', out);
        emit_block(out, v, indent + 2, false);
    }
}

static void emit_block(FILE *out, const json_t *v, int indent, bool inline_first)
{
    const char *k;
    json_t *item;
    size_t i;

    if (json_is_object(v)) {
        bool first = true;
        json_object_foreach((json_t *)v, k, item)
        {
            fprintf(out, "%*s", first && inline_first ? 0 : indent, "");
            first = false;
            emit_string(out, k);
            fputc(':', out);
            emit_after_indicator(out, item, indent);
        }
        return;
    }
    json_array_foreach(v, i, item)
    {
        fprintf(out, "%*s-", indent, "");
        if (json_is_object(item) && json_object_size(item) > 0) {
            fputc(' ', out);
            emit_block(out, item, indent + 2, true);
        } else {
            emit_after_indicator(out, item, indent);
        }
    }
}

/* "# text" lines; control characters cannot end a comment early. */
static void emit_comment(FILE *out, const char *text, int indent)
{
    fprintf(out, "%*s# ", indent, "");
    for (const char *p = text; *p != '\0'; p++) {
        if (*p == '\n' && p[1] != '\0')
            fprintf(out, "\n%*s# ", indent, "");
        else if ((unsigned char)*p >= 0x20 && *p != 0x7F)
            fputc(*p, out);
        else if (*p != '\n')
            fputc(' ', out);
    }
    fputc('\n', out);
}

void gw_import_write_yaml(FILE *out, const char *head, const json_t *gateway, const json_t *servers,
                          const json_t *notes)
{
    const char *id;
    json_t *srv;

    emit_comment(out, head, 0);
    fputs("version: 1\n", out);
    if (json_object_size(gateway) > 0) {
        fputs("gateway:\n", out);
        emit_block(out, gateway, 2, false);
    }
    if (json_object_size(servers) == 0) {
        fputs("servers: {}\n", out);
        return;
    }
    fputs("servers:\n", out);
    json_object_foreach((json_t *)servers, id, srv)
    {
        const char *note = json_string_value(json_object_get(notes, id));
        if (note != NULL)
            emit_comment(out, note, 2);
        fputs("  ", out);
        emit_string(out, id);
        fputc(':', out);
        emit_after_indicator(out, srv, 2);
    }
}
