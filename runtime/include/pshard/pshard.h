/* pshard.h — the C API: run a GGUF model across the CPU and a small GPU with a
 * precompiled schedule (pshard-compile), from any language with a C FFI.
 *
 *   pshard_model_params mp = pshard_model_default_params();
 *   mp.schedule_path = "model.pshard";             // or NULL: everything on the CPU
 *   pshard_model* model;
 *   if (pshard_model_load("model.gguf", &mp, &model) != PSHARD_OK) {
 *     fprintf(stderr, "%s\n", pshard_last_error());
 *     return 1;
 *   }
 *   pshard_context_params cp = pshard_context_default_params();
 *   cp.backend = PSHARD_BACKEND_EMU;                // or CUDA on a GPU machine
 *   cp.vram_budget = 2ull << 30;
 *   pshard_context* ctx;
 *   pshard_context_create(model, &cp, &ctx);
 *
 *   pshard_token prompt[512];
 *   size_t n_prompt;
 *   pshard_model_tokenize_ex(model, "Once upon a time", 16, NULL, prompt, 512, &n_prompt);
 *   pshard_generate_params gp = pshard_generate_default_params();
 *   gp.n_predict = 64;
 *   pshard_context_generate(ctx, prompt, n_prompt, &gp, print_token, NULL, NULL);
 *   pshard_context_set_vram_budget(ctx, 512ull << 20); // the app needs VRAM back
 *
 *   pshard_stats st = pshard_stats_init();
 *   pshard_context_get_stats(ctx, &st);               // plans used, bytes streamed, peak VRAM
 *   pshard_context_free(ctx);
 *   pshard_model_free(model);
 *
 * Conventions (improving on llama.h):
 * - Opaque handles; functions are pshard_<object>_<verb>.
 * - Every fallible call returns a pshard_status; results come through out-pointers.
 *   On failure pshard_last_error() says what went wrong and what would fix it (the
 *   message of the last failed call on the calling thread).
 * - Parameter structs start with `size` (sizeof the struct the caller was compiled
 *   with), set by their *_default_params() / *_init(): new fields are only appended, so
 *   an older caller keeps working against a newer library.
 * - The library never aborts or exits on bad input.
 * - A context is used by one thread at a time; separate contexts may run concurrently.
 *   A batch (pshard_batch_*, below) takes requests from any thread while one steps it.
 */
#ifndef PSHARD_H
#define PSHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(PSHARD_SHARED)
#if defined(PSHARD_BUILD)
#define PSHARD_API __declspec(dllexport)
#else
#define PSHARD_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define PSHARD_API __attribute__((visibility("default")))
#else
#define PSHARD_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Raised when a struct's existing fields move (2: pshard_seq_event begins with `size`).
 * Fields appended to a struct with a leading `size` do not raise it. */
#define PSHARD_API_VERSION 2

/* Grouped as in runtime/core/status.h: caller errors, bad input data, environment, bugs. */
typedef enum pshard_status {
  PSHARD_OK = 0,
  PSHARD_ERROR_INVALID_ARGUMENT = 1,
  PSHARD_ERROR_OUT_OF_RANGE = 2,
  PSHARD_ERROR_NOT_FOUND = 3,
  PSHARD_ERROR_INVALID_FORMAT = 10, /* a file's bytes are malformed or truncated */
  PSHARD_ERROR_UNSUPPORTED = 11,
  PSHARD_ERROR_VERSION_MISMATCH = 12, /* a schedule schema this build does not read */
  PSHARD_ERROR_MODEL_MISMATCH = 13,   /* a schedule compiled for another model */
  PSHARD_ERROR_IO = 20,
  PSHARD_ERROR_OUT_OF_MEMORY = 21, /* host or device memory, or a budget too small */
  PSHARD_ERROR_DEVICE = 22,
  PSHARD_ERROR_UNAVAILABLE = 23, /* busy for now (a batch's queue is full): retry later */
  PSHARD_ERROR_INTERNAL = 30,
} pshard_status;

typedef enum pshard_backend {
  PSHARD_BACKEND_CPU = 0,  /* everything on the host (plans are looked up and reported) */
  PSHARD_BACKEND_EMU = 1,  /* the emulated GPU: host memory, throttled PCIe copies */
  PSHARD_BACKEND_CUDA = 2, /* an NVIDIA GPU (when built with CUDA) */
} pshard_backend;

typedef int32_t pshard_token;
typedef struct pshard_model pshard_model;
typedef struct pshard_context pshard_context;

/* ---- errors ------------------------------------------------------------------ */
PSHARD_API const char* pshard_last_error(void);
PSHARD_API const char* pshard_status_name(pshard_status status); /* "out of memory" */

/* ---- model ------------------------------------------------------------------- */
typedef struct pshard_model_params {
  size_t size;
  const char* schedule_path; /* a *.pshard artifact for this model, or NULL */
  bool use_mmap;             /* true (default): weights used in place from the file mapping;
                                false: read into RAM on huge pages (llama.cpp's --no-mmap) —
                                a copy, but decoding streams it faster */
  const char* mmproj_path;   /* a vision projector (llama.cpp's mmproj GGUF) for image
                                prompts (see "images" below), or NULL */
  int32_t image_max_tokens;  /* 0 (default): an image's longer side is capped at the
                                projector's clip.vision.image_size; else it keeps its size
                                rounded to whole image tokens, shrunk to at most this many
                                (llama.cpp's --image-max-tokens) */
  int32_t image_min_tokens;  /* with image_max_tokens: enlarged to at least this many */
  /* RoPE at load (llama.cpp's --rope-scaling, --rope-scale/--rope-freq-scale,
   * --rope-freq-base, --yarn-*), read as the file's rope.* keys would be: a context
   * longer than the file was converted for, e.g. Qwen3's 131072 positions as its model
   * card says (rope_scaling_type "yarn", rope_freq_scale 0.25, yarn_orig_ctx 32768).
   * NULL, 0 or negative (the defaults): the file's. A schedule is unaffected (its plans
   * do not depend on RoPE). */
  const char* rope_scaling_type; /* "none", "linear" or "yarn" */
  float rope_freq_base;
  float rope_freq_scale;  /* 1 / the scaling factor */
  int32_t yarn_orig_ctx;  /* the context the scaling extends */
  float yarn_ext_factor;  /* -1: the file's, else 1 with YaRN */
  float yarn_attn_factor; /* -1: the file's, else 1 */
  float yarn_beta_fast;   /* -1: the file's, else 32 */
  float yarn_beta_slow;   /* -1: the file's, else 1 */
  /* llama.cpp's --override-kv: "KEY=TYPE:VALUE" strings (TYPE int, float, bool or str),
   * each read in place of the file's KEY, one of the model's {arch}.* hyperparameters
   * (e.g. "qwen3moe.expert_used_count=int:4"). A key of another architecture, or one the
   * model never reads, is refused naming it; with a schedule only rope.* keys (the other
   * keys change what its plans were made for). NULL/0 (default): none. */
  const char* const* kv_overrides;
  size_t n_kv_overrides;
  /* LoRA adapters (llama.cpp's --lora / --lora-scaled): n_lora GGUF adapter files, each
   * merged at load into the weights it updates, W + scale·alpha/rank·B·A (lora_scales
   * NULL: 1 each). The file stays as it is (the merged pages are copy-on-write), and so
   * does a schedule's match. An adapter of another architecture, or one naming a matrix
   * the model lacks or of another shape, is refused naming it. NULL/0 (default): none. */
  const char* const* lora_paths;
  const float* lora_scales;
  size_t n_lora;
} pshard_model_params;

