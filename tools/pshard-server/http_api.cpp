#include "tools/pshard-server/http_api.h"

#include "tools/common/size_parse.h"
#include "tools/pshard-server/anthropic_answer.h"
#include "tools/pshard-server/anthropic_request.h"
#include "tools/pshard-server/chat_page.h"
#include "tools/pshard-server/choice_stream.h"
#include "tools/pshard-server/embeddings.h"
#include "tools/pshard-server/infill.h"
#include "tools/pshard-server/native_answer.h"
#include "tools/pshard-server/native_completion.h"
#include "tools/pshard-server/openai_response.h"
#include "tools/pshard-server/rerank.h"
#include "tools/pshard-server/responses_answer.h"
#include "tools/pshard-server/responses_request.h"

#include <httplib.h>

namespace pshard::server {
namespace {

using nlohmann::json;

constexpr const char* kJson = "application/json";

void send(httplib::Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_content(dump(body), kJson);
}

void send_error(httplib::Response& res, const ApiError& e) { send(res, error_json(e), e.status); }

// A request answered whole: its parse's error, else its run's error or JSON answer.
template <typename Request, typename Run>
void parse_then_run(httplib::Response& res, const std::variant<Request, ApiError>& parsed,
                    Run run) {
  if (auto* e = std::get_if<ApiError>(&parsed))
    return send_error(res, *e);
  auto answer = run(std::get<Request>(parsed));
  if (auto* e = std::get_if<ApiError>(&answer))
    return send_error(res, *e);
  send(res, std::get<nlohmann::json>(answer));
}

// Sends a running request's events through `stream` — an object whose opening(),
// on_event(event) and error(ApiError) write another API's server-sent events — ending
// the response with the last event; a client gone cancels the request.
template <typename EventStream>
void stream_events(httplib::Response& res, std::shared_ptr<RunningRequest> run,
                   std::shared_ptr<EventStream> stream) {
  auto opened = std::make_shared<bool>(false);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [run, stream, opened](size_t, httplib::DataSink& sink) {
        auto write = [&sink](const std::string& text) {
          return text.empty() || sink.write(text.data(), text.size());
        };
        if (!*opened) {
          *opened = true;
          if (!write(stream->opening()))
            return false;
        }
        std::optional<TokenEvent> e = run->next(std::chrono::milliseconds(200));
        if (!e)
          return true;
        if (e->finish == PSHARD_FINISH_ERROR || e->finish == PSHARD_FINISH_CANCELLED) {
          write(stream->error(finish_error(e->finish, e->error, e->error_message)));
          sink.done();
          return true;
        }
        if (!write(stream->on_event(*e)))
          return false;
        if (e->finish != PSHARD_FINISH_NONE)
          sink.done();
        return true;
      },
      [run](bool success) {
        if (!success)
          run->cancel();
      });
}

// The route a path counts under in /metrics (unknown paths together, so that probes
// cannot grow the label set).
std::string route_label(const std::string& path) {
  static const char* known[] = {"/",
                                "/health",
                                "/metrics",
                                "/tokenize",
                                "/detokenize",
                                "/apply-template",
                                "/budget",
                                "/slots",
                                "/v1/models",
                                "/models",
                                "/v1/completions",
                                "/completions",
                                "/v1/chat/completions",
                                "/chat/completions",
                                "/v1/embeddings",
                                "/embeddings",
                                "/v1/rerank",
                                "/rerank",
                                "/v1/reranking",
                                "/v1/responses",
                                "/responses",
                                "/v1/messages",
                                "/v1/messages/count_tokens",
                                "/infill",
                                "/completion",
                                "/props"};
  for (const char* k : known)
    if (path == k)
      return path;
  return path.rfind("/v1/models/", 0) == 0 ? "/v1/models/{id}" : "other";
}

ApiError status_error(int status, const httplib::Request& req) {
  switch (status) {
  case 404:
    return not_found_error(
        "there is no route " + req.method + " " + req.path +
            " (POST /v1/completions, POST /v1/chat/completions, POST /v1/embeddings, "
            "POST /v1/rerank, "
            "GET /v1/models, "
            "GET /health, GET /metrics, POST /tokenize, POST /detokenize, POST /apply-template, "
            "GET /slots, GET or POST /budget)",
        "", "not_found");
  case 413:
    return {413, "invalid_request_error", "the request body is larger than 16 MiB", "",
            "payload_too_large"};
  case 400:
    return bad_request("the request could not be read as HTTP");
  default:
    return {status, status >= 500 ? "server_error" : "invalid_request_error",
            "the server answered HTTP " + std::to_string(status), "", ""};
  }
}

} // namespace

