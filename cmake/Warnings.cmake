# Warnings on for our own targets; -Werror in CI (SLURMTWIN_WERROR=ON).
add_library(slurmtwin_warnings INTERFACE)
target_compile_options(slurmtwin_warnings INTERFACE -Wall -Wextra -Wpedantic)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(slurmtwin_warnings INTERFACE -Wshadow=local)  # GCC's spelling; clang has no =local
endif()
# GCC 12's -Wrestrict misfires inside libstdc++'s std::string at -O2/-O3 (GCC bug 105329): silence it
# there only.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(slurmtwin_warnings INTERFACE -Wno-restrict)
endif()
if(SLURMTWIN_WERROR)
  target_compile_options(slurmtwin_warnings INTERFACE -Werror)
endif()
if(SLURMTWIN_SANITIZE)
  target_compile_options(slurmtwin_warnings INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                      -fno-sanitize-recover=undefined)
  target_link_options(slurmtwin_warnings INTERFACE -fsanitize=address,undefined)
endif()
if(SLURMTWIN_FUZZ)
  # Coverage for libFuzzer plus ASan + UBSan in every library; the fuzz targets link libFuzzer's main.
  target_compile_options(slurmtwin_warnings INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                                                      -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(slurmtwin_warnings INTERFACE -fsanitize=address,undefined)
endif()
