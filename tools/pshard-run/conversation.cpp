#include "tools/pshard-run/conversation.h"

#include "runtime/core/file_bytes.h"
#include "tools/pshard-run/run_session.h"

#include <algorithm>
#include <optional>

namespace pshard {
namespace {

constexpr std::string_view kSpace = " \t\n\v\f\r";
// A photo's file is far smaller; anything larger is not read whole.
constexpr uint64_t kMaxImageFileBytes = uint64_t{1} << 30;

std::string_view trimmed(std::string_view s) {
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos)
    return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

bool only_space(std::string_view s) {
  return s.find_first_not_of(kSpace) == std::string_view::npos;
}

// llama.cpp's media marker: pshard_context_generate_with_images puts the i-th image at the
// prompt's i-th.
constexpr std::string_view kMediaMarker = "<__media__>";

} // namespace

struct Conversation::Streamed {
  std::string text;
  std::vector<pshard_token> tokens;
  std::ostream* out;

  static bool on_token(const pshard_token_event* e, void* user) {
    auto* a = static_cast<Streamed*>(user);
    if (e->token >= 0)
      a->tokens.push_back(e->token);
    a->text.append(e->text, e->text_len);
    a->out->write(e->text, static_cast<std::streamsize>(e->text_len)).flush();
    return true;
  }
};

Conversation::Conversation(pshard_model* model, pshard_context* context, std::string template_name)
    : model_(model), context_(context), template_(std::move(template_name)) {}

Result<std::string> Conversation::check_template() const {
  if (!template_.empty()) {
    size_t len = 0;
    PSHARD_C_CALL(pshard_chat_apply_template(nullptr, template_.c_str(), nullptr, 0, false, nullptr,
                                             0, &len));
    return template_;
  }
  const char* detected = nullptr;
  PSHARD_C_CALL(pshard_model_chat_template(model_, &detected));
  return std::string(detected);
}

void Conversation::add(std::string role, std::string content) {
  messages_.emplace_back(std::move(role), std::move(content));
}

Status Conversation::attach(ImageHandle image) {
  if (!pshard_model_has_vision(model_))
    return invalid_argument("the model was loaded without a vision projector, so it reads no "
                            "images: give its projector file (mmproj GGUF) with --mmproj");
  images_.push_back(std::move(image));
  ++attached_;
  return Status::ok_status();
}

void Conversation::clear() {
  std::erase_if(messages_, [](const auto& m) { return m.first != "system"; });
  images_.clear();
  attached_ = 0;
  fed_prompt_.clear();
  answer_.clear();
  pending_.clear();
  tokens_.clear();
  pshard_context_reset(context_);
}

Result<std::vector<pshard_token>>
Conversation::answer(std::string user, const pshard_generate_params& gp, std::ostream& out) {
  std::string content;
  for (; attached_ > 0; --attached_)
    content += kMediaMarker;
  add("user", content + user);
  PSHARD_ASSIGN_OR_RETURN(std::string prompt, render(/*add_assistant=*/true));
  Streamed a{"", {}, &out};
  result_ = pshard_generate_result_init();
  PSHARD_RETURN_IF_ERROR(images_.empty() ? decode_text(prompt, gp, a)
                                         : decode_with_images(prompt, gp, a));
  out << "\n" << std::flush;
  // A generation prompt that opens the thought (chatml-thinking, ...): the answer goes on
  // from it, and is kept with it, so the next rendering still begins with what the
  // context holds.
  constexpr std::string_view kOpened = "<think>\n";
  if (prompt.ends_with(kOpened)) {
    prompt.resize(prompt.size() - kOpened.size());
    a.text.insert(0, kOpened);
  }
  // Harmony (gpt-oss): an answer is kept as its final channel's text, as the template
  // writes earlier answers (their analysis dropped; the context is then read anew).
  constexpr std::string_view kFinal = "<|channel|>final<|message|>";
  if (const size_t at = a.text.rfind(kFinal); at != std::string::npos)
    a.text.erase(0, at + kFinal.size());
  fed_prompt_ = std::move(prompt);
  answer_ = a.text;
  add("assistant", std::move(a.text));
  return std::move(a.tokens);
}

// The context's own sequence: only what it does not hold yet is fed.
Status Conversation::decode_text(const std::string& prompt, const pshard_generate_params& gp,
                                 Streamed& a) {
  PSHARD_ASSIGN_OR_RETURN(std::vector<pshard_token> feed, tokens_to_feed(prompt));
  const int64_t n_ctx = pshard_context_n_ctx(context_);
  const int64_t before = pshard_context_n_past(context_);
  if (before + static_cast<int64_t>(feed.size()) >= n_ctx)
    return out_of_range("the conversation has filled the context of " + std::to_string(n_ctx) +
                        " tokens; start again with a larger -c");
  // What the context holds already: the penalties' window and the drafts (prompt lookup,
  // a draft model) see the whole conversation, as if it were decoded now.
  pshard_generate_params with_held = gp;
  with_held.held = tokens_.data();
  with_held.n_held = tokens_.size();
  PSHARD_C_CALL(pshard_context_generate(context_, feed.data(), feed.size(), &with_held,
                                        Streamed::on_token, &a, &result_));
  const int64_t decoded =
      pshard_context_n_past(context_) - before - static_cast<int64_t>(feed.size());
  pending_.assign(a.tokens.begin() + std::clamp<int64_t>(decoded, 0, a.tokens.size()),
                  a.tokens.end());
  tokens_.insert(tokens_.end(), feed.begin(), feed.end());
  tokens_.insert(tokens_.end(), a.tokens.begin(), a.tokens.end());
  return Status::ok_status();
}

// The whole conversation and its images: the context's kept image sequence holds the
// last turn, so only the rest is decoded.
Status Conversation::decode_with_images(const std::string& prompt, const pshard_generate_params& gp,
                                        Streamed& a) {
  if (!tokens_.empty()) { // the text turns before the first image are read again with it
    pshard_context_reset(context_);
    tokens_.clear();
    pending_.clear();
  }
  std::vector<const pshard_image*> shown;
  for (const ImageHandle& image : images_)
    shown.push_back(image.get());
  PSHARD_C_CALL(pshard_context_generate_with_images(context_, prompt.data(), prompt.size(),
                                                    shown.data(), shown.size(), nullptr, &gp,
                                                    Streamed::on_token, &a, &result_));
  return Status::ok_status();
}

Result<std::string> Conversation::render(bool add_assistant) const {
  std::vector<pshard_chat_message> chat;
  for (const auto& [role, content] : messages_)
    chat.push_back({role.c_str(), content.c_str()});
  const char* name = template_.empty() ? nullptr : template_.c_str();
  size_t len = 0;
  PSHARD_C_CALL(pshard_chat_apply_template(model_, name, chat.data(), chat.size(), add_assistant,
                                           nullptr, 0, &len));
  std::string text(len, '\0');
  PSHARD_C_CALL(pshard_chat_apply_template(model_, name, chat.data(), chat.size(), add_assistant,
                                           text.data(), len, &len));
  return text;
}

Result<std::vector<pshard_token>> Conversation::tokenize(std::string_view text,
                                                         bool add_bos) const {
  return tokens_from(text.size() + 8, [&](pshard_token* ids, size_t cap, size_t* n) {
    return pshard_model_tokenize(model_, text.data(), text.size(), add_bos, ids, cap, n);
  });
}

// Where the last answer ends in `prompt`, the whole conversation rendered anew: after
// the previous prompt, past the answer as the template wrote it (trimmed or not).
std::optional<size_t> Conversation::end_of_answer(const std::string& prompt) const {
  if (prompt.compare(0, fed_prompt_.size(), fed_prompt_) != 0)
    return std::nullopt;
  const std::string_view core = trimmed(answer_);
  const size_t at = prompt.find(core, fed_prompt_.size());
  if (at == std::string::npos ||
      !only_space(std::string_view(prompt).substr(fed_prompt_.size(), at - fed_prompt_.size())))
    return std::nullopt;
  size_t end = at + core.size();
  const size_t last = answer_.find_last_not_of(kSpace);
  const std::string_view tail =
      last == std::string::npos ? std::string_view() : std::string_view(answer_).substr(last + 1);
  if (prompt.compare(end, tail.size(), tail) == 0) // the template kept the answer's tail
    end += tail.size();
  return end;
}

Result<std::vector<pshard_token>> Conversation::tokens_to_feed(const std::string& prompt) {
  const std::optional<size_t> end = tokens_.empty() ? std::nullopt : end_of_answer(prompt);
  if (!end) {
    // The first turn, or the template rewrote what the context holds: read it all anew.
    pshard_context_reset(context_);
    pending_.clear();
    tokens_.clear();
    return tokenize(prompt, pshard_model_add_bos_by_default(model_));
  }
  PSHARD_ASSIGN_OR_RETURN(std::vector<pshard_token> rest,
                          tokenize(std::string_view(prompt).substr(*end), false));
  // tokens() lists the pending ones already; answer() appends them again with the feed.
  tokens_.resize(tokens_.size() - pending_.size());
  std::vector<pshard_token> feed = std::move(pending_);
  pending_.clear();
  feed.insert(feed.end(), rest.begin(), rest.end());
  return feed;
}

namespace {

Result<ImageHandle> read_image(const std::string& path) {
  std::vector<uint8_t> bytes;
  PSHARD_RETURN_IF_ERROR(read_whole_file(path, kMaxImageFileBytes, "image file", &bytes));
  pshard_image* image = nullptr;
  if (pshard_image_from_bytes(bytes.data(), bytes.size(), &image) != PSHARD_OK)
    return invalid_argument("'" + path + "' is not an image pshard reads: " + pshard_last_error());
  return ImageHandle(image);
}

Status attach_file(Conversation& chat, const std::string& path, std::ostream& err) {
  PSHARD_ASSIGN_OR_RETURN(ImageHandle image, read_image(path));
  const int32_t width = pshard_image_width(image.get()), height = pshard_image_height(image.get());
  PSHARD_RETURN_IF_ERROR(chat.attach(std::move(image)));
  err << "image " << path << " (" << width << "x" << height << ") goes with the next message\n";
  return Status::ok_status();
}

// A line that is a command: "/image PATH", "/clear". nullopt: a message.
std::optional<Status> run_command(Conversation& chat, std::string_view line, std::ostream& err) {
  constexpr std::string_view kImage = "/image";
  const std::string_view word = line.substr(0, line.find_first_of(kSpace));
  if (word == "/clear") {
    chat.clear();
    err << "the conversation starts over\n";
    return Status::ok_status();
  }
  if (word != kImage)
    return std::nullopt;
  const std::string path(trimmed(line.substr(kImage.size())));
  if (path.empty())
    return invalid_argument("/image needs a file: /image PATH");
  return attach_file(chat, path, err);
}

} // namespace

Status run_conversation(const RunOptions& o, std::istream& in, std::ostream& out, std::ostream& err,
                        bool interactive) {
  PSHARD_ASSIGN_OR_RETURN(RunResult r, start_session(o));
  Conversation chat(r.model.get(), r.context.get(), o.chat_template);
  PSHARD_ASSIGN_OR_RETURN(const std::string name, chat.check_template());
  err << "chat template " << name << "; one message a line, end with EOF (Ctrl-D)";
  if (pshard_model_has_vision(r.model.get()))
    err << "; /image PATH shows the next message an image";
  err << "\n";
  if (!o.system_prompt.empty())
    chat.add("system", o.system_prompt);
  for (const std::string& path : o.image_paths) // --image: the first message's
    PSHARD_RETURN_IF_ERROR(attach_file(chat, path, err));
  std::string line;
  for (uint64_t turn = 0;; ++turn) {
    if (interactive)
      out << "> " << std::flush;
    if (!std::getline(in, line))
      break;
    if (only_space(line))
      continue;
    if (std::optional<Status> done = run_command(chat, trimmed(line), err)) {
      if (done->ok())
        continue;
      if (!interactive)
        return *done;
      err << "pshard-run: " << done->to_string() << "\n";
      continue;
    }
    // Each turn samples with its own seed, so answers to the same words can differ.
    PSHARD_RETURN_IF_ERROR(chat.answer(line, generate_params(o, r.seed + turn), out).status());
  }
  if (interactive)
    out << "\n";
  return Status::ok_status();
}

} // namespace pshard
