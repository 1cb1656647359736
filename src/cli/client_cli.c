/* `mcpgw client token NAME` (gw/client_cli.h). */
#include "gw/client_cli.h"

#include <string.h>
#include <sys/random.h>

#include "gw/config.h"
#include "gw/sha256.h"

/* 32 random bytes, base64url without padding: 43 characters. */
#define TOKEN_BYTES 32

static void base64url(const unsigned char *in, size_t n, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    unsigned v = 0;
    int bits = 0;

    for (size_t i = 0; i < n; i++) {
        v = (v << 8) | in[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out[o++] = abc[(v >> bits) & 63];
        }
    }
    if (bits > 0)
        out[o++] = abc[(v << (6 - bits)) & 63];
    out[o] = '\0';
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);

    return n >= 1 && n <= GW_CLIENT_NAME_MAX && strcmp(s, GW_CLIENT_DEFAULT) != 0 &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

int gw_client_cli(int argc, char **argv, FILE *out, FILE *err)
{
    unsigned char raw[TOKEN_BYTES], digest[GW_SHA256_LEN];
    char token[TOKEN_BYTES * 2];
    struct gw_sha256 h;

    if (argc != 3 || strcmp(argv[1], "token") != 0) {
        fputs("usage: mcpgw client token NAME\n", err);
        return 2;
    }
    if (!name_ok(argv[2])) {
        fputs("mcpgw: a client name is 1 to 64 of A-Z, a-z, 0-9, '_' and '-', not 'default'\n",
              err);
        return 2;
    }
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        fputs("mcpgw: no random bytes from the kernel\n", err);
        return 1;
    }
    base64url(raw, sizeof raw, token);
    gw_sha256_init(&h);
    gw_sha256_update(&h, token, strlen(token));
    gw_sha256_final(&h, digest);
    fprintf(out, "# the token, for %s alone (its Authorization: Bearer):\n# %s\n", argv[2], token);
    fprintf(out, "clients:\n  %s:\n    token_sha256: ", argv[2]);
    for (size_t i = 0; i < sizeof digest; i++)
        fprintf(out, "%02x", digest[i]);
    fputc('\n', out);
    memset(raw, 0, sizeof raw);
    memset(token, 0, sizeof token);
    return 0;
}
