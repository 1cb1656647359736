/* The OAuth 2.1 client of an upstream that answers 401 with a Bearer
 * challenge (MCP authorization, 2025-11-25 and 2026-07-28): what the flow
 * reads and writes, as pure functions on strings and JSON, so that every
 * rule is testable without a network.
 *
 * - the WWW-Authenticate Bearer challenge (RFC 6750 section 3, RFC 9728
 *   section 5.1): resource_metadata, scope, error;
 * - URLs: parsed strictly (no userinfo, no fragment), checked before any
 *   fetch (https only, http only to a loopback host; no private,
 *   link-local or cloud-metadata address unless the server itself is
 *   there), and the discovery order of RFC 9728 (protected resource) and
 *   RFC 8414 / OpenID Connect Discovery (authorization server);
 * - the documents: protected-resource metadata (its `resource` must match
 *   the server's URL), authorization-server metadata (its `issuer` must be
 *   the one it was fetched for, S256 must be offered), the Dynamic Client
 *   Registration answer (RFC 7591) and the token answer;
 * - PKCE S256 (RFC 7636) and `state` from getrandom(2), the authorization
 *   request, and the redirect's check (RFC 9207 `iss` by exact string).
 *
 * Secrets (tokens, codes, verifiers, state, client secrets) pass through
 * these functions but none of them logs or formats one into a `why`. */
#ifndef GW_OAUTH_H
#define GW_OAUTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "gw/netaddr.h"

#define GW_OAUTH_URL_MAX 2048 /* the longest URL metadata may hand us */

/* ---- the challenge ---- */

struct gw_oauth_challenge {
    char *resource_metadata; /* RFC 9728; NULL when absent */
    char *scope;             /* space-separated; NULL when absent */
    char *error;             /* invalid_token, insufficient_scope, ...; or NULL */
};

/* Parses one WWW-Authenticate field value (which may hold several
 * challenges) and fills `c` from its Bearer challenge. Returns 0, or
 * -EINVAL when there is no well-formed Bearer challenge (`c` is then
 * empty). Free with gw_oauth_challenge_clear. */
int gw_oauth_challenge_parse(const char *value, struct gw_oauth_challenge *c);
void gw_oauth_challenge_clear(struct gw_oauth_challenge *c);

/* ---- URLs ---- */

struct gw_oauth_url {
    bool https;
    bool ip;        /* the host is an IP literal */
    char host[256]; /* lower case; an IPv6 literal without its brackets */
    unsigned port;  /* the explicit port, else 443 or 80 */
    char *origin;   /* "scheme://host[:port]", the port only when not default */
    char *path;     /* "/..." (at least "/"), without query */
    char *query;    /* after '?', or NULL */
};

/* Parses an absolute http(s) URL: no userinfo, no fragment, a host, at
 * most GW_OAUTH_URL_MAX bytes. Returns 0 or -EINVAL with a sentence in
 * `why`. Free with gw_oauth_url_clear. */
int gw_oauth_url_parse(const char *s, struct gw_oauth_url *u, char *why, size_t cap);
void gw_oauth_url_clear(struct gw_oauth_url *u);

/* The address classes are net's (gw/netaddr.h), named for the OAuth
 * client's rules. */
enum gw_oauth_addr {
    GW_OAUTH_ADDR_PUBLIC = GW_NETADDR_PUBLIC,
    GW_OAUTH_ADDR_LOOPBACK = GW_NETADDR_LOOPBACK,
    GW_OAUTH_ADDR_PRIVATE = GW_NETADDR_PRIVATE,
    GW_OAUTH_ADDR_LINK_LOCAL = GW_NETADDR_LINK_LOCAL,
    GW_OAUTH_ADDR_METADATA = GW_NETADDR_METADATA,
};

/* gw_netaddr_class and gw_netaddr_host_class. */
enum gw_oauth_addr gw_oauth_addr_class(const struct sockaddr *sa);
enum gw_oauth_addr gw_oauth_host_class(const char *host);

/* May the gateway fetch `url`, which metadata handed it, when the MCP
 * server is at `server_host`? https only (http only to a loopback host),
 * no private, link-local or metadata host unless it is the server's own
 * host, and no loopback host unless the server's host is loopback too.
 * The connect-time check (gw_oauth_addr_refused) covers names that
 * resolve to such an address. Returns 0 or -EACCES / -EINVAL with a
 * sentence in `why`. */
