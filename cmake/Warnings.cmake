# Warnings on for our own targets; -Werror in CI (SLURMTWIN_WERROR=ON).
add_library(slurmtwin_warnings INTERFACE)
target_compile_options(slurmtwin_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow=local)
if(SLURMTWIN_WERROR)
  target_compile_options(slurmtwin_warnings INTERFACE -Werror)
endif()
if(SLURMTWIN_SANITIZE)
  target_compile_options(slurmtwin_warnings INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                      -fno-sanitize-recover=undefined)
  target_link_options(slurmtwin_warnings INTERFACE -fsanitize=address,undefined)
endif()
