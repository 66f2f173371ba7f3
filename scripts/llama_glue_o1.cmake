# Included into llama.cpp's configure by scripts/build_llama_server.sh (CMAKE_PROJECT_INCLUDE).
#
# Most of llama-server's build time goes into the C++ around the model: the server's HTTP and JSON code, the chat
# template and argument parsing of llama-common, the multimodal library it links. None of it runs per token, so it is
# compiled at -O1 (about half the compile time of -O3 for these template-heavy files); ggml and libllama, which do the
# arithmetic, keep the release -O3. bench/llm_server.py measures the speed either way.
if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19 AND NOT MSVC)
  get_property(_gear_glue_done GLOBAL PROPERTY GEAR_GLUE_O1)
  if(NOT _gear_glue_done)
    set_property(GLOBAL PROPERTY GEAR_GLUE_O1 TRUE)
    function(_gear_glue_o1)
      foreach(target llama-common llama-common-base mtmd server-context llama-server-impl llama-server cpp-httplib
                     llama-ui)
        if(TARGET ${target})
          target_compile_options(${target} PRIVATE -O1)
        endif()
      endforeach()
    endfunction()
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _gear_glue_o1)
  endif()
endif()
