# `cmake --install` puts headers, the library and a tandemConfig.cmake under
# the prefix, so an outside project can `find_package(tandem)` and link
# `tandem::tandem`.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tandem
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tandem EXPORT tandemTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tandem_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT tandemTargets NAMESPACE tandem::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/tandemConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tandemConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/tandemConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tandemConfig.cmake
              ${PROJECT_BINARY_DIR}/tandemConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)
