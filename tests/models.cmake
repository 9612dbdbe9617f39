# Tests of cost-model fitting and scalability prediction (benchmarks/models):
# unit tests of the library, then the two tools as users run them, on
# synthetic CSVs generated from known α, β, γ and on bad input.
# The fitter's tests follow its files (fit_<file>_test.cpp: common, links,
# collectives, selection, output); one binary, so one CTest entry.
add_executable(models_tests fit_common_test.cpp fit_links_test.cpp fit_collectives_test.cpp
               fit_selection_test.cpp fit_output_test.cpp predict_test.cpp
               replace_together_test.cpp tuning_test.cpp models_synthetic.cpp)
# The fit over several launches (the launch column), in a file of its own.
target_sources(models_tests PRIVATE fit_launches_test.cpp)
target_link_libraries(models_tests PRIVATE collbench::models GTest::gtest_main collbench_warnings)
# tuning_test.cpp reads the committed rules files of results/tuning/.
target_compile_definitions(models_tests PRIVATE COLLBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
collbench_add_gtest(models_tests)

add_executable(models_synthetic_csv models_synthetic_main.cpp models_synthetic.cpp)
target_link_libraries(models_synthetic_csv PRIVATE collbench::models collbench_warnings)

set(models_data ${CMAKE_CURRENT_BINARY_DIR}/models_tool_tests)
set(models_expect ${CMAKE_CURRENT_SOURCE_DIR}/models_expect.cmake)
set(models_plot /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/plot.py)

add_test(NAME models_synthetic_data
         COMMAND ${CMAKE_COMMAND} -E make_directory ${models_data}/bad ${models_data}/plots)
add_test(NAME models_synthetic_csv COMMAND models_synthetic_csv ${models_data})
set_tests_properties(models_synthetic_data PROPERTIES FIXTURES_SETUP models_dir LABELS unit)
set_tests_properties(models_synthetic_csv PROPERTIES FIXTURES_SETUP models_data
                     FIXTURES_REQUIRED models_dir LABELS unit)

# models_tool_test(NAME <name> COMMAND <exe|args...> EXIT <code> [STDERR re] [STDOUT re]
#                  [FORBID files] [REQUIRE files] [NO_TEMP_IN dir] [SETUP fixture] [NEEDS fixture])
function(models_tool_test)
  cmake_parse_arguments(ARG "" "NAME;EXIT;STDERR;STDOUT;NO_TEMP_IN;SETUP;NEEDS"
                        "COMMAND;FORBID;REQUIRE" ${ARGN})
  string(REPLACE ";" "|" command "${ARG_COMMAND}")
  set(args "-DCOMMAND=${command}" -DEXPECT_EXIT=${ARG_EXIT})
  if(DEFINED ARG_STDERR)
    list(APPEND args "-DEXPECT_STDERR=${ARG_STDERR}")
  endif()
  if(DEFINED ARG_STDOUT)
    list(APPEND args "-DEXPECT_STDOUT=${ARG_STDOUT}")
  endif()
  if(ARG_FORBID)
    string(REPLACE ";" "|" forbid "${ARG_FORBID}")
    list(APPEND args "-DFORBID=${forbid}")
  endif()
  if(ARG_REQUIRE)
    string(REPLACE ";" "|" require "${ARG_REQUIRE}")
    list(APPEND args "-DREQUIRE=${require}")
  endif()
  if(DEFINED ARG_NO_TEMP_IN)
    list(APPEND args "-DNO_TEMP_IN=${ARG_NO_TEMP_IN}")
  endif()
  add_test(NAME ${ARG_NAME} COMMAND ${CMAKE_COMMAND} ${args} -P ${models_expect})
  set(needs models_data ${ARG_NEEDS})
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS unit FIXTURES_REQUIRED "${needs}")
  if(ARG_SETUP)
    set_tests_properties(${ARG_NAME} PROPERTIES FIXTURES_SETUP ${ARG_SETUP})
  endif()
endfunction()

# --- collbench-fit ------------------------------------------------------------
models_tool_test(NAME models_fit_synthetic
  COMMAND $<TARGET_FILE:collbench-fit> ${models_data}/good.csv --out-dir ${models_data}/good
  EXIT 0 SETUP models_fit_output
  STDOUT "Point-to-point.*Selection allreduce ranks=4 .*  measured:  [a-z_]+:0-[0-9]+;.*  predicted: [a-z_]+:0-"
  REQUIRE ${models_data}/good/models.csv ${models_data}/good/predictions.csv
  NO_TEMP_IN ${models_data}/good)
