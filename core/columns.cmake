# Generates collbench/core/columns.h, the columns of every CSV the tools
# write, from core/columns.csv at configure time: the writers' headers and
# the readers' value rules are its constexpr tables, so a new column is one
# line of the CSV. Editing the CSV re-runs the configure step at the next
# build (CMAKE_CONFIGURE_DEPENDS).
#
# Sets COLLBENCH_COLUMNS_INCLUDE_DIR, the folder to add to a target's
# PRIVATE include directories (the header is not installed: no public header
# includes it).
#
# The CSV's first five fields (file, column, type, unit, range) are plain
# (no comma, quote or semicolon), so a regular expression reads them; values
# and meaning, last, may be quoted RFC 4180 fields, which only the
# documentation (scripts/column_tables.py) and the Python reader need.

set(collbench_columns_csv ${CMAKE_CURRENT_LIST_DIR}/columns.csv)
set(COLLBENCH_COLUMNS_INCLUDE_DIR ${PROJECT_BINARY_DIR}/core/include)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${collbench_columns_csv} ${CMAKE_CURRENT_LIST_DIR}/columns.h.in)

function(collbench_columns_error line_number text)
  message(FATAL_ERROR "core/columns.csv:${line_number}: ${text}")
endfunction()

# A range of the CSV ("> 0", ">= 1 and <= 1e9", "<= 1", "finite") as the
# initializer fields checked, lowest, lowest_included, highest.
function(collbench_columns_range range line_number out)
  set(inf "kInfinity")
  set(number "-?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?")
  if("${range}" STREQUAL "")
    set(${out} "false, -${inf}, true, ${inf}" PARENT_SCOPE)
  elseif("${range}" STREQUAL "finite")
    set(${out} "true, -${inf}, true, ${inf}" PARENT_SCOPE)
  elseif("${range}" MATCHES "^<= (${number})$")
    set(${out} "true, -${inf}, true, ${CMAKE_MATCH_1}" PARENT_SCOPE)
  elseif("${range}" MATCHES "^(>=|>) (${number})( and <= (${number}))?$")
    set(included false)
    if(CMAKE_MATCH_1 STREQUAL ">=")
      set(included true)
    endif()
    set(highest ${inf})
    if(NOT "${CMAKE_MATCH_6}" STREQUAL "")
      set(highest ${CMAKE_MATCH_6})
    endif()
    set(${out} "true, ${CMAKE_MATCH_2}, ${included}, ${highest}" PARENT_SCOPE)
  else()
    collbench_columns_error(${line_number} "range '${range}' is none of '', 'finite', '> A', "
                            "'>= A', '<= B', '> A and <= B', '>= A and <= B'")
  endif()
endfunction()

function(collbench_generate_columns)
  file(READ ${collbench_columns_csv} text)
  # One list element per line: semicolons and brackets would split or glue
  # elements, and only the fields after the fifth may hold them.
  string(REPLACE ";" "{semicolon}" text "${text}")
  string(REPLACE "[" "{open}" text "${text}")
  string(REPLACE "]" "{close}" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  list(POP_FRONT lines header)
  if(NOT header STREQUAL "file,column,type,unit,range,values,meaning")
    collbench_columns_error(1 "header '${header}'; expected "
                            "file,column,type,unit,range,values,meaning")
  endif()
  set(tables "")
  set(files "")
  set(current "")
  set(line_number 1)
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    if(line STREQUAL "")
      continue()
    endif()
    if(NOT line MATCHES "^([a-z_]+),([A-Za-z0-9_]+),([a-z]+),([^,\"{}]+),([^,\"{}]*),")
      collbench_columns_error(${line_number} "expected file,column,type,unit,range,... with "
                              "plain first five fields (unit not empty: 'none' for text)")
    endif()
    set(file "${CMAKE_MATCH_1}")
    set(column "${CMAKE_MATCH_2}")
    set(type "${CMAKE_MATCH_3}")
    set(unit "${CMAKE_MATCH_4}")
    set(range "${CMAKE_MATCH_5}")
    if(NOT type MATCHES "^(text|integer|number|list)$")
      collbench_columns_error(${line_number}
                              "type '${type}' is none of text, integer, number, list")
    endif()
    if(NOT "${range}" STREQUAL "" AND NOT type MATCHES "^(integer|number)$")
      collbench_columns_error(${line_number} "${column}: a range needs type integer or number")
    endif()
    collbench_columns_range("${range}" ${line_number} bounds)
    if(NOT file STREQUAL current)
      if(file IN_LIST files)
        collbench_columns_error(${line_number} "the rows of file ${file} are not together")
      endif()
      if(NOT current STREQUAL "")
        string(APPEND tables "};\n\n")
      endif()
      list(APPEND files ${file})
      set(current ${file})
      set(seen "")
      # collbench -> kCollbench, the array of the file's columns.
      string(SUBSTRING ${file} 0 1 first)
      string(TOUPPER ${first} first)
      string(SUBSTRING ${file} 1 -1 rest)
      string(APPEND tables "// ${file}\ninline constexpr Column k${first}${rest}[] = {\n")
    endif()
    if(column IN_LIST seen)
      collbench_columns_error(${line_number} "column ${column} of ${file} listed twice")
    endif()
    list(APPEND seen ${column})
    string(APPEND tables "    {\"${column}\", Type::${type}, \"${unit}\", ${bounds}},\n")
  endforeach()
  string(APPEND tables "};")
  set(COLLBENCH_COLUMN_TABLES "${tables}")
  set(header_path ${COLLBENCH_COLUMNS_INCLUDE_DIR}/collbench/core/columns.h)
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/columns.h.in ${header_path} @ONLY)
endfunction()

collbench_generate_columns()
