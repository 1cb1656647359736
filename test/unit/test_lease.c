/* The lease table against a fake slot source: no instance, no process. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw/lease.h"
#include "gw/util.h"

#define FAKE_SLOTS 64

/* The fake's slots: the table treats them as opaque. */
struct slot {
    struct lease *lease;
    bool busy;
    bool retired;
    int id;
};

struct fake {
    struct slot slots[FAKE_SLOTS];
    int nslots; /* how many of them the fake lends */
    int taken, fresh_asked, retired, acquired, released, lost, ended;
    char last_why[128];
};

static int fake_take(void *ctx, struct lease *l, bool fresh)
{
    struct fake *f = ctx;

    if (fresh)
        f->fresh_asked++;
    for (int i = 0; i < f->nslots; i++) {
        struct slot *sl = &f->slots[i];
        if (sl->lease == NULL && !sl->retired) {
            sl->lease = l;
            sl->id = i;
            l->slot = sl;
            f->taken++;
            return 0;
        }
    }
    return -42; /* the source's own code passes through */
}

static void fake_unbind(void *ctx, struct lease *l, bool retire)
{
    struct fake *f = ctx;

    l->slot->lease = NULL;
    if (retire) {
        l->slot->retired = true;
        f->retired++;
    }
    l->slot = NULL;
}

static bool fake_busy(void *ctx, const struct lease *l)
{
    return l->slot->busy;
}

static void fake_event(void *ctx, struct lease *l, enum gw_lease_event ev, const char *why)
{
    struct fake *f = ctx;

    ck_assert_ptr_nonnull(l->slot); /* still bound while the event is told */
    switch (ev) {
    case GW_LEASE_ACQUIRED:
        ck_assert_ptr_null(why);
        f->acquired++;
        return;
    case GW_LEASE_RELEASED:
        f->released++;
        break;
    case GW_LEASE_LOST:
        f->lost++;
        break;
    case GW_LEASE_ENDED:
        f->ended++;
        break;
    }
    snprintf(f->last_why, sizeof f->last_why, "%s", why);
}

static void fake_describe(void *ctx, const struct lease *l, json_t *o)
{
    json_object_set_new(o, "instance", json_integer(l->slot->id));
}

static const struct gw_lease_source fake_source = {
    fake_take, fake_unbind, fake_busy, fake_event, fake_describe,
};

static struct gw_leases table(struct fake *f, int nslots)
{
    struct gw_leases t;

    memset(f, 0, sizeof *f);
    f->nslots = nslots;
    gw_leases_init(&t, &fake_source, f, NULL);
    return t;
}

START_TEST(dialog_ids)
{
    char root[GW_DIALOG_PART_MAX + 1], self[GW_DIALOG_PART_MAX + 1], canon[GW_DIALOG_MAX + 1];
    char long_part[GW_DIALOG_PART_MAX + 2];

    ck_assert_int_eq(gw_dialog_parse("chat-1", root, self, canon), 0);
    ck_assert_str_eq(root, "chat-1");
    ck_assert_str_eq(self, "chat-1");
    ck_assert_str_eq(canon, "chat-1");
    ck_assert_int_eq(gw_dialog_parse("a/b.c_d", root, self, canon), 0);
    ck_assert_str_eq(canon, "a/b.c_d");
    ck_assert_int_eq(gw_dialog_parse("a/a", root, self, canon), 0);
    ck_assert_str_eq(canon, "a"); /* self equal to root is the root */
    memset(long_part, 'x', sizeof long_part - 1);
    long_part[sizeof long_part - 1] = '\0';
    strcpy(root, "unchanged");
    const char *bad[] = {"", "/", "a/", "/b", ".", "..", "a/..", "a b", "a/b/c", "é", long_part};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(gw_dialog_parse(bad[i], root, self, canon) == UV_EINVAL, "%s", bad[i]);
    long_part[GW_DIALOG_PART_MAX] = '\0'; /* 64 characters: the longest part */
    ck_assert_int_eq(gw_dialog_parse(long_part, root, self, canon), 0);
    /* An /mcp session's own dialog: outside the REST syntax, known by shape. */
    ck_assert(gw_dialog_is_session("mcp-session:0123456789abcdef"));
    ck_assert_int_eq(gw_dialog_parse("mcp-session:0123456789abcdef", root, self, canon), UV_EINVAL);
    const char *not_session[] = {"mcp-session:0123456789abcde", "mcp-session:0123456789abcdef0",
                                 "mcp-session:0123456789ABCDEF", "mcp-session", "chat-1"};
    for (size_t i = 0; i < sizeof not_session / sizeof not_session[0]; i++)
        ck_assert_msg(!gw_dialog_is_session(not_session[i]), "%s", not_session[i]);
    /* A client's default dialog: one dialog part after the prefix. */
    ck_assert(gw_dialog_is_client("mcp-client:claude-code"));
    ck_assert(gw_dialog_is_client("mcp-client:app_b-0123abcd"));
    ck_assert_int_eq(gw_dialog_parse("mcp-client:claude-code", root, self, canon), UV_EINVAL);
    char long_client[sizeof GW_DIALOG_CLIENT_PREFIX + GW_DIALOG_PART_MAX + 1];
    snprintf(long_client, sizeof long_client, "%s%s", GW_DIALOG_CLIENT_PREFIX, long_part);
    ck_assert(gw_dialog_is_client(long_client)); /* 64 characters */
    strcat(long_client, "x");
    const char *not_client[] = {"mcp-client:",     "mcp-client:a b", "mcp-client:a/b",
                                "mcp-client:..",   "mcp-client:é",   "mcp-default",
                                "mcp-clientapp-a", long_client};
    for (size_t i = 0; i < sizeof not_client / sizeof not_client[0]; i++)
        ck_assert_msg(!gw_dialog_is_client(not_client[i]), "%s", not_client[i]);
}
END_TEST

