/* The artifact index behind the caps: a tree left by an earlier run is
 * read on the first save and trimmed to the caps (a dialog whose one file
 * is larger than its cap loses it), the oldest go first by mtime across
 * dialogs, files the gateway did not write are neither counted nor
 * removed, and an artifact larger than a cap is refused before anything is
 * written or removed. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw/artifacts.h"
#include "gw/log.h"

#define TOOL_DIR "artifacts/mcp/s/t"

static char dir[64];

static void mkdirs(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    mkdir(p, 0755);
}

/* A file of `size` bytes whose mtime is `age` seconds after the epoch. */
static void put(const char *rel, size_t size, time_t age)
{
    char p[256];
    struct timespec t[2] = {{age, 0}, {age, 0}};
    int fd;

    snprintf(p, sizeof p, "%s/%s", dir, rel);
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    for (size_t i = 0; i < size; i++)
        ck_assert_int_eq(write(fd, "x", 1), 1);
    ck_assert_int_eq(futimens(fd, t), 0);
    close(fd);
}

static int exists(const char *rel)
{
    char p[256];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return lstat(p, &st) == 0;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/gwart-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    gw_log_set_level(GW_LOG_ERROR);
    mkdirs("a/x/" TOOL_DIR);
    mkdirs("b/y/" TOOL_DIR);
    put("a/x/" TOOL_DIR "/1.bin", 100, 1000);
    put("a/x/" TOOL_DIR "/2.bin", 10, 3000);
    put("b/y/" TOOL_DIR "/3.bin", 500, 2000);
    /* Not the gateway's: another name of a file outside, a file outside
     * the tool directories. Both old, both large. */
    put("outside", 1000, 10);
    put("a/x/artifacts/notes.txt", 1000, 10);
    {
        char from[256], to[256];
        snprintf(from, sizeof from, "%s/outside", dir);
        snprintf(to, sizeof to, "%s/a/x/" TOOL_DIR "/hard.bin", dir);
        ck_assert_int_eq(link(from, to), 0);
    }
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const unsigned char data[64];

static char *save(struct gw_artifacts *a, const struct gw_artifact_caps *caps, size_t len)
{
    char *rel = NULL;
    ck_assert_int_eq(gw_artifact_save(a, caps, "c", "z", "s", "t", "image/png", data, len, &rel),
                     0);
    ck_assert_ptr_nonnull(rel);
    return rel;
}

START_TEST(test_index_trims_a_dialog_over_its_cap)
{
    struct gw_artifact_caps caps = {200, 10000};
    struct gw_artifacts *a = gw_artifacts_new(dir);
    char *rel = save(a, &caps, 20);

    ck_assert(!exists("b/y/" TOOL_DIR "/3.bin"));
    ck_assert(exists("a/x/" TOOL_DIR "/1.bin"));
    ck_assert(exists("a/x/" TOOL_DIR "/2.bin"));
    ck_assert(exists("a/x/" TOOL_DIR "/hard.bin"));
    ck_assert(exists("a/x/artifacts/notes.txt"));
    ck_assert_str_eq(gw_artifacts_dir(a), dir);
    free(rel);
    gw_artifacts_free(a);
}
END_TEST

START_TEST(test_global_cap_takes_the_oldest_of_all)
{
    struct gw_artifact_caps caps = {1000, 650};
    struct gw_artifacts *a = gw_artifacts_new(dir);
    char *rel, *rel2, path[256];

    /* 610 bytes indexed: 50 more pass 650, the oldest (1.bin) goes. */
    rel = save(a, &caps, 50);
    ck_assert(!exists("a/x/" TOOL_DIR "/1.bin"));
    ck_assert(exists("b/y/" TOOL_DIR "/3.bin"));
    ck_assert(exists("a/x/" TOOL_DIR "/2.bin"));
    /* 560 bytes: 64 more fit, then 64 more pass 650: 3.bin is now the
     * oldest (older than 2.bin, though its dialog was indexed later). */
    free(save(a, &caps, 64));
    ck_assert(exists("b/y/" TOOL_DIR "/3.bin"));
    rel2 = save(a, &caps, 64);
    ck_assert(!exists("b/y/" TOOL_DIR "/3.bin"));
    snprintf(path, sizeof path, "c/z/%s", rel);
    ck_assert(exists(path));
    ck_assert(exists("a/x/" TOOL_DIR "/hard.bin"));
    free(rel);
    free(rel2);
    gw_artifacts_free(a);
}
END_TEST

START_TEST(test_too_large_is_refused_untouched)
{
    struct gw_artifact_caps caps = {40, 10000};
    struct gw_artifacts *a = gw_artifacts_new(dir);
    char *rel = NULL;

    ck_assert_int_eq(gw_artifact_save(a, &caps, "a", "x", "s", "t", "image/png", data, 41, &rel),
                     -EFBIG);
    ck_assert_ptr_null(rel);
    ck_assert(exists("a/x/" TOOL_DIR "/1.bin"));
    ck_assert(!exists("c"));
    caps = (struct gw_artifact_caps){10000, 40};
    ck_assert_int_eq(gw_artifact_save(a, &caps, "a", "x", "s", "t", "image/png", data, 41, &rel),
                     -EFBIG);
    ck_assert(exists("b/y/" TOOL_DIR "/3.bin"));
    gw_artifacts_free(a);
}
END_TEST

START_TEST(test_hard_link_is_not_opened)
{
    ck_assert_int_eq(gw_artifact_open(dir, "a", "x", TOOL_DIR "/hard.bin"), -ENOENT);
    int fd = gw_artifact_open(dir, "a", "x", TOOL_DIR "/2.bin");
    ck_assert_int_ge(fd, 0);
    close(fd);
}
END_TEST

/* The URL a result item carries: what a query must not hold raw is
 * percent-encoded once, the rest left to read. */
START_TEST(test_url_encodes_what_a_query_needs)
{
    char *u = gw_artifact_url("chat1", "agent", "artifacts/mcp/fx/image/1-a.png");

    ck_assert_str_eq(u, "/api/dialogs/chat1/agent/artifact?path=artifacts/mcp/fx/image/1-a.png");
    free(u);
    u = gw_artifact_url("r", "s", "artifacts/a b%/x?#&+~.png");
    ck_assert_str_eq(u, "/api/dialogs/r/s/artifact?path=artifacts/a%20b%25/x%3F%23%26%2B~.png");
    free(u);
}
END_TEST

static Suite *artifacts_suite(void)
{
    Suite *s = suite_create("artifacts");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_index_trims_a_dialog_over_its_cap);
    tcase_add_test(tc, test_global_cap_takes_the_oldest_of_all);
    tcase_add_test(tc, test_too_large_is_refused_untouched);
    tcase_add_test(tc, test_hard_link_is_not_opened);
    tcase_add_test(tc, test_url_encodes_what_a_query_needs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(artifacts_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
