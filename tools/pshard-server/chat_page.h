// The chat page served at "/": plain HTML and JavaScript (chat_page.html), embedded in
// the binary at build time, no build step of its own.
#pragma once

namespace pshard::server {

const char* chat_page_html();

} // namespace pshard::server
