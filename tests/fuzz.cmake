# libFuzzer targets for the parsers that read user input: --sizes, --workload
# and the CSV reader of collbench-fit. libFuzzer comes with clang, not g++, so
# the fuzzers are compiled with clang++ directly (Debian's clang and
# libclang-rt-14-dev, installed by scripts/setup.sh), each with ASan and
# UBSan, and each runs for a bounded time in CTest.
find_program(COLLBENCH_CLANGXX NAMES clang++ clang++-14)
set(COLLBENCH_FUZZ_SECONDS 15 CACHE STRING "Seconds each fuzz target runs in CTest")
if(NOT COLLBENCH_CLANGXX)
  message(STATUS "collbench: clang++ not found, fuzz tests disabled")
  return()
endif()

set(fuzz_flags -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined
    -fno-sanitize-recover=undefined -I${PROJECT_SOURCE_DIR}/include)
set(catalog_dir ${PROJECT_SOURCE_DIR}/benchmarks/catalog)
set(catalog_sources ${catalog_dir}/catalog.cpp ${catalog_dir}/layers.cpp
    ${catalog_dir}/models_cnn.cpp ${catalog_dir}/models_llama.cpp ${catalog_dir}/models_resnet.cpp
    ${catalog_dir}/models_transformer.cpp ${catalog_dir}/sizes.cpp ${catalog_dir}/workload.cpp)
set(fuzz_sizes_sources ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_sizes.cpp ${catalog_dir}/sizes.cpp)
set(fuzz_workload_sources ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_workload.cpp ${catalog_sources})
set(fuzz_csv_sources ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_csv.cpp
    ${PROJECT_SOURCE_DIR}/core/csv.cpp)

foreach(target fuzz_sizes fuzz_workload fuzz_csv)
  set(output ${CMAKE_CURRENT_BINARY_DIR}/${target})
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${COLLBENCH_CLANGXX} ${fuzz_flags} ${${target}_sources} -lfmt -o ${output}
    DEPENDS ${${target}_sources}
    COMMENT "Building libFuzzer target ${target} with clang++"
    VERBATIM)
  add_custom_target(${target}_build ALL DEPENDS ${output})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${target}_corpus)
  add_test(NAME ${target}
           COMMAND ${output} -max_total_time=${COLLBENCH_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
                   -print_final_stats=1
                   -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/${target}_ ${CMAKE_CURRENT_BINARY_DIR}/${target}_corpus
                   ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/${target})
  set_tests_properties(${target} PROPERTIES LABELS "fuzz;full" TIMEOUT 120)
endforeach()
