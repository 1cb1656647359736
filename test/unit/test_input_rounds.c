/* Input rounds: the requestState codec (tampering, expiry, binding) and the
 * bookkeeping of rounds, with the test standing in for dispatch: it plays
 * the upstream's server requests and the call's outcome through the hooks
 * the module gave it, and records what the module answers upstream. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "gw/input_rounds.h"
#include "gw/mcp_client.h"
#include "gw/util.h"

static const unsigned char key[GW_ROUNDS_KEY_LEN] = "0123456789abcdef0123456789abcdef";
static const unsigned char id[GW_ROUNDS_ID_LEN] = "round-id-16bytes";

static struct gw_round_bind bind_of(const char *dialog, const char *name, json_t *args)
{
    return (struct gw_round_bind){dialog, "tools/call", name, args, NULL};
}

START_TEST(state_round_trips)
{
    json_t *args = json_pack("{s:i, s:s}", "a", 1, "b", "x");
    json_t *same = json_pack("{s:s, s:i}", "b", "x", "a", 1); /* other key order */
    struct gw_round_bind b = bind_of("d1", "echo", args), b2 = bind_of("d1", "echo", same);
    char state[GW_ROUNDS_STATE_LEN + 1];
    unsigned char got[GW_ROUNDS_ID_LEN];

    gw_rounds_state_encode(key, id, 1000, &b, state);
    ck_assert_uint_eq(strlen(state), GW_ROUNDS_STATE_LEN);
    ck_assert(strspn(state, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
              GW_ROUNDS_STATE_LEN);
    ck_assert_int_eq(gw_rounds_state_decode(key, state, &b, 999, got), 0);
    ck_assert(memcmp(got, id, sizeof id) == 0);
    ck_assert_int_eq(gw_rounds_state_decode(key, state, &b2, 999, got), 0);
    json_decref(args);
    json_decref(same);
}
END_TEST

START_TEST(state_tampered_anywhere_is_refused)
{
    struct gw_round_bind b = bind_of("d1", "echo", NULL);
    char state[GW_ROUNDS_STATE_LEN + 1], t[GW_ROUNDS_STATE_LEN + 16];
    unsigned char got[GW_ROUNDS_ID_LEN];

    gw_rounds_state_encode(key, id, 1000, &b, state);
    for (size_t i = 0; i < GW_ROUNDS_STATE_LEN; i++) {
        memcpy(t, state, sizeof state);
        t[i] = t[i] == 'A' ? 'B' : 'A';
        ck_assert_int_eq(gw_rounds_state_decode(key, t, &b, 0, got), GW_ROUNDS_E_STATE);
    }
    snprintf(t, sizeof t, "%s-TAMPERED", state);
    ck_assert_int_eq(gw_rounds_state_decode(key, t, &b, 0, got), GW_ROUNDS_E_STATE);
    ck_assert_int_eq(gw_rounds_state_decode(key, "", &b, 0, got), GW_ROUNDS_E_STATE);
    ck_assert_int_eq(gw_rounds_state_decode(key, NULL, &b, 0, got), GW_ROUNDS_E_STATE);
}
END_TEST

/* The same bytes in the standard alphabet: the decoder underneath reads
 * both, so only the state's own check refuses them (a changed character
 * would fail the MAC anyway and prove nothing). */
START_TEST(state_in_standard_base64_is_refused)
{
    struct gw_round_bind b = bind_of("d1", "echo", NULL);
    char state[GW_ROUNDS_STATE_LEN + 1];
    unsigned char got[GW_ROUNDS_ID_LEN];
    uint64_t expiry = 1000;

    /* a state with a '-' or '_' in it, the characters the alphabets differ in */
    do
        gw_rounds_state_encode(key, id, ++expiry, &b, state);
    while (strcspn(state, "-_") == GW_ROUNDS_STATE_LEN && expiry < 2000);
    ck_assert_uint_lt(strcspn(state, "-_"), GW_ROUNDS_STATE_LEN);
    ck_assert_int_eq(gw_rounds_state_decode(key, state, &b, 0, got), 0);
    for (char *p = state; *p != '\0'; p++)
        *p = *p == '-' ? '+' : *p == '_' ? '/' : *p;
    ck_assert_int_eq(gw_rounds_state_decode(key, state, &b, 0, got), GW_ROUNDS_E_STATE);
}
END_TEST

