#include "runtime/executor/sublayer_tensors.h"

#include <algorithm>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

Status mismatch(const std::string& what) {
  return Status(StatusCode::kModelMismatch,
                "the schedule does not match the model: " + what +
                    "; compile the schedule for this model with pshard-compile");
}

SubLayerKind kind_of(sfb::SubLayerKind k) { return static_cast<SubLayerKind>(static_cast<int>(k)); }

bool is_f32(const TensorBytes& t) { return t.type == TensorType::kF32; }

// "1024 (4096 B)", or "1024 of file 2 (4096 B)" in a split model's later shards.
std::string located(uint32_t shard, uint64_t offset, uint64_t bytes) {
  return std::to_string(offset) + (shard > 0 ? " of file " + std::to_string(shard + 1) : "") +
         " (" + std::to_string(bytes) + " B)";
}

} // namespace

uint64_t SubLayerTensors::bytes() const {
  uint64_t n = 0;
  for (const auto& t : tensors)
    n += t.bytes;
  return n;
}

Result<std::vector<SubLayerTensors>> bind_sublayer_tensors(const Schedule& schedule,
                                                           const Model& model) {
  const auto* subs = schedule.root().sublayers();
  const auto& mine = model.sublayers();
  if (subs->size() != mine.size())
    return mismatch("it has " + std::to_string(subs->size()) + " sub-layers, the model " +
                    std::to_string(mine.size()));
  const gguf::GgufFile& file = model.file();
  std::vector<SubLayerTensors> out(mine.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    const sfb::SubLayer& s = *subs->Get(static_cast<flatbuffers::uoffset_t>(i));
    const std::string name = s.name() ? s.name()->str() : "";
    if (name != mine[i].name || kind_of(s.kind()) != mine[i].kind)
      return mismatch("sub-layer " + std::to_string(i) + " is '" + name + "', the model's is '" +
                      mine[i].name + "'");
    if (!s.tensors())
      continue;
    for (const sfb::Tensor* t : *s.tensors()) {
      const std::string tname = t->name() ? t->name()->str() : "";
      const gguf::TensorInfo* info = file.find_tensor(tname);
      if (!info)
        return mismatch(name + " uses tensor '" + tname + "', which the model lacks");
      const uint64_t offset = file.tensor_file_offset(*info);
      if (info->shard != t->shard() || offset != t->file_offset() || info->n_bytes != t->bytes())
        return mismatch("tensor '" + tname + "' is at " +
                        located(info->shard, offset, info->n_bytes) + " in the model, at " +
                        located(t->shard(), t->file_offset(), t->bytes()) + " in the schedule");
      const std::span<const uint8_t> image = file.shards()[info->shard].bytes;
      if (offset + info->n_bytes > image.size())
        return mismatch("tensor '" + tname + "' lies past the end of the mapped model");
      TensorBytes b{tname, image.data() + offset, info->n_bytes, info->type};
      b.experts = info->dims.size() == 3;
      b.n_expert = b.experts ? info->dims[2] : 1;
      out[i].tensors.push_back(std::move(b));
    }
  }
  return out;
}

namespace {

// Lays out pieces F32 first, each aligned to `align`; returns the end.
uint64_t lay_out(std::vector<SlotPiece>& pieces, uint64_t align) {
  uint64_t at = 0;
  for (SlotPiece& p : pieces) {
    at = (at + align - 1) / align * align;
    p.offset = at;
    at += p.bytes;
  }
  return at;
}

Result<SlotPacking> fit(std::vector<SlotPiece> pieces, uint64_t slot_bytes,
                        const std::string& name) {
  for (uint64_t align = 256; align >= 2; align /= 2) {
    const uint64_t end = lay_out(pieces, align);
    if (end <= slot_bytes)
      return SlotPacking{std::move(pieces), end};
  }
  const uint64_t need = lay_out(pieces, 2);
  return Status(StatusCode::kOutOfMemory,
                "the weights of " + name + " (" + std::to_string(need) +
                    " B) do not fit the plan's streaming slot of " + std::to_string(slot_bytes) +
                    " B; the schedule is inconsistent with this model — recompile it");
}

void order_f32_first(std::vector<SlotPiece>& pieces, const SubLayerTensors& t) {
  std::stable_partition(pieces.begin(), pieces.end(), [&](const SlotPiece& p) {
    return is_f32(t.tensors[static_cast<size_t>(p.tensor)]);
  });
}

} // namespace

