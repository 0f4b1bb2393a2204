# TANDEM_SANITIZE="address;undefined" or "thread": instruments every target.
if(TANDEM_SANITIZE)
  string(REPLACE ";" "," _tandem_sanitizers "${TANDEM_SANITIZE}")
  add_compile_options(-fsanitize=${_tandem_sanitizers} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_tandem_sanitizers})
endif()

# Fuzzing builds instrument the library for libFuzzer's coverage feedback;
# the fuzz targets themselves link the fuzzer's main (fuzz/CMakeLists.txt).
if(TANDEM_BUILD_FUZZERS)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
