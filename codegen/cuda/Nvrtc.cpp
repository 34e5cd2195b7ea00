//===- Nvrtc.cpp - CUDA C++ kernel templates to PTX in process ------------===//
//
// The few entry points used are declared here with nvrtc.h's C ABI (stable
// across CUDA 12 and 13), so building ingot does not need the toolkit's
// headers.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/Nvrtc.h"
#include "codegen/cuda/CudaTargets.h"

#include <dlfcn.h>
#include <mutex>

namespace ingot::codegen {
namespace {

using Program = void *;
constexpr int kSuccess = 0;

struct NvrtcApi {
  int (*create)(Program *, const char *, const char *, int, const char *const *,
                const char *const *) = nullptr;
  int (*compile)(Program, int, const char *const *) = nullptr;
  int (*ptxSize)(Program, size_t *) = nullptr;
  int (*ptx)(Program, char *) = nullptr;
  int (*logSize)(Program, size_t *) = nullptr;
  int (*log)(Program, char *) = nullptr;
  int (*destroy)(Program *) = nullptr;
  std::string loadError;
};

template <typename Fn> bool bind(void *lib, const char *name, Fn *fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

NvrtcApi loadApi() {
  NvrtcApi api;
  const std::string root = cudaToolkitRoot();
  void *lib = nullptr;
  std::string tried;
  for (const std::string &name :
       {std::string("libnvrtc.so.13"), std::string("libnvrtc.so.12"),
        root + "/lib64/libnvrtc.so.13", root + "/lib64/libnvrtc.so.12"}) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib)
      break;
    tried += (tried.empty() ? "" : ", ") + name;
  }
  if (!lib) {
    api.loadError = "--target cuda needs the CUDA toolkit's NVRTC library "
                    "(libnvrtc.so, CUDA 12 or newer) to compile the kernel "
                    "templates; not found (tried " +
                    tried + "); install the toolkit or set CUDA_HOME";
    return api;
  }
  if (!bind(lib, "nvrtcCreateProgram", &api.create) ||
      !bind(lib, "nvrtcCompileProgram", &api.compile) ||
      !bind(lib, "nvrtcGetPTXSize", &api.ptxSize) ||
      !bind(lib, "nvrtcGetPTX", &api.ptx) ||
      !bind(lib, "nvrtcGetProgramLogSize", &api.logSize) ||
      !bind(lib, "nvrtcGetProgramLog", &api.log) ||
      !bind(lib, "nvrtcDestroyProgram", &api.destroy))
    api.loadError = "libnvrtc.so lacks the NVRTC entry points (expected "
                    "CUDA 12 or newer)";
  return api;
}

const NvrtcApi &api() {
  static std::once_flag once;
  static NvrtcApi loaded;
  std::call_once(once, [] { loaded = loadApi(); });
  return loaded;
}

std::string programLog(const NvrtcApi &a, Program p) {
  size_t size = 0;
  if (a.logSize(p, &size) != kSuccess || size <= 1)
    return "";
  std::string log(size, '\0');
  if (a.log(p, log.data()) != kSuccess)
    return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

} // namespace

Status compileCudaToPtx(const std::string &source, const HeaderList &headers,
                        const std::string &arch, std::string *ptx) {
  const NvrtcApi &a = api();
  if (!a.loadError.empty())
    return Status::error(a.loadError);
  std::vector<const char *> texts, names;
  for (const auto &[name, text] : headers) {
    names.push_back(name.c_str());
    texts.push_back(text.c_str());
  }
  Program p = nullptr;
  if (a.create(&p, source.c_str(), "ingot_templates.cu", int(headers.size()),
               texts.data(), names.data()) != kSuccess)
    return Status::error("NVRTC cannot create a program");
  // compute_XX gives PTX; nvJitLink assembles it with the generated
  // kernels' PTX into one cubin per architecture.
  const std::string archOption =
      "--gpu-architecture=compute_" + arch.substr(arch.rfind('_') + 1);
  const char *options[] = {archOption.c_str(), "--std=c++17",
                           "--device-as-default-execution-space"};
  Status result = Status::ok();
  size_t size = 0;
  if (a.compile(p, 3, options) != kSuccess) {
    result = Status::error("NVRTC failed on the kernel templates for " + arch +
                           ": " + programLog(a, p));
  } else if (a.ptxSize(p, &size) != kSuccess || size == 0) {
    result = Status::error("NVRTC gave no PTX for " + arch);
  } else {
    ptx->assign(size, '\0');
    if (a.ptx(p, ptx->data()) != kSuccess)
      result = Status::error("NVRTC gave no PTX for " + arch);
    while (!ptx->empty() && ptx->back() == '\0')
      ptx->pop_back();
  }
  a.destroy(&p);
  return result;
}

} // namespace ingot::codegen
