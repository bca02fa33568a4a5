// Objects and arrays for the converter (json_schema_converter.h): properties in the
// schema's order with required and optional members, extra keys that are none of the
// listed names, tuples (prefixItems / items arrays) and item counts.
#include "runtime/grammar/gbnf_text.h"
#include "runtime/grammar/json_schema_converter.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pshard::json_grammar {
namespace {

constexpr size_t kMaxExtraKeyName = 256; // see not_names()

// The listed property names by code point, which extra object keys must not spell.
struct NameTrie {
  bool end = false;
  std::map<char32_t, NameTrie> kids;
};

// Key characters (unescaped, key-char) in a row that do not spell a name from this node
// on: end here unless a name ends here, or a character no name continues with and then
// anything, or a name's next character and the same again one node down.
std::string not_names(const NameTrie& node) {
  Ranges taken = json_escaped();
  for (const auto& [cp, kid] : node.kids)
    taken.emplace_back(cp, cp);
  std::vector<std::string> alts;
  if (std::string other = class_text(complement(normalized(taken))); !other.empty())
    alts.push_back(other + " key-char*");
  for (const auto& [cp, kid] : node.kids)
    alts.push_back(seq({literal(json_char(cp)), not_names(kid)}));
  const std::string g = "( " + join(alts, " | ") + " )";
  return node.end ? g : g + "?";
}

// Items from index i on, when the ones before it are present; counts within GBNF's.
std::string array_items(const std::vector<std::string>& tuple,
                        const std::optional<std::string>& rest, int64_t min,
                        std::optional<int64_t> max, int64_t i) {
  const std::string comma = seq({literal(","), "ws"});
  const auto k = static_cast<int64_t>(tuple.size());
  if (max && i >= *max)
    return "";
  if (i < k) {
    const std::string here = seq({i == 0 ? "" : comma, tuple[static_cast<size_t>(i)], "ws"});
    const std::string s = seq({here, array_items(tuple, rest, min, max, i + 1)});
    return i < min ? s : "( " + s + " )?";
  }
  // The rest: all alike, so one repetition; the first item overall has no comma.
  const int64_t need = std::max<int64_t>(0, min - k);
  const std::optional<int64_t> room = max ? std::optional<int64_t>(*max - k) : std::nullopt;
  const std::string more = "( " + seq({comma, *rest, "ws"}) + " )";
  if (k > 0)
    return repeat(more, need, room);
  const std::string first = seq({*rest, "ws"});
  const std::optional<int64_t> after = room ? std::optional<int64_t>(*room - 1) : std::nullopt;
  if (need >= 1)
    return seq({first, repeat(more, need - 1, after)});
  return "( " + seq({first, repeat(more, 0, after)}) + " )?";
}

} // namespace

// --- objects ---

