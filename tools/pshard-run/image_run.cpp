#include "tools/pshard-run/image_run.h"

#include "runtime/generate/generator.h"
#include "runtime/grammar/output_constraint.h"
#include "runtime/sampler/dry_breaker_tokens.h"
#include "runtime/vision/image_prompt.h"
#include "runtime/vision/image_prompt_text.h"
#include "tools/common/size_parse.h"
#include "tools/pshard-run/image_session.h"
#include "tools/pshard-run/run_report.h"

#include <random>

namespace pshard {
namespace {

void write_json(std::ostream& out, const GenerateResult& r, const ImageSession& s,
                std::span<const EncodedImage> imgs) {
  JsonWriter j(out);
  j.begin_object();
  std::vector<std::vector<std::pair<pshard_token, float>>> top;
  for (const auto& position : r.top_logprobs) {
    top.emplace_back();
    for (const TokenLogprob& t : position)
      top.back().emplace_back(t.id, t.logprob);
  }
  write_generation_json(j, r.prompt, r.generated, r.text, top);
  write_image_session_json(j, s, imgs);
  j.end_object();
  out << "\n";
}

} // namespace

Result<ImagePromptText> place_images(const std::string& prompt, int64_t n_images) {
  if (count_image_places(prompt) == 0)
    return images_before(prompt, n_images);
  return split_image_prompt(prompt, n_images);
}

Status run_image_prompt(const RunOptions& o, const std::string& prompt, std::ostream& out,
                        std::ostream& err) {
  PSHARD_ASSIGN_OR_RETURN(ImageSession session, open_image_session(o));
  const auto n_images = static_cast<int64_t>(o.image_paths.size());
  PSHARD_ASSIGN_OR_RETURN(ImagePromptText text, place_images(prompt, n_images));
  PSHARD_ASSIGN_OR_RETURN(std::vector<EncodedImage> imgs, encode_image_files(o, session));
  const Model* model = session.model.get();
  PSHARD_ASSIGN_OR_RETURN(auto tokenizer, Tokenizer::from_gguf(model->file()));
  std::vector<int64_t> n_tokens;
  for (const EncodedImage& img : imgs)
    n_tokens.push_back(img.embeddings.n_tokens());
  ImagePromptIds ids = tokenize_image_prompt(*tokenizer, text, n_tokens,
                                             tokenizer->add_bos_by_default(), o.parse_special);
  std::vector<ImageEmbeddings> embeddings;
  for (size_t i = 0; i < imgs.size(); ++i) {
    imgs[i].position = ids.image_pos[i];
    ImageEmbeddings& e = imgs[i].embeddings; // its rows move to the decoder, its grid stays
    embeddings.push_back({e.tokens_x, e.tokens_y, e.n_embd, std::move(e.data), e.n_deepstack,
                          std::move(e.deepstack)});
  }
  ImagePromptDecoder decoder(*session.decoder, std::move(embeddings), ids.image_pos);
  SamplerParams sampling = o.sampling;
  sampling.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  if (sampling.dry.multiplier != 0.0f) {
    DryBreakerTokens breakers = dry_breaker_tokens(
        *tokenizer, o.dry_breakers ? *o.dry_breakers : default_dry_sequence_breakers());
    sampling.dry_breakers = std::move(breakers.within);
    sampling.dry_spans = std::move(breakers.spans);
  }
  PSHARD_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(sampling));
  if (!o.grammar.empty() || !o.json_schema.empty()) {
    PSHARD_ASSIGN_OR_RETURN(auto filter, make_token_filter({o.grammar, o.json_schema, "", {}},
                                                           TokenTrie::build(*tokenizer)));
    sampler.set_filter(std::move(filter));
  }
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
    write_json(out, r, session, imgs);
    return Status::ok_status();
  }
  out << "\n";
  err << "prompt:      " << r.timings.n_prompt << " tokens, " << r.timings.prompt_tokens_per_s()
      << " tokens/s\ngeneration:  " << r.timings.n_generated << " tokens, "
      << r.timings.generation_tokens_per_s() << " tokens/s\n";
  write_image_session_stats(err, session, imgs);
  return Status::ok_status();
}

} // namespace pshard
