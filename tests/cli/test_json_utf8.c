/* Every --json output is valid UTF-8 JSON whatever the input holds: names
 * read from damaged files with bytes that are not UTF-8 are repaired (each
 * invalid byte becomes U+FFFD) and a warning says so. Checked with the
 * library's validator and, independently, with Python's strict decoder and
 * json module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/mgk.h"

static void test_utf8_rules(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t len;
        size_t seq;
    } cases[] = {
        {"A", 1, 1},
        {"\xc3\xa9", 2, 2},         /* e acute */
        {"\xe2\x82\xac", 3, 3},     /* euro sign */
        {"\xf0\x9f\x98\x80", 4, 4}, /* emoji */
        {"\xf4\x8f\xbf\xbf", 4, 4}, /* U+10FFFF */
        {"\x80", 1, 0},             /* stray continuation */
        {"\xc0\x80", 2, 0},         /* overlong NUL */
        {"\xc1\xbf", 2, 0},         /* overlong */
        {"\xe0\x80\x80", 3, 0},     /* overlong */
        {"\xed\xa0\x80", 3, 0},     /* surrogate */
        {"\xf0\x80\x80\x80", 4, 0}, /* overlong */
        {"\xf4\x90\x80\x80", 4, 0}, /* past U+10FFFF */
        {"\xf5\x80\x80\x80", 4, 0},
        {"\xe2\x82", 2, 0}, /* cut short */
        {"\xff", 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_int_equal(npk_utf8_seq((const unsigned char *)cases[i].s, cases[i].len),
                         cases[i].seq);
    size_t bad;
    char *f = npk_utf8_sanitize("a\xffz\xe2\x82", 5, &bad);
    assert_string_equal(f, "a\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf\xbd");
    assert_int_equal(bad, 3);
    assert_true(npk_utf8_valid(f, strlen(f)));
    free(f);
}

/* Python: strict UTF-8, then json.loads; prints OK. */
static void python_accepts(const char *path)
{
    npk_run r = npk_python("import json, sys\n"
                           "json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))\n"
                           "print('OK')\n",
                           path);
    if (r.status != 0 || !strstr(r.out, "OK")) fail_msg("python rejects %s: %s", path, r.err);
    npk_run_free(&r);
}

static void check_json_run(npk_run *r, const char *name)
{
    assert_int_equal(r->status, 0);
    assert_true(npk_utf8_valid(r->out, strlen(r->out)));
    assert_non_null(strstr(r->err, "not UTF-8: replaced by U+FFFD"));
    FILE *f = fopen(npk_tmp(name), "wb");
    fputs(r->out, f);
    fclose(f);
    python_accepts(npk_tmp(name));
}

/* Was: `tensor info --json` on a safetensors file with a name that is not
 * UTF-8 printed the raw bytes. */
static void test_safetensors_names(void **state)
{
    (void)state;
    if (!npk_safetensors_available()) skip();
    static const char json[] = "{\"bad\xff\xfename\":{\"dtype\":\"U8\",\"shape\":[2],"
                               "\"data_offsets\":[0,2]}}";
    size_t jl = sizeof json - 1, hl = (jl + 7) / 8 * 8;
    uint8_t *b = calloc(1, 8 + hl + 2);
    npk_st64le(b, hl);
    memcpy(b + 8, json, jl);
    memset(b + 8 + jl, ' ', hl - jl);
    const char *p = npk_tmp("badname.safetensors");
    FILE *f = fopen(p, "wb");
    fwrite(b, 1, 8 + hl + 2, f);
    fclose(f);
    free(b);
    npk_run r = npk_cli("tensor info --json %s", p);
    check_json_run(&r, "tensor_info.json");
    assert_non_null(strstr(r.out, "bad\xef\xbf\xbd\xef\xbf\xbdname"));
    npk_run_free(&r);
    /* `info --json` lists tensors under their names (keys). */
    r = npk_cli("info --json %s", p);
    check_json_run(&r, "info.json");
    npk_run_free(&r);
    /* Such a name is not copied into a new safetensors file. */
    r = npk_cli("tensor convert %s -o %s", p, npk_tmp("copy.safetensors"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "not valid UTF-8"));
    assert_false(npk_exists(npk_tmp("copy.safetensors")));
    npk_run_free(&r);
}

/* Was: `mgk info --json --records --symbols` on a damaged MGK printed a
 * record name's raw bytes. */
static void test_mgk_names(void **state)
{
    (void)state;
    if (!npk_safetensors_available()) skip();
    static const npk_mgk_synth_layer ls[] = {{16, 8, 3, 3, 8, 1, 1, NULL}};
    npk_mgk_synth_spec spec = {.layers = ls, .nlayers = 1, .seed = 1};
    uint8_t *buf;
    size_t len;
    npk_error err = {0};
    assert_int_equal(npk_mgk_synth(&spec, &buf, &len, &err), NPK_OK);
    npk_mgk_model m;
    assert_int_equal(npk_mgk_parse(buf, len, &m, &err), NPK_OK);
    assert_true(m.nrecords > 0 && m.records[0].name.len > 1);
    size_t at = (size_t)((const uint8_t *)m.records[0].name.s - m.data);
    size_t sym = m.elf.nsymbols ? (size_t)((const uint8_t *)m.elf.symbols[0].name.s - m.data) : 0;
    npk_mgk_free(&m);
    buf[at] = 0xff;
    buf[at + 1] = 0xc0;
    if (sym) buf[sym] = 0x80;
    const char *p = npk_tmp("badname.mgk");
    FILE *f = fopen(p, "wb");
    fwrite(buf, 1, len, f);
    fclose(f);
    free(buf);
    npk_run r = npk_cli("mgk info --json --records --symbols %s", p);
    check_json_run(&r, "mgk.json");
    npk_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_rules),
        cmocka_unit_test(test_safetensors_names),
        cmocka_unit_test(test_mgk_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
