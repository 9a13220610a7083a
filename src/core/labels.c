/* Label files for classification results (npukit/classify.h). */
#include <stdlib.h>
#include <string.h>

#include "npukit/checked.h"
#include "npukit/classify.h"
#include "npukit/file.h"

typedef struct span {
    size_t at, len; /* a line without its end of line */
} span;

static bool blank(uint8_t c)
{
    return c == ' ' || c == '\t';
}

/* "ID LABEL" / "ID: LABEL": the id and where the label starts, or false. */
static bool indexed_line(const uint8_t *p, size_t n, int64_t *id, size_t *label)
{
    size_t i = 0;
    while (i < n && blank(p[i])) i++;
    size_t d = i;
    int64_t v = 0;
    while (i < n && p[i] >= '0' && p[i] <= '9' && i - d < 9) v = v * 10 + (p[i++] - '0');
    if (i == d || i >= n || !(blank(p[i]) || p[i] == ':')) return false;
    while (i < n && (blank(p[i]) || p[i] == ':')) i++;
    if (i >= n) return false;
    *id = v;
    *label = i;
    return true;
}

npk_status npk_labels_parse(const uint8_t *buf, size_t len, npk_labels *l, npk_error *err)
{
    memset(l, 0, sizeof *l);
    size_t start = len >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf ? 3 : 0;
    /* Lines: count, check lengths and bytes. */
    size_t nlines = 0;
    for (size_t i = start, s = start; i <= len; i++) {
        if (i < len && buf[i] == 0)
            return npk_fail_at(err, NPK_E_FORMAT, i, "a NUL byte in a label file");
        if (i == len || buf[i] == '\n') {
            if (i == len && i == s) break; /* nothing after the last end of line */
            if (i - s > NPK_LABELS_MAX_LINE)
                return npk_fail_at(err, NPK_E_LIMIT, s, "a line of %zu bytes (limit %u)", i - s,
                                   NPK_LABELS_MAX_LINE);
            if (++nlines > NPK_LABELS_MAX_COUNT)
                return npk_fail_at(err, NPK_E_LIMIT, s, "more than %u lines", NPK_LABELS_MAX_COUNT);
            s = i + 1;
        }
    }
    if (!nlines) return npk_fail(err, NPK_E_FORMAT, "no labels in the file");
    size_t bytes, arr;
    if (!npk_mul_sz(nlines, sizeof(span) + sizeof(char *) + sizeof(int64_t), &arr) ||
        !npk_add_sz(arr, len, &bytes) || !npk_add_sz(bytes, 1, &bytes))
        return npk_fail(err, NPK_E_LIMIT, "label file too large");
    uint8_t *mem = malloc(bytes);
    if (!mem) return npk_fail(err, NPK_E_NOMEM, "out of memory for %zu labels", nlines);
    span *lines = (span *)mem;
    char **name = (char **)(mem + nlines * sizeof(span));
    int64_t *id = (int64_t *)(mem + nlines * (sizeof(span) + sizeof(char *)));
    char *text = (char *)(mem + arr);
    memcpy(text, buf, len);
    text[len] = 0;

    size_t n = 0;
    for (size_t i = start, s = start; i <= len && n < nlines; i++)
        if (i == len || buf[i] == '\n') {
            size_t e = i;
            if (e > s && buf[e - 1] == '\r') e--;
            lines[n].at = s, lines[n].len = e - s;
            n++;
            s = i + 1;
        }
    /* Indexed when every non-empty line starts with an id. */
    bool indexed = true;
    size_t nonempty = 0;
    for (size_t i = 0; i < nlines && indexed; i++) {
        int64_t v;
        size_t lab;
        size_t k = 0;
        while (k < lines[i].len && blank(buf[lines[i].at + k])) k++;
        if (k == lines[i].len) continue;
        nonempty++;
        indexed = indexed_line(buf + lines[i].at, lines[i].len, &v, &lab);
    }
    indexed = indexed && nonempty > 0;

    uint32_t count = 0;
    for (size_t i = 0; i < nlines; i++) {
        size_t at = lines[i].at, ln = lines[i].len, lab = 0;
        int64_t v = (int64_t)i;
        if (indexed) {
            size_t k = 0;
            while (k < ln && blank(buf[at + k])) k++;
            if (k == ln) continue;
            indexed_line(buf + at, ln, &v, &lab);
            for (uint32_t j = 0; j < count; j++)
                if (id[j] == v) {
                    free(mem);
                    return npk_fail_at(err, NPK_E_FORMAT, at, "class id %lld given twice",
                                       (long long)v);
                }
        }
        while (lab < ln && blank(buf[at + lab])) lab++;
        while (ln > lab && blank(buf[at + ln - 1])) ln--;
        text[at + ln] = 0;
        name[count] = text + at + lab;
        id[count] = v;
        count++;
    }
    l->count = count;
    l->indexed = indexed;
    l->name = name;
    l->id = id;
    l->mem = mem;
    return NPK_OK;
}

npk_status npk_labels_load(const char *path, npk_labels *l, npk_error *err)
{
    npk_mapped m;
    memset(l, 0, sizeof *l);
    npk_status st = npk_map_file(path, &m, err);
    if (st) return st;
    st = npk_labels_parse(m.data, m.size, l, err);
    npk_unmap_file(&m);
    return st;
}

void npk_labels_free(npk_labels *l)
{
    free(l->mem);
    memset(l, 0, sizeof *l);
}

const char *npk_labels_name(const npk_labels *l, uint32_t c, uint32_t nclasses)
{
    if (!l || !l->count) return NULL;
    if (l->indexed) {
        for (uint32_t i = 0; i < l->count; i++)
            if (l->id[i] == (int64_t)c) return l->name[i];
        return NULL;
    }
    uint64_t line = c;
    if (nclasses >= 1 && (uint64_t)l->count + 1 == nclasses) {
        if (c == 0) return "background";
        line = (uint64_t)c - 1;
    } else if ((uint64_t)l->count == (uint64_t)nclasses + 1) {
        line = (uint64_t)c + 1;
    }
    return line < l->count ? l->name[line] : NULL;
}