Result<std::string> Converter::object_body(const Json& s, const std::string& ptr,
                                           const std::string& name, int depth) {
  const Json* props = member(s, "properties");
  const Json* required = member(s, "required");
  const Json* extra = member(s, "additionalProperties");
  if (props && !props->is_object())
    return bad_keyword(ptr, "properties", "must be an object");
  if (extra && !extra->is_boolean() && !extra->is_object())
    return bad_keyword(ptr, "additionalProperties", "must be a boolean or a schema");
  std::set<std::string> needed;
  if (required) {
    if (!required->is_array())
      return bad_keyword(ptr, "required", "must be an array of property names");
    for (const Json& r : *required) {
      if (!r.is_string())
        return bad_keyword(ptr, "required", "must be an array of property names");
      if (!props || !props->contains(r.get<std::string>()))
        return unsupported("the required property '" + r.get<std::string>() + "' " +
                           where(at(ptr, "required")) + " is not in properties; list it there");
      needed.insert(r.get<std::string>());
    }
  }
  const bool listed = props && !props->empty();
  // The schema for extra keys' values; none: no extra keys.
  std::optional<std::string> extra_value;
  if (!extra ? !listed : extra->is_boolean() ? extra->get<bool>() : true) {
    if (!extra || extra->is_boolean()) {
      extra_value = rules_.use("value");
    } else {
      PSHARD_ASSIGN_OR_RETURN(extra_value, term(*extra, at(ptr, "additionalProperties"),
                                                child_name(name, "additional"), depth + 1));
    }
  }
  if (!listed) {
    if (extra_value && *extra_value == "value")
      return rules_.use("object");
    if (!extra_value)
      return seq({literal("{"), rules_.use("ws"), literal("}")});
  }
  std::vector<std::string> kvs;
  std::vector<bool> req;
  if (listed)
    for (auto it = props->begin(); it != props->end(); ++it) {
      if (it.value().is_boolean() && !it.value().get<bool>()) { // the key must not appear
        if (needed.count(it.key()))
          return invalid_argument("the property '" + it.key() + "' " + where(at(ptr, "required")) +
                                  " is required but its schema is false");
        continue;
      }
      PSHARD_ASSIGN_OR_RETURN(std::string v, term(it.value(), at(at(ptr, "properties"), it.key()),
                                                  child_name(name, it.key()), depth + 1));
      const std::string key =
          literal(Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace));
      kvs.push_back(seq({key, "ws", literal(":"), "ws", v, "ws"}));
      req.push_back(needed.count(it.key()) > 0);
    }
  rules_.use("ws");
  std::string extra_kv;
  if (extra_value) {
    PSHARD_ASSIGN_OR_RETURN(std::string key, extra_key(props, ptr, name));
    extra_kv = rules_.add(child_name(name, "additional-kv"),
                          seq({key, "ws", literal(":"), "ws", *extra_value, "ws"}));
  }
  return seq({literal("{"), "ws", members(kvs, req, extra_kv, name), literal("}")});
}

// The keys of extra properties: any string when none are listed, else strings of
// unescaped characters that are none of the listed names (a listed name must take
// its own schema, and appear once).
Result<std::string> Converter::extra_key(const Json* props, const std::string& ptr,
                                         const std::string& name) {
  if (!props || props->empty())
    return rules_.use("string");
  NameTrie trie;
  for (auto it = props->begin(); it != props->end(); ++it) {
    const std::u32string cps = code_points(it.key());
    if (cps.size() > kMaxExtraKeyName)
      return unsupported("the property name at " + at(at(ptr, "properties"), it.key()) +
                         " is longer than " + std::to_string(kMaxExtraKeyName) +
                         " characters, too long to keep out of additionalProperties");
    NameTrie* node = &trie;
    bool plain = true; // names needing escapes cannot collide with unescaped keys
    for (char32_t cp : cps)
      plain = plain && intersect(single(cp), json_escaped()).empty();
    if (!plain)
      continue;
    for (char32_t cp : cps)
      node = &node->kids[cp];
    node->end = true;
  }
  rules_.use("key-char");
  const std::string q = literal("\"");
  return rules_.add(child_name(name, "additional-key"), seq({q, not_names(trie), q}));
}

// The members between the braces: listed properties in order (required ones always,
// optional ones maybe), commas only between those present, then extra ones. The
// first member present is an optional one before the first required one, or that one;
// each such start is followed by the rest in order. With many optional starts, the
// rests are shared rules (`NAME-tail-I`), so the text grows linearly, not squared.
std::string Converter::members(const std::vector<std::string>& kvs, const std::vector<bool>& req,
                               const std::string& extra_kv, const std::string& name) {
  constexpr size_t kInlineStarts = 4;
  const std::string comma = seq({literal(","), "ws"});
  const std::string extras = extra_kv.empty() ? "" : "( " + seq({comma, extra_kv}) + " )*";
  const size_t first_required =
      static_cast<size_t>(std::find(req.begin(), req.end(), true) - req.begin());
  const size_t starts = std::min(first_required + 1, kvs.size());
  auto piece = [&](size_t i) {
    const std::string m = seq({comma, kvs[i]});
    return req[i] ? m : "( " + m + " )?";
  };
  // rest[i]: the listed members from i on (and the extras), after a member.
  std::vector<std::string> rest(kvs.size() + 1);
  rest[kvs.size()] = extras;
  const bool shared = starts > kInlineStarts;
  for (size_t i = kvs.size(); i-- > 1;) {
    rest[i] = seq({piece(i), rest[i + 1]});
    if (shared && i < kvs.size() - 1) // a tail of one member is short enough as it is
      rest[i] = rules_.add(child_name(name, "tail-" + std::to_string(i)), rest[i]);
  }
  std::vector<std::string> alts;
  for (size_t i = 0; i < starts; ++i)
    alts.push_back(seq({kvs[i], rest[i + 1]}));
  const bool any_required = first_required < kvs.size();
  if (!extra_kv.empty() && !any_required)
    alts.push_back(seq({extra_kv, extras}));
  if (alts.empty())
    return "";
  const std::string g = group(alts);
  return any_required ? g : paren(g) + "?";
}

