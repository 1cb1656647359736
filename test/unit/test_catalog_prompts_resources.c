/* Unit tests of the catalog extras: prompt names under the tool rules,
 * first-owner collisions for prompts and URIs (and the re-offer when the
 * owner goes), namespaced URIs (resource_namespace), and URI template
 * matching for resources/read routing. */
#include "gw/catalog_prompts_resources.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static struct gw_server_config server(const char *id)
{
    struct gw_server_config s;

    memset(&s, 0, sizeof(s));
    s.id = (char *)id;
    s.ok = true;
    s.load_prompts = s.load_resources = true;
    return s;
}

static json_t *js(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);

    ck_assert_ptr_nonnull(j);
    return j;
}

/* Display strings of prompts, resources and templates are cleaned as tool
 * descriptions are (security S7): control, bidi and tag characters go;
 * prompt argument names, which a client sends back, stay. */
START_TEST(display_strings_cleaned)
{
    struct gw_extras *e = gw_extras_new();
    struct gw_server_config a = server("a");
    json_t *lp = js("[{\"name\":\"greet\",\"title\":\"Gr\\u202eeet\",\"description\":"
                    "\"Says hi\\u2066.\\u2069\\u001b[2J\",\"arguments\":[{\"name\":\"who\","
                    "\"description\":\"the \\u200fperson\\udb40\\udc41\"}]}]");
    json_t *lr = js("[{\"uri\":\"file:///x\",\"name\":\"x\\u202ex\",\"description\":"
                    "\"\\u061cfile\\u200e\"}]");
    json_t *lt = js("[{\"uriTemplate\":\"demo://r/{id}\",\"name\":\"t\",\"title\":\"T\\u202a\"}]");
    json_t *ps, *rs, *ts, *p, *r, *t;

    gw_extras_set(e, &a, GW_EXTRA_PROMPTS, lp);
    gw_extras_set(e, &a, GW_EXTRA_RESOURCES, lr);
    gw_extras_set(e, &a, GW_EXTRA_TEMPLATES, lt);
    ps = gw_extras_json(e, GW_EXTRA_PROMPTS);
    p = json_array_get(ps, 0);
    ck_assert_str_eq(json_string_value(json_object_get(p, "title")), "Greet");
    ck_assert_str_eq(json_string_value(json_object_get(p, "description")), "Says hi.[2J");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(p, "arguments"), 0), "description")),
                     "the person");
    rs = gw_extras_json(e, GW_EXTRA_RESOURCES);
    r = json_array_get(rs, 0);
    ck_assert_str_eq(json_string_value(json_object_get(r, "name")), "xx");
    ck_assert_str_eq(json_string_value(json_object_get(r, "description")), "file");
    ts = gw_extras_json(e, GW_EXTRA_TEMPLATES);
    t = json_array_get(ts, 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "title")), "T");
    json_decref(ps);
    json_decref(rs);
    json_decref(ts);
    json_decref(lp);
    json_decref(lr);
    json_decref(lt);
    gw_extras_free(e);
}
END_TEST

START_TEST(prompts_filtered_renamed_and_owned_first)
{
    struct gw_extras *e = gw_extras_new();
    struct gw_transform t = {.kind = GW_TRANSFORM_PREFIX, .add = "a_"};
    char *black[] = {"secret*"};
    struct gw_server_config a = server("a"), b = server("b");
    json_t *la = js("[{\"name\":\"greet\"},{\"name\":\"secret-x\"},{\"name\":\"bad name\"}]");
    json_t *lb = js("[{\"name\":\"a_greet\"},{\"name\":\"other\"}]");
    const char *orig = NULL;

    a.transforms = &t;
    a.ntransforms = 1;
    a.blacklist = black;
    a.nblacklist = 1;
    ck_assert_uint_eq(gw_extras_set(e, &a, GW_EXTRA_PROMPTS, la), 1u << GW_EXTRA_PROMPTS);
    ck_assert_str_eq(gw_extras_prompt(e, "a_greet", &orig), "a");
    ck_assert_str_eq(orig, "greet");
    ck_assert_ptr_null(gw_extras_prompt(e, "a_secret-x", NULL));
    ck_assert_uint_eq(gw_extras_diags(e, "a")->n, 2); /* blacklisted, invalid */
    gw_extras_set(e, &b, GW_EXTRA_PROMPTS, lb);
    ck_assert_str_eq(gw_extras_prompt(e, "a_greet", NULL), "a"); /* first owner keeps it */
    ck_assert_str_eq(gw_extras_prompt(e, "other", NULL), "b");
    ck_assert_uint_eq(gw_extras_diags(e, "b")->n, 1); /* the collision */
    ck_assert_uint_eq(gw_extras_remove(e, "a"), 1u << GW_EXTRA_PROMPTS);
    ck_assert_str_eq(gw_extras_prompt(e, "a_greet", NULL), "b"); /* re-offered */
    ck_assert_uint_eq(gw_extras_diags(e, "b")->n, 0);
    json_decref(la);
    json_decref(lb);
    gw_extras_free(e);
}
END_TEST

