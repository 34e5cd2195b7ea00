//===- PlanToManifest.cpp - Serialise a planned module --------------------===//
//
// Every decision is already in the plan IR; this file only translates it:
// arguments -> Input buffers, plan.param/plan.constant -> weight-section
// tensors, plan.alloc -> arena slices, plan.kernel -> steps.
//
//===----------------------------------------------------------------------===//
#include "compiler/PlanToManifest.h"
#include "compiler/ExternalWeights.h"
#include "dialects/Plan/PlanDialect.h"
#include "ingot/KvLayout.h"
#include "ingot/ParamProducer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cstring>

using namespace mlir;

namespace ingot::compiler {
namespace {

/// The DType of a plan.param's `quant` format name.
std::optional<DType> quantDTypeOf(llvm::StringRef name) {
  for (DType t : {DType::Q8, DType::Q4, DType::Q4M, DType::F8E4M3})
    if (name == dtypeName(t))
      return t;
  return std::nullopt;
}


std::optional<DType> dtypeOf(Type t) {
  if (t.isF32()) return DType::F32;
  if (t.isF16()) return DType::F16;
  if (t.isBF16()) return DType::BF16;
  if (t.isF64()) return DType::F64;
  if (isa<Float8E4M3FNType>(t))
    return DType::F8E4M3FN;
  if (isa<Float8E4M3FNUZType>(t))
    return DType::F8E4M3FNUZ;
  if (isa<Float8E5M2Type>(t))
    return DType::F8E5M2;
  if (isa<Float8E5M2FNUZType>(t))
    return DType::F8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(t))
    return DType::F4E2M1;
  if (t.isInteger(4))
    return t.isUnsignedInteger() ? DType::U4 : DType::I4;
  if (t.isInteger(2))
    return t.isUnsignedInteger() ? DType::U2 : DType::I2;
  // Unsigned first: isInteger(w) matches every signedness.
  if (t.isUnsignedInteger(64))
    return DType::U64;
  if (t.isUnsignedInteger(32))
    return DType::U32;
  if (t.isUnsignedInteger(16))
    return DType::U16;
  if (t.isUnsignedInteger(8))
    return DType::U8;
  if (t.isInteger(64)) return DType::I64;
  if (t.isInteger(32)) return DType::I32;
  if (t.isInteger(16))
    return DType::I16;
  if (t.isInteger(8))
    return DType::I8;
  if (t.isInteger(1)) return DType::Bool;
  return std::nullopt;
}

/// Converts a kernel argument; false for attribute kinds steps cannot hold.
bool toAttr(NamedAttribute named, Attr *out) {
  out->name = named.getName().str();
  Attribute a = named.getValue();
  if (auto i = dyn_cast<IntegerAttr>(a)) {
    out->kind = Attr::Kind::Int;
    out->i = i.getType().isInteger(1) ? i.getValue().getZExtValue()
                                      : i.getValue().getSExtValue();
  } else if (auto f = dyn_cast<FloatAttr>(a)) {
    out->kind = Attr::Kind::Float;
    out->f = f.getValueAsDouble();
  } else if (auto ints = dyn_cast<DenseI64ArrayAttr>(a)) {
    out->kind = Attr::Kind::Ints;
    out->ints.assign(ints.asArrayRef().begin(), ints.asArrayRef().end());
  } else if (auto floats = dyn_cast<DenseF64ArrayAttr>(a)) {
    out->kind = Attr::Kind::Floats;
    out->floats.assign(floats.asArrayRef().begin(), floats.asArrayRef().end());
  } else if (auto s = dyn_cast<StringAttr>(a)) {
    out->kind = Attr::Kind::Str;
    out->s = s.str();
  } else {
    return false;
  }
  return true;
}

/// Row-major little-endian bytes of a small constant (bool: one byte).
std::vector<uint8_t> constantBytes(ElementsAttr value, DType dtype) {
  std::vector<uint8_t> bytes;
  // The low `size` bytes of a value's bit pattern (two's complement for
  // signed integers, IEEE bits for floats), little-endian.
  const size_t size = dtypeSize(dtype);
  auto put = [&](uint64_t bits) {
    for (size_t i = 0; i < size; ++i)
      bytes.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  };
  if (auto ints = dyn_cast<DenseIntElementsAttr>(value)) {
    for (const APInt &v : ints.getValues<APInt>())
      put(dtype == DType::Bool ? uint64_t(!v.isZero())
                               : uint64_t(v.sextOrTrunc(64).getSExtValue()));
  } else if (auto floats = dyn_cast<DenseFPElementsAttr>(value)) {
    for (const APFloat &v : floats.getValues<APFloat>()) {
      if (dtype == DType::F64) {
        double d = v.convertToDouble();
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        put(bits);
      } else if (dtype == DType::F32) {
        float f = v.convertToFloat();
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        put(bits);
      } else { // f16 and bf16: the attribute already holds their bits
        put(v.bitcastToAPInt().getZExtValue());
      }
    }
  }
  return bytes;
}

std::vector<int64_t> shapeOf(MemRefType t) {
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

} // namespace

Status writeArtifact(ModuleOp module, WeightSource &weights,
                     const ArtifactInfo &info, const std::string &path) {
  auto funcs = module.getOps<func::FuncOp>();
  if (std::distance(funcs.begin(), funcs.end()) != 1)
    return Status::error("expected exactly one planned function");
  func::FuncOp func = *funcs.begin();

  Manifest m;
  m.compilerVersion = INGOT_VERSION_STRING;
  m.modelName = info.modelName;
  m.targets = info.targets;
  llvm::DenseMap<Value, uint32_t> bufferOf;
  llvm::StringMap<uint32_t> paramBuffer;
  std::vector<std::function<Status(const ByteSink &)>> producers;
  ExternalWeightsBuilder external(weights, info.modelPath);

  auto addBuffer = [&](Value v, BufferKind kind) -> Buffer & {
    auto type = cast<MemRefType>(v.getType());
    Buffer &b = m.buffers.emplace_back();
    b.id = static_cast<uint32_t>(m.buffers.size() - 1);
    b.kind = kind;
    b.dtype = *dtypeOf(type.getElementType());
    b.rank = static_cast<uint32_t>(type.getRank());
    bufferOf[v] = b.id;
    return b;
  };
  auto addTensor = [&](const std::string &name, MemRefType type) {
    TensorEntry &t = m.tensors.emplace_back();
    t.name = name;
    t.dtype = *dtypeOf(type.getElementType());
    t.shape = shapeOf(type);
    return static_cast<int32_t>(m.tensors.size() - 1);
  };

  for (Type t : func.getArgumentTypes())
    if (!dtypeOf(cast<MemRefType>(t).getElementType()))
      return Status::error("unsupported input element type");
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = cast<MemRefType>(arg.getType());
    Buffer &b = addBuffer(arg, BufferKind::Input);
    b.ioIndex = static_cast<int32_t>(i);
    IoSpec &io = m.inputs.emplace_back();
    auto name = func.getArgAttrOfType<StringAttr>(i, "plan.name");
    io.name = b.name = name ? name.str() : "input" + std::to_string(i);
    io.dtype = b.dtype;
    io.buffer = b.id;
    auto dims = func.getArgAttrOfType<ArrayAttr>(i, "plan.dims");
    for (auto [d, size] : llvm::enumerate(type.getShape())) {
      Dim &dim = io.dims.emplace_back();
      if (!ShapedType::isDynamic(size)) {
        dim.size = size;
      } else if (dims && d < dims.size()) {
        dim.symbol = cast<StringAttr>(dims[d]).str();
      }
    }
  }
  if (auto symbols = func->getAttrOfType<DictionaryAttr>("plan.symbols"))
    for (NamedAttribute s : symbols)
      m.symbols.push_back(
          {s.getName().str(), cast<IntegerAttr>(s.getValue()).getInt()});
  // An input's largest shape: fixed dims, and each symbol at its bound.
  for (const IoSpec &io : m.inputs) {
    Buffer &b = m.buffers[io.buffer];
    for (const Dim &d : io.dims) {
      int64_t size = d.size;
      for (const SymbolBound &s : m.symbols)
        if (d.size < 0 && s.name == d.symbol)
          size = s.max;
      b.maxShape.push_back(size);
    }
  }

