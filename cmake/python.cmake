# COLLBENCH_PYTHON: the Python 3 that collbench-fit and collbench-predict run
# scripts/plot.py with (their --python default). It must import matplotlib,
# which the python3 first on a user's PATH (a pyenv or venv one) often
# cannot: so it is checked here, at configure time. Unset, the first of
# Debian's /usr/bin/python3 and the python3 on PATH that imports matplotlib
# is taken; set (-DCOLLBENCH_PYTHON=/path/to/python3), it must import it.
set(COLLBENCH_PYTHON "" CACHE FILEPATH "Python 3 with matplotlib for collbench's plots")

function(collbench_python_has_matplotlib python result)
  execute_process(COMMAND ${python} -c "import matplotlib" RESULT_VARIABLE status
                  OUTPUT_QUIET ERROR_QUIET)
  if(status EQUAL 0)
    set(${result} TRUE PARENT_SCOPE)
  else()
    set(${result} FALSE PARENT_SCOPE)
  endif()
endfunction()

if(COLLBENCH_PYTHON)
  collbench_python_has_matplotlib(${COLLBENCH_PYTHON} has_matplotlib)
  if(NOT has_matplotlib)
    message(FATAL_ERROR "COLLBENCH_PYTHON=${COLLBENCH_PYTHON} cannot import matplotlib: install "
                        "it for that Python (Debian: python3-matplotlib) or name another one")
  endif()
else()
  find_program(collbench_path_python python3)
  foreach(candidate /usr/bin/python3 ${collbench_path_python})
    if(EXISTS ${candidate})
      collbench_python_has_matplotlib(${candidate} has_matplotlib)
      if(has_matplotlib)
        set(COLLBENCH_PYTHON ${candidate} CACHE FILEPATH
            "Python 3 with matplotlib for collbench's plots" FORCE)
        break()
      endif()
    endif()
  endforeach()
  if(NOT COLLBENCH_PYTHON)
    # The tools still build and run; asked to plot, they say that this Python
    # cannot (plot_runner.cpp), and --python names another.
    message(WARNING "no Python 3 with matplotlib (tried /usr/bin/python3 and python3 on PATH): "
                    "collbench-fit and collbench-predict cannot plot until -DCOLLBENCH_PYTHON "
                    "names one (Debian: apt-get install python3-matplotlib)")
    set(COLLBENCH_PYTHON /usr/bin/python3)
  endif()
endif()
message(STATUS "collbench: plots with ${COLLBENCH_PYTHON}")
