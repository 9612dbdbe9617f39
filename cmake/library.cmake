# collbench_add_library(<target> ALIAS <name> SOURCES <files...> [PUBLIC <deps...>] [PRIVATE <deps...>])
#
# One of collbench's layered libraries (README.md, "Layers"): a static library
# `collbench::<name>` (its export name too) built as C++20 without extensions,
# position-independent so that a consumer may link it into a shared object,
# with the public headers under include/ and the warnings and sanitizers every
# collbench target gets. A layer lists in PUBLIC only the layers below it.
function(collbench_add_library target)
  cmake_parse_arguments(ARG "" "ALIAS" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(collbench::${ARG_ALIAS} ALIAS ${target})
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON
                                              EXPORT_NAME ${ARG_ALIAS})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                              $<INSTALL_INTERFACE:include>)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC} collbench_sanitize
                                  PRIVATE ${ARG_PRIVATE} collbench_warnings)
endfunction()
