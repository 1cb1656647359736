/* Command line (design §3). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw/auth_cli.h"
#include "gw/client_cli.h"
#include "gw/config.h"
#include "gw/daemon.h"
#include "gw/import.h"
#include "gw/log.h"
#include "gw/sandbox.h"
#include "gw/version.h"

static const char usage[] =
    "usage: mcpgw [-c FILE] [--listen ADDR] [--log-level debug|info|warn|error]\n"
    "       mcpgw --check-config [-v] [-c FILE]\n"
    "       mcpgw import FILE\n"
    "       mcpgw auth login|status|logout [ID] [--gateway URL] [--paste]\n"
    "       mcpgw client token NAME\n"
    "       mcpgw --version\n"
    "\n"
    "  -c, --config FILE   configuration file (default: ./mcp.yaml, else .minds/mcp.yaml,\n"
    "                      else /etc/mcpgw/mcp.yaml)\n"
    "      --listen ADDR   host:port, [::1]:port or unix:/path (overrides gateway.listen)\n"
    "      --log-level L   debug, info, warn or error (default info)\n"
    "  -t, --check-config  validate the configuration, print every problem, exit 0 or 1;\n"
    "                      each stdio server that would run unsandboxed is an info line\n"
    "  -v, --verbose       with --check-config: each stdio server's effective sandbox too\n"
    "      import FILE     convert an mcpServers JSON, VS Code, HoloDeck agent.yaml or\n"
    "                      chatagent toolbox file to mcp.yaml version 1 on stdout\n"
    "      auth …          a server's OAuth grant, through the running daemon (login,\n"
    "                      status, logout; `mcpgw auth --help` says more)\n"
    "      client token NAME  a fresh token for client NAME and the token_sha256 line\n"
    "                      to paste into clients: (the token goes to the client only)\n"
    "  -V, --version       print the version\n"
    "  -h, --help          print this help\n"
    "\n"
    "Signals: SIGHUP reloads the configuration; SIGUSR1 reopens the audit log;\n"
    "SIGTERM and SIGINT stop gracefully.\n";

/* A SIGHUP during the start must not kill the daemon (its default action),
 * so signals are held before any other code of ours runs: from the
 * executable's .preinit_array, which runs before the libraries'
 * constructors and main() (under ASan, right after the sanitizer's own
 * start). Only the dynamic loader's work comes earlier. */
static void hold_signals(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    gw_daemon_hold_signals();
}

typedef void (*preinit_fn)(int, char **, char **);
static const preinit_fn preinit_hold __attribute__((section(".preinit_array"), used)) =
    hold_signals;

static const char *const default_paths[] = {"mcp.yaml", ".minds/mcp.yaml", "/etc/mcpgw/mcp.yaml"};

/* The first default path that exists, else the first one (which then reads
 * as an empty configuration). */
static const char *find_config(void)
{
    for (size_t i = 0; i < sizeof default_paths / sizeof default_paths[0]; i++) {
        if (access(default_paths[i], F_OK) == 0)
            return default_paths[i];
    }
    return default_paths[0];
}

/* What --check-config says of each stdio server's sandbox: an info line
 * for one that would run without one, and with -v every effective one. */
static void sandbox_notes(const struct gw_config *c, bool verbose)
{
    const char *bwrap;
    char why[512];
    bool can = gw_sandbox_available(&bwrap, why, sizeof(why)) == 0;
    for (size_t i = 0; i < c->nservers; i++) {
        const struct gw_server_config *s = &c->servers[i];
        if (s->transport != GW_TRANSPORT_STDIO || !s->ok)
            continue;
        if (!s->sandbox.enabled || !can)
            fprintf(stderr, "%s:%d:%d: info: [server %s] runs unsandboxed: %s\n", c->path, s->line,
                    s->col, s->id,
                    !s->sandbox.enabled ? "its sandbox is off (servers.<id>.sandbox, "
                                          "gateway.sandbox.default; docs/config.md, Sandbox)"
                                        : why);
        if (verbose) {
            json_t *j = gw_sandbox_config_json(&s->sandbox);
            char *text = json_dumps(j, JSON_COMPACT);
            fprintf(stderr, "%s:%d:%d: info: [server %s] sandbox %s\n", c->path, s->line, s->col,
                    s->id, text);
            free(text);
            json_decref(j);
        }
    }
}

static int check_config(const char *path, bool verbose)
{
    struct gw_config *c;
    int errors = 0;

    if (gw_config_load(path, &c) != 0) {
        fprintf(stderr, "mcpgw: cannot load %s\n", path);
        return 1;
    }
    /* The daemon runs on a missing file as on an empty configuration
     * (docs/config.md), so the test passes and says so. */
    if (!c->exists)
        fprintf(stderr, "%s: note: no such file: the configuration is empty (no servers)\n", path);
    for (size_t i = 0; i < c->ndiags; i++) {
        char *line = gw_diag_format(&c->diags[i]);
        fprintf(stderr, "%s\n", line);
        free(line);
        errors += c->diags[i].severity == GW_SEV_ERROR;
    }
    sandbox_notes(c, verbose);
    fprintf(stderr, "mcpgw: configuration file %s test %s (%d error%s, %zu server%s)\n", c->path,
            errors ? "failed" : "is successful", errors, errors == 1 ? "" : "s", c->nservers,
            c->nservers == 1 ? "" : "s");
    gw_config_unref(c);
    return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    enum { OPT_LISTEN = 256, OPT_LOG_LEVEL };
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"check-config", no_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct gw_daemon_options opts = {0};
    int check = 0, c;
    bool verbose = false;

    if (argc > 1 && strcmp(argv[1], "sandbox-relay") == 0) {
        gw_daemon_release_signals();
        return gw_sandbox_relay(argc - 1, argv + 1);
    }
    gw_sandbox_set_self(argv[0]);
    while ((c = getopt_long(argc, argv, "+c:tvVh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            opts.config_path = optarg;
            opts.config_path_explicit = true;
            break;
        case OPT_LISTEN:
            opts.listen = optarg;
            break;
        case OPT_LOG_LEVEL: {
            enum gw_log_level level;
            if (gw_log_level_parse(optarg, &level) != 0) {
                fprintf(stderr, "mcpgw: --log-level must be debug, info, warn or error\n");
                return 2;
            }
            gw_log_set_level(level);
            break;
        }
        case 't':
            check = 1;
            break;
        case 'v':
            verbose = true;
            break;
        case 'V':
            printf("mcpgw %s\n", GW_VERSION);
            return 0;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind < argc || check)
        gw_daemon_release_signals();
    if (optind < argc) {
        if (strcmp(argv[optind], "client") == 0)
            return gw_client_cli(argc - optind, argv + optind, stdout, stderr);
        if (strcmp(argv[optind], "auth") == 0)
            return gw_auth_cli(argc - optind, argv + optind,
                               opts.config_path ? opts.config_path : find_config(), opts.listen);
        if (strcmp(argv[optind], "import") == 0 && argc - optind == 2)
            return gw_import(argv[optind + 1], stdout, stderr);
        if (strcmp(argv[optind], "import") == 0)
            fprintf(stderr, "mcpgw: import takes one FILE\n%s", usage);
        else
            fprintf(stderr, "mcpgw: unexpected argument '%s'\n%s", argv[optind], usage);
        return 2;
    }
    if (opts.config_path == NULL)
        opts.config_path = find_config();
    if (check)
        return check_config(opts.config_path, verbose);
    return gw_daemon_run(&opts);
}