START_TEST(state_binds_dialog_call_and_arguments)
{
    json_t *args = json_pack("{s:i}", "a", 1), *other = json_pack("{s:i}", "a", 2);
    struct gw_round_bind b = bind_of("d1", "echo", args);
    struct gw_round_bind wrong[] = {
        bind_of("d2", "echo", args),  bind_of(NULL, "echo", args),
        bind_of("d1", "echo2", args), bind_of("d1", "echo", other),
        bind_of("d1", "echo", NULL),  {"d1", "prompts/get", "echo", args, NULL}};
    char state[GW_ROUNDS_STATE_LEN + 1];
    unsigned char got[GW_ROUNDS_ID_LEN], key2[GW_ROUNDS_KEY_LEN];

    gw_rounds_state_encode(key, id, 1000, &b, state);
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++)
        ck_assert_int_eq(gw_rounds_state_decode(key, state, &wrong[i], 0, got), GW_ROUNDS_E_STATE);
    memcpy(key2, key, sizeof key2);
    key2[0] ^= 1; /* another daemon's, or a restarted one's */
    ck_assert_int_eq(gw_rounds_state_decode(key2, state, &b, 0, got), GW_ROUNDS_E_STATE);
    json_decref(args);
    json_decref(other);
}
END_TEST

START_TEST(state_expires)
{
    struct gw_round_bind b = bind_of("d1", "echo", NULL);
    char state[GW_ROUNDS_STATE_LEN + 1];
    unsigned char got[GW_ROUNDS_ID_LEN];

    gw_rounds_state_encode(key, id, 1000, &b, state);
    ck_assert_int_eq(gw_rounds_state_decode(key, state, &b, 1000, got), GW_ROUNDS_E_EXPIRED);
    ck_assert_int_eq(gw_rounds_state_decode(key, state, &b, 5000, got), GW_ROUNDS_E_EXPIRED);
    /* Expiry is told only to a state that checked: a forged one is forged. */
    b.dialog = "d2";
    ck_assert_int_eq(gw_rounds_state_decode(key, state, &b, 5000, got), GW_ROUNDS_E_STATE);
}
END_TEST

/* ---- the test as dispatch ---- */

#define MAX_CALLS (GW_ROUNDS_MAX + 8)

struct fake_call {
    gw_call_cb cb;
    void *data;
    const struct gw_call_hooks *hooks;
    void *hooks_data;
    bool done;
    bool parked;
};

static struct fake_call calls[MAX_CALLS];
static size_t ncalls;
static struct gw_server_request *answered[32];
static json_t *answers[32];
static size_t nanswered;
static size_t ncancelled;

static int fake_call(struct gw_servers *s, const struct gw_call_request *r, gw_call_cb cb,
                     void *data, struct gw_call **out)
{
    struct fake_call *c = &calls[ncalls++];

    c->cb = cb;
    c->data = data;
    c->hooks = r->hooks;
    c->hooks_data = r->hooks_data;
    *out = (struct gw_call *)c;
    return 0;
}

static void finish(struct fake_call *c, int code, json_t *result)
{
    struct gw_call_outcome o = {.code = code, .result = result, .server = "srv", .tool = "echo"};

    c->done = true;
    c->cb(c->data, &o);
}

static void fake_answer(struct gw_server_request *sr, json_t *result, json_t *error)
{
    answered[nanswered] = sr;
    answers[nanswered++] = json_incref(result);
}

static void fake_cancel(struct gw_call *call, const char *reason)
{
    ncancelled++;
    finish((struct fake_call *)call, -5104, NULL);
}

/* Calls whose round is parked now: dispatch frees their slots. */
static int nparked;

static void fake_park(struct gw_call *call, bool parked)
{
    struct fake_call *c = (struct fake_call *)call;

    ck_assert(c->parked != parked);
    c->parked = parked;
    nparked += parked ? 1 : -1;
}

static const struct gw_rounds_upstream fake_up = {fake_call, NULL, fake_answer, fake_cancel,
                                                  fake_park};

/* What the receiver got: its last answer. */
struct got {
    int answers;
    int outcome_code;
    bool had_outcome;
    json_t *requests;
    char state[GW_ROUNDS_STATE_LEN + 1];
};

static void on_answer(void *data, const struct gw_rounds_answer *a)
{
    struct got *g = data;

    g->answers++;
    json_decref(g->requests);
    g->requests = NULL;
    g->had_outcome = a->outcome != NULL;
    if (a->outcome != NULL) {
        g->outcome_code = a->outcome->code;
    } else {
        g->requests = json_incref(a->input_requests);
        gw_strlcpy(g->state, a->request_state, sizeof g->state);
    }
}

