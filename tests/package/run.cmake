# Driven by ctest (see tests/CMakeLists.txt): install, then build and run the consumer twice, once
# through the CMake package and once through pkg-config.
file(REMOVE_RECURSE ${OID_SCRATCH})
set(prefix ${OID_SCRATCH}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${OID_BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${OID_CONSUMER_SOURCE} -B ${OID_SCRATCH}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${OID_CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${OID_CXX_FLAGS}")
run(${CMAKE_COMMAND} --build ${OID_SCRATCH}/build)
run(${OID_SCRATCH}/build/consumer)

find_program(PKG_CONFIG pkg-config REQUIRED)
file(GLOB pc_dirs ${prefix}/lib*/pkgconfig ${prefix}/lib/*/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "${pc_dirs}")
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs oid OUTPUT_VARIABLE flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not know oid (PKG_CONFIG_PATH=${pc_dirs})")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
separate_arguments(build_flags UNIX_COMMAND "${OID_CXX_FLAGS}")  # e.g. the sanitizers
run(${OID_CXX_COMPILER} ${build_flags} ${OID_CONSUMER_SOURCE}/consumer.cpp ${flags} -o ${OID_SCRATCH}/consumer-pc)
run(${OID_SCRATCH}/consumer-pc)
message(STATUS "consumer built and ran with find_package and with pkg-config")
