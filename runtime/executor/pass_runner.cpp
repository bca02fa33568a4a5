#include "runtime/executor/pass_runner.h"

#include "runtime/executor/expert_dispatch.h"
#include "runtime/executor/host_routes.h"
#include "runtime/executor/pass_graph.h"

#include <algorithm>
#include <chrono>

namespace pshard {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class PassRunner {
public:
  explicit PassRunner(PassContext& c)
      : c_(c), hp_(c.model.hparams()), host_pass_{hp_,      c.cpu,      c.host_act,  c.pos0,
                                                  c.tokens, c.segments, c.logit_rows},
        dev_pass_{hp_,
                  c.device ? c.device->compute() : static_cast<Ops&>(c.cpu),
                  c.plan ? c.plan->device_act : c.host_act,
                  c.pos0,
                  c.tokens,
                  c.device_segments,
                  c.logit_rows} {
    host_pass_.window_segments = c.window_segments;
    dev_pass_.window_segments = c.device_window_segments;
    host_pass_.rope_positions = dev_pass_.rope_positions = c.rope_positions;
    host_pass_.n_ctx = dev_pass_.n_ctx = c.n_ctx;
  }

  Status run();
  PassStats stats;

private:
  struct Pending { // a device slice, resolved once the pass has finished
    Track track;
    std::string name;
    DeviceEvent* begin;
    DeviceEvent* end;
    uint64_t bytes;
  };
  bool on_device(size_t i) const { return c_.plan && c_.device && c_.plan->on_device[i]; }
  // The embed sub-layer of a pass fed an image's rows: they are host memory, so it runs
  // on the host whatever its placement.
  bool image_embed(size_t i) const {
    return (c_.embed_rows || !c_.replace_rows.empty()) &&
           c_.model.sublayers()[i].kind == SubLayerKind::kEmbed;
  }
  uint64_t hidden_bytes() const {
    return static_cast<uint64_t>(c_.tokens.size() * hp_.n_embd) * sizeof(float);
  }
  Result<DeviceEvent*> mark(Queue q);
  Status run_sublayers();
  // Inside a recorded pass (Device::begin_graph) only compute() ops may be enqueued.
  Status outside_graph(const char* what) const;
  void end_graph();
  Status issue_ready_copies();
  Status issue_copy(int k);
  Status to_host();
  Status to_device();
  Status route_on_host(size_t i);
  Status run_split(size_t i);
  void count_expert_uses(const SchedulePlan::Experts& split);
  Status run_cpu(size_t i);
  Status run_device(size_t i);
  Status logits_to_host(int64_t first_row, int64_t rows);
  void resolve_slices();
  KvView paged(KvView kv) const { // a batch's caches are page pools
    if (c_.page_tokens == 0)
      return kv;
    kv.page_tokens = c_.page_tokens;
    kv.ring = 0; // a sliding-window layer's pool is paged too (its rows: the window pool's)
    return kv;
  }

