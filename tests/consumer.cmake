# collbench as a library (cmake/install.cmake): tests/consumer/, a project of
# its own, finds it with find_package(collbench) from an install prefix and
# from this build tree, links collbench::collbench and collbench::models, and
# runs. It installs the whole build, so it needs every target built.
list(TRANSFORM COLLBENCH_INSTALLED_TOOLS REPLACE "(.+)" "$<TARGET_FILE_NAME:\\1>"
     OUTPUT_VARIABLE consumer_tool_files)
string(JOIN "|" consumer_tool_files ${consumer_tool_files})
add_test(NAME consumer_find_package
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                 -DCONSUMER_DIR=${CMAKE_CURRENT_SOURCE_DIR}/consumer
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer_find_package
                 -DVERSION=${PROJECT_VERSION} "-DTOOLS=${consumer_tool_files}"
                 "-DGENERATOR=${CMAKE_GENERATOR}" -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
                 -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
                 -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 "-DCXX_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/find_package_test.cmake)
set_tests_properties(consumer_find_package PROPERTIES LABELS "install;full" TIMEOUT 600 PROCESSORS 2)
