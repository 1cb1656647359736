/* Compact JSON serialisation for the per-call paths. */
#ifndef GW_JSON_OUT_H
#define GW_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>

/* The text json_dumps(j, JSON_COMPACT) gives, byte for byte, and its
 * length in *len (may be NULL). NULL where json_dumps fails (a top level
 * that is not an object or array, a string that is not UTF-8). Free with
 * free(). jansson 2.14 runs a loop check per container (a "%p" snprintf
 * and a hash insert) and grows its buffer by small steps; this writer
 * does neither, and falls back to json_dumps where it would differ:
 * reals (their formatting is jansson's own) and very deep trees (where
 * only jansson's loop check tells a cycle from depth). */
char *gw_json_dump(const json_t *j, size_t *len);

#endif
