/* The USB protocol facts and their enforcement: the CSR table against the
 * reference's numbers; the emulated accelerator rejecting each kind of
 * protocol violation (so a runtime bug cannot pass silently); the firmware
 * upload over DFU; a device that vanishes at every transfer of a run;
 * malformed hints rejected before any transfer; a stuck chip timing out. */
#include "etpu_usb_test.h"

/* ---- the table ---- */

static void test_csr_table(void **state)
{
    (void)state;
    /* Addresses as listed in the reference (6.4) and libedgetpu's beagle offsets. */
    static const struct {
        npk_etpu_csr_id id;
        uint32_t addr;
    } want[] = {
        {NPK_ETPU_CSR_SCU_CTRL_0, 0x1A30C},      {NPK_ETPU_CSR_SCU_CTRL_2, 0x1A314},
        {NPK_ETPU_CSR_SCU_CTRL_3, 0x1A318},      {NPK_ETPU_CSR_GCBB_CREDIT0, 0x1907C},
        {NPK_ETPU_CSR_SCALAR_CORE_RUN, 0x44018}, {NPK_ETPU_CSR_IDLE_REGISTER, 0x4A000},
        {NPK_ETPU_CSR_TILECONFIG0, 0x48788},     {NPK_ETPU_CSR_TILE_DEEP_SLEEP, 0x40020},
        {NPK_ETPU_CSR_OMC0_00, 0x1A000},         {NPK_ETPU_CSR_DESCR_EP, 0x4C148},
        {NPK_ETPU_CSR_MULTI_BO_EP, 0x4C160},     {NPK_ETPU_CSR_OUTFEED_CHUNK_LENGTH, 0x4C058},
        {NPK_ETPU_CSR_OMC0_D4, 0x1A0D4},         {NPK_ETPU_CSR_OMC0_D8, 0x1A0D8},
        {NPK_ETPU_CSR_RAMBIST_CTRL_1, 0x1A704},  {NPK_ETPU_CSR_SCU_CTR_7, 0x1A33C},
        {NPK_ETPU_CSR_MST_ABM_EN, 0x1A600},      {NPK_ETPU_CSR_MST_ERR_RESP_ISR_MASK, 0x1A658},
        {NPK_ETPU_CSR_AVDATA_POP_RUN, 0x44158},  {NPK_ETPU_CSR_TILE_OP_RUN, 0x400C0},
        {NPK_ETPU_CSR_TILE_MESH0_RUN, 0x40250},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(npk_etpu_csrs[want[i].id].addr, want[i].addr);
    /* 32-bit access exactly for the 0x1xxxx block; addresses unique; lookups. */
    for (size_t i = 0; i < NPK_ETPU_CSR_COUNT; i++) {
        const npk_etpu_csr *c = &npk_etpu_csrs[i];
        assert_int_equal(c->bits, (c->addr >> 16) == 1 ? 32 : 64);
        assert_ptr_equal(npk_etpu_csr_at(c->addr), c);
    }
    assert_null(npk_etpu_csr_at(0x12345));
    /* Fields per beagle_csr_helper.h. */
    assert_int_equal(npk_etpu_field_mask(NPK_ETPU_F_SCU3_FORCE_SLEEP), 0x00C00000);
    assert_int_equal(npk_etpu_field_mask(NPK_ETPU_F_SCU3_CUR_PWR_STATE), 0x300);
    assert_int_equal(npk_etpu_field_mask(NPK_ETPU_F_SCU3_GCB_CLKDIV), 0x30000000);
    assert_int_equal(npk_etpu_field_mask(NPK_ETPU_F_SCU0_USB_INACT_PHY_MODE), 0x3800);
    assert_int_equal(npk_etpu_field_mask(NPK_ETPU_F_SCU0_PCIE_INACT_PHY_MODE), 0x700);
    assert_int_equal(npk_etpu_field_mask(NPK_ETPU_F_SCU2_GATED_GCB), 0xC0000);
    uint64_t ds = npk_etpu_field_set(NPK_ETPU_F_DEEP_SLEEP_TO_WAKE,
                                     npk_etpu_field_set(NPK_ETPU_F_DEEP_SLEEP_TO_SLEEP, 0, 2), 30);
    assert_int_equal(ds, 0x1E02);
    uint64_t s3 = npk_etpu_csrs[NPK_ETPU_CSR_SCU_CTRL_3].reset;
    assert_int_equal(npk_etpu_field_get(NPK_ETPU_F_SCU3_FORCE_SLEEP, s3), 0);
    assert_int_equal(npk_etpu_field_get(NPK_ETPU_F_SCU3_8051_CLK_250M, s3), 1);
    assert_int_equal(npk_etpu_field_set(NPK_ETPU_F_SCU3_FORCE_SLEEP, s3, 3), 0x80C50410);
    /* Every field inside its register's width. */
    for (size_t f = 0; f < NPK_ETPU_FIELD_COUNT; f++)
        assert_true(npk_etpu_fields[f].lo + npk_etpu_fields[f].width <=
                    npk_etpu_csrs[npk_etpu_fields[f].reg].bits);
}

/* ---- the emulator rejects violations ---- */

static npk_status ctl(npk_etpu_emu *e, uint8_t type, uint8_t req, uint32_t addr, uint8_t *data,
                      uint16_t len, npk_error *err)
{
    npk_etpu_transport *t = npk_etpu_emu_transport(e);
    npk_etpu_setup s = {type, req, (uint16_t)(addr & 0xffff), (uint16_t)(addr >> 16), len};
    size_t done;
    return t->ops->control(t->ctx, &s, data, &done, 100, err);
}

static npk_status bulk_out(npk_etpu_emu *e, const uint8_t *p, size_t n, npk_error *err)
{
    npk_etpu_transport *t = npk_etpu_emu_transport(e);
    return t->ops->bulk_out(t->ctx, NPK_ETPU_EP_OUT, p, n, 100, err);
}

static npk_status bulk_in(npk_etpu_emu *e, uint8_t ep, uint8_t *p, size_t cap, npk_error *err)
{
    npk_etpu_transport *t = npk_etpu_emu_transport(e);
    size_t got;
    return t->ops->bulk_in(t->ctx, ep, p, cap, &got, 100, err);
}

static void frame(uint8_t *h, uint32_t len, uint8_t tag)
{
    npk_st32le(h, len);
    h[4] = tag;
    h[5] = h[6] = h[7] = 0;
}

/* After a violation every later transfer fails too. */
static void assert_halted(npk_etpu_emu *e)
{
    uint8_t b[8] = {0};
    npk_error err = {0};
    assert_int_equal(ctl(e, NPK_ETPU_CSR_READ, 1, 0x1a318, b, 4, &err), NPK_E_DEVICE);
}

static void test_emulator_rejects(void **state)
{
    (void)state;
    npk_error err = {0};
    uint8_t b[64] = {0};
    rig r;

    /* Bulk before the initialisation. */
    rig_prepare(&r, "dense_256_edgetpu.tflite", NULL);
    frame(b, 4224, 0);
    assert_int_equal(bulk_out(r.emu, b, 8, &err), NPK_E_DEVICE);
    assert_violation(r.emu, "before the initialisation finished");
    assert_non_null(strstr(err.msg, "protocol violation"));
    assert_halted(r.emu);
    rig_close(&r);

    /* A 32-bit register read as 64-bit; an unknown register. */
    rig_prepare(&r, "dense_256_edgetpu.tflite", NULL);
    assert_int_equal(ctl(r.emu, NPK_ETPU_CSR_READ, 0, 0x1a318, b, 8, &err), NPK_E_DEVICE);
    assert_violation(r.emu, "scu_ctrl_3 (0x1a318) is a 32-bit register");
    rig_close(&r);
    rig_prepare(&r, "dense_256_edgetpu.tflite", NULL);
    assert_int_equal(ctl(r.emu, NPK_ETPU_CSR_READ, 0, 0x44020, b, 8, &err), NPK_E_DEVICE);
    assert_violation(r.emu, "0x44020 is not a register");
    rig_close(&r);

    /* Run control before reset; a tile write before the broadcast; an RMW that clobbers. */
    rig_prepare(&r, "dense_256_edgetpu.tflite", NULL);
    b[0] = 1;
    assert_int_equal(ctl(r.emu, NPK_ETPU_CSR_WRITE, 0, 0x44018, b, 8, &err), NPK_E_DEVICE);
    assert_violation(r.emu, "before the chip left reset");
    rig_close(&r);
    rig_prepare(&r, "dense_256_edgetpu.tflite", NULL);
    assert_int_equal(ctl(r.emu, NPK_ETPU_CSR_WRITE, 0, 0x40020, b, 8, &err), NPK_E_DEVICE);
    assert_violation(r.emu, "before a tileconfig0 broadcast");
    rig_close(&r);
    rig_prepare(&r, "dense_256_edgetpu.tflite", NULL);
    npk_st32le(b, 0);
    assert_int_equal(ctl(r.emu, NPK_ETPU_CSR_WRITE, 1, 0x1a30c, b, 4, &err), NPK_E_DEVICE);
    assert_violation(r.emu, "read-modify-write");
    rig_close(&r);

    /* Quit reset without the credit pulse. */
    rig_prepare(&r, "dense_256_edgetpu.tflite", NULL);
    npk_st32le(b, 0x80C50410); /* force sleep 3 */
    assert_int_equal(ctl(r.emu, NPK_ETPU_CSR_WRITE, 1, 0x1a318, b, 4, &err), NPK_OK);
    for (int i = 0; i < 3; i++) ctl(r.emu, NPK_ETPU_CSR_READ, 1, 0x1a318, b, 4, &err);
    assert_int_equal(npk_etpu_field_get(NPK_ETPU_F_SCU3_CUR_PWR_STATE, npk_ld32le(b)), 2);
    npk_st32le(b, 0x80850610); /* force sleep 2 */
    assert_int_equal(ctl(r.emu, NPK_ETPU_CSR_WRITE, 1, 0x1a318, b, 4, &err), NPK_E_DEVICE);
    assert_violation(r.emu, "gcbb_credit0 was pulsed");
    rig_close(&r);

    /* After a correct open: framing, order, sizes, reads. */
    struct {
        const char *part;
        int kind;
    } cases[] = {
        {"header bytes 4..7", 0},
        {"must start with its instructions", 1},
        {"starts with a chunk of that size", 2},
        {"expects parameters (tag 2, 67584 bytes); got tag 1", 3},
        {"equal no first instruction chunk", 4},
        {"no parameters", 5},
        {"no event pending", 7},
        {"no output pending", 8},
        {"overflow", 9},
        {"waits for the host to read", 10},
        {"endpoint 0x02", 11},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        npk_etpu_emu_opts o = {.chunk_size = 100};
        rig_open(&r,
                 cases[c].kind == 9 ? "split_concat_edgetpu.tflite" : "dense_256_edgetpu.tflite",
                 &o);
        const npk_etpu_executable *pc = r.p.pc, *eo = r.p.eo;
        uint8_t *buf = calloc(1, 70000);
        npk_status st = NPK_OK;
        npk_error e = {0};
        switch (cases[c].kind) {
        case 0:
            frame(buf, 16, 0);
            buf[6] = 1;
            st = bulk_out(r.emu, buf, 8, &e);
            break;
        case 1:
            frame(buf, 256, 1);
            st = bulk_out(r.emu, buf, 8 + 256, &e);
            break;
        case 2:
            frame(buf, 16, 0);
            st = bulk_out(r.emu, buf, 8 + 16, &e);
            break;
        case 3: /* EO instructions, then parameters instead of the input */
        case 4:
        case 5:
        case 7:
        case 10:
            frame(buf, (uint32_t)pc->bitstreams[0].size, 0);
            memcpy(buf + 8, pc->bitstreams[0].data, pc->bitstreams[0].size);
            if (cases[c].kind == 4) buf[8 + 5] ^= 1;
            if (cases[c].kind == 5) { /* EO, never loaded */
                frame(buf, (uint32_t)eo->bitstreams[0].size, 0);
                memcpy(buf + 8, eo->bitstreams[0].data, eo->bitstreams[0].size);
            }
            st = bulk_out(
                r.emu, buf,
                8 + (cases[c].kind == 5 ? eo->bitstreams[0].size : pc->bitstreams[0].size), &e);
            if (st) break;
            if (cases[c].kind == 3) {
                frame(buf, 256, 1);
                st = bulk_out(r.emu, buf, 8 + 256, &e);
            } else if (cases[c].kind == 5) {
                frame(buf, 256, 1);
                st = bulk_out(r.emu, buf, 8 + 256, &e);
            } else if (cases[c].kind == 7 || cases[c].kind == 10) {
                frame(buf, (uint32_t)pc->parameters_size, 2);
                memcpy(buf + 8, pc->parameters, pc->parameters_size);
                st = bulk_out(r.emu, buf, 8 + pc->parameters_size, &e);
                if (!st && cases[c].kind == 7) {
                    st = bulk_in(r.emu, NPK_ETPU_EP_EVENT, buf, 16, &e);
                    assert_int_equal(st, NPK_OK);
                    st = bulk_in(r.emu, NPK_ETPU_EP_EVENT, buf, 16, &e);
                } else if (!st) {
                    frame(buf, 16, 0);
                    st = bulk_out(r.emu, buf, 8, &e); /* before reading the event */
                }
            }
            break;
        case 8: st = bulk_in(r.emu, NPK_ETPU_EP_OUTPUT, buf, 32768, &e); break;
        case 9: { /* a run up to the outputs, then a read smaller than the 100-byte chunk */
            npk_etpu_run_info info;
            assert_int_equal(rig_run(&r, &info, &e), NPK_OK);
            const npk_etpu_executable *x = r.p.eo;
            frame(buf, (uint32_t)x->bitstreams[0].size, 0);
            memcpy(buf + 8, x->bitstreams[0].data, x->bitstreams[0].size);
            assert_int_equal(bulk_out(r.emu, buf, 8 + x->bitstreams[0].size, &e), NPK_OK);
            for (uint32_t i = 0; i < 3; i++) {
                uint32_t n = (uint32_t)x->inputs[i].size_bytes;
                frame(buf, n, 1);
                assert_int_equal(bulk_out(r.emu, buf, 8 + n, &e), NPK_OK);
            }
            st = bulk_in(r.emu, NPK_ETPU_EP_OUTPUT, buf, 99, &e);
            break;
        }
        case 11: {
            npk_etpu_transport *t = npk_etpu_emu_transport(r.emu);
            st = t->ops->bulk_out(t->ctx, 0x02, buf, 8, 100, &e);
            break;
        }
        }
        if (st == NPK_OK) fail_msg("case \"%s\": accepted", cases[c].part);
        assert_violation(r.emu, cases[c].part);
        assert_halted(r.emu);
        free(buf);
        rig_close(&r);
    }
}

/* Input over-reads and overlapping input DMAs (as PoseNet's): the runtime
 * sends each layer's own buffer, zero-padded; the emulator checks both. */
static void modify_inputs(rig *r)
{
    npk_error err = {0};
    npk_etpu_executable *eo = (npk_etpu_executable *)r->p.eo;
    eo->hints[2].size_in_bytes = 96;   /* "inputs/rnn1" (64 bytes) read 32 bytes too far */
    eo->hints[3].meta.name = "input1"; /* a second DMA of "input1", overlapping the first */
    eo->hints[3].offset_in_bytes = 100;
    eo->hints[3].size_in_bytes = 92;
    npk_etpu_plan_free(&r->p);
    if (npk_etpu_plan_init(&r->f.m, &r->p, &err)) rig_fail("plan", &err);
    if (npk_etpu_open(npk_etpu_emu_transport(r->emu), NULL, &r->dev, &err)) rig_fail("open", &err);
}

static void test_input_padding(void **state)
{
    (void)state;
    rig r;
    npk_error err = {0};
    rig_prepare(&r, "split_concat_edgetpu.tflite", NULL);
    modify_inputs(&r);
    assert_int_equal(r.p.input_span[1], 96);
    if (rig_run(&r, NULL, &err)) rig_fail("run", &err);
    assert_no_violation(r.emu);
    size_t n;
    const uint8_t *got = npk_etpu_emu_input(r.emu, "inputs/rnn1", &n);
    assert_int_equal(n, 96);
    assert_memory_equal(got, r.in[1], 64);
    for (size_t i = 64; i < 96; i++) assert_int_equal(got[i], 0);
    got = npk_etpu_emu_input(r.emu, "input1", &n);
    assert_int_equal(n, 192);
    assert_memory_equal(got, r.in[0], 192);

    /* A runtime that pads with garbage, or sends other bytes in the overlap, is caught. */
    for (int c = 0; c < 2; c++) {
        if (c) {
            rig_close(&r);
            rig_prepare(&r, "split_concat_edgetpu.tflite", NULL);
            modify_inputs(&r);
            assert_int_equal(rig_run(&r, NULL, &err), NPK_OK);
        }
        const npk_etpu_executable *eo = r.p.eo;
        uint8_t *buf = calloc(1, 8 + eo->bitstreams[0].size);
        frame(buf, (uint32_t)eo->bitstreams[0].size, 0);
        memcpy(buf + 8, eo->bitstreams[0].data, eo->bitstreams[0].size);
        assert_int_equal(bulk_out(r.emu, buf, 8 + eo->bitstreams[0].size, &err), NPK_OK);
        frame(buf, 192, 1);
        memcpy(buf + 8, r.in[0], 192);
        assert_int_equal(bulk_out(r.emu, buf, 8 + 192, &err), NPK_OK);
        frame(buf, 96, 1);
        memcpy(buf + 8, r.in[1], 64);
        memset(buf + 8 + 64, 0, 32);
        if (c == 0) buf[8 + 70] = 1;
        npk_status st = bulk_out(r.emu, buf, 8 + 96, &err);
        if (c == 1) {
            assert_int_equal(st, NPK_OK);
            frame(buf, 92, 1);
            memcpy(buf + 8, r.in[0] + 100, 92);
            buf[8 + 50] ^= 0xFF;
            st = bulk_out(r.emu, buf, 8 + 92, &err);
        }
        assert_int_equal(st, NPK_E_DEVICE);
        assert_violation(r.emu, c == 0 ? "the padding must be zero" : "disagree at byte 150");
        free(buf);
    }
    rig_close(&r);
}

/* ---- firmware ---- */

static void test_dfu_upload(void **state)
{
    (void)state;
    /* A dummy image the size of apex_latest_single_ep.bin, written and read back as a file. */
    const size_t size = 10783;
    uint8_t *img = malloc(size);
    uint64_t seed = 3;
    for (size_t i = 0; i < size; i++) img[i] = (uint8_t)npk_rand(&seed);
    npk_error err = {0};
    const char *path = npk_tmp("dummy_firmware.bin");
    assert_int_equal(npk_write_file(path, img, size, &err), NPK_OK);
    npk_mapped fw;
    assert_int_equal(npk_map_file(path, &fw, &err), NPK_OK);

    npk_etpu_emu_opts o = {.dfu = true};
    rig r;
    rig_prepare(&r, "dense_256_edgetpu.tflite", &o);
    npk_etpu_transport *t = npk_etpu_emu_transport(r.emu);
    assert_true(npk_etpu_transport_is_dfu(t));
    /* Without firmware: a clear error, nothing sent. */
    assert_int_equal(npk_etpu_open(t, NULL, &r.dev, &err), NPK_E_ARG);
    assert_non_null(strstr(err.msg, "--firmware"));
    assert_int_equal(npk_etpu_emu_get_stats(r.emu)->control, 0);
    npk_error_clear(&err);
    npk_etpu_open_opts oo = {.firmware = fw.data, .firmware_size = fw.size};
    if (npk_etpu_open(t, &oo, &r.dev, &err)) rig_fail("open with firmware", &err);
    const npk_etpu_emu_stats *s = npk_etpu_emu_get_stats(r.emu);
    assert_no_violation(r.emu);
    assert_true(s->app_mode);
    assert_int_equal(s->dfu_blocks, (size + 255) / 256);
    assert_int_equal(s->firmware_size, size);
    size_t held;
    const uint8_t *h = npk_etpu_emu_firmware(r.emu, &held);
    assert_int_equal(held, size);
    assert_memory_equal(h, img, size);
    assert_int_equal(t->vid, NPK_ETPU_APP_VID);
    assert_int_equal(t->pid, NPK_ETPU_APP_PID);
    if (rig_run(&r, NULL, &err)) rig_fail("run after DFU", &err);
    assert_no_violation(r.emu);
    rig_close(&r);
    npk_unmap_file(&fw);

    /* The bootloader insists on GETSTATUS between blocks and on block order. */
    for (int c = 0; c < 3; c++) {
        rig_prepare(&r, "dense_256_edgetpu.tflite", &o);
        uint8_t blk[256] = {0}, st6[6];
        assert_int_equal(ctl(r.emu, NPK_ETPU_DFU_OUT, NPK_ETPU_DFU_DNLOAD, 0, blk, 256, &err),
                         NPK_OK);
        if (c == 1)
            assert_int_equal(ctl(r.emu, NPK_ETPU_DFU_IN, NPK_ETPU_DFU_GETSTATUS, 0, st6, 6, &err),
                             NPK_OK);
        npk_status st = c == 2 ? ctl(r.emu, NPK_ETPU_CSR_READ, 1, 0x1a318, blk, 4, &err)
                               : ctl(r.emu, NPK_ETPU_DFU_OUT, NPK_ETPU_DFU_DNLOAD, c == 1 ? 2 : 1,
                                     blk, 256, &err);
        assert_int_equal(st, NPK_E_DEVICE);
        assert_violation(r.emu, c == 0   ? "acknowledged by GETSTATUS"
                                : c == 1 ? "expected block 1"
                                         : "no CSR access");
        rig_close(&r);
    }
    free(img);
}

/* ---- failures ---- */

/* The device vanishes at transfer v, for every v of an open and two runs:
 * a clean NPK_E_DEVICE naming the disappearance, never a hang or crash,
 * and later runs fail fast. */
static void test_vanish_everywhere(void **state)
{
    (void)state;
    rig r;
    npk_error err = {0};
    rig_open(&r, "dense_256_edgetpu.tflite", NULL);
    assert_int_equal(rig_run(&r, NULL, &err), NPK_OK);
    assert_int_equal(rig_run(&r, NULL, &err), NPK_OK);
    const npk_etpu_emu_stats *s = npk_etpu_emu_get_stats(r.emu);
    const uint64_t total = s->control + s->bulk_out + s->bulk_in;
    rig_close(&r);
    assert_true(total > 50);
    for (uint64_t v = 1; v <= total + 1; v++) {
        npk_etpu_emu_opts o = {.vanish_at = v};
        rig_prepare(&r, "dense_256_edgetpu.tflite", &o);
        npk_error e = {0};
        npk_status st = npk_etpu_open(npk_etpu_emu_transport(r.emu), NULL, &r.dev, &e);
        for (int run = 0; !st && run < 2; run++) st = rig_run(&r, NULL, &e);
        if (v > total) {
            assert_int_equal(st, NPK_OK);
        } else {
            assert_int_equal(st, NPK_E_DEVICE);
            if (!strstr(e.msg, "disappeared"))
                fail_msg("transfer %llu: %s", (unsigned long long)v, e.msg);
            assert_no_violation(r.emu);
            if (r.dev) { /* failed in a run: the device refuses further runs */
                npk_error e2 = {0};
                assert_int_equal(rig_run(&r, NULL, &e2), NPK_E_DEVICE);
                assert_non_null(strstr(e2.msg, "reopen"));
            }
        }
        rig_close(&r);
    }
}

static void test_stuck_chip_times_out(void **state)
{
    (void)state;
    npk_etpu_emu_opts o = {.stuck_power = true};
    rig r;
    npk_error err = {0};
    rig_prepare(&r, "dense_256_edgetpu.tflite", &o);
    npk_etpu_open_opts oo = {.timeout_ms = 50};
    assert_int_equal(npk_etpu_open(npk_etpu_emu_transport(r.emu), &oo, &r.dev, &err),
                     NPK_E_TIMEOUT);
    assert_non_null(strstr(err.msg, "cur_pwr_state did not become 2"));
    assert_null(r.dev);
    rig_close(&r);
}

/* Malformed hints: each is rejected by the plan, and nothing reaches the device. */
static void test_malformed_hints(void **state)
{
    (void)state;
    rig r;
    npk_error err = {0};
    rig_open(&r, "split_concat_edgetpu.tflite", NULL);
    const npk_etpu_emu_stats *s = npk_etpu_emu_get_stats(r.emu);
    const uint64_t before = s->control + s->bulk_out + s->bulk_in;
    npk_etpu_executable *eo = (npk_etpu_executable *)r.p.eo, *pc = (npk_etpu_executable *)r.p.pc;
    static const char *const want[] = {
        "DMA hint 1: offset 0, size 0",
        "instruction chunk 3 of 1",
        "output activations must be OUTFEED",
        "no input layer named \"nope\"",
        "past the end of input",
        "hint 0 must send instructions",
        "BASE_ADDRESS_SCRATCH",
        "interrupts come from the device",
        "no input layer named \"input1\"",
        "different caching tokens",
        "two input layers",
        "parameters 0 + 64 exceed",
    };
    for (int c = 0; c < 12; c++) {
        npk_etpu_dma_hint h1 = eo->hints[1], h0 = eo->hints[0], h2 = eo->hints[2],
                          h4 = eo->hints[4], h9 = eo->hints[9];
        npk_etpu_dma_hint p1 = pc->hints[1];
        uint64_t tok = pc->parameter_caching_token;
        const char *name1 = eo->inputs[1].name;
        switch (c) {
        case 0: eo->hints[1].size_in_bytes = 0; break;
        case 1: eo->hints[0].instruction_chunk_index = 3; break;
        case 2: eo->hints[4].direction = NPK_ETPU_INFEED; break;
        case 3: eo->hints[1].meta.name = "nope"; break;
        case 4: eo->hints[1].size_in_bytes = 192 + NPK_ETPU_MAX_INPUT_OVERREAD + 1; break;
        case 5:
            eo->hints[0] = h1;
            eo->hints[1] = h0;
            break;
        case 6: eo->hints[1].meta.desc = NPK_ETPU_DESC_SCRATCH; break;
        case 7: eo->hints[9].direction = NPK_ETPU_INFEED; break;
        case 8: pc->hints[1] = h1; break;
        case 9: pc->parameter_caching_token ^= 1; break;
        case 10:
            eo->inputs[1].name = eo->inputs[0].name;
            eo->hints[2].meta.name = eo->inputs[0].name;
            break;
        case 11:
            eo->hints[1].meta.desc = NPK_ETPU_DESC_PARAMETER;
            eo->hints[1].size_in_bytes = 64;
            break;
        }
        npk_etpu_plan p;
        npk_error e = {0};
        npk_status st = npk_etpu_plan_init(&r.f.m, &p, &e);
        if (st == NPK_OK) fail_msg("case %d accepted", c);
        if (!strstr(e.msg, want[c])) fail_msg("case %d: \"%s\" lacks \"%s\"", c, e.msg, want[c]);
        eo->hints[0] = h0;
        eo->hints[1] = h1;
        eo->hints[2] = h2;
        eo->hints[4] = h4;
        eo->hints[9] = h9;
        pc->hints[1] = p1;
        pc->parameter_caching_token = tok;
        eo->inputs[1].name = name1;
    }
    assert_int_equal(s->control + s->bulk_out + s->bulk_in, before);
    /* Restored: it runs. */
    assert_int_equal(rig_run(&r, NULL, &err), NPK_OK);
    assert_no_violation(r.emu);
    rig_close(&r);
}

static void test_high_speed(void **state)
{
    (void)state;
    npk_etpu_emu_opts o = {.high_speed = true, .efuse_revision = 7};
    rig r;
    npk_error err = {0};
    rig_open(&r, "dense_256_edgetpu.tflite", &o);
    assert_int_equal(npk_etpu_device_efuse_revision(r.dev), 7);
    if (rig_run(&r, NULL, &err)) rig_fail("run", &err);
    assert_no_violation(r.emu);
    rig_close(&r);
}

/* Opening twice (a new process on the same device) re-runs the reset and
 * the parameters are uploaded again. */
static void test_reopen(void **state)
{
    (void)state;
    rig r;
    npk_error err = {0};
    npk_etpu_run_info info;
    rig_open(&r, "dense_256_edgetpu.tflite", NULL);
    assert_int_equal(rig_run(&r, &info, &err), NPK_OK);
    npk_etpu_close(r.dev);
    if (npk_etpu_open(npk_etpu_emu_transport(r.emu), NULL, &r.dev, &err)) rig_fail("reopen", &err);
    assert_int_equal(rig_run(&r, &info, &err), NPK_OK);
    assert_true(info.parameters_uploaded);
    assert_no_violation(r.emu);
    assert_int_equal(npk_etpu_emu_get_stats(r.emu)->parameter_loads, 2);
    rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csr_table),
        cmocka_unit_test(test_emulator_rejects),
        cmocka_unit_test(test_input_padding),
        cmocka_unit_test(test_dfu_upload),
        cmocka_unit_test(test_vanish_everywhere),
        cmocka_unit_test(test_stuck_chip_times_out),
        cmocka_unit_test(test_malformed_hints),
        cmocka_unit_test(test_high_speed),
        cmocka_unit_test(test_reopen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
