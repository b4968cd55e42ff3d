# Spack recipe for meshslice. It lives in the meshslice repository itself, so its source is the
# checkout it sits in: the environment in the repository root (spack.yaml) makes meshslice a
# develop spec of that checkout (uncommitted changes included); elsewhere
#   spack repo add <checkout>/spack/spack_repo/meshslice
#   spack install meshslice@main          # the checkout's committed branch main, or
#   spack develop --path <checkout> meshslice@=main && spack install meshslice
import os

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

from spack.package import *

# <checkout>/spack/spack_repo/meshslice/packages/meshslice/package.py -> <checkout>
_CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 5))


class Meshslice(CMakePackage, CudaPackage, ROCmPackage):
    """Distributed training of the fully-connected layers of transformer models with 2D tensor
    parallelism on a torus of devices, built around the MeshSlice 2D GEMM (Nam et al., ISCA
    2025): the apps meshslice-train, meshslice-bench, meshslice-sim and meshslice-tune (the
    autotuner) on Kokkos, KokkosKernels, MPI and Teuchos input decks, plus a TPUv4 hardware model
    that emulates large tori."""

    git = "file://" + _CHECKOUT

    license("BSD-3-Clause")

    version("main", branch="main")

    # The Kokkos backend is Kokkos' own: +openmp here asks for kokkos+openmp; +cuda cuda_arch=N
    # and +rocm amdgpu_target=gfxN (from CudaPackage / ROCmPackage) are passed on to kokkos below.
    variant("openmp", default=True, description="Kokkos OpenMP backend on the host")
    variant(
        "scalapack", default=False, description="ScaLAPACK PxGEMM baseline in meshslice-bench"
    )
    variant("onednn", default=False, description="oneDNN route of the bf16 local GEMM (CPU)")
    variant("tests", default=False, description="Build the GoogleTest suite (run by ctest)")

    depends_on("cxx", type="build")
    depends_on("cmake@3.16:", type="build")
    depends_on("mpi")
    depends_on("blas")

    # Built and tested against Kokkos 3.4 (Debian 12), 4.x (legacy View) and Kokkos with the new
    # (mdspan) View, the only one from 5.3. meshslice is C++17 and builds as C++20 where its
    # Kokkos asks for it (Kokkos 5: the kokkos target carries cxx_std_20), so the standard follows
    # kokkos' cxxstd. kokkos-kernels pins its kokkos to the same version. g++ 12.2-12.5 with a
    # new-View Kokkos lacking kokkos#8223/#9262 miscompiles default Views: the configure stops
    # with an error saying so (cmake/MeshsliceKokkosProbe.cmake).
    depends_on("kokkos@3.4:")
    depends_on("kokkos+openmp", when="+openmp")
    # Local GEMMs go to the BLAS library through KokkosKernels' TPL; runs are in float, the
    # tight correctness tests in double (the recipe's default instantiates double only).
    depends_on("kokkos-kernels@3.4: +blas scalars=float,double")

    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    depends_on("kokkos+cuda_lambda", when="+cuda")  # KOKKOS_LAMBDA kernels on the device
    depends_on("kokkos-kernels+cublas", when="+cuda")
    conflicts("+cuda", when="cuda_arch=none", msg="give the GPU, e.g. cuda_arch=80")

    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_target}", when=f"+rocm amdgpu_target={_target}")
    depends_on("kokkos-kernels+rocblas", when="+rocm")
    conflicts("+rocm", when="amdgpu_target=none", msg="give the GPU, e.g. amdgpu_target=gfx90a")
    conflicts("+cuda", when="+rocm", msg="one GPU backend per build")

    # Teuchos (ParameterList, YAML) is all meshslice takes from Trilinos, and the recipe has no
    # Teuchos-only switch: it always enables Triutils, which needs Epetra and Teuchos, so
    # +epetra builds Teuchos. ~kokkos keeps Kokkos out of Teuchos, so that a process loads one
    # Kokkos: meshslice's. Trilinos 17 dropped Epetra and needs C++20.
    depends_on("trilinos@13.2:16 +epetra ~kokkos cxxstd=17")

    depends_on("scalapack", when="+scalapack")
    # bf16 GEMMs on a CPU with AMX or AVX512-BF16; a GPU build's operands live on the device.
    depends_on("onednn", when="+onednn")
    conflicts("+onednn", when="+cuda", msg="the oneDNN route is the CPU's")
    conflicts("+onednn", when="+rocm", msg="the oneDNN route is the CPU's")
    depends_on("googletest", type="build", when="+tests")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("MESHSLICE_TESTS", "tests"),
            self.define_from_variant("MESHSLICE_SCALAPACK", "scalapack"),
            self.define_from_variant("MESHSLICE_ONEDNN", "onednn"),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
            # spack passes the target's own flags (and a binary may run on another node type)
            self.define("MESHSLICE_NATIVE", False),
        ]
        if spec.satisfies("+scalapack"):
            args.append(
                self.define("MESHSLICE_SCALAPACK_LIBRARY", spec["scalapack"].libs.joined(";"))
            )
        # The compiler Kokkos was built for (nvcc_wrapper for CUDA with GCC, hipcc for HIP).
        if spec.satisfies("+rocm"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
        else:
            args.append(self.define("CMAKE_CXX_COMPILER", self["kokkos"].kokkos_cxx))
        return args

    def test_version(self):
        """every app reports the Kokkos, KokkosKernels, Teuchos and MPI it was built with"""
        for app in ("meshslice-train", "meshslice-bench", "meshslice-sim", "meshslice-tune"):
            exe = which(join_path(self.prefix.bin, app), required=True)
            out = exe("--version", output=str.split, error=str.split)
            for key in ("meshslice:", "kokkos:", "kokkoskernels:", "teuchos:", "mpi:"):
                assert key in out, f"{app} --version does not report {key}"
