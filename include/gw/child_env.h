/* What a spawned child starts with (security.md P1, P4): the environment
 * built from `gateway.inherit_env` and the server's `env`, never the
 * daemon's own MCPGW_* settings, and no descriptor above 2 left open
 * across exec. Used by every transport that spawns a process. */
#ifndef GW_CHILD_ENV_H
#define GW_CHILD_ENV_H

#include <stddef.h>

#include "gw/config.h"

/* The child's environment: the daemon's variables matching `pats`, then the
 * configured entries (later wins). Free with gw_child_env_free. */
char **gw_child_env_build(const struct gw_server_config *cfg, char *const *pats, size_t npats);
void gw_child_env_free(char **env);

/* Marks every descriptor above 2 close-on-exec, before a spawn. */
void gw_child_cloexec_sweep(void);

/* True when `name` matches `pattern` ('*' matches any substring). */
int gw_env_pattern_match(const char *pattern, const char *name);

#endif
