#include "tools/pshard-vision/npy_writer.h"

#include <cstdio>
#include <fstream>

namespace pshard {

Status write_npy(const std::string& path, const std::vector<float>& values,
                 const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t d : shape)
    dims += std::to_string(d) + ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f)
      return invalid_argument("cannot write '" + tmp + "'");
    const auto len = static_cast<uint16_t>(header.size());
    const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
    f.write(magic, 8);
    const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    f.write(len_bytes, 2);
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
    f.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
    if (!f)
      return invalid_argument("writing '" + tmp + "' failed (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return invalid_argument("cannot rename '" + tmp + "' to '" + path + "'");
  return Status::ok_status();
}

} // namespace pshard
