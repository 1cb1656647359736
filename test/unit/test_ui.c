/* The status page's compiled-in table (build/gen/ui_files.c from src/ui/):
 * every file is there with a strong ETag that is its SHA-256, a gzip copy
 * made with -n whose trailer gives the file's length, all under 80 KB, and
 * no page source that parses markup from strings or carries inline script
 * or style. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/sha256.h"
#include "gw/ui.h"

static const struct gw_ui_file *find(const char *path)
{
    for (size_t i = 0; i < gw_ui_nfiles; i++) {
        if (strcmp(gw_ui_files[i].path, path) == 0)
            return &gw_ui_files[i];
    }
    return NULL;
}

/* Does the file hold `needle`? (The data is not NUL-terminated.) */
static int holds(const struct gw_ui_file *f, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; i + n <= f->len; i++) {
        if (memcmp(f->data + i, needle, n) == 0)
            return 1;
    }
    return 0;
}

/* An inline event handler: " on" and letters, then "=". */
static int handler_attribute(const struct gw_ui_file *f)
{
    for (size_t i = 0; i + 3 < f->len; i++) {
        size_t k = i + 3;
        if (memcmp(f->data + i, " on", 3) != 0)
            continue;
        while (k < f->len && f->data[k] >= 'a' && f->data[k] <= 'z')
            k++;
        if (k > i + 3 && k < f->len && f->data[k] == '=')
            return 1;
    }
    return 0;
}

START_TEST(test_files_present)
{
    static const char *const paths[] = {
        "/",           "/ui/app.js",     "/ui/api.js",    "/ui/dom.js",     "/ui/form.js",
        "/ui/plot.js", "/ui/catalog.js", "/ui/style.css", "/ui/favicon.svg"};
    size_t total = 0;

    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        ck_assert_msg(find(paths[i]) != NULL, "%s is not compiled in", paths[i]);
    for (size_t i = 0; i < gw_ui_nfiles; i++)
        total += gw_ui_files[i].len;
    ck_assert_msg(total < 80 * 1024, "the page's sources are %zu bytes", total);
    ck_assert_str_eq(find("/")->content_type, "text/html; charset=utf-8");
    ck_assert_str_eq(find("/ui/app.js")->content_type, "text/javascript; charset=utf-8");
}
END_TEST

START_TEST(test_etag_is_sha256)
{
    for (size_t i = 0; i < gw_ui_nfiles; i++) {
        const struct gw_ui_file *f = &gw_ui_files[i];
        struct gw_sha256 c;
        unsigned char d[GW_SHA256_LEN];
        char want[35];

        gw_sha256_init(&c);
        gw_sha256_update(&c, f->data, f->len);
        gw_sha256_final(&c, d);
        want[0] = '"';
        for (int k = 0; k < 16; k++)
            snprintf(want + 1 + 2 * k, 3, "%02x", d[k]);
        want[33] = '"';
        want[34] = '\0';
        ck_assert_str_eq(f->etag, want);
    }
}
END_TEST

START_TEST(test_gzip_copies)
{
    for (size_t i = 0; i < gw_ui_nfiles; i++) {
        const struct gw_ui_file *f = &gw_ui_files[i];
        const unsigned char *t = f->gz + f->gzlen - 4;

        ck_assert_uint_ge(f->gzlen, 18);
        /* Magic, deflate, and no name or time stored (-n): reproducible. */
        ck_assert(f->gz[0] == 0x1f && f->gz[1] == 0x8b && f->gz[2] == 8);
        ck_assert(f->gz[3] == 0 && f->gz[4] == 0 && f->gz[5] == 0 && f->gz[6] == 0 &&
                  f->gz[7] == 0);
        ck_assert_uint_eq(
            (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24, f->len);
        ck_assert_uint_lt(f->gzlen, f->len);
    }
}
END_TEST

START_TEST(test_no_markup_from_strings)
{
    static const char *const sinks[] = {"innerHTML",      "outerHTML", "insertAdjacentHTML",
                                        "document.write", "eval(",     "new Function"};

    for (size_t i = 0; i < gw_ui_nfiles; i++) {
        const struct gw_ui_file *f = &gw_ui_files[i];
        for (size_t k = 0; k < sizeof sinks / sizeof sinks[0]; k++)
            ck_assert_msg(!holds(f, sinks[k]), "%s uses %s", f->path, sinks[k]);
    }
    ck_assert(!holds(find("/"), "<script>"));
    ck_assert(!holds(find("/"), "<style"));
    ck_assert(!holds(find("/"), " style="));
    ck_assert(!handler_attribute(find("/")));
}
END_TEST

static Suite *ui_suite(void)
{
    Suite *s = suite_create("ui");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_files_present);
    tcase_add_test(tc, test_etag_is_sha256);
    tcase_add_test(tc, test_gzip_copies);
    tcase_add_test(tc, test_no_markup_from_strings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ui_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
