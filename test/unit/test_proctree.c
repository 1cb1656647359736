/* The limits' side of proctree on a tree of plain files standing for the
 * daemon's cgroup (MCPGW_CGROUP=<dir>): which controllers it enables and
 * from where, what it writes into an instance's cgroup, what it reads of
 * memory.events. A real cgroup v2 with controllers is exercised by
 * test/integration/sandbox.test.mjs where the host has one. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw/proctree.h"

static char base[64];

static void put(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", base, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static const char *get(const char *name)
{
    static char buf[256];
    char p[256];
    snprintf(p, sizeof p, "%s/%s", base, name);
    FILE *f = fopen(p, "r");
    buf[0] = '\0';
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

static void sub(const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", base, name);
    ck_assert_int_eq(mkdir(p, 0755), 0);
}

/* A cgroup as cgroupfs shows it to the daemon, with its leaf made ahead
 * (a plain directory has no cgroup.procs of its own). */
static void fake_cgroup(const char *controllers)
{
    strcpy(base, "/tmp/gwcgXXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(base));
    put("cgroup.controllers", controllers);
    put("cgroup.subtree_control", "");
    put("cgroup.procs", "");
    sub("mcpgw-daemon");
    put("mcpgw-daemon/cgroup.procs", "");
    setenv("MCPGW_CGROUP", base, 1);
    gw_proctree_reset();
}

static void teardown(void)
{
    char cmd[128];
    if (base[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", base);
        ck_assert_int_eq(system(cmd), 0);
    }
    base[0] = '\0';
}

START_TEST(leaves_for_a_leaf_and_enables_what_is_offered)
{
    fake_cgroup("cpuset cpu io memory hugetlb pids\n");
    ck_assert(gw_proctree_cgroups());
    ck_assert_str_eq(get("cgroup.subtree_control"), "+memory +pids +cpu");
    char pid[24];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    ck_assert_str_eq(get("mcpgw-daemon/cgroup.procs"), pid);
    char why[512] = "";
    struct gw_proctree_limits l = {512u << 20, 64, 1500};
    ck_assert_int_eq(gw_proctree_limits_check(&l, why, sizeof why), 0);
}
END_TEST

START_TEST(a_controller_not_offered_is_named)
{
    fake_cgroup("cpu io\n");
    ck_assert(gw_proctree_cgroups());
    ck_assert_str_eq(get("cgroup.subtree_control"), "+cpu");
    char why[512] = "";
    struct gw_proctree_limits cpu = {.cpu_milli = 500}, all = {1 << 20, 8, 500};
    ck_assert_int_eq(gw_proctree_limits_check(&cpu, why, sizeof why), 0);
    ck_assert_int_eq(gw_proctree_limits_check(&all, why, sizeof why), -ENOTSUP);
    ck_assert_msg(strncmp(why, "memory, pids: ", 14) == 0, "%s", why);
    ck_assert_ptr_nonnull(strstr(why, "offers only cpu io"));
}
END_TEST

/* The case of a host whose cgroup v1 holds the controllers: the daemon
 * stays where it is, and says why no limit holds. */
START_TEST(no_controller_no_move_and_why)
{
    fake_cgroup("hugetlb\n");
    ck_assert(gw_proctree_cgroups());
    ck_assert_str_eq(get("cgroup.subtree_control"), "");
    ck_assert_str_eq(get("mcpgw-daemon/cgroup.procs"), "");
    char why[512] = "";
    struct gw_proctree_limits none = {0}, mem = {.memory = 1 << 20};
    ck_assert_int_eq(gw_proctree_limits_check(&none, why, sizeof why), 0);
    ck_assert_int_eq(gw_proctree_limits_check(&mem, why, sizeof why), -ENOTSUP);
    ck_assert_msg(strstr(why, "memory: the daemon's cgroup v2") == why, "%s", why);
    ck_assert_ptr_nonnull(strstr(why, "offers no memory, pids or cpu controller"));
}
END_TEST

START_TEST(cgroups_off_enforce_no_limit)
{
    base[0] = '\0';
    setenv("MCPGW_CGROUP", "off", 1);
    gw_proctree_reset();
    char why[512] = "";
    struct gw_proctree_limits l = {.pids = 4};
    ck_assert_int_eq(gw_proctree_limits_check(&l, why, sizeof why), -ENOTSUP);
    ck_assert_str_eq(why, "pids: cgroups are off (MCPGW_CGROUP=off)");
}
END_TEST

/* A dead daemon's instance cgroup goes; the leaf, whose name holds no pid,
 * stays. */
START_TEST(stale_cleanup_keeps_the_leaf)
{
    fake_cgroup("memory pids cpu\n");
    sub("mcpgw-2147483646-1");
    gw_proctree_cgroups();
    struct stat st;
    char p[256];
    snprintf(p, sizeof p, "%s/mcpgw-2147483646-1", base);
    ck_assert_int_eq(stat(p, &st), -1);
    snprintf(p, sizeof p, "%s/mcpgw-daemon", base);
    ck_assert_int_eq(stat(p, &st), 0);
}
END_TEST

START_TEST(limits_written_in_cgroup_terms)
{
    fake_cgroup("memory pids cpu\n");
    sub("i");
    const char *files[] = {"memory.max", "memory.swap.max", "memory.oom.group", "pids.max",
                           "cpu.max"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char n[64];
        snprintf(n, sizeof n, "i/%s", files[i]);
        put(n, "");
    }
    char dir[128];
    snprintf(dir, sizeof dir, "%s/i", base);
    struct gw_proctree_limits l = {512u << 20, 64, 1500};
    ck_assert_int_eq(gw_proctree_write_limits(dir, &l, 5), 0);
    ck_assert_str_eq(get("i/memory.max"), "536870912");
    ck_assert_str_eq(get("i/memory.swap.max"), "0");
    ck_assert_str_eq(get("i/memory.oom.group"), "1");
    ck_assert_str_eq(get("i/pids.max"), "69");
    ck_assert_str_eq(get("i/cpu.max"), "150000 100000");
    /* Under cpu.max's floor of 1 ms per 100 ms period. */
    put("i/cpu.max", "");
    struct gw_proctree_limits tiny = {.cpu_milli = 5};
    ck_assert_int_eq(gw_proctree_write_limits(dir, &tiny, 0), 0);
    ck_assert_str_eq(get("i/cpu.max"), "1000 100000");
    /* A limit whose controller is not enabled has no file. */
    struct gw_proctree_limits missing = {.pids = 3};
    snprintf(dir, sizeof dir, "%s/mcpgw-daemon", base);
    ck_assert_int_eq(gw_proctree_write_limits(dir, &missing, 0), -ENOENT);
}
END_TEST

START_TEST(memory_events_tell_the_kill)
{
    fake_cgroup("memory\n");
    ck_assert_uint_eq(gw_proctree_oom_kills(base), 0);
    put("memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 1\n");
    ck_assert_uint_eq(gw_proctree_oom_kills(base), 2);
    /* An instance's tree reads its own cgroup, a sibling of the leaf. */
    struct gw_proctree_limits l = {.memory = 1 << 20};
    struct gw_proctree *t = gw_proctree_new(&l);
    ck_assert(!gw_proctree_oom_killed(t));
    char name[64];
    snprintf(name, sizeof name, "mcpgw-%d-1/memory.events", (int)getpid());
    put(name, "oom 1\noom_kill 1\n");
    ck_assert(gw_proctree_oom_killed(t));
    char p[256];
    snprintf(p, sizeof p, "%s/%s", base, name);
    unlink(p);
    gw_proctree_free(t);
}
END_TEST

static Suite *proctree_suite(void)
{
    Suite *s = suite_create("proctree");
    TCase *tc = tcase_create("limits");
    const TTest *tests[] = {leaves_for_a_leaf_and_enables_what_is_offered,
                            a_controller_not_offered_is_named,
                            no_controller_no_move_and_why,
                            cgroups_off_enforce_no_limit,
                            stale_cleanup_keeps_the_leaf,
                            limits_written_in_cgroup_terms,
                            memory_events_tell_the_kill};
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 10);
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(proctree_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
