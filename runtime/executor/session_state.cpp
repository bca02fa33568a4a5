#include "runtime/executor/session_state.h"

#include "runtime/core/checksum.h"
#include "runtime/core/file_bytes.h"
#include "runtime/core/temp_file.h"
#include "runtime/schedule/model_fingerprint.h"

#include <cstring>

namespace pshard {
namespace {

// The file, in the host's byte order (the x86-64 and AArch64 hosts pshard runs on are
// little-endian), fields in this order:
//   Header; int64 rows of each layer (its whole cache: what the layout depends on);
//   int32 token of each position; each layer's K rows then V rows of those positions;
//   uint64 Checksum64 of everything before it, fed in those pieces (version 2: version 1
//   had none, so a damaged file of the right length loaded).
constexpr char kMagic[8] = {'P', 'S', 'H', 'S', 'T', 'A', 'T', 'E'};
constexpr uint32_t kVersion = 2;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t k_type, v_type;
  uint32_t reserved;
  uint64_t fingerprint_hi, fingerprint_lo;
  int64_t n_ctx, n_layer, n_past;
};

std::vector<int64_t> layer_rows(const KvCache& kv, int64_t n_layer, int64_t positions) {
  std::vector<int64_t> rows;
  for (int64_t il = 0; il < n_layer; ++il)
    rows.push_back(kv.rows_held(il, positions));
  return rows;
}

uint64_t data_bytes(const KvCache& kv, int64_t n_layer, int64_t n_past) {
  uint64_t bytes = 0;
  for (int64_t rows : layer_rows(kv, n_layer, n_past))
    bytes += kv.k_bytes(rows) + kv.v_bytes(rows);
  return bytes;
}

std::string kv_types(TensorType k, TensorType v) {
  return std::string(tensor_type_name(k)) + "/" + tensor_type_name(v);
}

// What the file's header and layout say against the session's; the first difference.
Status check_fits(const Header& h, const std::vector<int64_t>& rows, HybridSession& session,
                  const Model& model, const std::string& path, uint64_t file_size) {
  const KvCache& kv = session.host_kv();
  const int64_t n_layer = model.hparams().n_layer;
  const std::string file = "the state file '" + path + "'";
  if (h.n_ctx != session.n_ctx() || h.k_type != static_cast<uint32_t>(kv.k_type()) ||
      h.v_type != static_cast<uint32_t>(kv.v_type()))
    return invalid_argument(
        file + " was saved by a context of " + std::to_string(h.n_ctx) + " positions with " +
        kv_types(static_cast<TensorType>(h.k_type), static_cast<TensorType>(h.v_type)) +
        " KV; this one has " + std::to_string(session.n_ctx()) + " with " +
        kv_types(kv.k_type(), kv.v_type()) +
        ": create the context with the same size and KV types");
  if (rows != layer_rows(kv, n_layer, session.n_ctx()))
    return invalid_argument(file + " was saved by a context whose layers keep other rows (a "
                                   "sliding window's whole cache or its ring: swa_full differs)");
  if (h.n_past < 0 || h.n_past > h.n_ctx)
    return invalid_format(file + " holds " + std::to_string(h.n_past) +
                          " positions, more than its context of " + std::to_string(h.n_ctx));
  const uint64_t expected = sizeof(Header) + rows.size() * sizeof(int64_t) +
                            static_cast<uint64_t>(h.n_past) * sizeof(int32_t) +
                            data_bytes(kv, n_layer, h.n_past) + sizeof(uint64_t);
  if (file_size != expected)
    return invalid_format(file + " is " + std::to_string(file_size) + " bytes where its " +
                          std::to_string(h.n_past) + " positions take " + std::to_string(expected) +
                          ": it is truncated or damaged; save it again");
  return Status::ok_status();
}

} // namespace

Status save_session_state(HybridSession& session, const Model& model,
                          std::span<const TokenId> tokens, const std::string& path) {
  const int64_t n_past = session.n_past();
  if (static_cast<int64_t>(tokens.size()) != n_past)
    return invalid_argument("the tokens to save with a context's state are those its " +
                            std::to_string(n_past) + " positions hold, one each; got " +
                            std::to_string(tokens.size()));
  PSHARD_RETURN_IF_ERROR(session.release_device()); // the KV rows on the host
  KvCache& kv = session.host_kv();
  const int64_t n_layer = model.hparams().n_layer;
  const ModelFingerprint fp = model_fingerprint(model.file());
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.k_type = static_cast<uint32_t>(kv.k_type());
  h.v_type = static_cast<uint32_t>(kv.v_type());
  h.fingerprint_hi = fp.hi;
  h.fingerprint_lo = fp.lo;
  h.n_ctx = session.n_ctx();
  h.n_layer = n_layer;
  h.n_past = n_past;
  const std::vector<int64_t> rows = layer_rows(kv, n_layer, session.n_ctx());
  TempFile file(path);
  PSHARD_RETURN_IF_ERROR(file.open());
  Checksum64 sum;
  auto put = [&](const void* data, size_t n) {
    sum.add(data, n);
    return file.write_all(static_cast<const uint8_t*>(data), n);
  };
  PSHARD_RETURN_IF_ERROR(put(&h, sizeof h));
  PSHARD_RETURN_IF_ERROR(put(rows.data(), rows.size() * sizeof(int64_t)));
  PSHARD_RETURN_IF_ERROR(put(tokens.data(), tokens.size() * sizeof(TokenId)));
  const std::vector<int64_t> held = layer_rows(kv, n_layer, n_past);
  for (int64_t il = 0; il < n_layer; ++il) {
    const KvView layer = kv.layer(il);
    PSHARD_RETURN_IF_ERROR(put(layer.k, kv.k_bytes(held[static_cast<size_t>(il)])));
    PSHARD_RETURN_IF_ERROR(put(layer.v, kv.v_bytes(held[static_cast<size_t>(il)])));
  }
  const uint64_t value = sum.value();
  PSHARD_RETURN_IF_ERROR(put(&value, sizeof value));
  return file.commit();
}

