# `make package` (cpack -G DEB): the binary and its second names, the gRPC module, systemd units and slice,
# default configs in /etc/gcm, the data files (XID catalogue), generated --help pages, the README and docs/.
include(GNUInstallDirs)

install(TARGETS gcm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS gcm_otlp_grpc LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/gcm)
# health_checks is gcm under a second name; Slurm's Prolog=/Epilog=/HealthCheckProgram= take no arguments, so the
# suite runners are reached through their own names too.
install(CODE "
  set(root \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  file(MAKE_DIRECTORY \"\${root}/${CMAKE_INSTALL_LIBDIR}/gcm\")
  file(CREATE_LINK gcm \"\${root}/${CMAKE_INSTALL_BINDIR}/health_checks\" SYMBOLIC)
  foreach(name gcm-prolog gcm-epilog gcm-healthcheck)
    file(CREATE_LINK ../../${CMAKE_INSTALL_BINDIR}/gcm \"\${root}/${CMAKE_INSTALL_LIBDIR}/gcm/\${name}\" SYMBOLIC)
  endforeach()
")

file(GLOB GCM_UNITS ${PROJECT_SOURCE_DIR}/deploy/systemd/*)
install(FILES ${GCM_UNITS} DESTINATION /lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/etc/gcm/config.toml ${PROJECT_SOURCE_DIR}/deploy/etc/gcm/suite.toml
        DESTINATION /etc/gcm)
if(EXISTS ${PROJECT_SOURCE_DIR}/data)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gcm)
endif()
# The training jobs' step-time reporter (docs/reference/job-signals.md): standard library only, importable by the
# system's python3 (`import gcm_reporter`); from a checkout, python/ on sys.path.
install(FILES ${PROJECT_SOURCE_DIR}/python/gcm_reporter.py DESTINATION lib/python3/dist-packages)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The README points to the reference pages and the alert runbook for the details; they travel with it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")

# --help of every command, generated from the built binary (what the binary says is what the pages say).
set(GCM_HELP_DIR ${CMAKE_BINARY_DIR}/help)
add_custom_command(
  OUTPUT ${GCM_HELP_DIR}/stamp
  COMMAND ${CMAKE_COMMAND} -DGCM=$<TARGET_FILE:gcm> -DOUT=${GCM_HELP_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/help_pages.cmake
  DEPENDS gcm ${PROJECT_SOURCE_DIR}/cmake/help_pages.cmake
  COMMENT "help pages")
add_custom_target(help_pages ALL DEPENDS ${GCM_HELP_DIR}/stamp)
install(DIRECTORY ${GCM_HELP_DIR}/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/help FILES_MATCHING PATTERN "*.txt")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gcm)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "GCM maintainers <gcm@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU cluster monitoring and health checks for Slurm (gcm, health_checks)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # debug info stays in the build tree
# libcurl (HTTP sinks), libssl3 (TLS listeners) and libcrypt1 (basic auth) are dlopen'ed, so dpkg-shlibdeps cannot
# see them. libcrypt1 is essential in Debian; libssl3 comes with libcurl4.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4, libssl3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/conffiles ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
