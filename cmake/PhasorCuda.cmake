# The CUDA backend (issue #6). PHASOR_CUDA: AUTO builds it when a CUDA compiler is found, ON requires
# it, OFF never builds it. Sets PHASOR_WITH_CUDA and defines phasor_enable_cuda(target).
#
# Tested with CMake 3.25 and nvcc 13.0 (host compiler GCC 12): CMake 3.25 knows no CUDA 20 dialect
# flag for nvcc, so device code is C++17. A machine without a GPU or driver builds fine: nvcc needs
# neither, and CMake skips its compiler run check.
string(TOUPPER "${PHASOR_CUDA}" _phasor_cuda)
if(NOT _phasor_cuda MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|YES|NO|1|0)$")
  message(FATAL_ERROR "PHASOR_CUDA must be AUTO, ON or OFF (got '${PHASOR_CUDA}')")
endif()
set(PHASOR_WITH_CUDA OFF)
if(PHASOR_CUDA_EMULATION)
  # The CUDA backend's sources, compiled by the host compiler against the host emulator of tests/cuda_emu
  # (Note [CUDA emulation] in tests/cuda_emu/emu.hpp): needs the toolkit's headers, no nvcc, no GPU.
  find_package(CUDAToolkit REQUIRED)
  set(PHASOR_WITH_CUDA ON)
  message(STATUS "phasor: CUDA backend ON, emulated on the host (toolkit ${CUDAToolkit_VERSION} headers)")
elseif(NOT _phasor_cuda MATCHES "^(OFF|FALSE|NO|0)$")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # sm_90 machine code plus compute_90 PTX (newer GPUs JIT the PTX); override with -DCMAKE_CUDA_ARCHITECTURES.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    if(CCACHE_PROGRAM AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(PHASOR_WITH_CUDA ON)
    message(STATUS "phasor: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, toolkit ${CUDAToolkit_VERSION}, "
                   "architectures ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(_phasor_cuda MATCHES "^(ON|TRUE|YES|1)$")
    message(FATAL_ERROR "PHASOR_CUDA=ON but no CUDA compiler was found: put nvcc on PATH or set CMAKE_CUDA_COMPILER "
                        "(or configure with -DPHASOR_CUDA=AUTO/OFF for a CPU-only build)")
  else()
    message(STATUS "phasor: no CUDA compiler found, building CPU-only (PHASOR_CUDA=AUTO)")
  endif()
else()
  message(STATUS "phasor: CUDA backend OFF (PHASOR_CUDA=OFF)")
endif()

# Links `target` with the toolkit's runtime (shared, privately: no CUDA in phasor's public interface),
# tells src/cuda/libraries.cpp where cuBLAS, cuFFT and cuSOLVER are (they are dlopen()ed on first use: Note
# [lazy CUDA libraries]) and compiles its .cu files as CUDA 17 for CMAKE_CUDA_ARCHITECTURES. Only the
# sources that talk to the runtime (src/cuda/*.cpp, the .cu files, and the library backends named
# src/<area>/cufft_*.cpp, cublas_*.cpp or cusolver_*.cpp) get PHASOR_WITH_CUDA=1 and the
# toolkit's include directories: every other file compiles exactly as in a CPU-only build, so the two
# builds share their ccache entries and CUDA headers cannot leak into the core.
function(phasor_enable_cuda target)
  if(PHASOR_CUDA_EMULATION)
    phasor_enable_cuda_emulation(${target})
    return()
  endif()
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
                                             CUDA_RUNTIME_LIBRARY Shared)
  # Full paths rather than the CUDA:: targets: those would add the toolkit include directory to every
  # source ($<LINK_ONLY> strips usage requirements from LINK_LIBRARIES only since CMake 3.26).
  target_link_libraries(${target} PRIVATE ${CUDA_cudart_LIBRARY})
  phasor_cuda_sources(${target} _cuda_srcs)
  set(_isystem)
  foreach(_d IN LISTS CUDAToolkit_INCLUDE_DIRS)
    list(APPEND _isystem -isystem ${_d})  # system headers: our warnings stay ours
  endforeach()
  set_source_files_properties(${_cuda_srcs} TARGET_DIRECTORY ${target} PROPERTIES
    COMPILE_DEFINITIONS PHASOR_WITH_CUDA=1 COMPILE_OPTIONS "${_isystem}")
  # No kernel spills registers to local memory on sm_90: ptxas fails the build where one would (a spill
  # puts memory traffic into a loop that Note [loads in flight] sized by registers; scripts/cuda-resources.sh
  # lists every kernel's registers). For other architectures a spill is a warning.
  set(_cu ${_cuda_srcs})
  list(FILTER _cu INCLUDE REGEX "\\.cu$")
  set(_spills -Xptxas=--warn-on-spills)
  if("${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "90")
    set(_spills -Xptxas=--warn-on-spills,--warning-as-error)
  endif()
  set_property(SOURCE ${_cu} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS ${_spills})
  # soname (e.g. libcublas.so.13, from the real file's name) and build-time path of each dlopen()ed library
  set(_lib_defs)
  foreach(_lib cublas cufft cusolver)
    if(NOT CUDA_${_lib}_LIBRARY)
      message(FATAL_ERROR "phasor: the CUDA toolkit has no ${_lib} library (CUDA_${_lib}_LIBRARY)")
    endif()
    get_filename_component(_real "${CUDA_${_lib}_LIBRARY}" REALPATH)
    get_filename_component(_name "${_real}" NAME)
    string(REGEX MATCH "^lib${_lib}\\.so\\.[0-9]+" _soname "${_name}")
    if(NOT _soname)
      set(_soname "${_name}")
    endif()
    string(TOUPPER ${_lib} _up)
    list(APPEND _lib_defs "PHASOR_${_up}_SONAME=\"${_soname}\"" "PHASOR_${_up}_PATH=\"${_real}\"")
  endforeach()
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/cuda/libraries.cpp TARGET_DIRECTORY ${target} APPEND PROPERTY
    COMPILE_DEFINITIONS ${_lib_defs})
