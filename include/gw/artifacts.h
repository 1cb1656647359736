/* Artifacts (seed 001): binary tool output saved under
 * <artifacts_dir>/<root>/<self>/artifacts/mcp/<serverId>/<toolName>/<ts>-<uuid>.<ext>
 * and served back by GET /api/dialogs/{root}/{self}/artifact?path=….
 *
 * Files are written and read with plain blocking calls: they are bounded by
 * the 16 MiB message cap and land on local disk. Reads never follow a
 * symlink and never leave the dialog's directory (security.md C11). */
#ifndef GW_ARTIFACTS_H
#define GW_ARTIFACTS_H

#include <stddef.h>

/* Decodes standard base64 (padding optional, no whitespace inside).
 * Returns the decoded length, or -1 when `in` is not base64. `out` must
 * hold len / 4 * 3 + 3 bytes. */
long gw_base64_decode(const char *in, size_t len, unsigned char *out);

/* The file extension for a MIME type ("png", …; "bin" when unknown). */
const char *gw_mime_ext(const char *mime);

/* The Content-Type for a file name by its extension. */
const char *gw_mime_for_path(const char *path);

/* Saves `data`; on 0 *relpath (caller frees) is relative to
 * <dir>/<root>/<self> and starts with "artifacts/". `root`, `self`,
 * `server` and `tool` must already be validated names. Returns 0 or a
 * negative errno. */
int gw_artifact_save(const char *dir, const char *root, const char *self, const char *server,
                     const char *tool, const char *mime, const unsigned char *data, size_t len,
                     char **relpath);

/* Opens <dir>/<root>/<self>/<relpath> for reading, refusing "..", ".",
 * empty segments, absolute paths, NUL, paths not under "artifacts/" and
 * symlinks at any level. Returns an fd (O_CLOEXEC) or a negative errno. */
int gw_artifact_open(const char *dir, const char *root, const char *self, const char *relpath);

#endif
