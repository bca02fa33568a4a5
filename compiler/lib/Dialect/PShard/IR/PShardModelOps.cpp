// Verifiers of pshard.model and its sub-layers: the rules that make a model document
// something the planner can trust — execution order, names the runtime knows, sizes that
// agree with the tensors they summarize.
#include "pshard/Dialect/PShard/IR/PShardOps.h"
#include "runtime/tensor/tensor_type.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>

using namespace mlir;

namespace pshard::ir {
namespace {

// Bytes of `n_values` values of `type`, or nullopt when they are not whole blocks. The
// runtime's table is the one source of block sizes.
std::optional<uint64_t> bytesOf(WeightType type, int64_t n_values) {
  Result<size_t> bytes = tensor_bytes(static_cast<TensorType>(type), n_values);
  if (!bytes.ok())
    return std::nullopt;
  return static_cast<uint64_t>(*bytes);
}

// "attn[3]" for layer 3: the names runtime/model/sublayer.h gives, so that plans,
// traces and artifacts all speak of the same sub-layers.
std::string layerName(StringRef kind, uint64_t layer) {
  return (kind + "[" + Twine(layer) + "]").str();
}

LogicalResult verifyName(Operation* op, StringRef actual, const std::string& expected) {
  if (actual != expected)
    return op->emitOpError("is named '") << actual << "' but must be named '" << expected << "'";
  return success();
}

} // namespace

int64_t SubLayerOpInterface::getTotalWeightBytes() {
  int64_t total = 0;
  for (NamedAttribute entry : getWeightsByType())
    if (auto bytes = entry.getValue().dyn_cast<IntegerAttr>())
      total += bytes.getInt();
  return total;
}

LogicalResult verifySubLayer(Operation* op) {
  auto sublayer = cast<SubLayerOpInterface>(op);
  // Bytes per weight type as the nested tensors add them up.
  // A tensor may belong to several sub-layers (a tied output matrix is the embedding's
  // and the head's; rope_freqs is every attention block's), but only once to each.
  llvm::StringMap<int64_t> fromTensors;
  llvm::StringSet<> names;
  size_t tensorCount = 0;
  for (Operation& child : *sublayer.getBodyBlock()) {
    if (auto tensor = dyn_cast<TensorOp>(child)) {
      if (!names.insert(tensor.getName()).second)
        return tensor.emitOpError("lists '") << tensor.getName() << "' a second time";
      fromTensors[stringifyWeightType(tensor.getType())] += tensor.getBytes();
      ++tensorCount;
    } else if (!isa<MatmulOp>(child)) {
      return child.emitOpError("cannot appear in a sub-layer; only 'pshard.tensor' and "
                               "'pshard.matmul' can");
    }
  }
  // An encoder's head has no weights (it embeds, it does not project to the vocabulary).
  if (tensorCount == 0 && !isa<HeadOp>(op))
    return op->emitOpError("has no 'pshard.tensor': a sub-layer owns at least one weight");

  DictionaryAttr weights = sublayer.getWeightsByType();
  for (NamedAttribute entry : weights) {
    if (!symbolizeWeightType(entry.getName().getValue()))
      return op->emitOpError("has weights of unknown type '") << entry.getName().getValue() << "'";
    auto bytes = entry.getValue().dyn_cast<IntegerAttr>();
    if (!bytes || bytes.getInt() < 0)
      return op->emitOpError("weights '")
             << entry.getName().getValue() << "' must be a non-negative integer of bytes";
  }
  for (const auto& [type, bytes] : fromTensors) {
    auto declared = weights.getAs<IntegerAttr>(type);
    if (!declared || declared.getInt() != bytes)
      return op->emitOpError("weights say ") << (declared ? declared.getInt() : 0) << " bytes of "
                                             << type << " but its tensors hold " << bytes;
  }
  for (NamedAttribute entry : weights)
    if (!fromTensors.count(entry.getName().getValue()))
      return op->emitOpError("weights list ")
             << entry.getName().getValue() << " but no tensor has that type";
  return success();
}

//===-- model ------------------------------------------------------------------===//

int64_t ModelOp::getHParam(StringRef key, int64_t fallback) {
  if (auto value = getHparams().getAs<IntegerAttr>(key))
    return value.getInt();
  return fallback;
}

// Walks the body as a small state machine: embed, then (attn, ffn|moe) per layer with
// indices 0, 1, 2 ..., then head. Each error points at the op that breaks the order.
LogicalResult ModelOp::verifyRegions() {
  enum class Want { kEmbed, kAttnOrHead, kFfn, kNothing } want = Want::kEmbed;
  uint64_t layer = 0;
  for (Operation& op : getBody().front()) {
    auto sublayer = dyn_cast<SubLayerOpInterface>(op);
    if (!sublayer)
      return op.emitOpError("cannot appear in 'pshard.model': it holds only embed, attn, "
                            "ffn, moe and head");
    switch (want) {
    case Want::kEmbed:
      if (!isa<EmbedOp>(op))
        return op.emitOpError("comes first but the model must start with 'pshard.embed'");
      want = Want::kAttnOrHead;
      break;
    case Want::kAttnOrHead:
      if (isa<HeadOp>(op)) {
        want = Want::kNothing;
      } else if (auto attn = dyn_cast<AttnOp>(op)) {
        if (attn.getLayer() != layer)
          return op.emitOpError("has layer ")
                 << attn.getLayer() << " but layer " << layer
                 << " comes next (layers count up from 0 in execution order)";
        want = Want::kFfn;
      } else {
        return op.emitOpError("expected 'pshard.attn' of layer ")
               << layer << " or 'pshard.head' here";
      }
      break;
    case Want::kFfn:
      if (!isa<FfnOp, MoeOp>(op) || static_cast<uint64_t>(sublayer.getLayerIndex()) != layer)
        return op.emitOpError("must be the 'pshard.ffn' or 'pshard.moe' of layer ")
               << layer << ", which follows 'attn[" << layer << "]'";
      ++layer;
      want = Want::kAttnOrHead;
      break;
    case Want::kNothing:
      return op.emitOpError("follows 'pshard.head', which must be the last sub-layer");
    }
  }
  if (want != Want::kNothing)
    return emitOpError("must end with 'pshard.head'");
  int64_t declared = getHParam("n_layer", static_cast<int64_t>(layer));
  if (declared != static_cast<int64_t>(layer))
    return emitOpError("has ") << layer << " layers but hparams say n_layer = " << declared;
  return success();
}

//===-- sub-layers -------------------------------------------------------------===//

int64_t AttnOp::getLayerIndex() { return static_cast<int64_t>(getLayer()); }
int64_t FfnOp::getLayerIndex() { return static_cast<int64_t>(getLayer()); }
int64_t MoeOp::getLayerIndex() { return static_cast<int64_t>(getLayer()); }
int64_t AttnOp::getKvBytesPerToken() { return static_cast<int64_t>(getKv()); }

LogicalResult EmbedOp::verify() { return verifyName(*this, getName(), "embed"); }
LogicalResult HeadOp::verify() { return verifyName(*this, getName(), "head"); }
LogicalResult FfnOp::verify() { return verifyName(*this, getName(), layerName("ffn", getLayer())); }

LogicalResult AttnOp::verify() {
  if (failed(verifyName(*this, getName(), layerName("attn", getLayer()))))
    return failure();
  if (getNHead() == 0 || getHeadDim() == 0 || getKvValues() == 0)
    return emitOpError("needs heads, head_dim and kv_values above zero");
  // The KV bytes must be what the model's KV type makes of kv_values, or a resident
  // attention block would reserve the wrong cache size.
  auto model = (*this)->getParentOfType<ModelOp>();
  // A recurrent layer's cache is its state, which does not grow per position.
  std::optional<uint64_t> expected = getRecurrent() ? 0 : bytesOf(model.getKvType(), getKvValues());
  if (!expected || *expected != getKv())
    return emitOpError("has kv ") << getKv() << " bytes per token but " << getKvValues()
                                  << " values of " << stringifyWeightType(model.getKvType())
                                  << " are " << (expected ? *expected : 0);
  return success();
}

LogicalResult MoeOp::verify() {
  if (failed(verifyName(*this, getName(), layerName("moe", getLayer()))))
    return failure();
  if (getExpertsUsed() == 0 || getExpertsUsed() > getExperts())
    return emitOpError("uses ") << getExpertsUsed() << " experts of " << getExperts()
                                << "; it must use at least 1 and at most all of them";
  int64_t total = cast<SubLayerOpInterface>(getOperation()).getTotalWeightBytes();
  if (getExpertBytes() * getExperts() + getSharedBytes() > static_cast<uint64_t>(total))
    return emitOpError("has ") << getExperts() << " experts of " << getExpertBytes()
                               << " bytes plus " << getSharedBytes() << " shared, more than its "
                               << total << " weight bytes";
  return success();
}

LogicalResult TensorOp::verify() {
  ArrayRef<int64_t> dims = getDims();
  if (getName().empty())
    return emitOpError("needs a GGUF tensor name");
  if (dims.empty() || dims.size() > 4)
    return emitOpError("has ") << dims.size() << " dimensions; GGUF tensors have 1 to 4";
  int64_t values = 1;
  for (int64_t d : dims) {
    if (d <= 0)
      return emitOpError("has a dimension of ") << d << "; all must be positive";
    values *= d;
  }
  std::optional<uint64_t> expected = bytesOf(getType(), values);
  if (!expected || *expected != getBytes())
    return emitOpError("has ") << getBytes() << " bytes but " << values << " values of "
                               << stringifyWeightType(getType()) << " are "
                               << (expected ? *expected : 0);
  return success();
}

LogicalResult MatmulOp::verify() {
  if (getRows() == 0 || getCols() == 0)
    return emitOpError("needs rows and cols above zero");
  if (getCount() == 0 || getCount() > getPool())
    return emitOpError("applies ") << getCount() << " of " << getPool()
                                   << " matrices; it must apply at least 1 and at most all";
  if (getGateUp() && getCount() == getPool())
    return emitOpError("is marked gate_up but applies all ")
           << getPool() << " of its matrices; only routed experts (count below pool) are fused";
  std::optional<uint64_t> expected = bytesOf(getType(), getRows() * getCols());
  if (!expected || *expected != getMatrixBytes())
    return emitOpError("has ") << getMatrixBytes() << " bytes per matrix but " << getRows() << " x "
                               << getCols() << " " << stringifyWeightType(getType()) << " is "
                               << (expected ? *expected : 0);
  return success();
}

} // namespace pshard::ir