PSHARD_API pshard_model_params pshard_model_default_params(void);
/* Maps the GGUF, loads and verifies the schedule (identifier, version, model
 * fingerprint). */
PSHARD_API pshard_status pshard_model_load(const char* gguf_path, const pshard_model_params* params,
                                           pshard_model** out_model);
PSHARD_API void pshard_model_free(pshard_model* model);
PSHARD_API int32_t pshard_model_n_vocab(const pshard_model* model);
/* The model file's bytes (all its files for a split model). */
PSHARD_API uint64_t pshard_model_file_bytes(const pshard_model* model);
PSHARD_API bool pshard_model_has_schedule(const pshard_model* model);
PSHARD_API bool pshard_model_add_bos_by_default(const pshard_model* model);
/* The schedule's compiled VRAM budgets, ascending (none without a schedule): up to
 * `capacity` into `budgets`, the count into *n_budgets. */
PSHARD_API pshard_status pshard_model_schedule_budgets(const pshard_model* model, uint64_t* budgets,
                                                       size_t capacity, size_t* n_budgets);
/* What loading the model noticed without failing (an unknown tokenizer.ggml.pre, for
 * one), one sentence per line; "" when nothing. Valid while the model lives. */
PSHARD_API const char* pshard_model_load_warnings(const pshard_model* model);

/* Text -> tokens, for every vocabulary pshard reads: SentencePiece BPE ("llama") and
 * Unigram ("t5"), byte-level BPE ("gpt2"), WordPiece ("bert"). */
typedef struct pshard_tokenize_params {
  size_t size;
  bool add_special;   /* true (default): BOS (and EOS) where the model's metadata asks for them
                         (tokenizer.ggml.add_bos_token / add_eos_token), as llama.cpp's
                         add_special */
  bool parse_special; /* true (default): text matching a control token ("<s>", "<|im_end|>")
                         becomes that token; false: it is tokenized as plain text. User-defined
                         tokens are matched either way. */
} pshard_tokenize_params;

PSHARD_API pshard_tokenize_params pshard_tokenize_default_params(void);
/* *n_tokens receives the count; PSHARD_ERROR_OUT_OF_RANGE (with the count needed in
 * *n_tokens) when `capacity` is too small. `params` may be NULL (the defaults). */
PSHARD_API pshard_status pshard_model_tokenize_ex(const pshard_model* model, const char* text,
                                                  size_t text_len,
                                                  const pshard_tokenize_params* params,
                                                  pshard_token* tokens, size_t capacity,
                                                  size_t* n_tokens);
/* The first API's form: add_bos forces BOS (when the vocabulary has one) rather than
 * following the metadata; control tokens are parsed, as pshard_model_tokenize_ex's
 * default. */
PSHARD_API pshard_status pshard_model_tokenize(const pshard_model* model, const char* text,
                                               size_t text_len, bool add_bos, pshard_token* tokens,
                                               size_t capacity, size_t* n_tokens);
/* Tokens -> text (control tokens dropped, SPM's leading space removed; byte-level BPE
 * gives back the exact bytes). Writes up to `capacity` bytes, no terminator; *text_len
 * receives the full length. */
PSHARD_API pshard_status pshard_model_detokenize(const pshard_model* model,
                                                 const pshard_token* tokens, size_t n_tokens,
                                                 char* text, size_t capacity, size_t* text_len);

/* One token's bytes as text (SPM "▁" -> " ", byte tokens -> their byte, control tokens ->
 * ""); a token may hold part of a UTF-8 character. Writes up to `capacity` bytes, no
 * terminator; *text_len receives the full length. An id outside the vocabulary:
 * PSHARD_ERROR_OUT_OF_RANGE. */
PSHARD_API pshard_status pshard_model_token_to_piece(const pshard_model* model, pshard_token token,
                                                     char* text, size_t capacity, size_t* text_len);

/* A code model's fill-in-the-middle markers: the prompt
 *   [repo]name\n [file_sep]path\ntext\n ... [prefix]before[suffix]after[middle]
 * asks for what goes between `before` and `after` (Qwen2.5-Coder, StarCoder, CodeLlama,
 * DeepSeek-Coder, Codestral). Ids from the file's tokenizer.ggml.fim_*_token_id keys, else
 * from the markers' known texts; -1 where the model has none. */
typedef struct pshard_fim_tokens {
  size_t size;
  pshard_token prefix, suffix, middle; /* all three, or the model cannot fill in */
  pshard_token repo, file_sep;         /* repository-level context (Qwen2.5-Coder) */
} pshard_fim_tokens;
PSHARD_API pshard_fim_tokens pshard_fim_tokens_init(void);
/* Writes up to out->size bytes. */
PSHARD_API pshard_status pshard_model_fim_tokens(const pshard_model* model, pshard_fim_tokens* out);

/* ---- chat templates ----------------------------------------------------------- */
/* A conversation rendered as the prompt text a chat model expects. pshard recognises the
 * family of the model's Jinja template (tokenizer.chat_template) as llama.cpp does and
 * renders it natively; tokenize the text afterwards.
 *
 *   pshard_chat_message chat[] = {{"system", "Be brief."}, {"user", "Hi"}};
 *   size_t len = 0;
 *   pshard_chat_apply_template(model, NULL, chat, 2, true, NULL, 0, &len); // size it
 *   char* text = malloc(len);
 *   pshard_chat_apply_template(model, NULL, chat, 2, true, text, len, &len);
 */
typedef struct pshard_chat_message {
  const char* role;    /* "system", "user", "assistant" (some templates take others) */
  const char* content; /* NUL-terminated UTF-8 */
} pshard_chat_message;

/* Renders `messages` with the template named `template_name` (one of
 * pshard_chat_builtin_templates) or, when it is NULL, the model's own; `model` may be NULL
 * when a name is given. add_assistant appends the opening of the assistant's turn so that
 * the model answers next. Writes up to `capacity` bytes (no terminator) and the full
 * length into *text_len, so a first call with capacity 0 sizes the buffer. An unknown
 * name or an unrecognised template: PSHARD_ERROR_NOT_FOUND / PSHARD_ERROR_UNSUPPORTED
 * with the known names in pshard_last_error(). */
PSHARD_API pshard_status pshard_chat_apply_template(const pshard_model* model,
                                                    const char* template_name,
                                                    const pshard_chat_message* messages,
                                                    size_t n_messages, bool add_assistant,
                                                    char* text, size_t capacity, size_t* text_len);
/* The template names pshard renders: up to `capacity` static strings into `names`, the
 * count into *n_names. */
PSHARD_API pshard_status pshard_chat_builtin_templates(const char** names, size_t capacity,
                                                       size_t* n_names);
/* The name of the template pshard_chat_apply_template(model, NULL, ...) uses (a static
 * string), or the error saying why there is none. */
PSHARD_API pshard_status pshard_model_chat_template(const pshard_model* model, const char** name);

/* ---- context ----------------------------------------------------------------- */
/* KV cache element types: the values are ggml's type ids. */
typedef enum pshard_kv_type {
  PSHARD_KV_DEFAULT = -1,
  PSHARD_KV_F32 = 0,
  PSHARD_KV_F16 = 1,
  PSHARD_KV_Q8_0 = 8,
} pshard_kv_type;

