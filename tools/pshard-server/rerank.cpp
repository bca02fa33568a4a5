#include "tools/pshard-server/rerank.h"

#include "tools/pshard-server/embeddings.h"
#include "tools/pshard-server/openai_request.h"

#include <algorithm>
#include <numeric>

namespace pshard::server {
namespace {

using nlohmann::json;

constexpr size_t kMaxDocuments = 1000; // Cohere's limit per request

std::variant<std::vector<std::string>, ApiError> read_documents(const json& body) {
  auto it = body.find("documents");
  if (it == body.end() || it->is_null())
    return bad_request("'documents' is required: the texts to rank against the query", "documents",
                       "missing_required_parameter");
  if (!it->is_array() || it->empty())
    return bad_request("'documents' must be a non-empty array of strings", "documents",
                       it->is_array() ? "invalid_value" : "invalid_type");
  if (it->size() > kMaxDocuments)
    return bad_request("'documents' holds " + std::to_string(it->size()) + " texts; at most " +
                           std::to_string(kMaxDocuments) + " a request",
                       "documents", "invalid_value");
  std::vector<std::string> out;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& d = (*it)[i];
    const json* text = d.is_object() && d.contains("text") ? &d["text"] : &d;
    if (!text->is_string())
      return bad_request("'documents[" + std::to_string(i) +
                             "]' must be a string (or {\"text\": string})",
                         "documents[" + std::to_string(i) + "]", "invalid_type");
    out.push_back(text->get<std::string>());
  }
  return out;
}

} // namespace

std::variant<RerankRequest, ApiError> parse_rerank(const std::string& text,
                                                   const ServingEngine& engine) {
  auto parsed = parse_for_model(text, engine);
  if (auto* e = std::get_if<ApiError>(&parsed))
    return *e;
  const json& body = std::get<json>(parsed);
  if (!engine.reranks())
    return bad_request("this model is not a reranker: it has no classification head "
                       "(cls.output) to score with; serve a reranker such as bge-reranker-v2-m3 or "
                       "Qwen3-Reranker",
                       "", "not_a_reranker");
  std::string query;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "query", query));
  if (query.empty())
    return bad_request("'query' is required: the text the documents are ranked against", "query",
                       "missing_required_parameter");
  auto documents = read_documents(body);
  if (auto* e = std::get_if<ApiError>(&documents))
    return *e;
  RerankRequest r;
  r.documents = std::move(std::get<std::vector<std::string>>(documents));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "top_n", r.top_n, 1, 1 << 20));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "return_documents", r.return_documents));
  for (size_t i = 0; i < r.documents.size(); ++i) {
    auto ids = engine.rerank_tokenize(query, r.documents[i]);
    if (!ids.ok()) // the model cannot frame a query and a document: the same for every one
      return bad_request(ids.status().message(), "", "no_rerank_prompt");
    if (static_cast<int64_t>(ids->size()) > engine.n_ctx())
      return bad_request("This model's maximum context length is " +
                             std::to_string(engine.n_ctx()) + " tokens. However, the query " +
                             "with 'documents[" + std::to_string(i) + "]' resulted in " +
                             std::to_string(ids->size()) + " tokens. Please reduce the length.",
                         "documents", "context_length_exceeded");
    r.inputs.push_back(std::move(*ids));
  }
  return r;
}

std::variant<json, ApiError> run_rerank(ServingEngine& engine, const RerankRequest& r) {
  pshard_embed_params ep = pshard_embed_default_params();
  ep.pooling = PSHARD_POOLING_RANK;
  auto done = embed_inputs(engine, r.inputs, ep);
  if (auto* e = std::get_if<ApiError>(&done))
    return *e;
  const EmbedResults& results = std::get<EmbedResults>(done);
  std::vector<size_t> order(results.vectors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto score = [&](size_t i) { return results.vectors[i].empty() ? 0.0f : results.vectors[i][0]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return score(a) > score(b); });
  if (r.top_n > 0 && static_cast<size_t>(r.top_n) < order.size())
    order.resize(static_cast<size_t>(r.top_n));
  json list = json::array();
  for (size_t i : order) {
    json item = {{"index", i}, {"relevance_score", score(i)}};
    if (r.return_documents)
      item["document"] = {{"text", r.documents[i]}};
    list.push_back(std::move(item));
  }
  const int64_t tokens = results.n_prompt_total;
  return json{{"object", "list"},
              {"model", engine.model_id()},
              {"results", std::move(list)},
              {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
}

} // namespace pshard::server
