# core/columns.csv, the columns of every CSV the tools write, against every
# place that names them: the READMEs' tables, the scripts' reader and the
# C++ sources (csv_schema_test.py), the writers' headers and the generated
# C++ tables (columns_test.cpp).
add_test(NAME csv_schema
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/csv_schema_test.py
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(csv_schema PROPERTIES LABELS unit)

if(TARGET collbench_harness AND TARGET collbench_models)
  add_executable(columns_tests columns_test.cpp)
  target_include_directories(columns_tests PRIVATE ${COLLBENCH_COLUMNS_INCLUDE_DIR})
  target_compile_definitions(columns_tests PRIVATE
                             COLLBENCH_COLUMNS_CSV="${PROJECT_SOURCE_DIR}/core/columns.csv")
  target_link_libraries(columns_tests PRIVATE collbench_harness collbench::models
                        GTest::gtest_main collbench_warnings)
  collbench_add_gtest(columns_tests)
endif()
