/* What the files of `mcpgw auth` share: the daemon they talk to and one
 * blocking request to it (auth_cli_http.c, libcurl's easy interface). */
#ifndef GW_AUTH_CLI_INTERNAL_H
#define GW_AUTH_CLI_INTERNAL_H

#include <jansson.h>

#include "gw/auth_cli.h"

struct gw_cli_daemon {
    char *url;       /* base URL, no trailing '/' */
    char *unix_path; /* the socket of a unix: listen address, else NULL */
    char *name;      /* what messages name: the URL, or unix:/path */
    char *token;     /* bearer token, or NULL */
};

struct gw_cli_answer {
    long status;
    json_t *json; /* the body parsed, or NULL */
};

/* Fills `d` from --gateway (or NULL), --listen (or NULL) and the
 * configuration at `config_path`. Returns 0, or 2 after saying on stderr
 * why --gateway is not usable. */
int gw_cli_daemon_init(struct gw_cli_daemon *d, const char *gateway, const char *listen,
                       const char *config_path);
void gw_cli_daemon_free(struct gw_cli_daemon *d);

/* One request (`body` may be NULL; it is not consumed). Returns 0 with `a`
 * filled (any status), or -1 after saying on stderr that the daemon could
 * not be reached and why. */
int gw_cli_request(const struct gw_cli_daemon *d, const char *method, const char *path,
                   const json_t *body, struct gw_cli_answer *a);

/* Says on stderr why an answer that is not a success failed: the daemon's
 * Problem (its message and code), prefixed with `what`. */
void gw_cli_problem(const struct gw_cli_daemon *d, const char *what, const struct gw_cli_answer *a);

#endif
