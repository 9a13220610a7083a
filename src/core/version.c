#include "npukit/version.h"

const char *npk_version(void)
{
    return NPK_VERSION;
}

const char *npk_features(void)
{
    return ""
#ifdef NPK_HAVE_CJSON
           "json "
#endif
#ifdef NPK_HAVE_SPNG
           "png "
#endif
#ifdef NPK_HAVE_LIBUSB
           "usb "
#endif
#ifdef NPK_HAVE_PROTOBUF_C
           "onnx "
#endif
        ;
}