START_TEST(resources_and_templates_route)
{
    struct gw_extras *e = gw_extras_new();
    struct gw_server_config a = server("a"), b = server("b");
    json_t *ra = js("[{\"uri\":\"file:///x\",\"name\":\"x\"}]");
    json_t *rb =
        js("[{\"uri\":\"file:///x\",\"name\":\"x2\"},{\"uri\":\"file:///y\",\"name\":\"y\"}]");
    json_t *tb = js("[{\"uriTemplate\":\"demo://r/{id}\",\"name\":\"t\"}]");
    json_t *served;

    gw_extras_set(e, &a, GW_EXTRA_RESOURCES, ra);
    gw_extras_set(e, &b, GW_EXTRA_RESOURCES, rb);
    gw_extras_set(e, &b, GW_EXTRA_TEMPLATES, tb);
    ck_assert_str_eq(gw_extras_resource(e, "file:///x"), "a");
    ck_assert_str_eq(gw_extras_resource(e, "file:///y"), "b");
    ck_assert_str_eq(gw_extras_resource(e, "demo://r/7"), "b");
    ck_assert_ptr_null(gw_extras_resource(e, "demo://r/7/8"));
    ck_assert_str_eq(gw_extras_template(e, "demo://r/{id}"), "b");
    served = gw_extras_json(e, GW_EXTRA_RESOURCES);
    ck_assert_uint_eq(json_array_size(served), 2);
    json_decref(served);
    json_decref(ra);
    json_decref(rb);
    json_decref(tb);
    gw_extras_free(e);
}
END_TEST

START_TEST(namespaced_resources_do_not_collide)
{
    struct gw_extras *e = gw_extras_new();
    struct gw_server_config a = server("a"), b = server("b"), c = server("c");
    json_t *r = js("[{\"uri\":\"file:///x\",\"name\":\"x\"}]");
    json_t *t = js("[{\"uriTemplate\":\"demo://r/{id}\",\"name\":\"t\"}]");
    json_t *rc = js("[{\"uri\":\"mcpgw:a/file:///x\",\"name\":\"squat\"},"
                    "{\"uri\":\"file:///x\",\"name\":\"x3\"}]");
    json_t *served, *rest;

    a.resource_namespace = b.resource_namespace = true;
    gw_extras_set(e, &a, GW_EXTRA_RESOURCES, r);
    gw_extras_set(e, &a, GW_EXTRA_TEMPLATES, t);
    gw_extras_set(e, &b, GW_EXTRA_RESOURCES, r);
    gw_extras_set(e, &b, GW_EXTRA_TEMPLATES, t);
    gw_extras_set(e, &c, GW_EXTRA_RESOURCES, rc);
    /* the same URIs and templates from three servers: no collision */
    ck_assert_str_eq(gw_extras_resource(e, "mcpgw:a/file:///x"), "a");
    ck_assert_str_eq(gw_extras_resource(e, "mcpgw:b/file:///x"), "b");
    ck_assert_str_eq(gw_extras_resource(e, "file:///x"), "c");
    ck_assert_str_eq(gw_extras_resource(e, "mcpgw:b/demo://r/7"), "b");
    ck_assert_ptr_null(gw_extras_resource(e, "demo://r/7"));
    ck_assert_str_eq(gw_extras_template(e, "mcpgw:a/demo://r/{id}"), "a");
    ck_assert_uint_eq(gw_extras_diags(e, "a")->n, 0);
    ck_assert_uint_eq(gw_extras_diags(e, "b")->n, 0);
    /* a plain server cannot offer a URI in the gateway's scheme */
    ck_assert_uint_eq(gw_extras_diags(e, "c")->n, 1);
    ck_assert_ptr_nonnull(strstr(gw_extras_diags(e, "c")->v[0].message, "gateway's own"));
    served = gw_extras_json(e, GW_EXTRA_TEMPLATES);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(served, 0), "uriTemplate")),
                     "mcpgw:a/demo://r/{id}");
    rest = gw_extras_rest_json(e, GW_EXTRA_RESOURCES);
    ck_assert_uint_eq(json_array_size(rest), 3);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(rest, 1), "originalUri")),
                     "file:///x");
    ck_assert_ptr_null(json_object_get(json_array_get(rest, 2), "originalUri"));
    json_decref(served);
    json_decref(rest);
    json_decref(r);
    json_decref(t);
    json_decref(rc);
    gw_extras_free(e);
}
END_TEST

