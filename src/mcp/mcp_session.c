/* /mcp sessions: the initialize that begins one, unguessable ids, the
 * table, idle expiry, and each session's server-to-client GET stream with
 * the events kept for Last-Event-ID.
 *
 * SSE event ids are "<stream>.<seq>": `stream` says which stream an id
 * belongs to, so a Last-Event-ID replays only that stream's events (ids
 * are unique across the session's streams, as the spec asks). Stream 0 is
 * the GET stream, whose `seq` counts the session's GET-stream events;
 * numbers above are POST streams (mcp_stream.c). */
#include "gw/mcp_server_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/json_out.h"
#include "gw/lease.h"
#include "gw/log.h"
#include "gw/util.h"
#include "gw/version.h"

static size_t hash_of(const char *id)
{
    size_t h = 5381;

    for (const char *p = id; *p != '\0'; p++)
        h = h * 33 + (unsigned char)*p;
    return h;
}

static struct gw_mcp_session **bucket_of(struct gw_mcp_server *ms, const char *id)
{
    return &ms->buckets[hash_of(id) & (ms->nbuckets - 1)];
}

/* The table follows the sessions, both ways: a fixed table for the most
 * there may be (10,000) is 128 KiB, whose pages stay resident once random
 * ids have touched them, however few sessions are left. */
static void resize_table(struct gw_mcp_server *ms, size_t n)
{
    free(ms->buckets);
    ms->buckets = gw_xcalloc(n, sizeof *ms->buckets);
    ms->nbuckets = n;
    for (struct gw_mcp_session *s = ms->head; s != NULL; s = s->next) {
        struct gw_mcp_session **b = bucket_of(ms, s->id);

        s->hnext = *b;
        *b = s;
    }
}

const char *const gw_mcp__versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                                        NULL};

bool gw_mcp__version_supported(const char *v)
{
    for (size_t i = 0; v != NULL && gw_mcp__versions[i] != NULL; i++) {
        if (strcmp(v, gw_mcp__versions[i]) == 0)
            return true;
    }
    return false;
}

