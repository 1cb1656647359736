/* `mcpgw auth`: a server's OAuth grant, managed through the running
 * daemon's HTTP API (docs/api.md, "OAuth"; docs/operations.md):
 *
 *   mcpgw auth login <id> [--paste] [--timeout SECONDS]
 *   mcpgw auth status
 *   mcpgw auth logout <id>
 *
 * with [-c FILE] [--gateway URL] on each. The CLI holds no grant itself:
 * the daemon discovers, registers, redeems and stores; the CLI asks it for
 * the authorization URL, prints it, and waits until the server leaves
 * needs_authorization (or, with --paste, hands over the URL the browser
 * ended on). It reaches the daemon at --gateway, else at the
 * gateway.listen of the configuration (-c, else the daemon's default
 * path), else at 127.0.0.1:7420, with the configuration's
 * gateway.auth_token, else $MCPGW_TOKEN, as its bearer token. */
#ifndef GW_AUTH_CLI_H
#define GW_AUTH_CLI_H

/* argv[0] is "auth". `config_path` is the -c given before "auth" (or the
 * daemon's default), `listen` a --listen given before it (NULL if none).
 * Returns the exit status: 0 done, 1 failed (the reason is on stderr),
 * 2 bad arguments. */
int gw_auth_cli(int argc, char **argv, const char *config_path, const char *listen);

#endif
