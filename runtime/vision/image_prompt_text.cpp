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
  const std::string how = "; mark the image's place with " + std::string(kImageMarker) + " or " +
                          std::string(kVisionStart) + std::string(kVisionEnd);
  if (n_images > 1)
    return invalid_argument(std::to_string(n_images) +
                            " images in one prompt; pshard takes one image a prompt for now");
  if (n_places != n_images)
    return invalid_argument("the prompt names " + std::to_string(n_places) + " image places but " +
                            std::to_string(n_images) +
                            (n_images == 1 ? " image was" : " images were") + " given" + how);
  if (n_images == 0)
    return ImagePromptText{std::string(prompt), ""};
  const Place& p = places.front();
  std::string before(prompt.substr(0, p.begin)), after(prompt.substr(p.end));
  if (p.marker) {
    before += kVisionStart;
    after.insert(0, kVisionEnd);
  }
  return ImagePromptText{std::move(before), std::move(after)};
}

ImagePromptText image_before(std::string_view prompt) {
  return {std::string(kVisionStart), std::string(kVisionEnd) + std::string(prompt)};
}

ImagePromptIds tokenize_image_prompt(const Tokenizer& tokenizer, const ImagePromptText& text,
                                     int64_t n_image_tokens, bool add_bos, bool parse_special) {
  ImagePromptIds p;
  p.ids = tokenizer.encode(text.before, add_bos, parse_special);
  p.image_pos = static_cast<int64_t>(p.ids.size());
  p.ids.insert(p.ids.end(), static_cast<size_t>(n_image_tokens), TokenId{0});
  const std::vector<TokenId> after = tokenizer.encode(text.after, false, parse_special);
  p.ids.insert(p.ids.end(), after.begin(), after.end());
  return p;
}

} // namespace pshard
