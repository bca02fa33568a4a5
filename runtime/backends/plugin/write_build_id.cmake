# cmake -DOUT=... -DTEMPLATE=... -DPREFIX="pshard 0.1.0, GNU 12.2.0" -DHEADERS="a.h|b.h" -P write_build_id.cmake
#
# Writes plugin_build_id.h: PREFIX plus a hash of the headers whose types cross the
# plugin table. Run at build time (not configure time), so editing one of those headers
# changes the id without re-running CMake; the file is rewritten only when the id
# changes, so only the loader and the plugin's entry recompile.
string(REPLACE "|" ";" headers "${HEADERS}")
set(hashes "")
foreach(h IN LISTS headers)
  file(SHA256 "${h}" one)
  string(APPEND hashes "${one}")
endforeach()
string(SHA256 all "${hashes}")
string(SUBSTRING "${all}" 0 16 short)
set(PSHARD_PLUGIN_BUILD_ID "${PREFIX}, interface ${short}")
configure_file("${TEMPLATE}" "${OUT}" @ONLY)