/* client@dialog, in place or not, cut at GW_DIALOG_MAX as snprintf cut it;
 * the default client and none leave the dialog as it is. */
START_TEST(dialog_scoping)
{
    char out[GW_DIALOG_MAX + 1], in[GW_DIALOG_MAX + 1], want[400], longc[300];

    gw_dialog_scope("c49", "d1", out);
    ck_assert_str_eq(out, "c49@d1");
    strcpy(in, "chat1");
    gw_dialog_scope("alice", in, in);
    ck_assert_str_eq(in, "alice@chat1");
    gw_dialog_scope("default", "d1", out);
    ck_assert_str_eq(out, "d1");
    gw_dialog_scope(NULL, "d1", out);
    ck_assert_str_eq(out, "d1");
    gw_dialog_scope("", "d1", out);
    ck_assert_str_eq(out, "d1");
    gw_dialog_scope("defaults", "d1", out);
    ck_assert_str_eq(out, "defaults@d1");
    memset(in, 'x', GW_DIALOG_MAX);
    in[GW_DIALOG_MAX] = '\0';
    snprintf(want, sizeof want, "c1@%s", in);
    want[GW_DIALOG_MAX] = '\0';
    gw_dialog_scope("c1", in, in);
    ck_assert_str_eq(in, want);
    memset(longc, 'c', GW_DIALOG_MAX + 5);
    longc[GW_DIALOG_MAX + 5] = '\0';
    snprintf(want, sizeof want, "%s@d1", longc);
    want[GW_DIALOG_MAX] = '\0';
    gw_dialog_scope(longc, "d1", out);
    ck_assert_str_eq(out, want);
    memset(longc, 'c', GW_DIALOG_MAX - 1);
    longc[GW_DIALOG_MAX - 1] = '\0';
    snprintf(want, sizeof want, "%s@d1", longc);
    want[GW_DIALOG_MAX] = '\0';
    gw_dialog_scope(longc, "d1", out);
    ck_assert_str_eq(out, want);
}
END_TEST