models_tool_test(NAME models_fit_brief
  COMMAND $<TARGET_FILE:collbench-fit> ${models_data}/good.csv --out-dir ${models_data}/brief --brief
  EXIT 0
  STDOUT "^p2p mpi inter: alpha 19\\.[0-9]+ us, beta 1\\.2[0-9]+ GB/s.*\nallreduce ring mpi inter f32 sum: median relative error bottom-up [0-9.]+%, top-down [0-9.]+%.*selection allreduce mpi inter f32 sum ranks=2 measured:  recursive_doubling:0-.*selection allreduce mpi inter f32 sum ranks=2 predicted: recursive_doubling:0-")

# Messages are regexes; ';' would split them as CMake lists, so '.' stands in.
set(bad_outputs ${models_data}/bad/models.csv ${models_data}/bad/predictions.csv
    ${models_data}/bad/selections.csv)
foreach(case
    "missing_column|missing_column\\.csv: missing column median_us. collbench-fit needs"
    "empty|empty\\.csv: empty file"
    "header_only|header_only\\.csv: no data rows"
    "nan|nan\\.csv: data row 5: median_us is 'nan'. expected a finite number of µs > 0"
    "too_few|too_few\\.csv: too few points for the Hockney fit of the p2p ping-pong transport=mpi provider=\\(none\\) placement=inter: 2 distinct points")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 message)
  models_tool_test(NAME models_fit_bad_${name}
    COMMAND $<TARGET_FILE:collbench-fit> ${models_data}/${name}.csv --out-dir ${models_data}/bad
    EXIT 2 STDERR "^collbench-fit: [^ ]*/${message}" FORBID ${bad_outputs}
    NO_TEMP_IN ${models_data}/bad)
endforeach()
# One bad file among good ones still fails, naming the bad one.
models_tool_test(NAME models_fit_bad_among_good
  COMMAND $<TARGET_FILE:collbench-fit> ${models_data}/good.csv ${models_data}/nan.csv
          --out-dir ${models_data}/bad
  EXIT 2 STDERR "^collbench-fit: .*nan\\.csv: data row 5" FORBID ${bad_outputs})
models_tool_test(NAME models_fit_no_such_file
  COMMAND $<TARGET_FILE:collbench-fit> ${models_data}/no_such.csv --out-dir ${models_data}/bad
  EXIT 2 STDERR "no_such\\.csv" FORBID ${bad_outputs})

# A full disk while the outputs are written: models.csv, predictions.csv and
# selections.csv all stay the earlier run's (fit_full_disk.sh).
add_test(NAME models_fit_full_disk
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fit_full_disk.sh $<TARGET_FILE:collbench-fit>
                 ${models_data}/small.csv ${models_data}/good.csv)
set_tests_properties(models_fit_full_disk PROPERTIES LABELS unit FIXTURES_REQUIRED models_data)

# --- collbench-predict ----------------------------------------------------------
models_tool_test(NAME models_predict_preset_network
  COMMAND $<TARGET_FILE:collbench-predict> --model alexnet --batch 256 --compute-seconds 2
          --network fdr --algorithms ps_central,tree,ring --max-nodes 128
  EXIT 0
  STDOUT "54\\.55 Gb/s.*ps_central: speedup peaks at p = [0-9]+.*ring: speedup peaks at p = 128")
models_tool_test(NAME models_predict_from_models_csv
  COMMAND $<TARGET_FILE:collbench-predict> --network-from ${models_data}/good/models.csv
          --model resnet50 --batch 256 --compute-seconds 0.5 --per-algorithm-fits
          --overlap-buckets --out-dir ${models_data}/predict
  EXIT 0 NEEDS models_fit_output SETUP models_scaling_output
  STDOUT "measured p2p: α = [0-9.]+ µs.*mpi uses its top-down fit.*rabenseifner: speedup peaks"
  REQUIRE ${models_data}/predict/scaling.csv NO_TEMP_IN ${models_data}/predict)
models_tool_test(NAME models_predict_keuper2016
  COMMAND $<TARGET_FILE:collbench-predict> --preset keuper2016 --out-dir ${models_data}/paper
  EXIT 0
  STDOUT "googlenet B=32 KNL:.*batch limit: p <= B = 32"
  REQUIRE ${models_data}/paper/scaling.csv ${models_data}/paper/README.md)
