/* Internal: drawing primitives of the task views (draw.c, font.c). */
#ifndef NPK_VISION_DRAW_H
#define NPK_VISION_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/vision.h"

#define VIS_GLYPH_W 5
#define VIS_GLYPH_H 7

/* Seven rows of five bits (leftmost pixel in bit 4) of a character. */
const uint8_t *vis_glyph(char c);

#endif
