/* Input rounds: upstream calls parked between a caller's requests while
 * the caller answers the upstream's server requests (input_rounds.h).
 *
 * A round object lives as long as its upstream call, plus the wait for
 * the caller's retry when the call ended while parked. It is in one of
 * four states; its one timer serves each:
 *
 *   LIVE      a receiver waits for the call; no timer
 *   SETTLING  a receiver waits and server requests came; the timer closes
 *             the round (GW_ROUNDS_SETTLE_MS) and hands it to the receiver
 *   PARKED    handed out, no receiver; the timer is the expiry
 *   DELIVER   a retry was accepted and its answer is already known (the
 *             call's stored outcome, or requests still missing); the
 *             timer, at 0, gives it on the next loop turn, never inside
 *             gw_rounds_resume
 *   REFUSED   a receiver waits and the call's first server request would
 *             go over a cap; the timer, at 0, cancels the call (never
 *             inside dispatch's hook), whose outcome reaches the receiver
 *             as GW_SERVERS_E_ROUNDS_FULL
 *
 * A parked round's call holds no concurrency slot (gw_dispatch_park) from
 * the moment it is handed out until a retry takes it up.
 *
 * Rounds that have asked once are listed in the registry (bounded per
 * dialog and in all) until they end; a parked one is found by its id,
 * which changes every time it is handed out, so a requestState is good
 * for one retry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw/input_rounds.h"
#include "gw/log.h"
#include "gw/mcp_client.h"
#include "gw/trace.h"
#include "gw/util.h"

enum round_state { R_LIVE, R_SETTLING, R_PARKED, R_DELIVER, R_REFUSED };

/* One server request of the call, waiting for the caller's response. */
struct pending {
    char key[16]; /* "r1", "r2", …: unique over the call's life */
    struct gw_server_request *sr;
    char *method;
    json_t *params; /* a copy, or NULL */
};

/* An outcome that came while no receiver waited: copies of its parts. */
struct kept_outcome {
    struct gw_call_outcome o;
    char *message, *server, *tool, *dialog;
};

struct gw_round {
    struct gw_rounds *rr;
    struct gw_round *prev, *next; /* the registry's list of rounds that asked */
    bool listed;
    uv_timer_t timer; /* the round is freed in its close callback */
    enum round_state state;
    struct gw_rounds_receiver rcv;
    bool has_rcv;
    struct gw_call *call; /* NULL once the outcome came */
    bool ended;           /* the outcome came and is kept in `kept` */
    struct kept_outcome kept;
    bool in_resume; /* answering upstream inside gw_rounds_resume */
    /* The binding its requestState is sealed with. */
    char *dialog, *method, *name, *client;
    json_t *arguments;
    unsigned char id[GW_ROUNDS_ID_LEN];
    bool has_id; /* parked under `id` */
    struct pending req[GW_ROUNDS_REQUESTS_MAX];
    size_t nreq;
    unsigned next_key;
    json_t *early; /* responses given before being asked, by key; each used once */
    /* Traces: the context of the request that made the call, and the span
     * of the round handed out, from asking to the caller's answer. */
    struct gw_trace_saved trace;
    struct gw_span *span;
};

struct gw_rounds {
    uv_loop_t *loop;
    const struct gw_rounds_upstream *up;
    unsigned char key[GW_ROUNDS_KEY_LEN];
    uint64_t expiry_ms;
    uint64_t id_seq;        /* round ids: HMAC of a counter, unguessable without the key */
    struct gw_round *asked; /* rounds that asked once, until they end */
    size_t nasked;
    size_t nrounds; /* every round object, until its close callback */
    bool closing;
    struct gw_rounds_stats stats;
};

static const struct gw_rounds_upstream dispatch_up = {gw_dispatch_call, gw_dispatch_request,
                                                      gw_dispatch_answer, gw_dispatch_cancel,
                                                      gw_dispatch_park};

int gw_rounds_new(uv_loop_t *loop, uint64_t expiry_ms, const struct gw_rounds_upstream *up,
                  struct gw_rounds **out)
{
    struct gw_rounds *rr = gw_xcalloc(1, sizeof *rr);
    int rc = uv_random(NULL, NULL, rr->key, sizeof rr->key, 0, NULL);

