// The C API's handles and error plumbing (not installed; pshard.h is the interface).
#pragma once

#include "pshard/pshard.h"
#include "runtime/backends/device_factory.h"
#include "runtime/capi/encoded_image_cache.h"
#include "runtime/device/device.h"
#include "runtime/executor/hybrid_session.h"
#include "runtime/executor/timeline.h"
#include "runtime/generate/draft_model.h"
#include "runtime/grammar/token_grammar.h"
#include "runtime/model/model.h"
#include "runtime/sampler/sampler.h"
#include "runtime/schedule/schedule_file.h"
#include "runtime/serve/request.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/vision/image.h"
#include "runtime/vision/image_prompt_text.h"
#include "runtime/vision/projector.h"
#include "runtime/vision/vision_encoder.h"

#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

struct pshard_model {
  std::unique_ptr<pshard::Model> model;
  std::unique_ptr<pshard::Tokenizer> tokenizer;
  std::optional<pshard::Schedule> schedule;
  std::unique_ptr<pshard::Projector> projector; // pshard_model_params.mmproj_path, or null
  std::string load_warnings;                    // pshard_model_load_warnings(): one per line
  std::optional<std::string> rerank_template;   // tokenizer.chat_template.rerank
  // The vocabulary as a trie for grammars, built on first use (any thread).
  mutable std::once_flag token_trie_once;
  mutable std::shared_ptr<const pshard::TokenTrie> token_trie;
  // The tokens holding a default DRY sequence breaker, found on first use (any thread).
  mutable std::once_flag dry_breakers_once;
  mutable std::shared_ptr<const std::vector<bool>> default_dry_breakers;
};

struct pshard_image {
  pshard::RgbImage rgb;
};

struct pshard_context {
  pshard_model* model = nullptr;
  pshard_context_params params{};         // as created (image prompts size their session by it)
  std::unique_ptr<pshard::Device> device; // null on the cpu backend
  std::unique_ptr<pshard::HybridSession> session;
  std::unique_ptr<pshard::Timeline> timeline;
  // Images of earlier image prompts, so a conversation's turns do not encode them again.
  pshard::capi::EncodedImageCache images{pshard::capi::kEncodedImageCacheBytes};
  // The last image prompt's sequence (params.keep_image_sequence), its device memory
  // released, and what it holds by prefix-cache names (runtime/batch/cache_key.h): text
  // its tokens, an image's rows their image_row_key.
  std::unique_ptr<pshard::HybridSession> image_session;
  std::vector<pshard::TokenId> image_names;
  // pshard_context_params.draft_model's session on the CPU, and the drafter over it.
  std::unique_ptr<pshard::CpuSession> draft_session;
  std::unique_ptr<pshard::ModelDrafter> drafter;
};

