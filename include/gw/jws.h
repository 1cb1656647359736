/* Signed JWTs (RFC 7515/7519) for private_key_jwt client authentication
 * (RFC 7523 section 2.2): ES256 (P-256) or RS256 (RSA >= 2048 bits).
 * libcrypto (libcrypto.so.3, Debian libssl3, already a dependency of
 * libcurl) is loaded with dlopen at the first key, so a gateway that never
 * signs never maps it. A key is never logged; callers own their PEM text. */
#ifndef GW_JWS_H
#define GW_JWS_H

#include <stddef.h>
#include <stdint.h>

#define GW_JWS_LIB "libcrypto.so.3"

struct gw_jws_key;

/* Reads a PEM private key (PKCS#8, or a traditional EC/RSA key). Returns 0
 * with *out set, -ENOTSUP when libcrypto cannot be loaded, or -EINVAL for
 * text that is no usable key; `why` says which (never quoting the key). */
int gw_jws_key_load(const char *pem, struct gw_jws_key **out, char *why, size_t cap);
void gw_jws_key_free(struct gw_jws_key *k);

/* "ES256" or "RS256". */
const char *gw_jws_alg(const struct gw_jws_key *k);

/* An ECDSA-Sig-Value (DER SEQUENCE of two INTEGERs) as JWS wants it: r
 * and s, each 32 bytes big-endian (RFC 7518 section 3.4). Returns 0 or
 * -EINVAL. */
int gw_jws_ecdsa_der_to_raw(const unsigned char *der, size_t len, unsigned char raw[64]);

/* The compact JWS of a client assertion: iss = sub = client_id, aud, a
 * random jti, iat = now, exp = now + GW_JWS_ASSERTION_SECS. A heap string,
 * or NULL with `why` set. */
#define GW_JWS_ASSERTION_SECS 120
char *gw_jws_client_assertion(const struct gw_jws_key *k, const char *client_id, const char *aud,
                              int64_t now, char *why, size_t cap);

#endif