int gw_oauth_url_check(const char *url, const char *server_host, char *why, size_t cap);

/* What a fetch may connect to, from its URL and the MCP server's. */
struct gw_oauth_reach {
    bool https;           /* the URL is https (else only loopback is reached) */
    bool own_host;        /* the URL's host is the server's own, as written */
    bool server_loopback; /* the server's host is loopback (gw_oauth_host_class) */
    const char *refused;  /* set by gw_oauth_reach_ok: why it refused an address */
};

/* The rule of a fetch of the parsed URL `u` for the server at `server_host`. */
void gw_oauth_reach_init(struct gw_oauth_reach *r, const struct gw_oauth_url *u,
                         const char *server_host);

/* A gw_curl_uv_xfer's addr_ok, its data a struct gw_oauth_reach: 1 when
 * gw_oauth_addr_refused allows `sa`, else 0 with the reason in ->refused. */
int gw_oauth_reach_ok(void *reach, const struct sockaddr *sa);

/* NULL when a fetch under `r` may connect to `sa`, else why not (a
 * constant phrase): an http URL reaches loopback only; the server's own
 * host any address; any other host a public address, or loopback when the
 * server is on loopback. (The gateway's own listen address is refused
 * apart, by gw_curl_uv, whatever the server.) */
const char *gw_oauth_addr_refused(const struct sockaddr *sa, const struct gw_oauth_reach *r);

/* The URLs to try, in order, into out[] (heap strings, at most 3; returns
 * how many, or -EINVAL when `url` does not parse):
 * - GW_OAUTH_PRM: for an MCP server's URL, its path-inserted
 *   /.well-known/oauth-protected-resource URL (when it has a path), then
 *   the root one (RFC 9728 section 3.1);
 * - GW_OAUTH_ASM: for an issuer, RFC 8414's path-inserted
 *   oauth-authorization-server, OIDC's path-inserted openid-configuration,
 *   then OIDC's path-appended one; for an issuer without a path, the two
 *   root ones. Never the root of an issuer that has a path. */
enum gw_oauth_wellknown { GW_OAUTH_PRM, GW_OAUTH_ASM };
int gw_oauth_discovery_urls(enum gw_oauth_wellknown kind, const char *url, char *out[3]);

/* Does the protected resource `resource` cover the MCP server at
 * `server_url`? Same scheme, host and port, and the resource's path a
 * prefix of the server's on a segment boundary. */
bool gw_oauth_resource_matches(const char *resource, const char *server_url);

/* application/x-www-form-urlencoded: appends `name=value` (both encoded)
 * to *buf, with '&' first when *buf is not empty. *buf is a heap string
 * (NULL to start). */
void gw_oauth_form_add(char **buf, const char *name, const char *value);

/* Finds `name` in a query or form string and returns its decoded value (a
 * heap string), or NULL when absent or badly encoded. `dup` is set when
 * the name occurs more than once (a response with two `state`s is
 * refused). */
char *gw_oauth_form_get(const char *query, const char *name, bool *dup);

/* ---- the documents ---- */

struct gw_oauth_prm {
    char *resource;
    char *issuer; /* the first of authorization_servers */
    char *scopes; /* scopes_supported, space-joined; or NULL */
};

/* Reads protected-resource metadata fetched for the server at
 * `server_url`: `resource` must be present and match it, and there must
 * be an authorization server with an acceptable URL. Returns 0 or -EINVAL
 * with a sentence in `why`. */
int gw_oauth_prm_read(const char *body, size_t len, const char *server_url, struct gw_oauth_prm *p,
                      char *why, size_t cap);
void gw_oauth_prm_clear(struct gw_oauth_prm *p);

struct gw_oauth_asm {
    char *issuer;
    char *authorization_endpoint, *token_endpoint;
    char *registration_endpoint, *revocation_endpoint; /* or NULL */
    char *scopes;                                      /* scopes_supported, space-joined; or NULL */
    bool iss_supported;       /* authorization_response_iss_parameter_supported */
    bool cimd_supported;      /* client_id_metadata_document_supported */
    unsigned auth_methods;    /* GW_OAUTH_AUTH_* bits of token_endpoint_auth_methods_supported */
    bool auth_methods_listed; /* the server listed them (else RFC 8414's default) */
};