void HttpApi::install(httplib::Server& svr) {
  svr.set_payload_max_length(16u << 20);
  svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (authorized(req))
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, {401, "authentication_error",
                     "Incorrect API key provided: send it as 'Authorization: Bearer KEY' (the "
                     "server's --api-key)",
                     "", "invalid_api_key"});
    return httplib::Server::HandlerResponse::Handled;
  });
  svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) // routes answer their own errors; this is for httplib's
      send_error(res, status_error(res.status, req));
  });
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        send_error(res, {500, "server_error", "internal error: " + what, "", ""});
      });
  svr.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    counters_.count(route_label(req.path), res.status);
  });

  svr.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(chat_page_html(), "text/html; charset=utf-8");
  });
  svr.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    send(res, {{"status", "ok"}});
  });
  // llama-server's /props: what front ends read to size their prompts.
  svr.Get("/props", [this](const httplib::Request&, httplib::Response& res) {
    send(res, {{"default_generation_settings",
                {{"n_ctx", engine_.n_ctx()},
                 {"params", sampler_settings_json(engine_.default_sampling(),
                                                  engine_.default_sampler_strings())}}},
               {"total_slots", pshard_batch_n_seq_max(engine_.batch())},
               {"model_alias", engine_.model_id()},
               {"chat_template", engine_.chat_template()},
               {"modalities", {{"vision", engine_.has_vision()}}},
               {"build_info", "pshard"}});
  });
  svr.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(prometheus_metrics(engine_, counters_), "text/plain; version=0.0.4");
  });
  for (const char* path : {"/v1/models", "/models"})
    svr.Get(path, [this](const httplib::Request&, httplib::Response& res) { models(res); });
  svr.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    if (!engine_.serves(std::string(req.matches[1])))
      return send_error(
          res, not_found_error("The model '" + std::string(req.matches[1]) + "' does not exist",
                               "model", "model_not_found"));
    send(res, {{"id", std::string(req.matches[1])},
               {"object", "model"},
               {"created", engine_.created()},
               {"owned_by", "pshard"}});
  });
  svr.Post("/tokenize",
           [this](const httplib::Request& req, httplib::Response& res) { tokenize(req, res); });
  svr.Post("/detokenize",
           [this](const httplib::Request& req, httplib::Response& res) { detokenize(req, res); });
  svr.Post("/apply-template", [this](const httplib::Request& req, httplib::Response& res) {
    apply_template(req, res);
  });
  svr.Get("/slots", [this](const httplib::Request&, httplib::Response& res) { slots(res); });
  svr.Get("/budget",
          [this](const httplib::Request& req, httplib::Response& res) { budget(req, res); });
  svr.Post("/budget",
           [this](const httplib::Request& req, httplib::Response& res) { budget(req, res); });
  for (const char* path : {"/v1/completions", "/completions"})
    svr.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
      generate(req, res, Endpoint::kCompletions);
    });
  for (const char* path : {"/v1/chat/completions", "/chat/completions"})
    svr.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
      generate(req, res, Endpoint::kChat);
    });
  for (const char* path : {"/v1/responses", "/responses"})
    svr.Post(path,
             [this](const httplib::Request& req, httplib::Response& res) { responses(req, res); });
  svr.Post("/v1/messages", [this](const httplib::Request& req, httplib::Response& res) {
    messages(req, res, false);
  });
  svr.Post(
      "/v1/messages/count_tokens",
      [this](const httplib::Request& req, httplib::Response& res) { messages(req, res, true); });
  svr.Post("/infill", [this](const httplib::Request& req, httplib::Response& res) {
    native_completion(req, res, infill_as_completion);
  });
  svr.Post("/completion", [this](const httplib::Request& req, httplib::Response& res) {
    native_completion(req, res, native_as_completion);
  });
  for (const char* path : {"/v1/embeddings", "/embeddings"})
    svr.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
      parse_then_run(res, parse_embeddings(req.body, engine_),
                     [&](const EmbeddingRequest& r) { return run_embeddings(engine_, r); });
    });
  for (const char* path : {"/v1/rerank", "/rerank", "/v1/reranking"})
    svr.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
      parse_then_run(res, parse_rerank(req.body, engine_),
                     [&](const RerankRequest& r) { return run_rerank(engine_, r); });
    });
}