    if (rc != 0) {
        free(rr);
        return rc;
    }
    rr->loop = loop;
    rr->up = up != NULL ? up : &dispatch_up;
    rr->expiry_ms = expiry_ms > 0 ? expiry_ms : GW_ROUNDS_EXPIRY_MS;
    *out = rr;
    return 0;
}

void gw_rounds_stats(const struct gw_rounds *rr, struct gw_rounds_stats *out)
{
    *out = rr->stats;
}

/* ---- lifetime ---- */

static void pending_clear(struct pending *p)
{
    free(p->method);
    json_decref(p->params);
    memset(p, 0, sizeof *p);
}

static void on_round_closed(uv_handle_t *h)
{
    struct gw_round *r = h->data;
    struct gw_rounds *rr = r->rr;

    free(r);
    if (--rr->nrounds == 0 && rr->closing)
        free(rr);
}

static void unlist(struct gw_round *r)
{
    if (!r->listed)
        return;
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        r->rr->asked = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    r->listed = false;
    r->rr->nasked--;
}

static void kept_clear(struct kept_outcome *k)
{
    json_decref(k->o.result);
    json_decref(k->o.error);
    json_decref(k->o.lease);
    free(k->message);
    free(k->server);
    free(k->tool);
    free(k->dialog);
}

/* The round is done: no receiver, no call. */
static void round_free(struct gw_round *r)
{
    unlist(r);
    for (size_t i = 0; i < r->nreq; i++)
        pending_clear(&r->req[i]);
    if (r->ended)
        kept_clear(&r->kept);
    free(r->dialog);
    free(r->client);
    free(r->method);
    free(r->name);
    json_decref(r->arguments);
    json_decref(r->early);
    gw_span_end(r->span);
    gw_trace_saved_free(&r->trace);
    uv_close((uv_handle_t *)&r->timer, on_round_closed);
}

static struct gw_round *round_new(struct gw_rounds *rr, const struct gw_round_bind *b,
                                  const struct gw_rounds_receiver *rcv)
{
    struct gw_round *r = gw_xcalloc(1, sizeof *r);

    r->rr = rr;
    uv_timer_init(rr->loop, &r->timer);
    r->timer.data = r;
    rr->nrounds++;
    r->state = R_LIVE;
    r->rcv = *rcv;
    r->has_rcv = true;
    r->dialog = gw_xstrdup(b->dialog);
    r->client = gw_xstrdup(b->client);
    r->method = gw_xstrdup(b->method);
    r->name = gw_xstrdup(b->name);
    r->arguments = b->arguments != NULL ? json_incref(b->arguments) : NULL;
    gw_trace_save(&r->trace, gw_trace_current());
    return r;
}

/* ---- answers to the receiver ---- */

static struct gw_rounds_receiver take_receiver(struct gw_round *r)
{
    struct gw_rounds_receiver rcv = r->rcv;

    r->has_rcv = false;
    memset(&r->rcv, 0, sizeof r->rcv);
    return rcv;
}

static void deliver_outcome(struct gw_round *r, const struct gw_call_outcome *o)
{
    struct gw_rounds_receiver rcv = take_receiver(r);
    struct gw_rounds_answer a = {.outcome = o};

    uv_timer_stop(&r->timer);
    rcv.on_answer(rcv.data, &a);
}

static void keep_outcome(struct gw_round *r, const struct gw_call_outcome *o)
{
    struct kept_outcome *k = &r->kept;

    k->o = *o;
    k->o.result = o->result != NULL ? json_incref(o->result) : NULL;
    k->o.error = o->error != NULL ? json_incref(o->error) : NULL;
    k->o.lease = o->lease != NULL ? json_incref(o->lease) : NULL;
    k->o.message = k->message = gw_xstrdup(o->message);
    k->o.server = k->server = gw_xstrdup(o->server);
    k->o.tool = k->tool = gw_xstrdup(o->tool);
    k->o.dialog = k->dialog = gw_xstrdup(o->dialog);
    r->ended = true;
}

static void on_timer(uv_timer_t *t);

static void arm(struct gw_round *r, enum round_state st, uint64_t ms)
{
    r->state = st;
    uv_timer_start(&r->timer, on_timer, ms, 0);
}