typedef struct pshard_context_params {
  size_t size;
  pshard_backend backend;
  uint64_t vram_budget;        /* bytes the device may use (with a schedule) */
  int32_t n_threads;           /* 0: all hardware threads */
  int64_t n_ctx;               /* 0: the model's, at most 4096 and the compiled context */
  int64_t n_batch;             /* without a schedule: most tokens per pass */
  double emu_pcie_gbps;        /* emu link, GB/s; 0: what the schedule was planned with */
  double emu_pcie_latency_us;  /* emu link latency per copy */
  uint64_t emu_memory_bytes;   /* emu capacity; 0: the schedule's machine VRAM (or the
                                  largest budget) */
  int32_t emu_compute_threads; /* emu kernel threads (default 1) */
  bool trace;                  /* record a timeline for pshard_context_write_trace */
  /* KV cache element types (llama.cpp's -ctk / -ctv). DEFAULT: the schedule's
   * (pshard-compile --kv-type), or F16 without one; with a schedule another type is
   * refused, naming the fix. Q8_0 needs a head size that is a multiple of 32. */
  pshard_kv_type kv_type_k;
  pshard_kv_type kv_type_v;
  /* Speculative decoding: the most tokens a pass of pshard_context_generate may check
   * besides the sampled one (pshard_generate_params.draft_max); the context holds
   * logits for draft_max + 1 tokens, at most its largest tier. 0 (default): none. */
  int32_t draft_max;
  /* Whole KV caches for sliding-window layers (Gemma 2/3, gpt-oss) instead of rings of
   * window + largest pass positions, so pshard_context_rewind may go to any position
   * (llama.cpp's --swa-full). With a schedule it must be one compiled with
   * pshard-compile --swa-full. Default false. */
  bool swa_full;
  /* Keep an image prompt's sequence after pshard_context_generate_with_images — its KV
   * cache, a second one of n_ctx positions in host memory — so that the next image
   * prompt starting like it (a conversation's next turn: the same text and images, then
   * more) decodes only what is new (pshard_generate_result.n_cached). Default true;
   * false frees it after each call. */
  bool keep_image_sequence;
  /* Speculative decoding from a small model of the same vocabulary (llama.cpp's
   * -md/--model-draft), e.g. a family's 0.6B drafting for its 32B: with draft_max, each
   * pass of pshard_context_generate checks the draft model's most likely next tokens in
   * place of prompt lookup's; the tokens are still those of plain decoding. The draft
   * model runs on the CPU in a session of the context's size and threads; it must outlive
   * the context. A vocabulary that differs is refused here. NULL (default): none. Not
   * for image prompts (they do not draft). */
  pshard_model* draft_model;
  /* With draft_model: a draft stops at a token the draft model gives less than this
   * probability (llama.cpp's --draft-p-min); 0 drafts draft_max tokens every pass.
   * Default 0.75. */
  float draft_p_min;
} pshard_context_params;

PSHARD_API pshard_context_params pshard_context_default_params(void);
PSHARD_API pshard_status pshard_context_create(pshard_model* model,
                                               const pshard_context_params* params,
                                               pshard_context** out_context);
PSHARD_API void pshard_context_free(pshard_context* context);
PSHARD_API int64_t pshard_context_n_ctx(const pshard_context* context);
PSHARD_API int64_t pshard_context_n_past(const pshard_context* context);
PSHARD_API int32_t pshard_context_n_threads(const pshard_context* context);
/* Host memory the context allocated (KV cache, activations). */
PSHARD_API uint64_t pshard_context_host_bytes(const pshard_context* context);
/* Forgets the sequence (the KV cache is reused from position 0). */
PSHARD_API void pshard_context_reset(pshard_context* context);
/* Between passes: moves to the plans of the largest compiled budget <= bytes (0: all
 * on the CPU). Below the smallest compiled budget: PSHARD_ERROR_OUT_OF_MEMORY and the
 * context keeps its budget. */
PSHARD_API pshard_status pshard_context_set_vram_budget(pshard_context* context, uint64_t bytes);

/* Appends tokens; *logits (n_vocab floats, valid until the next call) are those of
 * the last one. */
PSHARD_API pshard_status pshard_context_decode(pshard_context* context, const pshard_token* tokens,
                                               size_t n_tokens, const float** logits);
/* For an app's own speculative decoding (a draft model in a second context, say):
 * appends tokens and returns every one's logits, n_tokens rows of n_vocab floats (valid
 * until the next call), for at most draft_max + 1 tokens (pshard_context_params); on cpu
 * and emu each row is bit for bit what one-token decodes give. */
PSHARD_API pshard_status pshard_context_decode_all(pshard_context* context,
                                                   const pshard_token* tokens, size_t n_tokens,
                                                   const float** logits);
/* Forgets the positions from n_past on (rejected drafted tokens): the next decode writes
 * over their KV rows. PSHARD_ERROR_OUT_OF_RANGE past the current position, and for a
 * model with sliding-window layers, whose caches are rings of window + largest pass
 * positions, before the position whose window the rings still hold (0 always works;
 * pshard-compile --swa-full keeps whole caches). */
PSHARD_API pshard_status pshard_context_rewind(pshard_context* context, int64_t n_past);

/* The context's sequence saved to a file and read back (llama.cpp's llama_state_save_file
 * and _load_file), so an app decodes a long system prompt or a conversation once and
 * starts from it in a later run: `tokens` are those the context's n_past positions hold
 * (PSHARD_ERROR_INVALID_ARGUMENT for another count), saved with each layer's KV rows of
 * those positions in the context's KV types (a recurrent layer's state, a sliding window's
 * ring), the model's fingerprint and the context's size. The file is written under a
 * temporary name and renamed when complete. Under a schedule the device memory is
 * released first; the next pass uploads its plan's resident set again. The image
 * sequence of pshard_context_generate_with_images is not saved.
 *
 * Loading replaces the sequence: the context then holds the saved positions (n_past =
 * *n_tokens) and `tokens_out` their tokens (capacity too small: PSHARD_ERROR_OUT_OF_RANGE
 * with *n_tokens the count needed, the context unchanged). A file of another model, of a
 * context of another size or KV types (or swa_full), or a truncated or foreign file, is
 * PSHARD_ERROR_INVALID_ARGUMENT or _INVALID_FORMAT naming what differs, the context
 * unchanged; a read that fails part way leaves it empty (n_past 0). Decoding on from a
 * loaded state gives, bit for bit on cpu and emu, what decoding on from the original gives.
 * pshard_generate_params.held gives the sampler's penalties the loaded tokens. */
PSHARD_API pshard_status pshard_context_state_save_file(pshard_context* context, const char* path,
                                                        const pshard_token* tokens,
                                                        size_t n_tokens);
PSHARD_API pshard_status pshard_context_state_load_file(pshard_context* context, const char* path,
                                                        pshard_token* tokens_out, size_t capacity,
                                                        size_t* n_tokens);

/* Embeddings (embedding models such as Qwen3-Embedding; any model gives them): the final
 * hidden states after the output norm, pooled into one vector per text. The values are
 * GGUF's pooling_type. */
typedef enum pshard_pooling {
  PSHARD_POOLING_MODEL = -1, /* the model's pooling_type (none named: an error) */
  PSHARD_POOLING_NONE = 0,   /* every token's row */
  PSHARD_POOLING_MEAN = 1,
  PSHARD_POOLING_CLS = 2,  /* the first token's row */
  PSHARD_POOLING_LAST = 3, /* the last token's row (decoder-only embedding models) */
  PSHARD_POOLING_RANK = 4, /* rerankers: one token's row through the model's
                              classification head (cls.output) — the last for a decoder
                              (Qwen3-Reranker: one score per label, softmaxed, so the
                              first label's, "yes", is the relevance in 0..1), the first
                              for an encoder (bge-reranker: a tanh pooler, cls, then one
                              raw score) */
} pshard_pooling;

