/* The HTTP upstream transports: streamable HTTP (MCP 2025-11-25 and the
 * revisions before it back to 2025-03-26) and legacy HTTP+SSE (2024-11-05),
 * as gw_transport instances, so the MCP client layer runs over them as over
 * stdio. Everything runs on the loop through a shared gw_curl_uv.
 *
 * Streamable HTTP (cfg->transport GW_TRANSPORT_STREAMABLE_HTTP): each sent
 * message is one POST to cfg->url with `Accept: application/json,
 * text/event-stream`. A JSON response is one on_message; an SSE response
 * gives one on_message per `message` event (notifications and server
 * requests may come before the response); 202 carries no message. The
 * `Mcp-Session-Id` of the first response that has one (normally
 * initialize's) is kept and sent on every later request (cfg->session_id,
 * when set, is sent from the start). The protocol version is learnt by
 * watching the answer to the `initialize` request this transport carried
 * (its result.protocolVersion); gw_upstream_http_set_protocol_version()
 * overrides it. From then on every request carries `MCP-Protocol-Version`.
 * Once `notifications/initialized` was accepted, a GET stream is opened for
 * the server's own messages (list_changed…): 405 or 409 means there is none
 * and it is not tried again; a dropped stream reconnects with backoff
 * (the server's `retry:` honoured, `Last-Event-ID` sent).
 *
 * Legacy SSE (GW_TRANSPORT_SSE): the transport GETs cfg->url at once and
 * waits for the `endpoint` event, whose URI (resolved against cfg->url; a
 * different scheme, host or port is refused) receives each message as a
 * POST; responses come back as `message` events on the stream. Messages
 * sent before the endpoint is known wait (at most GW_HTTP_MAX_PENDING
 * bytes). The stream ending is on_down.
 *
 * Failures of one POST do not bring the instance down. When the message
 * was a request whose id could be read, the transport answers it itself
 * with a JSON-RPC error {code GW_HTTP_RPC_ERROR, message "upstream answered
 * HTTP 500: …" or the connection error, data {"httpStatus"?: n,
 * "reachedServer": bool}}; reachedServer false means the request provably
 * never left (connection refused, DNS, TLS handshake, loopback refusal),
 * so a caller may send it again elsewhere. Retries (design §9), up to
 * max_tries attempts with exponential backoff (Retry-After honoured, capped
 * at retry_max_ms): initialize, ping, tools/list, prompts/list,
 * resources/list and resources/templates/list on connection failure,
 * timeout, 429 and 5xx; anything else only when it never reached the
 * server. Other 4xx are never retried.
 *
 * The instance goes down (on_down) when: a request carrying the session id
 * gets 404, or 400 whose body names the session (code
 * GW_HTTP_E_SESSION_GONE: the owner should start a new instance and
 * initialize again; that request never ran, and when it was a request with
 * an id, on_not_run names it first; nothing more is sent, no DELETE either;
 * the other requests in flight fail with the instance); an SSE event exceeds
 * GW_HTTP_MAX_BODY (GW_HTTP_E_TOO_BIG, security.md S2); the legacy stream
 * ends, fails or stays silent (GW_HTTP_E_STREAM); stop or kill (UV_ECANCELED).
 * A JSON body over GW_HTTP_MAX_BODY fails only its request (S3). Any stream
 * or pending response with no byte for cfg->sse_read_timeout_ms fails
 * (a POST: its request; the GET stream: reconnect; legacy: down).
 *
 * Security (S10, P6): see gw/curl_uv.h for protocols, redirects (a 3xx is
 * an error naming the status), TLS and the loopback rule for http:// URLs
 * (checked on the connected address). Header values from cfg->headers are
 * sent and never logged; URLs are shown without credentials or query.
 *
 * Lifetime: the caller owns the instance from start until on_closed, after
 * which it is freed. on_down fires exactly once before on_closed. After a
 * failure the instance closes by itself (DELETE first when the session
 * still exists and terminate_on_close); stop sends that DELETE (bounded by
 * delete_timeout_ms) then closes; kill closes at once. The gw_curl_uv must
 * outlive the instance. */
#ifndef GW_UPSTREAM_HTTP_H
#define GW_UPSTREAM_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "gw/errors.h"
#include "gw/oauth.h"
#include "gw/config.h"
#include "gw/curl_uv.h"
#include "gw/transport.h"

#define GW_HTTP_MAX_BODY    (16u << 20) /* a response body or one SSE event */
#define GW_HTTP_MAX_PENDING (16u << 20) /* legacy: bytes sent before the endpoint */
#define GW_HTTP_RPC_ERROR   (-32000)    /* code of the errors the transport answers */

/* on_down codes (range: errors.h). */
enum {
    GW_HTTP_E_SESSION_GONE = GW_E_HTTP_BASE - 1, /* the server no longer knows the session */
    GW_HTTP_E_TOO_BIG = GW_E_HTTP_BASE - 2,      /* an SSE event over GW_HTTP_MAX_BODY */
    GW_HTTP_E_STREAM = GW_E_HTTP_BASE - 3,       /* the legacy SSE stream ended or failed */
    GW_HTTP_E_STEP_UP = GW_E_HTTP_BASE - 4,      /* 403 insufficient_scope: more scopes needed */
    GW_HTTP_E_UNAUTHORIZED = GW_E_HTTP_BASE - 5, /* 401 to a token and no fresh one took */
};

