// pshard.h: images — decoding or copying them, and turning a text prompt with images into
// ids and embeddings for contexts and batches alike.
#include "runtime/capi/capi_internal.h"

#include <algorithm>
#include <new>

using namespace pshard;
using pshard::capi::fail;

namespace {

Status check_side(const char* name, int64_t side) {
  if (side <= 0 || side > PSHARD_IMAGE_MAX_SIDE)
    return out_of_range("the image's " + std::string(name) + " is " + std::to_string(side) +
                        " pixels; it must be between 1 and " +
                        std::to_string(PSHARD_IMAGE_MAX_SIDE) + " (PSHARD_IMAGE_MAX_SIDE)");
  return Status::ok_status();
}

pshard_status hand_out(RgbImage rgb, pshard_image** out) {
  for (auto [name, side] : {std::pair{"width", rgb.width}, std::pair{"height", rgb.height}})
    if (Status st = check_side(name, side); !st.ok())
      return fail(st);
  auto img = std::unique_ptr<pshard_image>(new (std::nothrow) pshard_image{std::move(rgb)});
  if (!img)
    return fail(Status(StatusCode::kOutOfMemory, "pshard_image: out of host memory"));
  *out = img.release();
  return PSHARD_OK;
}

} // namespace

namespace pshard::capi {

Result<ImagePrompt> prepare_image_prompt(const pshard_model& model, std::string_view text,
                                         const pshard_image* const* images, size_t n_images,
                                         bool add_special, bool parse_special, int32_t n_threads,
                                         const ImageEncoder& encoder, EncodedImageCache* cache) {
  if (!model.projector && n_images > 0)
    return invalid_argument("the model was loaded without a projector, so its prompts take no "
                            "images: load it with pshard_model_params.mmproj_path");
  if (!images && n_images > 0)
    return invalid_argument("`images` is NULL but n_images is " + std::to_string(n_images));
  for (size_t i = 0; i < n_images; ++i)
    if (!images[i])
      return invalid_argument("image " + std::to_string(i) + " is NULL");
  PSHARD_ASSIGN_OR_RETURN(ImagePromptText split,
                          split_image_prompt(text, static_cast<int64_t>(n_images)));
  ImagePrompt p;
  std::unique_ptr<ThreadPool> pool; // the host encoder's, made for the first image
  std::vector<int64_t> n_tokens;
  for (size_t i = 0; i < n_images; ++i) {
    if (cache) {
      p.keys.push_back(encoded_image_key(images[i]->rgb));
      if (std::shared_ptr<const ImageEmbeddings> hit = cache->find(p.keys.back())) {
        n_tokens.push_back(hit->n_tokens());
        p.images.push_back(*hit);
        continue;
      }
    }
    auto image = [&]() -> Result<ImageEmbeddings> {
      PSHARD_ASSIGN_OR_RETURN(VisionInput in,
                              preprocess_image(images[i]->rgb, model.projector->hparams()));
      if (encoder)
        return encoder(in);
      if (!pool)
        pool = std::make_unique<ThreadPool>(n_threads > 0 ? n_threads
                                                          : ThreadPool::hardware_threads());
      return encode_image(*model.projector, in, *pool);
    }();
    if (!image.ok())
      return n_images > 1 ? image.status().with_context("image " + std::to_string(i))
                          : image.status();
    n_tokens.push_back(image->n_tokens());
    p.images.push_back(std::move(image).value());
    if (cache)
      cache->insert(p.keys.back(), std::make_shared<const ImageEmbeddings>(p.images.back()));
  }
  p.ids =
      tokenize_image_prompt(*model.tokenizer, split, n_tokens,
                            add_special && model.tokenizer->add_bos_by_default(), parse_special);
  return p;
}

} // namespace pshard::capi

extern "C" {

pshard_status pshard_image_from_bytes(const void* data, size_t n_bytes, pshard_image** out_image) {
  if (!out_image)
    return capi::null_argument("pshard_image_from_bytes", "out_image");
  *out_image = nullptr;
  if (!data && n_bytes > 0)
    return capi::null_argument("pshard_image_from_bytes", "data");
  auto rgb = decode_image({static_cast<const uint8_t*>(data), n_bytes});
  if (!rgb.ok()) // bytes that are no image are malformed input, not a wrong argument
    return fail(rgb.status().code() == StatusCode::kInvalidArgument
                    ? invalid_format(rgb.status().message())
                    : rgb.status());
  return hand_out(std::move(rgb).value(), out_image);
}

pshard_status pshard_image_from_rgb(const uint8_t* pixels, int32_t width, int32_t height,
                                    size_t stride, pshard_image** out_image) {
  if (!out_image)
    return capi::null_argument("pshard_image_from_rgb", "out_image");
  *out_image = nullptr;
  if (!pixels)
    return capi::null_argument("pshard_image_from_rgb", "pixels");
  for (auto [name, side] : {std::pair{"width", width}, std::pair{"height", height}})
    if (Status st = check_side(name, side); !st.ok())
      return fail(st);
  const size_t row = 3 * static_cast<size_t>(width);
  if (stride < row)
    return fail(invalid_argument("stride " + std::to_string(stride) + " is less than a row of " +
                                 std::to_string(width) + " RGB pixels (" + std::to_string(row) +
                                 " bytes)"));
  RgbImage rgb;
  rgb.width = width;
  rgb.height = height;
  rgb.rgb.resize(row * static_cast<size_t>(height));
  for (int32_t y = 0; y < height; ++y)
    std::copy_n(pixels + static_cast<size_t>(y) * stride, row, rgb.rgb.data() + y * row);
  return hand_out(std::move(rgb), out_image);
}

void pshard_image_free(pshard_image* image) { delete image; }
int32_t pshard_image_width(const pshard_image* i) {
  return i ? static_cast<int32_t>(i->rgb.width) : 0;
}
int32_t pshard_image_height(const pshard_image* i) {
  return i ? static_cast<int32_t>(i->rgb.height) : 0;
}
bool pshard_model_has_vision(const pshard_model* m) { return m && m->projector; }

} // extern "C"
