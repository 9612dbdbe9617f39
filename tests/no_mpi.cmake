# The ctest models_tools_load_no_mpi (tests/models.cmake): the models layer
# needs no MPI (README.md, "What is here"), so none of the tools built on it
# loads an MPI library. ldd lists what each loads.
# Arguments (-D): TOOLS (a|b|...)
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" TOOLS "${TOOLS}")
foreach(tool IN LISTS TOOLS)
  execute_process(COMMAND ldd ${tool} RESULT_VARIABLE status OUTPUT_VARIABLE loads
                  ERROR_VARIABLE loads)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "ldd ${tool} failed (${status}):\n${loads}")
  endif()
  string(REGEX MATCHALL "lib(mpi|open-pal|open-rte|pmix)[^ \t\n]*" mpi_libraries "${loads}")
  if(mpi_libraries)
    message(FATAL_ERROR "${tool} loads MPI (${mpi_libraries}): the models layer must not link it")
  endif()
  message(STATUS "${tool}: no MPI library among what it loads")
endforeach()
