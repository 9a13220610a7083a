# Cross-compile for mipsel-linux-gnu with Debian's cross gcc; tests run under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR mipsel)
set(CMAKE_C_COMPILER mipsel-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/mipsel-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# "/" lets find_library() see Debian multiarch packages (/usr/lib/mipsel-linux-gnu).
# Load the cross libc that matches the cross ld.so: with Debian multiarch packages
# installed, the host's ld.so.cache would pair this ld.so with another libc build
# (pthread_create then hangs or crashes under qemu).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-mipsel -L /usr/mipsel-linux-gnu -E LD_LIBRARY_PATH=/usr/mipsel-linux-gnu/lib)
