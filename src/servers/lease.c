/* Leases: the dialog index, acquire/release/sweep, the restarted ring and
 * the lease JSON (see gw/lease.h). No instance is touched here: the slot
 * source binds, unbinds and describes slots. */
#include "gw/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/util.h"

static const char reminder_fmt[] =
    "This dialog now holds a dedicated instance of the '%s' toolset. When you no longer need "
    "its tools, call mcp_release({\"serverId\":\"%s\"}) so that the instance can be stopped.";

/* ---- dialog ids ---- */

static bool valid_part(const char *p, size_t n)
{
    if (n == 0 || n > GW_DIALOG_PART_MAX || (n == 1 && p[0] == '.') ||
        (n == 2 && p[0] == '.' && p[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

int gw_dialog_parse(const char *s, char *root, char *self, char *canon)
{
    const char *slash = strchr(s, '/');
    size_t rn = slash ? (size_t)(slash - s) : strlen(s);
    const char *sp = slash ? slash + 1 : s;
    size_t sn = strlen(sp);

    if (!valid_part(s, rn) || !valid_part(sp, sn))
        return UV_EINVAL;
    memcpy(root, s, rn);
    root[rn] = '\0';
    memcpy(self, sp, sn);
    self[sn] = '\0';
    /* The parts are valid and at most GW_DIALOG_PART_MAX long: canon fits. */
    memcpy(canon, root, rn);
    canon[rn] = '\0';
    if (strcmp(root, self) != 0) {
        canon[rn] = '/';
        memcpy(canon + rn + 1, self, sn + 1);
    }
    return 0;
}

void gw_dialog_scope(const char *client, const char *dialog, char *out)
{
    size_t nc, nd, n;

    if (client == NULL || client[0] == '\0' ||
        (client[0] == 'd' && strcmp(client, "default") == 0)) {
        if (out != dialog)
            gw_strlcpy(out, dialog, GW_DIALOG_MAX + 1);
        return;
    }
    /* "client@dialog", cut at GW_DIALOG_MAX as snprintf would, without
     * its format machinery (every call of a client is scoped): the dialog
     * moved first, as `out` may be `dialog` */
    nc = strlen(client);
    nc = nc < GW_DIALOG_MAX ? nc : GW_DIALOG_MAX;
    n = nc < GW_DIALOG_MAX ? nc + 1 : nc;
    nd = strlen(dialog);
    nd = nd < GW_DIALOG_MAX - n ? nd : GW_DIALOG_MAX - n;
    memmove(out + n, dialog, nd);
    out[n + nd] = '\0';
    memcpy(out, client, nc);
    if (n > nc)
        out[nc] = '@';
}

const char *gw_dialog_unscope(const char *id, char *client)
{
    const char *at = strchr(id, '@');
    size_t n = at != NULL ? (size_t)(at - id) : 0;

    if (n > GW_DIALOG_PART_MAX)
        n = 0, at = NULL;
    memcpy(client, id, n);
    client[n] = '\0';
    return at != NULL ? at + 1 : id;
}

bool gw_dialog_is_session(const char *s)
{
    size_t n = sizeof GW_DIALOG_SESSION_PREFIX - 1;

    if (strncmp(s, GW_DIALOG_SESSION_PREFIX, n) != 0 || strlen(s + n) != GW_DIALOG_SESSION_HEX)
        return false;
    return strspn(s + n, "0123456789abcdef") == GW_DIALOG_SESSION_HEX;
}

bool gw_dialog_is_client(const char *s)
{
    size_t n = sizeof GW_DIALOG_CLIENT_PREFIX - 1;

    return strncmp(s, GW_DIALOG_CLIENT_PREFIX, n) == 0 && valid_part(s + n, strlen(s + n));
}

/* ---- the restarted ring ---- */

static void restarted_add(struct gw_leases *t, const char *dialog)
{
    size_t i = (t->restarted_head + t->nrestarted) % GW_LEASE_RESTARTED_MAX;

    if (t->restarted == NULL)
        t->restarted = gw_xcalloc(GW_LEASE_RESTARTED_MAX, sizeof(char *));
    if (t->nrestarted == GW_LEASE_RESTARTED_MAX) {
        free(t->restarted[t->restarted_head]);
        t->restarted_head = (t->restarted_head + 1) % GW_LEASE_RESTARTED_MAX;
        t->nrestarted--;
    }
    t->restarted[i] = gw_xstrdup(dialog);
    t->nrestarted++;
}

/* Removes the dialog from the ring; returns whether it was there. */
static bool restarted_take(struct gw_leases *t, const char *dialog)
{
    for (size_t k = 0; k < t->nrestarted; k++) {
        size_t i = (t->restarted_head + k) % GW_LEASE_RESTARTED_MAX;
        if (t->restarted[i] != NULL && strcmp(t->restarted[i], dialog) == 0) {
            free(t->restarted[i]);
            t->restarted[i] = NULL;
            return true;
        }
    }
    return false;
}

void gw_leases_inherit(struct gw_leases *to, const struct gw_leases *from)
{
    for (const struct lease *l = from->head; l != NULL; l = l->next)
        restarted_add(to, l->dialog);
    for (size_t k = 0; k < from->nrestarted; k++) {
        const char *d = from->restarted[(from->restarted_head + k) % GW_LEASE_RESTARTED_MAX];
        if (d != NULL)
            restarted_add(to, d);
    }
}

/* ---- the table ---- */

void gw_leases_init(struct gw_leases *t, const struct gw_lease_source *src, void *ctx,
                    struct server *srv)
{
    *t = (struct gw_leases){.src = src, .ctx = ctx, .srv = srv};
}

void gw_leases_free(struct gw_leases *t)
{
    for (size_t i = 0; t->restarted != NULL && i < GW_LEASE_RESTARTED_MAX; i++)
        free(t->restarted[i]);
    free(t->restarted);
    free(t->idx);
    t->restarted = NULL;
    t->idx = NULL;
}

struct lease *gw_lease_find(const struct gw_leases *t, const char *dialog)
{
    uint64_t h;

    if (t->n == 0)
        return NULL;
    h = gw_hash_str(dialog);
    for (struct lease *l = t->idx[h & (t->buckets - 1)]; l != NULL; l = l->hnext) {
        if (l->hash == h && strcmp(l->dialog, dialog) == 0)
            return l;
    }
    return NULL;
}

/* Doubles the index when it holds more leases than buckets. */
static void index_add(struct gw_leases *t, struct lease *l)
{
    if (t->n + 1 > t->buckets) {
        size_t n = t->buckets ? t->buckets * 2 : 8;
        struct lease **idx = gw_xcalloc(n, sizeof *idx);
        for (size_t i = 0; i < t->buckets; i++) {
            for (struct lease *e = t->idx[i], *next; e != NULL; e = next) {
                next = e->hnext;
                e->hnext = idx[e->hash & (n - 1)];
                idx[e->hash & (n - 1)] = e;
            }
        }
        free(t->idx);
        t->idx = idx;
        t->buckets = n;
    }
    l->hash = gw_hash_str(l->dialog);
    l->hnext = t->idx[l->hash & (t->buckets - 1)];
    t->idx[l->hash & (t->buckets - 1)] = l;
    t->n++;
}

static void unlink_lease(struct lease *l)
{
    struct gw_leases *t = l->table;
    struct lease **link = &t->head;

    while (*link != l)
        link = &(*link)->next;
    *link = l->next;
    link = &t->idx[l->hash & (t->buckets - 1)];
    while (*link != l)
        link = &(*link)->hnext;
    *link = l->hnext;
    t->n--;
}

int gw_lease_acquire(struct gw_leases *t, const char *dialog, bool fresh, struct lease **out)
{
    struct lease *l = gw_xcalloc(1, sizeof *l);
    int rc;

    l->table = t;
    l->srv = t->srv;
    snprintf(l->dialog, sizeof l->dialog, "%s", dialog);
    if ((rc = t->src->take(t->ctx, l, fresh)) != 0) {
        free(l);
        return rc;
    }
    l->since = time(NULL);
    l->last_used_ms = gw_now_ms();
    l->restarted = restarted_take(t, dialog);
    l->next = t->head;
    t->head = l;
    index_add(t, l);
    t->src->event(t->ctx, l, GW_LEASE_ACQUIRED, NULL);
    *out = l;
    return 0;
}

static void end(struct lease *l, enum gw_lease_event ev, const char *why)
{
    struct gw_leases *t = l->table;

    if (ev == GW_LEASE_LOST)
        restarted_add(t, l->dialog);
    t->src->event(t->ctx, l, ev, why);
    unlink_lease(l);
    if (l->slot != NULL)
        t->src->unbind(t->ctx, l, ev == GW_LEASE_RELEASED);
    free(l);
}

void gw_lease_release(struct lease *l, const char *why)
{
    end(l, GW_LEASE_RELEASED, why);
}

void gw_lease_lost(struct lease *l, const char *why)
{
    end(l, GW_LEASE_LOST, why);
}

void gw_leases_end_all(struct gw_leases *t, const char *why)
{
    while (t->head != NULL)
        end(t->head, GW_LEASE_ENDED, why);
}

void gw_leases_sweep(struct gw_leases *t, uint64_t now_ms, uint64_t idle_ms)
{
    for (struct lease *l = t->head, *next; idle_ms > 0 && l != NULL; l = next) {
        next = l->next;
        if (!t->src->busy(t->ctx, l) && now_ms - l->last_used_ms >= idle_ms)
            gw_lease_release(l, "idle past gateway.lease_idle_timeout");
    }
}

/* ---- JSON ---- */

json_t *gw_lease_reply_info(struct lease *l, const char *server_id, uint64_t instance)
{
    json_t *o = json_object(); /* built directly: one per call */

    json_object_set_new(o, "serverId", json_string(server_id));
    json_object_set_new(o, "instance", json_integer((json_int_t)instance));
    if (!l->reminded) {
        char *text = gw_xasprintf(reminder_fmt, server_id, server_id);
        json_object_set_new(o, "reminder", json_string(text));
        free(text);
        l->reminded = true;
    }
    if (l->restarted) {
        json_object_set_new(o, "restarted", json_true());
        l->restarted = false;
    }
    return o;
}

json_t *gw_lease_json(const struct lease *l)
{
    char since[32], used[32];
    time_t used_at = time(NULL) - (time_t)((gw_now_ms() - l->last_used_ms) / 1000);
    json_t *o = json_object();

    gw_format_time(l->since, since, sizeof since);
    gw_format_time(used_at, used, sizeof used);
    l->table->src->describe(l->table->ctx, l, o);
    json_object_set_new(o, "since", json_string(since));
    json_object_set_new(o, "lastUsed", json_string(used));
    return o;
}
