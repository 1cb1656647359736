/* Shared by the files of the MCP client only (mcp_client.c: the request
 * table, deadlines, sending and receiving; mcp_client_init.c: the
 * 2025-era handshake and the accessors; mcp_client_modern.c: 2026-07-28,
 * its handshake, envelope, listen and input rounds; mcp_client_list.c:
 * paginated lists; mcp_client_peer.c: what the server sends unasked). */
#ifndef GW_MCP_CLIENT_INTERNAL_H
#define GW_MCP_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "gw/json_out.h"
#include "gw/mcp_client.h"
#include "gw/trace.h"

#define TEXT_BYTES 512 /* a message built for people, at most */

struct pending {
    struct gw_mcp_client *c;
    uint64_t id;
    gw_mcp_handle op; /* the handle the caller holds; pages of a list share one */
    struct pending *hnext;
    struct pending *prev, *next;
    gw_mcp_reply_cb cb;
    void *data;
    char *method; /* owned */
    uint64_t timeout_ms;
    uint64_t deadline; /* loop ms; 0 when the request has no timeout */
    bool call;         /* the owner's request or tools/call, not a list page or the handshake */
    struct pending *dprev, *dnext;
    /* 2026-07-28 only: the params as sent (without the envelope), for a
     * retry after input, and the round waiting for the owner's answers. */
    json_t *params;
    struct input_round *round;
    unsigned caps;        /* GW_MCP_CAP_* its caller can answer */
    bool awaits_ack;      /* a 2026-07-28 resources/(un)subscribe: never sent, answered by the
                             listen's acknowledgement */
    struct gw_span *span; /* its CLIENT span, when traced (mcp_client_trace.c) */
};

/* One input_required result being answered (mcp_client_modern.c). */
struct input_round {
    json_t *keys;      /* the inputRequests keys, in order */
    json_t *responses; /* key → the owner's result */
    json_t *state;     /* the server's requestState, or NULL */
    json_t *error;     /* the first error answer, or NULL */
    unsigned waiting;  /* keys not answered yet */
    unsigned rounds;   /* input_required results so far */
    bool issuing;      /* inside the owner's on_request calls */
};

/* One paginated list in progress; owned by itself, freed when it reports. */
struct gw_mcp_client {
    uv_loop_t *loop;
    struct gw_redact *redact; /* owned; may be NULL */
    uv_timer_t anchor;        /* armed for the earliest deadline */
    uint64_t armed_due;       /* when it fires; 0 when it is not armed */
    struct pending *dhead, *dtail;
    unsigned open_handles;
    enum gw_mcp_state state;
    struct gw_mcp_client_opts cb; /* callbacks and data; string fields unused */
    char *server_id;
    char *client_version;
    json_t *config;
    uint64_t init_timeout_ms;
    uint64_t next_id;
    struct pending **buckets; /* nbuckets, a power of two */
    size_t nbuckets;
    struct pending *head;
    size_t n_pending;
    unsigned n_calls;    /* entries with `call` set */
    uint64_t *cancelled; /* CANCELLED_RING ids, allocated at the first cancel */
    unsigned cancelled_pos;
    char *version;
    json_t *server_info;
    json_t *capabilities;
    struct gw_mcp_client_stats stats;
    uint64_t warn_window;
    unsigned warn_count;
    const char *cur_msg; /* the message being received, for log samples */
    size_t cur_len;
    enum gw_mcp_era want;    /* what the owner asked for */
    enum gw_mcp_era era;     /* decided by the handshake */
    bool probing;            /* an AUTO server/discover awaits its answer */
    bool reprobed;           /* a -32022 made the probe go again once */
    json_t *envelope;        /* the 2026-07-28 _meta keys of every request */
    uint64_t listen_since;   /* loop ms the listen was opened; 0: none open */
    gw_mcp_handle listen_op; /* the open listen's handle (= its id) */
    json_t *listen_uris;     /* URI → true: the resourceSubscriptions it asks for */
    /* traces (mcp_client_trace.c): the peer as the conventions describe it,
     * and the span of the request being written, taken by its entry */
    const char *peer_transport; /* static: "pipe", "tcp" */
    char *peer_address;
    int peer_port;
    uint64_t peer_instance;
    const char *(*peer_session)(void *data);
    struct gw_span *next_span;
    struct gw_span *peer_attrs; /* a template: the attributes above, for this version */
    char *peer_attrs_version;
};

/* mcp_client_trace.c */
/* The params to send of a request `method` (`sent`: what it would send,
 * taken): when a traced context is current, a CLIENT span is started
 * (c->next_span) and its context set in the returned params' _meta. */
json_t *gw_mcp__span_params(struct gw_mcp_client *c, const char *method, json_t *params,
                            json_t *sent);
/* The same for a 2025-era tools/call written as text: the _meta members
 * (and a comma when `more` follow), or nothing when not traced. */
void gw_mcp__span_call_text(struct gw_mcp_client *c, struct gw_jbuf *b, const char *tool,
                            bool more);
/* The span's context set in a _meta object (a retry after input). */
void gw_mcp__span_meta(json_t *meta, const struct gw_span *s);
/* Ends the request's span with what its reply says (NULL: never sent). */
void gw_mcp__span_end(struct pending *p, const struct gw_mcp_reply *r);