static void on_outcome(void *data, const struct gw_call_outcome *o)
{
    struct gw_round *r = data;
    struct gw_call_outcome refused;

    r->call = NULL;
    if (r->state == R_REFUSED) { /* cancelled for the caps: what the caller is told */
        refused = (struct gw_call_outcome){.code = GW_SERVERS_E_ROUNDS_FULL,
                                           .lease = o->lease,
                                           .server = o->server,
                                           .tool = o->tool,
                                           .dialog = o->dialog};
        o = &refused;
    }
    if (r->has_rcv && !r->in_resume) {
        deliver_outcome(r, o);
        round_free(r);
        return;
    }
    keep_outcome(r, o);
    if (r->in_resume)
        arm(r, R_DELIVER, 0);
}

/* The new id of a round being parked: HMAC(key, counter), so ids never
 * repeat in a run and cannot be guessed from earlier ones. */
static void new_id(struct gw_round *r)
{
    struct gw_hmac_sha256 h;
    unsigned char mac[GW_SHA256_LEN], seq[8];
    uint64_t n = ++r->rr->id_seq;

    for (int i = 0; i < 8; i++)
        seq[i] = (unsigned char)(n >> (56 - 8 * i));
    gw_hmac_sha256_init(&h, r->rr->key, sizeof r->rr->key);
    gw_hmac_sha256_update(&h, "round-id", 8);
    gw_hmac_sha256_update(&h, seq, sizeof seq);
    gw_hmac_sha256_final(&h, mac);
    memcpy(r->id, mac, GW_ROUNDS_ID_LEN);
    r->has_id = true;
}

static json_t *input_requests(const struct gw_round *r)
{
    json_t *o = json_object();

    for (size_t i = 0; i < r->nreq; i++) {
        json_t *one = json_pack("{s:s}", "method", r->req[i].method);
        if (r->req[i].params != NULL)
            json_object_set(one, "params", r->req[i].params);
        json_object_set_new(o, r->req[i].key, one);
    }
    return o;
}

/* Hands the round's open requests to its receiver and parks it. */
static void hand_out(struct gw_round *r)
{
    struct gw_round_bind b = {r->dialog, r->method, r->name, r->arguments, r->client};
    char state[GW_ROUNDS_STATE_LEN + 1];
    struct gw_rounds_receiver rcv;
    struct gw_rounds_answer a;
    json_t *reqs;

    if (r->nreq == 0) { /* the requests are gone: wait for the call */
        r->state = R_LIVE;
        return;
    }
    if (r->rr->closing) { /* no retry will come: end the call */
        r->state = R_LIVE;
        if (r->call != NULL)
            r->rr->up->cancel(r->call, "the gateway is stopping");
        return;
    }
    new_id(r);
    gw_rounds_state_encode(r->rr->key, r->id, gw_now_ms() + r->rr->expiry_ms, &b, state);
    reqs = input_requests(r);
    arm(r, R_PARKED, r->rr->expiry_ms);
    if (r->call != NULL)
        r->rr->up->park(r->call, true);
    r->rr->stats.asked++;
    gw_span_end(r->span);
    r->span = gw_span_child("mcpgw.input_round", GW_SPAN_INTERNAL, gw_trace_saved_ctx(&r->trace));
    gw_span_int(r->span, "mcpgw.input_requests", (int64_t)r->nreq);
    rcv = take_receiver(r);
    a = (struct gw_rounds_answer){.input_requests = reqs, .request_state = state};
    rcv.on_answer(rcv.data, &a);
    json_decref(reqs);
}

/* A parked round nobody came back for: its call is cancelled upstream. */
static void expire(struct gw_round *r)
{
    r->has_id = false;
    gw_span_str(r->span, "error.type", "expired");
    gw_span_error(r->span, "the caller did not answer the input round in time");
    if (r->call != NULL)
        r->rr->up->cancel(r->call, "the caller did not answer the input round in time");
    round_free(r);
}

static void on_timer(uv_timer_t *t)
{
    struct gw_round *r = t->data;

    switch (r->state) {
    case R_SETTLING:
        hand_out(r);
        break;
    case R_DELIVER:
        if (r->ended) {
            deliver_outcome(r, &r->kept.o);
            round_free(r);
        } else {
            hand_out(r);
        }
        break;
    case R_REFUSED:
        if (r->call != NULL)
            r->rr->up->cancel(r->call, "the gateway's input round caps are reached");
        break;
    case R_PARKED:
        r->rr->stats.expired++;
        gw_log(GW_LOG_INFO, "input round expired", "dialog", r->dialog ? r->dialog : "", "name",
               r->name, NULL);
        expire(r);
        break;
    case R_LIVE:
        break;
    }
}