PSHARD_API int32_t pshard_model_n_embd(const pshard_model* model);
/* The model's pooling_type, or PSHARD_POOLING_MODEL when it names none. */
PSHARD_API pshard_pooling pshard_model_pooling(const pshard_model* model);
/* A reranker's: its classification head's labels (0 without a head), and the prompt of a
 * query and a document (GGUF's tokenizer.chat_template.rerank, "{query}" and "{document}"
 * in it to fill; NULL when the model has none). Owned by the model. */
PSHARD_API int32_t pshard_model_n_cls_labels(const pshard_model* model);
PSHARD_API const char* pshard_model_rerank_template(const pshard_model* model);
/* The tokens a reranker scores for a query and a document: its prompt filled and
 * tokenized, or, for an encoder reranker without one (bge-reranker), the pair framed as
 * its tokenizer does ("<s> query </s></s> document </s>"; WordPiece: "[CLS] query [SEP]
 * document [SEP]"). PSHARD_ERROR_INVALID_ARGUMENT naming why for a model that is not a
 * reranker or cannot frame the two; capacity as pshard_model_tokenize_ex. */
PSHARD_API pshard_status pshard_model_rerank_tokenize(const pshard_model* model, const char* query,
                                                      size_t query_len, const char* document,
                                                      size_t document_len, pshard_token* tokens,
                                                      size_t capacity, size_t* n_tokens);

typedef struct pshard_embed_params {
  size_t size;
  pshard_pooling pooling; /* default PSHARD_POOLING_MODEL */
  bool normalize;         /* to unit Euclidean length (default true) */
  int32_t dimensions;     /* keep the first this many values, before normalizing
                             (Matryoshka models); 0 (default): all n_embd */
} pshard_embed_params;

PSHARD_API pshard_embed_params pshard_embed_default_params(void);
/* The embedding of `tokens` read as one sequence from position 0 — the context's sequence
 * is replaced, as after pshard_context_reset — into `out`: the vector's width (dimensions
 * or n_embd) floats, times n_tokens with PSHARD_POOLING_NONE, or the scores of the
 * classification head's labels with PSHARD_POOLING_RANK (normalize and dimensions do not
 * apply); *n_out says how many.
 * PSHARD_ERROR_OUT_OF_RANGE when capacity is smaller (*n_out still says how many) or the
 * text is longer than the context. Runs under the context's plans like decoding; on cpu
 * and emu the vector is bit for bit the same whatever the plan. A model that attends both
 * ways (a BERT encoder, attention.causal false) reads the text in one pass (its context's
 * passes hold the whole context) and only embeds: generating with it is
 * PSHARD_ERROR_UNSUPPORTED. */
PSHARD_API pshard_status pshard_context_embed(pshard_context* context, const pshard_token* tokens,
                                              size_t n_tokens, const pshard_embed_params* params,
                                              float* out, size_t capacity, size_t* n_out);

typedef struct pshard_logit_bias {
  pshard_token token;
  float bias;
} pshard_logit_bias;

typedef struct pshard_generate_params {
  size_t size;
  int32_t n_predict; /* new tokens at most; < 0: until the context is full */
  bool ignore_eos;
  float temperature;    /* <= 0: greedy */
  int32_t top_k;        /* 0: off */
  float top_p;          /* 1: off */
  float min_p;          /* 0: off */
  float repeat_penalty; /* 1: off */
  int32_t repeat_last_n;
  uint64_t seed;
  int32_t top_logprobs; /* report the N most likely tokens of each position */
  /* Speculative decoding: each decode pass also checks up to draft_max drafted tokens —
   * the context's draft model's (pshard_context_params.draft_model), else those that
   * followed the last earlier occurrence of the context's final n tokens
   * (lookup_ngram_max down to lookup_ngram_min). The tokens are those of plain decoding
   * for any sampler and seed (bit-identical on cpu and emu); only the passes differ.
   * Capped by the context's draft_max; 0 (default): off. */
  int32_t draft_max;
  int32_t lookup_ngram_min; /* default 2 */
  int32_t lookup_ngram_max; /* default 4 */
  /* true (default): check only as many drafted tokens as pay, by the measured pass times
   * and acceptance so far; false: every drafted token up to draft_max. */
  bool lookup_adaptive;
  /* Structured output: only text this GBNF grammar (NUL-terminated; start rule `root`)
   * or this JSON Schema (NUL-terminated JSON text) derives is generated, and
   * end-of-generation only once the text is whole (it then ends generation even with
   * ignore_eos). The draw is the model's distribution restricted to the tokens that fit.
   * NULL (default): none; both: PSHARD_ERROR_INVALID_ARGUMENT, as is a malformed grammar
   * or schema (pshard_last_error() names line and column, or the schema's JSON pointer);
   * PSHARD_ERROR_UNSUPPORTED for schema keywords pshard cannot enforce. The dialect and
   * the schema subset: pshard_json_schema_to_grammar, below. */
  const char* grammar;
  const char* json_schema;
  /* With grammar or json_schema: NULL (default) constrains from the first token; text
   * here (NUL-terminated, e.g. "<tool_call>") leaves generation free until the generated
   * text contains it, and from its first byte on the text must follow the grammar, whose
   * sentences must start with it (how a model may answer in prose or call a tool). */
  const char* grammar_trigger;
  /* OpenAI's penalties, over the same last repeat_last_n tokens as repeat_penalty: a
   * token's logit loses frequency_penalty per occurrence there and presence_penalty once
   * if it occurs. 0 (default): off; any finite value. */
  float frequency_penalty;
  float presence_penalty;
  /* Added to the tokens' logits before anything else; -INFINITY bans a token. Copied by
   * the call; tokens past the vocabulary are ignored. */
  const pshard_logit_bias* logit_bias;
  size_t n_logit_bias;
  /* With grammar_trigger: a thinking model's thought, by its tags (NUL-terminated, e.g.
   * "<think>" and "</think>"). A generated text that opens with thought_open (after
   * whitespace) ignores the trigger until thought_close has come, so a call drafted while
   * thinking stays free and only the answer's is constrained; any other text is watched
   * from its first byte. thought_close alone: the prompt opened the thought (a template
   * whose generation prompt ends with "<think>\n"), so the text starts inside it. NULL
   * (default): none; thought_open alone, or either without a trigger:
   * PSHARD_ERROR_INVALID_ARGUMENT. */
  const char* thought_open;
  const char* thought_close;
  /* The tokens the context held before this call, in order (those of earlier calls, or
   * of pshard_context_state_load_file): the sampler's penalties (repeat_last_n) and
   * prompt lookup see them as if decoded in this call, so an answer after a loaded state
   * is the answer after decoding it all. Not decoded. NULL (default): none. */
  const pshard_token* held;
  size_t n_held;
  /* llama.cpp's other samplers, by its names and defaults. The chain: logit_bias ->
   * grammar -> the stages in `samplers`' order (by default penalties -> DRY -> top_n_sigma
   * -> top_k -> temperature (dynamic with dynatemp_range) -> typical_p -> top_p -> min_p
   * -> XTC) -> draw; temperature <= 0: greedy after the penalties and DRY; Mirostat
   * replaces every stage but those two.
   * typical_p: locally typical sampling, in (0, 1]; 1 (default): off.
   * top_n_sigma: keep the logits within n standard deviations of the largest; <= 0
   * (default): off. xtc_probability (default 0: off): how often "exclude top choices"
   * drops every token of probability >= xtc_threshold (default 0.1) but the least likely
   * of them, when two or more are. dynatemp_range (default 0: off): the temperature moves
   * within temperature +- range, by the normalised entropy to the power dynatemp_exponent
   * (default 1). mirostat 1 or 2 (default 0: off): Mirostat's version, aiming at a
   * surprise of mirostat_tau bits (default 5) with learning rate mirostat_eta (default
   * 0.1); it replaces top_k, top_p, typical_p, min_p and XTC. Out of range:
   * PSHARD_ERROR_INVALID_ARGUMENT naming the field. */
  float typical_p;
  float top_n_sigma;
  float xtc_probability;
  float xtc_threshold;
  float dynatemp_range;
  float dynatemp_exponent;
  int32_t mirostat;
  float mirostat_tau;
  float mirostat_eta;
  /* DRY ("don't repeat yourself"): a token that would extend a repeat of n >=
   * dry_allowed_length (default 2) tokens found in the last dry_penalty_last_n (default
   * -1: all; 0: off) loses dry_multiplier x dry_base^(n - dry_allowed_length) of its logit
   * (multiplier default 0: off; base default 1.75, >= 1). A repeat never runs across a
   * token whose text holds one of the dry_sequence_breakers (NUL-terminated strings;
   * NULL (default): "\n", ":", "\"", "*"; non-NULL with n_dry_sequence_breakers 0: none).
   * Copied by the call. */
  float dry_multiplier;
  float dry_base;
  int32_t dry_allowed_length;
  int32_t dry_penalty_last_n;
  const char* const* dry_sequence_breakers;
  size_t n_dry_sequence_breakers;
  /* The sampler's stages in order, as llama.cpp's --samplers: names separated by ';'
   * among penalties, dry, top_n_sigma, top_k, typ_p, top_p, min_p, xtc, temperature
   * (or llama.cpp's other spellings: "top-k", "topk", "nucleus", "temp", ...). A stage
   * left out does not run (no temperature: 1); those that read probabilities (typ_p,
   * top_p, min_p, xtc) take the softmax of the tokens left at the temperature applied
   * before them. "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature" is
   * llama.cpp's order. NULL (default): pshard's order, above. An unknown name or a stage
   * named twice: PSHARD_ERROR_INVALID_ARGUMENT. Copied by the call. */
  const char* samplers;
} pshard_generate_params;