namespace {

// Opens the file and reads its header and layout, checked against the session: what
// loading needs to go on reading the tokens and rows; `sum` has taken what was read.
Result<Header> open_checked(FileReader& in, HybridSession& session, const Model& model,
                            const std::string& path, Checksum64& sum) {
  PSHARD_RETURN_IF_ERROR(in.open(path));
  const uint64_t size = in.size();
  Header h{};
  const std::string file = "the state file '" + path + "'";
  if (size < sizeof h || !in.read(&h, sizeof h).ok() ||
      std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    return invalid_format("'" + path +
                          "' is not a pshard state file "
                          "(pshard_context_state_save_file writes them)");
  if (h.version != kVersion)
    return invalid_format(file + " is of version " + std::to_string(h.version) +
                          "; this pshard reads version " + std::to_string(kVersion));
  const ModelFingerprint fp = model_fingerprint(model.file());
  if (h.fingerprint_hi != fp.hi || h.fingerprint_lo != fp.lo)
    return invalid_argument(file + " was saved with another model (fingerprint " +
                            ModelFingerprint{h.fingerprint_hi, h.fingerprint_lo}.hex() +
                            "; this context's model is " + fp.hex() + ")");
  const int64_t n_layer = model.hparams().n_layer;
  if (h.n_layer != n_layer)
    return invalid_format(file + " lists " + std::to_string(h.n_layer) +
                          " layers where its model has " + std::to_string(n_layer));
  std::vector<int64_t> rows(static_cast<size_t>(n_layer));
  if (size < sizeof h + rows.size() * sizeof(int64_t))
    return invalid_format(file + " ends inside its header: it is truncated; save it again");
  PSHARD_RETURN_IF_ERROR(in.read(rows.data(), rows.size() * sizeof(int64_t)));
  PSHARD_RETURN_IF_ERROR(check_fits(h, rows, session, model, path, size));
  sum.add(&h, sizeof h);
  sum.add(rows.data(), rows.size() * sizeof(int64_t));
  return h;
}

} // namespace

Result<int64_t> saved_state_positions(HybridSession& session, const Model& model,
                                      const std::string& path) {
  FileReader in;
  Checksum64 sum;
  PSHARD_ASSIGN_OR_RETURN(const Header h, open_checked(in, session, model, path, sum));
  return h.n_past;
}

Result<std::vector<TokenId>> load_session_state(HybridSession& session, const Model& model,
                                                const std::string& path) {
  static_assert(sizeof(TokenId) == sizeof(int32_t));
  FileReader in;
  Checksum64 sum;
  PSHARD_ASSIGN_OR_RETURN(const Header h, open_checked(in, session, model, path, sum));
  auto get = [&](void* data, size_t n) {
    Status st = in.read(data, n);
    if (st.ok())
      sum.add(data, n);
    return st;
  };
  std::vector<TokenId> tokens(static_cast<size_t>(h.n_past));
  PSHARD_RETURN_IF_ERROR(get(tokens.data(), tokens.size() * sizeof(TokenId)));
  const int64_t n_vocab = model.hparams().n_vocab;
  for (TokenId t : tokens)
    if (t < 0 || t >= n_vocab)
      return invalid_format("the state file '" + path + "' holds token " + std::to_string(t) +
                            ", not below the model's vocabulary of " + std::to_string(n_vocab));
  // From here on the session changes: on any failure it is left empty.
  PSHARD_RETURN_IF_ERROR(session.release_device());
  session.reset();
  KvCache& kv = session.host_kv();
  const int64_t n_layer = model.hparams().n_layer;
  const std::vector<int64_t> held = layer_rows(kv, n_layer, h.n_past);
  for (int64_t il = 0; il < n_layer; ++il) {
    const KvView layer = kv.layer(il);
    Status st = get(layer.k, kv.k_bytes(held[static_cast<size_t>(il)]));
    if (st.ok())
      st = get(layer.v, kv.v_bytes(held[static_cast<size_t>(il)]));
    if (!st.ok()) {
      session.reset();
      return st;
    }
  }
  const uint64_t want = sum.value();
  uint64_t saved = 0;
  if (Status st = in.read(&saved, sizeof saved); !st.ok() || saved != want) {
    session.reset();
    return st.ok() ? invalid_format("the state file '" + path +
                                    "' is damaged (its checksum does not match its bytes): "
                                    "save it again")
                   : st;
  }
  PSHARD_RETURN_IF_ERROR(session.restore_positions(h.n_past));
  return tokens;
}

} // namespace pshard
