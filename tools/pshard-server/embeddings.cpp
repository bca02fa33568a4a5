#include "tools/pshard-server/embeddings.h"

#include "tools/pshard-server/base64.h"
#include "tools/pshard-server/openai_request.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>

namespace pshard::server {
namespace {

using nlohmann::json;

constexpr size_t kMaxInputs = 2048; // OpenAI's limit per request

ApiError input_error(const std::string& message, const char* code = "invalid_value") {
  return bad_request(message, "input", code);
}

bool is_id_array(const json& a) {
  for (const json& t : a)
    if (!t.is_number_integer())
      return false;
  return true;
}

std::variant<std::vector<pshard_token>, ApiError> read_ids(const json& a, const std::string& at,
                                                          int32_t n_vocab) {
  std::vector<pshard_token> ids;
  for (const json& t : a) {
    const int64_t id = t.get<int64_t>();
    if (id < 0 || id >= n_vocab)
      return input_error("'" + at + "' holds " + t.dump() + ", not a token id below the " +
                         "vocabulary size " + std::to_string(n_vocab));
    ids.push_back(static_cast<pshard_token>(id));
  }
  return ids;
}

// `input` as token lists: strings tokenized as the model adds special tokens (BOS, and EOS
// where the vocabulary asks for it, as Qwen3-Embedding's does).
std::variant<std::vector<std::vector<pshard_token>>, ApiError> read_inputs(
    const json& body, const ServingEngine& engine) {
  auto it = body.find("input");
  if (it == body.end() || it->is_null())
    return input_error("'input' is required: a string, an array of strings, an array of token "
                       "ids or an array of such arrays",
                       "missing_required_parameter");
  std::vector<const json*> items;
  if (it->is_string() || (it->is_array() && !it->empty() && is_id_array(*it))) {
    items.push_back(&*it);
  } else if (it->is_array() && !it->empty()) {
    for (const json& x : *it)
      items.push_back(&x);
  } else {
    return input_error("'input' must be a string or a non-empty array", "invalid_type");
  }
  if (items.size() > kMaxInputs)
    return input_error("'input' holds " + std::to_string(items.size()) + " inputs; at most " +
                       std::to_string(kMaxInputs) + " a request");
  std::vector<std::vector<pshard_token>> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const json& x = *items[i];
    const std::string at = items.size() == 1 && &x == &*it ? "input" : "input[" + std::to_string(i) + "]";
    if (x.is_string()) {
      if (x.get_ref<const std::string&>().empty())
        return input_error("'" + at + "' is an empty string; every input needs text");
      auto ids = engine.tokenize(x.get_ref<const std::string&>(), true);
      if (!ids.ok())
        return input_error(ids.status().message());
      out.push_back(std::move(*ids));
    } else if (x.is_array() && !x.empty() && is_id_array(x)) {
      auto ids = read_ids(x, at, engine.n_vocab());
      if (auto* e = std::get_if<ApiError>(&ids))
        return *e;
      out.push_back(std::move(std::get<std::vector<pshard_token>>(ids)));
    } else {
      return input_error("'" + at + "' must be a string or a non-empty array of token ids",
                         "invalid_type");
    }
    if (static_cast<int64_t>(out.back().size()) > engine.n_ctx())
      return bad_request("This model's maximum context length is " +
                             std::to_string(engine.n_ctx()) + " tokens. However, '" + at +
                             "' resulted in " + std::to_string(out.back().size()) +
                             " tokens. Please reduce the length.",
                         "input", "context_length_exceeded");
  }
  return out;
}

// What the sequences' callbacks (on the stepping thread) hand to the waiting HTTP thread.
struct Results {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::vector<float>> vectors;
  std::vector<int64_t> n_prompt;
  size_t done = 0;
  std::optional<ApiError> error;
};

struct Slot {
  Results* results;
  size_t index;
};

bool on_event(const pshard_seq_event* e, void* user) {
  auto* slot = static_cast<Slot*>(user);
  if (e->finish == PSHARD_FINISH_NONE)
    return true;
  Results& r = *slot->results;
  {
    std::lock_guard lock(r.mutex);
    if (e->finish == PSHARD_FINISH_STOP) {
      r.vectors[slot->index].assign(e->embedding, e->embedding + e->n_embedding);
      r.n_prompt[slot->index] = e->n_prompt;
    } else if (!r.error) {
      r.error = finish_error(e->finish, e->error, e->error_message ? e->error_message : "");
    }
    ++r.done;
  }
  r.changed.notify_all();
  return true;
}

json embedding_json(const std::vector<float>& v, bool base64) {
  if (!base64)
    return v;
  std::vector<uint8_t> bytes(v.size() * sizeof(float)); // little-endian hosts only (x86, ARM)
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return encode_base64(bytes);
}

} // namespace

