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

/* What belongs to one authorization server and is never sent to another:
 * its issuer, the endpoints a token is obtained, refreshed and revoked
 * at, and the client registered (or configured) there. */
struct bound {
    char *issuer, *token_endpoint, *revocation_endpoint; /* the last may be NULL */
    struct gw_oauth_client client;
};

struct flow {
    char state[GW_OAUTH_RANDOM_LEN], verifier[GW_OAUTH_RANDOM_LEN];
    struct bound as; /* redeemed there, with the client it started with */
    char *resource;
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
    char *pinned_issuer;               /* servers.<id>.oauth.issuer, or NULL */
    /* The issuer a configured client_secret was first used with (kept in
     * the store): the secret goes to no other until a logout. */
    char *secret_issuer;
    struct gw_jws_key *key; /* private_key_jwt's; or NULL */
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
    struct bound grant; /* where o->token came from, and its client */
    struct bound req;   /* where the token or revocation request in flight goes */
    uint64_t expires_ms;
    time_t expires_at; /* the same on the wall clock, for the file */
    unsigned retries;  /* refreshes in a row that could not be made (backoff) */
    bool after_401;    /* the refresh in flight answers a refused token */
    unsigned spent;    /* the generation a refused token's refresh made, until it works */

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
 * fresh client_assertion for b->issuer to the form `body` when b->client
 * authenticates so; 0, or -EINVAL with `why` set. */
int gw_oauth__add_assertion(const struct gw_oauth *o, const struct bound *b, char **body, char *why,
                            size_t cap);
/* The key of s->private_key into o->key (a warning when it cannot be). */
void gw_oauth__load_key(struct gw_oauth *o, const char *pem);

/* oauth_client.c: one operation's fetches (gw/oauth.h): fetch checks
 * `url` and starts it (a POST when `body` is set) with `next` to run when
 * it ends; finish ends the operation, calling its waiters; fetch_failed
 * ends it when the fetch failed at the transport level (true). */
void gw_oauth__fetch(struct gw_oauth *o, const char *url, const char *body, const char *auth,
                     step_fn next);
void gw_oauth__finish(struct gw_oauth *o, int rc, const char *text);
void gw_oauth__failf(struct gw_oauth *o, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool gw_oauth__fetch_failed(struct gw_oauth *o, CURLcode rc, const char *what);
void gw_oauth__bound_clear(struct bound *b);
/* Adds cb to the waiters of an `op`: 0 when it starts the operation, 1
 * when it joined the one running, -EBUSY when another kind runs. */
int gw_oauth__join(struct gw_oauth *o, enum op op, gw_oauth_cb cb, void *data);

/* oauth_grant.c: the token request of `r` to o->req (its endpoint and
 * client), and the timer of the refresh ahead of expiry, set again from
 * the grant (and the backoff after refreshes that could not be made). */
void gw_oauth__post_token(struct gw_oauth *o, struct gw_oauth_token_request *r);
void gw_oauth__schedule_ahead(struct gw_oauth *o);

/* oauth_persist.c: the registration and the grant, saved as they change
 * and loaded at creation (nothing happens without a state_dir). */
void gw_oauth__save_client(struct gw_oauth *o);
void gw_oauth__save_grant(struct gw_oauth *o);
void gw_oauth__drop_grant(struct gw_oauth *o); /* memory and file */
void gw_oauth__load(struct gw_oauth *o);
/* May the configured client be used with o->asm_.issuer? Not when
 * oauth.issuer names another, nor, for a client with a secret, when the
 * secret was first used with another (recorded here on first use, until
 * gw_oauth__forget_issuer). 0, or -EXDEV with `why` set. */
int gw_oauth__issuer_check(struct gw_oauth *o, char *why, size_t cap);
void gw_oauth__forget_issuer(struct gw_oauth *o);

/* oauth_limit.c: counts an authorization request asking for `scopes`
 * (0), or refuses one past GW_OAUTH_AUTHZ_MAX (-EPERM, and the client
 * gives up); notes a 401 or 403 challenge (after the step-up scopes are
 * set): a step-up for other scopes begins a new count, one after the last
 * request allowed makes the client give up. */
int gw_oauth__count_request(struct gw_oauth *o, const char *scopes);
void gw_oauth__note_challenge(struct gw_oauth *o);

#endif
