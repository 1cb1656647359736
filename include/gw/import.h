/* `mcpgw import FILE` (design §3): converts the MCP configurations users
 * already have into mcp.yaml version 1.
 *
 * Formats, detected from the document's shape (not its file name):
 *   - `mcpServers` JSON: Claude Desktop, Cursor, Claude Code's .mcp.json,
 *     Cline (stdio entries and `url` entries with `type`);
 *   - VS Code's `servers` form (.vscode/mcp.json, or `mcp.servers` in
 *     settings.json), with `inputs`; comments and trailing commas allowed;
 *   - HoloDeck agent.yaml `tools:` entries of `type: mcp` (seed 002),
 *     its legacy form without transport/command included;
 *   - chatagent `myai.toolbox` YAML (seed 004).
 *
 * JSON is read with jansson, YAML with libyaml (gw_yaml_tree), with YAML
 * 1.1 scalar typing as PyYAML reads those files (`yes` is true there).
 * Nothing is written to `out` unless the whole conversion succeeded. What
 * the output cannot express is reported on `err`, one line each, as
 * "FILE: warning: <what> was not imported: <why>" (or another sentence
 * naming what changed), never dropped silently. */
#ifndef GW_IMPORT_H
#define GW_IMPORT_H

#include <stddef.h>
#include <stdio.h>

/* Largest input accepted (the same as the config loader's limit). */
#define GW_IMPORT_MAX_FILE (4u << 20)

/* Reads `path` and writes the mcp.yaml text to `out`. Returns the process
 * exit status: 0 converted (warnings may have been printed), 1 the file
 * cannot be read or parsed, or is in no format listed above (the reason is
 * printed on `err` as "FILE: error: …"). */
int gw_import(const char *path, FILE *out, FILE *err);

/* The same from a buffer; `name` is the file name used in messages. */
int gw_import_buffer(const char *name, const char *buf, size_t len, FILE *out, FILE *err);

#endif
