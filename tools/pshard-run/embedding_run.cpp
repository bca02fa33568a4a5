#include "tools/pshard-run/embedding_run.h"

#include "runtime/model/pooling.h"
#include "tools/common/json_writer.h"
#include "tools/pshard-run/run_session.h"

#include <cstdio>

namespace pshard {
namespace {

Result<pshard_embed_params> embed_params(const RunOptions& o) {
  pshard_embed_params p = pshard_embed_default_params();
  if (!o.pooling.empty()) {
    PSHARD_ASSIGN_OR_RETURN(Pooling pooling, parse_pooling(o.pooling));
    p.pooling = static_cast<pshard_pooling>(pooling);
  }
  if (o.embd_normalize != 2 && o.embd_normalize != -1)
    return invalid_argument("--embd-normalize " + std::to_string(o.embd_normalize) +
                            ": pshard normalizes to unit Euclidean length (2) or not at all (-1)");
  p.normalize = o.embd_normalize == 2;
  p.dimensions = o.dimensions;
  return p;
}

void write_text(std::ostream& out, const std::vector<float>& v, size_t width) {
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v[i])); // round-trips a float
    out << buf << ((i + 1) % width == 0 ? "\n" : " ");
  }
}

void write_json(std::ostream& out, const std::vector<float>& v, size_t width, size_t n_tokens,
                const char* pooling) {
  JsonWriter j(out);
  j.begin_object();
  j.key("n_tokens").value(static_cast<int64_t>(n_tokens));
  j.key("pooling").value(pooling);
  j.key("dimensions").value(static_cast<int64_t>(width));
  j.key("embedding");
  const bool rows = v.size() > width; // --pooling none: one row per token
  if (rows)
    j.begin_array();
  for (size_t r = 0; r < v.size(); r += width) {
    j.begin_array(/*inline_items=*/true);
    for (size_t i = r; i < r + width; ++i)
      j.value(static_cast<double>(v[i]));
    j.end_array();
  }
  if (rows)
    j.end_array();
  j.end_object();
  out << "\n";
}

// The texts of the prompt, split at every `separator` ("": the whole prompt), as
// llama-embedding splits it; empty pieces are skipped.
std::vector<std::string> split_texts(const std::string& prompt, const std::string& separator) {
  if (separator.empty())
    return {prompt};
  std::vector<std::string> texts;
  for (size_t at = 0; at <= prompt.size();) {
    size_t end = prompt.find(separator, at);
    if (end == std::string::npos)
      end = prompt.size();
    if (end > at)
      texts.push_back(prompt.substr(at, end - at));
    at = end + separator.size();
  }
  return texts;
}

Status embed_one(const RunOptions& o, const pshard_embed_params& p, RunResult& r,
                 const std::string& text, std::ostream& out) {
  pshard_model* model = r.model.get();
  const pshard_pooling used =
      p.pooling == PSHARD_POOLING_MODEL ? pshard_model_pooling(model) : p.pooling;
  // A reranker's "QUERY<TAB>DOCUMENT": the two as it scores them (its prompt, or an
  // encoder's framed pair).
  const size_t tab = text.find('\t');
  pshard_tokenize_params tp = pshard_tokenize_default_params();
  tp.parse_special = o.parse_special;
  PSHARD_ASSIGN_OR_RETURN(const std::vector<pshard_token> tokens,
                          used == PSHARD_POOLING_RANK && tab != std::string::npos
                              ? rerank_tokens(model, std::string_view(text).substr(0, tab),
                                              std::string_view(text).substr(tab + 1))
                              : tokenize_text(model, text, tp));
  const size_t n = tokens.size();
  const auto n_embd = static_cast<size_t>(pshard_model_n_embd(model));
  const size_t width = used == PSHARD_POOLING_RANK
                           ? static_cast<size_t>(pshard_model_n_cls_labels(model))
                       : p.dimensions > 0 ? static_cast<size_t>(p.dimensions)
                                          : n_embd;
  std::vector<float> v(p.pooling == PSHARD_POOLING_NONE ? width * n : width);
  size_t got = 0;
  PSHARD_C_CALL(pshard_context_embed(r.context.get(), tokens.data(), n, &p, v.data(), v.size(),
                                     &got));
  v.resize(got);
  if (o.json)
    write_json(out, v, width, n, pooling_name(static_cast<Pooling>(used)));
  else
    write_text(out, v, width);
  return Status::ok_status();
}

} // namespace

Status run_embedding(const RunOptions& o, const std::string& prompt_text, std::ostream& out) {
  PSHARD_ASSIGN_OR_RETURN(pshard_embed_params p, embed_params(o));
  const std::vector<std::string> texts = split_texts(prompt_text, o.embd_separator);
  if (texts.empty())
    return invalid_argument("the prompt holds no text to embed (only --embd-separator \"" +
                            o.embd_separator + "\"); give text with -p or -f");
  PSHARD_ASSIGN_OR_RETURN(RunResult r, start_session(o));
  if (p.pooling == PSHARD_POOLING_MODEL &&
      pshard_model_pooling(r.model.get()) == PSHARD_POOLING_MODEL)
    return invalid_argument("the model names no pooling (its pooling_type: it is not an "
                            "embedding model); choose one with --pooling mean|cls|last|none");
  // Several texts: a JSON array of the one-text objects; as text, a blank line between.
  const bool many = texts.size() > 1;
  if (many && o.json)
    out << "[\n";
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i > 0)
      out << (o.json ? ",\n" : "\n");
    PSHARD_RETURN_IF_ERROR(embed_one(o, p, r, texts[i], out));
  }
  if (many && o.json)
    out << "]\n";
  return Status::ok_status();
}

} // namespace pshard
