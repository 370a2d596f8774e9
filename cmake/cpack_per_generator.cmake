# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE): the .deb installs under
# /opt/cudadiag; the archive holds the layout at its top (cudadiag-<version>-Linux/bin/...),
# so `tar --strip-components=1 -C PREFIX -xzf` puts bin/ and lib/ directly under PREFIX.
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_PACKAGING_INSTALL_PREFIX /opt/cudadiag)
else()
  set(CPACK_PACKAGING_INSTALL_PREFIX "")
endif()
