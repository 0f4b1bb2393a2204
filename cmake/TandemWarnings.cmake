# Warnings every tandem target compiles with.
function(tandem_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
                         -Wno-unused-parameter)
  if(TANDEM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
