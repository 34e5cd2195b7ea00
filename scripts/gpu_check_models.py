"""The ONNX models scripts/gpu-check.sh compiles for the GPU check.

Each is built only of ops whose steps get generated CUDA kernels today
(elementwise chains, with and without broadcasting), so the whole plan runs
on the GPU and can be checked against the CPU. Sizes are symbolic: the
check picks them there (`inputs`), small for numerics, large for bandwidth.

    python scripts/gpu_check_models.py OUT_DIR   # writes OUT_DIR/NAME.onnx
"""
import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D = 1024


def _model(name, nodes, inits):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", D])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", D])
    graph = helper.make_graph(nodes, name, [x], [y],
                              [numpy_helper.from_array(v, k)
                               for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def gelu_bias():
    """Bias add broadcast over rows, then GELU in its erf form."""
    rng = np.random.default_rng(1)
    inits = {"bias": rng.uniform(-1, 1, D).astype(np.float32),
             "sqrt2": np.array(math.sqrt(2), np.float32),
             "one": np.array(1, np.float32), "half": np.array(0.5, np.float32)}
    n = helper.make_node
    nodes = [n("Add", ["x", "bias"], ["b"]), n("Div", ["b", "sqrt2"], ["d"]),
             n("Erf", ["d"], ["e"]), n("Add", ["e", "one"], ["a"]),
             n("Mul", ["b", "a"], ["m"]), n("Mul", ["m", "half"], ["y"])]
    return _model("gelu_bias", nodes, inits)


def unary_chain():
    """The transcendental opcodes one after another, kept in range."""
    inits = {"k": np.array(0.25, np.float32)}
    n = helper.make_node
    nodes = [n("Mul", ["x", "k"], ["s"]), n("Tanh", ["s"], ["t"]),
             n("Exp", ["t"], ["e"]), n("Log", ["e"], ["l"]),
             n("Sigmoid", ["l"], ["g"]), n("Sqrt", ["g"], ["q"]),
             n("Softplus", ["q"], ["p"]), n("Sin", ["p"], ["y"])]
    return _model("unary_chain", nodes, inits)


def scale_shift():
    """y = x * scale + shift per column: the bandwidth probe (8 B read and
    4 B written per element, one FMA)."""
    rng = np.random.default_rng(2)
    inits = {"scale": rng.uniform(0.5, 1.5, D).astype(np.float32),
             "shift": rng.uniform(-1, 1, D).astype(np.float32)}
    n = helper.make_node
    nodes = [n("Mul", ["x", "scale"], ["m"]), n("Add", ["m", "shift"], ["y"])]
    return _model("scale_shift", nodes, inits)


MODELS = {"gelu_bias": gelu_bias, "unary_chain": unary_chain,
          "scale_shift": scale_shift}


def main(argv):
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        model = build()
        onnx.checker.check_model(model)
        onnx.save(model, out / f"{name}.onnx")
        print(out / f"{name}.onnx")


if __name__ == "__main__":
    main(sys.argv)
