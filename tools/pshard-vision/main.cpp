// pshard-vision: encode one image with a vision projector and write what the encoder
// saw and made, for checks against a reference and for inspecting a projector:
//
//   pshard-vision --mmproj mmproj.gguf --image photo.png -o embd.npy [--input-out in.npy]
//                 [--image-max-tokens N [--image-min-tokens M]]
//
// Prints one JSON line: the projector type, the image's size, the preprocessed size,
// the grid of image tokens and the embedding width. embd.npy holds the image tokens'
// embeddings (tokens_y * tokens_x rows of projection_dim float32, raster order; with
// DeepStack mergers each row goes on with every merger's values, as llama.cpp lays them
// out: (1 + n_deepstack) x projection_dim); in.npy the preprocessed input (3 x height x
// width float32, normalised).
#include "runtime/core/thread_pool.h"
#include "runtime/vision/vision_encoder.h"
#include "tools/common/cli_checks.h"
#include "tools/common/cli_image_options.h"
#include "tools/pshard-vision/npy_writer.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  std::string mmproj, image, out, input_out;
  int threads = 0;
  CLI::App app{"pshard-vision: encode an image with a vision projector (mmproj GGUF)"};
  app.add_option("--mmproj", mmproj, "projector file")->required();
  app.add_option("--image", image, "image file (PNG, JPEG, ...)")->required();
  app.add_option("-o,--output", out, "write the image embeddings as .npy");
  app.add_option("--input-out", input_out, "write the preprocessed input as .npy");
  int64_t min_tokens = 0, max_tokens = 0;
  pshard::cli::add_image_token_options(app, min_tokens, max_tokens, "");
  app.add_option("-t,--threads", threads, "CPU threads (0: all)")
      ->check(pshard::cli::between(0, 1024));
  CLI11_PARSE(app, argc, argv);

  auto fail = [](const pshard::Status& s) {
    std::cerr << "pshard-vision: " << s.to_string() << "\n";
    return 1;
  };
  auto proj = pshard::Projector::open(mmproj);
  if (!proj.ok())
    return fail(proj.status());
  if (pshard::Status s = (*proj)->set_image_tokens(min_tokens, max_tokens); !s.ok())
    return fail(s);
  auto img = pshard::load_image(image);
  if (!img.ok())
    return fail(img.status());
  auto in = pshard::preprocess_image(*img, (*proj)->hparams());
  if (!in.ok())
    return fail(in.status());
  pshard::ThreadPool pool(threads > 0 ? threads : pshard::ThreadPool::hardware_threads());
  auto e = pshard::encode_image(**proj, *in, pool);
  if (!e.ok())
    return fail(e.status());
  const int64_t width = e->n_embd * (1 + e->n_deepstack);
  std::vector<float> rows(static_cast<size_t>(e->n_tokens() * width));
  for (int64_t t = 0; t < e->n_tokens(); ++t) {
    float* row = rows.data() + t * width;
    std::copy_n(e->data.data() + t * e->n_embd, e->n_embd, row);
    for (int64_t k = 0; k < e->n_deepstack; ++k)
      std::copy_n(e->deepstack_row(k, t), e->n_embd, row + (1 + k) * e->n_embd);
  }
  if (!out.empty())
    if (pshard::Status s = pshard::write_npy(out, rows, {e->n_tokens(), width}); !s.ok())
      return fail(s);
  if (!input_out.empty())
    if (pshard::Status s = pshard::write_npy(input_out, in->chw, {3, in->height, in->width});
        !s.ok())
      return fail(s);
  std::cout << "{\"projector_type\": \"" << pshard::projector_type_name((*proj)->hparams().type)
            << "\", \"image\": [" << img->width << ", " << img->height << "], \"input\": ["
            << in->width << ", " << in->height << "], \"tokens\": [" << e->tokens_x << ", "
            << e->tokens_y << "], \"n_embd\": " << e->n_embd
            << ", \"n_deepstack\": " << e->n_deepstack << "}\n";
  return 0;
}