bool HttpApi::authorized(const httplib::Request& req) const {
  if (api_key_.empty() || (req.method == "GET" && (req.path == "/" || req.path == "/health")))
    return true;
  return req.get_header_value("Authorization") == "Bearer " + api_key_ ||
         req.get_header_value("X-Api-Key") == api_key_;
}

std::variant<HttpApi::Started, ApiError> HttpApi::start(const std::string& body,
                                                        Endpoint endpoint) {
  auto parsed = parse_generation(body, endpoint, engine_);
  if (auto* e = std::get_if<ApiError>(&parsed))
    return *e;
  auto run = RunningRequest::start(engine_, std::get<GenerationRequest>(parsed));
  if (auto* e = std::get_if<ApiError>(&run))
    return *e;
  return Started{std::move(std::get<GenerationRequest>(parsed)),
                 std::move(std::get<std::unique_ptr<RunningRequest>>(run))};
}

void HttpApi::generate(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
  auto started = start(req.body, endpoint);
  if (auto* e = std::get_if<ApiError>(&started))
    return send_error(res, *e);
  const GenerationRequest& r = std::get<Started>(started).request;
  std::shared_ptr<RunningRequest> run = std::get<Started>(started).run;
  if (r.stream)
    return stream(r, std::move(run), res);
  auto done = complete(*run);
  if (auto* e = std::get_if<ApiError>(&done))
    return send_error(res, *e);
  const std::vector<Completion>& choices = std::get<std::vector<Completion>>(done);
  const ResponseHeader header = new_header(endpoint, engine_.model_id());
  json choices_json = json::array();
  int64_t thought = -1; // over the choices; -1: not counted
  for (size_t i = 0; i < choices.size(); ++i) {
    const Completion& c = choices[i];
    if (const int64_t t = reasoning_tokens(r, c); t >= 0)
      thought = std::max<int64_t>(thought, 0) + t;
    const json logprobs =
        r.logprobs ? LogprobWriter(engine_, endpoint).to_json(c.tokens) : json(nullptr);
    const auto index = static_cast<int32_t>(i);
    if (endpoint == Endpoint::kChat) {
      const ChatAnswer answer = read_chat_answer(c.text, r, tool_call_id_prefix(header, index));
      choices_json.push_back(choice_json(index, c, logprobs, &answer));
    } else {
      choices_json.push_back(choice_json(index, c, logprobs, nullptr));
    }
  }
  send(res, completion_body(header, choices, choices_json, thought));
}

void HttpApi::stream(const GenerationRequest& r, std::shared_ptr<RunningRequest> run,
                     httplib::Response& res) {
  struct State {
    ResponseHeader header;
    bool include_usage, started = false;
    std::shared_ptr<RunningRequest> run;
    std::vector<ChoiceStream> choices;
    int32_t running = 0;           // choices not yet finished
    int64_t n_generated = 0;       // over the finished ones
    int64_t n_cached = 0;          // choice 0's, as a whole answer's usage counts it
    int64_t reasoning_tokens = -1; // over the finished choices; -1: not counted
  };
  auto s = std::make_shared<State>(State{new_header(r.endpoint, engine_.model_id()),
                                         r.include_usage,
                                         false,
                                         std::move(run),
                                         {},
                                         r.n,
                                         0,
                                         0,
                                         -1});
  for (int32_t i = 0; i < r.n; ++i)
    s->choices.emplace_back(engine_, r, s->header, i);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [s](size_t, httplib::DataSink& sink) {
        auto write = [&sink](const std::string& text) {
          return sink.write(text.data(), text.size());
        };
        if (!s->started) { // a chat stream opens with the assistant's role, per choice
          s->started = true;
          std::string opening;
          for (const ChoiceStream& c : s->choices)
            opening += c.opening();
          if (!opening.empty() && !write(opening))
            return false; // the client is gone: the releaser cancels
        }
        std::optional<TokenEvent> e = s->run->next(std::chrono::milliseconds(200));
        if (!e)
          return true;
        if (e->finish == PSHARD_FINISH_ERROR || e->finish == PSHARD_FINISH_CANCELLED) {
          const ApiError err = finish_error(e->finish, e->error, e->error_message);
          write(sse(error_json(err)) + "data: [DONE]\n\n");
          sink.done();
          return true;
        }
        std::string out = s->choices.at(static_cast<size_t>(e->index)).on_event(*e);
        if (e->finish != PSHARD_FINISH_NONE) {
          --s->running;
          s->n_generated += e->n_generated;
          if (const int64_t t = s->choices.at(static_cast<size_t>(e->index)).reasoning_tokens();
              t >= 0)
            s->reasoning_tokens = std::max<int64_t>(s->reasoning_tokens, 0) + t;
          if (e->index == 0)
            s->n_cached = e->n_cached;
        }
        if (s->running > 0)
          return out.empty() || write(out);
        if (s->include_usage)
          out += sse(usage_chunk(s->header, e->n_prompt, s->n_cached, s->n_generated,
                                 s->reasoning_tokens));
        if (!write(out + "data: [DONE]\n\n"))
          return false;
        sink.done();
        return true;
      },
      [s](bool success) {
        if (!success)
          s->run->cancel();
      });
}

