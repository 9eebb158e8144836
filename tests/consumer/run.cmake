# ctest case install_consumer (cmake -P): installs a phasor build tree into a private prefix, then
#   1. builds tests/consumer with find_package(phasor) (CMAKE_PREFIX_PATH=prefix) and runs it;
#   2. compiles tests/consumer/main.cpp with the compiler and `pkg-config --cflags --libs phasor`
#      (PKG_CONFIG_PATH=prefix/<libdir>/pkgconfig) and runs it;
#   3. checks that the exported CMake targets and phasor.pc do not leak phasor's private dependencies
#      (OpenMP, OpenBLAS, Eigen) into consumers.
# Inputs (-D): PHASOR_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR CONFIG GENERATOR CXX_COMPILER
#              COMPILER_LAUNCHER LIBDIR PKG_CONFIG EXTRA_FLAGS
cmake_minimum_required(VERSION 3.20)

foreach(var PHASOR_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER LIBDIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

function(run_step what)
  message(STATUS "[install_consumer] ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[install_consumer] FAILED (${rc}): ${what}")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
set(cmake_build "${WORK_DIR}/cmake-build")
set(pc_exe "${WORK_DIR}/pkgconfig/phasor_consumer_pc")
file(REMOVE_RECURSE "${prefix}" "${cmake_build}" "${WORK_DIR}/pkgconfig")
file(MAKE_DIRECTORY "${WORK_DIR}/pkgconfig")

run_step("install into ${prefix}"
  ${CMAKE_COMMAND} --install "${PHASOR_BINARY_DIR}" --prefix "${prefix}" --config "${CONFIG}")

# ---- no private dependency leaks out ----------------------------------------------------------------
file(GLOB target_files "${prefix}/${LIBDIR}/cmake/phasor/phasorTargets*.cmake")
if(NOT target_files)
  message(FATAL_ERROR "[install_consumer] no phasorTargets*.cmake under ${prefix}/${LIBDIR}/cmake/phasor")
endif()
foreach(f ${target_files} "${prefix}/${LIBDIR}/pkgconfig/phasor.pc")
  file(READ "${f}" text)
  if(text MATCHES "OpenMP|openblas|Eigen|gomp|fftw")
    message(FATAL_ERROR "[install_consumer] ${f} exposes a private dependency (${CMAKE_MATCH_0}):\n${text}")
  endif()
endforeach()

# ---- 1. find_package(phasor) --------------------------------------------------------------------
set(launcher_arg "")
if(COMPILER_LAUNCHER)
  set(launcher_arg "-DCMAKE_CXX_COMPILER_LAUNCHER=${COMPILER_LAUNCHER}")
endif()
run_step("configure the consumer with find_package(phasor)"
  ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${cmake_build}" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${CONFIG}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" ${launcher_arg}
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}" --no-warn-unused-cli)
run_step("build the consumer" ${CMAKE_COMMAND} --build "${cmake_build}" --config "${CONFIG}" -j 1)
file(GLOB_RECURSE exe LIST_DIRECTORIES false "${cmake_build}/phasor_consumer" "${cmake_build}/*/phasor_consumer")
list(GET exe 0 exe)
run_step("run ${exe}" "${exe}")

# ---- 2. pkg-config ----------------------------------------------------------------------------
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "[install_consumer] pkg-config not found (scripts/deps.sh installs it)")
endif()
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs phasor
  OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
execute_process(COMMAND "${PKG_CONFIG}" --variable=libdir phasor
  OUTPUT_VARIABLE pc_libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR pc_libdir STREQUAL "")
  message(FATAL_ERROR "[install_consumer] pkg-config --cflags --libs phasor failed (${rc})")
endif()
message(STATUS "[install_consumer] pkg-config --cflags --libs phasor: ${pc_flags}")
get_filename_component(pc_libdir_real "${pc_libdir}" REALPATH)
get_filename_component(prefix_libdir_real "${prefix}/${LIBDIR}" REALPATH)
if(NOT pc_libdir_real STREQUAL prefix_libdir_real)
  message(FATAL_ERROR "[install_consumer] phasor.pc points at ${pc_libdir}, not at the prefix ${prefix}/${LIBDIR}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
run_step("compile main.cpp with pkg-config flags"
  ${COMPILER_LAUNCHER} "${CXX_COMPILER}" -std=c++17 -Wall -Wextra -Werror ${extra}
    "${CONSUMER_SOURCE_DIR}/main.cpp" -o "${pc_exe}" ${pc_flags} "-Wl,-rpath,${pc_libdir}")
run_step("run ${pc_exe}" "${pc_exe}")
message(STATUS "[install_consumer] passed")
