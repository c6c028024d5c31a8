# Driven by ctest (tests/CMakeLists.txt): builds and runs tests/package/consumer.cpp as a user of
# oid would, in the way OID_MODE says:
#   install           install into a scratch prefix; build with find_package(oid), then with
#                     `pkg-config --libs oid` and with `pkg-config --static --libs oid`
#   build-tree        find_package(oid) with oid_DIR set to the build tree (its export())
#   add-subdirectory  add_subdirectory(oid's sources) inside the consumer's own build
#   system            oid installed in the system (the Debian packages, deb_test.sh): build with
#                     find_package(oid) and with pkg-config, no path given to either
file(REMOVE_RECURSE ${OID_SCRATCH})
set(prefix ${OID_SCRATCH}/prefix)
separate_arguments(cxx_flags UNIX_COMMAND "${OID_CXX_FLAGS}")  # e.g. the sanitizers
separate_arguments(link_flags UNIX_COMMAND "${OID_EXE_LINKER_FLAGS}")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()

# Configures, builds and runs the consumer with CMake; ARGN: extra cache settings.
function(build_with_cmake name)
  set(build ${OID_SCRATCH}/${name})
  run(${CMAKE_COMMAND} -S ${OID_CONSUMER_SOURCE} -B ${build} ${ARGN}
      -DCMAKE_CXX_COMPILER=${OID_CXX_COMPILER}
      "-DCMAKE_CXX_FLAGS=${OID_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${OID_EXE_LINKER_FLAGS}")
  run(${CMAKE_COMMAND} --build ${build})
  run(${build}/consumer)
endfunction()

# Compiles the consumer with the flags pkg-config gives for `oid` (ARGN: pkg-config options), and
# runs it.
function(build_with_pkg_config name)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} --cflags --libs oid OUTPUT_VARIABLE flags
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} --libs oid failed (PKG_CONFIG_PATH=$ENV{PKG_CONFIG_PATH}): ${err}")
  endif()
  message(STATUS "pkg-config ${ARGN} --cflags --libs oid: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${OID_CXX_COMPILER} ${cxx_flags} ${OID_CONSUMER_SOURCE}/consumer.cpp ${flags} ${link_flags}
      -o ${OID_SCRATCH}/${name})
  run(${OID_SCRATCH}/${name})
endfunction()

if(OID_MODE STREQUAL "install")
  run(${CMAKE_COMMAND} --install ${OID_BUILD_DIR} --prefix ${prefix})
  build_with_cmake(find-package -DCMAKE_PREFIX_PATH=${prefix})

  find_program(PKG_CONFIG pkg-config REQUIRED)
  file(GLOB_RECURSE pc_files ${prefix}/oid.pc)
  list(LENGTH pc_files n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one oid.pc under ${prefix}, found: ${pc_files}")
  endif()
  get_filename_component(pc_dir ${pc_files} DIRECTORY)
  get_filename_component(lib_dir ${pc_dir} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pc_dir})
  set(ENV{LD_LIBRARY_PATH} ${lib_dir})  # for a shared build (BUILD_SHARED_LIBS=ON)
  build_with_pkg_config(pkg-config)
  build_with_pkg_config(pkg-config-static --static)
  message(STATUS "consumer built and ran with find_package and with pkg-config (plain and --static)")
elseif(OID_MODE STREQUAL "system")
  build_with_cmake(system-find-package)
  find_program(PKG_CONFIG pkg-config REQUIRED)
  unset(ENV{PKG_CONFIG_PATH})
  build_with_pkg_config(system-pkg-config)
  build_with_pkg_config(system-pkg-config-static --static)
  message(STATUS "consumer built and ran against the system's oid with find_package and pkg-config")
elseif(OID_MODE STREQUAL "build-tree")
  build_with_cmake(build-tree -Doid_DIR=${OID_BUILD_DIR})
  message(STATUS "consumer built and ran with find_package from the build tree")
elseif(OID_MODE STREQUAL "add-subdirectory")
  # No build type (so a quick -O0 build of the libraries): oid, not the top-level project here,
  # must leave it unset rather than force its own default.
  build_with_cmake(add-subdirectory -DOID_SOURCE_DIR=${OID_SOURCE_DIR}
                   -DBUILD_SHARED_LIBS=${OID_BUILD_SHARED_LIBS})
  file(STRINGS ${OID_SCRATCH}/add-subdirectory/CMakeCache.txt build_type
       REGEX "^CMAKE_BUILD_TYPE:")
  if(build_type AND NOT build_type MATCHES "=$")
    message(FATAL_ERROR "oid as a subproject set the build type: ${build_type}")
  endif()
  message(STATUS "consumer built and ran with oid added by add_subdirectory")
else()
  message(FATAL_ERROR "OID_MODE must be install, system, build-tree or add-subdirectory, not '${OID_MODE}'")
endif()
