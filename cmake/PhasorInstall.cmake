# install(EXPORT), phasorConfig.cmake, phasorConfigVersion.cmake, phasor.pc, headers.
include(CMakePackageConfigHelpers)
set(_phasor_install_targets phasor)
if(TARGET phasor_cuda_emu)
  list(APPEND _phasor_install_targets phasor_cuda_emu)  # an emulation build's libphasor needs it
endif()
install(TARGETS ${_phasor_install_targets} EXPORT phasorTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/phasor DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/phasor/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/phasor)
# phasor_deps (OpenMP, OpenBLAS, Eigen) is linked PRIVATE into the shared library, so it is not part of the
# export: consumers of phasor::phasor see only its include directory and C++17 requirement.
install(EXPORT phasorTargets NAMESPACE phasor:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/phasor)
configure_package_config_file(cmake/phasorConfig.cmake.in ${PROJECT_BINARY_DIR}/phasorConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/phasor)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/phasorConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/phasorConfig.cmake ${PROJECT_BINARY_DIR}/phasorConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/phasor)
# phasor.pc is relocatable: its prefix is found from the .pc file's own place, so `cmake --install
# --prefix DIR` gives a working file in DIR whatever CMAKE_INSTALL_PREFIX was at configure time.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(PHASOR_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(PHASOR_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(PHASOR_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH _phasor_pc_up "/phasor_root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/phasor_root")
  string(REGEX REPLACE "/$" "" _phasor_pc_up "${_phasor_pc_up}")
  set(PHASOR_PC_PREFIX "\${pcfiledir}/${_phasor_pc_up}")
  set(PHASOR_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(PHASOR_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(cmake/phasor.pc.in ${PROJECT_BINARY_DIR}/phasor.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/phasor.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
