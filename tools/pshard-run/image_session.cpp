#include "tools/pshard-run/image_session.h"

#include "runtime/backends/emu/emu_device.h"
#include "runtime/vision/image_prompt.h"
#include "tools/common/cli_lora_options.h"
#include "tools/common/hybrid_target.h"
#include "tools/common/size_parse.h"

#include <chrono>

namespace pshard {
namespace {

Result<std::optional<TensorType>> kv_type(const std::string& name) {
  if (name.empty())
    return std::optional<TensorType>{};
  PSHARD_ASSIGN_OR_RETURN(TensorType t, parse_tensor_type(name));
  return std::optional<TensorType>{t};
}

Status open_cpu(const RunOptions& o, int64_t n_ctx, ImageSession& s) {
  if (o.backend != "auto" && o.backend != "cpu")
    return invalid_argument("an image prompt on the " + o.backend +
                            " backend runs under a schedule: give -s (pshard-compile "
                            "--mmproj plans its vision phase)");
  SessionParams sp;
  sp.n_ctx = n_ctx;
  sp.n_threads = o.n_threads;
  sp.n_batch = o.n_batch;
  sp.swa_full = o.swa_full;
  PSHARD_ASSIGN_OR_RETURN(auto k, kv_type(o.cache_type_k));
  PSHARD_ASSIGN_OR_RETURN(auto v, kv_type(o.cache_type_v));
  if (k)
    sp.kv_type_k = *k;
  if (v)
    sp.kv_type_v = *v;
  PSHARD_ASSIGN_OR_RETURN(s.cpu, CpuSession::create(*s.model, sp));
  s.decoder = s.cpu.get();
  s.pool = std::make_unique<ThreadPool>(s.cpu->n_threads());
  s.backend = "cpu";
  return Status::ok_status();
}

Status open_scheduled(const RunOptions& o, int64_t n_ctx, ImageSession& s) {
  HybridParams hp;
  hp.n_ctx = n_ctx;
  hp.n_threads = o.n_threads;
  hp.swa_full = o.swa_full;
  PSHARD_ASSIGN_OR_RETURN(hp.kv_type_k, kv_type(o.cache_type_k));
  PSHARD_ASSIGN_OR_RETURN(hp.kv_type_v, kv_type(o.cache_type_v));
  PSHARD_ASSIGN_OR_RETURN(
      OpenedHybrid h,
      open_hybrid(*s.model, {o.schedule_path, o.backend, o.vram, o.emu_pcie_gbps}, hp));
  s.schedule = std::move(h.schedule);
  s.device = std::move(h.device);
  s.hybrid = std::move(h.session);
  s.backend = h.backend;
  s.decoder = s.hybrid.get();
  s.pool = std::make_unique<ThreadPool>(s.hybrid->n_threads());
  return Status::ok_status();
}

} // namespace

Result<ImageSession> open_image_session(const RunOptions& o) {
  ImageSession s;
  // As pshard_model_load takes them: the RoPE flags, --override-kv, the LoRA adapters.
  PSHARD_ASSIGN_OR_RETURN(HParamOverrides overrides, rope_overrides(o.rope));
  PSHARD_RETURN_IF_ERROR(add_kv_overrides(overrides, o.override_kv, !o.schedule_path.empty()));
  PSHARD_ASSIGN_OR_RETURN(const cli::LoraParams lora, cli::lora_params(o.lora, o.lora_scaled));
  std::vector<LoraAdapter> adapters;
  for (size_t i = 0; i < lora.size(); ++i)
    adapters.push_back({lora.paths[i], lora.scales[i]});
  PSHARD_ASSIGN_OR_RETURN(
      s.model,
      Model::load(o.model_path, o.no_mmap ? gguf::OpenMode::kReadData : gguf::OpenMode::kMapData,
                  overrides, adapters));
  PSHARD_RETURN_IF_ERROR(check_image_prompt_model(s.model->hparams()));
  PSHARD_ASSIGN_OR_RETURN(uint64_t n_ctx, parse_size(o.ctx_size));
  if (o.schedule_path.empty())
    PSHARD_RETURN_IF_ERROR(open_cpu(o, static_cast<int64_t>(n_ctx), s));
  else
    PSHARD_RETURN_IF_ERROR(open_scheduled(o, static_cast<int64_t>(n_ctx), s));
  return s;
}

namespace {

Result<EncodedImage> encode_one(const std::string& path, const Projector& proj, ImageSession& s) {
  PSHARD_ASSIGN_OR_RETURN(RgbImage img, load_image(path));
  const auto t0 = std::chrono::steady_clock::now();
  PSHARD_ASSIGN_OR_RETURN(VisionInput in, preprocess_image(img, proj.hparams()));
  EncodedImage e;
  if (s.schedule) {
    // The phases share the device memory in time: the language arena goes first.
    PSHARD_RETURN_IF_ERROR(s.hybrid->release_device());
    const VisionPhaseInputs vi{*s.schedule, proj, in, s.hybrid->budget(), s.device.get(), *s.pool};
    PSHARD_ASSIGN_OR_RETURN(VisionPhaseResult r, run_vision_phase(vi));
    e.embeddings = std::move(r.embeddings);
    e.phase = r.stats;
  } else {
    PSHARD_ASSIGN_OR_RETURN(e.embeddings, encode_image(proj, in, *s.pool));
  }
  e.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  e.width = img.width;
  e.height = img.height;
  e.input_width = in.width;
  e.input_height = in.height;
  return e;
}

void write_phase_json(JsonWriter& j, const VisionPhaseStats& v) {
  j.key("vision_phase").begin_object();
  j.key("strategy").value(v.strategy);
  j.key("budget_bytes").value(v.budget_bytes);
  j.key("tier").value(v.tier);
  j.key("tier_name").value(v.tier_name);
  j.key("patches").value(v.patches);
  j.key("attention_tile").value(v.attention_tile);
  j.key("resident").value(int64_t{v.resident});
  j.key("streamed").value(int64_t{v.streamed});
  j.key("cpu").value(int64_t{v.on_cpu});
  j.key("predicted_ms").value(v.predicted_ms);
  j.key("measured_ms").value(v.measured_ms);
  j.key("arena_bytes").value(v.arena_bytes);
  j.key("peak_device_bytes").value(v.peak_device_bytes);
  j.key("bytes_streamed").value(v.bytes_streamed);
  j.key("bytes_uploaded").value(v.bytes_uploaded);
  j.key("note").value(v.note);
  j.end_object();
}

} // namespace

Result<std::vector<EncodedImage>> encode_image_files(const RunOptions& o, ImageSession& s) {
  PSHARD_ASSIGN_OR_RETURN(auto proj, Projector::open(o.mmproj_path));
  PSHARD_RETURN_IF_ERROR(proj->set_image_tokens(o.image_min_tokens, o.image_max_tokens));
  PSHARD_RETURN_IF_ERROR(
      proj->check_language_model(s.model->hparams().n_embd, s.model->hparams().n_deepstack));
  if (s.schedule) // before the images are read: a schedule for another projector is refused
    PSHARD_RETURN_IF_ERROR(s.schedule->check_projector(proj->file()));
  std::vector<EncodedImage> out;
  for (const std::string& path : o.image_paths) {
    Result<EncodedImage> e = encode_one(path, *proj, s);
    if (!e.ok())
      return o.image_paths.size() > 1 ? e.status().with_context("--image " + path) : e.status();
    out.push_back(std::move(e).value());
  }
  return out;
}

uint64_t image_session_peak_bytes(const ImageSession& s, std::span<const EncodedImage> imgs) {
  if (const auto* emu = dynamic_cast<const EmuDevice*>(s.device.get()))
    return emu->peak_allocated_bytes();
  uint64_t peak = s.hybrid ? s.hybrid->stats().peak_device_bytes : 0;
  for (const EncodedImage& img : imgs)
    peak = std::max(peak, img.phase ? img.phase->peak_device_bytes : 0);
  return peak;
}

void write_image_session_stats(std::ostream& err, const ImageSession& s,
                               std::span<const EncodedImage> imgs) {
  for (size_t i = 0; i < imgs.size(); ++i) {
    const EncodedImage& img = imgs[i];
    err << "image " << i << ":     " << img.width << " x " << img.height << " pixels -> "
        << img.input_width << " x " << img.input_height << ", " << img.embeddings.tokens_x << " x "
        << img.embeddings.tokens_y << " image tokens at " << img.position << ", encoded in "
        << img.ms << " ms\n";
    if (!img.phase)
      continue;
    const VisionPhaseStats& v = *img.phase;
    err << "vision plan: " << v.strategy << ", budget " << (v.budget_bytes >> 20) << " MiB, tier "
        << v.tier_name << " (" << v.tier << " patches; image " << v.patches << "), " << v.resident
        << " resident / " << v.streamed << " streamed / " << v.on_cpu
        << " cpu sub-layers, attention tile " << v.attention_tile << "\n"
        << "vision phase: predicted " << v.predicted_ms << " ms, measured " << v.measured_ms
        << " ms, arena " << v.peak_device_bytes << " B (planned " << v.arena_bytes << " B), "
        << v.bytes_streamed << " B streamed, " << v.bytes_uploaded << " B uploaded\n";
    if (!v.note.empty())
      err << "vision note: " << v.note << "\n";
  }
  if (!s.hybrid)
    return;
  const SessionStats& l = s.hybrid->stats();
  for (const PlanUse& p : l.plans)
    err << "plan:        " << p.strategy << ", budget " << (p.budget_bytes >> 20) << " MiB, tier "
        << p.tier << ": " << p.passes << " passes, predicted " << p.predicted_ms_total
        << " ms, measured " << p.measured_ms_total << " ms\n";
  err << "peak VRAM:   " << image_session_peak_bytes(s, imgs) << " B (language phase "
      << l.peak_device_bytes << " B)\n";
}

void write_image_session_json(JsonWriter& j, const ImageSession& s,
                              std::span<const EncodedImage> imgs) {
  j.key("images").begin_array();
  for (const EncodedImage& img : imgs) {
    j.begin_object();
    j.key("width").value(img.width);
    j.key("height").value(img.height);
    j.key("input_width").value(img.input_width);
    j.key("input_height").value(img.input_height);
    j.key("tokens_x").value(img.embeddings.tokens_x);
    j.key("tokens_y").value(img.embeddings.tokens_y);
    j.key("position").value(img.position);
    j.key("encode_ms").value(img.ms);
    if (img.phase)
      write_phase_json(j, *img.phase);
    j.end_object();
  }
  j.end_array();
  if (!s.hybrid)
    return;
  const SessionStats& l = s.hybrid->stats();
  j.key("language_phase").begin_object();
  j.key("peak_device_bytes").value(l.peak_device_bytes);
  j.key("passes").value(l.passes);
  j.key("plans").begin_array();
  for (const PlanUse& p : l.plans) {
    j.begin_object();
    j.key("strategy").value(p.strategy);
    j.key("budget_bytes").value(p.budget_bytes);
    j.key("tier").value(p.tier);
    j.key("passes").value(p.passes);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.key("peak_device_bytes").value(image_session_peak_bytes(s, imgs));
}

} // namespace pshard
