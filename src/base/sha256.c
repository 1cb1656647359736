/* SHA-256 as FIPS 180-4 gives it (see sha256.h for why it is here). */
#include "gw/sha256.h"

#include <stdbool.h>
#include <string.h>

static const uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

/* The portable rounds, with the eight working variables renamed instead
 * of moved each round. */
static void compress_c(uint32_t h[8], const unsigned char p[64])
{
    uint32_t w[64], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];

    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/* The x86 SHA extensions (most CPUs since 2017): a block in a few dozen
 * instructions. Every request's bearer token is hashed (the gate), so
 * this is on the per-call path. */
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_ni(uint32_t h[8],
                                                                    const unsigned char p[64])
{
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i st0, st1, tmp, msg, w[4], abef, cdgh;

    tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1);
    st1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B);
    st0 = _mm_alignr_epi8(tmp, st1, 8);
    st1 = _mm_blend_epi16(st1, tmp, 0xF0);
    abef = st0;
    cdgh = st1;
    for (int i = 0; i < 16; i++) {
        if (i < 4)
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), mask);
        else
            w[i % 4] = _mm_sha256msg2_epu32(
                _mm_add_epi32(_mm_sha256msg1_epu32(w[i % 4], w[(i + 1) % 4]),
                              _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4)),
                w[(i + 3) % 4]);
        msg = _mm_add_epi32(w[i % 4], _mm_loadu_si128((const __m128i *)&k[4 * i]));
        st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
        st0 = _mm_sha256rnds2_epu32(st0, st1, _mm_shuffle_epi32(msg, 0x0E));
    }
    st0 = _mm_add_epi32(st0, abef);
    st1 = _mm_add_epi32(st1, cdgh);
    tmp = _mm_shuffle_epi32(st0, 0x1B);
    st1 = _mm_shuffle_epi32(st1, 0xB1);
    st0 = _mm_blend_epi16(tmp, st1, 0xF0);
    st1 = _mm_alignr_epi8(st1, tmp, 8);
    _mm_storeu_si128((__m128i *)&h[0], st0);
    _mm_storeu_si128((__m128i *)&h[4], st1);
}

static bool has_sha_ni(void)
{
    unsigned a, b, c, d;

    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3))
        return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}
#endif

static void compress(uint32_t h[8], const unsigned char p[64])
{
#if defined(__x86_64__)
    static int ni = -1;

    if (ni < 0)
        ni = has_sha_ni();
    if (ni) {
        compress_ni(h, p);
        return;
    }
#endif
    compress_c(h, p);
}

void gw_sha256_init(struct gw_sha256 *c)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

    memcpy(c->h, iv, sizeof(iv));
    c->nbytes = 0;
    c->fill = 0;
}

void gw_sha256_update(struct gw_sha256 *c, const void *data, size_t n)
{
    const unsigned char *p = data;

    c->nbytes += n;
    while (n > 0) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->block + c->fill, p, take);
        c->fill += take;
        p += take;
        n -= take;
        if (c->fill == 64) {
            compress(c->h, c->block);
            c->fill = 0;
        }
    }
}

/* Big-endian stores: one byte swap where the host is little-endian. */
static void put_be32(unsigned char *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
    memcpy(p, &v, sizeof v);
#else
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
#endif
}

void gw_sha256_final(struct gw_sha256 *c, unsigned char out[GW_SHA256_LEN])
{
    uint64_t bits = c->nbytes * 8;
    unsigned char len[8];

    put_be32(len, (uint32_t)(bits >> 32));
    put_be32(len + 4, (uint32_t)bits);
    /* the padding written in place: every request's bearer token is
     * hashed, and a byte-at-a-time update cost more than the rounds */
    c->block[c->fill++] = 0x80;
    if (c->fill > 56) {
        memset(c->block + c->fill, 0, 64 - c->fill);
        compress(c->h, c->block);
        c->fill = 0;
    }
    memset(c->block + c->fill, 0, 56 - c->fill);
    memcpy(c->block + 56, len, sizeof(len));
    compress(c->h, c->block);
    for (int i = 0; i < 8; i++)
        put_be32(out + 4 * i, c->h[i]);
}

void gw_hmac_sha256_init(struct gw_hmac_sha256 *c, const void *key, size_t keylen)
{
    unsigned char block[64] = {0}, ikey[64];

    if (keylen > sizeof block) {
        struct gw_sha256 h;
        gw_sha256_init(&h);
        gw_sha256_update(&h, key, keylen);
        gw_sha256_final(&h, block);
    } else if (keylen > 0) {
        memcpy(block, key, keylen);
    }
    for (size_t i = 0; i < sizeof block; i++) {
        ikey[i] = block[i] ^ 0x36;
        c->okey[i] = block[i] ^ 0x5c;
    }
    gw_sha256_init(&c->inner);
    gw_sha256_update(&c->inner, ikey, sizeof ikey);
}

void gw_hmac_sha256_update(struct gw_hmac_sha256 *c, const void *data, size_t n)
{
    gw_sha256_update(&c->inner, data, n);
}

void gw_hmac_sha256_final(struct gw_hmac_sha256 *c, unsigned char out[GW_SHA256_LEN])
{
    unsigned char ih[GW_SHA256_LEN];
    struct gw_sha256 outer;

    gw_sha256_final(&c->inner, ih);
    gw_sha256_init(&outer);
    gw_sha256_update(&outer, c->okey, sizeof c->okey);
    gw_sha256_update(&outer, ih, sizeof ih);
    gw_sha256_final(&outer, out);
}
