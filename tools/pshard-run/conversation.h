// pshard-run --conversation (-cnv): chat with a model on stdin/stdout, llama-cli style.
// Each line read is a user message; the conversation is rendered with the model's chat
// template (or --chat-template NAME), only the part the context does not hold yet is
// tokenized and decoded — the KV cache carries the conversation from turn to turn — and
// the answer streams to stdout until the model ends its turn (or -n tokens), followed by
// a newline. EOF ends the conversation cleanly.
//
// Commands, as llama-mtmd-cli reads them: "/image PATH" attaches an image (a model loaded
// with --mmproj) to the next message, its place before the message's text; "/clear"
// starts the conversation over (the system message kept). Once the conversation holds an
// image, each turn is the whole conversation with its images through
// pshard_context_generate_with_images, whose kept image sequence decodes only what the
// last turn did not hold (earlier images are neither encoded nor decoded again).
//
//   printf 'Hi\nTell me more\n' | pshard-run -m model.gguf -cnv -sys "Be brief." --temp 0
//   printf '/image cat.png\nWhat is it?\nAnd its colour?\n' |
//     pshard-run -m qwen2vl.gguf --mmproj mmproj.gguf -cnv --temp 0
#pragma once

#include "pshard/pshard.h"
#include "runtime/core/status.h"
#include "tools/common/capi_call.h"
#include "tools/pshard-run/run_options.h"

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace pshard {

// The chat so far, and how much of it the context holds. After a turn the context holds
// that turn's rendered prompt (through the generation prompt) and the answer's tokens,
// but the last one when n_predict cut the answer short; what the template writes after
// the answer (its end-of-turn marker) and the next user turn are fed with the next
// message. When the template rewrites what the context holds (rare: a trimmed answer
// whose spaces the context kept), the context is reset and the conversation read anew.
class Conversation {
public:
  // template_name empty: the model's own template.
  Conversation(pshard_model* model, pshard_context* context, std::string template_name);

  // The template's name; an error now, before any input is read, when it is unknown or
  // the model's cannot be recognised.
  Result<std::string> check_template() const;
  void add(std::string role, std::string content);
  // The next user message shows this image (before its text, in the order attached).
  // Fails, attaching nothing, where the model was loaded without a projector.
  Status attach(ImageHandle image);
  // Forgets every message but the system's, and every image.
  void clear();
  // Adds the user's message and streams the model's answer to `out`; returns its tokens.
  Result<std::vector<pshard_token>> answer(std::string user, const pshard_generate_params& gp,
                                           std::ostream& out);
  // Every token of a text conversation so far, in order: what the context holds and the
  // answer's last token when it is still to be fed. Empty once an image is shown.
  const std::vector<pshard_token>& tokens() const { return tokens_; }
  // The last turn's counts (n_cached, n_images_reused, ...).
  const pshard_generate_result& last_result() const { return result_; }

private:
  Result<std::string> render(bool add_assistant) const;
  Result<std::vector<pshard_token>> tokenize(std::string_view text, bool add_bos) const;
  std::optional<size_t> end_of_answer(const std::string& prompt) const;
  Result<std::vector<pshard_token>> tokens_to_feed(const std::string& prompt);
  struct Streamed; // the answer as it streams
  Status decode_text(const std::string& prompt, const pshard_generate_params& gp, Streamed& a);
  Status decode_with_images(const std::string& prompt, const pshard_generate_params& gp,
                            Streamed& a);

  pshard_model* model_;
  pshard_context* context_;
  std::string template_;
  std::vector<std::pair<std::string, std::string>> messages_;
  std::string fed_prompt_;            // the last turn's rendered prompt, all in the context
  std::string answer_;                // the last answer as generated
  std::vector<pshard_token> pending_; // sampled, not yet decoded
  std::vector<pshard_token> tokens_;
  std::vector<ImageHandle> images_; // shown so far, in order
  size_t attached_ = 0;             // of images_, those the next message shows
  pshard_generate_result result_ = pshard_generate_result_init();
};

// `interactive` prints a "> " prompt before each line (when stdin is a terminal), and a
// command that fails (an image that cannot be read) is reported and the chat goes on;
// piped input stops there with the error.
Status run_conversation(const RunOptions& o, std::istream& in, std::ostream& out, std::ostream& err,
                        bool interactive);

} // namespace pshard