static uv_loop_t loop;
static struct gw_rounds *rr;

static void setup(void)
{
    ncalls = nanswered = ncancelled = 0;
    nparked = 0;
    memset(calls, 0, sizeof calls);
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(gw_rounds_new(&loop, 60000, &fake_up, &rr), 0);
}

static void teardown(void)
{
    gw_rounds_close(rr);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    for (size_t i = 0; i < nanswered; i++)
        json_decref(answers[i]);
}

/* Runs the loop until the receiver has `n` answers (bounded: 5 s). Never
 * blocks in the loop: a parked round's expiry timer would hold it. */
static void run_until(struct got *g, int n)
{
    for (int i = 0; i < 5000 && g->answers < n; i++) {
        uv_run(&loop, UV_RUN_NOWAIT);
        if (g->answers < n)
            usleep(1000);
    }
    ck_assert_int_eq(g->answers, n);
}

static struct fake_call *start(const char *dialog, json_t *args, struct got *g)
{
    struct gw_call_request r = {.tool = "echo", .dialog = dialog, .arguments = args};
    struct gw_rounds_receiver rcv = {.on_answer = on_answer, .data = g};

    ck_assert_int_eq(gw_rounds_call(rr, NULL, &r, &rcv, NULL), 0);
    return &calls[ncalls - 1];
}

static int ask(struct fake_call *c, uintptr_t sr, const char *method)
{
    json_t *params = json_pack("{s:s}", "message", "name?");
    int rc = c->hooks->on_request(c->hooks_data, (struct gw_server_request *)sr, method, params);

    json_decref(params);
    return rc;
}

static int resume(const char *dialog, json_t *args, const char *state, json_t *responses,
                  struct got *g, const char **why)
{
    struct gw_round_bind b = {dialog, "tools/call", "echo", args, NULL};
    struct gw_rounds_receiver rcv = {.on_answer = on_answer, .data = g};

    return gw_rounds_resume(rr, state, responses, &b, &rcv, NULL, why);
}

static json_t *accept_name(const char *name)
{
    return json_pack("{s:s, s:{s:s}}", "action", "accept", "content", "name", name);
}

START_TEST(two_requests_one_round_then_the_missing_one)
{
    json_t *args = json_object();
    struct got g = {0}, g2 = {0}, g3 = {0};
    struct fake_call *c = start("d1", args, &g);
    json_t *resp;
    const char *why;

    ck_assert_int_eq(ask(c, 1, "elicitation/create"), 0);
    ck_assert_int_eq(ask(c, 2, "sampling/createMessage"), 0);
    run_until(&g, 1);
    ck_assert(!g.had_outcome);
    ck_assert(c->parked);
    ck_assert_uint_eq(json_object_size(g.requests), 2);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(g.requests, "r1"), "method")),
        "elicitation/create");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(g.requests, "r1"), "params"), "message")),
                     "name?");
    /* Only r1 answered (and a key never asked, ignored): r2 is asked again. */
    resp = json_pack("{s:o, s:{}}", "r1", accept_name("Ann"), "nokey");
    ck_assert_int_eq(resume("d1", args, g.state, resp, &g2, &why), 0);
    ck_assert_int_eq(g2.answers, 0); /* never inside resume */
    ck_assert(!c->parked);           /* taken up before its answers go upstream */
    ck_assert_uint_eq(nanswered, 1);
    ck_assert_ptr_eq(answered[0], (void *)1);
    ck_assert_str_eq(json_string_value(json_object_get(answers[0], "action")), "accept");
    run_until(&g2, 1);
    ck_assert(c->parked);
    ck_assert_uint_eq(json_object_size(g2.requests), 1);
    ck_assert_ptr_nonnull(json_object_get(g2.requests, "r2"));
    json_decref(resp);
    /* The first state was good for one retry. */
    ck_assert_int_eq(resume("d1", args, g.state, NULL, &g3, &why), GW_ROUNDS_E_GONE);
    resp = json_pack("{s:{s:s, s:{s:s, s:s}, s:s}}", "r2", "role", "assistant", "content", "type",
                     "text", "text", "hi", "model", "m");
    ck_assert_int_eq(resume("d1", args, g2.state, resp, &g3, &why), 0);
    ck_assert_uint_eq(nanswered, 2);
    finish(c, 0, NULL);
    ck_assert_int_eq(g3.answers, 1);
    ck_assert(g3.had_outcome);
    ck_assert_int_eq(g3.outcome_code, 0);
    json_decref(resp);
    json_decref(args);
    json_decref(g.requests);
    json_decref(g2.requests);
}
END_TEST

