/* Input rounds (MCP 2026-07-28 "multi round-trip requests"): an upstream
 * call that asks its caller for input is parked between the caller's
 * requests instead of holding one connection open.
 *
 * A front end (REST, or /mcp for modern clients) starts a call through
 * this module instead of straight through dispatch. When the upstream
 * sends server requests during the call (a legacy server's
 * sampling/createMessage, elicitation/create or roots/list), the module
 * collects one round of them and hands the caller `inputRequests` (a JSON
 * object: short key → {"method","params"}) and an opaque `requestState`;
 * the upstream call stays open, parked. The caller's retry carries
 * `inputResponses` (key → result) and the requestState byte for byte:
 * the module verifies the state, answers the upstream's requests, and
 * attaches the retrying caller as the receiver of the SAME upstream call,
 * whose next event is its outcome or another round. Responses missing for
 * some keys: the retry is answered with a round of just those requests.
 *
 * The API speaks JSON and strings, never HTTP. It sits between the front
 * ends and dispatch (docs/architecture.md).
 *
 * requestState is attacker input (docs/hardening.md): base64url of a
 * version, the parked round's 128-bit random id, its expiry, and an
 * HMAC-SHA256 under a 256-bit key made at start (uv_random) over those and
 * the call's binding: dialog, method, name and a SHA-256 of its
 * arguments. A state that fails the check, names another dialog or other
 * arguments is refused with one sentence that does not say which. */
#ifndef GW_INPUT_ROUNDS_H
#define GW_INPUT_ROUNDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "gw/dispatch.h"
#include "gw/errors.h"
#include "gw/sha256.h"

/* Rounds that asked (until their call ends) per dialog and in all. A call
 * whose server request would make one more is refused at once: the
 * request gets a JSON-RPC error, the call is cancelled upstream and its
 * caller gets GW_SERVERS_E_LIMIT. A parked round holds no concurrency
 * slot (gw_dispatch_park): these caps are what bounds them. */
#define GW_ROUNDS_PER_DIALOG 64
#define GW_ROUNDS_MAX        4096
/* How long a parked round waits for its retry before the upstream call is
 * cancelled (notifications/cancelled) and the round forgotten. */
#define GW_ROUNDS_EXPIRY_MS (5u * 60u * 1000u)
/* After the first server request of a round, how long more may join it
 * before it is handed to the caller. A server that sends several requests
 * at once writes them back to back; one that sends a later one anyway
 * loses nothing: a request that arrives while its round is parked is
 * asked on the caller's next retry, as a missing response is. */
#define GW_ROUNDS_SETTLE_MS 10
/* Server requests waiting in one round; dispatch allows as many per call. */
#define GW_ROUNDS_REQUESTS_MAX 16
/* The length of a requestState: base64url of 1 + 16 + 8 + 32 bytes. */
#define GW_ROUNDS_STATE_LEN 76
#define GW_ROUNDS_ID_LEN    16
#define GW_ROUNDS_KEY_LEN   32

/* Why a retry was refused (gw_rounds_resume). */
#define GW_ROUNDS_E_STATE     (GW_E_ROUNDS_BASE - 1) /* malformed, tampered or another call's */
#define GW_ROUNDS_E_EXPIRED   (GW_E_ROUNDS_BASE - 2) /* its round's time is over */
#define GW_ROUNDS_E_GONE      (GW_E_ROUNDS_BASE - 3) /* answered, cancelled or expired already */
#define GW_ROUNDS_E_RESPONSES (GW_E_ROUNDS_BASE - 4) /* inputResponses has the wrong shape */

struct gw_rounds;
struct gw_round;

/* What a requestState binds: the call as its caller names it. */
struct gw_round_bind {
    const char *dialog; /* canonical dialog, or NULL (then the state is a bearer token) */
    const char *method; /* "tools/call", "prompts/get", "resources/read" */
    const char *name;   /* the final tool or prompt name, or the URI */
    json_t *arguments;  /* the call's arguments object, or NULL */
    const char *client; /* the caller's client (gw/policy.h), or NULL: a dialog-less state
                           is its client's too */
};

/* The receiver's next event: exactly one of `outcome` (the call ended) and
 * `input_requests` (a round; `request_state` to give back). Borrowed for
 * the callback's duration. After it the round no longer refers to the
 * receiver. */
struct gw_rounds_answer {
    const struct gw_call_outcome *outcome;
    json_t *input_requests;
    const char *request_state;
};

struct gw_rounds_receiver {
    void (*on_answer)(void *data, const struct gw_rounds_answer *a);
    /* Progress and log notifications of the call while this receiver
     * waits (dispatch's on_progress / on_log); may be NULL. */
    void (*on_progress)(void *data, json_t *params);
    void (*on_log)(void *data, json_t *params);
    void *data;
};

