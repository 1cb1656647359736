/* Internals shared by import.c, import_read.c and import_yaml.c. Nothing
 * outside the import module includes this. */
#ifndef GW_IMPORT_INTERNAL_H
#define GW_IMPORT_INTERNAL_H

#include <jansson.h>
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

#endif