void HttpApi::native_completion(const httplib::Request& req, httplib::Response& res,
                                AsCompletion as_completion) {
  auto object = parse_object(req.body);
  if (auto* e = std::get_if<ApiError>(&object))
    return send_error(res, *e);
  bool return_tokens = false; // llama-server's: the generated ids in "tokens"
  if (auto e = read_field(std::get<json>(object), "return_tokens", return_tokens))
    return send_error(res, *e);
  auto body = as_completion(engine_, std::move(std::get<json>(object)));
  if (auto* e = std::get_if<ApiError>(&body))
    return send_error(res, *e);
  auto started = start(std::get<json>(body).dump(), Endpoint::kCompletions);
  if (auto* e = std::get_if<ApiError>(&started))
    return send_error(res, *e);
  const GenerationRequest& r = std::get<Started>(started).request;
  std::shared_ptr<RunningRequest> run = std::get<Started>(started).run;
  if (!r.stream) {
    auto done = complete(*run);
    if (auto* e = std::get_if<ApiError>(&done))
      return send_error(res, *e);
    const Completion& c = std::get<std::vector<Completion>>(done).at(0);
    const json probabilities =
        r.logprobs ? LogprobWriter(engine_, Endpoint::kCompletions, r.post_sampling_probs)
                         .completion_probabilities(c.tokens)
                   : json();
    std::vector<pshard_token> tokens;
    if (return_tokens)
      for (const TokenEvent& t : c.tokens)
        tokens.push_back(t.token);
    return send(res, native_answer(c.text, c.finish, native_counts(c), engine_.model_id(),
                                   stop_string_json(r.stop, c.stop_string), probabilities, tokens));
  }
  std::optional<LogprobWriter> probabilities;
  if (r.logprobs)
    probabilities.emplace(engine_, Endpoint::kCompletions, r.post_sampling_probs);
  stream_events(res, std::move(run),
                std::make_shared<NativeStream>(engine_.model_id(), r.stop, std::move(probabilities),
                                               return_tokens));
}

void HttpApi::responses(const httplib::Request& req, httplib::Response& res) {
  auto object = parse_ordered_object(req.body);
  if (auto* e = std::get_if<ApiError>(&object))
    return send_error(res, *e);
  const json body(std::get<nlohmann::ordered_json>(object)); // the response echoes its fields
  auto chat = responses_as_chat(std::get<nlohmann::ordered_json>(object));
  if (auto* e = std::get_if<ApiError>(&chat))
    return send_error(res, *e);
  auto started = start(std::get<nlohmann::ordered_json>(chat).dump(), Endpoint::kChat);
  if (auto* e = std::get_if<ApiError>(&started))
    return send_error(res, as_responses_error(*e));
  const GenerationRequest& r = std::get<Started>(started).request;
  std::shared_ptr<RunningRequest> run = std::get<Started>(started).run;
  const ResponseHeader header = new_responses_header(engine_.model_id());
  if (!r.stream) {
    auto done = complete(*run);
    if (auto* e = std::get_if<ApiError>(&done))
      return send_error(res, *e);
    const Completion& c = std::get<std::vector<Completion>>(done).at(0);
    const ChatAnswer answer = read_chat_answer(c.text, r, tool_call_id_prefix(header));
    return send(res, response_json(header, body, c.finish, output_items(header, answer),
                                   responses_usage(c.n_prompt, c.n_cached, c.n_generated,
                                                   reasoning_tokens(r, c))));
  }
  stream_events(res, std::move(run), std::make_shared<ResponseStream>(r, header, body));
}