std::variant<EmbeddingRequest, ApiError> parse_embeddings(const std::string& text,
                                                          const ServingEngine& engine) {
  auto parsed = parse_for_model(text, engine);
  if (auto* e = std::get_if<ApiError>(&parsed))
    return *e;
  const json& body = std::get<json>(parsed);
  if (engine.pooling() == PSHARD_POOLING_RANK)
    return bad_request("this model is a reranker (its pooling_type is rank): it scores a query "
                       "against documents, POST /v1/rerank; start pshard-server with --pooling "
                       "last for its embeddings",
                       "", "reranker_model");
  if (engine.pooling() == PSHARD_POOLING_MODEL || engine.pooling() == PSHARD_POOLING_NONE)
    return bad_request("this server has no pooling for embeddings: the model names none (its "
                       "pooling_type; it is not an embedding model); start pshard-server with "
                       "--pooling mean, cls or last",
                       "", "no_pooling");
  EmbeddingRequest r;
  std::string format = "float";
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "encoding_format", format));
  if (format != "float" && format != "base64")
    return bad_request("'encoding_format' must be \"float\" or \"base64\", got \"" + format + "\"",
                       "encoding_format", "invalid_value");
  r.base64 = format == "base64";
  int64_t dimensions = 0;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "dimensions", dimensions, 1, engine.n_embd()));
  r.dimensions = static_cast<int32_t>(dimensions);
  auto inputs = read_inputs(body, engine);
  if (auto* e = std::get_if<ApiError>(&inputs))
    return *e;
  r.inputs = std::move(std::get<std::vector<std::vector<pshard_token>>>(inputs));
  return r;
}

std::variant<EmbedResults, ApiError>
embed_inputs(ServingEngine& engine, const std::vector<std::vector<pshard_token>>& inputs,
             const pshard_embed_params& ep) {
  const size_t n = inputs.size();
  Results results; // outlives the sequences: freeing one stops its callbacks
  results.vectors.resize(n);
  results.n_prompt.resize(n);
  std::vector<Slot> slots(n);
  std::vector<SeqHandle> seqs(n);
  // As many in the batch at once as it has sequences; the rest as those finish, so a
  // long list neither fills the queue nor keeps other clients waiting behind all of it.
  const auto window = static_cast<size_t>(std::max(1, pshard_batch_n_seq_max(engine.batch())));
  size_t added = 0;
  std::unique_lock lock(results.mutex);
  while (results.done < n && !results.error) {
    while (added < n && added - results.done < window) {
      slots[added] = {&results, added};
      pshard_seq_params sp = pshard_seq_default_params();
      sp.tokens = inputs[added].data();
      sp.n_tokens = inputs[added].size();
      sp.embed = &ep;
      sp.on_event = on_event;
      sp.user_data = &slots[added];
      pshard_seq* seq = nullptr;
      lock.unlock(); // the first event may come before pshard_batch_add returns
      const pshard_status st = pshard_batch_add(engine.batch(), &sp, nullptr, &seq);
      lock.lock();
      if (st == PSHARD_ERROR_UNAVAILABLE && added > results.done)
        break; // the queue is full: wait for one of ours to finish
      if (st != PSHARD_OK)
        return error_from_status(st, last_error(st).message());
      seqs[added++].reset(seq);
    }
    results.changed.wait_for(lock, std::chrono::milliseconds(200));
  }
  if (results.error)
    return *results.error;
  EmbedResults out;
  out.vectors = std::move(results.vectors);
  for (int64_t t : results.n_prompt)
    out.n_prompt_total += t;
  return out;
}

std::variant<json, ApiError> run_embeddings(ServingEngine& engine, const EmbeddingRequest& r) {
  pshard_embed_params ep = pshard_embed_default_params();
  ep.pooling = engine.pooling();
  ep.dimensions = r.dimensions;
  auto done = embed_inputs(engine, r.inputs, ep);
  if (auto* e = std::get_if<ApiError>(&done))
    return *e;
  const EmbedResults& results = std::get<EmbedResults>(done);
  json data = json::array();
  for (size_t i = 0; i < results.vectors.size(); ++i)
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", embedding_json(results.vectors[i], r.base64)}});
  const int64_t tokens = results.n_prompt_total;
  return json{{"object", "list"},
              {"data", std::move(data)},
              {"model", engine.model_id()},
              {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
}

} // namespace pshard::server