/* ---- dispatch's hooks ---- */

static void h_progress(void *data, json_t *params)
{
    struct gw_round *r = data;

    if (r->has_rcv && r->rcv.on_progress != NULL)
        r->rcv.on_progress(r->rcv.data, params);
}

static void h_log(void *data, json_t *params)
{
    struct gw_round *r = data;

    if (r->has_rcv && r->rcv.on_log != NULL)
        r->rcv.on_log(r->rcv.data, params);
}

static size_t asked_by(const struct gw_rounds *rr, const char *dialog)
{
    size_t n = 0;

    for (const struct gw_round *o = rr->asked; o != NULL; o = o->next) {
        if ((o->dialog == NULL && dialog == NULL) ||
            (o->dialog != NULL && dialog != NULL && strcmp(o->dialog, dialog) == 0))
            n++;
    }
    return n;
}

/* Room for this round among those that asked: 0, or -1 when a cap is
 * full. */
static int enlist(struct gw_round *r)
{
    struct gw_rounds *rr = r->rr;

    if (r->listed)
        return 0;
    if (rr->nasked >= GW_ROUNDS_MAX || asked_by(rr, r->dialog) >= GW_ROUNDS_PER_DIALOG)
        return -1;
    r->next = rr->asked;
    if (rr->asked != NULL)
        rr->asked->prev = r;
    rr->asked = r;
    r->listed = true;
    rr->nasked++;
    return 0;
}

/* A 2026-07-28 upstream named its request (mcp_client.h): the caller sees
 * that key when it fits and is not taken in the round; else "rN". */
static bool key_taken(const struct gw_round *r, const char *key)
{
    for (size_t i = 0; i + 1 < r->nreq; i++) {
        if (strcmp(r->req[i].key, key) == 0)
            return true;
    }
    return false;
}

static void name_request(struct gw_round *r, struct pending *p)
{
    json_t *meta = json_object_get(p->params, "_meta");
    const char *key = json_string_value(json_object_get(meta, GW_MCP_META_INPUT_KEY));

    if (key != NULL && key[0] != '\0' && strlen(key) < sizeof p->key && !key_taken(r, key)) {
        snprintf(p->key, sizeof p->key, "%s", key);
    } else {
        do
            snprintf(p->key, sizeof p->key, "r%u", ++r->next_key);
        while (key_taken(r, p->key));
    }
    json_object_del(meta, GW_MCP_META_INPUT_KEY);
    if (json_is_object(meta) && json_object_size(meta) == 0)
        json_object_del(p->params, "_meta");
}

static const char *bad_response(const char *method, json_t *v);

/* The caller answered this one before it was asked: it goes upstream now
 * and the round does not wait for it. */
static bool answered_early(struct gw_round *r, struct pending *p)
{
    json_t *v = json_object_get(r->early, p->key);

    if (v == NULL || bad_response(p->method, v) != NULL)
        return false;
    json_incref(v);
    json_object_del(r->early, p->key);
    r->rr->up->answer(p->sr, v, NULL);
    json_decref(v);
    p->sr = NULL;
    pending_clear(p);
    r->nreq--;
    return true;
}

static int h_request(void *data, struct gw_server_request *sr, const char *method, json_t *params)
{
    struct gw_round *r = data;
    struct pending *p;

    if (r->nreq == GW_ROUNDS_REQUESTS_MAX || r->state == R_REFUSED ||
        (r->rr->closing && !r->listed)) {
        r->rr->stats.refused++;
        return -1;
    }
    if (enlist(r) != 0) {
        /* Refused at once, not parked behind the caps: the request gets
         * its error from dispatch, and the call ends next turn. */
        r->rr->stats.refused++;
        arm(r, R_REFUSED, 0);
        return -1;
    }
    p = &r->req[r->nreq++];
    p->sr = sr;
    p->method = gw_xstrdup(method);
    p->params = json_is_object(params) ? json_deep_copy(params) : NULL;
    name_request(r, p);
    if (answered_early(r, p))
        return 0;
    if (r->state == R_LIVE)
        arm(r, R_SETTLING, GW_ROUNDS_SETTLE_MS);
    return 0;
}

