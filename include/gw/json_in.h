/* JSON parsing for the per-call paths. */
#ifndef GW_JSON_IN_H
#define GW_JSON_IN_H

#include <jansson.h>
#include <stdbool.h>
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

/* Reading an object of known members without building it: each member is
 * named by a field, and only the values a reader needs as a tree are
 * built. A request's envelope is read this way (mcp_modern.c): a tree of
 * the whole body cost ~240 instructions per member and ~130 per object,
 * and as much again to free. */
enum gw_json_want {
    GW_JSON_STRING, /* a string, decoded into the caller's room */
    GW_JSON_TREE,   /* any value, built as gw_json_loadb builds it */
    GW_JSON_OBJECT, /* an object whose members are read with sub */
};

struct gw_json_field {
    const char *key;
    size_t key_len;
    enum gw_json_want want;
    unsigned slot; /* where the value goes in the slots array */
    const struct gw_json_field *sub;
    size_t nsub;
};

#define GW_JSON_FIELD(k, w, s)                                                                     \
    {                                                                                              \
        k, sizeof(k) - 1, w, s, NULL, 0                                                            \
    }
#define GW_JSON_FIELD_OBJECT(k, s, sub)                                                            \
    {                                                                                              \
        k, sizeof(k) - 1, GW_JSON_OBJECT, s, sub, sizeof(sub) / sizeof((sub)[0])                   \
    }

struct gw_json_slot {
    bool seen;
    json_t *tree;    /* GW_JSON_TREE: a new reference */
    const char *str; /* GW_JSON_STRING: NUL-terminated, in the room */
    size_t len;
};

/* 0 when buf holds exactly one object (surrounding whitespace aside)
 * whose every member is one of `fields`, each once, each of the kind its
 * field wants, and as gw_json_loadb with JSON_REJECT_DUPLICATES would read
 * it; the slots (zeroed here, as many as the fields use) then hold the
 * values, strings decoded into `room`. -1 otherwise, with nothing held:
 * any other member, a repeated one, another kind, a syntax error, a
 * string longer than the room left, or what gw_json_loadb hands to
 * json_loadb (nesting deeper than 64, a string holding NUL). The caller
 * then parses the whole body, whose errors and limits are the ones that
 * count. */
int gw_json_read_fields(const char *buf, size_t len, const struct gw_json_field *fields,
                        size_t nfields, struct gw_json_slot *slots, size_t nslots, char *room,
                        size_t room_len);

/* Releases the trees a successful gw_json_read_fields left in the slots. */
void gw_json_slots_release(struct gw_json_slot *slots, size_t nslots);

#endif