struct gw_upstream_http;

struct gw_upstream_http_options {
    uint64_t delete_timeout_ms; /* DELETE of the session on stop; default 2000 */
    int get_stream;             /* open the GET stream (streamable); default 1 */
    int max_tries;              /* attempts per message; default 3 */
    uint64_t retry_base_ms;     /* first retry delay, doubled each time; default 250 */
    uint64_t retry_max_ms;      /* cap on a retry delay and on Retry-After; default 5000 */
    uint64_t reconnect_max_ms;  /* cap on the GET stream's reconnect delay; default 30000 */
    /* The server's OAuth client (gw/oauth.h), owned by the caller and
     * outliving the instance; NULL: none. Every request then carries its
     * access token as `Authorization: Bearer` (unless cfg->headers sets
     * Authorization), and a 401's Bearer challenge is handed to it
     * (gw_oauth_challenged). A 401 to a request that carried a token
     * means the server did not run it: the grant is refreshed (the one
     * refresh of the grant, which the other requests refused meanwhile
     * wait for) and the request sent again, once, with the new token (at
     * once when another request's refresh already brought one). When no
     * refresh can be made or it fails, or the new token is refused too,
     * the request fails and the instance goes down
     * (GW_HTTP_E_UNAUTHORIZED; the owner asks for a person). A request
     * sent without a token fails on a 401 as any 4xx does. A 403
     * with error="insufficient_scope" (gw_oauth_step_up) fails its request
     * and takes the instance down (GW_HTTP_E_STEP_UP): its token cannot
     * do what was asked, and a new authorization is needed. */
    struct gw_oauth *oauth;
};

struct gw_upstream_http_stats {
    uint64_t posts;       /* POST attempts (retries included) */
    uint64_t retries;     /* attempts after the first */
    uint64_t gets;        /* GET stream attempts */
    uint64_t deletes;     /* DELETEs sent */
    uint64_t http_errors; /* requests that failed (status or connection) */
    uint64_t messages_in; /* on_message calls */
    uint64_t messages_out;
    uint64_t bytes_in; /* response bytes */
    uint64_t bytes_out;
    long last_status;    /* status of the last response; 0 before one */
    int get_stream_open; /* the GET (or legacy) stream is receiving */
};

/* Fills the defaults above. */
void gw_upstream_http_options_init(struct gw_upstream_http_options *o);

/* Creates an instance for cfg (streamable HTTP or SSE; url, headers,
 * session_id, timeout_ms as the connect timeout, sse_read_timeout_ms,
 * terminate_on_close are used; `cfg` is read only during the call).
 * `opts` may be NULL; `*cbs` is copied. A legacy instance connects at once;
 * a streamable one on its first send. libcurl is loaded by the first start
 * (gw_curl_uv_open). Returns 0 and sets *out, or with a sentence in `why`
 * UV_EINVAL (no url, not http(s), wrong transport) or gw_curl_uv_open()'s
 * error (UV_ENOTSUP: libcurl cannot be loaded); then nothing was allocated
 * and no callback fires. */
int gw_upstream_http_start(uv_loop_t *loop, struct gw_curl_uv *multi,
                           const struct gw_server_config *cfg,
                           const struct gw_upstream_http_options *opts,
                           const struct gw_transport_cbs *cbs, struct gw_upstream_http **out,
                           char *why, size_t whylen);

/* The instance as a gw_transport: send POSTs (0, UV_ENOBUFS, UV_EPIPE once
 * down or stopping); stop is gw_upstream_http_stop(). */
struct gw_transport *gw_upstream_http_transport(struct gw_upstream_http *h);

/* DELETE the session (terminate_on_close), cancel everything, on_down
 * (UV_ECANCELED) if not yet, then on_closed. Idempotent. */
void gw_upstream_http_stop(struct gw_upstream_http *h);

/* Cancel everything now, no DELETE; on_down (if not yet) fires during the
 * call, on_closed on a later loop turn. Idempotent. */
void gw_upstream_http_kill(struct gw_upstream_http *h);

/* The upstream Mcp-Session-Id (legacy: NULL), or NULL before one is known.
 * Valid until the instance closes. */
const char *gw_upstream_http_session_id(const struct gw_upstream_http *h);

/* The MCP-Protocol-Version sent, or NULL before it is known. */
const char *gw_upstream_http_protocol_version(const struct gw_upstream_http *h);

/* Sets the version sent as MCP-Protocol-Version (visible ASCII, at most 31
 * bytes). Returns 0 or UV_EINVAL. */
int gw_upstream_http_set_protocol_version(struct gw_upstream_http *h, const char *version);

/* cfg->url without userinfo or query, for logs and /v1/servers. */
const char *gw_upstream_http_url(const struct gw_upstream_http *h);

/* The last failure as a sentence ("" when none): for /v1/servers. */
const char *gw_upstream_http_last_error(const struct gw_upstream_http *h);

void gw_upstream_http_get_stats(const struct gw_upstream_http *h,
                                struct gw_upstream_http_stats *out);

#endif
