/* Label files: one label per line, or "ID label" / "ID: label" lines. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/vision.h"

void npk_vis_labels_free(npk_vis_labels *l)
{
    for (uint32_t i = 0; l->name && i < l->count; i++) free(l->name[i]);
    free(l->name);
    memset(l, 0, sizeof *l);
}

const char *npk_vis_label(const npk_vis_labels *l, int64_t id)
{
    return l && id >= 0 && (uint64_t)id < l->count ? l->name[id] : NULL;
}

typedef struct line {
    const char *s;
    size_t n;
} line;

/* The next line without its end and surrounding blanks. */
static bool next_line(const uint8_t *buf, size_t len, size_t *pos, line *out)
{
    if (*pos >= len) return false;
    size_t a = *pos, b = a;
    while (b < len && buf[b] != '\n') b++;
    *pos = b < len ? b + 1 : b;
    while (a < b && (buf[a] == ' ' || buf[a] == '\t')) a++;
    while (b > a && (buf[b - 1] == '\r' || buf[b - 1] == ' ' || buf[b - 1] == '\t')) b--;
    out->s = (const char *)buf + a;
    out->n = b - a;
    return true;
}

/* "12 label", "12: label", "12,label": the id and where the label starts. */
static bool id_form(const line *ln, uint64_t *id, size_t *label)
{
    size_t i = 0;
    uint64_t v = 0;
    while (i < ln->n && isdigit((unsigned char)ln->s[i]) && v < NPK_VIS_MAX_LABELS)
        v = v * 10 + (uint64_t)(ln->s[i++] - '0');
    if (i == 0 || i == ln->n || v >= NPK_VIS_MAX_LABELS) return false;
    size_t j = i;
    if (ln->s[j] == ':' || ln->s[j] == ',')
        j++;
    else if (ln->s[j] != ' ' && ln->s[j] != '\t')
        return false;
    while (j < ln->n && (ln->s[j] == ' ' || ln->s[j] == '\t')) j++;
    if (j == ln->n) return false;
    *id = v;
    *label = j;
    return true;
}

npk_status npk_vis_labels_parse(const uint8_t *buf, size_t len, npk_vis_labels *l, npk_error *err)
{
    memset(l, 0, sizeof *l);
    /* Pass 1: the form and the count. The id form needs every non-empty line in it. */
    size_t pos = 0, lines = 0, last = 0, filled = 0, with_id = 0;
    uint64_t max_id = 0;
    line ln;
    while (next_line(buf, len, &pos, &ln)) {
        lines++;
        if (!ln.n) continue;
        last = lines; /* trailing empty lines are not labels */
        filled++;
        uint64_t id;
        size_t at;
        if (id_form(&ln, &id, &at)) {
            with_id++;
            if (id > max_id) max_id = id;
        }
    }
    const bool ids = filled > 0 && with_id == filled;
    const uint64_t count = ids ? max_id + 1 : last;
    if (count > NPK_VIS_MAX_LABELS)
        return npk_fail(err, NPK_E_LIMIT, "more than %d labels", NPK_VIS_MAX_LABELS);
    l->name = calloc(count ? count : 1, sizeof *l->name);
    if (!l->name) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    l->count = (uint32_t)count;
    pos = 0;
    uint64_t k = 0;
    while (next_line(buf, len, &pos, &ln) && (ids || k < count)) {
        uint64_t id = k++;
        size_t at = 0;
        if (!ln.n) continue;
        if (ids) id_form(&ln, &id, &at);
        if (l->name[id]) {
            npk_vis_labels_free(l);
            return npk_fail(err, NPK_E_FORMAT, "label id %llu is given twice",
                            (unsigned long long)id);
        }
        if (!(l->name[id] = malloc(ln.n - at + 1))) {
            npk_vis_labels_free(l);
            return npk_fail(err, NPK_E_NOMEM, "out of memory");
        }
        for (size_t i = at; i < ln.n; i++) /* control characters would garble the output */
            l->name[id][i - at] = (unsigned char)ln.s[i] < 0x20 ? '?' : ln.s[i];
        l->name[id][ln.n - at] = 0;
    }
    return NPK_OK;
}
