# Every dependency comes from a Debian package; a missing one names the package to install.
macro(slurmtwin_require name debian_package)
  find_package(${name} ${ARGN} QUIET)
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR "SlurmTwin needs ${name}: install the Debian package '${debian_package}' "
                        "(apt-get install ${debian_package}), or run 'make deps'.")
  endif()
endmacro()

# CONFIG: Boost's own package files (Debian ships them); CMake 4 removed the FindBoost module.
slurmtwin_require(Boost libboost-graph-dev\ libboost-program-options-dev 1.74 CONFIG COMPONENTS program_options graph)
slurmtwin_require(Eigen3 libeigen3-dev NO_MODULE)
slurmtwin_require(yaml-cpp libyaml-cpp-dev)
slurmtwin_require(fmt libfmt-dev)
slurmtwin_require(ZLIB zlib1g-dev)
slurmtwin_require(LibLZMA liblzma-dev)
slurmtwin_require(SQLite3 libsqlite3-dev)  # sweep result store (CMake's FindSQLite3)
if(SLURMTWIN_BUILD_TESTS)
  slurmtwin_require(doctest doctest-dev)
endif()
# Optional: MPI (Debian's OpenMPI: libopenmpi-dev + openmpi-bin) for `sweep run --mpi`; without it the
# rest builds and --mpi says it was not built in.
find_package(MPI COMPONENTS CXX QUIET)
if(MPI_CXX_FOUND AND MPIEXEC_EXECUTABLE)
  set(SLURMTWIN_HAVE_MPI ON)
else()
  set(SLURMTWIN_HAVE_MPI OFF)
  message(STATUS "MPI not found: sweep --mpi is not built (apt-get install libopenmpi-dev openmpi-bin)")
endif()
# libtorch: Debian's libtorch-dev by default; -DTorch_DIR=... points at another build (e.g. CUDA).
slurmtwin_require(Torch libtorch-dev)

# yaml-cpp 0.7 on Debian exports the target 'yaml-cpp' without a namespace.
if(TARGET yaml-cpp AND NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
