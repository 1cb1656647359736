/* Leases: which instance of a stateful server serves which dialog
 * (design §6).
 *
 * A dialog is named by its id, "root" or "root/self"; a lease binds one
 * dialog to one instance (a slot) of one server until it is released (by
 * the dialog, idle past gateway.lease_idle_timeout, or the server going
 * away) or lost (the instance died). Each server owns one `gw_leases`
 * table: the leases, an index by dialog, and a bounded ring of dialogs
 * whose instance was lost or replaced, so that their next lease says
 * `restarted`.
 *
 * The table never touches an instance: it asks its slot source (the
 * supervisor, or a unit test's fake) for a slot when a lease is made and
 * tells it when a lease ends. Ownership: the table owns its leases and the
 * ring; a lease points at its slot (owned by the supervisor) and the slot
 * back at it while bound. */
#ifndef GW_LEASE_H
#define GW_LEASE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The longest dialog id: "root/self", and its client's name and '@' before
 * it (gw_dialog_scope). */
#define GW_DIALOG_MAX      194
#define GW_DIALOG_PART_MAX 64

/* Dialogs remembered as restarted, per server (the oldest is forgotten). */
#define GW_LEASE_RESTARTED_MAX 1024

/* Parses "root" or "root/self" (each 1–64 of [A-Za-z0-9_.-], not "." or
 * ".."); self defaults to root. Writes the canonical id ("root" when self
 * equals root) to `canon` (GW_DIALOG_MAX + 1 bytes). Returns 0 or UV_EINVAL. */
int gw_dialog_parse(const char *s, char *root, char *self, char *canon);

/* The dialog of a session without X-Mcpgw-Dialog: this prefix and
 * GW_DIALOG_SESSION_HEX random lowercase hex characters. It is not the
 * session id (a bearer secret, never shown) and ':' is outside the dialog
 * syntax of REST bodies and X-Mcpgw-Dialog (gw_dialog_parse), so only the
 * session itself can call through its leases. */
#define GW_DIALOG_SESSION_PREFIX "mcp-session:"
#define GW_DIALOG_SESSION_HEX    16
#define GW_DIALOG_SESSION_LEN    (sizeof GW_DIALOG_SESSION_PREFIX - 1 + GW_DIALOG_SESSION_HEX)

/* A client's dialog as the leases, input rounds and activations key it
 * (issue 35): "<client>@<dialog>", so that the "chat1" of two clients are
 * two dialogs and no name reaches another client's; the dialog itself for
 * no client ("") and for `default` (gateway.auth_token), as before
 * clients. '@' is in no dialog and no client name. `out` holds
 * GW_DIALOG_MAX + 1 bytes and may be `dialog`. */
void gw_dialog_scope(const char *client, const char *dialog, char *out);
/* The dialog of a scoped id as its client named it (a pointer into `id`),
 * with the client's name in `client` (GW_DIALOG_PART_MAX + 1 bytes; "" for
 * a dialog of no client or of `default`). */
const char *gw_dialog_unscope(const char *id, char *client);

/* Whether `s` has the form of a session's own dialog (any string). */
bool gw_dialog_is_session(const char *s);

/* The dialog of an /mcp 2026-07-28 request that names none
 * (gateway.mcp_default_dialog): this prefix and its client's name made of
 * the characters of one dialog part (1-GW_DIALOG_PART_MAX of them), so that
 * no REST call or X-Mcpgw-Dialog can name it either; "mcp-default" (an
 * ordinary dialog) when it names no client or for `shared`. */
#define GW_DIALOG_CLIENT_PREFIX "mcp-client:"
#define GW_DIALOG_DEFAULT       "mcp-default"

/* Whether `s` has the form of a client's default dialog (any string). */
bool gw_dialog_is_client(const char *s);

struct server;
struct slot;
struct gw_call;
struct gw_leases;

