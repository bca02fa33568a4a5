# Install rules: `cmake --install build --prefix /opt/pshard` lays out
#
#   bin/pshard-run, pshard-profile, ...   tools; RUNPATH $ORIGIN/../lib finds libpshard.so
#   lib/libpshard.so                      the C API for apps
#   lib/libpshard_cuda.so                 the CUDA plugin (CUDA builds), found by the loader
#                                         beside libpshard.so or in ../lib beside the program
#   include/pshard/pshard.h
#
# Component `runtime` is what an app ships (library, plugin, header, pshard-run); `tools`
# the rest. pshard-opt (tests of the MLIR passes) is not installed.
include(GNUInstallDirs)

install(TARGETS pshard LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/pshard
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT runtime)
if(TARGET pshard_cuda)
  install(TARGETS pshard_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
endif()

set(pshard_installed_tools pshard-run pshard-profile pshard-compile pshard-inspect pshard-diff
    pshard-mkmodel pshard-bench)
# ../lib for libpshard.so and the plugin; the folders of other shared libraries linked from
# outside the build (LLVM's, in a build with the MLIR compiler) as they are.
set_target_properties(${pshard_installed_tools} PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}" INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS pshard-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
list(REMOVE_ITEM pshard_installed_tools pshard-run)
install(TARGETS ${pshard_installed_tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT tools)