// --- arrays ---

// An items schema's term; none for `false` (no such items).
Result<std::optional<std::string>> Converter::items_term(const Json& s, const std::string& ptr,
                                                         const std::string& name, int depth) {
  if (s.is_boolean() && !s.get<bool>())
    return std::optional<std::string>();
  PSHARD_ASSIGN_OR_RETURN(std::string t, term(s, ptr, name, depth + 1));
  return std::optional<std::string>(t);
}

Result<std::string> Converter::array_body(const Json& s, const std::string& ptr,
                                          const std::string& name, int depth) {
  const Json* items = member(s, "items");
  const Json* prefix = member(s, "prefixItems");
  const Json* additional = member(s, "additionalItems");
  std::vector<std::string> tuple;            // the leading items' terms
  std::optional<std::string> rest = "value"; // marked used below if it is
  const Json* tuple_schemas = prefix ? prefix : items && items->is_array() ? items : nullptr;
  const char* tuple_key = prefix ? "prefixItems" : "items";
  if (tuple_schemas) {
    if (!tuple_schemas->is_array())
      return bad_keyword(ptr, tuple_key, "must be an array of schemas");
    if (prefix && items && items->is_array())
      return bad_keyword(ptr, "items", "must be a schema when prefixItems is given");
    for (size_t i = 0; i < tuple_schemas->size(); ++i) {
      const std::string iptr = at(at(ptr, tuple_key), std::to_string(i));
      PSHARD_ASSIGN_OR_RETURN(auto t,
                              items_term((*tuple_schemas)[i], iptr,
                                         child_name(name, "item-" + std::to_string(i)), depth));
      if (!t)
        break; // `false` here: no array reaches this item
      tuple.push_back(*t);
    }
    // The items after the tuple: none unless the schema allows them.
    const Json* more = prefix ? items : additional;
    const char* more_key = prefix ? "items" : "additionalItems";
    rest.reset();
    if (more && tuple.size() == tuple_schemas->size()) {
      if (!more->is_boolean() && !more->is_object())
        return bad_keyword(ptr, more_key, "must be a schema");
      PSHARD_ASSIGN_OR_RETURN(
          rest, items_term(*more, at(ptr, more_key), child_name(name, "item"), depth));
    }
  } else if (items) {
    if (!items->is_boolean() && !items->is_object())
      return bad_keyword(ptr, "items", "must be a schema");
    PSHARD_ASSIGN_OR_RETURN(rest,
                            items_term(*items, at(ptr, "items"), child_name(name, "item"), depth));
  }
  PSHARD_ASSIGN_OR_RETURN(std::optional<int64_t> min_items, read_count(s, "minItems", ptr));
  PSHARD_ASSIGN_OR_RETURN(std::optional<int64_t> max_items, read_count(s, "maxItems", ptr));
  const auto k = static_cast<int64_t>(tuple.size());
  const int64_t min = min_items.value_or(0);
  std::optional<int64_t> max = max_items;
  if (!rest)
    max = std::min(max.value_or(k), k);
  if (max && min > *max)
    return invalid_argument("no array satisfies minItems " + std::to_string(min) +
                            " with at most " + std::to_string(*max) + " items " + where(ptr));
  PSHARD_RETURN_IF_ERROR(check_count(min, ptr, "minItems"));
  if (max)
    PSHARD_RETURN_IF_ERROR(check_count(*max, ptr, "maxItems"));
  rules_.use("ws");
  if (rest && *rest == "value" && (!max || *max > k))
    rules_.use("value");
  const std::string inner = array_items(tuple, rest, min, max, 0);
  return seq({literal("["), "ws", inner, literal("]")});
}

} // namespace pshard::json_grammar
