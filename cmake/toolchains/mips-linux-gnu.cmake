# Cross-compile for mips-linux-gnu with Debian's cross gcc; tests run under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR mips)
set(CMAKE_C_COMPILER mips-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/mips-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# "/" lets find_library() see Debian multiarch packages (/usr/lib/mips-linux-gnu).
# Load the cross libc that matches the cross ld.so: with Debian multiarch packages
# installed, the host's ld.so.cache would pair this ld.so with another libc build
# (pthread_create then hangs or crashes under qemu).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-mips -L /usr/mips-linux-gnu -E LD_LIBRARY_PATH=/usr/mips-linux-gnu/lib)
