//===- NvJitLink.cpp - PTX to cubin in process with nvJitLink -------------===//
//
// Only the few entry points used are declared here, with the C ABI of
// nvJitLink.h (CUDA 12 and 13 export them under these unversioned names),
// so building ingot does not need the toolkit's headers.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/NvJitLink.h"
#include "codegen/cuda/CudaTargets.h"

#include <dlfcn.h>
#include <mutex>

namespace ingot::codegen {
namespace {

using Handle = void *;
constexpr int kSuccess = 0;
constexpr int kInputPtx = 2; // NVJITLINK_INPUT_PTX

struct NvJitLinkApi {
  int (*create)(Handle *, uint32_t, const char **) = nullptr;
  int (*addData)(Handle, int, const void *, size_t, const char *) = nullptr;
  int (*complete)(Handle) = nullptr;
  int (*cubinSize)(Handle, size_t *) = nullptr;
  int (*cubin)(Handle, void *) = nullptr;
  int (*errorLogSize)(Handle, size_t *) = nullptr;
  int (*errorLog)(Handle, char *) = nullptr;
  int (*destroy)(Handle *) = nullptr;
  std::string loadError;
};

/// Library names to try: the soname of each supported toolkit, then the
/// toolkit's own lib64 directory (CUDA_HOME, else /usr/local/cuda).
std::vector<std::string> candidates() {
  std::vector<std::string> names = {"libnvJitLink.so.13", "libnvJitLink.so.12",
                                    "libnvJitLink.so"};
  const std::string root = cudaToolkitRoot();
  for (const char *so : {"libnvJitLink.so.13", "libnvJitLink.so.12"})
    names.push_back(root + "/lib64/" + so);
  return names;
}

template <typename Fn> bool bind(void *lib, const char *name, Fn *fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

NvJitLinkApi loadApi() {
  NvJitLinkApi api;
  void *lib = nullptr;
  std::string tried;
  for (const std::string &name : candidates()) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib)
      break;
    tried += (tried.empty() ? "" : ", ") + name;
  }
  if (!lib) {
    api.loadError = "--target cuda needs the CUDA toolkit's nvJitLink "
                    "library (libnvJitLink.so, CUDA 12 or newer) to turn PTX "
                    "into cubins; not found (tried " +
                    tried + "); install the toolkit or set CUDA_HOME";
    return api;
  }
  if (!bind(lib, "nvJitLinkCreate", &api.create) ||
      !bind(lib, "nvJitLinkAddData", &api.addData) ||
      !bind(lib, "nvJitLinkComplete", &api.complete) ||
      !bind(lib, "nvJitLinkGetLinkedCubinSize", &api.cubinSize) ||
      !bind(lib, "nvJitLinkGetLinkedCubin", &api.cubin) ||
      !bind(lib, "nvJitLinkGetErrorLogSize", &api.errorLogSize) ||
      !bind(lib, "nvJitLinkGetErrorLog", &api.errorLog) ||
      !bind(lib, "nvJitLinkDestroy", &api.destroy))
    api.loadError = "libnvJitLink.so lacks the nvJitLink entry points "
                    "(expected CUDA 12 or newer)";
  return api;
}

const NvJitLinkApi &api() {
  static std::once_flag once;
  static NvJitLinkApi loaded;
  std::call_once(once, [] { loaded = loadApi(); });
  return loaded;
}

std::string errorLog(const NvJitLinkApi &a, Handle h) {
  size_t size = 0;
  if (a.errorLogSize(h, &size) != kSuccess || size == 0)
    return "";
  std::string log(size, '\0');
  if (a.errorLog(h, log.data()) != kSuccess)
    return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

} // namespace

Status linkPtxToCubin(const std::string &ptx, const std::string &arch,
                      std::vector<uint8_t> *cubin) {
  return linkPtxsToCubin({ptx}, arch, cubin);
}

Status linkPtxsToCubin(const std::vector<std::string> &ptxs,
                       const std::string &arch, std::vector<uint8_t> *cubin) {
  const NvJitLinkApi &a = api();
  if (!a.loadError.empty())
    return Status::error(a.loadError);
  const std::string archOption = "-arch=" + arch;
  const char *options[] = {archOption.c_str(), "-O3"};
  Handle h = nullptr;
  if (a.create(&h, 2, options) != kSuccess)
    return Status::error("nvJitLink cannot link for " + arch);
  bool added = true;
  for (size_t i = 0; i < ptxs.size() && added; ++i) {
    const std::string name = "ingot" + std::to_string(i) + ".ptx";
    // nvJitLink reads the PTX as a C string: pass the terminating NUL too.
    added = a.addData(h, kInputPtx, ptxs[i].c_str(), ptxs[i].size() + 1,
                      name.c_str()) == kSuccess;
  }
  Status result = Status::ok();
  size_t size = 0;
  if (!added || a.complete(h) != kSuccess ||
      a.cubinSize(h, &size) != kSuccess) {
    result = Status::error("nvJitLink failed on the PTX for " + arch + ": " +
                           errorLog(a, h));
  } else {
    cubin->assign(size, 0);
    if (a.cubin(h, cubin->data()) != kSuccess)
      result = Status::error("nvJitLink gave no cubin for " + arch);
  }
  a.destroy(&h);
  return result;
}

} // namespace ingot::codegen
