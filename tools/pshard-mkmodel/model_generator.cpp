// The generator walks the runtime's own tensor layout for the family, so a generated
// model has exactly the tensors pshard binds and plans; only the metadata keys and the
// values are written here.
#include "tools/pshard-mkmodel/model_generator.h"

#include "runtime/gguf/gguf_writer.h"
#include "runtime/model/rerank_prompt.h"
#include "runtime/model/tensor_layout.h"
#include "tools/pshard-mkmodel/model_metadata.h"
#include "tools/pshard-mkmodel/quant_mix.h"
#include "tools/pshard-mkmodel/random_tensors.h"
#include "tools/pshard-mkmodel/synthetic_vocab.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <vector>

namespace pshard {
namespace {

// The override class of a tensor: its role name without block prefix and suffix, with
// expert stacks under their ffn_* class ("blk.3.ffn_up_exps.weight" -> "ffn_up").
std::string tensor_class(const std::string& name) {
  std::string c = name;
  if (c.rfind("blk.", 0) == 0)
    c = c.substr(c.find('.', 4) + 1);
  c = c.substr(0, c.find('.'));
  if (c.size() > 5 && c.compare(c.size() - 5, 5, "_exps") == 0)
    c.resize(c.size() - 5);
  return c;
}

class ModelWriter {
public:
  ModelWriter(const ModelSpec& spec) : spec_(spec) {}

  Status add_weight(const std::string& name, std::vector<int64_t> dims) {
    const std::string cls = tensor_class(name);
    const TensorType type = tensor_type_for(spec_, name, cls, dims);
    return add_random_matrix(writer_, name, type, std::move(dims), spec_.seed, cls);
  }

  // Norm weights near one keep the activations' scale; biases are small.
  Status add_vector(const std::string& name, int64_t n, float center, float spread) {
    return add_random_vector(writer_, name, n, center, spread, spec_.seed);
  }

  Status add(const TensorSpec& t) {
    switch (t.role) {
    case WeightRole::kBq: case WeightRole::kBk: case WeightRole::kBv: case WeightRole::kBo:
    case WeightRole::kAttnNormB:
    case WeightRole::kFfnNormB:
    case WeightRole::kOutputNormB:
    case WeightRole::kOutputBias:
      return add_vector(t.name, t.dims[0], 0.0f, 0.05f);
    case WeightRole::kRopeFactorsLong: { // LongRoPE: divisors from 1 up to the factor
      const float f = spec_.rope_scaling_factor;
      return add_vector(t.name, t.dims[0], (1.0f + f) / 2.0f, (f - 1.0f) / 2.0f);
    }
    case WeightRole::kRopeFactorsShort:
      return add_vector(t.name, t.dims[0], 1.05f, 0.05f);
    case WeightRole::kAttnSinks: // gpt-oss's sink logits sit near the scores' own scale
      return add_vector(t.name, t.dims[0], 0.5f, 1.0f);
    case WeightRole::kRouterBias:
    case WeightRole::kGateExpsBias:
    case WeightRole::kUpExpsBias:
    case WeightRole::kDownExpsBias: // biases, one row per expert for the experts'
      return add_random_vector(writer_, t.name, t.dims, 0.0f, 0.05f, spec_.seed);
    case WeightRole::kEmbdNormB:
    case WeightRole::kAttnOutNormB:
    case WeightRole::kLayerOutNormB:
    case WeightRole::kFfnUpBias:
    case WeightRole::kFfnDownBias: // an encoder's biases
      return add_vector(t.name, t.dims[0], 0.0f, 0.05f);
    case WeightRole::kPosEmbd:
    case WeightRole::kTokenTypes: // gathered rows, kept F32
      return add_random_matrix(writer_, t.name, TensorType::kF32, t.dims, spec_.seed,
                               tensor_class(t.name));
    case WeightRole::kExpertSelectionBias: // about the sigmoids' spread, so it changes choices
      return add_vector(t.name, t.dims[0], 0.0f, 0.2f);
    // Gated DeltaNet: ssm_a = −exp(A_log) and dt's bias so that a state decays by about
    // 0.9 a token; conv taps of either sign.
    case WeightRole::kSsmA:
      return add_vector(t.name, t.dims[0], -1.0f, 0.5f);
    case WeightRole::kSsmDt:
      return add_vector(t.name, t.dims[0], -2.0f, 1.0f);
    case WeightRole::kSsmConv:
      return add_random_vector(writer_, t.name, t.dims, 0.0f, 0.6f, spec_.seed);
    case WeightRole::kShexpGateInp: // one row, kept F32 as converters keep 1-D tensors
      return add_vector(t.name, t.dims[0], 0.0f, std::sqrt(3.0f / static_cast<float>(t.dims[0])));
    default:
      if (t.is_matrix() || t.role == WeightRole::kTokenEmbd)
        return add_weight(t.name, t.dims);
      return add_vector(t.name, t.dims[0], 1.0f, 0.1f); // norms
    }
  }