endfunction()

# Sets `out` to the sources of `target` that talk to the CUDA runtime: the .cu files, src/cuda/*.cpp and
# the library backends named src/<area>/cufft_*.cpp, cublas_*.cpp or cusolver_*.cpp.
function(phasor_cuda_sources target out)
  get_target_property(_srcs ${target} SOURCES)
  set(_cuda_srcs)
  foreach(_s IN LISTS _srcs)
    if(_s MATCHES "\\.cu$" OR _s MATCHES "/src/cuda/[^/]*\\.cpp$" OR _s MATCHES "/src/[^/]+/cu(fft|blas|solver)_[^/]*\\.cpp$")
      list(APPEND _cuda_srcs ${_s})
    endif()
  endforeach()
  set(${out} ${_cuda_srcs} PARENT_SCOPE)
endfunction()

# The emulation build (PHASOR_CUDA_EMULATION): the same CUDA sources, the .cu files compiled as C++
# with tests/cuda_emu/device_prelude.hpp force-included, linked with libphasor_cuda_emu instead of
# libcudart, which also stands in for cuFFT, cuBLAS and cuSOLVER when src/cuda/libraries.cpp dlopen()s them.
function(phasor_enable_cuda_emulation target)
  set(_emu ${PROJECT_SOURCE_DIR}/tests/cuda_emu)
  if(NOT TARGET phasor_cuda_emu)
    add_library(phasor_cuda_emu SHARED ${_emu}/runtime.cpp ${_emu}/cufft.cpp ${_emu}/cublas.cpp ${_emu}/cusolver.cpp)
    target_include_directories(phasor_cuda_emu SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    target_link_libraries(phasor_cuda_emu PRIVATE phasor_deps)
    set_target_properties(phasor_cuda_emu PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
    target_compile_options(phasor_cuda_emu PRIVATE -Wall -Wextra)
    if(PHASOR_SANITIZE)
      # The emulator switches its fibers' stacks by hand, which AddressSanitizer's stack checks do not
      # follow (a fresh fiber's first frame lands in the poisoned redzones of the last one's): it stays
      # uninstrumented; the library and the kernels it runs are checked.
      target_compile_options(phasor_cuda_emu PRIVATE -fno-sanitize=address)
    endif()
  endif()
  target_link_libraries(${target} PRIVATE phasor_cuda_emu)
  phasor_cuda_sources(${target} _cuda_srcs)
  set(_isystem)
  foreach(_d IN LISTS CUDAToolkit_INCLUDE_DIRS)
    list(APPEND _isystem -isystem ${_d})
    if(EXISTS ${_d}/cccl)
      list(APPEND _isystem -isystem ${_d}/cccl)  # libcu++ (cuda/std/...), which nvcc finds by itself
    endif()
  endforeach()
  set_source_files_properties(${_cuda_srcs} TARGET_DIRECTORY ${target} PROPERTIES
    COMPILE_DEFINITIONS PHASOR_WITH_CUDA=1 COMPILE_OPTIONS "${_isystem}")
  set(_cu ${_cuda_srcs})
  list(FILTER _cu INCLUDE REGEX "\\.cu$")
  set_source_files_properties(${_cu} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX)
  set_property(SOURCE ${_cu} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_DEFINITIONS PHASOR_CUDA_EMULATION=1)
  set_property(SOURCE ${_cu} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
    -x c++ -include ${_emu}/device_prelude.hpp -I${_emu} -Wno-unknown-pragmas -Wno-sign-compare)
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/cuda/libraries.cpp TARGET_DIRECTORY ${target} APPEND PROPERTY
    COMPILE_DEFINITIONS "PHASOR_CUBLAS_SONAME=\"$<TARGET_FILE:phasor_cuda_emu>\""
                        "PHASOR_CUFFT_SONAME=\"$<TARGET_FILE:phasor_cuda_emu>\""
                        "PHASOR_CUSOLVER_SONAME=\"$<TARGET_FILE:phasor_cuda_emu>\"")
  if(PHASOR_EMU_SANITIZE)
    # Only the CUDA backend's sources (its kernels run on the host here) get AddressSanitizer and UBSan:
    # a kernel's access outside its allocations (the emulator poisons what no allocation owns) or its
    # undefined behaviour is reported, while the rest of the library compiles as in the plain emulation
    # build (and shares its ccache entries). Programs linking the library get the runtimes first.
    # -O1 (after the build type's -O3, so it wins): the sanitized CUDA sources compile in half the time
    # (the four largest, 130 s -> 62 s of CPU on the 2-core VM) for CUDA tests about 10% slower (85 s ->
    # 93 s for CI's two runs), and fewer of the sanitizers' checks are optimized away.
    set_property(SOURCE ${_cuda_srcs} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
      -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()
