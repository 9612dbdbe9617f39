# Tests of the DNN catalog, workloads and size parsing (benchmarks/catalog).
# They need only the catalog library, so they build and run while the
# collectives are still being written.
add_executable(catalog_tests catalog_test.cpp workload_test.cpp sizes_test.cpp)
target_link_libraries(catalog_tests PRIVATE collbench::catalog GTest::gtest_main collbench_warnings)
collbench_add_gtest(catalog_tests)

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

# A workload's messages with their collectives, in issue order and per collective.
add_test(NAME catalog_cli_workload_fsdp COMMAND collbench-catalog workload llama2_7b:fsdp)
set_tests_properties(catalog_cli_workload_fsdp PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "llama2_7b:fsdp=block:bf16: 98 messages per iteration of 2-byte elements: 33 x reduce_scatter [^\n]*, 65 x allgather [^\n]*\n[^\n]*\n[^\n]*\n[^\n]*\n +0 +allgather +root forward +262,148,096 +524,296,192 ")

add_test(NAME catalog_cli_workload_tp_csv COMMAND collbench-catalog workload gpt2:tp=2 --distinct --csv)
set_tests_properties(catalog_cli_workload_tp_csv PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "^workload,index,collective,item,elements,element_bytes,bytes,multiplicity\ngpt2:tp=2:batch=1:seq=1024:bf16,0,allreduce,layer 0 attention forward,786432,2,1572864,48\n$")
add_test(NAME catalog_cli_workload_moe_csv
         COMMAND collbench-catalog workload mixtral_8x7b:moe:skew=1.2 --distinct --csv)
set_tests_properties(catalog_cli_workload_moe_csv PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "^workload,index,collective,item,elements,element_bytes,bytes,multiplicity,routing_skew,routing_returns\nmixtral_8x7b:moe:batch=1:seq=32768:skew=1.2:bf16,0,alltoallv,layer 0 dispatch forward,268435456,2,536870912,128,1.2,0\n$")

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
catalog_cli_error_test(catalog_cli_tp_on_cnn "workload|resnet50:tp=2"
  "tensor parallelism splits transformer layers, and resnet50 is not a transformer")
