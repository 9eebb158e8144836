# Third-party libraries used inside src/ only (never in public headers).
find_package(OpenMP REQUIRED COMPONENTS CXX)
# OpenBLAS, OpenMP build (Debian: libopenblas-openmp-dev). The pthreads build fights our
# OpenMP threads and the reference libblas is ~28x slower, so we name it explicitly.
find_library(PHASOR_OPENBLAS_LIB NAMES openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/aarch64-linux-gnu/openblas-openmp
  NO_DEFAULT_PATH)
if(NOT PHASOR_OPENBLAS_LIB)
  find_library(PHASOR_OPENBLAS_LIB NAMES openblas REQUIRED)
endif()
find_path(PHASOR_CBLAS_INCLUDE cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-openmp /usr/include/aarch64-linux-gnu/openblas-openmp
  NO_DEFAULT_PATH)
if(NOT PHASOR_CBLAS_INCLUDE)
  find_path(PHASOR_CBLAS_INCLUDE cblas.h REQUIRED)
endif()
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
# FFTW3 in double and single precision with their OpenMP thread pools (src/fft only).
find_path(PHASOR_FFTW_INCLUDE fftw3.h REQUIRED)
find_library(PHASOR_FFTW_LIB NAMES fftw3 REQUIRED)
find_library(PHASOR_FFTWF_LIB NAMES fftw3f REQUIRED)
find_library(PHASOR_FFTW_OMP_LIB NAMES fftw3_omp REQUIRED)
find_library(PHASOR_FFTWF_OMP_LIB NAMES fftw3f_omp REQUIRED)

add_library(phasor_deps INTERFACE)
target_include_directories(phasor_deps INTERFACE ${PHASOR_CBLAS_INCLUDE} ${PHASOR_FFTW_INCLUDE})
target_link_libraries(phasor_deps INTERFACE OpenMP::OpenMP_CXX ${PHASOR_OPENBLAS_LIB} Eigen3::Eigen)
target_link_libraries(phasor_deps INTERFACE ${PHASOR_FFTW_OMP_LIB} ${PHASOR_FFTWF_OMP_LIB} ${PHASOR_FFTW_LIB} ${PHASOR_FFTWF_LIB})
target_link_libraries(phasor_deps INTERFACE ${CMAKE_DL_LIBS})  # dlopen (src/cuda/libraries.cpp)
# zlib (optional): deflate for compressed .npz (src/io only). Without it, compressed .npz raises an error.
find_package(ZLIB)
if(ZLIB_FOUND)
  target_link_libraries(phasor_deps INTERFACE ZLIB::ZLIB)
  target_compile_definitions(phasor_deps INTERFACE PHASOR_HAVE_ZLIB=1)
endif()
