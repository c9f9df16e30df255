# `make package`: two Debian packages made by CPack from the Release build. slurmtwin holds the
# libtorch-free binary (replay, sweep, check, report, config, trace, oracle, bench); slurmtwin-surrogate
# holds slurmtwin-torch, which slurmtwin runs for the surrogate's commands, and depends on slurmtwin of
# the same version and on libtorch. dpkg-shlibdeps (dpkg-dev) computes each package's library
# dependencies from its binary. cmake/package-test.sh (a ctest) checks both.
include(GNUInstallDirs)
install(TARGETS slurmtwin RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT core)
install(TARGETS slurmtwin-torch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT surrogate)
install(FILES README.md docs/getting-started.md docs/cli.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT core)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME slurmtwin)
set(CPACK_PACKAGE_VENDOR "SlurmTwin")
set(CPACK_PACKAGE_CONTACT "SlurmTwin maintainers <maintainers@slurmtwin.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "What would our Slurm cluster do if...? A digital twin of Slurm's scheduler")
set(CPACK_COMPONENTS_ALL core surrogate)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_CORE_PACKAGE_NAME slurmtwin)
set(CPACK_DEBIAN_SURROGATE_PACKAGE_NAME slurmtwin-surrogate)
set(CPACK_DEBIAN_SURROGATE_PACKAGE_DEPENDS "slurmtwin (= ${PROJECT_VERSION})")
# Debian's libtorch trains about 10x slower without the threaded OpenBLAS.
set(CPACK_DEBIAN_SURROGATE_PACKAGE_RECOMMENDS "libopenblas0-pthread")
set(CPACK_COMPONENT_CORE_DESCRIPTION
    "Replays job traces on a model of a Slurm site and sweeps its scheduling settings (no libtorch).")
set(CPACK_COMPONENT_SURROGATE_DESCRIPTION
    "The transformer surrogate of SlurmTwin (libtorch): surrogate, compare, optimize and the surrogate sweep engines.")
include(CPack)
