# Tests of the DNN catalog, workloads and size parsing (benchmarks/catalog).
# They need only the catalog library, so they build and run while the
# collectives are still being written.
add_executable(catalog_tests catalog_test.cpp workload_test.cpp sizes_test.cpp)
target_link_libraries(catalog_tests PRIVATE collbench::catalog GTest::gtest_main collbench_warnings)
gtest_discover_tests(catalog_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# collbench-catalog as a user runs it.
add_test(NAME catalog_cli_list COMMAND collbench-catalog list)
set_tests_properties(catalog_cli_list PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "resnet50 +25,557,032 +161 ")

add_test(NAME catalog_cli_list_csv COMMAND collbench-catalog list --csv --dtype f16)
set_tests_properties(catalog_cli_list_csv PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "\nresnet50,[^\n]*,25557032,161,f16,2,51114064,")

add_test(NAME catalog_cli_show_resnet50_ddp COMMAND collbench-catalog show resnet50 --buckets ddp)
set_tests_properties(catalog_cli_show_resnet50_ddp PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "buckets of resnet50:ddp=25MiB[^\n]*\n[^\n]*\n[^\n]*\n +0 +2 +0\\.\\.1 +fc\\.bias +fc\\.weight")

# Bad input: exit code 2 and one message on stderr that says what is accepted.
set(catalog_expect ${CMAKE_CURRENT_SOURCE_DIR}/catalog_cli_expect.cmake)
function(catalog_cli_error_test name args stderr_regex)
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:collbench-catalog> "-DARGS=${args}"
                   "-DEXPECT_STDERR=${stderr_regex}" -P ${catalog_expect})
  set_tests_properties(${name} PROPERTIES LABELS unit)
endfunction()
catalog_cli_error_test(catalog_cli_unknown_model "show|resnet51"
  "unknown model \"resnet51\"; known models: alexnet, alexnet_caffe, vgg16, googlenet, inception_v3, resnet50, resnet152, bert_base, bert_large, gpt2, vit_b16, llama2_7b, llama3_8b, mixtral_8x7b")
catalog_cli_error_test(catalog_cli_bad_cap "show|resnet50|--buckets|ddp=12XB" "unknown unit \"XB\"")
catalog_cli_error_test(catalog_cli_bad_scheme "show|resnet50|--buckets|horovod"
  "--buckets \"horovod\": accepted are ddp, ddp=CAP, fusion, fusion=CAP")
catalog_cli_error_test(catalog_cli_bad_dtype "list|--dtype|f8" "unknown dtype \"f8\"; accepted: f32, f64, f16, bf16")
catalog_cli_error_test(catalog_cli_no_subcommand "" "subcommand")
