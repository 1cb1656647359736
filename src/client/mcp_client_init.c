/* The MCP client's 2025-era handshake (initialize, its result checked,
 * then notifications/initialized), how the client starts either
 * revision, and what the handshake left: the accessors and the names of
 * the client's codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/log.h"
#include "gw/mcp_client_internal.h"
#include "gw/util.h"

static const char *const accepted_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                "2024-11-05"};

/* Notifications a 2025-11-25 server may send a client; others are counted as
 * unknown (they are still passed on). */

/* The handshake. */

static int accepted_version(const char *v)
{
    for (size_t i = 0; i < GW_ARRAY_SIZE(accepted_versions); i++) {
        if (strcmp(v, accepted_versions[i]) == 0)
            return 1;
    }
    return 0;
}

/* `reason` may quote the server (its initialize error): masked here, so
 * the log and everything on_failed feeds (Problems, /v1/servers) see the
 * masked text only. */
void gw_mcp__handshake_failed(struct gw_mcp_client *c, int code, const char *reason)
{
    char *why = gw_xstrdup(reason);

    if (c->redact != NULL)
        why[gw_redact_line(c->redact, why, strlen(why), false)] = '\0';
    if (c->state == GW_MCP_INITIALIZING)
        c->state = GW_MCP_FAILED;
    c->probing = false;
    gw_log(GW_LOG_WARN, "upstream handshake failed", "server", c->server_id, "error", why, NULL);
    if (c->cb.on_failed)
        c->cb.on_failed(c->cb.data, code, why);
    free(why);
}

/* Checks the initialize result; returns NULL or a sentence in `buf`. */
static const char *check_init_result(json_t *r, char *buf, size_t cap)
{
    json_t *v = json_object_get(r, "protocolVersion");
    json_t *caps = json_object_get(r, "capabilities");
    json_t *info = json_object_get(r, "serverInfo");

    if (!json_is_string(v))
        return "the server's initialize result has no protocolVersion string";
    if (!accepted_version(json_string_value(v))) {
        snprintf(buf, cap,
                 "the server answered protocol version \"%.*s\", which mcpgw does not support "
                 "(supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
                 gw_utf8_cut(json_string_value(v), 64), json_string_value(v));
        return buf;
    }
    if (caps && !json_is_object(caps))
        return "the server's initialize result has capabilities that are not an object";
    if (info && !json_is_object(info))
        return "the server's initialize result has serverInfo that is not an object";
    return NULL;
}

static void init_done(void *data, const struct gw_mcp_reply *r)
{
    struct gw_mcp_client *c = data;
    char buf[TEXT_BYTES];
    const char *why;
    json_t *caps, *info;
    int rc;

    if (r->code == GW_MCP_E_CLOSED)
        return; /* no callbacks after close */
    if (r->code != 0) {
        snprintf(buf, sizeof buf, "initialize failed: %s", r->message);
        gw_mcp__handshake_failed(c, r->code, buf);
        return;
    }
    why = check_init_result(r->result, buf, sizeof buf);
    if (why) {
        gw_mcp__handshake_failed(c, GW_MCP_E_PROTOCOL, why);
        return;
    }
    caps = json_object_get(r->result, "capabilities");
    info = json_object_get(r->result, "serverInfo");
    c->version = gw_xstrdup(json_string_value(json_object_get(r->result, "protocolVersion")));
    gw_mcp__keep_handshake(c, caps, info);
    rc = gw_mcp__send_notification(c, "notifications/initialized", NULL);
    if (rc < 0) {
        gw_mcp__handshake_failed(c, rc, "could not send notifications/initialized");
        return;
    }
    c->era = GW_MCP_ERA_LEGACY;
    gw_mcp__ready(c);
}

/* The instances of a server answer their handshake alike: a thousand
 * leases held a thousand equal copies of its capabilities and serverInfo
 * (some 800 bytes for the smallest). The last ones kept are shared with the
 * next client whose answer is equal, and let go of once no client holds
 * them. Every holder only reads them. */
static json_t *shared[2]; /* capabilities, serverInfo */

static json_t *keep_shared(int which, json_t *v)
{
    if (v == NULL)
        return json_object();
    if (shared[which] == NULL || !json_equal(shared[which], v)) {
        json_decref(shared[which]);
        shared[which] = json_incref(v);
    }
    return json_incref(shared[which]);
}