struct lease {
    struct lease *next;
    struct lease *hnext; /* the next in its bucket of the table's index */
    uint64_t hash;       /* of dialog */
    struct gw_leases *table;
    struct server *srv; /* the table's owner, for the layers above */
    char dialog[GW_DIALOG_MAX + 1];
    struct slot *slot;
    time_t since;
    uint64_t last_used_ms;
    bool reminded;           /* the reminder went out with a reply */
    bool restarted;          /* the dialog's previous instance died or was replaced */
    struct gw_call *waiting; /* calls waiting for the slot to be ready (dispatch) */
};

enum gw_lease_event {
    GW_LEASE_ACQUIRED, /* a new lease holds its slot */
    GW_LEASE_RELEASED, /* released: its slot is to be retired */
    GW_LEASE_LOST,     /* its instance died: the slot is already going */
    GW_LEASE_ENDED,    /* its server went away: the slots go with it */
};

/* What a table needs of the server whose instances it leases. */
struct gw_lease_source {
    /* Binds `l` to a slot (sets l->slot, and the slot's back pointer):
     * 0, or a negative code. `fresh`: a new instance is preferred to a
     * spare (see gw_lease_acquire). */
    int (*take)(void *ctx, struct lease *l, bool fresh);
    /* The lease ends: unbind its slot, and retire it when `retire`. */
    void (*unbind)(void *ctx, struct lease *l, bool retire);
    /* Whether an idle sweep must leave `l` (calls waiting or in flight). */
    bool (*busy)(void *ctx, const struct lease *l);
    /* What happened, for the log, /v1/events and the calls waiting on a
     * lease that ends (they fail). `why` is NULL for GW_LEASE_ACQUIRED. */
    void (*event)(void *ctx, struct lease *l, enum gw_lease_event ev, const char *why);
    /* Adds the instance's facts (server, instance, inFlight, ready, pid or
     * session) to a lease's JSON. */
    void (*describe)(void *ctx, const struct lease *l, json_t *o);
};

struct gw_leases {
    struct lease *head;
    struct lease **idx; /* by dialog hash; a power of two of buckets */
    size_t buckets, n;
    char **restarted; /* ring of GW_LEASE_RESTARTED_MAX, allocated on first use */
    size_t nrestarted, restarted_head;
    const struct gw_lease_source *src;
    void *ctx;
    struct server *srv;
};

/* An empty table whose slots come from `src` with `ctx`; `srv` is copied
 * into each lease for the layers above. */
void gw_leases_init(struct gw_leases *t, const struct gw_lease_source *src, void *ctx,
                    struct server *srv);
/* Frees the ring and the index; the leases must be gone. */
void gw_leases_free(struct gw_leases *t);

struct lease *gw_lease_find(const struct gw_leases *t, const char *dialog);

/* Gives `dialog` (canonical, no lease yet) a lease: 0 and *out, or the
 * source's negative code (nothing changed). The lease says `restarted`
 * when the dialog is in the ring (which forgets it). */
int gw_lease_acquire(struct gw_leases *t, const char *dialog, bool fresh, struct lease **out);

/* Ends `l` (freed): its waiting calls fail and its slot is retired. */
void gw_lease_release(struct lease *l, const char *why);
/* Ends `l` whose instance died: as release, and the dialog goes into the
 * ring so its next lease says `restarted`. */
void gw_lease_lost(struct lease *l, const char *why);

/* Ends every lease of a server that goes away (GW_LEASE_ENDED). */
void gw_leases_end_all(struct gw_leases *t, const char *why);

/* Releases every lease idle (not busy) for `idle_ms` or more at `now_ms`;
 * idle_ms 0 keeps them. */
void gw_leases_sweep(struct gw_leases *t, uint64_t now_ms, uint64_t idle_ms);

/* Every dialog of `from` (leased or in its ring) is remembered as
 * restarted by `to`: a replaced server's dialogs start afresh. */
void gw_leases_inherit(struct gw_leases *to, const struct gw_leases *from);

/* The "lease" object a reply carries (docs/api.md): serverId, instance,
 * the reminder the first time, restarted once after a restart. */
json_t *gw_lease_reply_info(struct lease *l, const char *server_id, uint64_t instance);

/* The lease as /v1/dialogs shows it. New reference. */
json_t *gw_lease_json(const struct lease *l);

#endif
