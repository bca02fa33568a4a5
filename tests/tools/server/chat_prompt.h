// The prompt a chat template renders for (role, content) turns, through the C API as the
// server renders it (the server's tool-format tests).
#pragma once

#include "pshard/pshard.h"

#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

namespace pshard::server {

inline std::string rendered_prompt(const char* chat_template,
                                   const std::vector<std::pair<std::string, std::string>>& chat) {
  std::vector<pshard_chat_message> messages;
  for (const auto& [role, content] : chat)
    messages.push_back({role.c_str(), content.c_str()});
  size_t len = 0;
  EXPECT_EQ(pshard_chat_apply_template(nullptr, chat_template, messages.data(), messages.size(),
                                       true, nullptr, 0, &len),
            PSHARD_OK)
      << pshard_last_error();
  std::string text(len, '\0');
  EXPECT_EQ(pshard_chat_apply_template(nullptr, chat_template, messages.data(), messages.size(),
                                       true, text.data(), len, &len),
            PSHARD_OK);
  return text;
}

} // namespace pshard::server
