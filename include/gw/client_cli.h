/* `mcpgw client token NAME` (issue 35): a fresh random token for a client
 * and the `token_sha256` to paste into `clients:`, so that the
 * configuration need not hold the token. */
#ifndef GW_CLIENT_CLI_H
#define GW_CLIENT_CLI_H

#include <stdio.h>

/* argv[0] is "client". Returns the exit status (0, or 2 for a usage error,
 * 1 when no randomness could be had). */
int gw_client_cli(int argc, char **argv, FILE *out, FILE *err);

#endif
