/* Helpers of the USB runtime tests: a fixture model, its plan, an emulated
 * accelerator that knows the model, and an opened device on it. */
#ifndef NPK_ETPU_USB_TEST_H
#define NPK_ETPU_USB_TEST_H

#include "etpu_test.h"
#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_usb.h"

typedef struct rig {
    etpu_fx f;
    npk_etpu_plan p;
    npk_etpu_emu *emu;
    npk_etpu_device *dev;
    uint8_t **in, **out; /* device bytes per input / output layer */
} rig;

static inline void rig_fail(const char *what, const npk_error *err)
{
    fail_msg("%s: %s", what, err->msg);
}

/* Emulator and plan for a fixture model (device not opened yet). */
static inline void rig_prepare(rig *r, const char *model, const npk_etpu_emu_opts *o)
{
    npk_error err = {0};
    memset(r, 0, sizeof *r);
    etpu_load(model, &r->f);
    if (npk_etpu_plan_init(&r->f.m, &r->p, &err)) rig_fail("plan", &err);
    if (npk_etpu_emu_new(o, &r->emu, &err) || npk_etpu_emu_add_model(r->emu, &r->f.m, &err))
        rig_fail("emulator", &err);
    r->in = calloc(r->p.ninputs + 1, sizeof *r->in);
    r->out = calloc(r->p.noutputs + 1, sizeof *r->out);
    uint64_t seed = 7;
    for (uint32_t i = 0; i < r->p.ninputs; i++) {
        size_t n = (size_t)r->p.eo->inputs[i].size_bytes;
        r->in[i] = malloc(n);
        for (size_t k = 0; k < n; k++) r->in[i][k] = (uint8_t)npk_rand(&seed);
    }
    for (uint32_t i = 0; i < r->p.noutputs; i++)
        r->out[i] = calloc((size_t)r->p.eo->outputs[i].size_bytes, 1);
}

static inline void rig_open(rig *r, const char *model, const npk_etpu_emu_opts *o)
{
    npk_error err = {0};
    rig_prepare(r, model, o);
    if (npk_etpu_open(npk_etpu_emu_transport(r->emu), NULL, &r->dev, &err)) rig_fail("open", &err);
}

static inline npk_status rig_run(rig *r, npk_etpu_run_info *info, npk_error *err)
{
    return npk_etpu_run(r->dev, &r->p, (const uint8_t *const *)r->in, r->out, info, err);
}

static inline void rig_close(rig *r)
{
    for (uint32_t i = 0; i < r->p.ninputs; i++) free(r->in[i]);
    for (uint32_t i = 0; i < r->p.noutputs; i++) free(r->out[i]);
    free(r->in);
    free(r->out);
    npk_etpu_close(r->dev);
    npk_etpu_emu_free(r->emu);
    npk_etpu_plan_free(&r->p);
    etpu_unload(&r->f);
}

static inline void assert_no_violation(const npk_etpu_emu *e)
{
    const char *v = npk_etpu_emu_violation(e);
    if (v) fail_msg("emulator: %s", v);
}

/* The emulator's violation contains `part`. */
static inline void assert_violation(const npk_etpu_emu *e, const char *part)
{
    const char *v = npk_etpu_emu_violation(e);
    if (!v) fail_msg("no violation recorded (expected \"%s\")", part);
    if (!strstr(v, part)) fail_msg("violation \"%s\" does not mention \"%s\"", v, part);
}

#endif