START_TEST(acquire_find_release)
{
    struct fake f;
    struct gw_leases t = table(&f, 4);
    struct lease *a = NULL, *b = NULL, *out = (struct lease *)&f;

    ck_assert_ptr_null(gw_lease_find(&t, "d1"));
    ck_assert_int_eq(gw_lease_acquire(&t, "d1", false, &a), 0);
    ck_assert_int_eq(gw_lease_acquire(&t, "d2", true, &b), 0);
    ck_assert_int_eq(f.fresh_asked, 1);
    ck_assert_ptr_eq(gw_lease_find(&t, "d1"), a);
    ck_assert_ptr_eq(gw_lease_find(&t, "d2"), b);
    ck_assert_ptr_ne(a->slot, b->slot);
    ck_assert_int_eq(f.acquired, 2);
    ck_assert(!a->restarted);

    /* The source is out of slots: its code, and *out untouched. */
    ck_assert_int_eq(gw_lease_acquire(&t, "d3", false, &out), 0);
    ck_assert_int_eq(gw_lease_acquire(&t, "d4", false, &out), 0);
    ck_assert_int_eq(gw_lease_acquire(&t, "d5", false, &out), -42);
    ck_assert_ptr_eq(out, gw_lease_find(&t, "d4"));
    ck_assert_ptr_null(gw_lease_find(&t, "d5"));

    gw_lease_release(a, "released by the dialog");
    ck_assert_int_eq(f.released, 1);
    ck_assert_int_eq(f.retired, 1); /* a released slot is retired */
    ck_assert_str_eq(f.last_why, "released by the dialog");
    ck_assert_ptr_null(gw_lease_find(&t, "d1"));
    ck_assert_ptr_eq(gw_lease_find(&t, "d2"), b);
    gw_leases_end_all(&t, "server removed");
    ck_assert_int_eq(f.ended, 3);
    ck_assert_int_eq(f.retired, 1); /* ended slots go with their server */
    ck_assert_ptr_null(t.head);
    gw_leases_free(&t);
}
END_TEST

START_TEST(many_dialogs_index)
{
    struct fake f;
    struct gw_leases t = table(&f, FAKE_SLOTS);
    char name[32];
    struct lease *l;

    /* The index grows from 8 buckets to 64 and every lease stays found;
     * then they go, in another order than they came. */
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < FAKE_SLOTS; i++) {
            snprintf(name, sizeof name, "r%d-d%d", round, i);
            ck_assert_int_eq(gw_lease_acquire(&t, name, false, &l), 0);
        }
        ck_assert_uint_eq(t.buckets, 64);
        for (int i = FAKE_SLOTS - 1; i >= 0; i -= 2) {
            snprintf(name, sizeof name, "r%d-d%d", round, i);
            gw_lease_release(gw_lease_find(&t, name), "done");
        }
        for (int i = 0; i < FAKE_SLOTS; i++) {
            snprintf(name, sizeof name, "r%d-d%d", round, i);
            l = gw_lease_find(&t, name);
            ck_assert(i % 2 == 0 ? l != NULL && strcmp(l->dialog, name) == 0 : l == NULL);
        }
        gw_leases_end_all(&t, "done");
        ck_assert_uint_eq(t.n, 0);
        for (int i = 0; i < FAKE_SLOTS; i++)
            f.slots[i] = (struct slot){0};
    }
    gw_leases_free(&t);
}
END_TEST

START_TEST(lost_dialogs_restart)
{
    struct fake f;
    struct gw_leases t = table(&f, 4), replaced;
    struct lease *l;
    char name[32];

    ck_assert_int_eq(gw_lease_acquire(&t, "d1", false, &l), 0);
    gw_lease_lost(l, "the instance died");
    ck_assert_int_eq(f.lost, 1);
    ck_assert_int_eq(f.retired, 0); /* the supervisor retires a dead slot itself */
    ck_assert_int_eq(gw_lease_acquire(&t, "d1", false, &l), 0);
    ck_assert(l->restarted); /* said once ... */
    gw_lease_release(l, "done");
    f.slots[0].retired = f.slots[1].retired = false;
    ck_assert_int_eq(gw_lease_acquire(&t, "d1", false, &l), 0);
    ck_assert(!l->restarted); /* ... not twice */

    /* A replaced server's dialogs, leased or remembered, start afresh. */
    gw_lease_lost(l, "died again");
    ck_assert_int_eq(gw_lease_acquire(&t, "d2", false, &l), 0);
    gw_leases_init(&replaced, &fake_source, &f, NULL);
    gw_leases_inherit(&replaced, &t);
    gw_leases_end_all(&t, "replaced");
    for (int i = 0; i < f.nslots; i++)
        f.slots[i] = (struct slot){0};
    ck_assert_int_eq(gw_lease_acquire(&replaced, "d1", false, &l), 0);
    ck_assert(l->restarted);
    ck_assert_int_eq(gw_lease_acquire(&replaced, "d2", false, &l), 0);
    ck_assert(l->restarted);
    ck_assert_int_eq(gw_lease_acquire(&replaced, "d3", false, &l), 0);
    ck_assert(!l->restarted);
    gw_leases_end_all(&replaced, "done");

    /* The ring is bounded: the oldest dialogs are forgotten first. */
    for (int i = 0; i < GW_LEASE_RESTARTED_MAX + 1; i++) {
        for (int k = 0; k < f.nslots; k++)
            f.slots[k] = (struct slot){0};
        snprintf(name, sizeof name, "x%d", i);
        ck_assert_int_eq(gw_lease_acquire(&replaced, name, false, &l), 0);
        gw_lease_lost(l, "gone");
    }
    ck_assert_uint_eq(replaced.nrestarted, GW_LEASE_RESTARTED_MAX);
    for (int k = 0; k < f.nslots; k++)
        f.slots[k] = (struct slot){0};
    ck_assert_int_eq(gw_lease_acquire(&replaced, "x0", false, &l), 0);
    ck_assert(!l->restarted);
    ck_assert_int_eq(gw_lease_acquire(&replaced, "x1", false, &l), 0);
    ck_assert(l->restarted);
    gw_leases_end_all(&replaced, "done");
    gw_leases_free(&replaced);
    gw_leases_free(&t);
}
END_TEST