/* A 2026-07-28 upstream names its requests (mcp_client.h): the caller
 * sees its keys; responses given with the call answer the ones they name at
 * once, checked like a retry's, and the rest wait for a round. */
static int ask_named(struct fake_call *c, uintptr_t sr, const char *method, const char *name)
{
    json_t *params =
        json_pack("{s:s, s:{s:s}}", "message", "name?", "_meta", GW_MCP_META_INPUT_KEY, name);
    int rc = c->hooks->on_request(c->hooks_data, (struct gw_server_request *)sr, method, params);

    json_decref(params);
    return rc;
}

START_TEST(named_requests_and_early_answers)
{
    struct got g = {0};
    json_t *early = json_pack("{s:o, s:{s:s}, s:{}}", "user_name", accept_name("Ann"), "bad",
                              "action", "maybe", "never_asked");
    struct gw_call_request r = {.tool = "echo", .dialog = "d1", .input_responses = early};
    struct gw_rounds_receiver rcv = {.on_answer = on_answer, .data = &g};
    struct fake_call *c;

    ck_assert_int_eq(gw_rounds_call(rr, NULL, &r, &rcv, NULL), 0);
    c = &calls[ncalls - 1];
    /* answered at once from the early responses, never a round */
    ck_assert_int_eq(ask_named(c, 1, "elicitation/create", "user_name"), 0);
    ck_assert_uint_eq(nanswered, 1);
    ck_assert_ptr_eq(answered[0], (void *)1);
    ck_assert_str_eq(json_string_value(json_object_get(answers[0], "action")), "accept");
    /* used once: asked again under that key, it waits for a round */
    ck_assert_int_eq(ask_named(c, 2, "elicitation/create", "user_name"), 0);
    /* an early response of the wrong shape is no answer either */
    ck_assert_int_eq(ask_named(c, 3, "elicitation/create", "bad"), 0);
    /* a key that does not fit (15 bytes) is named by the gateway */
    ck_assert_int_eq(ask_named(c, 4, "roots/list", "a_key_much_too_long_to_fit"), 0);
    ck_assert_uint_eq(nanswered, 1);
    run_until(&g, 1);
    ck_assert_uint_eq(json_object_size(g.requests), 3);
    ck_assert_ptr_nonnull(json_object_get(g.requests, "user_name"));
    ck_assert_ptr_nonnull(json_object_get(g.requests, "bad"));
    ck_assert_ptr_nonnull(json_object_get(g.requests, "r1"));
    /* the key never reaches the caller */
    ck_assert_ptr_null(json_object_get(
        json_object_get(json_object_get(json_object_get(g.requests, "user_name"), "params"),
                        "_meta"),
        GW_MCP_META_INPUT_KEY));
    finish(c, 0, NULL);
    json_decref(early);
    json_decref(g.requests);
}
END_TEST

START_TEST(two_rounds_of_one_call)
{
    struct got g = {0}, g2 = {0}, g3 = {0};
    struct fake_call *c = start("d1", NULL, &g);
    json_t *resp = json_pack("{s:o}", "r1", accept_name("A"));
    json_t *resp2 = json_pack("{s:o}", "r2", accept_name("B"));
    const char *why;

    ask(c, 1, "elicitation/create");
    run_until(&g, 1);
    ck_assert_int_eq(resume("d1", NULL, g.state, resp, &g2, &why), 0);
    ask(c, 2, "elicitation/create"); /* the upstream asks again */
    run_until(&g2, 1);
    ck_assert_ptr_nonnull(json_object_get(g2.requests, "r2"));
    ck_assert_str_ne(g.state, g2.state);
    ck_assert_int_eq(resume("d1", NULL, g2.state, resp2, &g3, &why), 0);
    finish(c, 0, NULL);
    ck_assert(g3.had_outcome);
    ck_assert_uint_eq(nanswered, 2);
    json_decref(resp);
    json_decref(resp2);
    json_decref(g.requests);
    json_decref(g2.requests);
}
END_TEST

