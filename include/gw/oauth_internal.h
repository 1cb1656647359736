/* The insides of one server's OAuth client (gw/oauth.h), shared by
 * oauth_client.c (the operations) and oauth_persist.c (its files). */
#ifndef GW_OAUTH_INTERNAL_H
#define GW_OAUTH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "gw/http_xfer.h"
#include "gw/oauth.h"

enum op { OP_NONE, OP_AUTHORIZE, OP_REDEEM, OP_REFRESH, OP_REVOKE };

struct waiter {
    gw_oauth_cb cb;
    void *data;
    struct waiter *next;
};

struct flow {
    char state[GW_OAUTH_RANDOM_LEN], verifier[GW_OAUTH_RANDOM_LEN];
    char *issuer, *token_endpoint, *resource;
    bool iss_supported;
    time_t created;
};

struct gw_oauth;
typedef void (*step_fn)(struct gw_oauth *o, CURLcode rc);

struct gw_oauth {
    struct gw_http_xfer x; /* first: the fetch in flight (one at a time) */
    struct gw_curl_uv *multi;
    char *server_url, *redirect_uri, *scopes;
    char *cimd_url; /* gateway.oauth.client_metadata_url, or NULL */
    char server_host[256];
    struct gw_oauth_client configured; /* client_id NULL: none */
    struct gw_jws_key *key;            /* private_key_jwt's; or NULL */
    bool omit_resource;
    bool client_credentials;

    struct gw_oauth_challenge challenge;
    bool challenged;    /* a 401 since the last token was obtained */
    char *step_scopes;  /* a step-up's union of scopes, until a token comes; or NULL */
    char *asked_scopes; /* the scopes of the last authorization request */
    /* The authorization requests made for the operation that challenges
     * (GW_OAUTH_AUTHZ_MAX at most), the scopes they asked for, whether
     * that operation is a step-up, and whether the client gave up on it
     * (challenged again after the last request allowed). */
    unsigned authz_count;
    char *authz_scopes;
    bool authz_step;
    bool gave_up;
    struct gw_oauth_prm prm;
    struct gw_oauth_asm asm_;
    struct gw_oauth_client client; /* registered (or configured) for asm_.issuer */
    char *client_issuer;
    bool client_registered; /* o->client came from registration: saved */
    char *state_dir;        /* NULL: memory only */
    char *store_dir;        /* <state_dir>/oauth */
    bool store_ready;       /* made (or checked) by gw_oauth_store_open */

    struct flow flows[GW_OAUTH_PENDING];
    struct flow *redeeming;

    uv_timer_t ahead; /* the refresh ahead of expiry */
    struct gw_oauth_token token;
    uint64_t expires_ms;
    time_t expires_at; /* the same on the wall clock, for the file */

    enum op op;
    struct waiter *waiters;
    struct waiter **finishing; /* the waiters finish() is calling, or NULL */
    unsigned generation;       /* counts the tokens obtained and dropped */
    step_fn step;
    struct gw_oauth_reach reach; /* the fetch in flight's */
    char *urls[3];
    int nurls, iurl, hops;
    char *body;
    bool busy; /* a fetch is in the multi */
};

/* oauth_jwt.c: private_key_jwt. Appends client_assertion_type and a
 * fresh client_assertion for o->asm_.issuer to the form `body` when
 * o->client authenticates so; 0, or -EINVAL with `why` set. */
int gw_oauth__add_assertion(const struct gw_oauth *o, char **body, char *why, size_t cap);
/* The key of s->private_key into o->key (a warning when it cannot be). */
void gw_oauth__load_key(struct gw_oauth *o, const char *pem);

/* oauth_persist.c: the registration and the grant, saved as they change
 * and loaded at creation (nothing happens without a state_dir). */
void gw_oauth__save_client(struct gw_oauth *o);
void gw_oauth__save_grant(struct gw_oauth *o);
void gw_oauth__drop_grant(struct gw_oauth *o); /* memory and file */
void gw_oauth__load(struct gw_oauth *o);

/* oauth_limit.c: counts an authorization request asking for `scopes`
 * (0), or refuses one past GW_OAUTH_AUTHZ_MAX (-EPERM, and the client
 * gives up); notes a 401 or 403 challenge (after the step-up scopes are
 * set): a step-up for other scopes begins a new count, one after the last
 * request allowed makes the client give up. */
int gw_oauth__count_request(struct gw_oauth *o, const char *scopes);
void gw_oauth__note_challenge(struct gw_oauth *o);

#endif
