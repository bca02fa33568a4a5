#include "tools/pshard-run/image_run.h"

#include "runtime/generate/generator.h"
#include "runtime/vision/image_prompt.h"
#include "runtime/vision/image_prompt_text.h"
#include "tools/common/size_parse.h"
#include "tools/pshard-run/run_report.h"

#include <chrono>
#include <random>

namespace pshard {
namespace {

struct EncodedImage {
  ImageEmbeddings embeddings;
  int64_t width = 0, height = 0, input_width = 0, input_height = 0;
  int64_t position = 0; // of the first image token in the prompt
  double ms = 0;
};

Result<EncodedImage> encode_image_file(const RunOptions& o, const ModelHParams& lm,
                                       ThreadPool& pool) {
  PSHARD_ASSIGN_OR_RETURN(auto proj, Projector::open(o.mmproj_path));
  PSHARD_RETURN_IF_ERROR(proj->check_language_model(lm.n_embd));
  PSHARD_ASSIGN_OR_RETURN(RgbImage img, load_image(o.image_path));
  const auto t0 = std::chrono::steady_clock::now();
  PSHARD_ASSIGN_OR_RETURN(VisionInput in, preprocess_image(img, proj->hparams()));
  EncodedImage e;
  PSHARD_ASSIGN_OR_RETURN(e.embeddings, encode_image(*proj, in, pool));
  e.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  e.width = img.width;
  e.height = img.height;
  e.input_width = in.width;
  e.input_height = in.height;
  return e;
}

void write_json(std::ostream& out, const GenerateResult& r, const EncodedImage& img) {
  JsonWriter j(out);
  j.begin_object();
  std::vector<std::vector<std::pair<pshard_token, float>>> top;
  for (const auto& position : r.top_logprobs) {
    top.emplace_back();
    for (const TokenLogprob& t : position)
      top.back().emplace_back(t.id, t.logprob);
  }
  write_generation_json(j, r.prompt, r.generated, r.text, top);
  j.key("image").begin_object();
  j.key("width").value(img.width);
  j.key("height").value(img.height);
  j.key("input_width").value(img.input_width);
  j.key("input_height").value(img.input_height);
  j.key("tokens_x").value(img.embeddings.tokens_x);
  j.key("tokens_y").value(img.embeddings.tokens_y);
  j.key("position").value(img.position);
  j.key("encode_ms").value(img.ms);
  j.end_object();
  j.end_object();
  out << "\n";
}

} // namespace

Result<ImagePromptText> place_image(const std::string& prompt) {
  if (count_image_places(prompt) == 0)
    return image_before(prompt);
  return split_image_prompt(prompt, 1);
}

Status run_image_prompt(const RunOptions& o, const std::string& prompt, std::ostream& out,
                        std::ostream& err) {
  if (!o.schedule_path.empty() || (o.backend != "auto" && o.backend != "cpu"))
    return unsupported("an image prompt runs on the cpu backend for now; leave out -s and "
                       "--backend");
  PSHARD_ASSIGN_OR_RETURN(
      auto model,
      Model::load(o.model_path, o.no_mmap ? gguf::OpenMode::kReadData : gguf::OpenMode::kMapData));
  PSHARD_RETURN_IF_ERROR(check_image_prompt_model(model->hparams()));
  PSHARD_ASSIGN_OR_RETURN(uint64_t n_ctx, parse_size(o.ctx_size));
  SessionParams sp;
  sp.n_ctx = static_cast<int64_t>(n_ctx);
  sp.n_threads = o.n_threads;
  sp.n_batch = o.n_batch;
  if (!o.cache_type_k.empty()) {
    PSHARD_ASSIGN_OR_RETURN(sp.kv_type_k, parse_tensor_type(o.cache_type_k));
  }
  if (!o.cache_type_v.empty()) {
    PSHARD_ASSIGN_OR_RETURN(sp.kv_type_v, parse_tensor_type(o.cache_type_v));
  }
  PSHARD_ASSIGN_OR_RETURN(auto session, CpuSession::create(*model, sp));
  ThreadPool pool(session->n_threads());
  PSHARD_ASSIGN_OR_RETURN(EncodedImage img, encode_image_file(o, model->hparams(), pool));

  PSHARD_ASSIGN_OR_RETURN(auto tokenizer, Tokenizer::from_gguf(model->file()));
  PSHARD_ASSIGN_OR_RETURN(ImagePromptText text, place_image(prompt));
  ImagePromptIds ids = tokenize_image_prompt(*tokenizer, text, img.embeddings.n_tokens(),
                                             tokenizer->add_bos_by_default(), o.parse_special);
  img.position = ids.image_pos;
  ImagePromptDecoder decoder(*session, std::move(img.embeddings), ids.image_pos);
  SamplerParams sampling = o.sampling;
  sampling.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  PSHARD_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(sampling));
  GenerateParams gp;
  gp.n_predict = o.n_predict;
  gp.ignore_eos = o.ignore_eos;
  gp.top_logprobs = o.json ? o.top_logprobs : 0;
  PSHARD_ASSIGN_OR_RETURN(GenerateResult r, generate(decoder, *tokenizer, sampler, ids.ids, gp,
                                                     [&](const TokenEvent& e) {
                                                       if (!o.json)
                                                         out << e.text << std::flush;
                                                       return true;
                                                     }));
  if (o.json) {
    write_json(out, r, img);
    return Status::ok_status();
  }
  out << "\n";
  err << "image:       " << img.width << " x " << img.height << " pixels -> " << img.input_width
      << " x " << img.input_height << ", " << decoder.image_end() - decoder.image_begin()
      << " image tokens, encoded in " << img.ms << " ms\n"
      << "prompt:      " << r.timings.n_prompt << " tokens, " << r.timings.prompt_tokens_per_s()
      << " tokens/s\ngeneration:  " << r.timings.n_generated << " tokens, "
      << r.timings.generation_tokens_per_s() << " tokens/s\n";
  return Status::ok_status();
}

} // namespace pshard