START_TEST(idle_sweep)
{
    struct fake f;
    struct gw_leases t = table(&f, 4);
    struct lease *idle, *busy, *recent;

    gw_lease_acquire(&t, "idle", false, &idle);
    gw_lease_acquire(&t, "busy", false, &busy);
    gw_lease_acquire(&t, "recent", false, &recent);
    idle->last_used_ms = busy->last_used_ms = 1000;
    recent->last_used_ms = 9500;
    busy->slot->busy = true;
    gw_leases_sweep(&t, 10000, 0); /* no idle timeout: all kept */
    ck_assert_uint_eq(t.n, 3);
    gw_leases_sweep(&t, 10000, 1000);
    ck_assert_uint_eq(t.n, 2);
    ck_assert_ptr_null(gw_lease_find(&t, "idle"));
    ck_assert_str_eq(f.last_why, "idle past gateway.lease_idle_timeout");
    ck_assert_ptr_nonnull(gw_lease_find(&t, "busy"));
    ck_assert_ptr_nonnull(gw_lease_find(&t, "recent"));
    gw_leases_end_all(&t, "done");
    gw_leases_free(&t);
}
END_TEST

START_TEST(reply_info_and_json)
{
    struct fake f;
    struct gw_leases t = table(&f, 4);
    struct lease *l;
    json_t *first, *second, *j;

    gw_lease_acquire(&t, "d1", false, &l);
    l->restarted = true;
    first = gw_lease_reply_info(l, "mem", 7);
    second = gw_lease_reply_info(l, "mem", 7);
    ck_assert_str_eq(json_string_value(json_object_get(first, "serverId")), "mem");
    ck_assert_int_eq(json_integer_value(json_object_get(first, "instance")), 7);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(first, "reminder")),
                                 "mcp_release({\"serverId\":\"mem\"})"));
    ck_assert(json_is_true(json_object_get(first, "restarted")));
    /* The reminder and the restart are told once. */
    ck_assert_ptr_null(json_object_get(second, "reminder"));
    ck_assert_ptr_null(json_object_get(second, "restarted"));
    j = gw_lease_json(l);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "instance")), 0);
    ck_assert_int_eq((int)strlen(json_string_value(json_object_get(j, "since"))), 20);
    ck_assert_ptr_nonnull(json_object_get(j, "lastUsed"));
    json_decref(first);
    json_decref(second);
    json_decref(j);
    gw_leases_end_all(&t, "done");
    gw_leases_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lease");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, dialog_ids);
    tcase_add_test(tc, dialog_scoping);
    tcase_add_test(tc, acquire_find_release);
    tcase_add_test(tc, many_dialogs_index);
    tcase_add_test(tc, lost_dialogs_restart);
    tcase_add_test(tc, idle_sweep);
    tcase_add_test(tc, reply_info_and_json);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
