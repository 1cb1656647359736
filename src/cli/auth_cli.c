/* `mcpgw auth login|status|logout` (gw/auth_cli.h). */
#include "gw/auth_cli_internal.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gw/log.h"
#include "gw/util.h"

#define USAGE                                                                                      \
    "usage: mcpgw auth login ID [--paste] [--timeout SECONDS] [-c FILE] [--gateway URL]\n"         \
    "       mcpgw auth status [-c FILE] [--gateway URL]\n"                                         \
    "       mcpgw auth logout ID [-c FILE] [--gateway URL]\n"

static const char usage[] =
    USAGE "\n"
          "  login ID         print the URL that authorizes server ID and wait until it is\n"
          "                   authorized (open the URL in a browser)\n"
          "      --paste      then read the URL the browser ended on from stdin, for a browser\n"
          "                   that cannot reach the gateway\n"
          "      --timeout S  give up waiting after S seconds (default 600)\n"
          "  status           each OAuth server's state and grant (issuer, scopes, expiry,\n"
          "                   refreshable)\n"
          "  logout ID        forget the grant of server ID (revoked where the server offers it)\n"
          "  -c, --config F   the daemon's configuration: its gateway.listen and\n"
          "                   gateway.auth_token (else $MCPGW_TOKEN) are used\n"
          "      --gateway U  the daemon's address: http://HOST:PORT or unix:/path\n"
          "                   (default: gateway.listen, else 127.0.0.1:7420)\n";

/* The daemon's servers (a new reference to /v1/servers' array), or NULL
 * after saying why on stderr. */
static json_t *list_servers(const struct gw_cli_daemon *d)
{
    struct gw_cli_answer a;
    if (gw_cli_request(d, "GET", "/v1/servers", NULL, &a) != 0)
        return NULL;
    json_t *list = json_object_get(a.json, "servers");
    if (a.status != 200 || !json_is_array(list)) {
        gw_cli_problem(d, "cannot list the servers", &a);
        list = NULL;
    }
    json_incref(list);
    json_decref(a.json);
    return list;
}

/* Server `id` (a new reference), or NULL after saying why on stderr. */
static json_t *find_server(const struct gw_cli_daemon *d, const char *id)
{
    json_t *list = list_servers(d);
    if (!list)
        return NULL;
    size_t i;
    json_t *s, *found = NULL;
    json_array_foreach(list, i, s)
    {
        const char *sid = json_string_value(json_object_get(s, "id"));
        if (sid && strcmp(sid, id) == 0)
            found = json_incref(s);
    }
    if (!found)
        fprintf(stderr, "mcpgw: the daemon at %s has no server '%s'\n", d->name, id);
    json_decref(list);
    return found;
}

static const char *state_of(const json_t *s)
{
    const char *st = json_string_value(json_object_get(s, "state"));
    return st ? st : "?";
}

/* Holds a grant that needs no new authorization (no step-up either: an
 * `authorize` link says one is wanted). */
static bool authorized(const json_t *s)
{
    return json_is_object(json_object_get(s, "grant")) && !json_object_get(s, "authorize") &&
           strcmp(state_of(s), "needs_authorization") != 0;
}

/* The URL the browser goes to: the authorization server's, which the
 * daemon names without the bearer token a browser could not send. */
static char *authorize_url(const struct gw_cli_daemon *d, const char *path, const char *id)
{
    struct gw_cli_answer a;
    if (gw_cli_request(d, "GET", path, NULL, &a) != 0)
        return NULL;
    const char *url = json_string_value(json_object_get(a.json, "url"));
    char *out = a.status == 200 && url ? gw_xstrdup(url) : NULL;
    if (!out) {
        char *what = gw_xasprintf("cannot authorize %s", id);
        gw_cli_problem(d, what, &a);
        free(what);
    }
    json_decref(a.json);
    return out;
}

/* A request whose 200 is all there is to say: `ok` on stdout, else the
 * daemon's Problem under `failed`. The exit code: 0 on a 200, else 1. */
static int request_done(const struct gw_cli_daemon *d, const char *method, const char *path,
                        json_t *body, const char *ok, const char *failed)
{
    struct gw_cli_answer a;

    if (gw_cli_request(d, method, path, body, &a) != 0)
        return 1;
    if (a.status == 200)
        printf("%s\n", ok);
    else
        gw_cli_problem(d, failed, &a);
    json_decref(a.json);
    return a.status == 200 ? 0 : 1;
}

