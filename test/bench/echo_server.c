/* echo_server: a minimal, fast stdio MCP server for the benchmarks.
 *
 * Newline-delimited JSON-RPC on stdin/stdout. initialize answers
 * 2025-11-25 (or the client's version when it is an older one we know);
 * tools/list lists `echo` {text} (plus tool_0 … tool_{N-1} with --tools N);
 * tools/call answers at once with the text echoed back; ping answers {}.
 * Notifications are ignored. Output is flushed once per batch of input read,
 * so a pipelining client is not slowed down by one write per answer.
 *
 *   echo_server [--tools N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int extra_tools;
static char *out;
static size_t out_len, out_cap;

static void emit(json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    size_t n = strlen(s);

    if (out_len + n + 1 > out_cap) {
        out_cap = (out_len + n + 1) * 2;
        out = realloc(out, out_cap);
        if (out == NULL)
            exit(2);
    }
    memcpy(out + out_len, s, n);
    out[out_len + n] = '\n';
    out_len += n + 1;
    free(s);
}

static void flush_out(void)
{
    size_t off = 0;

    while (off < out_len) {
        ssize_t w = write(1, out + off, out_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            exit(0);
        off += (size_t)w;
    }
    out_len = 0;
}

static json_t *schema(void)
{
    return json_pack("{s:s, s:{s:{s:s}}, s:[s]}", "type", "object", "properties", "text", "type",
                     "string", "required", "text");
}

static json_t *tools_list(void)
{
    json_t *tools = json_array();

    json_array_append_new(tools, json_pack("{s:s, s:s, s:o}", "name", "echo", "description",
                                           "Echoes the text back", "inputSchema", schema()));
    for (int i = 0; i < extra_tools; i++) {
        char name[32], desc[64];
        snprintf(name, sizeof name, "tool_%d", i);
        snprintf(desc, sizeof desc, "Benchmark tool number %d; echoes its text", i);
        json_array_append_new(tools, json_pack("{s:s, s:s, s:o}", "name", name, "description",
                                               desc, "inputSchema", schema()));
    }
    return json_pack("{s:o}", "tools", tools);
}

static json_t *call(json_t *params)
{
    json_t *args = json_object_get(params, "arguments");
    const char *text = json_string_value(json_object_get(args, "text"));

    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
                     text ? text : "", "isError", 0);
}

static void handle(const char *line, size_t len)
{
    json_error_t err;
    json_t *msg = json_loadb(line, len, 0, &err), *id, *result = NULL;
    const char *method;

    if (msg == NULL || !json_is_object(msg))
        goto out;
    id = json_object_get(msg, "id");
    method = json_string_value(json_object_get(msg, "method"));
    if (id == NULL || method == NULL)
        goto out; /* notification or response */
    if (strcmp(method, "tools/call") == 0) {
        result = call(json_object_get(msg, "params"));
    } else if (strcmp(method, "initialize") == 0) {
        const char *v =
            json_string_value(json_object_get(json_object_get(msg, "params"), "protocolVersion"));
        if (v == NULL || (strcmp(v, "2025-06-18") && strcmp(v, "2025-03-26") &&
                          strcmp(v, "2024-11-05")))
            v = "2025-11-25";
        result = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}}", "protocolVersion", v,
                           "capabilities", "tools", "listChanged", 0, "serverInfo", "name",
                           "bench-echo-c", "version", "1.0.0");
    } else if (strcmp(method, "tools/list") == 0) {
        result = tools_list();
    } else if (strcmp(method, "ping") == 0) {
        result = json_object();
    } else {
        json_t *e = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error",
                              "code", -32601, "message", "Method not found");
        emit(e);
        json_decref(e);
        goto out;
    }
    json_t *resp = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
    emit(resp);
    json_decref(resp);
out:
    json_decref(msg);
}

int main(int argc, char **argv)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tools") == 0 && i + 1 < argc) {
            extra_tools = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: echo_server [--tools N]\n");
            return 2;
        }
    }
    if (buf == NULL)
        return 2;
    for (;;) {
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (buf == NULL)
                return 2;
        }
        ssize_t r = read(0, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        size_t start = 0;
        char *nl;
        while ((nl = memchr(buf + start, '\n', len - start)) != NULL) {
            size_t n = (size_t)(nl - (buf + start));
            if (n > 0)
                handle(buf + start, n);
            start += n + 1;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
        flush_out();
    }
    free(buf);
    free(out);
    return 0;
}
