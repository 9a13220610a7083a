/* A TFLite model's picture input: how npk_image_to_tensor() fills it
 * (npukit/image.h). Shared by `npukit tflite classify` and the targets'
 * runs on pictures (Edge TPU models are TFLite files too). */
#ifndef NPUKIT_TFLITE_IMAGE_H
#define NPUKIT_TFLITE_IMAGE_H

#include <stdint.h>

#include "npukit/error.h"
#include "npukit/image.h"
#include "npukit/tflite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Describe tensor `index` of subgraph `sg` as a picture input: [1, H, W, C]
 * or [H, W, C] with C = 3 (RGB) or 1 (grey), of type uint8, int8 or
 * float32, with its per-tensor quantisation when it has one (range: the
 * default, [0, 1], for float inputs without). Anything else is an error
 * naming the tensor and what does not fit. */
npk_status npk_tfl_image_input(const npk_tfl_model *m, uint32_t sg, int32_t index,
                               npk_image_input *in, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