static int paste(const struct gw_cli_daemon *d, const char *path, const char *id)
{
    char *line = NULL;
    size_t cap = 0;
    fprintf(stderr, "Then paste here the address the browser ended on (it may show an error "
                    "page; its address holds the answer) and press Enter:\n");
    ssize_t n = getline(&line, &cap, stdin);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
        line[--n] = 0;
    const char *start = line ? line + strspn(line, " \t") : NULL;
    if (n <= 0 || !*start) {
        fprintf(stderr, "mcpgw: no address was pasted; %s is not authorized\n", id);
        free(line);
        return 1;
    }
    json_t *body = json_pack("{s:s}", "redirect", start);
    free(line);
    char *ok = gw_xasprintf("%s is authorized", id);
    char *failed = gw_xasprintf("%s is not authorized", id);
    int rc = request_done(d, "POST", path, body, ok, failed);
    json_decref(body);
    free(ok);
    free(failed);
    return rc;
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Polls /v1/servers until `id` holds a grant and no longer waits. A new
 * lastError while it waits is the browser's authorization coming back
 * refused (or the gateway giving up on it): the wait is over. */
static int wait_authorized(const struct gw_cli_daemon *d, const char *id, long timeout)
{
    struct timespec t0, now;
    char *before = NULL;
    bool first = true;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        json_t *s = find_server(d, id);
        if (!s) {
            free(before);
            return 1;
        }
        bool ok = authorized(s);
        bool failed = strcmp(state_of(s), "failed") == 0;
        const char *err = json_string_value(json_object_get(s, "lastError"));
        bool refused = !ok && !failed && !first && !same_text(err, before) && err != NULL;
        if (ok)
            printf("%s is authorized; it is starting\n", id);
        else if (failed)
            fprintf(stderr, "mcpgw: %s failed: %s\n", id, err ? err : "(no reason given)");
        else if (refused)
            fprintf(stderr, "mcpgw: %s is not authorized: %s\n", id, err);
        if (first) {
            before = err ? gw_xstrdup(err) : NULL;
            first = false;
        }
        json_decref(s);
        if (ok || failed || refused) {
            free(before);
            return ok ? 0 : 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= timeout) {
            fprintf(stderr,
                    "mcpgw: %s is still not authorized after %ld s; gave up waiting (run "
                    "`mcpgw auth login %s` again for a fresh URL)\n",
                    id, timeout, id);
            free(before);
            return 1;
        }
        usleep(500 * 1000);
    }
}

static int login(const struct gw_cli_daemon *d, const char *id, bool by_paste, long timeout)
{
    json_t *s = find_server(d, id);
    if (!s)
        return 1;
    if (authorized(s)) {
        const char *iss = json_string_value(json_object_get(json_object_get(s, "grant"), "issuer"));
        printf("%s is already authorized (by %s); `mcpgw auth logout %s` forgets the grant\n", id,
               iss ? iss : "?", id);
        json_decref(s);
        return 0;
    }
    json_decref(s);
    char *path = gw_xasprintf("/v1/servers/%s/authorize", id);
    char *url = authorize_url(d, path, id);
    int rc = 1;
    if (url) {
        fprintf(stderr, "Open this address in a browser to authorize %s:\n\n", id);
        printf("%s\n", url);
        fflush(stdout);
        fputc('\n', stderr);
        if (by_paste) {
            rc = paste(d, path, id);
        } else {
            fprintf(stderr,
                    "Waiting for the authorization (at most %ld s; Ctrl-C stops waiting)…\n",
                    timeout);
            rc = wait_authorized(d, id, timeout);
        }
    }
    free(url);
    free(path);
    return rc;
}

