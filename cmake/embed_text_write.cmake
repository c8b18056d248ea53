# Script mode (cmake -DIN=... -DOUT=... -DSYMBOL=... -P embed_text_write.cmake): writes OUT, a C++
# source that defines dltune::embedded::SYMBOL as the text of IN in a raw string literal.
file(READ ${IN} text)
set(delimiter "dltune_embed")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string delimiter )${delimiter}\"")
endif()
file(WRITE ${OUT}.tmp
  "// Generated from ${IN} by cmake/embed_text.cmake: do not edit.\n"
  "namespace dltune::embedded {\n"
  "extern const char ${SYMBOL}[];\n"
  "const char ${SYMBOL}[] = R\"${delimiter}(${text})${delimiter}\";\n"
  "}  // namespace dltune::embedded\n")
file(RENAME ${OUT}.tmp ${OUT})