PSHARD_API pshard_generate_params pshard_generate_default_params(void);

/* The GBNF grammar pshard generates from a JSON Schema (what json_schema above
 * constrains to), to show or edit and pass back as `grammar`. Writes at most `capacity`
 * bytes, NUL-terminated, and the full length (without the NUL) to *length;
 * PSHARD_ERROR_OUT_OF_RANGE when it does not fit (call again with *length + 1).
 * Supported: type (and lists of types), properties/required/additionalProperties,
 * items/prefixItems/minItems/maxItems, enum/const, anyOf/oneOf/allOf of objects,
 * $ref into #/$defs and #/definitions (recursive too), string length, pattern and
 * format (date, time, date-time, uuid), integer bounds; annotation keywords are
 * ignored; any other constraint gives PSHARD_ERROR_UNSUPPORTED naming it. */
PSHARD_API pshard_status pshard_json_schema_to_grammar(const char* json_schema, char* grammar,
                                                       size_t capacity, size_t* length);
/* Whether `grammar` (NUL-terminated GBNF) is one pshard_generate_params.grammar takes:
 * PSHARD_OK, or PSHARD_ERROR_INVALID_ARGUMENT with pshard_last_error() naming line and
 * column. The dialect: `name ::= body` rules (the start rule is `root`), "literals",
 * [classes], [^negated], `.`, ( groups ), `|`, `*` `+` `?` `{m}` `{m,}` `{m,n}`, `#`
 * comments; left recursion is refused. */
PSHARD_API pshard_status pshard_grammar_validate(const char* grammar);

typedef struct pshard_token_event {
  pshard_token token; /* -1 for the final flush of a split character */
  const char* text;   /* complete UTF-8 ready to show (may be empty) */
  size_t text_len;
  int32_t n_top; /* entries in top_ids / top_logprobs */
  const pshard_token* top_ids;
  const float* top_logprobs; /* log-softmax of the raw logits, highest first */
} pshard_token_event;

/* Return false to stop after this token. */
typedef bool (*pshard_token_callback)(const pshard_token_event* event, void* user_data);

typedef struct pshard_generate_result {
  size_t size;
  int64_t n_prompt;
  int64_t n_generated;
  double prompt_ms;      /* prefill of the whole prompt */
  double generation_ms;  /* every decode step after it */
  double first_token_ms; /* from the start until the first token is sampled */
  int64_t n_decode_passes; /* decode passes after the prompt */
  int64_t n_drafted;       /* tokens drafted by prompt lookup */
  int64_t n_accepted;      /* of those, sampled as drafted */
  /* pshard_context_generate_with_images: the prompt's images, those found among the
   * context's recently encoded ones (the same pixels: a conversation's earlier images)
   * and not encoded again, and the time spent resizing and encoding them. */
  int64_t n_images;
  int64_t n_images_reused;
  double image_ms;
  /* Of n_prompt, the positions kept from the context's previous image prompt
   * (pshard_context_params.keep_image_sequence), not decoded again. */
  int64_t n_cached;
} pshard_generate_result;

PSHARD_API pshard_generate_result pshard_generate_result_init(void);
/* Prefill, then sample and decode until n_predict tokens or end of generation, calling
 * on_token for each. `result` may be NULL. */
PSHARD_API pshard_status pshard_context_generate(pshard_context* context,
                                                 const pshard_token* prompt, size_t n_prompt,
                                                 const pshard_generate_params* params,
                                                 pshard_token_callback on_token, void* user_data,
                                                 pshard_generate_result* result);

/* ---- images (vision-language models) ------------------------------------------ */
/* Images in a prompt of a Qwen-VL language model (general.architecture qwen2vl:
 * Qwen2-VL, Qwen2.5-VL; qwen3vl, qwen3vlmoe: Qwen3-VL; qwen35, qwen35moe: Qwen3.5) loaded
 * with its projector (pshard_model_params.mmproj_path). The prompt's text names each
 * image's place with llama.cpp's marker "<__media__>" or with Qwen2-VL's
 * "<|vision_start|><|image_pad|><|vision_end|>" (what the chat template writes for an
 * image): images[i] takes the i-th place, so a conversation's images go in the order its
 * turns show them. Each image is resized as llama.cpp does for the projector, encoded,
 * and its tokens take its place; each image counts max(columns, rows) multimodal rotary
 * positions, as Qwen2-VL numbers them. A context runs image prompts on its backend and
 * schedule: a schedule compiled with --mmproj encodes each image by its vision plans on
 * the context's device (the language arena released first: the phases share the VRAM
 * budget in time), one without vision plans encodes them on the CPU. A batch
 * (pshard_seq_params.images) encodes its images on the CPU in pshard_batch_add and runs
 * their tokens under its schedule's plans like any others.
 *
 *   pshard_model_params mp = pshard_model_default_params();
 *   mp.mmproj_path = "mmproj-qwen2vl.gguf";
 *   pshard_model_load("qwen2vl.gguf", &mp, &model);   // then a context as above
 *   pshard_image* img;                                 // PNG/JPEG bytes, or raw RGB8:
 *   if (pshard_image_from_bytes(png, png_len, &img) != PSHARD_OK) { ... pshard_last_error() }
 *   // pshard_image_from_rgb(pixels, width, height, stride, &img);
 *   const char* text = "<__media__>What is in the picture?";
 *   pshard_context_generate_with_images(ctx, text, strlen(text), &img, 1, NULL, &gp,
 *                                       print_token, NULL, NULL);
 *   pshard_image_free(img);                            // the caller owns its images
 *
 * Errors: PSHARD_ERROR_INVALID_FORMAT for bytes that are no image stb_image reads (PNG,
 * JPEG, BMP, GIF, TGA, PNM); PSHARD_ERROR_OUT_OF_RANGE for a side of 0 or more than
 * PSHARD_IMAGE_MAX_SIDE pixels; PSHARD_ERROR_INVALID_ARGUMENT for a model loaded without
 * a projector, a prompt whose places and images differ in number;
 * loading a projector with a language model it does not fit (no multimodal RoPE, another
 * embedding width, another number of DeepStack layers) fails in pshard_model_load. */