START_TEST(refusals_keep_the_round_open)
{
    struct got g = {0}, g2 = {0};
    struct fake_call *c = start("d1", NULL, &g);
    json_t *args = json_pack("{s:i}", "x", 1);
    json_t *bad = json_pack("{s:i}", "r1", 12345),
           *bad2 = json_pack("{s:{s:s}}", "r1", "action", "maybe");
    json_t *null = json_null(), *good = json_pack("{s:o}", "r1", accept_name("A"));
    const char *why;

    ask(c, 1, "elicitation/create");
    run_until(&g, 1);
    ck_assert_int_eq(resume("d2", NULL, g.state, good, &g2, &why), GW_ROUNDS_E_STATE);
    ck_assert_int_eq(resume("d1", args, g.state, good, &g2, &why), GW_ROUNDS_E_STATE);
    ck_assert_int_eq(resume("d1", NULL, g.state, bad, &g2, &why), GW_ROUNDS_E_RESPONSES);
    ck_assert_int_eq(resume("d1", NULL, g.state, bad2, &g2, &why), GW_ROUNDS_E_RESPONSES);
    ck_assert_int_eq(resume("d1", NULL, g.state, null, &g2, &why), GW_ROUNDS_E_RESPONSES);
    ck_assert_ptr_nonnull(strstr(why, "object"));
    ck_assert_uint_eq(nanswered, 0);
    ck_assert_int_eq(resume("d1", NULL, g.state, good, &g2, &why), 0);
    ck_assert_uint_eq(nanswered, 1);
    finish(c, 0, NULL);
    ck_assert(g2.had_outcome);
    struct gw_rounds_stats st;
    gw_rounds_stats(rr, &st);
    ck_assert_uint_eq(st.rejected, 5);
    ck_assert_uint_eq(st.resumed, 1);
    ck_assert_uint_eq(st.asked, 1);
    json_decref(args);
    json_decref(bad);
    json_decref(bad2);
    json_decref(good);
    json_decref(g.requests);
}
END_TEST

START_TEST(outcome_while_parked_waits_for_the_retry)
{
    struct got g = {0}, g2 = {0};
    struct fake_call *c = start(NULL, NULL, &g);
    const char *why;

    ask(c, 1, "roots/list");
    run_until(&g, 1);
    /* The upstream gave up waiting: its outcome is kept for the caller. */
    c->hooks->on_request_gone(c->hooks_data, (struct gw_server_request *)1);
    finish(c, 0, NULL);
    ck_assert_int_eq(g.answers, 1);
    ck_assert_int_eq(resume(NULL, NULL, g.state, NULL, &g2, &why), 0);
    ck_assert_int_eq(g2.answers, 0);
    run_until(&g2, 1);
    ck_assert(g2.had_outcome);
    ck_assert_uint_eq(nanswered, 0);
    json_decref(g.requests);
}
END_TEST

