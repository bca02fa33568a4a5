// pshard-server's HTTP layer: routes, authentication, JSON in and out, server-sent
// events. It talks to the engine only through ServingEngine and RunningRequest, and
// every failure it answers is OpenAI's error object with its HTTP status (Anthropic's on
// /v1/messages):
//
//   400 invalid_request_error  malformed JSON, wrong types, values out of range, a prompt
//                              longer than the context (code context_length_exceeded)
//   401 authentication_error   a missing or wrong API key (--api-key)
//   404 invalid_request_error  an unknown model (code model_not_found) or route
//   413 invalid_request_error  a body over 16 MiB
//   503 unavailable_error      every slot busy and the queue full (code server_busy): retry
//   500 server_error           a failed forward pass
#pragma once

#include "tools/pshard-server/metrics.h"
#include "tools/pshard-server/request_runner.h"
#include "tools/pshard-server/serving_engine.h"

#include <memory>
#include <variant>

namespace httplib {
class Server;
struct Request;
struct Response;
} // namespace httplib

namespace pshard::server {

class HttpApi {
public:
  HttpApi(ServingEngine& engine, const ServerOptions& options)
      : engine_(engine), api_key_(options.api_key) {}
  void install(httplib::Server& server);

private:
  bool authorized(const httplib::Request& req) const;
  // A chat or completions body read and started in the batch, or the error to answer.
  struct Started {
    GenerationRequest request;
    std::shared_ptr<RunningRequest> run;
  };
  std::variant<Started, ApiError> start(const std::string& body, Endpoint endpoint);
  void generate(const httplib::Request& req, httplib::Response& res, Endpoint endpoint);
  void stream(const GenerationRequest& r, std::shared_ptr<RunningRequest> run,
              httplib::Response& res);
  // llama-server's /infill: its body and answer shape ({"content", "stop", ...}).
  // llama-server's own /completion and /infill: the body made a /v1/completions one by
  // `as_completion`, answered in llama-server's form (native_answer.h).
  using AsCompletion = std::variant<nlohmann::json, ApiError> (*)(const ServingEngine&,
                                                                  nlohmann::json);
  void native_completion(const httplib::Request& req, httplib::Response& res,
                         AsCompletion as_completion);
  // OpenAI's Responses API, as the chat completion it asks for (responses_request.h).
  void responses(const httplib::Request& req, httplib::Response& res);
  // Anthropic's Messages API, likewise (anthropic_request.h); count_tokens with `count`.
  void messages(const httplib::Request& req, httplib::Response& res, bool count);
  void models(httplib::Response& res) const;
  void tokenize(const httplib::Request& req, httplib::Response& res) const;
  void detokenize(const httplib::Request& req, httplib::Response& res) const;
  // POST /apply-template (llama-server's): a chat request's prompt as the template renders
  // it — tools, reasoning switches and all — without running it.
  void apply_template(const httplib::Request& req, httplib::Response& res) const;
  void budget(const httplib::Request& req, httplib::Response& res);
  // GET /slots (llama-server's, for monitoring): each of the -np sequences, what the
  // request running in it has read and generated, or idle.
  void slots(httplib::Response& res) const;

  ServingEngine& engine_;
  std::string api_key_;
  HttpCounters counters_;
};

} // namespace pshard::server
