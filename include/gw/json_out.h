/* Compact JSON serialisation for the per-call paths. */
#ifndef GW_JSON_OUT_H
#define GW_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>
#include <string.h>

/* The text json_dumps(j, JSON_COMPACT) gives, byte for byte but for reals,
 * and its length in *len (may be NULL). NULL where json_dumps fails (a top
 * level that is not an object or array, a string that is not UTF-8). Free
 * with free(). jansson 2.14 runs a loop check per container (a "%p"
 * snprintf and a hash insert) and grows its buffer by small steps; this
 * writer does neither, and uses json_dumps for reals (jansson's form, with
 * the fewest of 15 to 17 significant digits that read back as the same
 * double: 0.1, not 0.10000000000000001) and very deep trees (where only
 * jansson's loop check tells a cycle from depth). */
char *gw_json_dump(const json_t *j, size_t *len);

/* JSON text written piece by piece, for messages whose envelope is known
 * (a JSON-RPC request around its params): no tree is built for it. Start
 * from {0}; every put grows the buffer. */
struct gw_jbuf {
    char *p;
    size_t len, cap;
};

/* Room for n more bytes and a NUL (gw_jbuf_put's slow half). */
void gw_jbuf_reserve(struct gw_jbuf *b, size_t n);

/* Bytes as they are: the caller writes the punctuation. Inline: an answer
 * is written in some forty pieces, most of them a byte or two, and a call
 * per piece cost ~25 instructions before the copy. */
static inline void gw_jbuf_put(struct gw_jbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap)
        gw_jbuf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}
/* A string literal's bytes, its length counted by the compiler. */
#define gw_jbuf_lit(b, lit) gw_jbuf_put((b), "" lit, sizeof(lit) - 1)
/* `s` quoted and escaped; -1 (and a buffer to discard) if not UTF-8. */
int gw_jbuf_string(struct gw_jbuf *b, const char *s, size_t n);
void gw_jbuf_int(struct gw_jbuf *b, json_int_t v);
/* Any value as json_dumps(JSON_COMPACT | JSON_ENCODE_ANY) writes it (reals
 * as gw_json_dump writes them); -1 where that fails (not UTF-8, a cycle). */
int gw_jbuf_value(struct gw_jbuf *b, const json_t *j);
/* The text, NUL-terminated, for free(); `b` is empty again. */
char *gw_jbuf_take(struct gw_jbuf *b, size_t *len);

#endif
