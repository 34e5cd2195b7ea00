//===- CudaDevice.cpp - The CUDA driver API behind ingot::Device ----------===//
//
// The only file that knows CUDA. The driver's C ABI is declared here for the
// few entry points used (the `_v2` names are the 64-bit ones every driver
// since CUDA 4 exports), so building needs no CUDA headers and running needs
// libcuda.so.1 only when a CUDA device is asked for.
//
//===----------------------------------------------------------------------===//
#include "ingot/Device.h"

#include <atomic>
#include <dlfcn.h>
#include <mutex>

namespace ingot {
namespace {

using CuResult = int;
using CuDevice = int;
using CuHandle = void *; // CUcontext, CUmodule, CUfunction, CUstream
using CuPointer = uint64_t;
constexpr CuResult kCudaSuccess = 0;
constexpr int kAttrCcMajor = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*
constexpr int kAttrCcMinor = 76;

struct Driver {
  CuResult (*init)(unsigned) = nullptr;
  CuResult (*deviceCount)(int *) = nullptr;
  CuResult (*deviceGet)(CuDevice *, int) = nullptr;
  CuResult (*deviceName)(char *, int, CuDevice) = nullptr;
  CuResult (*deviceAttribute)(int *, int, CuDevice) = nullptr;
  CuResult (*primaryRetain)(CuHandle *, CuDevice) = nullptr;
  CuResult (*primaryRelease)(CuDevice) = nullptr;
  CuResult (*setCurrent)(CuHandle) = nullptr;
  CuResult (*moduleLoad)(CuHandle *, const void *) = nullptr;
  CuResult (*moduleUnload)(CuHandle) = nullptr;
  CuResult (*moduleFunction)(CuHandle *, CuHandle, const char *) = nullptr;
  CuResult (*memAlloc)(CuPointer *, size_t) = nullptr;
  CuResult (*memFree)(CuPointer) = nullptr;
  CuResult (*memInfo)(size_t *, size_t *) = nullptr;
  CuResult (*copyHtoD)(CuPointer, const void *, size_t) = nullptr;
  CuResult (*copyDtoH)(void *, CuPointer, size_t) = nullptr;
  CuResult (*launch)(CuHandle, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, unsigned, CuHandle, void **, void **) = nullptr;
  CuResult (*synchronize)() = nullptr;
  CuResult (*errorString)(CuResult, const char **) = nullptr;
  std::string loadError;
};

template <typename Fn> bool bind(void *lib, const char *name, Fn *fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

Driver loadDriver() {
  Driver d;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    d.loadError = "no CUDA driver: libcuda.so.1 not found";
    return d;
  }
  const bool ok =
      bind(lib, "cuInit", &d.init) &&
      bind(lib, "cuDeviceGetCount", &d.deviceCount) &&
      bind(lib, "cuDeviceGet", &d.deviceGet) &&
      bind(lib, "cuDeviceGetName", &d.deviceName) &&
      bind(lib, "cuDeviceGetAttribute", &d.deviceAttribute) &&
      bind(lib, "cuDevicePrimaryCtxRetain", &d.primaryRetain) &&
      bind(lib, "cuDevicePrimaryCtxRelease_v2", &d.primaryRelease) &&
      bind(lib, "cuCtxSetCurrent", &d.setCurrent) &&
      bind(lib, "cuModuleLoadData", &d.moduleLoad) &&
      bind(lib, "cuModuleUnload", &d.moduleUnload) &&
      bind(lib, "cuModuleGetFunction", &d.moduleFunction) &&
      bind(lib, "cuMemAlloc_v2", &d.memAlloc) &&
      bind(lib, "cuMemGetInfo_v2", &d.memInfo) &&
      bind(lib, "cuMemFree_v2", &d.memFree) &&
      bind(lib, "cuMemcpyHtoD_v2", &d.copyHtoD) &&
      bind(lib, "cuMemcpyDtoH_v2", &d.copyDtoH) &&
      bind(lib, "cuLaunchKernel", &d.launch) &&
      bind(lib, "cuCtxSynchronize", &d.synchronize) &&
      bind(lib, "cuGetErrorString", &d.errorString);
  if (!ok)
    d.loadError = "libcuda.so.1 lacks a driver API entry point ingot uses "
                  "(a driver for CUDA 12 or newer is needed)";
  else if (d.init(0) != kCudaSuccess)
    d.loadError = "the CUDA driver failed to initialise (cuInit)";
  return d;
}

// Which device's context each thread last made current. A driver context
// is current per thread, and the serving engine runs its steps on a thread
// of its own, not on the one that opened the device: every entry point binds
// it first. Devices are told apart by a serial number, not by the context
// handle, which a primary context released and retained again may reuse.
thread_local uint64_t tlsCurrentDevice = 0;
std::atomic<uint64_t> nextDeviceSerial{1};

const Driver &driver() {
  static std::once_flag once;
  static Driver d;
  std::call_once(once, [] { d = loadDriver(); });
  return d;
}

class CudaDevice final : public Device {
public:
  CudaDevice(const Driver &d, CuDevice dev) : d_(d), dev_(dev) {}
  ~CudaDevice() override {
    d_.setCurrent(context_);
    tlsCurrentDevice = serial_;
    for (CuHandle m : modules_)
      d_.moduleUnload(m);
    for (CuPointer p : allocations_)
      d_.memFree(p);
    if (context_)
      d_.primaryRelease(dev_);
    tlsCurrentDevice = 0;
  }

