# check_doc.cmake - what doxygen itself does not check in the API reference (run by
# the `doc` target after doxygen): cmake -DXML_DIR=<doxygen's xml output> -P check_doc.cmake
#   - each public header was documented at all: without its @file block doxygen
#     leaves out the whole file and warns about nothing;
#   - every enum value has a description: doxygen before 1.9.6 (Debian 12 has
#     1.9.4) has no WARN_IF_UNDOC_ENUM_VAL.
# Fails naming each problem.
cmake_minimum_required(VERSION 3.16)

set(headers clops.h clops_errors.h)
set(problems "")
set(values 0)
foreach(header IN LISTS headers)
  string(REPLACE "_" "__" compound "${header}")
  string(REPLACE "." "_8" compound "${compound}")
  set(xml "${XML_DIR}/${compound}.xml")
  if(NOT EXISTS "${xml}")
    list(APPEND problems "${header}: not in the reference (no ${compound}.xml)")
    continue()
  endif()
  file(READ "${xml}" text)
  # The file's own description follows its last member section.
  string(FIND "${text}" "</sectiondef>" last REVERSE)
  string(SUBSTRING "${text}" ${last} -1 tail)
  if(last EQUAL -1 OR NOT tail MATCHES "<para>")
    list(APPEND problems "${header}: the file is not documented (its /** @file */ block is missing?)")
  endif()
  while(TRUE)
    string(FIND "${text}" "<enumvalue " begin)
    if(begin EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${text}" ${begin} -1 text)
    string(FIND "${text}" "</enumvalue>" end)
    string(SUBSTRING "${text}" 0 ${end} value)
    string(SUBSTRING "${text}" ${end} -1 text)
    math(EXPR values "${values} + 1")
    if(NOT value MATCHES "<para>")
      string(REGEX MATCH "<name>([^<]*)</name>" name "${value}")
      list(APPEND problems "${header}: enum value ${CMAKE_MATCH_1} is not documented")
    endif()
  endwhile()
endforeach()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "API reference incomplete:\n  ${text}")
endif()
message(STATUS "API reference: every enum value of ${values} documented")
