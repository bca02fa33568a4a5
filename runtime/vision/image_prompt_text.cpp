#include "runtime/vision/image_prompt_text.h"

namespace pshard {
namespace {

struct Place {
  size_t begin = std::string_view::npos, end = 0; // the replaced text, wrapping excluded
  bool marker = false;
};

// Every place in order of appearance.
std::vector<Place> find_places(std::string_view p) {
  std::vector<Place> places;
  for (size_t at = 0; at < p.size();) {
    const size_t m = p.find(kImageMarker, at), s = p.find(kVisionStart, at);
    if (m == std::string_view::npos && s == std::string_view::npos)
      break;
    if (m < s) {
      places.push_back({m, m + kImageMarker.size(), true});
      at = m + kImageMarker.size();
      continue;
    }
    const size_t e = p.find(kVisionEnd, s + kVisionStart.size());
    if (e == std::string_view::npos)
      break; // an unclosed start is text
    places.push_back({s + kVisionStart.size(), e, false});
    at = e + kVisionEnd.size();
  }
  return places;
}

} // namespace

int64_t count_image_places(std::string_view prompt) {
  return static_cast<int64_t>(find_places(prompt).size());
}

Result<ImagePromptText> split_image_prompt(std::string_view prompt, int64_t n_images) {
  const std::vector<Place> places = find_places(prompt);
  const auto n_places = static_cast<int64_t>(places.size());
  if (n_places != n_images)
    return invalid_argument(
        "the prompt names " + std::to_string(n_places) + " image places but " +
        std::to_string(n_images) + (n_images == 1 ? " image was" : " images were") +
        " given; mark each image's place, in the order of the images, with " +
        std::string(kImageMarker) + " or " + std::string(kVisionStart) + std::string(kVisionEnd));
  ImagePromptText text;
  size_t at = 0; // the prompt's text not yet in a piece begins here
  std::string piece;
  for (const Place& p : places) {
    piece += prompt.substr(at, p.begin - at);
    if (p.marker)
      piece += kVisionStart;
    text.pieces.push_back(std::move(piece));
    piece = p.marker ? std::string(kVisionEnd) : std::string();
    at = p.end;
  }
  piece += prompt.substr(at);
  text.pieces.push_back(std::move(piece));
  return text;
}

ImagePromptText images_before(std::string_view prompt, int64_t n_images) {
  if (n_images == 0)
    return ImagePromptText{{std::string(prompt)}};
  ImagePromptText text;
  text.pieces.emplace_back(kVisionStart);
  for (int64_t i = 1; i < n_images; ++i)
    text.pieces.push_back(std::string(kVisionEnd) + std::string(kVisionStart));
  text.pieces.push_back(std::string(kVisionEnd) + std::string(prompt));
  return text;
}

ImagePromptIds tokenize_image_prompt(const Tokenizer& tokenizer, const ImagePromptText& text,
                                     std::span<const int64_t> n_image_tokens, bool add_bos,
                                     bool parse_special) {
  ImagePromptIds p;
  for (size_t i = 0; i < text.pieces.size(); ++i) {
    const std::vector<TokenId> ids =
        tokenizer.encode(text.pieces[i], add_bos && i == 0, parse_special);
    p.ids.insert(p.ids.end(), ids.begin(), ids.end());
    if (i < n_image_tokens.size()) {
      p.image_pos.push_back(static_cast<int64_t>(p.ids.size()));
      p.ids.insert(p.ids.end(), static_cast<size_t>(n_image_tokens[i]), TokenId{0});
    }
  }
  return p;
}

} // namespace pshard
