/* The audit lines of tool calls (gw/audit.h, docs/operations.md): what the
 * call was, who made it, what decided, how it ended. Written from the
 * loop: a refusal at once, a call with its outcome. */
#include "gw/audit.h"
#include "gw/dispatch_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "gw/instance.h"
#include "gw/json_out.h"
#include "gw/lease.h"
#include "gw/mcp_client.h"
#include "gw/oauth.h"
#include "gw/redact.h"
#include "gw/servers_internal.h"
#include "gw/util.h"

struct gw_call_audit {
    const char *front;
    char *rule;   /* NULL: nothing restricted the call */
    char hex[65]; /* its arguments' digest */
    char *keys;   /* `arguments: hash`: their top-level keys, as JSON text */
    json_t *full; /* `arguments: full`: them, masked */
    size_t bytes_in;
    uint64_t started_ms;
    uint64_t instance;
    int pid;
};

void gw_dispatch_set_audit(struct gw_servers *s, struct gw_audit *a)
{
    s->audit = a;
}

/* A member: its key's text `,"key":` is put together by the compiler. */
#define put_str(b, key, v) put_str_((b), ",\"" key "\":", sizeof(",\"" key "\":") - 1, (v))
#define put_int(b, key, v, null)                                                                   \
    put_int_((b), ",\"" key "\":", sizeof(",\"" key "\":") - 1, (v), (null))

static void put_str_(struct gw_jbuf *b, const char *key, size_t n, const char *v)
{
    gw_jbuf_put(b, key, n);
    if (v == NULL || gw_jbuf_string(b, v, strlen(v)) != 0)
        gw_jbuf_lit(b, "null");
}

static void put_int_(struct gw_jbuf *b, const char *key, size_t n, json_int_t v, bool null)
{
    gw_jbuf_put(b, key, n);
    if (null)
        gw_jbuf_lit(b, "null");
    else
        gw_jbuf_int(b, v);
}

/* The line's `ts`: the date and time of day change once a second, so only
 * then are they formatted again (gmtime_r and strftime took more than the
 * rest of the line); the milliseconds are three digits. The loop's thread
 * alone writes lines. */
static void put_ts(struct gw_jbuf *b)
{
    static time_t sec = -1;
    static char day[32];
    static size_t day_len;
    char ms[6];
    struct timeval tv;
    struct tm tm;
    int m;

    gettimeofday(&tv, NULL);
    if (tv.tv_sec != sec) {
        gmtime_r(&tv.tv_sec, &tm);
        day_len = strftime(day, sizeof day, "\"%Y-%m-%dT%H:%M:%S", &tm);
        sec = tv.tv_sec;
    }
    m = (int)(tv.tv_usec / 1000);
    ms[0] = '.';
    ms[1] = (char)('0' + m / 100);
    ms[2] = (char)('0' + m / 10 % 10);
    ms[3] = (char)('0' + m % 10);
    ms[4] = 'Z';
    ms[5] = '"';
    gw_jbuf_lit(b, "{\"ts\":");
    gw_jbuf_put(b, day, day_len);
    gw_jbuf_put(b, ms, sizeof ms);
}

/* The start of a line: when, who, through which front, about what. */
static void head(struct gw_jbuf *b, const struct gw_servers *s, const char *client,
                 const char *front, const char *dialog, const char *server, const char *tool)
{
    char owner[GW_DIALOG_PART_MAX + 1];

    put_ts(b);
    put_str(b, "client", client && client[0] ? client : NULL);
    put_str(b, "front", front);
    put_str(b, "dialog", dialog && dialog[0] ? gw_dialog_unscope(dialog, owner) : NULL);
    put_str(b, "server", server && server[0] ? server : NULL);
    put_str(b, "tool", tool);
    (void)s;
}

static void put_policy(struct gw_jbuf *b, const struct gw_servers *s)
{
    static const char digits[] = "0123456789abcdef";
    char hex[65];

    if (s->config->nclients == 0) {
        put_str(b, "policy", NULL);
        return;
    }
    for (size_t i = 0; i < 32; i++) {
        hex[2 * i] = digits[s->config->clients_sha256[i] >> 4];
        hex[2 * i + 1] = digits[s->config->clients_sha256[i] & 15];
    }
    hex[64] = '\0';
    put_str(b, "policy", hex);
}

static void put_arguments(struct gw_jbuf *b, const char *hex, const char *keys, json_t *full)
{
    gw_jbuf_lit(b, ",\"arguments\":");
    if (full != NULL) {
        size_t at = b->len;
        gw_jbuf_value(b, full);
        if (b->len - at <= GW_AUDIT_ARGS_FULL_MAX)
            return;
        /* too long to keep whole: what `hash` would write, marked */
        b->len = at;
        gw_jbuf_lit(b, "{\"sha256\":\"");
        gw_jbuf_put(b, hex, 64);
        gw_jbuf_lit(b, "\",\"cut\":true}");
        return;
    }
    if (keys == NULL) {
        gw_jbuf_lit(b, "null");
        return;
    }
    gw_jbuf_lit(b, "{\"sha256\":\"");
    gw_jbuf_put(b, hex, 64);
    gw_jbuf_lit(b, "\",\"keys\":");
    gw_jbuf_put(b, keys, strlen(keys));
    gw_jbuf_lit(b, "}");
}

/* With `arguments: full`, the arguments masked with the secrets of
 * `server` (and the gateway's token); otherwise NULL. */