enum gw_oauth_auth {
    GW_OAUTH_AUTH_NONE = 1,
    GW_OAUTH_AUTH_BASIC = 2, /* client_secret_basic */
    GW_OAUTH_AUTH_POST = 4,  /* client_secret_post */
    GW_OAUTH_AUTH_JWT = 8,   /* private_key_jwt (RFC 7523 section 2.2) */
};

/* Reads authorization-server metadata fetched for `issuer`: its `issuer`
 * must equal it exactly, the two endpoints must be https (or http to
 * loopback) URLs, and code_challenge_methods_supported must list S256.
 * Returns 0 or -EINVAL with a sentence in `why`. */
int gw_oauth_asm_read(const char *body, size_t len, const char *issuer, struct gw_oauth_asm *m,
                      char *why, size_t cap);
void gw_oauth_asm_clear(struct gw_oauth_asm *m);

/* The name of a method bit ("none", "client_secret_basic", ...), and the
 * bit of a name (0 when unknown). */
const char *gw_oauth_auth_name(unsigned method);
unsigned gw_oauth_auth_parse(const char *name);

/* The method for a client with or without a secret, from what the server
 * supports: client_secret_basic, then client_secret_post, for a client
 * with a secret; none for one without. 0 when the server offers none of
 * them. */
unsigned gw_oauth_auth_choose(const struct gw_oauth_asm *m, bool has_secret);

/* The scopes to request: the challenge's, else the protected resource's
 * scopes_supported, else none (NULL); offline_access is dropped unless
 * the authorization server lists it. A heap string or NULL. */
char *gw_oauth_scopes_select(const char *challenge_scope, const char *prm_scopes,
                             const char *asm_scopes);

/* The Dynamic Client Registration request (RFC 7591) of a native client
 * redirecting to `redirect_uri`, as a JSON string (heap). */
char *gw_oauth_dcr_request(const char *redirect_uri, const char *scopes);

struct gw_oauth_client {
    char *client_id;
    char *client_secret; /* or NULL */
    unsigned auth;       /* GW_OAUTH_AUTH_* */
};

/* Reads a registration answer: client_id required, the returned
 * token_endpoint_auth_method honoured (none when absent and no secret,
 * client_secret_basic when absent with a secret). */
int gw_oauth_dcr_read(const char *body, size_t len, struct gw_oauth_client *c, char *why,
                      size_t cap);
void gw_oauth_client_clear(struct gw_oauth_client *c);

struct gw_oauth_token {
    char *access_token;
    char *refresh_token; /* or NULL */
    char *scope;         /* or NULL */
    int64_t expires_in;  /* seconds, 1 .. GW_OAUTH_EXPIRES_MAX; 0 when not given */
};

/* The longest access token life believed: a year. A longer expires_in
 * (up to 2^63-1, or more as a number with a fraction) is taken as this;
 * a positive one under a second as one second. */
#define GW_OAUTH_EXPIRES_MAX (365 * 86400)

/* Reads a token answer: access_token required, token_type Bearer (any
 * case), expires_in bounded as above. An error answer's `error` is put in
 * `why` (never a value from the request). */
int gw_oauth_token_read(const char *body, size_t len, struct gw_oauth_token *t, char *why,
                        size_t cap);
void gw_oauth_token_clear(struct gw_oauth_token *t);

/* ---- the flow ---- */

/* `n` random bytes as base64url (43 characters for 32 bytes) into out,
 * which holds GW_OAUTH_RANDOM_LEN; from getrandom(2). Returns 0 or a
 * negative errno. */
#define GW_OAUTH_RANDOM_LEN 44
int gw_oauth_random(char out[GW_OAUTH_RANDOM_LEN]);

/* The S256 code_challenge of a verifier (RFC 7636 section 4.2). */
void gw_oauth_pkce_challenge(const char *verifier, char out[GW_OAUTH_RANDOM_LEN]);

struct gw_oauth_authz_request {
    const char *authorization_endpoint;
    const char *client_id;
    const char *redirect_uri;
    const char *verifier; /* its challenge is sent */
    const char *state;
    const char *scope;    /* or NULL */
    const char *resource; /* or NULL (resource: omit) */
};