  gguf::GgufWriter& writer() { return writer_; }

private:
  const ModelSpec& spec_;
  gguf::GgufWriter writer_;
};

// GLM-4.5's multi-token-prediction head as its converter writes it: after the model's
// blocks, a whole MoE block of its own plus the NextN projection and norms — tensors the
// file carries and pshard leaves unread.
Status add_nextn_blocks(const ModelHParams& hp, ModelWriter& m, std::set<std::string>& written) {
  const int64_t d = hp.n_embd;
  for (int64_t il = hp.n_layer; il < hp.n_layer + hp.n_nextn; ++il) {
    for (SubLayerKind kind : {SubLayerKind::kAttention, SubLayerKind::kMoe})
      for (const TensorSpec& t : sublayer_tensor_specs(hp, {kind, il, "nextn"}))
        if (t.required && written.insert(t.name).second)
          PSHARD_RETURN_IF_ERROR(m.add(t));
    const std::string p = "blk." + std::to_string(il) + ".nextn.";
    PSHARD_RETURN_IF_ERROR(m.add_weight(p + "eh_proj.weight", {2 * d, d}));
    for (const char* norm : {"enorm", "hnorm", "shared_head_norm"})
      PSHARD_RETURN_IF_ERROR(m.add_vector(p + norm + ".weight", d, 1.0f, 0.1f));
  }
  return Status::ok_status();
}

} // namespace

Status parse_type_overrides(const std::string& text, ModelSpec* spec) {
  static const char* kClasses[] = {"token_embd",     "output",       "attn_q",        "attn_k",
                                   "attn_v",         "attn_output",  "ffn_gate",      "ffn_up",
                                   "ffn_down",       "ffn_gate_inp", "ffn_gate_shexp", "ffn_up_shexp",
                                   "ffn_down_shexp"};
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      return invalid_argument("override '" + item + "' should look like CLASS=TYPE, e.g. ffn_down=f32");
    const std::string cls = item.substr(0, eq);
    bool known = false;
    std::string list;
    for (const char* c : kClasses) {
      known = known || cls == c;
      list += (list.empty() ? "" : ", ") + std::string(c);
    }
    if (!known)
      return invalid_argument("unknown tensor class '" + cls + "'; classes: " + list);
    PSHARD_ASSIGN_OR_RETURN(spec->overrides[cls], parse_tensor_type(item.substr(eq + 1)));
  }
  return Status::ok_status();
}

