/* One timer, armed by the first request and not re-armed by the others
 * until it fired, so a burst of frees costs one malloc_trim().
 *
 * The node pool: bucket k holds blocks whose usable size (as the allocator
 * reports it) is at least 8k bytes, and a request for n bytes looks in the
 * first buckets that promise n. So the pool needs nothing of the
 * allocator's size classes, and every block in it stays an ordinary malloc
 * block that free() may take at any time. */
#include "gw/heap.h"

#include <jansson.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>

/* A node on a free list is poisoned, so the sanitizer build still reports
 * a use after free of a pooled node. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GW_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GW_ASAN 1
#endif

#if defined(GW_ASAN)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define POOL_BUCKETS (GW_HEAP_POOL_MAX_BYTES / 8 + 1)

struct block {
    struct block *next;
};

static uv_timer_t timer;
static bool started; /* initialised and not closing */
static struct block *pool[POOL_BUCKETS];
static unsigned pooled[POOL_BUCKETS];

static void *pool_malloc(size_t n)
{
    size_t k = n < sizeof(struct block) ? 1 : (n + 7) / 8;

    for (size_t end = k + 2; k < end && k < POOL_BUCKETS; k++) {
        struct block *b = pool[k];
        if (b == NULL)
            continue;
        UNPOISON(b, sizeof *b);
        pool[k] = b->next;
        pooled[k]--;
        UNPOISON(b, 8 * k);
        return b;
    }
    return malloc(n);
}

static void pool_free(void *p)
{
    size_t usable, k;

    if (p == NULL)
        return;
    usable = malloc_usable_size(p);
    k = usable / 8;
    if (usable < sizeof(struct block) || k >= POOL_BUCKETS || pooled[k] >= GW_HEAP_POOL_KEEP) {
        free(p);
        return;
    }
    ((struct block *)p)->next = pool[k];
    pool[k] = p;
    pooled[k]++;
    POISON(p, usable);
}

static void pool_drain(void)
{
    for (size_t k = 0; k < POOL_BUCKETS; k++) {
        while (pool[k] != NULL) {
            struct block *b = pool[k];
            UNPOISON(b, sizeof *b);
            pool[k] = b->next;
            free(b);
        }
        pooled[k] = 0;
    }
}

static void on_timer(uv_timer_t *t)
{
    pool_drain();
    malloc_trim(0);
}

int gw_heap_start(uv_loop_t *loop)
{
    if (started)
        return UV_EBUSY;
    uv_timer_init(loop, &timer);
    /* A pending trim is no reason for the loop to stay alive. */
    uv_unref((uv_handle_t *)&timer);
    json_set_alloc_funcs(pool_malloc, pool_free);
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
    json_set_alloc_funcs(malloc, free);
    pool_drain();
}