/* The authorization request's URL (heap). */
char *gw_oauth_authz_url(const struct gw_oauth_authz_request *r);

/* What the redirect back carried, once checked. */
struct gw_oauth_redirect {
    char *code;  /* set on success */
    char *error; /* the server's error code, when it is trusted to show */
};

/* Checks the query of the redirect back against the pending flow's
 * `state` and `issuer` (RFC 9207: `iss`, when present, must equal the
 * issuer exactly, and must be present when the server advertised it;
 * the error fields of a response that fails this are ignored). Returns 0
 * with r->code set, or -EINVAL/-EACCES with a sentence in `why` (the
 * server's error code only when its `iss` checked out). */
int gw_oauth_redirect_read(const char *query, const char *state, const char *issuer,
                           bool iss_supported, struct gw_oauth_redirect *r, char *why, size_t cap);
void gw_oauth_redirect_clear(struct gw_oauth_redirect *r);

/* The token request bodies (form, heap) and, for client_secret_basic, the
 * Authorization header value (heap; NULL for other methods). */
struct gw_oauth_token_request {
    const struct gw_oauth_client *client;
    const char *code, *verifier, *redirect_uri; /* authorization_code */
    const char *refresh_token;                  /* refresh_token */
    const char *scope;                          /* client_credentials, or NULL */
    const char *resource;                       /* or NULL */
};
char *gw_oauth_token_body(const struct gw_oauth_token_request *r);
char *gw_oauth_basic_auth(const struct gw_oauth_client *c);

/* ---- one server's client, on the loop (oauth_client.c) ----
 *
 * Every fetch goes through the shared gw_curl_uv with the rules above:
 * each URL (and each redirect hop of a metadata fetch, at most
 * GW_OAUTH_MAX_HOPS) checked by gw_oauth_url_check against the server's
 * host, each connected address checked too (gw_oauth_addr_refused, and
 * never the gateway's own listen address) on a fresh connection without
 * any proxy from the environment, a body of at most GW_OAUTH_BODY_MAX
 * bytes, GW_OAUTH_FETCH_MS per fetch. One operation runs at a time; a
 * second call of the same kind while one runs waits for its outcome
 * (refresh is single-flight), another kind answers -EBUSY. */
#define GW_OAUTH_BODY_MAX  (256u << 10)
#define GW_OAUTH_FETCH_MS  10000
#define GW_OAUTH_MAX_HOPS  3
#define GW_OAUTH_PENDING   8   /* authorization requests waiting for their redirect */
#define GW_OAUTH_FLOW_SECS 600 /* how long one waits */

struct gw_curl_uv;
struct gw_oauth;

struct gw_oauth_settings {
    const char *server_url;   /* the MCP server (its protected resource) */
    const char *redirect_uri; /* where the browser comes back */
    const char *client_id;    /* a configured client, or NULL: register */
    const char *client_secret;
    const char *private_key; /* PEM for private_key_jwt (checked at config load), or NULL */
    unsigned auth;           /* GW_OAUTH_AUTH_*; 0: chosen from the metadata */
    const char *scopes;      /* replaces the spec's selection; or NULL */
    bool omit_resource;      /* no RFC 8707 resource parameter */
    /* grant: client_credentials: gw_oauth_authorize obtains a token from
     * the configured client itself (no browser, no redirect) and answers
     * NULL. */
    bool client_credentials;
    /* Used as the client_id, without registration, where the server
     * supports Client ID Metadata Documents; or NULL. */
    const char *client_metadata_url;
    /* Files go to <state_dir>/oauth (made on first save); NULL: memory only. */
    const char *state_dir;
    /* The only authorization server the configured client is used with
     * (servers.<id>.oauth.issuer), or NULL. Without it, a configured
     * client_secret is bound to the first issuer it is used with, until
     * gw_oauth_forget. */
    const char *issuer;
};

/* `s` is copied. The loop and multi must outlive it. With a state_dir,
 * the grant saved for this server's URL (and the registration for its
 * issuer) is loaded at once: a restart refreshes and sends it without
 * asking anyone. Registrations (not configured clients) and grants are
 * saved as they change; a refused refresh and gw_oauth_forget remove the
 * grant's file. */