static int logout(const struct gw_cli_daemon *d, const char *id)
{
    json_t *s = find_server(d, id);
    if (!s)
        return 1;
    json_decref(s);
    char *path = gw_xasprintf("/v1/servers/%s/authorize", id);
    char *ok = gw_xasprintf("%s: the grant is forgotten; the server waits for authorization", id);
    char *failed = gw_xasprintf("cannot log %s out", id);
    int rc = request_done(d, "DELETE", path, NULL, ok, failed);
    free(path);
    free(ok);
    free(failed);
    return rc;
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

/* One line per server that uses OAuth: configured for it, challenged, or
 * holding a grant. Never a token: /v1/servers has none. */
static int status(const struct gw_cli_daemon *d)
{
    json_t *list = list_servers(d);
    if (!list)
        return 1;
    size_t i, shown = 0;
    json_t *s;
    json_array_foreach(list, i, s)
    {
        json_t *g = json_object_get(s, "grant");
        bool oauth = json_is_object(g) || json_object_get(s, "authorize") ||
                     strcmp(state_of(s), "needs_authorization") == 0 ||
                     json_object_get(json_object_get(s, "config"), "oauth");
        if (!oauth)
            continue;
        if (shown++ == 0)
            printf("%-20s %-20s %-32s %-24s %-21s %s\n", "SERVER", "STATE", "ISSUER", "SCOPES",
                   "EXPIRES", "REFRESHABLE");
        char *scopes = NULL;
        size_t j;
        json_t *sc;
        json_array_foreach(json_object_get(g, "scopes"), j, sc)
        {
            char *more = gw_xasprintf("%s%s%s", scopes ? scopes : "", scopes ? "," : "",
                                      or_dash(json_string_value(sc)));
            free(scopes);
            scopes = more;
        }
        json_t *refresh = json_object_get(g, "refreshable");
        printf("%-20s %-20s %-32s %-24s %-21s %s\n", json_string_value(json_object_get(s, "id")),
               state_of(s), or_dash(json_string_value(json_object_get(g, "issuer"))),
               or_dash(scopes), or_dash(json_string_value(json_object_get(g, "expiresAt"))),
               !refresh                ? "-"
               : json_is_true(refresh) ? "yes"
                                       : "no");
        free(scopes);
    }
    if (shown == 0)
        printf("no server of the daemon at %s uses OAuth\n", d->name);
    json_decref(list);
    return 0;
}

int gw_auth_cli(int argc, char **argv, const char *config_path, const char *listen)
{
    enum { OPT_GATEWAY = 256, OPT_PASTE, OPT_TIMEOUT };
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'}, {"gateway", required_argument, NULL, OPT_GATEWAY},
        {"paste", no_argument, NULL, OPT_PASTE},  {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *gateway = NULL;
    bool by_paste = false;
    long timeout = 600;
    int c;

    /* libcurl's loading is logged at info: not news on a terminal. */
    if (gw_log_get_level() < GW_LOG_WARN)
        gw_log_set_level(GW_LOG_WARN);
    /* 0, not 1: glibc then forgets main()'s scan (its "+" mode included)
     * and permutes again, so options may follow the command. */
    optind = 0;
    while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            config_path = optarg;
            break;
        case OPT_GATEWAY:
            gateway = optarg;
            break;
        case OPT_PASTE:
            by_paste = true;
            break;
        case OPT_TIMEOUT: {
            char *end;
            timeout = strtol(optarg, &end, 10);
            if (*end || end == optarg || timeout <= 0) {
                fprintf(stderr, "mcpgw: --timeout takes a number of seconds, not '%s'\n", optarg);
                return 2;
            }
            break;
        }
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(USAGE, stderr);
            return 2;
        }
    }
    const char *cmd = optind < argc ? argv[optind] : NULL;
    int nargs = argc - optind - 1;
    bool with_id = cmd && (strcmp(cmd, "login") == 0 || strcmp(cmd, "logout") == 0);
    if (!cmd || !(with_id || strcmp(cmd, "status") == 0)) {
        fprintf(stderr, cmd ? "mcpgw: auth: unknown command '%s'\n%s" : "mcpgw: auth: %s%s",
                cmd ? cmd : "login, status or logout?\n", USAGE);
        return 2;
    }
    if (nargs != (with_id ? 1 : 0)) {
        fprintf(stderr, "mcpgw: auth %s takes %s\n%s", cmd,
                with_id ? "one server ID" : "no argument", USAGE);
        return 2;
    }
    if (by_paste && strcmp(cmd, "login") != 0) {
        fprintf(stderr, "mcpgw: --paste goes with auth login\n");
        return 2;
    }
    struct gw_cli_daemon d;
    int rc = gw_cli_daemon_init(&d, gateway, listen, config_path);
    if (rc == 0) {
        const char *id = with_id ? argv[optind + 1] : NULL;
        rc = strcmp(cmd, "status") == 0  ? status(&d)
             : strcmp(cmd, "login") == 0 ? login(&d, id, by_paste, timeout)
                                         : logout(&d, id);
    }
    gw_cli_daemon_free(&d);
    return rc;
}