void HttpApi::messages(const httplib::Request& req, httplib::Response& res, bool count) {
  auto fail = [&res](const ApiError& e) { send(res, anthropic_error_json(e), e.status); };
  auto object = parse_ordered_object(req.body);
  if (auto* e = std::get_if<ApiError>(&object))
    return fail(*e);
  nlohmann::ordered_json& body = std::get<nlohmann::ordered_json>(object);
  if (count && !body.contains("max_tokens"))
    body["max_tokens"] = 1; // counting needs no answer length
  auto chat = messages_as_chat(body);
  if (auto* e = std::get_if<ApiError>(&chat))
    return fail(*e);
  const std::string chat_body = std::get<nlohmann::ordered_json>(chat).dump();
  if (count) {
    auto parsed = parse_generation(chat_body, Endpoint::kChat, engine_);
    if (auto* e = std::get_if<ApiError>(&parsed))
      return fail(*e);
    const GenerationRequest& r = std::get<GenerationRequest>(parsed);
    if (!r.images.empty()) // an image's tokens are known once it is encoded
      return fail(bad_request("count_tokens does not count image blocks: send the text alone "
                              "(an answer's usage.input_tokens counts everything)",
                              "messages", "unsupported_content"));
    return send(res, {{"input_tokens", r.prompt.size()}});
  }
  auto started = start(chat_body, Endpoint::kChat);
  if (auto* e = std::get_if<ApiError>(&started))
    return fail(*e);
  const GenerationRequest& r = std::get<Started>(started).request;
  std::shared_ptr<RunningRequest> run = std::get<Started>(started).run;
  const ResponseHeader header = new_anthropic_header(engine_.model_id());
  if (!r.stream) {
    auto done = complete(*run);
    if (auto* e = std::get_if<ApiError>(&done))
      return fail(*e);
    const Completion& c = std::get<std::vector<Completion>>(done).at(0);
    const ChatAnswer answer = read_chat_answer(c.text, r, tool_use_id_prefix(header));
    return send(res, anthropic_message(header, answer, c, stop_string_json(r.stop, c.stop_string)));
  }
  stream_events(res, std::move(run), std::make_shared<AnthropicStream>(r, header));
}

// One entry per name the model answers to (--alias), the same model behind each.
void HttpApi::models(httplib::Response& res) const {
  json data = json::array();
  for (const std::string& id : engine_.model_ids())
    data.push_back({{"id", id},
                    {"object", "model"},
                    {"created", engine_.created()},
                    {"owned_by", "pshard"},
                    {"meta",
                     {{"n_ctx", engine_.n_ctx()},
                      {"n_vocab", engine_.n_vocab()},
                      {"n_parallel", pshard_batch_n_seq_max(engine_.batch())},
                      {"backend", engine_.backend()},
                      {"chat_template", engine_.chat_template()}}}});
  send(res, {{"object", "list"}, {"data", data}});
}

void HttpApi::tokenize(const httplib::Request& req, httplib::Response& res) const {
  auto parsed = parse_object(req.body);
  if (auto* e = std::get_if<ApiError>(&parsed))
    return send_error(res, *e);
  const json& body = std::get<json>(parsed);
  std::string content;
  bool add_special = false, with_pieces = false, parse_special = true;
  if (!body.contains("content"))
    return send_error(res, bad_request("'content' is required: the text to tokenize", "content",
                                       "missing_required_parameter"));
  for (FieldError e :
       {read_field(body, "content", content), read_field(body, "add_special", add_special),
        read_field(body, "parse_special", parse_special),
        read_field(body, "with_pieces", with_pieces)})
    if (e)
      return send_error(res, *e);
  auto ids = engine_.tokenize(content, add_special, parse_special);
  if (!ids.ok())
    return send_error(res, bad_request(ids.status().message(), "content"));
  json tokens = json::array();
  for (pshard_token id : *ids)
    tokens.push_back(with_pieces ? json{{"id", id}, {"piece", engine_.piece(id)}} : json(id));
  send(res, {{"tokens", tokens}});
}