  Status open(int ordinal) {
    if (Status s = check(d_.primaryRetain(&context_, dev_), "context"); !s)
      return s;
    if (Status s = bindContext(); !s)
      return s;
    char name[256] = {};
    d_.deviceName(name, sizeof name - 1, dev_);
    product_ = name;
    d_.deviceAttribute(&major_, kAttrCcMajor, dev_);
    d_.deviceAttribute(&minor_, kAttrCcMinor, dev_);
    description_ = "cuda:" + std::to_string(ordinal) + " (" + product_ +
                   ", sm_" + std::to_string(major_ * 10 + minor_) + ")";
    return Status::ok();
  }

  const std::string &description() const override { return description_; }
  const std::string &targetName() const override { return target_; }
  const std::string &productName() const override { return product_; }
  void computeCapability(int *major, int *minor) const override {
    *major = major_, *minor = minor_;
  }

  Status allocate(uint64_t bytes, uint64_t *address) override {
    if (Status s = bindContext(); !s)
      return s;
    CuPointer p = 0;
    if (Status s = check(d_.memAlloc(&p, bytes ? bytes : 1),
                         "allocating " + std::to_string(bytes) + " bytes");
        !s)
      return s;
    allocations_.push_back(p);
    *address = p;
    return Status::ok();
  }
  Status memoryInfo(uint64_t *free, uint64_t *total) override {
    size_t f = 0, t = 0;
    if (Status s = bindContext(); !s)
      return s;
    if (Status s = check(d_.memInfo(&f, &t), "querying memory"); !s)
      return s;
    *free = f, *total = t;
    return Status::ok();
  }
  Status upload(uint64_t dst, const void *src, uint64_t bytes) override {
    if (Status s = bindContext(); !s || !bytes)
      return s;
    return check(d_.copyHtoD(dst, src, bytes), "copy to device");
  }
  Status download(void *dst, uint64_t src, uint64_t bytes) override {
    if (Status s = bindContext(); !s || !bytes)
      return s;
    return check(d_.copyDtoH(dst, src, bytes), "copy to host");
  }
  Status loadModule(const CodeObject &object, const uint8_t *bytes) override {
    // PTX is handed over as a C string; a cubin as it is.
    std::string ptx;
    const void *image = bytes;
    if (object.format == CodeObject::Format::Ptx) {
      ptx.assign(reinterpret_cast<const char *>(bytes), object.bytes);
      image = ptx.c_str();
    }
    if (Status s = bindContext(); !s)
      return s;
    CuHandle module = nullptr;
    if (Status s = check(d_.moduleLoad(&module, image),
                         "loading the " + object.arch + " code object");
        !s)
      return s;
    modules_.push_back(module);
    return Status::ok();
  }
  Status kernel(const std::string &symbol, void **handle) override {
    if (Status s = bindContext(); !s)
      return s;
    // Each kernel lives in exactly one of the modules; ask them in turn.
    for (CuHandle m : modules_)
      if (d_.moduleFunction(handle, m, symbol.c_str()) == kCudaSuccess)
        return Status::ok();
    return Status::error(description_ + ": no kernel " + symbol +
                         " in the loaded code objects");
  }
  Status launch(void *kernel, const uint64_t grid[3], uint32_t blockX,
                uint32_t sharedBytes, std::vector<uint64_t> &params) override {
    // CUDA's limits: 2^31-1 blocks along x, 65535 along y and z.
    if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535)
      return Status::error("launch of " + std::to_string(grid[0]) + "x" +
                           std::to_string(grid[1]) + "x" +
                           std::to_string(grid[2]) +
                           " blocks exceeds the grid limits");
    if (Status s = bindContext(); !s)
      return s;
    // Reused across launches: no allocation per kernel once it has grown.
    argPointers_.resize(params.size());
    for (size_t i = 0; i < params.size(); ++i)
      argPointers_[i] = &params[i];
    return check(d_.launch(kernel, unsigned(grid[0]), unsigned(grid[1]),
                           unsigned(grid[2]), blockX, 1, 1, sharedBytes,
                           nullptr, argPointers_.data(), nullptr),
                 "kernel launch");
  }
  Status synchronize() override {
    if (Status s = bindContext(); !s)
      return s;
    return check(d_.synchronize(), "synchronising");
  }

private:
  Status bindContext() const {
    if (tlsCurrentDevice == serial_)
      return Status::ok();
    if (Status s = check(d_.setCurrent(context_), "making the context current");
        !s)
      return s;
    tlsCurrentDevice = serial_;
    return Status::ok();
  }
  Status check(CuResult r, const std::string &what) const {
    if (r == kCudaSuccess)
      return Status::ok();
    const char *text = nullptr;
    d_.errorString(r, &text);
    return Status::error(description_ + ": " + what + " failed: " +
                         (text ? text : "CUDA error " + std::to_string(r)));
  }

