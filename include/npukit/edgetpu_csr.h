/* Coral Edge TPU (Beagle) USB facts in one place: identities, endpoints,
 * bulk framing, DFU requests, and the control/status registers (CSRs) with
 * the bit fields the open/initialisation sequence touches. The runtime's
 * initialisation, the emulated accelerator and the tests all derive from
 * these tables.
 *
 * Sources (docs/edgetpu.md, "USB runtime"): google-coral/libedgetpu
 * driver/config/beagle/beagle_csr_offsets.h (addresses),
 * driver/config/beagle_csr_helper.h and common_csr_helper.h (fields, reset
 * values), driver/usb/usb_ml_commands.cc (CSR access, framing, events). */
#ifndef NPUKIT_EDGETPU_CSR_H
#define NPUKIT_EDGETPU_CSR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- identities and endpoints ---- */
#define NPK_ETPU_APP_VID 0x18D1 /* application mode (firmware running) */
#define NPK_ETPU_APP_PID 0x9302
#define NPK_ETPU_DFU_VID 0x1A6E /* bootloader: needs a firmware upload */
#define NPK_ETPU_DFU_PID 0x089A

#define NPK_ETPU_EP_OUT       0x01 /* single-endpoint mode: every bulk-out stream */
#define NPK_ETPU_EP_OUTPUT    0x81 /* output activations */
#define NPK_ETPU_EP_EVENT     0x82 /* 16-byte events (interrupt descriptors) */
#define NPK_ETPU_EP_INTERRUPT 0x83 /* 4-byte top-level interrupts */

/* ---- bulk framing: u32 LE length, tag in the low nibble, 3 zero bytes ---- */
#define NPK_ETPU_HEADER_SIZE 8
#define NPK_ETPU_EVENT_SIZE  16 /* u64 address, u32 length, tag in the low nibble of byte 12 */
#define NPK_ETPU_OUTPUT_READ                                                                       \
    32768 /* every output read asks for 32 KiB (smaller ones can overflow) */
#define NPK_ETPU_MAX_BULK_OUT (1024 * 1024) /* libedgetpu's largest bulk-out transfer */
#define NPK_ETPU_TIMEOUT_MS   6000          /* libedgetpu's default USB timeout */

typedef enum npk_etpu_tag {
    NPK_ETPU_TAG_INSTRUCTIONS = 0,
    NPK_ETPU_TAG_INPUT = 1,
    NPK_ETPU_TAG_PARAMETERS = 2,
    NPK_ETPU_TAG_OUTPUT = 3,
    NPK_ETPU_TAG_INTERRUPT0 = 4 /* interrupts 0..3 are tags 4..7 */
} npk_etpu_tag;

/* ---- CSR access: vendor control transfers ---- */
#define NPK_ETPU_CSR_READ  0xC0 /* bmRequestType: vendor, device, device-to-host */
#define NPK_ETPU_CSR_WRITE 0x40 /* vendor, device, host-to-device */
#define NPK_ETPU_CSR_REQ64 0    /* bRequest: 64-bit access (8 data bytes) */
#define NPK_ETPU_CSR_REQ32 1    /* 32-bit access (4 data bytes); wValue/wIndex = address low/high */

/* ---- DFU (USB DFU 1.1 class requests on the DFU interface) ---- */
#define NPK_ETPU_DFU_OUT 0x21 /* class, interface, host-to-device */
#define NPK_ETPU_DFU_IN  0xA1
enum {
    NPK_ETPU_DFU_DETACH = 0,
    NPK_ETPU_DFU_DNLOAD = 1,
    NPK_ETPU_DFU_UPLOAD = 2,
    NPK_ETPU_DFU_GETSTATUS = 3,
    NPK_ETPU_DFU_CLRSTATUS = 4,
    NPK_ETPU_DFU_GETSTATE = 5,
    NPK_ETPU_DFU_ABORT = 6
};
enum { /* bState of GETSTATUS */
       NPK_ETPU_DFU_STATE_IDLE = 2,
       NPK_ETPU_DFU_STATE_DNLOAD_SYNC = 3,
       NPK_ETPU_DFU_STATE_DNLOAD_IDLE = 5,
       NPK_ETPU_DFU_STATE_MANIFEST_SYNC = 6,
       NPK_ETPU_DFU_STATE_UPLOAD_IDLE = 9,
       NPK_ETPU_DFU_STATE_ERROR = 10
};
#define NPK_ETPU_DFU_STATUS_SIZE   6   /* bStatus, bwPollTimeout[3], bState, iString */
#define NPK_ETPU_DFU_TRANSFER_SIZE 256 /* what libredgetpu sends; libusb reads the descriptor */
#define NPK_ETPU_MAX_FIRMWARE      (1024 * 1024)

/* ---- registers: X(ID, name, address, access bits, reset value, kind) ----
 * Access is 32-bit for the 0x1xxxx SCU/OMC block and 64-bit elsewhere, as
 * libedgetpu's Read32/Write32 vs Read/Write calls do. Kinds: S = SCU/OMC,
 * R = scalar-core run control, T = tile CSR (written through a tileconfig0
 * broadcast), U = USB, I = interrupt control, M = other. */