namespace pshard::capi {

// pshard_embed_params read over the defaults and checked, the pooling resolved (the
// model's when PSHARD_POOLING_MODEL): what an embedding request runs with.
Result<RequestParams::Embedding> embedding_request(const pshard_model& model,
                                                   const pshard_embed_params& params);

// A draft model for `target` (pshard_context_params.draft_model, pshard_batch_params.
// draft_model): kInvalidArgument unless its vocabulary is the target's and 0 <= p_min <= 1;
// kUnsupported for a draft model with recurrent layers.
Status check_draft_model(const pshard_model& target, const pshard_model& draft, float p_min);

// Records the failure for pshard_last_error() and returns its code.
pshard_status fail(const Status& status);
pshard_status ok();
const char* last_error_message();
// The NULL-argument check every entry point does first.
pshard_status null_argument(const char* function, const char* argument);
// pshard_model_tokenize(_ex): text -> ids into the caller's buffer.
pshard_status tokenize(const pshard_model& model, const char* text, size_t text_len, bool add_bos,
                       bool parse_special, pshard_token* tokens, size_t capacity, size_t* n_tokens);
// The caller's struct copied over defaults: fields past the caller's `size` keep their
// defaults, so an older caller works against a newer library.
template <typename T> T read_params(const T* in, T defaults) {
  if (in) {
    const size_t n = in->size < sizeof(T) ? in->size : sizeof(T);
    std::memcpy(static_cast<void*>(&defaults), in, n);
    defaults.size = sizeof(T);
  }
  return defaults;
}
// Writes `value` into the caller's struct up to its `size`.
template <typename T> void write_out(T* out, T value) {
  const size_t n = out->size < sizeof(T) ? out->size : sizeof(T);
  value.size = out->size;
  std::memcpy(static_cast<void*>(out), &value, n);
}

// The device of a backend (null for cpu), sized and linked after the context params
// and the schedule the model carries.
Result<std::unique_ptr<Device>> make_device(const pshard_context_params& p, const pshard_model& m);
Result<DeviceBackend> device_backend(pshard_backend backend);

// What contexts and batches share: the device fields of their params (backend,
// vram_budget, emu_*) and their defaults.
template <typename P> void set_device_defaults(P& p) {
  p.backend = PSHARD_BACKEND_CPU;
  p.n_batch = 256;
  p.emu_pcie_latency_us = 10;
  p.emu_compute_threads = 1;
}
template <typename P> Result<DeviceOptions> device_options(const P& p) {
  DeviceOptions o;
  PSHARD_ASSIGN_OR_RETURN(o.backend, device_backend(p.backend));
  o.vram_budget = p.vram_budget;
  o.emu_pcie_gbps = p.emu_pcie_gbps;
  o.emu_pcie_latency_us = p.emu_pcie_latency_us;
  o.emu_memory_bytes = p.emu_memory_bytes;
  o.emu_compute_threads = p.emu_compute_threads;
  return o;
}

// One plan's use as the C API reports it (`strategy` is the caller's to point at storage
// that outlives the call).
pshard_plan_stats plan_stats(const PlanUse& u);

// The sampler's part of the generation params: its parameters and the filter of their
// grammar or JSON schema (null when none). `function` names the caller in errors (a
// logit_bias count without its array).
struct Sampling {
  SamplerParams params;
  std::shared_ptr<TokenFilter> filter;
};
Result<Sampling> sampling(const pshard_model& model, const pshard_generate_params& p,
                          const char* function);
// A fresh filter for the params' grammar or JSON schema (capi_grammar.cpp); null when
// they name neither.
Result<std::shared_ptr<TokenFilter>> token_filter(const pshard_model& model,
                                                  const pshard_generate_params& p);

// A context's session parameters (capi_context.cpp); kInvalidArgument for a KV type that
// is none.
Result<HybridParams> hybrid_params(const pshard_context_params& p);
// The KV cache types of a context's or a batch's params: unset for PSHARD_KV_DEFAULT,
// kInvalidArgument for a value that is no KV cache type.
Status read_kv_types(pshard_kv_type k, pshard_kv_type v, std::optional<TensorType>& out_k,
                     std::optional<TensorType>& out_v);

// How a prompt's image becomes embeddings: on the host (the default), or by a schedule's
// vision phase on the context's device.
using ImageEncoder = std::function<Result<ImageEmbeddings>(const VisionInput&)>;

// A text prompt with its images (capi_image.cpp), ready for an image-prompt decoder or a
// request: the ids with placeholders at each image, and the images' embeddings in order
// (with a cache, each image's encoded_image_key in `keys`).
struct ImagePrompt {
  ImagePromptIds ids;
  std::vector<ImageEmbeddings> images;
  std::vector<uint64_t> keys;
};
// Errors: no projector, NULL images, places and images that differ in number. With a
// cache (a batch's), an image encoded before is taken from it, one encoded now goes in.
Result<ImagePrompt> prepare_image_prompt(const pshard_model& model, std::string_view text,
                                         const pshard_image* const* images, size_t n_images,
                                         bool add_special, bool parse_special, int32_t n_threads,
                                         const ImageEncoder& encoder = nullptr,
                                         EncodedImageCache* cache = nullptr);

} // namespace pshard::capi
