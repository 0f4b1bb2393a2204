# TANDEM_SANITIZE="address;undefined" or "thread": instruments every target.
if(TANDEM_SANITIZE)
  string(REPLACE ";" "," _tandem_sanitizers "${TANDEM_SANITIZE}")
  add_compile_options(-fsanitize=${_tandem_sanitizers} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_tandem_sanitizers})
endif()