void HttpApi::apply_template(const httplib::Request& req, httplib::Response& res) const {
  auto parsed = parse_generation(req.body, Endpoint::kChat, engine_);
  if (auto* e = std::get_if<ApiError>(&parsed))
    return send_error(res, *e);
  send(res, {{"prompt", std::get<GenerationRequest>(parsed).rendered}});
}

void HttpApi::detokenize(const httplib::Request& req, httplib::Response& res) const {
  auto parsed = parse_object(req.body);
  if (auto* e = std::get_if<ApiError>(&parsed))
    return send_error(res, *e);
  const json& body = std::get<json>(parsed);
  auto it = body.find("tokens");
  if (it == body.end() || !it->is_array())
    return send_error(
        res, bad_request("'tokens' must be an array of token ids", "tokens",
                         it == body.end() ? "missing_required_parameter" : "invalid_type"));
  std::vector<pshard_token> ids;
  for (const json& t : *it) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= engine_.n_vocab())
      return send_error(res, bad_request("'tokens' holds " + t.dump() +
                                             ", not a token id below the vocabulary size " +
                                             std::to_string(engine_.n_vocab()),
                                         "tokens", "invalid_value"));
    ids.push_back(static_cast<pshard_token>(t.get<int64_t>()));
  }
  auto text = engine_.detokenize(ids);
  if (!text.ok())
    return send_error(res, bad_request(text.status().message(), "tokens"));
  send(res, {{"content", *text}});
}

void HttpApi::budget(const httplib::Request& req, httplib::Response& res) {
  if (req.method == "POST") {
    auto parsed = parse_object(req.body);
    if (auto* e = std::get_if<ApiError>(&parsed))
      return send_error(res, *e);
    const json& body = std::get<json>(parsed);
    auto it = body.find("vram");
    uint64_t bytes = 0;
    if (it != body.end() && it->is_number_unsigned()) {
      bytes = it->get<uint64_t>();
    } else if (it != body.end() && it->is_string()) {
      auto size = parse_size(it->get<std::string>());
      if (!size.ok())
        return send_error(res, bad_request(size.status().message(), "vram", "invalid_value"));
      bytes = *size;
    } else {
      return send_error(
          res, bad_request("'vram' must be a byte count or a size such as \"512M\"", "vram",
                           it == body.end() ? "missing_required_parameter" : "invalid_type"));
    }
    if (Status st = engine_.set_vram_budget(bytes); !st.ok())
      return send_error(
          res,
          bad_request(st.message(), "vram",
                      st.code() == StatusCode::kUnsupported ? "no_schedule" : "budget_too_small"));
  }
  pshard_batch_stats st = pshard_batch_stats_init();
  (void)pshard_batch_get_stats(engine_.batch(), &st);
  send(res, {{"vram_budget", st.vram_budget},
             {"vram_used", st.vram_bytes},
             {"budgets", engine_.budgets()},
             {"backend", engine_.backend()}});
}

void HttpApi::slots(httplib::Response& res) const {
  pshard_batch_stats st = pshard_batch_stats_init();
  (void)pshard_batch_get_stats(engine_.batch(), &st);
  json out = json::array();
  const int32_t n_slots = pshard_batch_n_seq_max(engine_.batch());
  for (int32_t i = 0; i < n_slots; ++i) {
    json slot = {{"id", i}, {"n_ctx", engine_.n_ctx()}};
    pshard_seq_progress p = pshard_seq_progress_init();
    if (static_cast<size_t>(i) < st.n_progress &&
        pshard_batch_get_progress(engine_.batch(), static_cast<size_t>(i), &p) == PSHARD_OK) {
      slot.update({{"is_processing", true},
                   {"id_task", p.seq_id},
                   {"state", p.generating ? "generating" : "reading the prompt"},
                   {"n_prompt_tokens", p.n_prompt},
                   {"n_prompt_tokens_processed", p.n_prompt_read},
                   {"n_prompt_tokens_cache", p.n_cached},
                   {"n_decoded", p.n_generated},
                   {"ms_running", p.ms_running}});
    } else {
      slot["is_processing"] = false;
    }
    out.push_back(std::move(slot));
  }
  send(res, out);
}

} // namespace pshard::server
