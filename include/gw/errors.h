/* Error codes: functions return 0 or a negative code. libuv's codes (UV_E*:
 * negative errno values, UV_EAI_* near -3000, UV_EOF at -4095) pass through
 * as they are; each module's own codes come from its range below, so that
 * no number means two things wherever a code travels. A module's codes are
 * its base minus 1 to 99, declared in its header; what each means to a
 * caller (HTTP status, REST code, sentence) is dispatch's error table
 * (gw_dispatch_error). */
#ifndef GW_ERRORS_H
#define GW_ERRORS_H

#define GW_E_RANGE        100
#define GW_E_MCP_BASE     (-5100) /* mcp_client.h: GW_MCP_E_* */
#define GW_E_SERVERS_BASE (-5200) /* servers.h, dispatch: GW_SERVERS_E_* */
#define GW_E_HTTP_BASE    (-5300) /* upstream_http.h: GW_HTTP_E_* */
#define GW_E_WS_BASE      (-5400) /* upstream_ws.h: GW_WS_E_* */
#define GW_E_SSE_BASE     (-5500) /* sse.h: GW_SSE_E_* */
#define GW_E_RESULT_BASE  (-5600) /* result.h: GW_RESULT_E_* */
#define GW_E_ROUNDS_BASE  (-5700) /* input_rounds.h: GW_ROUNDS_E_* */

_Static_assert(GW_E_MCP_BASE < -4096, "the gateway's codes lie below libuv's");

/* Whether `code` is one of the range that starts at `base`. */
#define GW_E_IN_RANGE(code, base) ((code) < (base) && (code) > (base)-GW_E_RANGE)

#endif
