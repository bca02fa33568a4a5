#include "tools/pshard-run/prompt_cache.h"

#include "tools/common/capi_call.h"

#include <algorithm>
#include <filesystem>

namespace pshard {
namespace {

// The saved tokens, the context then holding them; none when there is no file yet.
Result<std::vector<pshard_token>> load(pshard_context* ctx, const std::string& path,
                                       size_t capacity) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return std::vector<pshard_token>{};
  std::vector<pshard_token> tokens(capacity);
  size_t n = 0;
  pshard_status st =
      pshard_context_state_load_file(ctx, path.c_str(), tokens.data(), tokens.size(), &n);
  if (st == PSHARD_ERROR_OUT_OF_RANGE && n > tokens.size()) { // a longer prompt's state
    tokens.resize(n);
    st = pshard_context_state_load_file(ctx, path.c_str(), tokens.data(), tokens.size(), &n);
  }
  if (st != PSHARD_OK) {
    const Status why = last_error(st);
    return Status(why.code(),
                  "--prompt-cache: " + why.message() + " (delete the file, or give another path)");
  }
  tokens.resize(n);
  return tokens;
}

} // namespace

Result<size_t> use_prompt_cache(pshard_context* ctx, const std::vector<pshard_token>& prompt,
                                const RunOptions& o, std::ostream& err) {
  const std::string& path = o.prompt_cache;
  PSHARD_ASSIGN_OR_RETURN(std::vector<pshard_token> saved, load(ctx, path, prompt.size()));
  // The last prompt token is always fed by generation, for its logits.
  const size_t most = prompt.empty() ? 0 : prompt.size() - 1;
  const auto differ = std::mismatch(saved.begin(), saved.end(), prompt.begin(), prompt.end());
  size_t keep = std::min<size_t>(differ.first - saved.begin(), most);
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

} // namespace pshard