START_TEST(namespaced_uri_split)
{
    char id[GW_CATALOG_NS_ID_MAX + 1];
    char *rest = NULL;
    char *ns = gw_catalog_ns_uri("fx", "fx://a/b");
    char *ui = gw_catalog_ns_uri("fx", "ui://app/view.html");

    ck_assert_str_eq(ns, "mcpgw:fx/fx://a/b");
    ck_assert_int_eq(gw_catalog_ns_split(ns, id, &rest), 0);
    ck_assert_str_eq(id, "fx");
    ck_assert_str_eq(rest, "fx://a/b");
    free(rest);
    /* MCP Apps URIs keep their scheme, which hosts look for. */
    ck_assert_str_eq(ui, "ui://fx/app/view.html");
    ck_assert_int_eq(gw_catalog_ns_split(ui, id, &rest), 0);
    ck_assert_str_eq(id, "fx");
    ck_assert_str_eq(rest, "ui://app/view.html");
    free(rest);
    ck_assert_int_ne(gw_catalog_ns_split("fx://a", id, &rest), 0);
    ck_assert_int_ne(gw_catalog_ns_split("mcpgw:/x", id, &rest), 0);
    ck_assert_int_ne(gw_catalog_ns_split("mcpgw:fx", id, &rest), 0);
    ck_assert_int_ne(gw_catalog_ns_split("ui://fx", id, &rest), 0);
    ck_assert_int_ne(gw_catalog_ns_split("ui:///x", id, &rest), 0);
    free(ns);
    free(ui);
}
END_TEST

START_TEST(template_matching)
{
    ck_assert(gw_extras_template_match("a://b/{x}", "a://b/1"));
    ck_assert(!gw_extras_template_match("a://b/{x}", "a://b/"));
    ck_assert(!gw_extras_template_match("a://b/{x}", "a://b/1/2"));
    ck_assert(gw_extras_template_match("a://b/{+x}", "a://b/1/2"));
    ck_assert(gw_extras_template_match("a://{x}/c/{y}", "a://q/c/r"));
    ck_assert(gw_extras_template_match("a://b{?q,r}", "a://b"));
    ck_assert(gw_extras_template_match("a://b{?q,r}", "a://b?q=1&r=2"));
    ck_assert(!gw_extras_template_match("a://b", "a://c"));
    ck_assert(!gw_extras_template_match("a://b/{x", "a://b/1"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("catalog_prompts_resources");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, prompts_filtered_renamed_and_owned_first);
    tcase_add_test(tc, resources_and_templates_route);
    tcase_add_test(tc, namespaced_resources_do_not_collide);
    tcase_add_test(tc, namespaced_uri_split);
    tcase_add_test(tc, template_matching);
    tcase_add_test(tc, display_strings_cleaned);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
