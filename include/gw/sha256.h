/* SHA-256 (FIPS 180-4), for fingerprints of data an adversary chooses: the
 * catalog remembers each tool's first definition by digest (security.md
 * S8), and a non-cryptographic hash would let a server craft a changed
 * definition with the same fingerprint. Streaming, no allocation. */
#ifndef GW_SHA256_H
#define GW_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GW_SHA256_LEN 32

struct gw_sha256 {
    uint32_t h[8];
    uint64_t nbytes;
    unsigned char block[64];
    size_t fill;
};

void gw_sha256_init(struct gw_sha256 *c);
void gw_sha256_update(struct gw_sha256 *c, const void *data, size_t n);
/* Writes the digest; the context must be initialised again before reuse. */
void gw_sha256_final(struct gw_sha256 *c, unsigned char out[GW_SHA256_LEN]);

/* HMAC-SHA256 (RFC 2104), streaming: a message authentication code under a
 * secret key, for tokens the gateway hands out and must recognise when
 * they come back unchanged (input rounds' requestState). Keys longer than
 * a block are hashed first, as the RFC says. */
struct gw_hmac_sha256 {
    struct gw_sha256 inner;
    unsigned char okey[64]; /* the key XOR opad, for the outer hash */
};

void gw_hmac_sha256_init(struct gw_hmac_sha256 *c, const void *key, size_t keylen);
void gw_hmac_sha256_update(struct gw_hmac_sha256 *c, const void *data, size_t n);
void gw_hmac_sha256_final(struct gw_hmac_sha256 *c, unsigned char out[GW_SHA256_LEN]);

#endif
