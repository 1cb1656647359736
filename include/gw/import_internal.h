/* Internals shared by import.c, import_read.c and import_yaml.c. Nothing
 * outside the import module includes this. */
#ifndef GW_IMPORT_INTERNAL_H
#define GW_IMPORT_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>

#include "gw/import.h"

/* Parses `buf` (JSON when it starts with '{' after blanks and comments,
 * else YAML) into a new tree. On failure returns NULL after printing
 * "FILE:LINE:COL: error: …" on `err`; warnings (duplicate keys) also go
 * to `err`. */
json_t *gw_import_read(const char *file, const char *buf, size_t len, FILE *err);

/* Writes `head` as a comment, `version: 1`, `gateway` when not empty and
 * `servers` (each preceded by its comment from `notes`, id → string). */
void gw_import_write_yaml(FILE *out, const char *head, const json_t *gateway, const json_t *servers,
                          const json_t *notes);

/* The importer's state (import.c). */
struct imp {
    const char *file;
    FILE *err;
    const char *format; /* shown in the output's first comment */
    json_t *gateway;    /* mcp.yaml `gateway` keys */
    json_t *servers;    /* id → server object, in output order */
    json_t *notes;      /* id → comment written above the server */
};

/* "FILE: warning: …" on the importer's error stream. */
void gw_import_warn(struct imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gw_import_vwarn(FILE *err, const char *file, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* import_refs.c: other tools' ${…} references in mcp.yaml's forms. */
/* `s` with each ${…} reference rewritten as mcp.yaml's ${NAME}. New
 * string. */
char *gw_import_convert_refs(struct imp *im, const char *where, const char *s);
/* For the command, where mcp.yaml substitutes nothing: warns about a
 * reference left in `s`. */
void gw_import_check_literal(struct imp *im, const char *where, const char *s);
/* Converts the references in every string of `v`, in place. */
void gw_import_convert_tree(struct imp *im, const char *where, json_t *v);

#endif
