/* Interpreter views (npk_tfl_view) as tensors the CLI writes, and the file
 * names tensors get in an output directory; shared by `tflite run` and
 * `rknpu run`, which read their inputs and write their outputs the same way,
 * and `edgetpu run`. */
#ifndef NPK_CLI_TENSOR_IO_H
#define NPK_CLI_TENSOR_IO_H

#include <stddef.h>

#include "npukit/npukit.h"
#include "npukit/tflite_interp.h"

/* The numpy dtype of a view of `edgetpu run` and `rknpu run`: the library's
 * table (npk_bind_tfl_dtype, which `tflite run` takes whole) cut to the seven
 * types those commands read and write (float32, int32, uint8, int64, bool,
 * int16, int8); NPK_DT_INVALID for the others. */
npk_dtype cli_npu_view_dtype(int8_t type);

/* A view's bytes as an owned tensor of dtype dt, the command's numpy dtype
 * for the view's TFLite type: an error when that is NPK_DT_INVALID (a type
 * .npy cannot hold) or the size does not match. */
npk_status cli_view_tensor(const npk_tfl_view *v, npk_dtype dt, npk_tensor *t, npk_error *err);

/* "TYPE [d0, d1, ...]" of a view (its TFLite type and shape), for messages
 * about the inputs a command expects; cut short to fit n bytes. */
void cli_view_describe(const npk_tfl_view *v, char *buf, size_t n);

/* A tensor name as a file name: anything but [A-Za-z0-9.-] becomes '_', at
 * most 120 characters (names of real tensors can be much longer than a
 * file system allows), never "", "." or "..", ".npy" added. out holds n
 * bytes (n >= 6). */
void cli_npy_file_name(const char *name, char *out, size_t n);

#endif