Result<SlotPacking> pack_slot(const SubLayerTensors& t, uint64_t slot_bytes,
                              const std::string& name) {
  std::vector<SlotPiece> pieces;
  for (size_t j = 0; j < t.tensors.size(); ++j)
    pieces.push_back({t.tensors[j].host, t.tensors[j].bytes, 0, static_cast<int>(j), -1});
  order_f32_first(pieces, t);
  return fit(std::move(pieces), slot_bytes, name);
}

Result<SlotPacking> pack_experts(const SubLayerTensors& t, std::span<const int64_t> experts,
                                 uint64_t slot_bytes, const std::string& name) {
  std::vector<SlotPiece> pieces;
  for (size_t j = 0; j < t.tensors.size(); ++j) {
    const TensorBytes& tb = t.tensors[j];
    if (!tb.experts) {
      pieces.push_back({tb.host, tb.bytes, 0, static_cast<int>(j), -1});
      continue;
    }
    const uint64_t slice = tb.bytes / static_cast<uint64_t>(tb.n_expert);
    for (int64_t e : experts)
      pieces.push_back(
          {tb.host + static_cast<uint64_t>(e) * slice, slice, 0, static_cast<int>(j), e});
  }
  order_f32_first(pieces, t);
  return fit(std::move(pieces), slot_bytes, name);
}

namespace {

// Moves one pointer from the mapping to the device; false when it is in no tensor.
bool move(const SubLayerTensors& t, std::span<uint8_t* const> base, const uint8_t*& p) {
  if (!p)
    return true;
  for (size_t j = 0; j < t.tensors.size(); ++j) {
    const TensorBytes& tb = t.tensors[j];
    if (p >= tb.host && p < tb.host + tb.bytes) {
      p = base[j] ? base[j] + (p - tb.host) : nullptr;
      return true;
    }
  }
  return false;
}

bool move(const SubLayerTensors& t, std::span<uint8_t* const> base, const float*& p) {
  const uint8_t* b = reinterpret_cast<const uint8_t*>(p);
  const bool ok = move(t, base, b);
  p = reinterpret_cast<const float*>(b);
  return ok;
}

} // namespace

Result<SubLayerWeights> rebase_weights(const SubLayer& s, const SubLayerWeights& host,
                                       const SubLayerTensors& t, std::span<uint8_t* const> base) {
  SubLayerWeights w = host;
  bool ok = true;
  for_each_weight_pointer(s.kind, w, [&](auto& p) { ok = move(t, base, p) && ok; });
  if (!ok)
    return unsupported("a weight of " + s.name +
                       " is not stored as F32 in the model file (the "
                       "host converted it), so it cannot run on a device; keep it on the CPU");
  return w;
}

void place_experts(const SubLayerTensors& t, const SlotPacking& pack, uint8_t* slot,
                   const MoeWeights& host, MoeWeights* device) {
  for (ExpertMatrices* m : {&device->gate, &device->up, &device->down})
    m->placed.assign(static_cast<size_t>(m->n_expert), nullptr);
  const std::pair<const ExpertMatrices*, ExpertMatrices*> pairs[] = {
      {&host.gate, &device->gate}, {&host.up, &device->up}, {&host.down, &device->down}};
  for (const SlotPiece& p : pack.pieces) {
    if (p.expert < 0)
      continue;
    const uint8_t* tensor_start = t.tensors[static_cast<size_t>(p.tensor)].host;
    for (const auto& [h, d] : pairs)
      if (h->first.data == tensor_start)
        d->placed[static_cast<size_t>(p.expert)] = slot + p.offset;
  }
}

} // namespace pshard
