/* Artifacts (seed 001): binary tool output saved under
 * <artifacts_dir>/<root>/<self>/artifacts/mcp/<serverId>/<toolName>/<ts>-<uuid>.<ext>
 * and served back by GET /api/dialogs/{root}/{self}/artifact?path=….
 *
 * Files are written and read with plain blocking calls: they are bounded by
 * the 16 MiB message cap and land on local disk. Reads never follow a
 * symlink and never leave the dialog's directory (security.md C11).
 * Saved files are kept under a per-dialog and a global byte cap, the
 * oldest removed first. */
#ifndef GW_ARTIFACTS_H
#define GW_ARTIFACTS_H

#include <stddef.h>
#include <stdint.h>

/* The file extension for a MIME type ("png", …; "bin" when unknown). */
const char *gw_mime_ext(const char *mime);

/* The Content-Type for a file name by its extension. */
const char *gw_mime_for_path(const char *path);

/* Files kept in all, whatever their sizes: bounds the index's memory and
 * the inodes a stream of tiny artifacts takes (the oldest go first). */
#define GW_ARTIFACTS_MAX_FILES 100000

/* Byte caps on saved artifacts (gateway.artifacts_max_bytes_per_dialog,
 * gateway.artifacts_max_bytes), both at least 1. */
struct gw_artifact_caps {
    uint64_t per_dialog;
    uint64_t total;
};

/* The artifacts under one artifacts_dir and the index of their sizes and
 * ages that the caps are kept by. Only files where gw_artifact_save writes
 * them, regular and with one name, are counted (and ever removed). */
struct gw_artifacts;

/* A new, empty index for `dir` (copied); cheap: the tree on disk, which
 * outlives the daemon, is read on the first save. The caller owns it. */
struct gw_artifacts *gw_artifacts_new(const char *dir);

/* Frees the index (never a file). NULL is fine. */
void gw_artifacts_free(struct gw_artifacts *a);

/* The directory the index was made for. */
const char *gw_artifacts_dir(const struct gw_artifacts *a);

/* Saves `data` for the dialog <root>/<self>; on 0 *relpath (caller frees)
 * is relative to <dir>/<root>/<self> and starts with "artifacts/". Room is
 * made first by removing the oldest files: the dialog's own while it would
 * pass caps->per_dialog, then anyone's while the tree would pass
 * caps->total or GW_ARTIFACTS_MAX_FILES files. `root`, `self`, `server` and
 * `tool` must already be validated names. Returns 0, -EFBIG when `len`
 * passes a cap itself (nothing written or removed), or another negative
 * errno. The first call reads the whole tree (blocking). */
int gw_artifact_save(struct gw_artifacts *a, const struct gw_artifact_caps *caps, const char *root,
                     const char *self, const char *server, const char *tool, const char *mime,
                     const unsigned char *data, size_t len, char **relpath);

/* Opens <dir>/<root>/<self>/<relpath> for reading, refusing "..", ".",
 * empty segments, absolute paths, NUL, paths not under "artifacts/",
 * symlinks at any level, and anything but a regular file with one name (a
 * hard link may name a file from outside the tree). Returns an fd (O_CLOEXEC) or a negative errno.
 */
int gw_artifact_open(const char *dir, const char *root, const char *self, const char *relpath);

/* The URL that serves <root>/<self>/<relpath> back, as an absolute path
 * ("/api/dialogs/<root>/<self>/artifact?path=<relpath, percent-encoded>"),
 * which a client resolves against the gateway's URL it used: the gateway
 * may be behind a proxy or on a unix socket and cannot know that URL.
 * `root` and `self` must be validated names. New string. */
char *gw_artifact_url(const char *root, const char *self, const char *relpath);

#endif
