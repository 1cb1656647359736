/* Tests of the one loader of the libraries mcpgw opens at first use. */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gw/dynlib.h"

/* libm is on every machine that runs the daemon (it links it). */
static struct {
    double (*sqrt)(double);
    double (*cbrt)(double);
} fn;

START_TEST(test_fills_the_table)
{
    static const struct gw_dynsym syms[] = {{"sqrt", offsetof(__typeof__(fn), sqrt)},
                                            {"cbrt", offsetof(__typeof__(fn), cbrt)}};
    const struct gw_dynlib lib = {"libm.so.6", RTLD_LOCAL, "tests need", "any", syms, 2};
    memset(&fn, 0, sizeof(fn));
    void *h = NULL;
    char why[256] = "";
    ck_assert_int_eq(gw_dynlib_open(&lib, &fn, &h, why, sizeof(why)), 0);
    ck_assert_ptr_nonnull(h);
    ck_assert(fn.sqrt(16.0) == 4.0);
    ck_assert(fn.cbrt(27.0) > 2.999999 && fn.cbrt(27.0) < 3.000001);
    dlclose(h);
}
END_TEST

START_TEST(test_missing_symbol_leaves_table)
{
    static const struct gw_dynsym syms[] = {
        {"sqrt", offsetof(__typeof__(fn), sqrt)},
        {"no_such_function_here", offsetof(__typeof__(fn), cbrt)}};
    const struct gw_dynlib lib = {"libm.so.6",        RTLD_LOCAL, "tests need",
                                  "libm 9 is needed", syms,       2};
    memset(&fn, 0, sizeof(fn));
    void *h = &fn;
    char why[256] = "";
    ck_assert_int_eq(gw_dynlib_open(&lib, &fn, &h, why, sizeof(why)), -ENOTSUP);
    ck_assert_ptr_null(h);
    /* All or nothing: the function found first was not written either. */
    ck_assert_ptr_null(fn.sqrt);
    ck_assert_str_eq(why, "libm.so.6 has no no_such_function_here (libm 9 is needed)");
}
END_TEST

START_TEST(test_missing_library_says_what_needs_it)
{
    const struct gw_dynlib lib = {
        "libmcpgw-absent.so.0", RTLD_LOCAL, "nothing needs (Debian package none)", "any", NULL, 0};
    void *h = &fn;
    char why[512] = "";
    ck_assert_int_eq(gw_dynlib_open(&lib, &fn, &h, why, sizeof(why)), -ENOTSUP);
    ck_assert_ptr_null(h);
    const char *want =
        "cannot load libmcpgw-absent.so.0, which nothing needs (Debian package none): ";
    ck_assert_int_eq(strncmp(why, want, strlen(want)), 0);
    ck_assert_uint_gt(strlen(why), strlen(want));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("dynlib");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_fills_the_table);
    tcase_add_test(tc, test_missing_symbol_leaves_table);
    tcase_add_test(tc, test_missing_library_says_what_needs_it);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
