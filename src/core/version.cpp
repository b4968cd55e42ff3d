#include "core/version.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>
#include <KokkosKernels_config.h>
#include <Teuchos_Version.hpp>

#include <cctype>
#include <cstdio>
#include <sstream>

#include "core/host_vectors.hpp"
#include "core/json.hpp"
// Generated in the build tree (cmake/MeshsliceVersion.cmake): the version and build settings
// at configure time, the git revision at build time.
#include "meshslice_build_info.hpp"
#include "meshslice_revision.hpp"

namespace meshslice {

namespace {

// 40701 -> "4.7.01", the way Kokkos and KokkosKernels number their releases.
std::string dotted(int version) {
  char text[32];
  std::snprintf(text, sizeof text, "%d.%d.%02d", version / 10000, version / 100 % 100,
                version % 100);
  return text;
}

// Space-separated lists of the backends and libraries a build enabled.
void append_word(std::string& list, const char* word) {
  if (!list.empty()) list += ' ';
  list += word;
}

std::string kokkos_backends() {
  std::string names;
  const auto add = [&names](const char* name) { append_word(names, name); };
#ifdef KOKKOS_ENABLE_CUDA
  add("Cuda");
#endif
#ifdef KOKKOS_ENABLE_HIP
  add("HIP");
#endif
#ifdef KOKKOS_ENABLE_SYCL
  add("SYCL");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  add("OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  add("Threads");
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  add("Serial");
#endif
  return names + " (default " + Kokkos::DefaultExecutionSpace::name() + ")";
}

std::string kokkoskernels_version() {
#ifdef KOKKOSKERNELS_VERSION
  return dotted(KOKKOSKERNELS_VERSION);
#else
  // KokkosKernels before 3.7 has no version macro; its CMake package may still know.
  const std::string from_cmake = MESHSLICE_CMAKE_KOKKOSKERNELS_VERSION;
  return from_cmake.empty() ? "before 3.7 (no version macro)" : from_cmake;
#endif
}

// The math libraries KokkosKernels hands its kernels to (the local GEMMs run in the BLAS one).
std::string kokkoskernels_tpls() {
  std::string names;
  const auto add = [&names](const char* name) { append_word(names, name); };
#ifdef KOKKOSKERNELS_ENABLE_TPL_BLAS
  add("BLAS");
#endif
#ifdef KOKKOSKERNELS_ENABLE_TPL_MKL
  add("MKL");
#endif
#ifdef KOKKOSKERNELS_ENABLE_TPL_CUBLAS
  add("cuBLAS");
#endif
#ifdef KOKKOSKERNELS_ENABLE_TPL_ROCBLAS
  add("rocBLAS");
#endif
  return names.empty() ? "none (built-in kernels)" : names;
}

// Teuchos has no version of its own inside Trilinos: that of the Trilinos it came with
// (130200 -> "Trilinos 13.2.0"); a standalone Teuchos says its own.
std::string teuchos_version() {
#ifdef TRILINOS_MAJOR_MINOR_VERSION
  const int v = TRILINOS_MAJOR_MINOR_VERSION;
  return "Trilinos " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
#else
  return Teuchos::Teuchos_Version();
#endif
}

// MPI_Get_version and MPI_Get_library_version may be called before MPI_Init.
std::string mpi_standard() {
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  return "MPI " + std::to_string(major) + "." + std::to_string(minor);
}

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string first_line = text;
  first_line = first_line.substr(0, first_line.find('\n'));  // MPICH's goes on for pages
  while (!first_line.empty() &&
         (std::isspace(static_cast<unsigned char>(first_line.back())) || first_line.back() == ','))
    first_line.pop_back();
  return first_line;
}

// The vectors the CPU kernels were compiled for: a -DMESHSLICE_NATIVE=OFF build runs on any
// x86-64 and leaves an AVX-512 machine's wider registers unused.
std::string host_vectors() {
  const int bytes = library_host_vector_bytes();
  const char* isa = bytes == 64 ? "AVX-512" : bytes == 32 ? "AVX" : "SSE2 or NEON";
  return std::to_string(bytes) + " bytes (" + isa + ")";
}

std::string value_of(const std::vector<std::pair<std::string, std::string>>& info,
                     const std::string& key) {
  for (const auto& [k, v] : info)
    if (k == key) return v;
  return "";
}

}  // namespace

int library_host_vector_bytes() { return kHostVectorBytes; }

std::vector<std::pair<std::string, std::string>> version_info() {
  return {
      {"meshslice", MESHSLICE_VERSION_STRING},
      {"git_revision", MESHSLICE_GIT_REVISION_STRING},
      {"build", std::string(MESHSLICE_BUILD_TYPE) + ", " + MESHSLICE_CXX_COMPILER},
      {"host_vectors", host_vectors()},
      {"kokkos", dotted(KOKKOS_VERSION)},
      {"kokkos_backends", kokkos_backends()},
      {"kokkoskernels", kokkoskernels_version()},
      {"kokkoskernels_tpls", kokkoskernels_tpls()},
      {"teuchos", teuchos_version()},
      {"mpi", mpi_standard()},
      {"mpi_library", mpi_library()},
  };
}

std::string version_text() {
  std::ostringstream text;
  for (const auto& [key, value] : version_info()) text << key << ": " << value << "\n";
  return text.str();
}

std::string version_line() {
  const auto info = version_info();
  const auto get = [&](const char* key) { return value_of(info, key); };
  return "meshslice " + get("meshslice") + " (rev " + get("git_revision") + "), Kokkos " +
         get("kokkos") + " [" + get("kokkos_backends") + "], KokkosKernels " +
         get("kokkoskernels") + " [" + get("kokkoskernels_tpls") + "], Teuchos (" + get("teuchos") +
         "), " + get("mpi") + " (" + get("mpi_library") + ")";
}

json::Value version_json() {
  json::Value build = json::Value::object();
  for (const auto& [key, value] : version_info()) build.set(key, value);
  return build;
}

}  // namespace meshslice
