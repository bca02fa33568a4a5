// pshard-vision: encode one image with a vision projector and write what the encoder
// saw and made, for checks against a reference and for inspecting a projector:
//
//   pshard-vision --mmproj mmproj.gguf --image photo.png -o embd.npy [--input-out in.npy]
//
// Prints one JSON line: the projector type, the image's size, the preprocessed size,
// the grid of image tokens and the embedding width. embd.npy holds the image tokens'
// embeddings (tokens_y * tokens_x rows of projection_dim float32, raster order);
// in.npy the preprocessed input (3 x height x width float32, normalised).
#include "runtime/core/thread_pool.h"
#include "runtime/vision/vision_encoder.h"
#include "tools/common/cli_checks.h"
#include "tools/pshard-vision/npy_writer.h"

#include <CLI/CLI.hpp>
#include <iostream>

int main(int argc, char** argv) {
  std::string mmproj, image, out, input_out;
  int threads = 0;
  CLI::App app{"pshard-vision: encode an image with a vision projector (mmproj GGUF)"};
  app.add_option("--mmproj", mmproj, "projector file")->required();
  app.add_option("--image", image, "image file (PNG, JPEG, ...)")->required();
  app.add_option("-o,--output", out, "write the image embeddings as .npy");
  app.add_option("--input-out", input_out, "write the preprocessed input as .npy");
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
  if (!out.empty())
    if (pshard::Status s = pshard::write_npy(out, e->data, {e->n_tokens(), e->n_embd}); !s.ok())
      return fail(s);
  if (!input_out.empty())
    if (pshard::Status s = pshard::write_npy(input_out, in->chw, {3, in->height, in->width});
        !s.ok())
      return fail(s);
  std::cout << "{\"projector_type\": \"" << pshard::projector_type_name((*proj)->hparams().type)
            << "\", \"image\": [" << img->width << ", " << img->height << "], \"input\": ["
            << in->width << ", " << in->height << "], \"tokens\": [" << e->tokens_x << ", "
            << e->tokens_y << "], \"n_embd\": " << e->n_embd << "}\n";
  return 0;
}