static void drop_shared(int which, json_t *v)
{
    /* refcount 2: this client's reference and the cache's */
    if (v != NULL && v == shared[which] && v->refcount == 2) {
        json_decref(shared[which]);
        shared[which] = NULL;
    }
    json_decref(v);
}

void gw_mcp__keep_handshake(struct gw_mcp_client *c, json_t *caps, json_t *info)
{
    c->capabilities = keep_shared(0, caps);
    c->server_info = keep_shared(1, info);
}

void gw_mcp__drop_handshake(struct gw_mcp_client *c)
{
    drop_shared(0, c->capabilities);
    drop_shared(1, c->server_info);
    c->capabilities = c->server_info = NULL;
}

void gw_mcp__ready(struct gw_mcp_client *c)
{
    c->state = GW_MCP_READY;
    gw_log(GW_LOG_DEBUG, "upstream initialized", "server", c->server_id, "version", c->version,
           NULL);
    if (c->cb.on_ready)
        c->cb.on_ready(c->cb.data, c->version, c->server_info, c->capabilities);
}

int gw_mcp_client_start(struct gw_mcp_client *c)
{
    if (c->state != GW_MCP_NEW)
        return UV_EINVAL;
    c->state = GW_MCP_INITIALIZING;
    return c->want == GW_MCP_ERA_LEGACY ? gw_mcp__initialize(c) : gw_mcp__discover(c);
}

int gw_mcp__initialize(struct gw_mcp_client *c)
{
    json_t *params;
    int rc;

    /* sampling and elicitation are relayed to the /mcp session whose call
     * caused them (design §9). MCP Apps is declared because the gateway
     * passes its `_meta` and ui:// resources on to hosts that render them:
     * some servers offer their UI only to a client that declares it. */
    params = json_pack("{s:s, s:{s:{}, s:{}, s:{s:{s:[s]}}}, s:{s:s, s:s}}", "protocolVersion",
                       GW_MCP_PROTOCOL_VERSION, "capabilities", "sampling", "elicitation",
                       "extensions", GW_MCP_EXT_UI, "mimeTypes", GW_MCP_EXT_UI_MIME, "clientInfo",
                       "name", "mcpgw", "version", c->client_version);
    if (c->config)
        json_object_set(params, "config", c->config);
    rc = gw_mcp__send_request(c, "initialize", params, c->init_timeout_ms, init_done, c, 0, NULL);
    json_decref(params);
    if (rc < 0 && c->state == GW_MCP_INITIALIZING)
        c->state = GW_MCP_FAILED;
    return rc;
}

const char *gw_mcp_strerror(int code)
{
    switch (code) {
    case 0:
        return "ok";
    case GW_MCP_E_RPC:
        return "upstream_error";
    case GW_MCP_E_TIMEOUT:
        return "timeout";
    case GW_MCP_E_CANCELLED:
        return "cancelled";
    case GW_MCP_E_TRANSPORT:
        return "transport_down";
    case GW_MCP_E_CLOSED:
        return "closed";
    case GW_MCP_E_PROTOCOL:
        return "protocol_error";
    case GW_MCP_E_LIMIT:
        return "limit_exceeded";
    case GW_MCP_E_NOT_READY:
        return "not_ready";
    case GW_MCP_E_NOT_RUN:
        return "not_run";
    default:
        /* uv_err_name() allocates (and leaks) a string for a code it does
         * not know, such as another module's own: those get a fixed name. */
        if (code > -4096)
            return uv_err_name(code);
        return "error";
    }
}

/* Accessors. */

enum gw_mcp_state gw_mcp_client_state(const struct gw_mcp_client *c)
{
    return c->state;
}

const char *gw_mcp_client_version(const struct gw_mcp_client *c)
{
    return c->version;
}

json_t *gw_mcp_client_server_info(const struct gw_mcp_client *c)
{
    return c->server_info;
}

json_t *gw_mcp_client_capabilities(const struct gw_mcp_client *c)
{
    return c->capabilities;
}

void gw_mcp_client_stats(const struct gw_mcp_client *c, struct gw_mcp_client_stats *out)
{
    *out = c->stats;
    out->in_flight = c->n_pending;
    out->calls_in_flight = c->n_calls;
}

unsigned gw_mcp_client_calls_in_flight(const struct gw_mcp_client *c)
{
    return c->n_calls;
}

enum gw_mcp_era gw_mcp_client_era(const struct gw_mcp_client *c)
{
    return c->era;
}

bool gw_mcp_client_probing(const struct gw_mcp_client *c)
{
    return c->probing;
}