#define NPK_ETPU_CSR_TABLE(X)                                                                      \
    X(OMC0_00, "omc0_00", 0x1a000, 32, 0x00000000, 'S')                                            \
    X(OMC0_D4, "omc0_d4", 0x1a0d4, 32, 0x00000001, 'S')                                            \
    X(OMC0_D8, "omc0_d8", 0x1a0d8, 32, 0x00000000, 'S')                                            \
    X(SCU_CTRL_0, "scu_ctrl_0", 0x1a30c, 32, 0x00000941, 'S')                                      \
    X(SCU_CTRL_2, "scu_ctrl_2", 0x1a314, 32, 0x00000000, 'S')                                      \
    X(SCU_CTRL_3, "scu_ctrl_3", 0x1a318, 32, 0x80050410, 'S')                                      \
    X(SCU_CTR_7, "scu_ctr_7", 0x1a33c, 32, 0x000c003f, 'S')                                        \
    X(SLV_ABM_EN, "slv_abm_en", 0x1a500, 32, 0, 'S')                                               \
    X(SLV_ERR_RESP_ISR_MASK, "slv_err_resp_isr_mask", 0x1a558, 32, 0, 'S')                         \
    X(MST_ABM_EN, "mst_abm_en", 0x1a600, 32, 0, 'S')                                               \
    X(MST_ERR_RESP_ISR_MASK, "mst_err_resp_isr_mask", 0x1a658, 32, 0, 'S')                         \
    X(RAMBIST_CTRL_1, "rambist_ctrl_1", 0x1a704, 32, 0x0070007f, 'S')                              \
    X(GCBB_CREDIT0, "gcbb_credit0", 0x1907c, 32, 0, 'S')                                           \
    X(TILE_DEEP_SLEEP, "deepSleep", 0x40020, 64, 0, 'T')                                           \
    X(TILE_OP_RUN, "opRunControl", 0x400c0, 64, 0, 'T')                                            \
    X(TILE_WIDE_TO_NARROW_RUN, "wideToNarrowRunControl", 0x40110, 64, 0, 'T')                      \
    X(TILE_NARROW_TO_WIDE_RUN, "narrowToWideRunControl", 0x40150, 64, 0, 'T')                      \
    X(TILE_RING_CONSUMER0_RUN, "ringBusConsumer0RunControl", 0x40190, 64, 0, 'T')                  \
    X(TILE_RING_CONSUMER1_RUN, "ringBusConsumer1RunControl", 0x401d0, 64, 0, 'T')                  \
    X(TILE_RING_PRODUCER_RUN, "ringBusProducerRunControl", 0x40210, 64, 0, 'T')                    \
    X(TILE_MESH0_RUN, "meshBus0RunControl", 0x40250, 64, 0, 'T')                                   \
    X(TILE_MESH1_RUN, "meshBus1RunControl", 0x40298, 64, 0, 'T')                                   \
    X(TILE_MESH2_RUN, "meshBus2RunControl", 0x402e0, 64, 0, 'T')                                   \
    X(TILE_MESH3_RUN, "meshBus3RunControl", 0x40328, 64, 0, 'T')                                   \
    X(SCALAR_CORE_RUN, "scalarCoreRunControl", 0x44018, 64, 0, 'R')                                \
    X(AVDATA_POP_RUN, "avDataPopRunControl", 0x44158, 64, 0, 'R')                                  \
    X(PARAMETER_POP_RUN, "parameterPopRunControl", 0x44198, 64, 0, 'R')                            \
    X(INFEED_RUN, "infeedRunControl", 0x441d8, 64, 0, 'R')                                         \
    X(OUTFEED_RUN, "outfeedRunControl", 0x44218, 64, 0, 'R')                                       \
    X(TILECONFIG0, "tileconfig0", 0x48788, 64, 0, 'M')                                             \
    X(IDLE_REGISTER, "idleRegister", 0x4a000, 64, 0x00009000, 'M')                                 \
    X(OUTFEED_CHUNK_LENGTH, "outfeed_chunk_length", 0x4c058, 64, 0, 'U')                           \
    X(FATAL_ERR_INT_CONTROL, "fatal_err_int_control", 0x4c060, 64, 0, 'I')                         \
    X(TOP_LEVEL_INT_0_CONTROL, "top_level_int_0_control", 0x4c070, 64, 0, 'I')                     \
    X(TOP_LEVEL_INT_1_CONTROL, "top_level_int_1_control", 0x4c080, 64, 0, 'I')                     \
    X(TOP_LEVEL_INT_2_CONTROL, "top_level_int_2_control", 0x4c090, 64, 0, 'I')                     \
    X(TOP_LEVEL_INT_3_CONTROL, "top_level_int_3_control", 0x4c0a0, 64, 0, 'I')                     \
    X(DESCR_EP, "descr_ep", 0x4c148, 64, 0, 'U')                                                   \
    X(MULTI_BO_EP, "multi_bo_ep", 0x4c160, 64, 0, 'U')

