# What a packager's `make install` needs besides the library: the commit in
# `npukit --version`, the Python package, the man page and bash completion.
# Included at the end of the top-level CMakeLists.txt.

# ---- the commit the build is from (cmake/git-commit.cmake), at every build ----
set(NPK_GIT_COMMIT "" CACHE STRING "Commit to report in npukit --version (default: from git or a git archive)")
set(NPK_COMMIT_H ${CMAKE_BINARY_DIR}/gen/npk_commit.h)
add_custom_target(npk_commit
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DOUT=${NPK_COMMIT_H} -DCOMMIT=${NPK_GIT_COMMIT}
          -P ${CMAKE_SOURCE_DIR}/cmake/git-commit.cmake
  BYPRODUCTS ${NPK_COMMIT_H}
  COMMENT "npukit: commit of the sources")
add_dependencies(npukit_objects npk_commit)
target_include_directories(npukit_objects PRIVATE ${CMAKE_BINARY_DIR}/gen)

# ---- Python package (python/npukit) into the target Python's site directory ----
# NPK_PYTHON_SITEDIR, relative to the install prefix (or absolute); default,
# asked of the target Python at configure time (cmake/python-sitedir.py):
# prefix /usr -> Debian's lib/python3/dist-packages; /usr/local ->
# lib/python3.X/dist-packages (on Debian's sys.path); any other prefix ->
# lib/python3.X/site-packages (add it to PYTHONPATH). The installed package
# loads the library installed with it.
option(NPK_PYTHON_INSTALL "Install the Python package (python/npukit)" ON)
set(NPK_PYTHON_SITEDIR "" CACHE STRING
    "Python site directory for the package (relative to the prefix, or absolute; default: asked of python3)")
if(NPK_PYTHON_INSTALL AND NOT CMAKE_CROSSCOMPILING)
  find_program(NPK_PYTHON_TARGET NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT NPK_PYTHON_TARGET)
    find_program(NPK_PYTHON_TARGET NAMES python3)
  endif()
  set(npk_sitedir "${NPK_PYTHON_SITEDIR}")
  if(NOT npk_sitedir AND NPK_PYTHON_TARGET)
    execute_process(
      COMMAND ${NPK_PYTHON_TARGET} ${CMAKE_SOURCE_DIR}/cmake/python-sitedir.py ${CMAKE_INSTALL_PREFIX}
      OUTPUT_VARIABLE npk_sitedir OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  if(npk_sitedir)
    message(STATUS "npukit: Python package goes to <prefix>/${npk_sitedir}")
    install(DIRECTORY python/npukit DESTINATION ${npk_sitedir}
            FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE PATTERN "_install.py" EXCLUDE)
    # _install.py: where the library is, relative to the package (so a
    # DESTDIR-staged or moved tree still finds its own library).
    get_target_property(NPK_SO_VERSION npukit_shared SOVERSION)
    install(CODE "
      set(site \"${npk_sitedir}\")
      if(NOT IS_ABSOLUTE \"\${site}\")
        set(site \"\${CMAKE_INSTALL_PREFIX}/\${site}\")
      endif()
      file(RELATIVE_PATH rel \"\${site}/npukit\"
           \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libnpukit.so.${NPK_SO_VERSION}\")
      message(STATUS \"Installing: \$ENV{DESTDIR}\${site}/npukit/_install.py\")
      file(WRITE \"\$ENV{DESTDIR}\${site}/npukit/_install.py\"
           \"# Written by make install: the library, relative to this package.\\nLIBRARY = \\\"\${rel}\\\"\\n\")
    ")
  else()
    message(STATUS "npukit: no Python found: the Python package is not installed")
  endif()
endif()

# ---- man page (help2man over the CLI's own help) and bash completion ----
find_program(NPK_HELP2MAN help2man)
if(NPK_HELP2MAN AND NOT CMAKE_CROSSCOMPILING)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/npukit.1
    COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/gen-man.sh $<TARGET_FILE:npukit> ${CMAKE_BINARY_DIR}/npukit.1
            ${NPK_HELP2MAN}
    DEPENDS npukit ${CMAKE_SOURCE_DIR}/scripts/gen-man.sh
    COMMENT "help2man: npukit.1")
  add_custom_target(npk_man ALL DEPENDS ${CMAKE_BINARY_DIR}/npukit.1)
  install(FILES ${CMAKE_BINARY_DIR}/npukit.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "npukit: help2man not found (or cross build): no man page")
endif()
set(NPK_BASH_COMPLETION_DIR "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" CACHE STRING
    "bash completion directory (relative to the prefix, or absolute)")
install(FILES tools/completion/npukit.bash DESTINATION ${NPK_BASH_COMPLETION_DIR} RENAME npukit)