#define PSHARD_IMAGE_MAX_SIDE 16384

typedef struct pshard_image pshard_image;

/* Decodes an encoded image (the bytes are copied; free them after the call). */
PSHARD_API pshard_status pshard_image_from_bytes(const void* data, size_t n_bytes,
                                                 pshard_image** out_image);
/* 8-bit RGB pixels, row-major: row y starts at pixels + y * stride (stride >= 3 * width
 * bytes); copied. */
PSHARD_API pshard_status pshard_image_from_rgb(const uint8_t* pixels, int32_t width, int32_t height,
                                               size_t stride, pshard_image** out_image);
PSHARD_API void pshard_image_free(pshard_image* image);
PSHARD_API int32_t pshard_image_width(const pshard_image* image);
PSHARD_API int32_t pshard_image_height(const pshard_image* image);
/* Whether the model was loaded with a projector, so that prompts may carry images. */
PSHARD_API bool pshard_model_has_vision(const pshard_model* model);

/* pshard_context_generate for a prompt given as text with `n_images` images (tokenized
 * with `tokenize`, NULL: the defaults). With images it runs in a sequence of its own,
 * of the context's size, KV types, backend and budget: the context's own sequence
 * (pshard_context_decode) is left as it was (under a schedule its next pass uploads its
 * plan's resident weights again). That sequence is kept for the next call (unless
 * pshard_context_params.keep_image_sequence is false), which decodes only what follows
 * the start its prompt shares with it: the same text, the same images at the same
 * places. With no images it is pshard_context_generate on the text's tokens (a text
 * naming an image place is refused either way). */
PSHARD_API pshard_status pshard_context_generate_with_images(
    pshard_context* context, const char* text, size_t text_len, const pshard_image* const* images,
    size_t n_images, const pshard_tokenize_params* tokenize, const pshard_generate_params* params,
    pshard_token_callback on_token, void* user_data, pshard_generate_result* result);

/* ---- statistics -------------------------------------------------------------- */
typedef struct pshard_stats {
  size_t size;
  int64_t passes;
  uint64_t vram_budget;     /* in force now */
  uint64_t peak_vram_bytes; /* the largest arena held at any moment */
  uint64_t bytes_streamed;  /* weights copied into streaming slots */
  uint64_t bytes_crossed;   /* activations and logits between host and device */
  uint64_t bytes_switched;  /* moved by budget and plan switches */
  int64_t budget_switches;
  size_t n_plans; /* plans used: read them with pshard_context_get_plan_stats */
  int64_t plan_switches;       /* residency moves on a tier or context-range change */
  double switch_ms;            /* wall time of all switches */
  double switch_predicted_ms;  /* their bytes at the schedule's PCIe pricing */
  int64_t graph_passes;        /* passes replayed as one device graph (CUDA graphs; 0 on
                                  cpu/emu, or with PSHARD_CUDA_GRAPHS=0) */
} pshard_stats;

typedef struct pshard_plan_stats {
  size_t size;
  uint64_t budget_bytes; /* the compiled budget (0: CPU only) */
  int64_t tier;          /* 0: no schedule */
  const char* strategy;  /* valid until the next call on the context */
  int64_t passes;
  int64_t tokens;
  double predicted_ms_per_pass; /* the mean over its passes, each at the context it ran at */
  double measured_ms_per_pass;
  uint64_t bytes_streamed;
  int64_t context; /* the plan's context range (its upper bound); 0: no schedule */
  /* Where its expert-level MoE blocks' routed experts ran, over all its passes: distinct
   * experts per block and pass, summed (0 on cpu, and for blocks placed whole); and how
   * many the plan expected on the host from its routing profile (uniform without one). */
  uint64_t experts_resident;
  uint64_t experts_copied;
  uint64_t experts_host;
  double predicted_experts_host;
} pshard_plan_stats;

PSHARD_API pshard_stats pshard_stats_init(void);
PSHARD_API pshard_plan_stats pshard_plan_stats_init(void);
PSHARD_API pshard_status pshard_context_get_stats(const pshard_context* context, pshard_stats* out);
PSHARD_API pshard_status pshard_context_get_plan_stats(const pshard_context* context, size_t index,
                                                       pshard_plan_stats* out);
PSHARD_API void pshard_context_reset_stats(pshard_context* context);
/* A Chrome/Perfetto trace of every pass since creation (params.trace must be set):
 * one track each for the CPU, device compute, weight copies and activation transfers. */
PSHARD_API pshard_status pshard_context_write_trace(const pshard_context* context,
                                                    const char* path);

/* ---- batches: many sequences, continuous batching ------------------------------- */
/* A batch serves many requests at once. Each pshard_batch_step() runs one forward pass
 * that carries the next token of every running sequence and chunks of the prompts still
 * being read (decode tokens first, so a long prompt never stalls the others' streams);
 * requests join and leave between passes, in the order they were added. Each request has
 * its own sampling parameters and seed, stop conditions and log-probabilities, and
 * streams its text (whole UTF-8 characters, stop strings never shown) to a callback or
 * a queue read with pshard_seq_poll().
 *
 *   pshard_batch_params bp = pshard_batch_default_params();
 *   bp.n_seq_max = 4;                               // sequences decoded together
 *   pshard_batch* batch;
 *   if (pshard_batch_create(model, &bp, &batch) != PSHARD_OK) { ... pshard_last_error() }
 *
 *   pshard_seq_params sp = pshard_seq_default_params();
 *   sp.text = "Once upon a time";
 *   sp.text_len = 16;
 *   sp.on_event = print_event;                      // NULL: read them with pshard_seq_poll
 *   pshard_generate_params gp = pshard_generate_default_params();
 *   gp.n_predict = 64;
 *   gp.temperature = 0;
 *   pshard_seq* seq;
 *   pshard_batch_add(batch, &sp, &gp, &seq);        // from any thread
 *   while (pshard_batch_wait(batch, 100))           // true while there is work
 *     pshard_batch_step(batch, NULL);               // one pass
 *   pshard_seq_free(seq);
 *   pshard_batch_free(batch);
 *
 * Threads: pshard_batch_add, pshard_batch_wait, pshard_batch_has_work,
 * pshard_batch_set_vram_budget, pshard_batch_get_stats, pshard_batch_get_plan_stats and
 * every pshard_seq_* call may be made from any thread while another thread steps, also
 * from inside an event callback. pshard_batch_step runs on one thread at a time
 * (concurrent calls wait for each other); callbacks run on the thread that steps, and
 * must not call pshard_batch_step. pshard_batch_free comes after every other call on
 * the batch has returned; sequences may be freed before or after it.
 *
 * A request that could never run (a prompt longer than n_ctx, n_predict past it, bad
 * sampling parameters) is refused by pshard_batch_add; one that cannot get a sequence or
 * KV space waits; past n_queue_max waiting requests pshard_batch_add returns
 * PSHARD_ERROR_UNAVAILABLE. When the KV cache is exhausted mid-generation the newest
 * sequence ends with PSHARD_FINISH_ERROR (PSHARD_ERROR_OUT_OF_MEMORY) so that the older
 * ones finish; no sequence's output is ever affected by another's. */
