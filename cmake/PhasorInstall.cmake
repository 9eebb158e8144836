# install(EXPORT), phasorConfig.cmake, phasorConfigVersion.cmake, phasor.pc, headers.
include(CMakePackageConfigHelpers)
install(TARGETS phasor EXPORT phasorTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/phasor DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/phasor/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/phasor)
# phasor_deps is private to the shared library; export it empty so the export set is complete.
install(TARGETS phasor_deps EXPORT phasorTargets)
install(EXPORT phasorTargets NAMESPACE phasor:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/phasor)
configure_package_config_file(cmake/phasorConfig.cmake.in ${PROJECT_BINARY_DIR}/phasorConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/phasor)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/phasorConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/phasorConfig.cmake ${PROJECT_BINARY_DIR}/phasorConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/phasor)
configure_file(cmake/phasor.pc.in ${PROJECT_BINARY_DIR}/phasor.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/phasor.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