/* ---- fields: X(ID, register, name, lowest bit, width) ---- */
#define NPK_ETPU_FIELD_TABLE(X)                                                                    \
    X(OMC0_00_EFUSE_REVISION, OMC0_00, "efuse_programming_revision", 24, 8)                        \
    X(OMC0_D4_THM_WARN_EN, OMC0_D4, "thm_warn_en", 31, 1)                                          \
    X(OMC0_D8_SD_EN, OMC0_D8, "sd_en", 31, 1)                                                      \
    X(SCU0_PCIE_INACT_PHY_MODE, SCU_CTRL_0, "rg_pcie_inact_phy_mode", 8, 3)                        \
    X(SCU0_USB_INACT_PHY_MODE, SCU_CTRL_0, "rg_usb_inact_phy_mode", 11, 3)                         \
    X(SCU2_GATED_GCB, SCU_CTRL_2, "rg_gated_gcb", 18, 2)                                           \
    X(SCU3_CUR_PWR_STATE, SCU_CTRL_3, "cur_pwr_state", 8, 2)                                       \
    X(SCU3_FORCE_INACT, SCU_CTRL_3, "rg_force_inact", 20, 2)                                       \
    X(SCU3_FORCE_SLEEP, SCU_CTRL_3, "rg_force_sleep", 22, 2)                                       \
    X(SCU3_GCB_CLKDIV, SCU_CTRL_3, "rg_gcb_clkdiv", 28, 2)                                         \
    X(SCU3_AXI_CLK_125M, SCU_CTRL_3, "rg_axi_clk_125m", 30, 1)                                     \
    X(SCU3_8051_CLK_250M, SCU_CTRL_3, "rg_8051_clk_250m", 31, 1)                                   \
    X(SCU7_PLL_LOCK_FAILURE, SCU_CTR_7, "pll_lock_failure", 16, 1)                                 \
    X(SCU7_USB_SEL_FAILURE, SCU_CTR_7, "usb_sel_failure", 17, 1)                                   \
    X(SCU7_BOOT_FAILURE_MASK, SCU_CTR_7, "rg_boot_failure_mask", 18, 2)                            \
    X(RAMBIST1_INT_STATUS, RAMBIST_CTRL_1, "rg_mbist_int_status", 16, 3)                           \
    X(RAMBIST1_INT_MASK, RAMBIST_CTRL_1, "rg_mbist_int_mask", 20, 3)                               \
    X(DEEP_SLEEP_TO_SLEEP, TILE_DEEP_SLEEP, "to_sleep_delay", 0, 8)                                \
    X(DEEP_SLEEP_TO_WAKE, TILE_DEEP_SLEEP, "to_wake_delay", 8, 8)                                  \
    X(TILECONFIG0_TILE, TILECONFIG0, "tile", 0, 7)                                                 \
    X(IDLE_COUNTER, IDLE_REGISTER, "counter", 0, 31)                                               \
    X(IDLE_DISABLE, IDLE_REGISTER, "disable_idle", 31, 1)

#define NPK_ETPU_CSR_ENUM_(id, name, addr, bits, reset, kind) NPK_ETPU_CSR_##id,
typedef enum npk_etpu_csr_id {
    NPK_ETPU_CSR_TABLE(NPK_ETPU_CSR_ENUM_) NPK_ETPU_CSR_COUNT
} npk_etpu_csr_id;
#undef NPK_ETPU_CSR_ENUM_

#define NPK_ETPU_FIELD_ENUM_(id, reg, name, lo, width) NPK_ETPU_F_##id,
typedef enum npk_etpu_field_id {
    NPK_ETPU_FIELD_TABLE(NPK_ETPU_FIELD_ENUM_) NPK_ETPU_FIELD_COUNT
} npk_etpu_field_id;
#undef NPK_ETPU_FIELD_ENUM_

typedef struct npk_etpu_csr {
    const char *name;
    uint32_t addr;
    uint8_t bits; /* access width: 32 or 64 */
    uint64_t reset;
    char kind;
} npk_etpu_csr;

typedef struct npk_etpu_field {
    npk_etpu_csr_id reg;
    const char *name;
    uint8_t lo, width;
} npk_etpu_field;

extern const npk_etpu_csr npk_etpu_csrs[NPK_ETPU_CSR_COUNT];
extern const npk_etpu_field npk_etpu_fields[NPK_ETPU_FIELD_COUNT];

/* The register at an address, or NULL. */
const npk_etpu_csr *npk_etpu_csr_at(uint32_t addr);
/* A field's value in a register value, and a register value with a field replaced. */
uint64_t npk_etpu_field_get(npk_etpu_field_id f, uint64_t reg);
uint64_t npk_etpu_field_set(npk_etpu_field_id f, uint64_t reg, uint64_t value);
/* The bits of a register covered by a field. */
uint64_t npk_etpu_field_mask(npk_etpu_field_id f);

/* Values the initialisation writes (libedgetpu): tileconfig0 broadcast to
 * every tile, run control "move to run". */
#define NPK_ETPU_TILE_BROADCAST 0x7F
#define NPK_ETPU_RUN            1

#ifdef __cplusplus
}
#endif
#endif