/* The upstream side, dispatch's functions unless a test stands in. */
struct gw_rounds_upstream {
    int (*call)(struct gw_servers *s, const struct gw_call_request *r, gw_call_cb cb, void *data,
                struct gw_call **out);
    int (*route)(struct gw_servers *s, const struct gw_route_request *r, gw_call_cb cb, void *data,
                 struct gw_call **out);
    void (*answer)(struct gw_server_request *sr, json_t *result, json_t *error);
    void (*cancel)(struct gw_call *call, const char *reason);
    /* The call's round is parked (true) or taken up again (false). */
    void (*park)(struct gw_call *call, bool parked);
};

/* Counters since start, for /metrics. */
struct gw_rounds_stats {
    uint64_t asked;    /* rounds handed to a caller */
    uint64_t resumed;  /* retries accepted */
    uint64_t rejected; /* retries refused (state, expiry, shape) */
    uint64_t expired;  /* parked rounds that waited too long */
    uint64_t refused;  /* server requests refused for the bounds */
};

/* Makes the registry, with a new random key. `expiry_ms` 0 means
 * GW_ROUNDS_EXPIRY_MS; `up` NULL means dispatch (borrowed, static).
 * Returns 0, or uv_random's error. */
int gw_rounds_new(uv_loop_t *loop, uint64_t expiry_ms, const struct gw_rounds_upstream *up,
                  struct gw_rounds **out);

/* Cancels every parked round upstream (no caller will answer them) and
 * frees the registry once the rounds still running with a receiver have
 * delivered their outcome (so call it before closing the servers). */
void gw_rounds_close(struct gw_rounds *rr);

void gw_rounds_stats(const struct gw_rounds *rr, struct gw_rounds_stats *out);

/* Starts a tools/call. `r->hooks` and `r->hooks_data` are ignored (the
 * module's replace them); `r->input_responses`, answers given before being
 * asked, answer the server's requests named by their keys (a 2026-07-28
 * server names them; each is used once, checked as a retry's are), and the
 * others are ignored; `r->client_caps` says which server requests the
 * caller can answer (the others are refused upstream by dispatch). Returns 0
 * and the receiver's on_answer fires later, maybe several times (once per
 * round, each answered by the caller's gw_rounds_resume, which names the
 * receiver of the next), the last time with the outcome; or returns
 * dispatch's error at once with no callback. `*out` (may be NULL) is the
 * round while the receiver waits: for gw_rounds_cancel. */
int gw_rounds_call(struct gw_rounds *rr, struct gw_servers *s, const struct gw_call_request *r,
                   const struct gw_rounds_receiver *rcv, struct gw_round **out);

/* What a requestState of prompts/get or resources/read (`r->method`)
 * binds: the prompt's name and arguments, or the URI (pointers into
 * `r`). 0, or GW_SERVERS_E_NO_TOOL when the params name neither. */
int gw_rounds_route_bind(const struct gw_route_request *r, struct gw_round_bind *b);

/* prompts/get or resources/read, as gw_rounds_call, bound as above. */
int gw_rounds_route(struct gw_rounds *rr, struct gw_servers *s, const struct gw_route_request *r,
                    const struct gw_rounds_receiver *rcv, struct gw_round **out);

/* The caller's retry: `state` as handed out, `responses` (borrowed; NULL
 * or an object: key → the request's result) and the call as the retry
 * names it. Returns 0 and `rcv` gets the next answer later, exactly as
 * after gw_rounds_call; or a GW_ROUNDS_E_* code with `*why` a sentence
 * (static), and no callback. Responses to keys not asked are ignored. */
int gw_rounds_resume(struct gw_rounds *rr, const char *state, json_t *responses,
                     const struct gw_round_bind *b, const struct gw_rounds_receiver *rcv,
                     struct gw_round **out, const char **why);

/* The receiver hung up while waiting: the upstream call is cancelled and
 * on_answer fires inside with its outcome (GW_MCP_E_CANCELLED). */
void gw_rounds_cancel(struct gw_round *round, const char *reason);

/* The requestState codec, exposed for its tests. `now_ms` is gw_now_ms()'s
 * clock. Encode writes GW_ROUNDS_STATE_LEN characters and a NUL. Decode
 * returns 0 with the round id, GW_ROUNDS_E_STATE, or GW_ROUNDS_E_EXPIRED
 * (only for a state whose MAC checked). */
void gw_rounds_state_encode(const unsigned char key[GW_ROUNDS_KEY_LEN],
                            const unsigned char id[GW_ROUNDS_ID_LEN], uint64_t expiry_ms,
                            const struct gw_round_bind *b, char out[GW_ROUNDS_STATE_LEN + 1]);
int gw_rounds_state_decode(const unsigned char key[GW_ROUNDS_KEY_LEN], const char *state,
                           const struct gw_round_bind *b, uint64_t now_ms,
                           unsigned char id[GW_ROUNDS_ID_LEN]);

#endif
