/* Giving freed heap memory back to the system.
 *
 * glibc returns memory to the kernel only from the top of its heap (and
 * unmaps large blocks); memory freed below a live allocation stays resident.
 * When many instances close, or large messages pass, their freed chunks sit
 * among the allocations of the instances still running, so RSS stays at its
 * peak: 1,000 leases released left 15 MB RSS with 0.4 MB in use.
 * malloc_trim(0) hands every free page back (madvise), wherever it is.
 *
 * A trim walks every free chunk: ~0.3 ms with nothing to give back, ~6 ms
 * to give back 4 MB. So modules only ask for one (gw_heap_trim_soon) after
 * freeing in bulk, and the requests of one second share one trim.
 *
 * The module holds one process-wide timer (there is one heap per process),
 * so its functions need no handle. Before gw_heap_start() and after
 * gw_heap_close() every request is ignored (unit tests, shutdown).
 *
 * Between the two, jansson allocates through a small pool: a call builds
 * and frees some forty nodes of a few sizes, more of each size than
 * glibc's per-size cache keeps (7), so most went through its slower bins.
 * Freed nodes up to GW_HEAP_POOL_MAX_BYTES are kept on free lists, at most
 * GW_HEAP_POOL_KEEP per size (about 0.5 MB in all), and handed out again;
 * a trim empties the lists first. The daemon has one thread. */
#ifndef GW_HEAP_H
#define GW_HEAP_H

#include <uv.h>

/* Initialises the timer on `loop`. Returns 0 or UV_EBUSY when started. */
int gw_heap_start(uv_loop_t *loop);

/* Asks for a trim within GW_HEAP_TRIM_DELAY_MS; no-op when one is already
 * due or the module is not started. */
void gw_heap_trim_soon(void);

#define GW_HEAP_TRIM_DELAY_MS  1000
#define GW_HEAP_POOL_MAX_BYTES 160 /* larger nodes go to malloc and free */
#define GW_HEAP_POOL_KEEP      256 /* free nodes kept per size */

/* Closes the timer (no trim runs after); the loop must run for the handle
 * to close before uv_loop_close() can succeed. No-op when not started. */
void gw_heap_close(void);

#endif