struct gw_oauth *gw_oauth_new(uv_loop_t *loop, struct gw_curl_uv *multi,
                              const struct gw_oauth_settings *s);

/* Stops any fetch; the waiting callbacks are dropped without a call. The
 * memory goes on a later loop turn (a timer is closed). */
void gw_oauth_free(struct gw_oauth *o);

/* A 401's WWW-Authenticate value: its resource_metadata and scope guide
 * the next authorization. Returns gw_oauth_challenge_parse's result. */
int gw_oauth_challenged(struct gw_oauth *o, const char *www_authenticate);

/* A 403's WWW-Authenticate value: when it is a Bearer challenge with
 * error="insufficient_scope", the next authorization asks for the scopes
 * held (or last asked for) together with the challenge's (step-up), and
 * no refresh is tried. Returns 0 for such a challenge, else -EINVAL. */
int gw_oauth_step_up(struct gw_oauth *o, const char *www_authenticate);

/* Was the server's last word a Bearer challenge, with no token obtained
 * since? (What moves a server to needs_authorization.) */
bool gw_oauth_needs_authorization(const struct gw_oauth *o);

/* Is the challenge a step-up (more scopes), which no refresh can answer? */
bool gw_oauth_step_up_pending(const struct gw_oauth *o);

/* At most GW_OAUTH_AUTHZ_MAX authorization requests per operation, the
 * first included (an operation: the server's start, or a step-up for one
 * set of scopes). A challenge after the last one allowed makes the client
 * give up: gw_oauth_authorize then answers -EPERM (through its cb) until
 * gw_oauth_limit_reset or gw_oauth_forget. */
#define GW_OAUTH_AUTHZ_MAX 3

/* The scopes asked for in vain ("" when none were named) once the client
 * gave up on the operation that challenges now; else NULL. */
const char *gw_oauth_gave_up(const struct gw_oauth *o);

/* The server started with the token: the count of its start begins again
 * (a step-up's does not: starting is not the call that needed the scopes). */
void gw_oauth_started(struct gw_oauth *o);

/* A reload: every count begins again. */
void gw_oauth_limit_reset(struct gw_oauth *o);

/* rc 0 with `text` the result (the authorization URL for authorize; NULL
 * for redeem and refresh), or a negative code with `text` a sentence that
 * holds no secret. */
typedef void (*gw_oauth_cb)(void *data, int rc, const char *text);

/* Discovers, registers when needed, and answers the URL to send the
 * browser to; the flow (state, PKCE verifier, expected issuer) waits for
 * its redirect up to GW_OAUTH_FLOW_SECS. The count of the operation's
 * authorization requests reached, cb gets -EPERM and a sentence naming
 * the scopes. Returns 0 (cb runs once, maybe
 * before the call returns when a URL is refused), -EBUSY, or -EINVAL when
 * there is no redirect_uri. The same holds
 * for redeem and refresh. */
int gw_oauth_authorize(struct gw_oauth *o, gw_oauth_cb cb, void *data);

/* Sets the redirect_uri of the flows to come (copied). */
void gw_oauth_set_redirect_uri(struct gw_oauth *o, const char *uri);

/* Does a pending flow of `o` carry this state? (For the callback route,
 * which has only the query to find the server by.) */
bool gw_oauth_owns_state(const struct gw_oauth *o, const char *query);

/* Redeems the query of the redirect back: the state is used up whatever
 * the outcome; the code is exchanged at the token endpoint. Returns 0,
 * -EBUSY, or -EACCES when no pending flow has that state (cb is
 * then not called). */
int gw_oauth_redeem(struct gw_oauth *o, const char *query, gw_oauth_cb cb, void *data);

/* Uses the refresh token, at the authorization server the grant came
 * from and with the client it was obtained with (never another's). Only
 * invalid_grant forgets the grant (cb gets -EACCES); a refresh that could
 * not be made (no connection, a 5xx, an answer that is no token answer)
 * keeps it and cb gets -EAGAIN. The client refreshes by itself when four
 * fifths of the access token's life (at most a minute before its end)
 * have passed, and at once for a loaded grant whose token has expired;
 * after a refresh that could not be made, again GW_OAUTH_RETRY_MS later,
 * doubling for each one in a row up to GW_OAUTH_RETRY_MAX_MS. Call it
 * for a token the server refused (a 401). Returns 0, -EBUSY, or -ENOENT
 * when there is no refresh token. */
