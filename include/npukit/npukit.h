/* libnpukit: umbrella header. */
#ifndef NPUKIT_H
#define NPUKIT_H

#include "npukit/version.h"
#include "npukit/error.h"
#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/cursor.h"
#include "npukit/file.h"
#include "npukit/half.h"
#include "npukit/tensor.h"
#include "npukit/detect.h"
#include "npukit/utf8.h"

#endif
