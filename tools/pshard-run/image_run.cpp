#include "tools/pshard-run/image_run.h"

#include "runtime/generate/generator.h"
#include "runtime/grammar/output_constraint.h"
#include "runtime/vision/image_prompt.h"
#include "runtime/vision/image_prompt_text.h"
#include "tools/common/size_parse.h"
#include "tools/pshard-run/image_session.h"
#include "tools/pshard-run/run_report.h"

#include <random>

namespace pshard {
namespace {

void write_json(std::ostream& out, const GenerateResult& r, const ImageSession& s,
                const EncodedImage& img) {
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
  write_image_session_json(j, s, img);
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
  PSHARD_ASSIGN_OR_RETURN(ImageSession session, open_image_session(o));
  PSHARD_ASSIGN_OR_RETURN(EncodedImage img, encode_image_file(o, session));
  const Model* model = session.model.get();
  PSHARD_ASSIGN_OR_RETURN(auto tokenizer, Tokenizer::from_gguf(model->file()));
  PSHARD_ASSIGN_OR_RETURN(ImagePromptText text, place_image(prompt));
  ImagePromptIds ids = tokenize_image_prompt(*tokenizer, text, img.embeddings.n_tokens(),
                                             tokenizer->add_bos_by_default(), o.parse_special);
  img.position = ids.image_pos;
  ImagePromptDecoder decoder(*session.decoder, std::move(img.embeddings), ids.image_pos);
  SamplerParams sampling = o.sampling;
  sampling.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
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
    write_json(out, r, session, img);
    return Status::ok_status();
  }
  out << "\n";
  err << "image:       " << img.width << " x " << img.height << " pixels -> " << img.input_width
      << " x " << img.input_height << ", " << decoder.image_end() - decoder.image_begin()
      << " image tokens, encoded in " << img.ms << " ms\n"
      << "prompt:      " << r.timings.n_prompt << " tokens, " << r.timings.prompt_tokens_per_s()
      << " tokens/s\ngeneration:  " << r.timings.n_generated << " tokens, "
      << r.timings.generation_tokens_per_s() << " tokens/s\n";
  write_image_session_stats(err, session, img);
  return Status::ok_status();
}

} // namespace pshard
