# oid_add_module(NAME name DESCRIPTION text SOURCES file... HEADERS file...
#                [DEPENDS module...] [PRIVATE_LIBS target...] [PC_LIBS_PRIVATE flag...])
#
# One library of oid, made as every module is: the target oid_<name> with its alias oid::<name>
# (also its name in the installed package), the file liboid-<name>, its public headers as a file
# set that the build checks compile alone, C++20 for it and its users, oid's warnings for its own
# sources only, VERSION and SOVERSION, install and export rules, oid-<name>.pc, and a place in the
# umbrella target oid::oid and in oid.pc.
#
#   SOURCES          its .cpp files, relative to the calling directory (src/ is a private include
#                    directory: src/detail is shared by the modules and never installed)
#   HEADERS          its public headers, relative to include/
#   DEPENDS          the oid module(s) it builds on directly (their own dependencies come with
#                    them): linked PUBLIC, the `Requires:` of its .pc, in link order
#   PRIVATE_LIBS     other libraries its sources use, linked PRIVATE
#   PC_LIBS_PRIVATE  what linking it statically needs beyond DEPENDS: the `Libs.private:` of its .pc
function(oid_add_module)
  cmake_parse_arguments(PARSE_ARGV 0 M "" "NAME;DESCRIPTION"
                        "SOURCES;HEADERS;DEPENDS;PRIVATE_LIBS;PC_LIBS_PRIVATE")
  if(M_UNPARSED_ARGUMENTS OR NOT M_NAME OR NOT M_SOURCES OR NOT M_HEADERS)
    message(FATAL_ERROR "oid_add_module: NAME, SOURCES and HEADERS are required "
                        "(unknown arguments: ${M_UNPARSED_ARGUMENTS})")
  endif()
  set(target oid_${M_NAME})
  list(TRANSFORM M_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/include/)
  list(TRANSFORM M_DEPENDS PREPEND oid_ OUTPUT_VARIABLE depends)

  add_library(${target} ${M_SOURCES})
  add_library(oid::${M_NAME} ALIAS ${target})
  target_sources(${target} PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR}/include
                 FILES ${M_HEADERS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_features(${target} PUBLIC cxx_std_20)
  # The flags themselves, not the oid_warnings target: an exported library must not name it.
  target_compile_options(${target} PRIVATE ${OID_WARNING_FLAGS})
  target_link_libraries(${target} PUBLIC ${depends} PRIVATE ${M_PRIVATE_LIBS})
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${M_NAME}
    OUTPUT_NAME oid-${M_NAME}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${OID_SOVERSION}
    POSITION_INDEPENDENT_CODE ON
    VERIFY_INTERFACE_HEADER_SETS ON)
  target_link_libraries(oid INTERFACE ${target})
  set_property(GLOBAL APPEND PROPERTY OID_MODULES ${M_NAME})

  if(OID_INSTALL)
    install(TARGETS ${target} EXPORT oid-targets
      FILE_SET HEADERS
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    # The modules of one oid come together: each requires the others at its own version.
    list(TRANSFORM M_DEPENDS REPLACE "(.+)" "oid-\\1 = ${PROJECT_VERSION}" OUTPUT_VARIABLE requires)
    # A static library (the default) needs what it links on every link line, so `pkg-config
    # --libs` must give it, not only `--static`; a shared one carries it in its own dependencies.
    set(libs "-L\${libdir} -loid-${M_NAME}")
    set(libs_private "${M_PC_LIBS_PRIVATE}")
    if(NOT BUILD_SHARED_LIBS)
      list(JOIN libs_private " " flags)
      string(APPEND libs " ${flags}")
      set(libs_private "")
    endif()
    oid_write_pc(oid-${M_NAME} "${M_DESCRIPTION}" "${requires}" "${libs}" "${libs_private}")
  endif()
endfunction()

# oid_write_pc(name description requires libs libs_private): writes and installs <name>.pc, its
# paths relative to the .pc file itself so that the installed tree can move. Empty fields are left
# out.
function(oid_write_pc name description requires libs libs_private)
  file(RELATIVE_PATH prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" prefix "${prefix}")
  set(OID_PC_PREFIX "\${pcfiledir}/${prefix}")
  set(OID_PC_NAME ${name})
  set(OID_PC_DESCRIPTION "${description}")
  list(JOIN requires ", " requires)
  list(JOIN libs_private " " libs_private)
  set(OID_PC_FIELDS "")
  if(requires)
    string(APPEND OID_PC_FIELDS "Requires: ${requires}\n")
  endif()
  if(libs)
    string(APPEND OID_PC_FIELDS "Libs: ${libs}\n")
  endif()
  if(libs_private)
    string(APPEND OID_PC_FIELDS "Libs.private: ${libs_private}\n")
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/oid.pc.in ${PROJECT_BINARY_DIR}/${name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