/* `n` bytes from the OS CSPRNG as 2n lowercase hex characters. */
static int random_hex(uv_loop_t *loop, char *out, size_t n)
{
    unsigned char raw[MCP_SESSION_ID_LEN / 2];
    int rc = uv_random(loop, NULL, raw, n, 0, NULL);

    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* A session's own dialog is not its id: the id is a bearer secret, and a
 * dialog is shown in /v1/dialogs, lease events and the log (security.md
 * C6). Sessions of one process do not share a name: 64 random bits among at
 * most 10,000 live sessions collide with odds below 1e-11. */
static int own_dialog(uv_loop_t *loop, char *out)
{
    size_t n = sizeof GW_DIALOG_SESSION_PREFIX - 1;

    memcpy(out, GW_DIALOG_SESSION_PREFIX, n);
    return random_hex(loop, out + n, GW_DIALOG_SESSION_HEX / 2);
}

struct gw_mcp_session *gw_mcp__session_find(struct gw_mcp_server *ms, const char *id)
{
    if (id == NULL || strlen(id) != MCP_SESSION_ID_LEN || ms->nsessions == 0)
        return NULL;
    for (struct gw_mcp_session *s = *bucket_of(ms, id); s != NULL; s = s->hnext) {
        if (strcmp(s->id, id) == 0)
            return s;
    }
    return NULL;
}

static void link_session(struct gw_mcp_server *ms, struct gw_mcp_session *s)
{
    struct gw_mcp_session **b;

    s->prev = ms->tail;
    if (ms->tail != NULL)
        ms->tail->next = s;
    else
        ms->head = s;
    ms->tail = s;
    ms->nsessions++;
    if (ms->nsessions > ms->nbuckets) {
        resize_table(ms, ms->nbuckets ? 2 * ms->nbuckets : MCP_BUCKETS_MIN);
        return;
    }
    b = bucket_of(ms, s->id);
    s->hnext = *b;
    *b = s;
}

static void unlink_session(struct gw_mcp_server *ms, struct gw_mcp_session *s)
{
    struct gw_mcp_session **link = bucket_of(ms, s->id);

    while (*link != s)
        link = &(*link)->hnext;
    *link = s->hnext;
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        ms->head = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    else
        ms->tail = s->prev;
    ms->nsessions--;
    if (ms->nbuckets > MCP_BUCKETS_MIN && ms->nsessions < ms->nbuckets / 8)
        resize_table(ms, ms->nbuckets / 2);
}

int gw_mcp__session_new(struct gw_mcp_server *ms, const char *client, const char *dialog,
                        struct gw_mcp_session **out)
{
    struct gw_mcp_session *s;
    char id[MCP_SESSION_ID_LEN + 1], own[GW_DIALOG_SESSION_LEN + 1], scoped[GW_DIALOG_MAX + 1];
    size_t dialog_len;
    int rc;

    if (ms->nsessions >= ms->lim.max_sessions)
        return UV_EBUSY;
    /* A collision of 128 random bits does not happen; the loop only makes
     * "an id reaches only its owner" independent of that argument. */
    do {
        rc = random_hex(ms->loop, id, MCP_SESSION_ID_LEN / 2);
        if (rc != 0)
            return rc;
    } while (gw_mcp__session_find(ms, id) != NULL);
    rc = dialog == NULL ? own_dialog(ms->loop, own) : 0;
    if (rc != 0)
        return rc;
    /* scoped by its client before it is sized: the session keeps the
     * dialog at its length */
    gw_dialog_scope(client, dialog ? dialog : own, scoped);
    dialog_len = strlen(scoped);
    s = gw_xcalloc(1, sizeof *s + dialog_len + 1);
    s->ms = ms;
    memcpy(s->id, id, sizeof id);
    memcpy(s->dialog, scoped, dialog_len);
    s->named_dialog = dialog != NULL;
    snprintf(s->log_level, sizeof s->log_level, "info");
    s->last_used_ms = gw_now_ms();
    s->next_seq = 1;
    link_session(ms, s);
    *out = s;
    return 0;
}

static void on_stream_abort(struct gw_http_request *req, void *data)
{
    struct gw_mcp_session *s = data;

    if (s->get == req)
        s->get = NULL;
}

/* Ends the GET stream (the client may come back with Last-Event-ID). */
static void end_stream(struct gw_mcp_session *s)
{
    struct gw_http_request *req = s->get;

    if (req == NULL)
        return;
    s->get = NULL;
    gw_http_on_abort(req, NULL, NULL);
    gw_http_stream_end(req);
}

/* Writes to the GET stream; a client that does not keep up loses the
 * stream (never the loop's memory) and can resume with Last-Event-ID. */
static int stream_write(struct gw_mcp_session *s, const char *text)
{
    int rc;

    if (s->get == NULL)
        return -1;
    rc = gw_http_stream_write(s->get, text, strlen(text), MCP_MAX_QUEUED);
    if (rc == UV_ENOBUFS) {
        gw_log(GW_LOG_WARN, "mcp stream client too slow; stream ended", "peer", s->get->peer, NULL);
        end_stream(s);
    }
    return rc;
}

void gw_mcp__session_send(struct gw_mcp_session *s, json_t *msg)
{
    char *body = gw_json_dump(msg, NULL);
    uint64_t seq = s->next_seq++;
    char *text =
        gw_xasprintf("id: 0.%" PRIu64 "\nevent: message\ndata: %s\n\n", seq, body ? body : "null");

    free(body);
    stream_write(s, text);
    if (!s->had_get) {
        free(text);
        return;
    }
    if (s->kept == NULL)
        s->kept = gw_xcalloc(MCP_KEEP_EVENTS, sizeof *s->kept);
    free(s->kept[seq % MCP_KEEP_EVENTS].text);
    s->kept[seq % MCP_KEEP_EVENTS] = (struct mcp_kept){seq, text};
}

/* Parses "0.<seq>" (a GET-stream event id of ours); returns 0 or -1. */
static int parse_event_id(const char *id, uint64_t *seq)
{
    char *end;

    if (id == NULL || strncmp(id, "0.", 2) != 0 || id[2] < '0' || id[2] > '9')
        return -1;
    *seq = strtoull(id + 2, &end, 10);
    return *end == '\0' ? 0 : -1;
}

/* Sends the kept events after `last`, oldest first. */
static void replay(struct gw_mcp_session *s, uint64_t last)
{
    uint64_t first = s->next_seq > MCP_KEEP_EVENTS ? s->next_seq - MCP_KEEP_EVENTS : 1;

    for (uint64_t seq = last + 1 > first ? last + 1 : first; s->kept && seq < s->next_seq; seq++) {
        const struct mcp_kept *k = &s->kept[seq % MCP_KEEP_EVENTS];
        if (k->seq == seq && k->text != NULL && stream_write(s, k->text) != 0)
            return;
    }
}

void gw_mcp__session_attach(struct gw_mcp_session *s, struct gw_http_request *req,
                            const char *last_event_id)
{
    static const char *const headers[] = {"Cache-Control: no-store", NULL};
    uint64_t last;
    char *priming;

    s->get = req;
    s->had_get = true;
    gw_http_stream_begin(req, 200, "text/event-stream", headers);
    gw_http_on_abort(req, on_stream_abort, s);
    if (parse_event_id(last_event_id, &last) == 0 && last < s->next_seq)
        replay(s, last);
    if (s->get == NULL || strcmp(s->version, "2025-11-25") < 0)
        return;
    /* 2025-11-25 priming event: an id before any message, so a client whose
     * stream breaks early can still resume, and the delay before it should;
     * older clients may choke on its empty data, so they do not get one. */
    priming = gw_xasprintf("id: 0.%" PRIu64 "\nretry: %u\ndata: \n\n", s->next_seq++,
                           MCP_STREAM_RETRY_MS);
    stream_write(s, priming);
    free(priming);
}

void gw_mcp__session_end(struct gw_mcp_session *s, bool release, const char *why)
{
    struct gw_mcp_server *ms = s->ms;

    unlink_session(ms, s);
    end_stream(s);
    gw_mcp__calls_cancel(s, why);
    gw_mcp__streams_end(s);
    if (release) {
        json_t *released = json_array();
        gw_servers_release(ms->servers, s->dialog, NULL, released);
        json_decref(released);
    }
    /* After the release: the released instances dropped their
     * subscriptions already and are not sent unsubscribes on their way out. */
    if (s->sub != NULL)
        gw_subscriber_free(s->sub, !ms->closing);
    gw_log(GW_LOG_INFO, "mcp session ended", "dialog", s->dialog, "why", why, NULL);
    for (size_t i = 0; s->kept != NULL && i < MCP_KEEP_EVENTS; i++)
        free(s->kept[i].text);
    free(s->kept);
    free(s);
}

void gw_mcp__sessions_sweep(struct gw_mcp_server *ms)
{
    uint64_t now = gw_now_ms();
    struct gw_mcp_session *s = ms->head, *next;

    for (; s != NULL; s = next) {
        next = s->next;
        gw_mcp__streams_sweep(s, now);
        if (s->get != NULL || s->ncalls > 0 || now - s->last_used_ms < ms->lim.idle_ms)
            continue;
        /* A named dialog may be shared with REST calls: its leases follow
         * lease_idle_timeout instead. */
        gw_mcp__session_end(s, !s->named_dialog, "idle");
    }
}

/* ---- initialize ---- */

json_t *gw_mcp__initialize_check(json_t *id, json_t *params, const char **version)
{
    const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
    json_t *caps = json_object_get(params, "capabilities");

    if (!json_is_object(params) || asked == NULL)
        return gw_mcp__error(id, RPC_INVALID_PARAMS,
                             "initialize needs params.protocolVersion (a string)");
    if (caps != NULL && !json_is_object(caps))
        return gw_mcp__error(id, RPC_INVALID_PARAMS, "params.capabilities must be an object");
    *version = gw_mcp__version_supported(asked) ? asked : gw_mcp__versions[0];
    return NULL;
}

unsigned gw_mcp__client_caps(json_t *caps, bool *url_elicitation)
{
    *url_elicitation = json_is_object(json_object_get(json_object_get(caps, "elicitation"), "url"));
    return (json_is_object(json_object_get(caps, "sampling")) ? GW_CLIENT_CAP_SAMPLING : 0) |
           (json_is_object(json_object_get(caps, "elicitation")) ? GW_CLIENT_CAP_ELICITATION : 0);
}

json_t *gw_mcp__initialize_result(struct gw_mcp_server *ms, const char *version)
{
    json_t *r =
        json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version,
                  "capabilities", "tools", "listChanged", 1, "logging", "serverInfo", "name",
                  "mcpgw", "title", "mcpgw MCP gateway", "version", GW_VERSION, "instructions",
                  "mcpgw serves the tools of several MCP servers as one. A stateful "
                  "server gives this session its own instance; call mcp_release with "
                  "{\"serverId\": \"<id>\"} when you no longer need that toolset.");
    json_t *caps = json_object_get(r, "capabilities");
    bool prompts = gw_servers_offers(ms->servers, GW_EXTRA_PROMPTS);
    bool templates = gw_servers_offers(ms->servers, GW_EXTRA_TEMPLATES);
    json_t *ext;

    /* Capabilities cannot change during a session: what some server
     * offers now is declared, with listChanged for what comes later.
     * subscribe is declared because the gateway relays it; a resource whose
     * server cannot do it gets an error saying so. */
    if (prompts)
        json_object_set_new(caps, "prompts", json_pack("{s:b}", "listChanged", 1));
    if (templates || gw_servers_offers(ms->servers, GW_EXTRA_RESOURCES))
        json_object_set_new(caps, "resources",
                            json_pack("{s:b, s:b}", "subscribe", 1, "listChanged", 1));
    if (prompts || templates)
        json_object_set_new(caps, "completions", json_object());
    ext = gw_servers_extensions(ms->servers);
    if (json_object_size(ext) > 0)
        json_object_set(caps, "extensions", ext);
    json_decref(ext);
    return r;
}
