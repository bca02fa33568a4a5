// pshard-server's options, with llama-server's flag names.
#pragma once

#include "runtime/generate/draft_model.h"
#include "runtime/model/hparam_overrides.h"
#include "runtime/sampler/sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pshard::server {

struct ServerOptions {
  std::string model_path;       // -m
  std::string schedule_path;    // -s: a *.pshard artifact; empty: everything on the CPU
  std::string mmproj_path;      // --mmproj: a vision projector; chat messages may hold images
  int32_t image_min_tokens = 0; // --image-min-tokens / --image-max-tokens (0: the projector's
  int32_t image_max_tokens = 0; // cap on an image's longer side)
  int32_t max_images = 16;      // --max-images: images a request may hold at most
  std::string backend = "auto"; // auto: emu with a schedule, else cpu
  std::string vram;             // --vram: a size; empty: the schedule's largest budget
  double emu_pcie_gbps = 0;     // 0: what the schedule was planned with
  std::string ctx_size = "0";   // -c: positions per sequence; 0: the model's, at most 4096
  int32_t n_parallel = 4;       // -np: sequences decoded together
  int32_t n_queue = 64;         // --queue: requests waiting for a slot; more get 503
  int64_t n_batch = 256;        // -b: tokens one pass carries at most
  int32_t n_threads = 0;        // -t: CPU threads (0: all)
  bool no_mmap = false;
  bool no_prefix_cache = false; // --no-prefix-cache: every prompt decoded whole
  bool swa_full = false;        // --swa-full: sliding-window layers keep every position
  int32_t draft_max = 0;        // --draft-max: speculative decoding by prompt lookup
  std::string draft_model_path; // -md: drafts from this model instead (16 unless --draft-max)
  float draft_p_min = kDefaultDraftPMin;  // --draft-p-min
  std::string cache_type_k, cache_type_v; // -ctk / -ctv: KV cache types ("": the default)
  RopeFlags rope; // --rope-scaling, --rope-scale, --yarn-*: the file's rope keys
  std::vector<std::string> override_kv; // --override-kv KEY=TYPE:VALUE
  std::vector<std::string> lora, lora_scaled; // --lora FNAME, --lora-scaled FNAME SCALE
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;       // --api-key: required as "Authorization: Bearer KEY"
  // The model's names in the API (-a, repeated or comma-separated): the first is its id
  // in answers; requests may name any (clients that ask for models of their own names,
  // e.g. Anthropic's tools naming several). Default: the file's stem.
  std::vector<std::string> aliases;
  std::string chat_template; // --chat-template NAME; empty: the model's own
  int http_threads = 0;      // 0: enough for every slot and queued request
  std::string budget_file;   // --budget-file: SIGHUP reads the VRAM budget from it
  std::string pooling;       // --pooling: /v1/embeddings' mean, cls or last; empty: the model's
  std::string reasoning_format = "deepseek"; // --reasoning-format: none, deepseek (auto)
  // llama-server's sampling flags (--temp, --top-k, ..., --samplers): what a request does
  // not say. dry_breakers: --dry-sequence-breaker unescaped (main fills it; nullopt: the
  // defaults).
  SamplerParams sampling;
  int64_t seed = -1; // --seed: a request's that gives none; -1: random each time
  int64_t n_predict = -1; // -n: a request's tokens at most, and its default; -1: no cap
  std::vector<std::string> dry_breaker_args;
  std::optional<std::vector<std::string>> dry_breakers;
};

} // namespace pshard::server
