# lit configuration for ingot's dialect and pass tests.
import os
import lit.formats

config.name = "ingot"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ingot_obj_root, "test", "lit")
config.environment["PATH"] = os.pathsep.join(
    [config.ingot_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])

# The CUDA lowering links libdevice from the toolkit MLIR is pointed at.
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
config.environment["CUDA_HOME"] = cuda_home
if os.path.exists(os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("cuda-toolkit")
