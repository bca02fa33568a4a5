// pshard.h: chat templates — rendering a conversation with the model's template or a
// named one (runtime/chat).
#include "runtime/capi/capi_internal.h"
#include "runtime/chat/chat_template.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace pshard;
using pshard::capi::fail;

namespace {

Result<const ChatTemplate*> template_of(const pshard_model* model, const char* name) {
  if (name)
    return find_chat_template(name);
  if (!model)
    return invalid_argument("pshard_chat_apply_template: give a model or a template name");
  return model_chat_template(model->model->file(), "");
}

} // namespace

extern "C" {

pshard_status pshard_chat_apply_template(const pshard_model* model, const char* template_name,
                                         const pshard_chat_message* messages, size_t n_messages,
                                         bool add_assistant, char* text, size_t capacity,
                                         size_t* text_len) {
  if (!messages && n_messages > 0)
    return capi::null_argument("pshard_chat_apply_template", "messages");
  if (!text_len)
    return capi::null_argument("pshard_chat_apply_template", "text_len");
  if (!text && capacity > 0)
    return capi::null_argument("pshard_chat_apply_template", "text");
  auto tmpl = template_of(model, template_name);
  if (!tmpl.ok())
    return fail(tmpl.status());
  std::vector<ChatMessage> chat;
  chat.reserve(n_messages);
  for (size_t i = 0; i < n_messages; ++i) {
    if (!messages[i].role || !messages[i].content)
      return fail(invalid_argument("pshard_chat_apply_template: message " + std::to_string(i) +
                                   " has a NULL role or content"));
    chat.push_back({messages[i].role, messages[i].content});
  }
  auto rendered = (*tmpl)->apply(chat, add_assistant);
  if (!rendered.ok())
    return fail(rendered.status());
  *text_len = rendered->size();
  if (text)
    std::memcpy(text, rendered->data(), std::min(capacity, rendered->size()));
  return PSHARD_OK;
}

pshard_status pshard_chat_builtin_templates(const char** names, size_t capacity, size_t* n_names) {
  if (!n_names)
    return capi::null_argument("pshard_chat_builtin_templates", "n_names");
  const auto all = chat_templates();
  *n_names = all.size();
  // The names are string literals: NUL-terminated and static.
  for (size_t i = 0; names && i < all.size() && i < capacity; ++i)
    names[i] = all[i]->name().data();
  return PSHARD_OK;
}

pshard_status pshard_model_chat_template(const pshard_model* model, const char** name) {
  if (!model)
    return capi::null_argument("pshard_model_chat_template", "model");
  if (!name)
    return capi::null_argument("pshard_model_chat_template", "name");
  auto tmpl = model_chat_template(model->model->file(), "");
  if (!tmpl.ok())
    return fail(tmpl.status());
  *name = (*tmpl)->name().data();
  return PSHARD_OK;
}

} // extern "C"
