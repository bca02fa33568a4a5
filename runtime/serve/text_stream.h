// A request's generated text as it may be shown while it streams: whole UTF-8
// characters only (Utf8StreamBuffer), and never any part of a stop string. Text that
// could be the start of a stop string is held back until the next pieces say whether
// it is one; where a stop string appears the text is cut before it and the stream ends.
//
//   TextStream out({"\n\n", "The end"});
//   for (TokenId id : generated) {
//     TextStream::Piece p = out.push(tokenizer.token_to_piece(id));
//     show(p.text);
//     if (p.stopped) break;        // the text held a stop string; nothing of it was shown
//   }
//   show(out.flush());             // the end of a request that did not stop
#pragma once

#include "runtime/tokenizer/utf8.h"

#include <string>
#include <string_view>
#include <vector>

namespace pshard {

class TextStream {
public:
  explicit TextStream(std::vector<std::string> stop_strings = {})
      : stops_(std::move(stop_strings)) {}

  struct Piece {
    std::string text;     // ready to show
    bool stopped = false; // a stop string appeared: the stream has ended
    int stop_index = -1;  // which (the one that appeared first; of two at one place, the
                          // first listed)
  };
  // Appends one token's bytes. After a stop, returns nothing.
  Piece push(std::string_view bytes);
  // Whatever is still held back (a split character, a partial stop string); "" after a
  // stop.
  std::string flush();
  bool stopped() const { return stopped_; }

private:
  // Bytes at the end of `text` that a stop string could begin with.
  size_t partial_stop_suffix(std::string_view text) const;

  Utf8StreamBuffer utf8_;
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

} // namespace pshard
