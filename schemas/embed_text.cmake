# cmake -DIN=<file> -DOUT=<header> -DNAME=<name> -P embed_text.cmake
# Writes <header> declaring the text of <file> as a C++ string constant
# pshard::schema_text::<name>, so the library can parse JSON without the .fbs at hand.
file(READ ${IN} text)
set(delim "pshard_schema")
if(text MATCHES "\\)${delim}\"")
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )${delim}\"")
endif()
file(WRITE ${OUT}.tmp
  "// Generated from ${IN} by schemas/embed_text.cmake. Do not edit.\n"
  "#pragma once\n\n"
  "namespace pshard::schema_text {\n"
  "inline constexpr const char ${NAME}[] = R\"${delim}(${text})${delim}\";\n"
  "} // namespace pshard::schema_text\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
