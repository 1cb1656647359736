/* JWS signing with libcrypto loaded at first use (see gw/jws.h). The few
 * libcrypto functions are declared here with opaque types, so the build
 * needs no OpenSSL headers, only the runtime library when a key is used. */
#include "gw/jws.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/base64.h"
#include "gw/dynlib.h"
#include "gw/log.h"
#include "gw/util.h"

/* OpenSSL 3's EVP_PKEY_EC and EVP_PKEY_RSA (NIDs, stable ABI values). */
#define PKEY_RSA 6
#define PKEY_EC  408

typedef int (*pem_cb)(char *buf, int size, int rwflag, void *u);

static struct {
    void *(*BIO_new_mem_buf)(const void *buf, int len);
    int (*BIO_free)(void *bio);
    void *(*PEM_read_bio_PrivateKey)(void *bio, void **x, pem_cb cb, void *u);
    void (*EVP_PKEY_free)(void *pkey);
    int (*EVP_PKEY_get_base_id)(const void *pkey);
    int (*EVP_PKEY_get_bits)(const void *pkey);
    int (*EVP_PKEY_get_utf8_string_param)(const void *pkey, const char *name, char *buf, size_t cap,
                                          size_t *len);
    void *(*EVP_MD_CTX_new)(void);
    void (*EVP_MD_CTX_free)(void *ctx);
    int (*EVP_DigestSignInit)(void *ctx, void **pctx, const void *md, void *engine, void *pkey);
    int (*EVP_DigestSign)(void *ctx, unsigned char *sig, size_t *siglen, const unsigned char *tbs,
                          size_t len);
    const void *(*EVP_sha256)(void);
    void (*ERR_clear_error)(void);
} fn;

#define SYM(name)                                                                                  \
    {                                                                                              \
#name, offsetof(__typeof__(fn), name)                                                      \
    }
static const struct gw_dynsym syms[] = {
    SYM(BIO_new_mem_buf),
    SYM(BIO_free),
    SYM(PEM_read_bio_PrivateKey),
    SYM(EVP_PKEY_free),
    SYM(EVP_PKEY_get_base_id),
    SYM(EVP_PKEY_get_bits),
    SYM(EVP_PKEY_get_utf8_string_param),
    SYM(EVP_MD_CTX_new),
    SYM(EVP_MD_CTX_free),
    SYM(EVP_DigestSignInit),
    SYM(EVP_DigestSign),
    SYM(EVP_sha256),
    SYM(ERR_clear_error),
};
#undef SYM

static bool loaded;

static int load(char *why, size_t cap)
{
    if (loaded)
        return 0;
    static const struct gw_dynlib lib = {
        .soname = GW_JWS_LIB,
        .flags = RTLD_LOCAL,
        .needed_by = "private_key_jwt signing needs (Debian package libssl3)",
        .version = "OpenSSL 3 is needed",
        .syms = syms,
        .nsyms = sizeof(syms) / sizeof(syms[0]),
    };
    void *h;
    int rc = gw_dynlib_open(&lib, &fn, &h, why, cap);
    if (rc != 0)
        return rc;
    loaded = true;
    gw_log(GW_LOG_INFO, "libcrypto loaded", "library", GW_JWS_LIB, NULL);
    return 0;
}

struct gw_jws_key {
    void *pkey;
    bool ec;
};

/* An encrypted key is refused rather than prompted for on the terminal,
 * which is what a NULL callback would do. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

int gw_jws_key_load(const char *pem, struct gw_jws_key **out, char *why, size_t cap)
{
    *out = NULL;
    int rc = load(why, cap);
    if (rc != 0)
        return rc;
    size_t n = strlen(pem);
    void *bio = n < INT32_MAX ? fn.BIO_new_mem_buf(pem, (int)n) : NULL;
    void *pkey = bio ? fn.PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    if (bio)
        fn.BIO_free(bio);
    fn.ERR_clear_error();
    if (pkey == NULL) {
        gw_say(why, cap,
               "is not a PEM private key (or is encrypted: give it unencrypted, readable "
               "only by the gateway)");
        return -EINVAL;
    }
    int id = fn.EVP_PKEY_get_base_id(pkey);
    char group[32] = "";
    size_t glen = 0;
    if (id == PKEY_EC &&
        (fn.EVP_PKEY_get_utf8_string_param(pkey, "group", group, sizeof(group), &glen) != 1 ||
         strcmp(group, "prime256v1") != 0)) {
        gw_say(why, cap, "is an EC key on curve %s; ES256 needs P-256 (prime256v1)",
               group[0] ? group : "(unknown)");
        rc = -EINVAL;
    } else if (id == PKEY_RSA && fn.EVP_PKEY_get_bits(pkey) < 2048) {
        gw_say(why, cap, "is an RSA key of %d bits; RS256 needs at least 2048",
               fn.EVP_PKEY_get_bits(pkey));
        rc = -EINVAL;
    } else if (id != PKEY_EC && id != PKEY_RSA) {
        gw_say(why, cap, "is neither an EC (ES256) nor an RSA (RS256) key");
        rc = -EINVAL;
    }
    fn.ERR_clear_error();
    if (rc != 0) {
        fn.EVP_PKEY_free(pkey);
        return rc;
    }
    *out = gw_xcalloc(1, sizeof(**out));
    (*out)->pkey = pkey;
    (*out)->ec = id == PKEY_EC;
    return 0;
}

void gw_jws_key_free(struct gw_jws_key *k)
{
    if (k == NULL)
        return;
    fn.EVP_PKEY_free(k->pkey);
    free(k);
}

const char *gw_jws_alg(const struct gw_jws_key *k)
{
    return k->ec ? "ES256" : "RS256";
}

/* One DER INTEGER at *p (within end), right-aligned into 32 bytes. */
static int der_int(const unsigned char **p, const unsigned char *end, unsigned char out[32])
{
    if (end - *p < 2 || (*p)[0] != 0x02 || (*p)[1] > 33 || (*p)[1] == 0 || end - *p - 2 < (*p)[1])
        return -EINVAL;
    size_t n = (*p)[1];
    const unsigned char *v = *p + 2;
    *p = v + n;
    for (; n > 0 && v[0] == 0; v++, n--)
        ;
    if (n > 32)
        return -EINVAL;
    memset(out, 0, 32);
    memcpy(out + 32 - n, v, n);
    return 0;
}

