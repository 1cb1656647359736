/* Redaction of configured secrets from what a server prints (security.md
 * P6): a server that writes its own API key to stderr must not publish it
 * through /v1/servers, Problems, events or the log.
 *
 * A redactor holds the secret values of one server: its env values (envFile
 * entries included), its header values, its sessionId, and any extra value
 * the owner adds (the gateway's auth token). Values shorter than
 * GW_REDACT_MIN_LEN bytes are not treated as secrets: a one- to three-byte
 * value ("1", "on", "dev") would blank out most of every line, and such a
 * value protects nothing anyway. The minimum also makes the replacement
 * "***" never longer than what it replaces, so redaction works in place.
 *
 * What is masked in a line:
 * - every occurrence of a secret (longest first where they overlap);
 * - a line's end that is the first GW_REDACT_MIN_LEN or more bytes of a
 *   secret, and a line's start that is its last GW_REDACT_MIN_LEN or more
 *   bytes: a secret printed across two lines (or cut by a read) shows
 *   neither half;
 * - in a truncated line, any end that begins a secret, however short, since
 *   the rest of it was cut.
 * It is a guard against a server echoing its configuration, not against a
 * hostile server, which can always encode the value first.
 *
 * Where it applies: stderr lines as they enter (upstream_stdio); what the
 * MCP client logs of a dropped line and an initialize failure; every
 * string of a server's JSON-RPC error as the MCP client receives it
 * (mcp_client_mask.c); HTTP error excerpts (upstream_http); every server
 * Problem, lastError and lease event (gw_servers_mask). */
#ifndef GW_REDACT_H
#define GW_REDACT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "gw/config.h"

#define GW_REDACT_MIN_LEN 4

struct gw_redact;

/* An empty redactor (redacts nothing). Never NULL. */
struct gw_redact *gw_redact_new(void);

/* Adds `value` as a secret (copied); a duplicate or a value shorter than
 * GW_REDACT_MIN_LEN is ignored. NULL is ignored. */
void gw_redact_add(struct gw_redact *r, const char *value);

/* Adds the secrets of a server's configuration: env values, header values
 * and the sessionId. */
void gw_redact_add_server(struct gw_redact *r, const struct gw_server_config *cfg);

/* How many secrets it holds. */
size_t gw_redact_count(const struct gw_redact *r);

/* Masks the secrets in buf[0..len) in place and returns the new length,
 * never larger than len. `truncated` says the line was cut after its
 * len bytes. */
size_t gw_redact_line(const struct gw_redact *r, char *buf, size_t len, bool truncated);

/* A new copy of `v` with the secrets of each of r[0..n) (a NULL one is
 * skipped) masked in every string and object key, each on its own, never
 * in serialised text, where an escape would hide them. Arrays and objects
 * deeper than `max_depth` are replaced whole by "***"; so is a string a
 * partial mask left invalid UTF-8. The caller owns the result. */
json_t *gw_redact_json(const struct gw_redact *const *r, size_t n, const json_t *v,
                       unsigned max_depth);

void gw_redact_free(struct gw_redact *r);

#endif