static void drop_request(struct gw_round *r, size_t i)
{
    pending_clear(&r->req[i]);
    r->req[i] = r->req[--r->nreq];
    memset(&r->req[r->nreq], 0, sizeof r->req[r->nreq]);
}

static void h_request_gone(void *data, struct gw_server_request *sr)
{
    struct gw_round *r = data;

    for (size_t i = 0; i < r->nreq; i++) {
        if (r->req[i].sr == sr) {
            drop_request(r, i);
            return;
        }
    }
}

static const struct gw_call_hooks round_hooks = {h_progress, h_log, h_request, h_request_gone};

/* ---- starting calls ---- */

static int started(struct gw_round *r, int rc, struct gw_round **out)
{
    if (rc != 0) {
        r->has_rcv = false;
        round_free(r);
        return rc;
    }
    if (out != NULL)
        *out = r;
    return 0;
}

int gw_rounds_call(struct gw_rounds *rr, struct gw_servers *s, const struct gw_call_request *req,
                   const struct gw_rounds_receiver *rcv, struct gw_round **out)
{
    struct gw_round_bind b = {req->dialog, "tools/call", req->tool, req->arguments, req->client};
    struct gw_round *r = round_new(rr, &b, rcv);
    struct gw_call_request q = *req;

    q.hooks = &round_hooks;
    q.hooks_data = r;
    if (json_is_object(req->input_responses) && json_object_size(req->input_responses) > 0)
        r->early = json_copy(req->input_responses); /* its keys go as they are used */
    return started(r, rr->up->call(s, &q, on_outcome, r, &r->call), out);
}

int gw_rounds_route_bind(const struct gw_route_request *r, struct gw_round_bind *b)
{
    json_t *name = json_object_get(r->params, "name");

    *b = (struct gw_round_bind){r->dialog, r->method,
                                json_string_value(name ? name : json_object_get(r->params, "uri")),
                                json_object_get(r->params, "arguments"), r->client};
    return b->name != NULL ? 0 : GW_SERVERS_E_NO_TOOL;
}

int gw_rounds_route(struct gw_rounds *rr, struct gw_servers *s, const struct gw_route_request *req,
                    const struct gw_rounds_receiver *rcv, struct gw_round **out)
{
    struct gw_round_bind b;
    struct gw_round *r;
    struct gw_route_request q = *req;

    if (gw_rounds_route_bind(req, &b) != 0)
        return GW_SERVERS_E_NO_TOOL;
    r = round_new(rr, &b, rcv);
    q.hooks = &round_hooks;
    q.hooks_data = r;
    return started(r, rr->up->route(s, &q, on_outcome, r, &r->call), out);
}

void gw_rounds_cancel(struct gw_round *r, const char *reason)
{
    if (r->call != NULL) {
        r->rr->up->cancel(r->call, reason);
    } else if (r->ended && r->has_rcv) {
        deliver_outcome(r, &r->kept.o);
        round_free(r);
    }
}

void gw_rounds_close(struct gw_rounds *rr)
{
    struct gw_round *r = rr->asked, *next;

    rr->closing = true;
    for (; r != NULL; r = next) {
        next = r->next;
        if (r->state == R_PARKED)
            expire(r);
    }
    if (rr->nrounds == 0)
        free(rr);
}

/* ---- retries ---- */

/* Is `v` a result of `method` (schema.ts: ElicitResult, CreateMessageResult,
 * ListRootsResult)? Only the fields the upstream needs to read are
 * checked: the rest is the upstream's to judge. */
static const char *bad_response(const char *method, json_t *v)
{
    const char *action = json_string_value(json_object_get(v, "action"));
    json_t *content = json_object_get(v, "content");

    if (!json_is_object(v))
        return "each inputResponses value must be a JSON object (the result of the request "
               "under that key)";
    if (strcmp(method, "elicitation/create") == 0) {
        if (action == NULL || (strcmp(action, "accept") != 0 && strcmp(action, "decline") != 0 &&
                               strcmp(action, "cancel") != 0))
            return "an elicitation/create response needs \"action\": \"accept\", \"decline\" or "
                   "\"cancel\"";
        if (content != NULL && !json_is_object(content))
            return "an elicitation/create response's \"content\" must be an object";
    } else if (strcmp(method, "sampling/createMessage") == 0) {
        if (!json_is_string(json_object_get(v, "role")) ||
            !json_is_string(json_object_get(v, "model")) ||
            !(json_is_object(content) || json_is_array(content)))
            return "a sampling/createMessage response needs \"role\", \"content\" and \"model\"";
    } else if (strcmp(method, "roots/list") == 0) {
        if (!json_is_array(json_object_get(v, "roots")))
            return "a roots/list response needs \"roots\": [...]";
    }
    return NULL;
}

