/* The audit log (issue 35, gateway.audit): one JSON line per tool call and
 * per refused attempt. Lines wait
 * in a bounded queue; one write per batch (the file opened O_APPEND), a
 * batch being what GW_AUDIT_FLUSH_MS gathered, the next batch when it is
 * done. The loop writes a regular file of a local file system itself; any
 * other path, and a file whose write once took GW_AUDIT_SLOW_MS, is written
 * through libuv's threadpool: a disk that slows down holds the loop once, for
 * one write (docs/operations.md, Audit log). A write that
 * fails (a full disk) raises the Problem `audit:write` and counts the
 * batch's lines as dropped; with gateway.audit.required the calls are
 * refused while that lasts (gw_audit_refusing) and resume after a reload or
 * SIGUSR1 opened a file that takes the next write. SIGUSR1 reopens the
 * path (logrotate's postrotate): lines already in a write go to the old
 * file, every later one to the new. */
#ifndef GW_AUDIT_H
#define GW_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "gw/config.h"
#include "gw/problems.h"

/* The most bytes waiting to be written: beyond, lines are dropped (and
 * counted), or with `required` the calls refused. */
#define GW_AUDIT_QUEUE_MAX (8u << 20)
/* How long a line waits for others to share its write (twice as long
 * while the loop has nothing else to do), and the batch that is written at
 * once without waiting. A crash loses at most twice this long's lines
 * (SIGTERM and a reload lose none). */
#define GW_AUDIT_FLUSH_MS 5
#define GW_AUDIT_BATCH    (64u << 10)
/* A write by the loop that took this long moves that file's writes to the
 * threadpool until the path is opened again. */
#define GW_AUDIT_SLOW_MS 10
/* The longest `arguments` of `arguments: full`, as JSON text: longer ones
 * are written as `hash` writes them, without keys and with "cut": true. So
 * a line is at most this and a few hundred bytes of other members (names
 * of at most 64 bytes, a dialog of at most 194, a rule glob of the config),
 * and well within GW_AUDIT_QUEUE_MAX. */
#define GW_AUDIT_ARGS_FULL_MAX (1u << 20)

struct gw_audit;
struct gw_jbuf;

struct gw_audit *gw_audit_new(uv_loop_t *loop, struct gw_problems *problems);
/* Follows gateway.audit after a load or reload: another path is opened
 * (the old one closed once its write is done); the same path is opened
 * again when the last write failed. */
void gw_audit_configure(struct gw_audit *a, const struct gw_gateway_config *g);
/* SIGUSR1: the path opened again, for the files logrotate moved. */
void gw_audit_reopen(struct gw_audit *a);
/* Whether calls are audited; whether they must be refused now (required
 * and the log cannot be written). */
bool gw_audit_on(const struct gw_audit *a);
bool gw_audit_refusing(const struct gw_audit *a);
enum gw_audit_arguments gw_audit_arguments_mode(const struct gw_audit *a);
/* What a line is about, for the journal's indexed fields (MCPGW_CLIENT=
 * …); any member may be NULL. */
struct gw_audit_fields {
    const char *client, *server, *tool, *decision, *outcome;
};

/* Queues one line (JSON text without its newline). With `path: journal`
 * it is sent at once as one datagram of journald's native protocol
 * (MESSAGE= the line, SYSLOG_IDENTIFIER=mcpgw, PRIORITY=6 and `f` as
 * MCPGW_* fields) on a non-blocking socket, or when it is too large for a
 * datagram, in a sealed memfd passed over that socket (as sd_journal_sendv
 * does): an entry the journal does not take (its socket full or absent) is
 * a dropped line, as a failed write. */
void gw_audit_write(struct gw_audit *a, const char *line, size_t len,
                    const struct gw_audit_fields *f);
/* An empty buffer to build the next line in, kept from line to line (the
 * line is then given to gw_audit_write, which copies it). */
struct gw_jbuf *gw_audit_line(struct gw_audit *a);
/* Lines written and dropped since start, for /metrics. */
uint64_t gw_audit_dropped(const struct gw_audit *a);
uint64_t gw_audit_written(const struct gw_audit *a);
/* Writes what is queued (blocking: the loop is ending) and frees. */
/* The daemon stops: what is queued starts now, and each later line at
 * once (its timer is closed for the loop to end). */
void gw_audit_stop(struct gw_audit *a);
/* After the loop ended: what is left is written with plain writes. */
void gw_audit_close(struct gw_audit *a);

/* audit_jcs.c: `args` (an object, or NULL for none) as its RFC 8785
 * canonical JSON text: *hex gets the SHA-256 of that text (65 bytes,
 * lowercase), *keys (unless `keys` is NULL) its top-level keys in that
 * order as the JSON text of an array (malloc'd), and the text's length is
 * returned. */
size_t gw_audit_args_digest(const json_t *args, char hex[65], char **keys);
/* The RFC 8785 text of `v` (new string; NULL for a value JSON cannot
 * hold). Exposed for tests. */
char *gw_audit_canonical(const json_t *v, size_t *len);

#endif