typedef struct pshard_batch pshard_batch;
typedef struct pshard_seq pshard_seq;

typedef struct pshard_batch_params {
  size_t size;
  pshard_backend backend;
  uint64_t vram_budget; /* with a schedule; 0: its largest compiled budget */
  int32_t n_threads;    /* CPU threads of each sequence's session; 0: all */
  int64_t n_ctx;        /* positions per sequence; 0: the model's, at most 4096 */
  int32_t n_seq_max;    /* sequences decoded together (llama-server's --parallel) */
  int32_t n_queue_max;  /* requests that may wait for a sequence */
  int64_t n_batch;      /* tokens one pass carries at most */
  double emu_pcie_gbps; /* as pshard_context_params */
  double emu_pcie_latency_us;
  uint64_t emu_memory_bytes;
  int32_t emu_compute_threads;
  bool prefix_cache; /* share the KV pages of prompts' common starts between requests
                        (a system prompt, a chat's earlier turns): default true */
  /* Speculative decoding: each decoding request may add up to draft_max tokens drafted
   * from its own text (prompt lookup) to a pass, from the tokens the others leave of
   * n_batch; the tokens are those of plain decoding. 0 (default): off; at most 64. */
  int32_t draft_max;
  /* Sliding-window layers (Gemma 2/3, gpt-oss) keep every position's KV instead of only
   * their last window's pages, which they otherwise give back as sequences move on
   * (llama.cpp's --swa-full). Default false. */
  bool swa_full;
  /* KV cache element types of every sequence's pages, as pshard_context_params'
   * (llama-server's --cache-type-k / -v): PSHARD_KV_Q8_0 takes 34 bytes per 32 values
   * where F16 takes 64. PSHARD_KV_DEFAULT (default): a schedule's --kv-type, else F16. */
  pshard_kv_type kv_type_k;
  pshard_kv_type kv_type_v;
  /* With draft_max: drafts come from this small model of the same vocabulary instead
   * (llama-server's -md), as pshard_context_params.draft_model: the draft model runs on
   * the CPU as a batch of its own — n_seq_max sequences of n_ctx positions, a prefix
   * cache — drafting for every decoding request in the same passes. It must outlive the
   * batch; a vocabulary that differs is refused here. NULL (default). */
  pshard_model* draft_model;
  float draft_p_min; /* as pshard_context_params.draft_p_min; default 0.75 */
} pshard_batch_params;

PSHARD_API pshard_batch_params pshard_batch_default_params(void);
/* Checks the parameters by opening one sequence, so a bad budget fails here. */
PSHARD_API pshard_status pshard_batch_create(pshard_model* model, const pshard_batch_params* params,
                                             pshard_batch** out_batch);
/* Ends what still runs (no more events) and frees the batch. */
PSHARD_API void pshard_batch_free(pshard_batch* batch);
PSHARD_API int64_t pshard_batch_n_ctx(const pshard_batch* batch);
PSHARD_API int32_t pshard_batch_n_seq_max(const pshard_batch* batch);

typedef enum pshard_finish_reason {
  PSHARD_FINISH_NONE = 0,      /* still running */
  PSHARD_FINISH_STOP = 1,      /* an end-of-generation token, a stop token or a stop string */
  PSHARD_FINISH_LENGTH = 2,    /* n_predict tokens, or the context is full */
  PSHARD_FINISH_CANCELLED = 3, /* pshard_seq_cancel, pshard_seq_free, a callback's false */
  PSHARD_FINISH_ERROR = 4,     /* see the event's error and error_message */
} pshard_finish_reason;

/* One per sampled token, and a last one (finish != PSHARD_FINISH_NONE) that may carry a
 * token too. Pointers are valid during the callback, or until the next pshard_seq_poll or
 * pshard_seq_free of the sequence. */
typedef struct pshard_seq_event {
  size_t size;        /* sizeof(pshard_seq_event): pshard_seq_poll writes no further (set it
                         with pshard_seq_event_init); in a callback, the library's size */
  int64_t seq_id;     /* pshard_seq_id() of the sequence */
  pshard_token token; /* -1: no new token (a last event) */
  const char* text;   /* new text to show (may be empty while a character or a possible
                         stop string is held back) */
  size_t text_len;
  float logprob; /* with pshard_seq_params.logprobs: the token's log-softmax */
  int32_t n_top; /* pshard_generate_params.top_logprobs alternatives, highest first */
  const pshard_token* top_ids;
  const float* top_logprobs;
  pshard_finish_reason finish;
  pshard_status error;       /* with PSHARD_FINISH_ERROR */
  const char* error_message; /* "" unless an error */
  int64_t n_prompt;
  int64_t n_generated;   /* so far (stop tokens not counted) */
  double queued_ms;      /* the last event: added -> got a sequence */
  double prompt_ms;      /* got a sequence -> the prompt read */
  double first_token_ms; /* added -> first token */
  double total_ms;       /* added -> finished */
  int64_t n_cached;      /* of n_prompt, positions read from the prefix cache, not decoded */
  /* An embedding request's last event (PSHARD_FINISH_STOP): its vector, as
   * pshard_context_embed writes it; NULL and 0 otherwise. */
  const float* embedding;
  size_t n_embedding;
  /* The last event of a sequence a stop string ended (PSHARD_FINISH_STOP): its index in
   * pshard_seq_params.stop_strings; -1 otherwise (an end-of-generation or stop token, a
   * limit). */
  int32_t stop_string;
} pshard_seq_event;

/* Return false to cancel the sequence (the reader went away). */
typedef bool (*pshard_seq_callback)(const pshard_seq_event* event, void* user_data);