Status write_model(const ModelSpec& s, const std::string& path) {
  PSHARD_ASSIGN_OR_RETURN(ModelHParams hp, hparams_of_spec(s));
  ModelWriter m(s);
  gguf::GgufWriter& w = m.writer();
  write_model_metadata(s, hp, w);
  int64_t n_vocab = s.n_vocab;
  if (!s.tokenizer_from.empty()) {
    if (!s.control_tokens.empty() || !s.user_tokens.empty())
      return invalid_argument("--control-tokens and --user-tokens add to the generated "
                              "vocabulary, not to one copied with --tokenizer-from; give one or "
                              "the other");
    PSHARD_ASSIGN_OR_RETURN(int64_t copied, copy_tokenizer(s.tokenizer_from, w));
    if (n_vocab != 0 && n_vocab != copied)
      return invalid_argument("--vocab " + std::to_string(n_vocab) + " differs from the " +
                              std::to_string(copied) + " tokens of " + s.tokenizer_from +
                              "; leave --vocab out to use the tokenizer's size");
    n_vocab = copied;
  } else {
    n_vocab = n_vocab ? n_vocab : 512;
    PSHARD_RETURN_IF_ERROR(add_synthetic_vocab(n_vocab, s.control_tokens, s.user_tokens, w));
  }
  hp.n_vocab = n_vocab;
  w.set(s.arch + ".vocab_size", {static_cast<uint32_t>(n_vocab)});
  // Embedding and head first, then the layers: the order llama.cpp's converter writes.
  std::vector<SubLayer> order = model_sublayers(hp);
  std::stable_partition(order.begin(), order.end(), [](const SubLayer& sl) { return sl.layer < 0; });
  // Tensors every block reads (LongRoPE's factors) are listed by each; written once.
  std::set<std::string> written;
  for (const SubLayer& sl : order)
    for (const TensorSpec& t : sublayer_tensor_specs(hp, sl))
      if (t.required &&
          !(sl.kind == SubLayerKind::kHead && hp.tied_output &&
            t.role == WeightRole::kOutput) && // tied: token_embd already written
          written.insert(t.name).second)
        PSHARD_RETURN_IF_ERROR(m.add(t));
  PSHARD_RETURN_IF_ERROR(add_nextn_blocks(hp, m, written));
  if (s.rerank && !hp.causal) {
    // An encoder's, as llama.cpp converts bge-reranker (RoBERTa's classification head):
    // a tanh pooler, then one raw score; the pair is framed by the vocabulary, no prompt.
    PSHARD_RETURN_IF_ERROR(m.add_weight("cls.weight", {hp.n_embd, hp.n_embd}));
    PSHARD_RETURN_IF_ERROR(m.add_vector("cls.bias", hp.n_embd, 0.0f, 0.05f));
    PSHARD_RETURN_IF_ERROR(m.add_weight("cls.output.weight", {hp.n_embd, 1}));
    PSHARD_RETURN_IF_ERROR(m.add_vector("cls.output.bias", 1, 0.0f, 0.05f));
  } else if (s.rerank) {
    PSHARD_RETURN_IF_ERROR(m.add_weight("cls.output.weight", {hp.n_embd, 2}));
    w.set(s.arch + ".classifier.output_labels",
          {gguf::Array{gguf::ValueType::kString, {{std::string("yes")}, {std::string("no")}}}});
    if (!s.rerank_prompt_builtin)
      w.set("tokenizer.chat_template.rerank", {std::string(kQwen3RerankPrompt)});
  }
  if (s.dense_projection > 0) { // ggml's dims: [in, out]
    const std::string a = s.arch + ".";
    PSHARD_RETURN_IF_ERROR(m.add_weight("dense_2.weight", {hp.n_embd, s.dense_projection}));
    PSHARD_RETURN_IF_ERROR(m.add_weight("dense_3.weight", {s.dense_projection, hp.n_embd}));
    w.set(a + "dense_2_feat_in", {static_cast<uint32_t>(hp.n_embd)});
    w.set(a + "dense_2_feat_out", {static_cast<uint32_t>(s.dense_projection)});
    w.set(a + "dense_3_feat_in", {static_cast<uint32_t>(s.dense_projection)});
    w.set(a + "dense_3_feat_out", {static_cast<uint32_t>(hp.n_embd)});
  }
  return w.write(path, gguf::GgufWriter::WriteOptions{s.sparse, s.split_max_tensors});
}

} // namespace pshard
