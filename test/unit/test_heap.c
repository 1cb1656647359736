/* The node pool behind jansson while the heap module runs: freed nodes are
 * handed out again, trees built and freed through it in any order keep
 * their contents (checked against a copy made without the pool), a node of
 * any size comes back at least as large as asked, and closing gives every
 * pooled node back (the sanitizer's leak check runs at exit). */
#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/heap.h"

#include "random_json.h"

static void run_close(uv_loop_t *loop)
{
    gw_heap_close();
    uv_run(loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(loop), 0);
}

START_TEST(test_reuse)
{
    uv_loop_t loop;
    uintptr_t first;
    json_t *a, *b;

    uv_loop_init(&loop);
    ck_assert_int_eq(gw_heap_start(&loop), 0);
    ck_assert_int_eq(gw_heap_start(&loop), UV_EBUSY);
    a = json_integer(1);
    first = (uintptr_t)a;
    json_decref(a);
    b = json_integer(2);
    ck_assert_uint_eq((uintptr_t)b, first);
    ck_assert_int_eq(json_integer_value(b), 2);
    json_decref(b);
    run_close(&loop);
}
END_TEST

/* Trees made with the pool are compared with the same trees made without
 * it, while others are freed in between: a node handed out twice, or one
 * too small, would change a tree. */
START_TEST(test_trees_intact)
{
    enum { LIVE = 64, ROUNDS = 3000 };
    json_t *want[LIVE], *got[LIVE] = {0};
    unsigned seeds[LIVE];
    uv_loop_t loop;
    unsigned seed = 42;

    for (int i = 0; i < LIVE; i++) {
        seeds[i] = seed + (unsigned)i;
        unsigned s = seeds[i];
        want[i] = random_json_container(&s, 0, i % 2);
    }
    uv_loop_init(&loop);
    ck_assert_int_eq(gw_heap_start(&loop), 0);
    for (int r = 0; r < ROUNDS; r++) {
        int i = rand_r(&seed) % LIVE;
        if (got[i] != NULL) {
            ck_assert(json_equal(got[i], want[i]));
            json_decref(got[i]);
            got[i] = NULL;
        } else {
            unsigned s = seeds[i];
            got[i] = random_json_container(&s, 0, i % 2);
        }
        for (size_t n = 1; n <= GW_HEAP_POOL_MAX_BYTES + 16; n += 7) {
            char *text = malloc(n + 1);
            memset(text, 'x', n);
            text[n] = '\0';
            json_t *str = json_stringn(text, n);
            ck_assert_uint_eq(json_string_length(str), n);
            ck_assert_int_eq(memcmp(json_string_value(str), text, n), 0);
            json_decref(str);
            free(text);
        }
    }
    for (int i = 0; i < LIVE; i++) {
        if (got[i] != NULL)
            ck_assert(json_equal(got[i], want[i]));
        json_decref(got[i]);
    }
    run_close(&loop);
    for (int i = 0; i < LIVE; i++)
        json_decref(want[i]);
}
END_TEST

static Suite *heap_suite(void)
{
    Suite *s = suite_create("heap");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_reuse);
    tcase_add_test(tc, test_trees_intact);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(heap_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