static const char *check_responses(const struct gw_round *r, json_t *responses)
{
    if (responses == NULL)
        return NULL;
    if (!json_is_object(responses))
        return "inputResponses must be a JSON object: key → the result of the request asked "
               "under that key";
    for (size_t i = 0; i < r->nreq; i++) {
        json_t *v = json_object_get(responses, r->req[i].key);
        const char *why = v != NULL ? bad_response(r->req[i].method, v) : NULL;
        if (why != NULL)
            return why;
    }
    return NULL;
}

static struct gw_round *parked(struct gw_rounds *rr, const unsigned char id[GW_ROUNDS_ID_LEN])
{
    for (struct gw_round *r = rr->asked; r != NULL; r = r->next) {
        if (r->has_id && r->state == R_PARKED && memcmp(r->id, id, GW_ROUNDS_ID_LEN) == 0)
            return r;
    }
    return NULL;
}

/* Sends the responses given upstream; those not given stay open. The
 * answered requests leave the round before any is sent, so that nothing
 * dispatch does meanwhile finds them. */
static void answer_given(struct gw_round *r, json_t *responses)
{
    struct gw_server_request *sr[GW_ROUNDS_REQUESTS_MAX];
    json_t *res[GW_ROUNDS_REQUESTS_MAX];
    size_t n = 0;

    for (size_t i = 0; i < r->nreq;) {
        json_t *v = json_object_get(responses, r->req[i].key);
        if (v == NULL) {
            i++;
            continue;
        }
        sr[n] = r->req[i].sr;
        res[n++] = json_incref(v);
        drop_request(r, i);
    }
    r->in_resume = true;
    for (size_t i = 0; i < n; i++) {
        r->rr->up->answer(sr[i], res[i], NULL);
        json_decref(res[i]);
    }
    r->in_resume = false;
}

static int refuse_retry(struct gw_rounds *rr, int code, const char *sentence, const char **why)
{
    rr->stats.rejected++;
    *why = sentence;
    return code;
}

int gw_rounds_resume(struct gw_rounds *rr, const char *state, json_t *responses,
                     const struct gw_round_bind *b, const struct gw_rounds_receiver *rcv,
                     struct gw_round **out, const char **why)
{
    unsigned char id[GW_ROUNDS_ID_LEN];
    int rc = gw_rounds_state_decode(rr->key, state, b, gw_now_ms(), id);
    struct gw_round *r;
    const char *bad;

    if (rc == GW_ROUNDS_E_STATE)
        return refuse_retry(rr, rc,
                            "requestState is not one this gateway handed out for this call "
                            "(the same dialog, tool and arguments)",
                            why);
    if (rc == GW_ROUNDS_E_EXPIRED)
        return refuse_retry(rr, rc, "the input round expired: make the call again", why);
    r = parked(rr, id);
    if (r == NULL)
        return refuse_retry(rr, GW_ROUNDS_E_GONE,
                            "the input round is no longer open (already answered, expired, or "
                            "the gateway restarted): make the call again",
                            why);
    if ((bad = check_responses(r, responses)) != NULL)
        return refuse_retry(rr, GW_ROUNDS_E_RESPONSES, bad, why);
    uv_timer_stop(&r->timer);
    r->has_id = false;
    r->rcv = *rcv;
    r->has_rcv = true;
    r->state = R_LIVE;
    if (r->call != NULL)
        rr->up->park(r->call, false);
    if (responses != NULL)
        answer_given(r, responses);
    rr->stats.resumed++;
    gw_span_end(r->span);
    r->span = NULL;
    /* The outcome came before or during the answers, or requests remain:
     * the receiver learns it on the next loop turn. */
    if (r->ended || r->nreq > 0)
        arm(r, R_DELIVER, 0);
    if (out != NULL)
        *out = r;
    return 0;
}
