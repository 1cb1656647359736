/* Shared by the files of the MCP client only (mcp_client.c: the request
 * table, deadlines, sending and receiving; mcp_client_init.c: the
 * handshake; mcp_client_list.c: paginated lists). */
#ifndef GW_MCP_CLIENT_INTERNAL_H
#define GW_MCP_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "gw/mcp_client.h"

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
};

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
/* A message of the wrong shape: counted, logged (rate limited). */
void gw_mcp__bad_shape(struct gw_mcp_client *c, const char *why);

/* mcp_client_peer.c */
void gw_mcp__handle_server_request(struct gw_mcp_client *c, const char *method, json_t *id,
                                   json_t *m);
void gw_mcp__handle_notification(struct gw_mcp_client *c, const char *method, json_t *m);

#endif