  const Driver &d_;
  CuDevice dev_;
  CuHandle context_ = nullptr;
  const uint64_t serial_ = nextDeviceSerial++;
  std::vector<CuHandle> modules_;
  std::vector<CuPointer> allocations_;
  std::vector<void *> argPointers_;
  int major_ = 0, minor_ = 0;
  std::string description_ = "cuda", product_, target_ = "cuda";
};

} // namespace

Status openCudaDevice(int ordinal, std::unique_ptr<Device> *out) {
  const Driver &d = driver();
  if (!d.loadError.empty())
    return Status::error(d.loadError);
  int count = 0;
  if (d.deviceCount(&count) != kCudaSuccess || count == 0)
    return Status::error("no CUDA device: the driver sees none");
  if (ordinal < 0 || ordinal >= count)
    return Status::error("no CUDA device " + std::to_string(ordinal) +
                         " (the driver sees " + std::to_string(count) + ")");
  CuDevice dev = 0;
  if (d.deviceGet(&dev, ordinal) != kCudaSuccess)
    return Status::error("cannot open CUDA device " + std::to_string(ordinal));
  auto device = std::make_unique<CudaDevice>(d, dev);
  if (Status s = device->open(ordinal); !s)
    return s;
  *out = std::move(device);
  return Status::ok();
}

Status parseDeviceRequest(const std::string &text, DeviceRequest *out) {
  DeviceRequest r;
  if (text == "auto" || text.empty()) {
    r.kind = DeviceRequest::Kind::Auto;
  } else if (text == "cpu") {
    r.kind = DeviceRequest::Kind::Cpu;
  } else if (text == "cuda") {
    r.kind = DeviceRequest::Kind::Cuda;
  } else if (text.rfind("cuda:", 0) == 0 && text.size() > 5 &&
             text.size() < 9 &&
             text.find_first_not_of("0123456789", 5) == std::string::npos) {
    r.kind = DeviceRequest::Kind::Cuda;
    r.ordinal = std::stoi(text.substr(5));
  } else {
    return Status::error("--device " + text +
                         ": expected cpu, cuda, cuda:N or auto");
  }
  *out = r;
  return Status::ok();
}

} // namespace ingot
