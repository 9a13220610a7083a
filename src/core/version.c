#include "npukit/version.h"
#include "npk_commit.h" /* generated at build time (cmake/git-commit.cmake) */

const char *npk_version(void)
{
    return NPK_VERSION;
}

const char *npk_commit(void)
{
    return NPK_COMMIT;
}

const char *npk_features(void)
{
    /* Each name after a space; the first space is skipped. */
    static const char all[] = ""
#ifdef NPK_HAVE_CJSON
                              " json"
#endif
#ifdef NPK_HAVE_SPNG
                              " png"
#endif
#ifdef NPK_HAVE_LIBUSB
                              " usb"
#endif
#ifdef NPK_HAVE_PROTOBUF_C
                              " onnx"
#endif
#ifdef NPK_HAVE_STB
                              " bmp jpeg"
#endif
        ;
    return all[0] ? all + 1 : all;
}
