"""Prints where a package goes under an install prefix (argv[1]), relative to
it, for the Python that runs this (cmake/release.cmake):
  /usr        Debian's lib/python3/dist-packages
  /usr/local  lib/python3.X/dist-packages (on Debian's default sys.path)
  elsewhere   lib/python3.X/site-packages (add it to PYTHONPATH)"""
import os
import sys
import sysconfig

prefix = os.path.normpath(sys.argv[1])
names = sysconfig.get_scheme_names()
# Debian's schemes take the base /usr and add "local" themselves.
if prefix == "/usr" and "deb_system" in names:
    scheme, base = "deb_system", "/usr"
elif prefix == "/usr/local" and "posix_local" in names:
    scheme, base = "posix_local", "/usr"
else:
    scheme, base = "posix_prefix", prefix
path = sysconfig.get_path("purelib", scheme, vars={"base": base, "platbase": base})
print(os.path.relpath(path, prefix))
