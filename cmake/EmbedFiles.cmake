# headsplit_embed_files(<out.cpp> <function> <files...>)
# Generates <out.cpp> that defines
#   std::string_view <function>(std::string_view name)
# returning the bytes of the file whose base name is `name` (empty view when there
# is none). The generated source is rebuilt whenever one of the files changes, so
# the program needs none of them at run time.
set(_HEADSPLIT_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/EmbedFilesScript.cmake)

function(headsplit_embed_files out_cpp function_name)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DFUNCTION=${function_name}
            "-DFILES=${files}" -P ${_HEADSPLIT_EMBED_SCRIPT}
    DEPENDS ${files} ${_HEADSPLIT_EMBED_SCRIPT}
    COMMENT "Embedding ${function_name}: ${files}"
    VERBATIM)
endfunction()
