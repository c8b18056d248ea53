# dltune_embed_text(TARGET SYMBOL FILE): compiles the text of FILE into TARGET as
#   namespace dltune::embedded { extern const char SYMBOL[]; }
# so that data files (knowledge/*.toml) travel inside the binary, which then works anywhere.
# The source is generated at build time and regenerated whenever FILE changes.
set(DLTUNE_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_text_write.cmake)

function(dltune_embed_text target symbol file)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded/${symbol}.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYMBOL=${symbol}
            -P ${DLTUNE_EMBED_SCRIPT}
    DEPENDS ${file} ${DLTUNE_EMBED_SCRIPT}
    COMMENT "Embedding ${file}"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
