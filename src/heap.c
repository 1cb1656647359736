/* One timer, armed by the first request and not re-armed by the others
 * until it fired, so a burst of frees costs one malloc_trim(). */
#include "gw/heap.h"

#include <malloc.h>
#include <stdbool.h>

static uv_timer_t timer;
static bool started; /* initialised and not closing */

static void on_timer(uv_timer_t *t)
{
    malloc_trim(0);
}

int gw_heap_start(uv_loop_t *loop)
{
    if (started)
        return UV_EBUSY;
    uv_timer_init(loop, &timer);
    /* A pending trim is no reason for the loop to stay alive. */
    uv_unref((uv_handle_t *)&timer);
    started = true;
    return 0;
}

void gw_heap_trim_soon(void)
{
    if (started && !uv_is_active((uv_handle_t *)&timer))
        uv_timer_start(&timer, on_timer, GW_HEAP_TRIM_DELAY_MS, 0);
}

void gw_heap_close(void)
{
    if (!started)
        return;
    started = false;
    uv_close((uv_handle_t *)&timer, NULL);
}