#define GW_OAUTH_RETRY_MS     1000
#define GW_OAUTH_RETRY_MAX_MS (5 * 60 * 1000)
int gw_oauth_refresh(struct gw_oauth *o, gw_oauth_cb cb, void *data);

/* Did a refresh made for a refused token give the token held now, and no
 * request succeed with it since? Then another refresh would not help: a
 * server that refuses every token costs one refresh per authorization. */
bool gw_oauth_refresh_spent(const struct gw_oauth *o);

/* A request sent with the token of `generation` succeeded. */
void gw_oauth_accepted(struct gw_oauth *o, unsigned generation);

/* Drops the callbacks waiting with `data` (an owner going away before
 * the operation ends); safe inside another waiter's callback. */
void gw_oauth_unwait(struct gw_oauth *o, const void *data);

/* The access token to send, or NULL when there is none. */
const char *gw_oauth_access_token(const struct gw_oauth *o);

/* Changes whenever the access token does (obtained, refreshed, dropped):
 * a 401 to a request sent with an older token needs no refresh. */
unsigned gw_oauth_generation(const struct gw_oauth *o);

/* Adds the client's secrets (tokens, client secrets) to a redactor, so
 * that an upstream echoing one does not publish it (gw/redact.h). */
struct gw_redact;
void gw_oauth_redact_add(const struct gw_oauth *o, struct gw_redact *r);

/* gw_redact_line with those secrets as they are now (the tokens change
 * with every refresh, so no redactor keeps them): for an upstream's error
 * text, which may echo the token its request carried. */
size_t gw_oauth_redact_line(const struct gw_oauth *o, char *buf, size_t len, bool truncated);

/* When the access token expires (ms, gw_now_ms's clock; 0 unknown). */
uint64_t gw_oauth_expires_ms(const struct gw_oauth *o);

/* What a person may see of the grant: {"issuer", "scopes" (the token
 * answer's, or null when it named none), "expiresAt" (or null),
 * "refreshable"}; never a token. NULL when there is no grant. */
json_t *gw_oauth_grant_json(const struct gw_oauth *o);

/* Drops the grant (and its file), begins the counts of authorization
 * requests again and, where the authorization server offers RFC 7009,
 * revokes its refresh token (else its access token) in
 * the background. Returns 0 or -EBUSY while an operation runs. */
int gw_oauth_forget(struct gw_oauth *o);

/* ---- storage (oauth_store.c) ---- */

#define GW_OAUTH_NAME_LEN 48 /* "grant-" + 32 hex digits + ".json" */
#define GW_OAUTH_FILE_MAX (64u << 10)

/* The state directory: `configured` (gateway.state_dir), else
 * $STATE_DIRECTORY (its first entry), else $XDG_STATE_HOME/mcpgw, else
 * $HOME/.local/state/mcpgw; absolute values only. Heap, or NULL. */
char *gw_oauth_state_dir(const char *configured);

/* Creates <state_dir>/oauth at 0700 (restricting one that is wider),
 * refusing one that is not a directory of this user. *dir is heap. */
int gw_oauth_store_open(const char *state_dir, char **dir, char *why, size_t cap);

/* The file name of `key` under `kind` ("client", "grant"): a digest, so
 * that no URL shapes a path. */
void gw_oauth_store_name(const char *kind, const char *key, char out[GW_OAUTH_NAME_LEN]);

/* Writes a file whole (0600; temp, fsync, rename, fsync of dir). Returns
 * 0 or a negative errno. */
int gw_oauth_store_write(const char *dir, const char *name, const char *data, size_t len);

/* A regular file's content (at most `max` bytes), NUL-terminated heap;
 * NULL when absent (`why` empty) or refused (`why` says why): the same
 * checks as the writer's, a directory and a file of this user that
 * neither its group nor others may write, neither reached through a
 * symlink. */
char *gw_oauth_store_read(const char *dir, const char *name, size_t max, char *why, size_t cap);

int gw_oauth_store_remove(const char *dir, const char *name);

#endif
