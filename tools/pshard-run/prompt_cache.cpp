#include "tools/pshard-run/prompt_cache.h"

#include "runtime/generate/draft_model.h"
#include "tools/common/capi_call.h"

#include <algorithm>
#include <filesystem>

namespace pshard {
namespace {

// The saved tokens, the context then holding them (a buffer of `capacity` first, the
// count the file needs next); none when there is no file yet.
Result<std::vector<pshard_token>> load(pshard_context* ctx, const std::string& path,
                                       size_t capacity) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return std::vector<pshard_token>{};
  auto tokens = tokens_from(capacity, [&](pshard_token* ids, size_t cap, size_t* n) {
    return pshard_context_state_load_file(ctx, path.c_str(), ids, cap, n);
  });
  if (!tokens.ok())
    return Status(tokens.status().code(), "--prompt-cache: " + tokens.status().message() +
                                              " (delete the file, or give another path)");
  return tokens;
}

} // namespace

Result<size_t> use_prompt_cache(pshard_context* ctx, const std::vector<pshard_token>& prompt,
                                const RunOptions& o, std::ostream& err) {
  const std::string& path = o.prompt_cache;
  PSHARD_ASSIGN_OR_RETURN(std::vector<pshard_token> saved, load(ctx, path, prompt.size()));
  // The last prompt token is always fed by generation, for its logits.
  const size_t most = prompt.empty() ? 0 : prompt.size() - 1;
  size_t keep = start_to_keep(saved, prompt);
  if (keep < saved.size() && pshard_context_rewind(ctx, static_cast<int64_t>(keep)) != PSHARD_OK) {
    // A sliding window's ring or a recurrent state cannot go back that far.
    pshard_context_reset(ctx);
    keep = 0;
  }
  err << "prompt cache " << path << ": " << keep << " of " << prompt.size()
      << " prompt tokens read from it\n";
  if (keep < most) {
    const float* logits = nullptr;
    PSHARD_C_CALL(pshard_context_decode(ctx, prompt.data() + keep, most - keep, &logits));
  }
  const bool same = saved.size() == most && keep == most;
  if (!o.prompt_cache_ro && !same)
    PSHARD_C_CALL(pshard_context_state_save_file(ctx, path.c_str(), prompt.data(), most));
  return most;
}

Status save_prompt_cache_all(pshard_context* ctx, const std::vector<pshard_token>& prompt,
                             const std::vector<pshard_token>& generated, const RunOptions& o) {
  std::vector<pshard_token> held = prompt;
  held.insert(held.end(), generated.begin(), generated.end());
  const auto n_past = static_cast<size_t>(std::max<int64_t>(0, pshard_context_n_past(ctx)));
  if (n_past > held.size())
    return internal_error("--prompt-cache-all: the context holds " + std::to_string(n_past) +
                          " positions, more than the prompt and answer's " +
                          std::to_string(held.size()));
  PSHARD_C_CALL(
      pshard_context_state_save_file(ctx, o.prompt_cache.c_str(), held.data(), n_past));
  return Status::ok_status();
}

} // namespace pshard
