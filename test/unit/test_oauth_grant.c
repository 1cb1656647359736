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

#include "gw/oauth.h"

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

int main(void)
{
    Suite *s = suite_create("oauth_grant");
    TCase *tc = tcase_create("files");
    tcase_add_test(tc, test_store_read_checks);
    tcase_add_test(tc, test_load_refuses_what_others_wrote);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
