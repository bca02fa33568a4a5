// --image-max-tokens / --image-min-tokens (llama.cpp's flags), spelled and checked the same
// in every tool that encodes or plans images: pshard-run, pshard-vision, pshard-server,
// pshard-compile. Header-only and CLI11-dependent: include it from the mains only.
//
//   cli::add_image_token_options(app, o.image_min_tokens, o.image_max_tokens, "--mmproj");
#pragma once

#include "tools/common/cli_checks.h"

#include <CLI/CLI.hpp>
#include <string>

namespace pshard::cli {

// `needs`: the option the limits go with ("" for none).
template <typename Int>
void add_image_token_options(CLI::App& app, Int& min_tokens, Int& max_tokens,
                             const std::string& needs) {
  CLI::Option* most =
      app.add_option("--image-max-tokens", max_tokens,
                     "images keep their size rounded to whole image tokens, shrunk to at most "
                     "this many (Hugging Face's smart_resize; default: their longer side capped "
                     "at the projector's clip.vision.image_size)")
          ->check(between(0, 65536));
  if (!needs.empty())
    most->needs(needs);
  app.add_option("--image-min-tokens", min_tokens,
                 "with --image-max-tokens: smaller images enlarged to at least this many")
      ->check(between(0, 65536))
      ->needs("--image-max-tokens");
}

} // namespace pshard::cli
