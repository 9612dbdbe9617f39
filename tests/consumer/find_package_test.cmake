# The ctest consumer_find_package (registered in tests/consumer.cmake):
# builds and runs the project in this folder against collbench twice, as fmt's
# find-package-test does,
#   install:    `cmake --install BUILD_DIR --prefix WORK_DIR/installed`,
#               moved to WORK_DIR/prefix (an install must not depend on
#               where it was made), then the consumer with
#               CMAKE_PREFIX_PATH=WORK_DIR/prefix;
#   build tree: the consumer with collbench_DIR=BUILD_DIR;
# with the compilers, launchers, generator and build type of collbench's own
# build. WORK_DIR is removed at the end, pass or fail.
# Arguments (-D): BUILD_DIR SOURCE_DIR CONSUMER_DIR WORK_DIR VERSION TOOLS (a|b|...)
#   GENERATOR MAKE_PROGRAM BUILD_TYPE CXX_COMPILER CXX_LAUNCHER
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" TOOLS "${TOOLS}")

# `cmake --install` writes BUILD_DIR/install_manifest.txt: the one of a real
# install, if there is one, is put back afterwards.
set(manifest ${BUILD_DIR}/install_manifest.txt)
set(saved_manifest ${WORK_DIR}/install_manifest.txt.saved)

function(clean_up)
  if(EXISTS ${saved_manifest})
    file(RENAME ${saved_manifest} ${manifest})
  else()
    file(REMOVE ${manifest})
  endif()
  file(REMOVE_RECURSE ${WORK_DIR})
endfunction()

function(fail)
  clean_up()
  string(JOIN "" text ${ARGN})
  message(FATAL_ERROR "${text}")
endfunction()

# run(<what> <command>...): the command's output is shown only when it fails.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    fail("${what} failed (${status}):\n${output}")
  endif()
  set(run_output "${output}" PARENT_SCOPE)
endfunction()

# expect(<what> <output> <regex>...): each regex must match the output.
function(expect what output)
  foreach(regex IN LISTS ARGN)
    if(NOT output MATCHES "${regex}")
      fail("${what}: expected output matching \"${regex}\", got:\n${output}")
    endif()
  endforeach()
endfunction()

# consumer(<variant> <collbench_DIR it must find> <cmake arguments>...):
# configure, build and run the consumer, and check what it prints.
function(consumer variant package_dir)
  set(binary ${WORK_DIR}/${variant})
  set(configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${binary} -G ${GENERATOR}
      -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
      -DCOLLBENCH_EXPECTED_VERSION=${VERSION} ${ARGN})
  if(MAKE_PROGRAM)
    list(APPEND configure -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
  endif()
  if(CXX_LAUNCHER)
    list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
  endif()
  run("${variant}: configuring the consumer" ${configure})
  if(NOT run_output MATCHES "-- collbench ([^ ]+) from ([^\n]*)\n"
     OR NOT CMAKE_MATCH_1 STREQUAL VERSION OR NOT CMAKE_MATCH_2 STREQUAL package_dir)
    fail("${variant}: the consumer was to find collbench ${VERSION} in ${package_dir}:\n"
         "${run_output}")
  endif()
  run("${variant}: building the consumer" ${CMAKE_COMMAND} --build ${binary})
  if(variant MATCHES "models-only")
    run("${variant}: consumer_models" ${binary}/consumer_models)
    expect("${variant}: consumer_models" "${run_output}" "nnls: 1 0\n")
    run("${variant}: ldd consumer_models" ldd ${binary}/consumer_models)
    if(run_output MATCHES "libmpi")
      fail("${variant}: consumer_models loads an MPI library:\n${run_output}")
    endif()
    message(STATUS "${variant}: a models-only consumer built and ran without MPI")
    return()
  endif()
  run("${variant}: consumer_core" ${binary}/consumer_core)
  expect("${variant}: consumer_core" "${run_output}"
         "collectives: allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall, alltoallv\n" "algorithms: ring, "
         "ring allreduce on 1 in-process ranks: 0 of 7 elements wrong \\(expected 1\\)"
         "ring allreduce on 2 in-process ranks: 0 of 14 elements wrong \\(expected 3\\)")
  run("${variant}: consumer_models" ${binary}/consumer_models)
  expect("${variant}: consumer_models" "${run_output}" "nnls: 1 0\n"
         "resnet50: 25557032 parameters\n")
  message(STATUS "${variant}: find_package(collbench) from ${package_dir}: built and ran")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
if(EXISTS ${manifest})
  file(RENAME ${manifest} ${saved_manifest})
endif()

# --- from an install prefix
set(prefix ${WORK_DIR}/prefix)
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/installed)
file(RENAME ${WORK_DIR}/installed ${prefix})
foreach(installed include/collbench/collectives/algorithm.h include/collbench/models/fit.h)
  if(NOT EXISTS ${prefix}/${installed})
    fail("cmake --install did not install ${installed}")
  endif()
endforeach()
foreach(tool IN LISTS TOOLS)
  if(NOT EXISTS ${prefix}/bin/${tool})
    fail("cmake --install did not install bin/${tool}")
  endif()
endforeach()
# An installed package that points back into the trees it came from would
# pass here and break for anyone who deletes them.
file(GLOB_RECURSE package_files ${prefix}/*.cmake)
foreach(file IN LISTS package_files)
  file(READ ${file} text)
  foreach(tree ${SOURCE_DIR} ${BUILD_DIR})
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      fail("the installed ${file} refers to ${tree}")
    endif()
  endforeach()
endforeach()
file(GLOB_RECURSE installed_config ${prefix}/*/collbench-config.cmake)
list(LENGTH installed_config configs)
if(NOT configs EQUAL 1)
  fail("cmake --install installed ${configs} collbench-config.cmake: ${installed_config}")
endif()
cmake_path(GET installed_config PARENT_PATH installed_package_dir)
consumer(install ${installed_package_dir} -DCMAKE_PREFIX_PATH=${prefix})
consumer(install-models-only ${installed_package_dir} -DCMAKE_PREFIX_PATH=${prefix}
         -DCONSUMER_MODELS_ONLY=ON)

# --- from the build tree
consumer(build-tree ${BUILD_DIR} -Dcollbench_DIR=${BUILD_DIR})
consumer(build-tree-models-only ${BUILD_DIR} -Dcollbench_DIR=${BUILD_DIR} -DCONSUMER_MODELS_ONLY=ON)

clean_up()
