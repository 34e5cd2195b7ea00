//===- Device.h - GPUs the runtime runs plans on ----------------*- C++ -*-===//
//
// The seam between the plan and a GPU vendor's API: memory, copies, the
// artifact's code objects and kernel launches. The CUDA backend
// (runtime/src/device/CudaDevice.cpp) loads libcuda.so.1 with dlopen, so the
// same binary starts on machines without a GPU. The CPU executor does not
// go through this interface (it runs the plan's kernels in place).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ingot {

/// `--device`: "cpu", "cuda", "cuda:N" or "auto".
struct DeviceRequest {
  enum class Kind { Auto, Cpu, Cuda };
  Kind kind = Kind::Auto;
  int ordinal = 0;
};
Status parseDeviceRequest(const std::string &text, DeviceRequest *out);

class Device {
public:
  virtual ~Device() = default;
  /// "cuda:0 (NVIDIA H200, sm_90)".
  virtual const std::string &description() const = 0;
  /// The manifest's GPU target this device runs ("cuda").
  virtual const std::string &targetName() const = 0;
  virtual void computeCapability(int *major, int *minor) const = 0;
  virtual const std::string &productName() const = 0;

  /// Device memory, freed with the device.
  virtual Status allocate(uint64_t bytes, uint64_t *address) = 0;
  /// Bytes of device memory free now and in all.
  virtual Status memoryInfo(uint64_t *free, uint64_t *total) = 0;
  virtual Status upload(uint64_t dst, const void *src, uint64_t bytes) = 0;
  virtual Status download(void *dst, uint64_t src, uint64_t bytes) = 0;
  /// Loads one code object (cubin or PTX) as a kernel module; a target's
  /// PTX may come as several objects, each loaded in turn.
  virtual Status loadModule(const CodeObject &object, const uint8_t *bytes) = 0;
  /// A kernel of the loaded modules, by symbol.
  virtual Status kernel(const std::string &symbol, void **handle) = 0;
  /// Launches with grid (grid[0], grid[1], grid[2]) and block (blockX, 1,
  /// 1); each parameter is 8 bytes.
  virtual Status launch(void *kernel, const uint64_t grid[3], uint32_t blockX,
                        uint32_t sharedBytes,
                        std::vector<uint64_t> &params) = 0;
  virtual Status synchronize() = 0;
};

/// Opens CUDA device `ordinal` through the driver API. Without a driver:
/// "no CUDA driver: libcuda.so.1 not found".
Status openCudaDevice(int ordinal, std::unique_ptr<Device> *out);

} // namespace ingot
