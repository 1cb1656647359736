/* Base64 (RFC 4648) both ways, for the places that carry bytes as text:
 * binary tool output (result.c), the "=?base64?…?=" header values of
 * 2026-07-28 (mcp_modern.c in, upstream_http_modern.c out) and the sealed
 * requestState of an input round (input_rounds_state.c, base64url). */
#ifndef GW_BASE64_H
#define GW_BASE64_H

#include <stddef.h>

/* Decodes base64 in either alphabet, standard or URL-safe (padding
 * optional, no whitespace inside). Returns the decoded length, or -1 when
 * `in` is not base64. `out` must hold len / 4 * 3 + 3 bytes. */
long gw_base64_decode(const char *in, size_t len, unsigned char *out);

/* Standard base64 of `n` bytes, padded, as a new heap string. */
char *gw_base64_encode(const unsigned char *in, size_t n);

/* base64url of `n` bytes without padding into `out`, which must hold
 * (n * 4 + 2) / 3 + 1 bytes (the text and its NUL). */
void gw_base64url_encode(const unsigned char *in, size_t n, char *out);

#endif