static json_t *kept(struct gw_servers *s, const char *server, const json_t *args)
{
    struct server *srv;
    struct gw_redact *r;
    json_t *out;

    if (gw_audit_arguments_mode(s->audit) != GW_AUDIT_ARGS_FULL)
        return NULL;
    r = gw_redact_new();
    srv = server != NULL && server[0] ? gw_servers_find(s, server) : NULL;
    if (srv != NULL) {
        gw_redact_add_server(r, srv->cfg);
        if (srv->oauth != NULL)
            gw_oauth_redact_add(srv->oauth, r);
    }
    gw_redact_add(r, s->config->gateway.auth_token);
    out = args != NULL ? gw_redact_json((const struct gw_redact *const[]){r}, 1, args, UINT_MAX)
                       : json_object();
    gw_redact_free(r);
    return out;
}

/* Where the digest writes the keys: only `arguments: hash` keeps them. */
static char **keys_wanted(const struct gw_servers *s, char **keys)
{
    return gw_audit_arguments_mode(s->audit) == GW_AUDIT_ARGS_HASH ? keys : NULL;
}

static void emit(struct gw_audit *a, struct gw_jbuf *b, const struct gw_audit_fields *f)
{
    gw_jbuf_lit(b, "}");
    gw_audit_write(a, b->p, b->len, f);
}

void gw_dispatch__audit_refused(struct gw_servers *s, const struct gw_call_request *r,
                                const char *server, const char *outcome, const char *rule)
{
    struct gw_jbuf *b;
    char hex[65], *keys = NULL;
    json_t *full;
    size_t in;

    if (!gw_audit_on(s->audit))
        return;
    b = gw_audit_line(s->audit);
    in = gw_audit_args_digest(r->arguments, hex, keys_wanted(s, &keys));
    full = kept(s, server, r->arguments);
    head(b, s, r->client, r->front, r->dialog, server, r->tool);
    put_int(b, "instance", 0, true);
    put_int(b, "pid", 0, true);
    put_arguments(b, hex, keys, full);
    put_str(b, "decision", "deny");
    put_str(b, "rule", rule);
    put_policy(b, s);
    put_str(b, "outcome", outcome);
    put_int(b, "duration_ms", 0, false);
    put_int(b, "bytes_in", (json_int_t)in, false);
    put_int(b, "bytes_out", 0, false);
    free(keys);
    json_decref(full);
    emit(s->audit, b, &(struct gw_audit_fields){r->client, server, r->tool, "deny", outcome});
}

void gw_dispatch__audit_begin(struct gw_call *c, const struct gw_call_request *r, const char *rule)
{
    struct gw_call_audit *ca;

    if (!gw_audit_on(c->s->audit))
        return;
    ca = c->audit = gw_xcalloc(1, sizeof *ca);
    ca->front = r->front;
    ca->rule = rule ? gw_xstrdup(rule) : NULL;
    ca->bytes_in = gw_audit_args_digest(r->arguments, ca->hex, keys_wanted(c->s, &ca->keys));
    ca->full = kept(c->s, c->server, r->arguments);
    ca->started_ms = gw_now_ms();
}

void gw_dispatch__audit_sent(struct gw_call *c)
{
    if (c->audit == NULL || c->slot == NULL)
        return;
    c->audit->instance = gw_instance_seq(c->slot->inst);
    c->audit->pid = gw_instance_pid(c->slot->inst);
}

/* The outcome as the audit names it, and the error code for `error`. */
static const char *outcome_of(int code, const json_t *result, const char **error)
{
    *error = NULL;
    if (code == 0) {
        json_t *flag = json_object_get(result, "isError"); /* json_is_true reads it twice */
        return json_is_true(flag) ? "tool_error" : "ok";
    }
    if (code == GW_MCP_E_TIMEOUT)
        return "timeout";
    if (code == GW_MCP_E_CANCELLED)
        return "cancelled";
    *error = gw_dispatch_error(code).rest_code;
    return "error";
}

void gw_dispatch__audit_end(struct gw_call *c, int code, const json_t *result)
{
    struct gw_call_audit *ca = c->audit;
    struct gw_jbuf *b;
    const char *error, *outcome;
    size_t out = 0;

    if (ca == NULL || !gw_audit_on(c->s->audit))
        return;
    outcome = outcome_of(code, result, &error);
    b = gw_audit_line(c->s->audit);
    /* the server's message as it came, known for free; a result the
     * gateway made itself is measured as the REST answer writes it */
    out = c->reply_bytes;
    if (out == 0 && result != NULL && gw_jbuf_value(b, result) == 0)
        out = b->len;
    b->len = 0;
    head(b, c->s, c->client, ca->front, c->dialog, c->server, c->tool);
    put_int(b, "instance", (json_int_t)ca->instance, ca->instance == 0);
    put_int(b, "pid", ca->pid, ca->pid <= 0);
    put_arguments(b, ca->hex, ca->keys, ca->full);
    put_str(b, "decision", "allow");
    put_str(b, "rule", ca->rule);
    put_policy(b, c->s);
    put_str(b, "outcome", outcome);
    if (error != NULL)
        put_str(b, "error", error);
    put_int(b, "duration_ms", (json_int_t)(gw_now_ms() - ca->started_ms), false);
    put_int(b, "bytes_in", (json_int_t)ca->bytes_in, false);
    put_int(b, "bytes_out", (json_int_t)out, false);
    emit(c->s->audit, b,
         &(struct gw_audit_fields){c->client, c->server, c->tool, "allow", outcome});
}

void gw_dispatch__audit_free(struct gw_call *c)
{
    if (c->audit == NULL)
        return;
    free(c->audit->rule);
    free(c->audit->keys);
    json_decref(c->audit->full);
    free(c->audit);
    c->audit = NULL;
}
