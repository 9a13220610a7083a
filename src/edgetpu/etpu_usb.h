/* Private parts of the USB runtime shared by its files. */
#ifndef NPK_ETPU_USB_PRIVATE_H
#define NPK_ETPU_USB_PRIVATE_H

#include "npukit/edgetpu_usb.h"

#define ETPU_MAX_CACHED 64 /* parameter regions remembered under one token */

struct npk_etpu_device {
    npk_etpu_transport *t;
    unsigned timeout_ms;
    bool broken; /* a transfer failed: the device state is unknown */
    /* Parameters the device holds (edgetpu_usb.h): one token, and per
     * parameter region (PC instructions) the hash and size of the bytes
     * uploaded last. */
    uint64_t cached_token;
    uint32_t ncached;
    struct {
        uint64_t code, hash;
        size_t size;
    } cached[ETPU_MAX_CACHED];
    uint8_t efuse_revision;
    uint8_t *stage; /* header + first data bytes of a bulk-out frame */
    uint8_t *carry; /* output bytes read but not yet consumed */
    size_t carry_len, carry_pos;
};

/* Transfers through the transport with the device's timeout; a failure
 * marks the device broken and names what was being transferred. */
npk_status etpu_control(npk_etpu_device *d, uint8_t type, uint8_t req, uint16_t value,
                        uint16_t index, uint8_t *data, uint16_t len, size_t *done, npk_error *err);
npk_status etpu_transfer_fail(npk_etpu_device *d, npk_status st, npk_error *err);

/* 64-bit hash of a byte string (parameter cache key). */
uint64_t etpu_hash64(const uint8_t *p, size_t n);
/* Hash of an executable's instruction bitstreams (its parameter region). */
uint64_t etpu_code_hash(const npk_etpu_executable *e);

#endif
