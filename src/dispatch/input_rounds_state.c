/* The requestState of an input round: what it holds, how it is sealed and
 * checked (input_rounds.h). Layout before base64url (no padding):
 *
 *   version (1) | round id (16) | expiry, ms, big-endian (8) | HMAC (32)
 *
 * The HMAC-SHA256 covers the first 25 bytes and the binding: method, name
 * and dialog (each with its length first, so that no two bindings feed
 * the same bytes) and the SHA-256 of the arguments dumped with sorted
 * keys. The binding is not in the token: a retry that names another
 * dialog, tool or arguments recomputes another MAC and fails as a forged
 * state does. */
#include <string.h>

#include "gw/base64.h"
#include "gw/input_rounds.h"
#include "gw/util.h"

#define STATE_VERSION 1
#define STATE_BYTES   (1 + GW_ROUNDS_ID_LEN + 8 + GW_SHA256_LEN)
#define SEALED_BYTES  (1 + GW_ROUNDS_ID_LEN + 8)

_Static_assert((STATE_BYTES * 4 + 2) / 3 == GW_ROUNDS_STATE_LEN, "state length");

/* A requestState is base64url only. The shared decoder reads either
 * alphabet, so the standard one's own characters and padding are refused
 * here. */
static long b64url_decode(const char *in, size_t n, unsigned char *out)
{
    if (strcspn(in, "+/=") < n)
        return -1;
    return gw_base64_decode(in, n, out);
}

static void mac_field(struct gw_hmac_sha256 *h, const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    unsigned char len[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                            (unsigned char)(n >> 8), (unsigned char)n};

    gw_hmac_sha256_update(h, len, sizeof len);
    gw_hmac_sha256_update(h, s != NULL ? s : "", n);
}

static void seal(const unsigned char key[GW_ROUNDS_KEY_LEN], const unsigned char *head,
                 const struct gw_round_bind *b, unsigned char mac[GW_SHA256_LEN])
{
    struct gw_hmac_sha256 h;
    struct gw_sha256 d;
    unsigned char digest[GW_SHA256_LEN];
    char *args = b->arguments != NULL
                     ? json_dumps(b->arguments, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
                     : NULL;

    gw_sha256_init(&d);
    if (args != NULL)
        gw_sha256_update(&d, args, strlen(args));
    gw_sha256_final(&d, digest);
    free(args);
    gw_hmac_sha256_init(&h, key, GW_ROUNDS_KEY_LEN);
    gw_hmac_sha256_update(&h, head, SEALED_BYTES);
    mac_field(&h, b->method);
    mac_field(&h, b->name);
    mac_field(&h, b->dialog);
    mac_field(&h, b->client);
    gw_hmac_sha256_update(&h, digest, sizeof digest);
    gw_hmac_sha256_final(&h, mac);
}

void gw_rounds_state_encode(const unsigned char key[GW_ROUNDS_KEY_LEN],
                            const unsigned char id[GW_ROUNDS_ID_LEN], uint64_t expiry_ms,
                            const struct gw_round_bind *b, char out[GW_ROUNDS_STATE_LEN + 1])
{
    unsigned char raw[STATE_BYTES];

    raw[0] = STATE_VERSION;
    memcpy(raw + 1, id, GW_ROUNDS_ID_LEN);
    for (int i = 0; i < 8; i++)
        raw[1 + GW_ROUNDS_ID_LEN + i] = (unsigned char)(expiry_ms >> (56 - 8 * i));
    seal(key, raw, b, raw + SEALED_BYTES);
    gw_base64url_encode(raw, sizeof raw, out);
}

int gw_rounds_state_decode(const unsigned char key[GW_ROUNDS_KEY_LEN], const char *state,
                           const struct gw_round_bind *b, uint64_t now_ms,
                           unsigned char id[GW_ROUNDS_ID_LEN])
{
    unsigned char raw[STATE_BYTES + 2], mac[GW_SHA256_LEN];
    uint64_t expiry = 0;

    if (state == NULL || strlen(state) != GW_ROUNDS_STATE_LEN ||
        b64url_decode(state, GW_ROUNDS_STATE_LEN, raw) != STATE_BYTES || raw[0] != STATE_VERSION)
        return GW_ROUNDS_E_STATE;
    seal(key, raw, b, mac);
    if (!gw_secure_equal((const char *)mac, sizeof mac, (const char *)raw + SEALED_BYTES,
                         GW_SHA256_LEN))
        return GW_ROUNDS_E_STATE;
    for (int i = 0; i < 8; i++)
        expiry = expiry << 8 | raw[1 + GW_ROUNDS_ID_LEN + i];
    if (now_ms >= expiry)
        return GW_ROUNDS_E_EXPIRED;
    memcpy(id, raw + 1, GW_ROUNDS_ID_LEN);
    return 0;
}
