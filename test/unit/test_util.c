/* gw_ln against libm's log (which the daemon does not link): within 1 ulp
 * over the whole range of normal doubles, and exact where log is. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "gw/util.h"

static void near(double x)
{
    double want = log(x), got = gw_ln(x);
    double ulp = nextafter(fabs(want), INFINITY) - fabs(want);

    ck_assert_msg(fabs(got - want) <= ulp, "gw_ln(%.17g) = %.17g, log = %.17g", x, got, want);
}

START_TEST(test_ln_exact)
{
    ck_assert(gw_ln(1.0) == 0.0);
    ck_assert(gw_ln(2.0) == log(2.0));
    ck_assert(gw_ln(0.5) == log(0.5));
}
END_TEST

START_TEST(test_ln_range)
{
    /* the search's inverse document frequencies: 1 + (N - n + 0.5) / (n + 0.5) */
    for (int total = 1; total <= 5000; total += 7) {
        for (int n = 0; n <= total; n += 1 + total / 50)
            near(1.0 + ((double)total - n + 0.5) / (n + 0.5));
    }
    for (double x = DBL_MIN; x < DBL_MAX / 1.37; x *= 1.37)
        near(x);
    srand(34);
    for (int i = 0; i < 100000; i++)
        near(1.0 + 1000.0 * rand() / RAND_MAX);
}
END_TEST

static Suite *util_suite(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("ln");
    tcase_add_test(tc, test_ln_exact);
    tcase_add_test(tc, test_ln_range);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(util_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