START_TEST(expired_round_is_cancelled_upstream)
{
    struct got g = {0}, g2 = {0};
    struct fake_call *c;
    const char *why;

    gw_rounds_close(rr);
    ck_assert_int_eq(gw_rounds_new(&loop, 30, &fake_up, &rr), 0);
    c = start("d1", NULL, &g);
    ask(c, 1, "elicitation/create");
    run_until(&g, 1);
    for (int i = 0; i < 5000 && !c->done; i++) {
        uv_run(&loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    ck_assert(c->done);
    ck_assert_uint_eq(ncancelled, 1);
    ck_assert_int_eq(g.answers, 1); /* nobody was there to tell */
    ck_assert_int_eq(resume("d1", NULL, g.state, NULL, &g2, &why), GW_ROUNDS_E_EXPIRED);
    struct gw_rounds_stats st;
    gw_rounds_stats(rr, &st);
    ck_assert_uint_eq(st.expired, 1);
    json_decref(g.requests);
}
END_TEST

START_TEST(rounds_are_bounded_per_dialog)
{
    static struct got g[GW_ROUNDS_PER_DIALOG + 2];

    memset(g, 0, sizeof g);
    for (int i = 0; i < GW_ROUNDS_PER_DIALOG; i++) {
        struct fake_call *c = start("busy", NULL, &g[i]);
        ck_assert_int_eq(ask(c, 1, "elicitation/create"), 0);
    }
    /* The 65th round of the dialog is refused: its request upstream at
     * once, and its caller on the next loop turn (the call cancelled),
     * not after its timeout; another dialog still asks. */
    ck_assert_int_ne(ask(start("busy", NULL, &g[GW_ROUNDS_PER_DIALOG]), 1, "elicitation/create"),
                     0);
    ck_assert_int_eq(
        ask(start("calm", NULL, &g[GW_ROUNDS_PER_DIALOG + 1]), 1, "elicitation/create"), 0);
    run_until(&g[GW_ROUNDS_PER_DIALOG], 1);
    ck_assert(g[GW_ROUNDS_PER_DIALOG].had_outcome);
    ck_assert_int_eq(g[GW_ROUNDS_PER_DIALOG].outcome_code, GW_SERVERS_E_ROUNDS_FULL);
    ck_assert_uint_eq(ncancelled, 1);
    ck_assert(!calls[GW_ROUNDS_PER_DIALOG].parked);
    /* The others are parked, and hold no slot while they are. */
    for (int i = 0; i < GW_ROUNDS_PER_DIALOG; i++)
        run_until(&g[i], 1);
    run_until(&g[GW_ROUNDS_PER_DIALOG + 1], 1);
    ck_assert_int_eq(nparked, GW_ROUNDS_PER_DIALOG + 1);
    for (size_t i = 0; i < ncalls; i++) {
        if (!calls[i].done)
            finish(&calls[i], 0, NULL);
    }
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        json_decref(g[i].requests);
}
END_TEST

START_TEST(rounds_are_bounded_in_all)
{
    static struct got g[GW_ROUNDS_MAX + 1];
    char dialog[32];

    memset(g, 0, sizeof g);
    for (int i = 0; i < GW_ROUNDS_MAX; i++) {
        snprintf(dialog, sizeof dialog, "d%d", i / GW_ROUNDS_PER_DIALOG);
        ck_assert_int_eq(ask(start(dialog, NULL, &g[i]), 1, "elicitation/create"), 0);
    }
    /* A dialog with no round yet is refused too, at once. */
    ck_assert_int_ne(ask(start("fresh", NULL, &g[GW_ROUNDS_MAX]), 1, "elicitation/create"), 0);
    run_until(&g[GW_ROUNDS_MAX], 1);
    ck_assert(g[GW_ROUNDS_MAX].had_outcome);
    ck_assert_int_eq(g[GW_ROUNDS_MAX].outcome_code, GW_SERVERS_E_ROUNDS_FULL);
    ck_assert_uint_eq(ncancelled, 1);
    for (int i = 0; i < GW_ROUNDS_MAX; i++)
        run_until(&g[i], 1);
    ck_assert_int_eq(nparked, GW_ROUNDS_MAX);
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        json_decref(g[i].requests);
}
END_TEST

START_TEST(close_cancels_parked_rounds)
{
    struct got g = {0};
    struct fake_call *c = start("d1", NULL, &g);

    ask(c, 1, "elicitation/create");
    run_until(&g, 1);
    gw_rounds_close(rr);
    ck_assert(c->done);
    ck_assert_uint_eq(ncancelled, 1);
    ck_assert_int_eq(gw_rounds_new(&loop, 0, &fake_up, &rr), 0); /* for teardown */
    json_decref(g.requests);
}
END_TEST

static Suite *rounds_suite(void)
{
    Suite *s = suite_create("input_rounds");
    TCase *tc = tcase_create("state");
    TCase *tb = tcase_create("rounds");

    tcase_add_test(tc, state_round_trips);
    tcase_add_test(tc, state_tampered_anywhere_is_refused);
    tcase_add_test(tc, state_in_standard_base64_is_refused);
    tcase_add_test(tc, state_binds_dialog_call_and_arguments);
    tcase_add_test(tc, state_expires);
    tcase_add_checked_fixture(tb, setup, teardown);
    tcase_set_timeout(tb, 20);
    tcase_add_test(tb, two_requests_one_round_then_the_missing_one);
    tcase_add_test(tb, two_rounds_of_one_call);
    tcase_add_test(tb, named_requests_and_early_answers);
    tcase_add_test(tb, refusals_keep_the_round_open);
    tcase_add_test(tb, outcome_while_parked_waits_for_the_retry);
    tcase_add_test(tb, expired_round_is_cancelled_upstream);
    tcase_add_test(tb, rounds_are_bounded_per_dialog);
    tcase_add_test(tb, rounds_are_bounded_in_all);
    tcase_add_test(tb, close_cancels_parked_rounds);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, tb);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rounds_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
