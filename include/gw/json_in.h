/* JSON parsing for the per-call paths. */
#ifndef GW_JSON_IN_H
#define GW_JSON_IN_H

#include <jansson.h>
#include <stddef.h>

/* What json_loadb(buf, len, flags, err) gives: the same tree (same values,
 * same key order) or, on any error, json_loadb's own NULL and message.
 * flags may hold JSON_REJECT_DUPLICATES and JSON_DECODE_ANY; any other
 * flag goes straight to json_loadb. jansson's lexer copies each character
 * through a growable buffer and each token through a string; this parser
 * reads the buffer in place and builds the tree with the same jansson
 * constructors. Anything it does not take on itself (a syntax error, an
 * escaped NUL or lone surrogate, an integer beyond 64 bits, a real that
 * overflows, nesting deeper than 64) is handed to json_loadb whole, so
 * errors, limits and messages stay jansson's. */
json_t *gw_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err);

#endif