int gw_jws_ecdsa_der_to_raw(const unsigned char *der, size_t len, unsigned char raw[64])
{
    /* A P-256 signature is at most 72 bytes: the length is one short-form
     * byte (< 0x80). */
    if (len < 8 || len > 72 || der[0] != 0x30 || der[1] != len - 2)
        return -EINVAL;
    const unsigned char *p = der + 2, *end = der + len;
    if (der_int(&p, end, raw) != 0 || der_int(&p, end, raw + 32) != 0 || p != end)
        return -EINVAL;
    return 0;
}

static char *b64url(const unsigned char *in, size_t n)
{
    char *out = gw_xmalloc((n * 4 + 2) / 3 + 1);
    gw_base64url_encode(in, n, out);
    return out;
}

static char *b64url_json(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (s == NULL)
        abort(); /* jansson fails only on memory exhaustion here */
    char *out = b64url((const unsigned char *)s, strlen(s));
    free(s);
    return out;
}

/* The signature of `in` as base64url (heap), or NULL. */
static char *sign(const struct gw_jws_key *k, const char *in, char *why, size_t cap)
{
    unsigned char sig[1024], raw[64];
    size_t len = sizeof(sig);
    void *ctx = fn.EVP_MD_CTX_new();
    int ok = ctx && fn.EVP_DigestSignInit(ctx, NULL, fn.EVP_sha256(), NULL, k->pkey) == 1 &&
             fn.EVP_DigestSign(ctx, NULL, &len, (const unsigned char *)in, strlen(in)) == 1 &&
             len <= sizeof(sig) &&
             fn.EVP_DigestSign(ctx, sig, &len, (const unsigned char *)in, strlen(in)) == 1;
    fn.EVP_MD_CTX_free(ctx);
    fn.ERR_clear_error();
    if (!ok) {
        gw_say(why, cap, "libcrypto could not sign the client assertion");
        return NULL;
    }
    if (!k->ec)
        return b64url(sig, len);
    if (gw_jws_ecdsa_der_to_raw(sig, len, raw) != 0) {
        gw_say(why, cap, "libcrypto made an ECDSA signature that is not DER");
        return NULL;
    }
    return b64url(raw, sizeof(raw));
}

char *gw_jws_client_assertion(const struct gw_jws_key *k, const char *client_id, const char *aud,
                              int64_t now, char *why, size_t cap)
{
    unsigned char rnd[18];
    char jti[25];
    int rc = uv_random(NULL, NULL, rnd, sizeof(rnd), 0, NULL); /* retries EINTR, short reads */
    if (rc != 0) {
        gw_say(why, cap, "no random bytes for the assertion's jti: %s", uv_strerror(rc));
        return NULL;
    }
    gw_base64url_encode(rnd, sizeof(rnd), jti);
    char *head = b64url_json(json_pack("{s:s, s:s}", "alg", gw_jws_alg(k), "typ", "JWT"));
    char *body = b64url_json(json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "iss", client_id, "sub",
                                       client_id, "aud", aud, "jti", jti, "iat", (json_int_t)now,
                                       "exp", (json_int_t)(now + GW_JWS_ASSERTION_SECS)));
    char *input = gw_xasprintf("%s.%s", head, body);
    free(head);
    free(body);
    char *sig = sign(k, input, why, cap);
    char *out = sig ? gw_xasprintf("%s.%s", input, sig) : NULL;
    free(input);
    free(sig);
    return out;
}