  PassContext& c_;
  const ModelHParams& hp_;
  ForwardPass host_pass_, dev_pass_;
  bool host_valid_ = true, device_valid_ = false; // where the hidden state is current
  int next_copy_ = 0, done_enqueued_ = 0;
  std::vector<DeviceEvent*> copied_, done_;
  std::vector<SlotPacking> moe_pack_;         // per sub-layer, routed on the host
  std::vector<SubLayerWeights> moe_weights_;  // per sub-layer, routed on the host
  std::vector<bool> routed_;                  // per stream index
  std::vector<std::vector<MoeRoute>> routes_; // the expert-level block routed last
  std::vector<bool> expert_on_device_;        // its experts resident or copied
  SlotPacking gathered_;                      // the embed rows of a gathering copy
  std::vector<TokenId> row_ids_;              // 0..n-1: rows of the gathered table
  std::vector<Pending> pending_;
  bool recording_ = false; // the device records this pass as a graph
};

Result<DeviceEvent*> PassRunner::mark(Queue q) {
  PSHARD_RETURN_IF_ERROR(outside_graph("an event"));
  PSHARD_ASSIGN_OR_RETURN(DeviceEvent * e, c_.events->next());
  c_.device->record(*e, q);
  return e;
}

Status PassRunner::run() {
  const auto& subs = c_.model.sublayers();
  if (c_.plan && c_.device) {
    const size_t n_streamed = c_.plan->plan->stream_order.size();
    copied_.assign(n_streamed, nullptr);
    done_.assign(n_streamed, nullptr);
    routed_.assign(n_streamed, false);
    moe_pack_.resize(subs.size());
    moe_weights_.resize(subs.size());
    const PlanLayout& l = c_.plan->layout;
    if (l.workspace_offset != kNoOffset)
      c_.device->set_workspace(c_.device->arena() + l.workspace_offset, l.workspace_bytes);
    PSHARD_RETURN_IF_ERROR(issue_ready_copies());
    // After set_workspace and the copies, the last device calls a recording forbids.
    recording_ = !graph_unfit_pass(c_) &&
                 c_.device->begin_graph(graph_key(c_), static_cast<int64_t>(c_.tokens.size()));
  }
  const Status ran = run_sublayers();
  if (!ran.ok()) {
    if (recording_)
      (void)c_.device->end_graph(/*replay=*/false); // leave the device recording nothing
    return ran;
  }
  end_graph(); // a pass without logits: its last sub-layer was recorded
  if (c_.hidden_to_host && c_.device && c_.plan)
    PSHARD_RETURN_IF_ERROR(to_host());
  if (c_.device && c_.plan) {
    PSHARD_RETURN_IF_ERROR(c_.device->synchronize());
    resolve_slices();
  }
  return Status::ok_status();
}

Status PassRunner::run_sublayers() {
  const auto& subs = c_.model.sublayers();
  for (size_t i = 0; i < subs.size(); ++i) {
    if (subs[i].kind == SubLayerKind::kHead && !c_.compute_logits)
      continue;
    PSHARD_RETURN_IF_ERROR(on_device(i) && !image_embed(i) ? run_device(i) : run_cpu(i));
    if (deepstack_after(subs, i, c_.deepstack, hp_.n_deepstack)) {
      // An image's DeepStack rows are host memory: the hidden state comes to them (a
      // few layers of an image's prefill).
      PSHARD_RETURN_IF_ERROR(to_host());
      add_deepstack_rows(c_.deepstack, subs[i].layer, c_.host_act.hidden, hp_.n_embd);
      device_valid_ = false;
    }
  }
  return Status::ok_status();
}

Status PassRunner::outside_graph(const char* what) const {
  if (!recording_)
    return Status::ok_status();
  return internal_error(std::string(what) +
                        " inside a pass recorded as a device graph: pass_graph.h admitted a "
                        "plan or pass that needs more than the compute queue");
}

// Replays the recorded work (the logits' download and the end of the pass wait for it
// through events and synchronize, as for work enqueued op by op).
void PassRunner::end_graph() {
  if (!recording_)
    return;
  recording_ = false;
  stats.graph_replayed = c_.device->end_graph(/*replay=*/true);
}

Status PassRunner::issue_ready_copies() {
  const PlanRuntime& p = *c_.plan;
  const int n = static_cast<int>(p.plan->stream_order.size());
  while (next_copy_ < n) {
    const int k = next_copy_;
    const size_t i = static_cast<size_t>(p.plan->stream_order[static_cast<size_t>(k)]);
    const bool slot_free = k < p.slot_count || k - p.slot_count < done_enqueued_;
    const bool in_depth = k < p.prefetch_depth || k - p.prefetch_depth < done_enqueued_;
    if (!slot_free || !in_depth ||
        (p.route_on_host[i] && !p.copy_ahead[i] && !routed_[static_cast<size_t>(k)]))
      break;
    PSHARD_RETURN_IF_ERROR(issue_copy(k));
    ++next_copy_;
  }
  return Status::ok_status();
}

Status PassRunner::issue_copy(int k) {
  PSHARD_RETURN_IF_ERROR(outside_graph("a weight copy"));
  const PlanRuntime& p = *c_.plan;
  Device& d = *c_.device;
  const size_t i = static_cast<size_t>(p.plan->stream_order[static_cast<size_t>(k)]);
  if (k >= p.slot_count)
    d.wait(Queue::kCopy, *done_[static_cast<size_t>(k - p.slot_count)]);
  if (k >= p.prefetch_depth)
    d.wait(Queue::kCopy, *done_[static_cast<size_t>(k - p.prefetch_depth)]);
  DeviceEvent* begin = nullptr;
  if (c_.timeline) {
    PSHARD_ASSIGN_OR_RETURN(begin, mark(Queue::kCopy));
  }
  uint8_t* slot = d.arena() + p.layout.slot_offset[static_cast<size_t>(k % p.slot_count)];
  if (p.gather_rows[i] || image_embed(i)) {
    const MatrixView& table = c_.host_weights[i].embed;
    gathered_.pieces.clear(); // an image's rows: nothing to copy, the host embeds them
    for (size_t t = 0; !image_embed(i) && t < c_.tokens.size(); ++t)
      gathered_.pieces.push_back({table.data + static_cast<size_t>(c_.tokens[t]) * table.row_bytes,
                                  table.row_bytes, t * table.row_bytes, 0, -1});
  }
  const SlotPacking& pack = p.gather_rows[i] || image_embed(i)       ? gathered_
                            : p.route_on_host[i] && !p.copy_ahead[i] ? moe_pack_[i]
                                                                     : p.packing[i];
  uint64_t bytes = 0;
  for (const SlotPiece& piece : pack.pieces) {
    d.copy_to_device(Queue::kCopy, slot + piece.offset, piece.host, piece.bytes);
    bytes += piece.bytes;
  }
  PSHARD_ASSIGN_OR_RETURN(copied_[static_cast<size_t>(k)], mark(Queue::kCopy));
  stats.bytes_streamed += bytes;
  if (c_.timeline)
    pending_.push_back({Track::kCopy, c_.model.sublayers()[i].name, begin,
                        copied_[static_cast<size_t>(k)], bytes});
  return Status::ok_status();
}

Status PassRunner::to_host() {
  if (host_valid_)
    return Status::ok_status();
  PSHARD_RETURN_IF_ERROR(outside_graph("the hidden state's download"));
  Device& d = *c_.device;
  PSHARD_ASSIGN_OR_RETURN(DeviceEvent * computed, mark(Queue::kCompute));
  d.wait(Queue::kTransfer, *computed);
  DeviceEvent* begin = nullptr;
  if (c_.timeline) {
    PSHARD_ASSIGN_OR_RETURN(begin, mark(Queue::kTransfer));
  }
  d.copy_to_host(Queue::kTransfer, c_.host_act.hidden, dev_pass_.act.hidden, hidden_bytes());
  PSHARD_ASSIGN_OR_RETURN(DeviceEvent * arrived, mark(Queue::kTransfer));
  PSHARD_RETURN_IF_ERROR(d.synchronize(*arrived));
  if (c_.timeline)
    pending_.push_back({Track::kTransfer, "hidden to host", begin, arrived, hidden_bytes()});
  stats.bytes_crossed += hidden_bytes();
  host_valid_ = true;
  return Status::ok_status();
}

Status PassRunner::to_device() {
  if (device_valid_)
    return Status::ok_status();
  PSHARD_RETURN_IF_ERROR(outside_graph("the hidden state's upload"));
  Device& d = *c_.device;
  DeviceEvent* begin = nullptr;
  if (c_.timeline) {
    PSHARD_ASSIGN_OR_RETURN(begin, mark(Queue::kTransfer));
  }
  d.copy_to_device(Queue::kTransfer, dev_pass_.act.hidden, c_.host_act.hidden, hidden_bytes());
  PSHARD_ASSIGN_OR_RETURN(DeviceEvent * arrived, mark(Queue::kTransfer));
  d.wait(Queue::kCompute, *arrived);
  if (c_.timeline)
    pending_.push_back({Track::kTransfer, "hidden to device", begin, arrived, hidden_bytes()});
  stats.bytes_crossed += hidden_bytes();
  device_valid_ = true;
  return Status::ok_status();
}

// A streamed MoE whose experts do not all fit its slot: route on the host, copy only
// the routed experts, and hand the device these routes, so it runs exactly the experts
// it was given (a device with other rounding could otherwise pick one never copied).
Status PassRunner::route_on_host(size_t i) {
  PSHARD_RETURN_IF_ERROR(to_host());
  const PlanRuntime& p = *c_.plan;
  const SubLayer& s = c_.model.sublayers()[i];
  const MoeWeights& w = c_.host_weights[i].moe;
  const int64_t n = static_cast<int64_t>(c_.tokens.size());
  const ActivationPtrs& a = c_.host_act;
  pre_norm(c_.cpu, hp_, a.hidden, w.norm.data, w.norm_b.data, a.normed, n); // as moe_forward
  moe_router_logits(c_.cpu, w, a.normed, n, a.router);
  const auto routes =
      moe_routes(a.router, n, hp_.n_expert, hp_.n_expert_used, moe_gating_of(hp_, w));
  // Expert-level: only the routed experts the plan copies; resident ones are in VRAM
  // and the others run on the host.
  const SchedulePlan::Experts* split = p.experts[i];
  const int k = p.stream_index[i];
  if (split && p.copy_ahead[i]) { // its copied experts were copied ahead, routed or not
    moe_weights_[i] = p.device_weights[i];
    expert_on_device_.assign(routes.size(), false);
    for (const std::vector<int32_t>* ids : {&split->resident, &split->copied})
      for (int32_t e : *ids)
        expert_on_device_[static_cast<size_t>(e)] = true;
    routes_ = routes;
    routed_[static_cast<size_t>(k)] = true;
    return Status::ok_status();
  }
  std::vector<int64_t> experts;
  for (size_t e = 0; e < routes.size(); ++e)
    if (!routes[e].empty() &&
        (!split ||
         std::binary_search(split->copied.begin(), split->copied.end(), static_cast<int32_t>(e))))
      experts.push_back(static_cast<int64_t>(e));
  PSHARD_ASSIGN_OR_RETURN(
      moe_pack_[i], pack_experts((*c_.tensors)[i], experts, p.plan->stream_slot_bytes, s.name));
  uint8_t* slot = c_.device->arena() + p.layout.slot_offset[static_cast<size_t>(k % p.slot_count)];
  std::vector<uint8_t*> bases((*c_.tensors)[i].tensors.size(), nullptr);
  for (const SlotPiece& piece : moe_pack_[i].pieces)
    if (piece.expert < 0)
      bases[static_cast<size_t>(piece.tensor)] = slot + piece.offset;
  PSHARD_ASSIGN_OR_RETURN(moe_weights_[i],
                          rebase_weights(s, c_.host_weights[i], (*c_.tensors)[i], bases));
  place_experts((*c_.tensors)[i], moe_pack_[i], slot, w, &moe_weights_[i].moe);
  routed_[static_cast<size_t>(k)] = true;
  if (split) {
    expert_on_device_.assign(routes.size(), false);
    for (int64_t e : experts)
      expert_on_device_[static_cast<size_t>(e)] = true;
    for (int32_t e : split->resident)
      expert_on_device_[static_cast<size_t>(e)] = true;
    overlay_resident_experts(p.resident_experts[i], &moe_weights_[i].moe);
    routes_ = std::move(routes);
    return Status::ok_status();
  }
  PSHARD_ASSIGN_OR_RETURN(moe_weights_[i].moe.host_routes,
                          routes_by_token(routes, n, hp_.n_expert_used));
  return Status::ok_status();
}

Status PassRunner::run_cpu(size_t i) {
  const SubLayer& s = c_.model.sublayers()[i];
  if (s.kind != SubLayerKind::kEmbed)
    PSHARD_RETURN_IF_ERROR(to_host());
  const int64_t t0 = now_ns();
  SubLayerWeights image;
  const bool image_table = image_embed(i) && c_.embed_rows;
  if (image_table) {
    image = c_.host_weights[i];
    image.embed = *c_.embed_rows; // the ids are rows of the image's embeddings
  }
  run_sublayer(s, host_pass_, image_table ? image : c_.host_weights[i],
               s.kind == SubLayerKind::kAttention ? paged(c_.host_kv.layer(s.layer)) : KvView{});
  if (image_embed(i))
    for (const auto& [row, values] : c_.replace_rows)
      std::copy_n(values, hp_.n_embd, host_pass_.act.hidden + row * hp_.n_embd);
  if (c_.timeline)
    c_.timeline->add(Track::kCpu, s.name, t0, now_ns());
  host_valid_ = true;
  device_valid_ = false;
  if (on_device(i) && c_.plan->stream_index[i] >= 0) { // a streamed embed's slot is free
    const int k = c_.plan->stream_index[i];
    PSHARD_ASSIGN_OR_RETURN(done_[static_cast<size_t>(k)], mark(Queue::kCompute));
    done_enqueued_ = k + 1;
    PSHARD_RETURN_IF_ERROR(issue_ready_copies());
  }
  return Status::ok_status();
}

Status PassRunner::run_device(size_t i) {
  const PlanRuntime& p = *c_.plan;
  Device& d = *c_.device;
  const SubLayer& s = c_.model.sublayers()[i];
  const int k = p.stream_index[i];
  if (k >= 0 && p.route_on_host[i])
    PSHARD_RETURN_IF_ERROR(route_on_host(i));
  if (k >= 0 && p.experts[i])
    return run_split(i);
  if (s.kind != SubLayerKind::kEmbed)
    PSHARD_RETURN_IF_ERROR(to_device());
  if (k >= 0) {
    PSHARD_RETURN_IF_ERROR(issue_ready_copies());
    if (!copied_[static_cast<size_t>(k)])
      return internal_error("the copy of " + s.name + " was not issued before its use");
    d.wait(Queue::kCompute, *copied_[static_cast<size_t>(k)]);
  }
  const SubLayerWeights& w = k >= 0 && p.route_on_host[i] ? moe_weights_[i] : p.device_weights[i];
  // The head runs as many rows at a time as the plan's activations hold logits for (a
  // schedule compiled for fewer parallel sequences than the batch holds fewer), each
  // group copied to its rows of the host logits.
  const bool head = s.kind == SubLayerKind::kHead;
  const int64_t rows = head ? dev_pass_.n_logit_rows() : 1;
  const int64_t step = std::clamp<int64_t>(p.device_logit_rows, 1, rows);
  DeviceEvent* end = nullptr;
  for (int64_t first = 0; first < rows; first += step) {
    DeviceEvent* begin = nullptr;
    if (c_.timeline) {
      PSHARD_ASSIGN_OR_RETURN(begin, mark(Queue::kCompute));
    }
    ForwardPass part = dev_pass_;
    if (head && !c_.logit_rows.empty())
      part.logit_rows = c_.logit_rows.subspan(static_cast<size_t>(first),
                                              static_cast<size_t>(std::min(step, rows - first)));
    if (p.gather_rows[i]) {
      row_ids_.resize(c_.tokens.size());
      for (size_t t = 0; t < row_ids_.size(); ++t)
        row_ids_[t] = static_cast<TokenId>(t);
      ForwardPass gathered{hp_, dev_pass_.ops, dev_pass_.act, c_.pos0, row_ids_};
      run_sublayer(s, gathered, w, {});
    } else {
      run_sublayer(s, part, w, paged(p.device_kv[i]));
    }
    // The end is an event only where something waits for it (a streamed slot's reuse)
    // or times it, so a resident pass enqueues nothing but kernels.
    if (k >= 0 || c_.timeline) {
      PSHARD_ASSIGN_OR_RETURN(end, mark(Queue::kCompute));
    }
    if (c_.timeline)
      pending_.push_back({Track::kCompute, s.name, begin, end, 0});
    if (head)
      PSHARD_RETURN_IF_ERROR(logits_to_host(first, part.n_logit_rows()));
  }
  device_valid_ = true;
  host_valid_ = false;
  if (k >= 0) {
    done_[static_cast<size_t>(k)] = end;
    done_enqueued_ = k + 1;
    PSHARD_RETURN_IF_ERROR(issue_ready_copies());
  }
  return Status::ok_status();
}

// The block's routed experts by where they run (those copied ahead but not routed to
// count nowhere).
void PassRunner::count_expert_uses(const SchedulePlan::Experts& split) {
  for (size_t e = 0; e < routes_.size(); ++e) {
    if (routes_[e].empty())
      continue;
    if (std::binary_search(split.resident.begin(), split.resident.end(), static_cast<int32_t>(e)))
      ++stats.experts.resident;
    else if (expert_on_device_[e])
      ++stats.experts.copied;
    else
      ++stats.experts.host;
  }
}

// An expert-level MoE block: the device's experts and the host's at once, summed on the
// host in expert order (expert_dispatch.h); the block's output is on the host.
Status PassRunner::run_split(size_t i) {
  PSHARD_RETURN_IF_ERROR(outside_graph("an expert-level MoE block"));
  const PlanRuntime& p = *c_.plan;
  const int k = p.stream_index[i];
  PSHARD_RETURN_IF_ERROR(issue_ready_copies());
  if (!copied_[static_cast<size_t>(k)])
    return internal_error("the copy of " + c_.model.sublayers()[i].name +
                          " was not issued before its use");
  PSHARD_ASSIGN_OR_RETURN(DeviceEvent * done, c_.events->next());
  count_expert_uses(*p.experts[i]);
  const int64_t t0 = now_ns();
  SplitMoe job{hp_,
               *c_.device,
               c_.cpu,
               c_.host_act,
               dev_pass_.act,
               c_.host_weights[i].moe,
               moe_weights_[i].moe,
               routes_,
               expert_on_device_,
               copied_[static_cast<size_t>(k)],
               done};
  PSHARD_RETURN_IF_ERROR(run_split_moe(job, host_pass_));
  if (c_.timeline)
    c_.timeline->add(Track::kCpu, c_.model.sublayers()[i].name, t0, now_ns());
  host_valid_ = true;
  device_valid_ = false;
  done_[static_cast<size_t>(k)] = done;
  done_enqueued_ = k + 1;
  return issue_ready_copies();
}

Status PassRunner::logits_to_host(int64_t first_row, int64_t rows) {
  end_graph(); // the head was the recorded pass's last work
  Device& d = *c_.device;
  const uint64_t bytes = static_cast<uint64_t>(hp_.n_vocab * rows) * sizeof(float);
  PSHARD_ASSIGN_OR_RETURN(DeviceEvent * computed, mark(Queue::kCompute));
  d.wait(Queue::kTransfer, *computed);
  DeviceEvent* begin = nullptr;
  if (c_.timeline) {
    PSHARD_ASSIGN_OR_RETURN(begin, mark(Queue::kTransfer));
  }
  d.copy_to_host(Queue::kTransfer, c_.host_act.logits + first_row * hp_.n_vocab,
                 dev_pass_.act.logits, bytes);
  PSHARD_ASSIGN_OR_RETURN(DeviceEvent * arrived, mark(Queue::kTransfer));
  if (c_.timeline)
    pending_.push_back({Track::kTransfer, "logits to host", begin, arrived, bytes});
  stats.bytes_crossed += bytes;
  return d.synchronize(*arrived);
}

void PassRunner::resolve_slices() {
  for (const Pending& s : pending_) {
    auto b = c_.device->completion_time_ns(*s.begin);
    auto e = c_.device->completion_time_ns(*s.end);
    if (!b.ok() || !e.ok())
      return; // the device does not time events: CPU slices only
    c_.timeline->add(s.track, s.name, *b, *e, s.bytes);
  }
}

} // namespace

Result<PassStats> run_pass(PassContext& ctx) {
  const int64_t t0 = now_ns();
  if (ctx.events)
    ctx.events->reset();
  PassRunner runner(ctx);
  PSHARD_RETURN_IF_ERROR(runner.run());
  runner.stats.n_tokens = static_cast<int64_t>(ctx.tokens.size());
  runner.stats.measured_ms = static_cast<double>(now_ns() - t0) / 1e6;
  return runner.stats;
}

} // namespace pshard