  unsigned constants = 0;
  for (Operation &op : func.getBody().front()) {
    if (auto param = dyn_cast<plan::ParamOp>(op)) {
      auto it = paramBuffer.find(param.getName());
      if (it != paramBuffer.end()) {
        bufferOf[param.getResult()] = it->second;
        continue;
      }
      Buffer &b = addBuffer(param.getResult(), BufferKind::Param);
      b.name = param.getName().str();
      b.tensorIndex = addTensor(b.name, param.getType());
      b.maxShape = shapeOf(param.getType());
      m.tensors[b.tensorIndex].layout = param.getLayout().str();
      paramBuffer[param.getName()] = b.id;
      ParamSpec spec;
      spec.name = b.name;
      if (auto parts = param.getParts())
        for (Attribute p : *parts)
          spec.parts.push_back(cast<StringAttr>(p).str());
      spec.concatAxis = param.getConcatAxis();
      spec.layout = param.getLayout().str();
      spec.shape = b.maxShape;
      spec.elemBytes = dtypeSize(b.dtype);
      spec.elemType = b.dtype;
      if (auto q = param.getQuant()) {
        std::optional<DType> qd = quantDTypeOf(*q);
        if (!qd)
          return Status::error("param '" + b.name + "': unknown quantised " +
                               "format '" + q->str() + "'");
        spec.quant = *qd;
        spec.group = param.getGroup();
        b.dtype = *qd;
        m.tensors[b.tensorIndex].dtype = *qd;
        m.tensors[b.tensorIndex].groupSize = spec.group;
      }
      if (info.externalWeights) {
        if (Status s = external.keepOutside(spec, m.tensors[b.tensorIndex]); !s)
          return s;
        producers.emplace_back(); // made at load, not written
        continue;
      }
      producers.push_back([&weights, spec](const ByteSink &sink) {
        return produceParam(weights, spec, sink);
      });
    } else if (auto constant = dyn_cast<plan::ConstantOp>(op)) {
      Buffer &b = addBuffer(constant.getResult(), BufferKind::Param);
      b.name = "constant." + std::to_string(constants++);
      b.tensorIndex = addTensor(b.name, constant.getType());
      b.maxShape = shapeOf(constant.getType());
      auto bytes = std::make_shared<std::vector<uint8_t>>(
          constantBytes(constant.getValue(), b.dtype));
      producers.push_back([bytes](const ByteSink &sink) {
        sink(bytes->data(), bytes->size());
        return Status::ok();
      });
    } else if (auto alloc = dyn_cast<plan::AllocOp>(op);
               alloc && alloc.isSizedAtRunTime()) {
      Buffer &b = addBuffer(alloc.getResult(), BufferKind::Dynamic);
      b.maxShape.assign(alloc.getMaxShape().begin(), alloc.getMaxShape().end());
    } else if (alloc) {
      if (!alloc.getOffset())
        return Status::error("plan.alloc without an offset: run "
                             "ingot-plan-memory before writing an artifact");
      Buffer &b = addBuffer(alloc.getResult(), BufferKind::Arena);
      b.maxShape.assign(alloc.getMaxShape().begin(), alloc.getMaxShape().end());
      b.maxBytes = alloc.getMaxBytes();
      b.arenaOffset = static_cast<uint64_t>(*alloc.getOffset());
    } else if (auto kernel = dyn_cast<plan::KernelOp>(op)) {
      Step &s = m.steps.emplace_back();
      s.kernel = kernel.getKernel().str();
      s.origin = kernel.getOrigin().str();
      for (Value in : kernel.getIns())
        s.inputs.push_back(isa<NoneType>(in.getType()) ? kNoBuffer
                                                       : bufferOf.at(in));
      for (Value out : kernel.getOuts()) {
        s.outputs.push_back(bufferOf.at(out));
        if (m.buffers[bufferOf.at(out)].name.empty())
          m.buffers[bufferOf.at(out)].name = s.origin;
      }
      for (NamedAttribute a : kernel.getArgs()) {
        Attr attr;
        if (!toAttr(a, &attr))
          return Status::error("step '" + s.origin + "': argument '" +
                               a.getName().str() + "' has no manifest form");
        s.attrs.push_back(std::move(attr));
      }
    }
  }

  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    IoSpec &io = m.outputs.emplace_back();
    auto name = func.getResultAttrOfType<StringAttr>(i, "plan.name");
    io.name = name ? name.str() : "output" + std::to_string(i);
    io.buffer = bufferOf.at(v);
    io.dtype = m.buffers[io.buffer].dtype;
    for (int64_t size : cast<MemRefType>(v.getType()).getShape())
      io.dims.push_back({ShapedType::isDynamic(size) ? -1 : size,
                         ShapedType::isDynamic(size) ? "?" : ""});
  }

  auto intAttr = [&](StringRef name) -> uint64_t {
    auto a = func->getAttrOfType<IntegerAttr>(name);
    return a ? static_cast<uint64_t>(a.getInt()) : 0;
  };
  m.memory.arenaBytes = intAttr("plan.arena_bytes");
  m.memory.arenaLowerBoundBytes = intAttr("plan.arena_lower_bound_bytes");
  m.memory.arenaNaiveBytes = intAttr("plan.arena_naive_bytes");
  for (const TensorEntry &t : m.tensors) {
    uint64_t n = dtypeSize(t.dtype);
    for (int64_t d : t.shape)
      n *= static_cast<uint64_t>(d);
    m.memory.weightsBytes += n;
  }
  if (info.llm) {
    m.hasLlm = true;
    m.llm = *info.llm;
    m.tokenizer = *info.tokenizer;
    m.generation = *info.generation;
    // One full-context sequence, the generator's default budget.
    m.memory.kvCacheBytes = 2 * m.llm.numLayers * m.llm.maxBlocksPerSeq *
                            m.llm.blockSize * m.llm.numKvHeads *
                            kvRowBytes(m.llm.kvDtype, m.llm.headDim);
  }
  m.gpuTargets = info.gpuTargets;
  m.externalWeights = external.finish();
  m.memory.overheadBytes = encodeManifest(m).size();

  ArtifactWriter writer(std::move(m));
  for (size_t i = 0; i < producers.size(); ++i)
    writer.setTensorProducer(i, producers[i]);
  // The CPU plan selects runtime kernels: its section holds no code.
  writer.addCodeSection("cpu", {});
  for (size_t i = 0; i < info.gpuTargets.size(); ++i)
    writer.addCodeSection(info.gpuTargets[i].name, info.gpuCode[i]);
  return writer.write(path);
}

} // namespace ingot::compiler