models_tool_test(NAME models_predict_bad_models_csv
  COMMAND $<TARGET_FILE:collbench-predict> --network-from ${models_data}/good.csv --model alexnet
          --batch 256 --compute-seconds 2 --out-dir ${models_data}/bad
  EXIT 2 STDERR "good\\.csv: missing columns model, alpha_us, beta_ns_per_byte, gamma_ns_per_byte"
  FORBID ${models_data}/bad/scaling.csv)
models_tool_test(NAME models_predict_unknown_model
  COMMAND $<TARGET_FILE:collbench-predict> --model alexnet2 --batch 256 --compute-seconds 2
  EXIT 2 STDERR "unknown model \"alexnet2\"; known models: alexnet,")
models_tool_test(NAME models_predict_mpi_without_fit
  COMMAND $<TARGET_FILE:collbench-predict> --model alexnet --batch 256 --compute-seconds 2
          --algorithms ring,mpi
  EXIT 2 STDERR "algorithm 'mpi' has no cost model of its own")
models_tool_test(NAME models_predict_missing_inputs
  COMMAND $<TARGET_FILE:collbench-predict> --model alexnet
  EXIT 2 STDERR "give --model, --batch and --compute-seconds")

# --- scripts/plot.py (matplotlib takes seconds per figure: small inputs) ---------
models_tool_test(NAME models_fit_small
  COMMAND $<TARGET_FILE:collbench-fit> ${models_data}/small.csv --out-dir ${models_data}/small
  EXIT 0 SETUP models_small_output REQUIRE ${models_data}/small/predictions.csv)
models_tool_test(NAME models_plot_sweep
  COMMAND ${models_plot} sweep ${models_data}/small.csv --out ${models_data}/plots
  EXIT 0 STDOUT "sweep_allreduce_mpi_p4_f32\\.png"
  REQUIRE ${models_data}/plots/sweep_allreduce_mpi_p4_f32.png)
models_tool_test(NAME models_plot_fit
  COMMAND ${models_plot} fit --predictions ${models_data}/small/predictions.csv
          --out ${models_data}/plots
  EXIT 0 NEEDS models_small_output STDOUT "fit_allreduce_mpi_inter_f32_sum_p4\\.png"
  REQUIRE ${models_data}/plots/fit_allreduce_mpi_inter_f32_sum_p4.png
          ${models_data}/plots/fit_p2p_mpi_inter.png ${models_data}/plots/fit_reduce_f32_sum.png)
models_tool_test(NAME models_plot_scaling
  COMMAND ${models_plot} scaling ${models_data}/predict/scaling.csv --out ${models_data}/plots
  EXIT 0 NEEDS models_scaling_output STDOUT "scaling_resnet50_B256\\.png"
  REQUIRE ${models_data}/plots/scaling_resnet50_B256.png)
# A full disk while the PNGs are drawn: the earlier run's stay, none of the
# new ones appears (plot_full_disk.sh).
add_test(NAME models_plot_full_disk
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/plot_full_disk.sh ${models_plot}
                 ${models_data}/small/predictions.csv ${models_data}/good/predictions.csv)
set_tests_properties(models_plot_full_disk PROPERTIES LABELS unit
                     FIXTURES_REQUIRED "models_data;models_fit_output;models_small_output")
models_tool_test(NAME models_plot_missing_column
  COMMAND ${models_plot} fit --predictions ${models_data}/good.csv --out ${models_data}/plots
  EXIT 2 STDERR "good\\.csv: missing columns model, measured_us, predicted_us, rel_err")

# scripts/collbench_csv.py's ReplaceTogether puts back what a failed commit renamed.
add_test(NAME replace_together_py
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/replace_together_py_test.py
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(replace_together_py PROPERTIES LABELS unit)

# scripts/collbench_options.py's OptionParser: a value option given twice is refused,
# append options and flags repeat, --help says so.
add_test(NAME option_parser_py
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/option_parser_py_test.py
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(option_parser_py PROPERTIES LABELS unit)

# The models layer needs no MPI: collbench-fit and collbench-predict load none.
add_test(NAME models_tools_load_no_mpi
         COMMAND ${CMAKE_COMMAND} "-DTOOLS=$<TARGET_FILE:collbench-fit>|$<TARGET_FILE:collbench-predict>"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/no_mpi.cmake)
set_tests_properties(models_tools_load_no_mpi PROPERTIES LABELS unit)