/* mcp_client.c */
/* Sends a request whose answer goes to `cb`; `op` groups pages of a list
 * under one handle (0: a new one, set in *handle). */
int gw_mcp__send_request(struct gw_mcp_client *c, const char *method, json_t *params,
                         uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle op,
                         gw_mcp_handle *handle);
int gw_mcp__send_notification(struct gw_mcp_client *c, const char *method, json_t *params);
/* 0 when the client takes requests, else the code saying why not. */
int gw_mcp__check_ready(const struct gw_mcp_client *c);
int gw_mcp__send_json(struct gw_mcp_client *c, json_t *msg);
/* mcp_client_peer.c: hostile input, counted and logged (rate limited,
 * with a masked sample of the message being received). */
void gw_mcp__warn_limited(struct gw_mcp_client *c, const char *msg, const char *detail);
/* A message of the wrong shape: counted, logged (rate limited). */
void gw_mcp__bad_shape(struct gw_mcp_client *c, const char *why);
/* mcp_client_mask.c: a copy of the server's error object `error` with its
 * secrets masked in every string of its members (data too, keys and all);
 * the members and their types stay (security.md P6). */
json_t *gw_mcp__masked_error(const struct gw_mcp_client *c, json_t *error);

/* The in-flight table, for the input rounds. */
struct pending *gw_mcp__lookup(struct gw_mcp_client *c, uint64_t id);
/* The request whose caller holds handle `op` (its pages or retries share
 * it), or NULL. */
struct pending *gw_mcp__find_op(struct gw_mcp_client *c, gw_mcp_handle op);
void gw_mcp__finish(struct pending *p, const struct gw_mcp_reply *r);
void gw_mcp__finish_error(struct pending *p, int code, const char *message, json_t *error);
/* Sends request `p` again under a new id with `params` (taken): the same
 * handle, callback and deadline. On failure `p` has failed. */
void gw_mcp__resend(struct gw_mcp_client *c, struct pending *p, json_t *params);
/* A request entry that is not sent (it is answered from elsewhere); its
 * deadline runs. */
struct pending *gw_mcp__pending_add(struct gw_mcp_client *c, const char *method,
                                    uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data,
                                    gw_mcp_handle *handle);

/* mcp_client_init.c */
int gw_mcp__initialize(struct gw_mcp_client *c);
void gw_mcp__handshake_failed(struct gw_mcp_client *c, int code, const char *reason);
/* The handshake is done: state READY, on_ready. */
void gw_mcp__ready(struct gw_mcp_client *c);

/* Keeps the handshake's capabilities and serverInfo (either may be NULL:
 * an empty object) in c, shared with other clients that got equal ones;
 * gw_mcp__drop_handshake lets go of them. */
void gw_mcp__keep_handshake(struct gw_mcp_client *c, json_t *caps, json_t *info);
void gw_mcp__drop_handshake(struct gw_mcp_client *c);

/* mcp_client_modern.c */
/* Sends server/discover (the probe, or the MODERN handshake). */
int gw_mcp__discover(struct gw_mcp_client *c);
/* `params` (borrowed, may be NULL) with the envelope in its _meta,
 * declaring the client capabilities of `caps` (GW_MCP_CAP_*): a new
 * reference. */
json_t *gw_mcp__enveloped(const struct gw_mcp_client *c, json_t *params, unsigned caps);
/* True when `method`'s result may ask for input (and so its params are
 * kept). */
bool gw_mcp__may_ask(const char *method);
/* A result object for `p`, changed in place (the server's serverInfo is
 * taken out of its _meta, but for server/discover). True when it is not
 * `p`'s answer as it stands: it asked for input and `p` goes on (the
 * owner is asked, or the request was sent again), or its resultType is
 * invalid (neither "complete" nor, where a round may be,
 * "input_required"; absent is complete) and `p` has failed. */
bool gw_mcp__result_taken(struct gw_mcp_client *c, struct pending *p, json_t *result);
/* An answer (result or error, borrowed) to the client's own input request
 * `id` of the request whose handle is `origin`; dropped when that round
 * has ended. */
void gw_mcp__input_respond(struct gw_mcp_client *c, json_t *id, gw_mcp_handle origin,
                           json_t *result, json_t *error);
void gw_mcp__round_free(struct input_round *r);
/* resources/subscribe and resources/unsubscribe to a 2026-07-28 server,
 * which has neither: the URI joins or leaves the listen's
 * resourceSubscriptions, the listen is opened again, and its
 * acknowledgement answers the request. Contract of gw_mcp_client_request. */
int gw_mcp__subscribe(struct gw_mcp_client *c, const char *method, json_t *params,
                      uint64_t timeout_ms, gw_mcp_reply_cb cb, void *data, gw_mcp_handle *handle);
/* notifications/subscriptions/acknowledged from the server. */
void gw_mcp__listen_acked(struct gw_mcp_client *c, json_t *params);

/* mcp_client_peer.c */
/* The server requests the owner may answer: sampling/createMessage,
 * elicitation/create and roots/list. */
bool gw_mcp__relayable(const char *method);
void gw_mcp__handle_server_request(struct gw_mcp_client *c, const char *method, json_t *id,
                                   json_t *m);
void gw_mcp__handle_notification(struct gw_mcp_client *c, const char *method, json_t *m);

#endif
