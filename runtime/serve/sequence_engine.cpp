#include "runtime/serve/sequence_engine.h"

#include "runtime/batch/per_sequence_decoder.h"
#include "runtime/executor/hybrid_session.h"

#include <algorithm>
#include <map>

namespace pshard {
namespace {

class HybridSequenceEngine final : public BatchDecoder {
public:
  HybridSequenceEngine(const Model& model, const Schedule* schedule, const SequenceEngineOptions& o)
      : model_(model), schedule_(schedule), options_(o), budget_(o.device.vram_budget),
        inner_(o.max_sequences, o.n_batch, model.hparams().n_vocab, [this] { return make(); }) {}

  Result<SeqId> open_sequence() override {
    PSHARD_ASSIGN_OR_RETURN(SeqId seq, inner_.open_sequence());
    n_ctx_ = inner_.n_ctx();
    slots_[seq] = std::move(made_);
    return seq;
  }
  void close_sequence(SeqId seq) override {
    auto it = slots_.find(seq);
    if (it == slots_.end())
      return;
    merge_session_stats(retired_, it->second.session->stats());
    inner_.close_sequence(seq); // the session, then its device
    slots_.erase(it);
  }
  int64_t sequence_length(SeqId seq) const override { return inner_.sequence_length(seq); }
  bool can_append(SeqId seq, int64_t n) const override { return inner_.can_append(seq, n); }
  Result<BatchLogits> decode(std::span<const BatchEntry> batch) override {
    return inner_.decode(batch);
  }
  int64_t n_vocab() const override { return inner_.n_vocab(); }
  int64_t n_ctx() const override { return n_ctx_; }
  int64_t max_batch_tokens() const override { return inner_.max_batch_tokens(); }
  int64_t max_sequences() const override { return inner_.max_sequences(); }
  KvPageStats kv_pages() const override {
    KvPageStats k = inner_.kv_pages();
    k.page_tokens = n_ctx_;
    return k;
  }

  Status set_vram_budget(uint64_t bytes) override {
    if (!schedule_)
      return BatchDecoder::set_vram_budget(bytes);
    const uint64_t smallest = schedule_->budgets().front();
    if (bytes != 0 && bytes < smallest) // refused before any sequence moves, open or not
      return Status(StatusCode::kOutOfMemory,
                    "a VRAM budget of " + std::to_string(bytes) +
                        " B is below the schedule's smallest compiled budget of " +
                        std::to_string(smallest) + " B; give at least that (or 0: all on the CPU)");
    // Every session has the same plans: the first refusal changes nothing anywhere.
    for (auto& [seq, slot] : slots_)
      PSHARD_RETURN_IF_ERROR(slot.session->set_budget(bytes));
    budget_ = bytes;
    return Status::ok_status();
  }
  BatchEngineStats stats() const override {
    BatchEngineStats s;
    s.sessions = retired_;
    for (const auto& [seq, slot] : slots_) {
      merge_session_stats(s.sessions, slot.session->stats());
      if (slot.device)
        s.device_bytes += slot.device->arena_bytes();
    }
    s.vram_budget = budget_;
    return s;
  }

private:
  struct Slot {
    std::unique_ptr<Device> device; // outlives its session (PerSequenceDecoder owns that)
    HybridSession* session = nullptr;
  };

  Result<std::unique_ptr<Decoder>> make() {
    DeviceOptions d = options_.device;
    d.vram_budget = budget_;
    PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, make_device(d, schedule_));
    HybridParams hp;
    hp.n_ctx = options_.n_ctx;
    hp.n_threads = options_.n_threads;
    hp.vram_budget = budget_;
    hp.n_batch = options_.n_batch;
    hp.force_tier = options_.force_tier;
    PSHARD_ASSIGN_OR_RETURN(auto session,
                            HybridSession::create(model_, schedule_, device.get(), hp));
    made_ = {std::move(device), session.get()};
    return std::unique_ptr<Decoder>(std::move(session));
  }

  const Model& model_;
  const Schedule* schedule_;
  SequenceEngineOptions options_;
  uint64_t budget_;
  int64_t n_ctx_ = 0;
  Slot made_;                   // the last session made, until open_sequence files it
  std::map<SeqId, Slot> slots_; // declared before inner_: destroyed after the sessions
  SessionStats retired_;        // closed sequences' passes
  PerSequenceDecoder inner_;
};

} // namespace

void merge_session_stats(SessionStats& into, const SessionStats& from) {
  for (const PlanUse& u : from.plans) {
    auto it = std::find_if(into.plans.begin(), into.plans.end(), [&](const PlanUse& p) {
      return p.budget_bytes == u.budget_bytes && p.tier == u.tier;
    });
    if (it == into.plans.end()) {
      into.plans.push_back(u);
      continue;
    }
    it->passes += u.passes;
    it->tokens += u.tokens;
    it->measured_ms_total += u.measured_ms_total;
    it->bytes_streamed += u.bytes_streamed;
  }
  into.passes += from.passes;
  into.bytes_streamed += from.bytes_streamed;
  into.bytes_crossed += from.bytes_crossed;
  into.bytes_switched += from.bytes_switched;
  into.budget_switches += from.budget_switches;
  into.peak_device_bytes = std::max(into.peak_device_bytes, from.peak_device_bytes);
}

Result<std::unique_ptr<BatchDecoder>> make_sequence_engine(const Model& model,
                                                           const Schedule* schedule,
                                                           const SequenceEngineOptions& options) {
  if (options.max_sequences < 1)
    return invalid_argument("the engine needs at least one sequence, got " +
                            std::to_string(options.max_sequences));
  if (options.n_batch < 1)
    return invalid_argument("a pass must carry at least one token, got n_batch " +
                            std::to_string(options.n_batch));
  SequenceEngineOptions o = options;
  if (schedule && o.device.vram_budget == 0) // as pshard-run: the largest compiled budget
    o.device.vram_budget = schedule->budgets().back();
  auto engine = std::make_unique<HybridSequenceEngine>(model, schedule, o);
  PSHARD_ASSIGN_OR_RETURN(SeqId probe, engine->open_sequence());
  engine->close_sequence(probe);
  return std::unique_ptr<BatchDecoder>(std::move(engine));
}

} // namespace pshard
