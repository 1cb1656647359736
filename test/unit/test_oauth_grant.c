/* What the OAuth client loads and how it keeps a grant's times
 * (gw/oauth.h): the files of <state_dir>/oauth are read only when the
 * writer would have written them so (this user's, writable by no one
 * else, no symlink on the way), and the times a token answer or a file
 * hands over are bounded. No network: the grant comes from a file. */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "gw/curl_uv.h"
#include "gw/oauth.h"
#include "gw/util.h"

static char *tmpdir(void)
{
    char *d = strdup("/tmp/test_oauth_grant_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void rm_tree(const char *root)
{
    nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void put(const char *dir, const char *name, const char *text, mode_t mode)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(chmod(path, mode), 0);
}

#define SERVER "http://127.0.0.1:9/mcp"

/* A grant of the configured client c1 for SERVER, as the writer saves
 * it, expiring at `expires_at`. */
static void put_grant(const char *dir, long long expires_at, mode_t mode)
{
    char name[GW_OAUTH_NAME_LEN], text[600];
    gw_oauth_store_name("grant", SERVER, name);
    snprintf(text, sizeof(text),
             "{\"server\":\"" SERVER "\",\"issuer\":\"http://127.0.0.1:9\","
             "\"token_endpoint\":\"http://127.0.0.1:9/token\",\"client_id\":\"c1\","
             "\"token_endpoint_auth_method\":\"none\",\"access_token\":\"at-file\","
             "\"expires_at\":%lld}",
             expires_at);
    put(dir, name, text, mode);
}

/* A client for SERVER with configured client c1 and `state`; freed and
 * its loop run out by done(). */
static struct gw_oauth *client(uv_loop_t *loop, const char *state)
{
    struct gw_oauth_settings s = {.server_url = SERVER,
                                  .redirect_uri = "http://127.0.0.1:1/oauth/callback",
                                  .client_id = "c1",
                                  .state_dir = state};
    uv_loop_init(loop);
    return gw_oauth_new(loop, NULL, &s);
}

static void done(uv_loop_t *loop, struct gw_oauth *o)
{
    gw_oauth_free(o);
    uv_run(loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(loop), 0);
}

struct outcome {
    int done, rc;
    char text[600];
};

static void on_outcome(void *data, int rc, const char *text)
{
    struct outcome *r = data;
    r->done++;
    r->rc = rc;
    snprintf(r->text, sizeof(r->text), "%s", text ? text : "");
}

static void multi_closed(void *data)
{
    *(int *)data = 1;
}

START_TEST(test_store_read_checks)
{
    char *root = tmpdir(), dir[300], other[700], why[400];
    snprintf(dir, sizeof(dir), "%s/oauth", root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    put(dir, "f.json", "{}", 0600);
    char *text = gw_oauth_store_read(dir, "f.json", 1024, why, sizeof(why));
    ck_assert_str_eq(text, "{}");
    free(text);
    ck_assert_ptr_null(gw_oauth_store_read(dir, "absent.json", 1024, why, sizeof(why)));
    ck_assert_str_eq(why, ""); /* absent is not refused */

    /* A file that others may write. */
    ck_assert_int_eq(chmod(dir, 0700), 0);
    put(dir, "f.json", "{}", 0620);
    ck_assert_ptr_null(gw_oauth_store_read(dir, "f.json", 1024, why, sizeof(why)));
    ck_assert_msg(strstr(why, "writable by its group or by others"), "%s", why);
    put(dir, "f.json", "{}", 0600);

    /* A directory that others may write: they could have put the file. */
    ck_assert_int_eq(chmod(dir, 0777), 0);
    ck_assert_ptr_null(gw_oauth_store_read(dir, "f.json", 1024, why, sizeof(why)));
    ck_assert_msg(strstr(why, "writable by its group or by others (mode 777)"), "%s", why);
    ck_assert_int_eq(chmod(dir, 0700), 0);

    /* Another user's file, another user's directory. */
    char path[500];
    snprintf(path, sizeof(path), "%s/f.json", dir);
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(path, 65534, 65534), 0);
        ck_assert_ptr_null(gw_oauth_store_read(dir, "f.json", 1024, why, sizeof(why)));
        ck_assert_msg(strstr(why, "owned by uid 65534"), "%s", why);
        ck_assert_int_eq(chown(path, 0, 0), 0);
        ck_assert_int_eq(chown(dir, 65534, 65534), 0);
        ck_assert_ptr_null(gw_oauth_store_read(dir, "f.json", 1024, why, sizeof(why)));
        ck_assert_msg(strstr(why, "owned by uid 65534"), "%s", why);
        ck_assert_int_eq(chown(dir, 0, 0), 0);
    }

    /* The directory reached through a symlink. */
    snprintf(other, sizeof(other), "%s/elsewhere", root);
    ck_assert_int_eq(symlink(dir, other), 0);
    ck_assert_ptr_null(gw_oauth_store_read(other, "f.json", 1024, why, sizeof(why)));
    ck_assert_msg(strstr(why, "symlink"), "%s", why);

    /* A file reached through a symlink. */
    snprintf(other, sizeof(other), "%s/link.json", dir);
    ck_assert_int_eq(symlink(path, other), 0);
    ck_assert_ptr_null(gw_oauth_store_read(dir, "link.json", 1024, why, sizeof(why)));
    ck_assert_msg(strstr(why, "symlink"), "%s", why);
    rm_tree(root);
    free(root);
}
END_TEST

START_TEST(test_load_refuses_what_others_wrote)
{
    char *root = tmpdir(), dir[300];
    uv_loop_t loop;
    snprintf(dir, sizeof(dir), "%s/oauth", root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    put_grant(dir, (long long)time(NULL) + 3600, 0600);
    struct gw_oauth *o = client(&loop, root);
    ck_assert_str_eq(gw_oauth_access_token(o), "at-file");
    done(&loop, o);

    /* The same grant in a directory anyone may write is not used. */
    ck_assert_int_eq(chmod(dir, 0777), 0);
    o = client(&loop, root);
    ck_assert_ptr_null(gw_oauth_access_token(o));
    done(&loop, o);
    ck_assert_int_eq(chmod(dir, 0700), 0);

    /* Nor one that another user owns. */
    if (geteuid() == 0) {
        char name[GW_OAUTH_NAME_LEN], path[500];
        gw_oauth_store_name("grant", SERVER, name);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        ck_assert_int_eq(chown(path, 65534, 65534), 0);
        o = client(&loop, root);
        ck_assert_ptr_null(gw_oauth_access_token(o));
        done(&loop, o);
    }

    /* Nor a grant whose oauth/ is a symlink to a good directory. */
    char real[600], link[700];
    snprintf(real, sizeof(real), "%s/real", root);
    ck_assert_int_eq(mkdir(real, 0700), 0);
    snprintf(link, sizeof(link), "%s/real/oauth", root);
    ck_assert_int_eq(mkdir(link, 0700), 0);
    put_grant(link, (long long)time(NULL) + 3600, 0600);
    snprintf(link, sizeof(link), "%s/linked", root);
    ck_assert_int_eq(mkdir(link, 0700), 0);
    snprintf(link, sizeof(link), "%s/linked/oauth", root);
    snprintf(real, sizeof(real), "%s/real/oauth", root);
    ck_assert_int_eq(symlink(real, link), 0);
    snprintf(link, sizeof(link), "%s/linked", root);
    o = client(&loop, link);
    ck_assert_ptr_null(gw_oauth_access_token(o));
    done(&loop, o);
    rm_tree(root);
    free(root);
}
END_TEST

START_TEST(test_format_time_bounds)
{
    char buf[32] = "junk";
    ck_assert_int_eq(gw_format_time(0, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "1970-01-01T00:00:00Z");
    /* Years a four-digit RFC 3339 date cannot hold: nothing, said so. */
    ck_assert_int_eq(gw_format_time((time_t)INT64_MAX, buf, sizeof(buf)), -1);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(gw_format_time((time_t)18446744073709552LL, buf, sizeof(buf)), -1);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(gw_format_time(253402300800LL, buf, sizeof(buf)), -1); /* year 10000 */
}
END_TEST

/* A file's expires_at is bounded as a token answer's expires_in is. */
START_TEST(test_loaded_times_bounded)
{
    static const long long far[] = {INT64_MAX, 18446744073709552LL, 253402300800LL};
    for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
        char *root = tmpdir(), dir[300];
        uv_loop_t loop;
        snprintf(dir, sizeof(dir), "%s/oauth", root);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        put_grant(dir, far[i], 0600);
        struct gw_oauth *o = client(&loop, root);
        ck_assert_str_eq(gw_oauth_access_token(o), "at-file");
        json_t *g = gw_oauth_grant_json(o);
        const char *at = json_string_value(json_object_get(g, "expiresAt"));
        ck_assert_ptr_nonnull(at);
        char want[32];
        gw_format_time(time(NULL) + GW_OAUTH_EXPIRES_MAX, want, sizeof(want));
        ck_assert_int_eq(strncmp(at, want, 10), 0); /* the same day, a year on */
        uint64_t ms = gw_oauth_expires_ms(o), now = gw_now_ms();
        ck_assert(ms > now && ms - now <= (uint64_t)GW_OAUTH_EXPIRES_MAX * 1000 + 1);
        json_decref(g);
        done(&loop, o);
        rm_tree(root);
        free(root);
    }
}
END_TEST

/* A refresh whose token endpoint cannot be reached keeps the grant: -EAGAIN. */
START_TEST(test_unreachable_refresh_keeps_grant)
{
    char *root = tmpdir(), dir[300], why[200];
    uv_loop_t loop;
    snprintf(dir, sizeof(dir), "%s/oauth", root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    /* 127.0.0.1:9 (discard): nothing listens there in the test's world. */
    char name[GW_OAUTH_NAME_LEN];
    gw_oauth_store_name("grant", SERVER, name);
    put(dir, name,
        "{\"server\":\"" SERVER "\",\"issuer\":\"http://127.0.0.1:9\","
        "\"token_endpoint\":\"http://127.0.0.1:9/token\",\"client_id\":\"c1\","
        "\"token_endpoint_auth_method\":\"none\",\"access_token\":\"at-file\","
        "\"refresh_token\":\"rt-file\",\"expires_at\":1}",
        0600);
    uv_loop_init(&loop);
    struct gw_curl_uv *multi = gw_curl_uv_new(&loop);
    ck_assert_int_eq(gw_curl_uv_open(multi, why, sizeof(why)), 0);
    struct gw_oauth_settings s = {.server_url = SERVER,
                                  .redirect_uri = "http://127.0.0.1:1/oauth/callback",
                                  .client_id = "c1",
                                  .state_dir = root};
    struct gw_oauth *o = gw_oauth_new(&loop, multi, &s);
    struct outcome r = {0};
    ck_assert_int_eq(gw_oauth_refresh(o, on_outcome, &r), 0);
    for (int i = 0; i < 100000 && !r.done; i++)
        uv_run(&loop, UV_RUN_ONCE);
    ck_assert_int_eq(r.rc, -EAGAIN);
    ck_assert_msg(strstr(r.text, "the grant is kept"), "%s", r.text);
    ck_assert_str_eq(gw_oauth_access_token(o), "at-file");
    json_t *g = gw_oauth_grant_json(o);
    ck_assert(json_is_true(json_object_get(g, "refreshable")));
    json_decref(g);
    int closed = 0;
    gw_oauth_free(o);
    gw_curl_uv_close(multi, multi_closed, &closed);
    for (int i = 0; i < 100000 && !closed; i++)
        uv_run(&loop, UV_RUN_ONCE);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    rm_tree(root);
    free(root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("oauth_grant");
    TCase *tc = tcase_create("files");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_store_read_checks);
    tcase_add_test(tc, test_load_refuses_what_others_wrote);
    tcase_add_test(tc, test_format_time_bounds);
    tcase_add_test(tc, test_loaded_times_bounded);
    tcase_add_test(tc, test_unreachable_refresh_keeps_grant);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
