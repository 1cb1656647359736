/* Random JSON trees for the unit tests of the JSON reader and writer:
 * strings mixing escapes, control characters and 2-4 byte UTF-8, integers
 * of both signs, reals, and containers nested up to about 6 levels. The
 * same seed gives the same tree. */
#ifndef GW_TEST_RANDOM_JSON_H
#define GW_TEST_RANDOM_JSON_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *random_json_value(unsigned *seed, int depth);

static json_t *random_json_string(unsigned *seed)
{
    static const char *const parts[] = {"a",
                                        "Z",
                                        "key",
                                        " ",
                                        "\"",
                                        "\\",
                                        "/",
                                        "\n",
                                        "\t",
                                        "\r",
                                        "\x01",
                                        "\x1f",
                                        "\x7f",
                                        "\xc3\xa9",
                                        "\xe2\x98\x83",
                                        "0",
                                        "\xf0\x9f\x98\x80"};
    char buf[64] = "";
    int n = rand_r(seed) % 8;

    for (int i = 0; i < n; i++)
        strcat(buf, parts[rand_r(seed) % (sizeof parts / sizeof parts[0])]);
    return json_string(buf);
}

static json_t *random_json_container(unsigned *seed, int depth, int object)
{
    json_t *c = object ? json_object() : json_array();
    int n = rand_r(seed) % 5;

    for (int i = 0; i < n; i++) {
        json_t *v = random_json_value(seed, depth + 1);
        if (object) {
            json_t *k = random_json_string(seed);
            json_object_set_new(c, json_string_value(k), v);
            json_decref(k);
        } else {
            json_array_append_new(c, v);
        }
    }
    return c;
}

static json_t *random_json_value(unsigned *seed, int depth)
{
    switch (depth > 4 ? rand_r(seed) % 6 : rand_r(seed) % 8) {
    case 0:
        return json_integer((json_int_t)rand_r(seed) * (rand_r(seed) % 2 ? 1 : -99991));
    case 1:
        return json_real((double)rand_r(seed) / 7.0);
    case 2:
        return json_boolean(rand_r(seed) % 2);
    case 3:
        return json_null();
    case 4:
    case 5:
        return random_json_string(seed);
    default:
        return random_json_container(seed, depth, rand_r(seed) % 2);
    }
}

#endif