typedef struct pshard_seq_params {
  size_t size;
  const pshard_token* tokens; /* the prompt as tokens, or NULL and: */
  size_t n_tokens;
  const char* text; /* the prompt as text, tokenized with the model's vocabulary */
  size_t text_len;
  bool add_special;                /* for text: as pshard_tokenize_params (default true) */
  bool parse_special;              /* for text: as pshard_tokenize_params (default true) */
  const char* const* stop_strings; /* NUL-terminated; the text is cut before the first */
  size_t n_stop_strings;
  const pshard_token* stop_tokens; /* end the sequence like an end-of-generation token */
  size_t n_stop_tokens;
  bool logprobs;                /* each event carries its token's log-probability */
  pshard_seq_callback on_event; /* NULL: events queue for pshard_seq_poll */
  void* user_data;
  const pshard_image* const* images; /* with a text prompt, as
                                        pshard_context_generate_with_images; encoded by
                                        pshard_batch_add (the caller may free them after) */
  size_t n_images;
  /* An embedding request (pshard_context_embed's parameters): the prompt is read in the
   * batch's passes beside the others, nothing is generated, and the last event carries
   * the vector (pshard_seq_event.embedding); `generate` is ignored. NULL: generate. */
  const pshard_embed_params* embed;
  /* > 0: once the generated text holds a newline, the first token after generating has
   * taken this many milliseconds (from the first token) ends the sequence with
   * PSHARD_FINISH_LENGTH: llama-server's t_max_predict_ms, which code completion sets so a
   * slow suggestion stops at a line's end. 0 (default): no limit; < 0:
   * PSHARD_ERROR_INVALID_ARGUMENT. */
  int64_t t_max_predict_ms;
  /* With logprobs or top_logprobs: the log-probabilities of the distribution each token
   * was drawn from, after every sampler stage (llama-server's post_sampling_probs: top-k,
   * top-p, the temperature... applied; greedy: the token alone, log 1 = 0), and at most
   * as many alternatives as it holds; false (default): the model's. */
  bool post_sampling_probs;
} pshard_seq_params;

PSHARD_API pshard_seq_params pshard_seq_default_params(void);
/* Queues a request; `generate` gives n_predict (< 0: until the context is full),
 * ignore_eos, sampling, seed and top_logprobs (NULL: the defaults). */
PSHARD_API pshard_status pshard_batch_add(pshard_batch* batch, const pshard_seq_params* params,
                                          const pshard_generate_params* generate,
                                          pshard_seq** out_seq);

typedef struct pshard_batch_step_result {
  size_t size;
  int64_t n_tokens; /* tokens the pass carried; 0: there was nothing to do */
  int64_t n_sequences;
  int64_t n_prompt_tokens;
  int64_t n_decode_tokens;
  int64_t n_finished; /* sequences that ended in this step */
} pshard_batch_step_result;

PSHARD_API pshard_batch_step_result pshard_batch_step_result_init(void);
/* Admits waiting requests, ends cancelled ones, runs one pass and delivers its events.
 * Returns at once when there is nothing to do. `result` may be NULL. */
PSHARD_API pshard_status pshard_batch_step(pshard_batch* batch, pshard_batch_step_result* result);
/* Whether a step has something to do (a request running or waiting, a cancel, a budget
 * change); pshard_batch_wait blocks up to timeout_ms until it has. */
PSHARD_API bool pshard_batch_has_work(pshard_batch* batch);
PSHARD_API bool pshard_batch_wait(pshard_batch* batch, int32_t timeout_ms);
/* As pshard_context_set_vram_budget, for every sequence, between two passes: returns once
 * it is in force (at most one pass later). */
PSHARD_API pshard_status pshard_batch_set_vram_budget(pshard_batch* batch, uint64_t bytes);

typedef struct pshard_batch_stats {
  size_t size;
  int64_t queued;  /* waiting for a sequence */
  int64_t running; /* holding a sequence */
  int64_t requests_added;
  int64_t requests_refused; /* by pshard_batch_add */
  int64_t finished_stop;
  int64_t finished_length;
  int64_t finished_cancelled;
  int64_t finished_error;
  int64_t prompt_tokens; /* decoded, all requests */
  int64_t generated_tokens;
  int64_t passes;
  double busy_ms;                /* inside passes */
  double prompt_tokens_per_s;    /* over the last 10 s */
  double generated_tokens_per_s; /* over the last 10 s */
  int64_t kv_page_tokens;
  int64_t kv_pages_total;
  int64_t kv_pages_used;
  uint64_t vram_budget;     /* in force */
  uint64_t vram_bytes;      /* device memory held now, all sequences */
  uint64_t peak_vram_bytes; /* the largest arena one session held */
  uint64_t bytes_streamed;
  size_t n_plans; /* plans used: pshard_batch_get_plan_stats */
  int64_t cached_prompt_tokens; /* prompt positions read from the prefix cache, all requests */
  int64_t kv_pages_cached;      /* pages the prefix cache holds (idle ones count as free) */
  int64_t draft_tokens;         /* drafted tokens checked (draft_max), all requests */
  int64_t accepted_draft_tokens; /* of those, sampled as drafted */
  /* The sliding-window layers' own pool (0 and 0: they share the pages above): its pages,
   * and those sequences hold (each only its last window's). */
  int64_t kv_window_pages_total;
  int64_t kv_window_pages_used;
  /* Images of added requests encoded, and those found among the batch's recently encoded
   * ones (the same pixels: a conversation's earlier images) and not encoded again. */
  int64_t images_encoded;
  int64_t images_reused;
  /* Passes of the draft model (pshard_batch_params.draft_model), all requests. */
  int64_t draft_passes;
  /* Entries pshard_batch_get_progress reads: the requests running after the last pass. */
  size_t n_progress;
} pshard_batch_stats;

PSHARD_API pshard_batch_stats pshard_batch_stats_init(void);
/* A snapshot, published after every pass. */
PSHARD_API pshard_status pshard_batch_get_stats(pshard_batch* batch, pshard_batch_stats* out);
/* Passes per plan (budget, tier), summed over the sequences, of the latest snapshot
 * (plan index < its n_plans); `strategy` stays valid while the batch lives. */
PSHARD_API pshard_status pshard_batch_get_plan_stats(pshard_batch* batch, size_t index,
                                                     pshard_plan_stats* out);

/* Where a running request stands (llama-server's GET /slots), of the latest snapshot
 * (index < its n_progress, in the order the requests got their sequences). */
typedef struct pshard_seq_progress {
  size_t size;
  int64_t seq_id;        /* pshard_seq_id of its sequence */
  int64_t n_prompt;      /* prompt tokens (an image prompt's placeholders included) */
  int64_t n_prompt_read; /* of those in its KV cache, the prefix cache's included */
  int64_t n_cached;      /* read from the prefix cache */
  int64_t n_generated;
  bool generating;   /* the prompt is read */
  double ms_running; /* since it got its sequence */
} pshard_seq_progress;

PSHARD_API pshard_seq_progress pshard_seq_progress_init(void);
PSHARD_API pshard_status pshard_batch_get_progress(pshard_batch* batch, size_t index,
                                                   pshard_seq_progress* out);

/* ---- sequences (requests in a batch) ------------------------------------------ */
PSHARD_API int64_t pshard_seq_id(const pshard_seq* seq);
/* An event whose size is set, for pshard_seq_poll. */
PSHARD_API pshard_seq_event pshard_seq_event_init(void);
/* The next queued event (only without an on_event callback): *got says whether there
 * was one. Writes up to out->size bytes (a caller built against an older, smaller event
 * gets the fields it knows); out->size 0: PSHARD_ERROR_INVALID_ARGUMENT. */
PSHARD_API pshard_status pshard_seq_poll(pshard_seq* seq, pshard_seq_event* out, bool* got);
/* Ends the sequence before the next pass; its last event says PSHARD_FINISH_CANCELLED. */
PSHARD_API void pshard_seq_cancel(pshard_seq* seq);
/* PSHARD_FINISH_NONE while it runs. */
PSHARD_API pshard_finish_reason pshard_seq_finish_reason(const pshard_seq* seq);
/* Cancels the sequence if it still runs; no callback of it starts after this returns
 * (one running on the stepping thread is waited for, unless it is this call's caller). */
PSHARD_API void pshard_seq_free(pshard_seq* seq);

#ifdef __cplusplus
}
#endif

#endif /* PSHARD_H */
