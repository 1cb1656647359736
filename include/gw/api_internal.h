/* The REST front's insides shared by its files: api.c (the routes),
 * api_call.c (POST /v1/tools/{name}/call, its input rounds included) and
 * api_oauth.c (the OAuth routes). */
#ifndef GW_API_INTERNAL_H
#define GW_API_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "gw/api.h"
#include "gw/lease.h"

/* The parsed body of a call or a release: {"dialog"?, "arguments"?,
 * "timeout_ms"?, …} and X-Mcpgw-Dialog. */
struct gw_api_body {
    json_t *json;
    json_t *arguments; /* borrowed from json */
    uint64_t timeout_ms;
    char dialog[GW_DIALOG_MAX + 1];
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1];
    bool has_dialog;
};

/* Checks the body; returns 0, or -1 after answering the request. `b->json`
 * is the caller's to decref either way. */
int gw_api__parse_body(struct gw_http_request *req, struct gw_api_body *b);

/* Answers 400 {code, msg}; returns -1. */
int gw_api__bad_request(struct gw_http_request *req, const char *code, const char *msg);

/* The value of query parameter `key`, copied (no percent-decoding).
 * NULL when absent. */
char *gw_api__query_param(const char *query, const char *key);

/* The listing routes (api_tools.c). */
void gw_api__route_tools(struct gw_api_ctx *ctx, struct gw_http_request *req);
void gw_api__route_tool(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *name);
void gw_api__route_toolsets(struct gw_api_ctx *ctx, struct gw_http_request *req);
void gw_api__route_prompts(struct gw_api_ctx *ctx, struct gw_http_request *req);
void gw_api__route_resources(struct gw_api_ctx *ctx, struct gw_http_request *req);

/* POST /v1/tools/{tool}/call. */
void gw_api__route_call(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *tool);

/* The OAuth routes (api_oauth.c). */
void gw_api__route_authorize(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *id);
void gw_api__route_authorize_post(struct gw_api_ctx *ctx, struct gw_http_request *req,
                                  const char *id);
void gw_api__route_deauthorize(struct gw_api_ctx *ctx, struct gw_http_request *req, const char *id);
void gw_api__route_callback(struct gw_api_ctx *ctx, struct gw_http_request *req);

#endif
