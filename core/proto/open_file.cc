#include "core/proto/open_file.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <functional>

#include "core/proto/hlo.pb.h"
#include "core/proto/literal_convert.h"
#include "core/proto/xla_data.pb.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"

namespace hlowb {
namespace {

namespace pb = google::protobuf;

absl::Status Invalid(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Indents continuation lines so multi-line reasons stay readable inside a list.
std::string Indent(std::string_view s) {
  std::string out;
  for (char c : s) {
    out.push_back(c);
    if (c == '\n') out.append("      ");
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Wire-format diagnosis: protobuf only says "failed"; this finds where and why.

bool ValidUtf8(std::string_view s) {
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int extra;
    if (c < 0x80) {
      extra = 0;
    } else if ((c >> 5) == 0x6) {
      extra = 1;
    } else if ((c >> 4) == 0xE) {
      extra = 2;
    } else if ((c >> 3) == 0x1E) {
      extra = 3;
    } else {
      return false;
    }
    if (extra > 0 && i + extra >= n) return false;
    for (int k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += extra + 1;
  }
  return true;
}

bool ReadVarint(const uint8_t* p, size_t size, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= size) return false;
    uint8_t b = p[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

std::string FindWireError(const uint8_t* p, size_t size, const pb::Descriptor* d, size_t base,
                          int depth) {
  if (depth > 100) return StrCat("messages nested deeper than 100 levels at byte ", base);
  size_t pos = 0;
  while (pos < size) {
    size_t start = pos;
    uint64_t tag;
    if (!ReadVarint(p, size, &pos, &tag)) {
      return StrCat("truncated or malformed field tag at byte ", base + start);
    }
    const int number = static_cast<int>(tag >> 3);
    const int wire_type = static_cast<int>(tag & 7);
    const pb::FieldDescriptor* f = d ? d->FindFieldByNumber(number) : nullptr;
    const std::string field =
        f ? StrCat("field ", number, " (", f->full_name(), ")") : StrCat("field ", number);
    if (number == 0) return StrCat("invalid field number 0 at byte ", base + start);
    switch (wire_type) {
      case 0: {
        uint64_t v;
        if (!ReadVarint(p, size, &pos, &v)) {
          return StrCat(field, " at byte ", base + start, ": truncated varint");
        }
        break;
      }
      case 1:
      case 5: {
        size_t n = wire_type == 1 ? 8 : 4;
        if (size - pos < n) {
          return StrCat(field, " at byte ", base + start, ": needs ", n, " bytes, only ",
                        size - pos, " left");
        }
        pos += n;
        break;
      }
      case 2: {
        uint64_t len;
        if (!ReadVarint(p, size, &pos, &len)) {
          return StrCat(field, " at byte ", base + start, ": truncated length");
        }
        if (len > size - pos) {
          return StrCat(field, " at byte ", base + start, ": length ", len,
                        " runs past the end of the data (", size - pos, " bytes left)");
        }
        if (f && f->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
          std::string inner = FindWireError(p + pos, static_cast<size_t>(len), f->message_type(),
                                            base + pos, depth + 1);
          if (!inner.empty()) return inner;
        } else if (f && f->type() == pb::FieldDescriptor::TYPE_STRING &&
                   !ValidUtf8(std::string_view(reinterpret_cast<const char*>(p + pos), len))) {
          return StrCat(field, " at byte ", base + start, " is not valid UTF-8 text");
        }
        pos += static_cast<size_t>(len);
        break;
      }
      default:
        return StrCat(field, " at byte ", base + start, ": invalid wire type ", wire_type);
    }
  }
  return "";
}

// Parses binary protobuf; on failure says where the encoding breaks.
absl::Status ParseBinary(std::string_view bytes, pb::Message* msg) {
  if (bytes.empty()) return Invalid("the data is empty");
  if (bytes.size() >= static_cast<size_t>(INT_MAX)) {
    return Invalid("the data is 2 GiB or larger, which protobuf cannot parse");
  }
  pb::LogSilencer silence;  // protobuf logs UTF-8 complaints; we report them ourselves
  pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                              static_cast<int>(bytes.size()));
  in.SetRecursionLimit(100);
  if (msg->ParseFromCodedStream(&in) && in.ConsumedEntireMessage()) return absl::OkStatus();
  std::string where = FindWireError(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                    msg->GetDescriptor(), 0, 0);
  if (where.empty()) where = "protobuf rejected the encoding";
  return Invalid(StrCat("not a valid ", msg->GetDescriptor()->full_name(), " encoding: ", where));
}

class CollectErrors : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) first_ = StrCat("line ", line + 1, ":", column + 1, ": ", message);
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

absl::Status ParseText(std::string_view text, pb::Message* msg) {
  if (text.size() >= static_cast<size_t>(INT_MAX)) return Invalid("the text is too large");
  pb::TextFormat::Parser parser;
  CollectErrors errors;
  parser.RecordErrorsTo(&errors);
  parser.SetRecursionLimit(100);
  pb::LogSilencer silence;
  if (parser.ParseFromString(std::string(text), msg)) return absl::OkStatus();
  return Invalid(StrCat("not a ", msg->GetDescriptor()->full_name(),
                        " text proto: ", errors.first().empty() ? "parse error" : errors.first()));
}

// ---------------------------------------------------------------------------------------------
// Decoders per format

struct Attempt {
  HloFileFormat format;
  std::string reason;  // why it failed
};

absl::Status ConvertHloProto(const xla::HloProto& hp, std::string_view label,
                             const OpenOptions& options, OpenedHloFile* out) {
  if (!hp.has_hlo_module()) return Invalid("there is no hlo_module (field 1)");
  absl::StatusOr<std::unique_ptr<Module>> m =
      ModuleFromProto(hp.hlo_module(), options.proto, &out->warnings);
  if (!m.ok()) return m.status();
  out->modules.push_back({std::string(label), std::move(*m)});
  if (hp.has_buffer_assignment()) {
    out->buffer_assignment = std::make_shared<xla::BufferAssignmentProto>(hp.buffer_assignment());
  }
  return absl::OkStatus();
}

absl::Status ConvertSnapshot(const xla::HloSnapshot& s, std::string_view label,
                             const OpenOptions& options, OpenedHloFile* out) {
  if (!s.has_hlo()) return Invalid("there is no hlo (field 1)");
  absl::Status st = ConvertHloProto(s.hlo(), label, options, out);
  if (!st.ok()) return st;
  out->is_snapshot = true;
  for (int i = 0; i < s.arguments_size(); ++i) {
    absl::StatusOr<Literal> lit = LiteralFromProto(s.arguments(i), options.proto.limits);
    if (!lit.ok()) return Invalid(StrCat("argument ", i, ": ", lit.status().message()));
    out->arguments.push_back(std::move(*lit));
  }
  if (s.has_result()) {
    absl::StatusOr<Literal> lit = LiteralFromProto(s.result(), options.proto.limits);
    if (!lit.ok()) return Invalid(StrCat("result: ", lit.status().message()));
    out->result = std::move(*lit);
  }
  out->execution_platform = s.execution_platform();
  const Computation* entry = out->modules.back().module->entry();
  if (entry && static_cast<int>(out->arguments.size()) != entry->parameter_count()) {
    out->warnings.push_back(StrCat("the snapshot has ", out->arguments.size(),
                                   " arguments but the entry computation has ",
                                   entry->parameter_count(), " parameters"));
  }
  return absl::OkStatus();
}

absl::Status TryFormat(HloFileFormat format, std::string_view bytes, std::string_view label,
                       const OpenOptions& options, OpenedHloFile* out) {
  switch (format) {
    case HloFileFormat::kHloText: {
      std::vector<std::string_view> parts =
          options.split_input_file ? SplitInputFile(bytes) : std::vector<std::string_view>{bytes};
      for (size_t i = 0; i < parts.size(); ++i) {
        ParseOptions po;
        po.file_name = std::string(label);
        po.enclosing_text = bytes;
        absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(parts[i], po);
        if (!m.ok()) return m.status();
        out->modules.push_back(
            {parts.size() > 1 ? StrCat(label, "#", i + 1) : std::string(label), std::move(*m)});
      }
      return absl::OkStatus();
    }
    case HloFileFormat::kHloProto:
    case HloFileFormat::kHloProtoText: {
      // An arena makes parsing and freeing the many small messages several times cheaper.
      pb::Arena arena;
      auto* hp = pb::Arena::CreateMessage<xla::HloProto>(&arena);
      absl::Status st =
          format == HloFileFormat::kHloProto ? ParseBinary(bytes, hp) : ParseText(bytes, hp);
      if (!st.ok()) return st;
      return ConvertHloProto(*hp, label, options, out);
    }
    case HloFileFormat::kHloModuleProto:
    case HloFileFormat::kHloModuleProtoText: {
      pb::Arena arena;
      auto* mp = pb::Arena::CreateMessage<xla::HloModuleProto>(&arena);
      absl::Status st =
          format == HloFileFormat::kHloModuleProto ? ParseBinary(bytes, mp) : ParseText(bytes, mp);
      if (!st.ok()) return st;
      absl::StatusOr<std::unique_ptr<Module>> m =
          ModuleFromProto(*mp, options.proto, &out->warnings);
      if (!m.ok()) return m.status();
      out->modules.push_back({std::string(label), std::move(*m)});
      return absl::OkStatus();
    }
    case HloFileFormat::kHloSnapshot:
    case HloFileFormat::kHloSnapshotText: {
      pb::Arena arena;
      auto* s = pb::Arena::CreateMessage<xla::HloSnapshot>(&arena);
      absl::Status st =
          format == HloFileFormat::kHloSnapshot ? ParseBinary(bytes, s) : ParseText(bytes, s);
      if (!st.ok()) return st;
      return ConvertSnapshot(*s, label, options, out);
    }
  }
  return absl::InternalError("unknown format");
}

bool IsTextFormat(HloFileFormat f) {
  return f == HloFileFormat::kHloText || f == HloFileFormat::kHloProtoText ||
         f == HloFileFormat::kHloModuleProtoText || f == HloFileFormat::kHloSnapshotText;
}

// Skips whitespace and `//` or `#` comment lines.
std::string_view FirstToken(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else if (s[i] == '#' || s.substr(i, 2) == "//") {
      while (i < s.size() && s[i] != '\n') ++i;
    } else {
      break;
    }
  }
  size_t j = i;
  while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
  size_t k = j;
  while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
  // Token plus the next significant character, e.g. "hlo_module{" or "name:".
  return s.substr(i, std::min(k + 1, s.size()) - i);
}

// Candidate formats, most likely first.
std::vector<HloFileFormat> OrderCandidates(std::string_view lower_name, std::string_view bytes,
                                           bool is_text) {
  using F = HloFileFormat;
  std::vector<F> order;
  auto add = [&](F f) {
    if (std::find(order.begin(), order.end(), f) == order.end()) order.push_back(f);
  };
  const bool snapshot_name = lower_name.find("snapshot") != std::string_view::npos;
  if (EndsWith(lower_name, ".pb") || EndsWith(lower_name, ".binpb")) {
    if (snapshot_name) add(F::kHloSnapshot);
    add(F::kHloProto);
    add(F::kHloModuleProto);
    add(F::kHloSnapshot);
  } else if (EndsWith(lower_name, ".pbtxt") || EndsWith(lower_name, ".textproto") ||
             EndsWith(lower_name, ".txtpb") || EndsWith(lower_name, ".prototxt")) {
    if (snapshot_name) add(F::kHloSnapshotText);
    add(F::kHloProtoText);
    add(F::kHloModuleProtoText);
    add(F::kHloSnapshotText);
  } else if (EndsWith(lower_name, ".hlo") || EndsWith(lower_name, ".txt")) {
    add(F::kHloText);
  }
  if (is_text) {
    std::string_view first = FirstToken(bytes);
    const bool proto_like = !first.empty() && (first.back() == ':' || first.back() == '{') &&
                            first.substr(0, 9) != "HloModule";
    if (proto_like) {
      if (snapshot_name || first.substr(0, 4) == "hlo ") add(F::kHloSnapshotText);
      add(F::kHloProtoText);
      add(F::kHloModuleProtoText);
      add(F::kHloSnapshotText);
      add(F::kHloText);
    } else {
      add(F::kHloText);
      add(F::kHloProtoText);
      add(F::kHloModuleProtoText);
      add(F::kHloSnapshotText);
    }
  }
  add(F::kHloProto);
  add(F::kHloModuleProto);
  add(F::kHloSnapshot);
  add(F::kHloText);
  add(F::kHloProtoText);
  add(F::kHloModuleProtoText);
  add(F::kHloSnapshotText);
  return order;
}

}  // namespace

std::string_view HloFileFormatName(HloFileFormat format) {
  switch (format) {
    case HloFileFormat::kHloText:
      return "HLO text";
    case HloFileFormat::kHloProto:
      return "HloProto (binary)";
    case HloFileFormat::kHloModuleProto:
      return "HloModuleProto (binary)";
    case HloFileFormat::kHloSnapshot:
      return "HloSnapshot (binary)";
    case HloFileFormat::kHloProtoText:
      return "HloProto (text proto)";
    case HloFileFormat::kHloModuleProtoText:
      return "HloModuleProto (text proto)";
    case HloFileFormat::kHloSnapshotText:
      return "HloSnapshot (text proto)";
  }
  return "?";
}

absl::StatusOr<std::string> Gunzip(std::string_view data, uint64_t max_bytes) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  // 15 + 32: accept both gzip and zlib headers.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return absl::InternalError("zlib initialization failed");
  std::string out;
  size_t offset = 0;
  int rc = Z_OK;
  char buffer[1 << 16];
  while (true) {
    if (zs.avail_in == 0 && offset < data.size()) {
      size_t chunk = std::min<size_t>(data.size() - offset, 1u << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + offset));
      zs.avail_in = static_cast<uInt>(chunk);
      offset += chunk;
    }
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    size_t produced = sizeof(buffer) - zs.avail_out;
    if (out.size() + produced > max_bytes) {
      inflateEnd(&zs);
      return absl::ResourceExhaustedError(
          StrCat("the compressed data inflates to more than ", max_bytes, " bytes"));
    }
    out.append(buffer, produced);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (what `cat a.gz b.gz` makes) continue the stream.
      if (zs.avail_in == 0 && offset >= data.size()) break;
      if (inflateReset(&zs) != Z_OK) break;
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && offset >= data.size()) {
      inflateEnd(&zs);
      return Invalid(StrCat("the compressed data is truncated (", out.size(),
                            " bytes inflated before it ended)"));
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string msg = zs.msg ? zs.msg : "corrupted data";
      inflateEnd(&zs);
      return Invalid(StrCat("the compressed data is corrupted: ", msg));
    }
  }
  inflateEnd(&zs);
  return out;
}

absl::StatusOr<std::string> Gzip(std::string_view data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  // 15 + 16: gzip header, which gunzip and XLA's tools read.
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return absl::InternalError("zlib initialization failed");
  }
  std::string out;
  size_t offset = 0;
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.avail_in == 0 && offset < data.size()) {
      size_t chunk = std::min<size_t>(data.size() - offset, 1u << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + offset));
      zs.avail_in = static_cast<uInt>(chunk);
      offset += chunk;
    }
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = deflate(&zs, offset >= data.size() && zs.avail_in == 0 ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) {
      deflateEnd(&zs);
      return absl::InternalError("zlib compression failed");
    }
    out.append(buffer, sizeof(buffer) - zs.avail_out);
  }
  deflateEnd(&zs);
  return out;
}

absl::StatusOr<OpenedHloFile> OpenHloBytes(std::string_view data, std::string_view name,
                                           const OpenOptions& options) {
  const std::string label(name);
  std::string lower = Lower(BaseName(name));
  std::vector<std::string> tried;
  std::vector<std::string> warnings;
  std::string inflated;
  std::string_view bytes = data;
  bool gzipped = false;
  const bool gz_name = EndsWith(lower, ".gz");
  if (gz_name) lower = lower.substr(0, lower.size() - 3);
  const bool gzip_magic = data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
                          static_cast<unsigned char>(data[1]) == 0x8b;
  // zlib streams (what some tools write) start with 0x78 and a header checksum.
  const bool zlib_magic =
      gz_name && data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x78 &&
      ((static_cast<unsigned char>(data[0]) << 8) | static_cast<unsigned char>(data[1])) % 31 == 0;
  if (gzip_magic || zlib_magic) {
    absl::StatusOr<std::string> d = Gunzip(data, options.max_decompressed_bytes);
    if (!d.ok()) {
      return absl::Status(d.status().code(), StrCat(label, ": ", gzip_magic ? "gzip" : "zlib",
                                                    " data: ", d.status().message()));
    }
    inflated = std::move(*d);
    bytes = inflated;
    gzipped = true;
  } else if (gz_name) {
    std::string first;
    for (size_t i = 0; i < std::min<size_t>(data.size(), 2); ++i) {
      StrAppend(&first, i ? " " : "",
                absl::Hex(static_cast<unsigned char>(data[i]), absl::kZeroPad2));
    }
    std::string reason =
        data.empty() ? "the file is empty"
                     : StrCat("not gzip data (it starts with bytes ", first, ", not 1f 8b)");
    tried.push_back(StrCat("gzip: ", reason));
    warnings.push_back(StrCat("named .gz but ", reason, "; read as uncompressed"));
  }

  // Text formats cannot contain NUL bytes; skip them with that reason when there is one.
  size_t nul = bytes.substr(0, size_t{1} << 20).find('\0');
  const bool is_text = nul == std::string_view::npos && !bytes.empty();
  for (HloFileFormat format : OrderCandidates(lower, bytes, is_text)) {
    if (IsTextFormat(format) && !is_text) {
      tried.push_back(StrCat(HloFileFormatName(format), ": skipped, ",
                             bytes.empty() ? std::string("the file is empty")
                                           : StrCat("binary data (NUL byte at offset ", nul, ")")));
      continue;
    }
    OpenedHloFile out;
    out.warnings = warnings;
    absl::Status st = TryFormat(format, bytes, label, options, &out);
    if (st.ok()) {
      out.format = format;
      out.gzipped = gzipped;
      return out;
    }
    tried.push_back(StrCat(HloFileFormatName(format), ": ", Indent(AsStd(st.message()))));
  }
  std::string msg = StrCat(label, ": not a readable HLO file", gzipped ? " (after gunzip)" : "",
                           "; formats tried:");
  for (const std::string& t : tried) StrAppend(&msg, "\n  ", t);
  return Invalid(msg);
}

absl::StatusOr<OpenedHloFile> OpenHloFile(const std::string& path, const OpenOptions& options) {
  absl::StatusOr<std::string> data = ReadFileToString(path, options.max_file_bytes);
  if (!data.ok()) return data.status();
  return OpenHloBytes(*data, path == "-" ? "<stdin>" : path, options);
}

// ---------------------------------------------------------------------------------------------
// Writing

std::optional<HloOutputFormat> ParseHloOutputFormat(std::string_view name) {
  if (name == "hlo") return HloOutputFormat::kHloText;
  if (name == "hlo-short") return HloOutputFormat::kHloTextShort;
  if (name == "pb") return HloOutputFormat::kHloProto;
  if (name == "module-pb") return HloOutputFormat::kHloModuleProto;
  if (name == "pbtxt") return HloOutputFormat::kHloProtoText;
  if (name == "snapshot") return HloOutputFormat::kHloSnapshot;
  return std::nullopt;
}

bool OutputIsGzipped(std::string_view path) { return EndsWith(Lower(path), ".gz"); }

std::optional<HloOutputFormat> OutputFormatFromPath(std::string_view path) {
  std::string lower = Lower(BaseName(path));
  if (EndsWith(lower, ".gz")) lower = lower.substr(0, lower.size() - 3);
  if (EndsWith(lower, ".hlo") || EndsWith(lower, ".txt")) return HloOutputFormat::kHloText;
  if (EndsWith(lower, ".pbtxt") || EndsWith(lower, ".textproto") || EndsWith(lower, ".txtpb")) {
    return HloOutputFormat::kHloProtoText;
  }
  if (EndsWith(lower, ".pb")) {
    return lower.find("snapshot") != std::string::npos ? HloOutputFormat::kHloSnapshot
                                                       : HloOutputFormat::kHloProto;
  }
  return std::nullopt;
}

namespace {

absl::StatusOr<std::string> SerializeDeterministic(const pb::Message& m) {
  if (m.ByteSizeLong() >= static_cast<size_t>(INT_MAX)) {
    return absl::ResourceExhaustedError("the encoded message would be 2 GiB or larger");
  }
  std::string out;
  {
    pb::io::StringOutputStream stream(&out);
    pb::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!m.SerializeToCodedStream(&coded))
      return absl::InternalError("protobuf serialization failed");
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> EncodeHloFile(const Module& module, HloOutputFormat format,
                                          const EncodeOptions& options,
                                          std::vector<std::string>* warnings) {
  std::string out;
  switch (format) {
    case HloOutputFormat::kHloText:
    case HloOutputFormat::kHloTextShort:
      // Text in the style XLA writes its dumps in today (no operand shapes).
      out = PrintModule(module, format == HloOutputFormat::kHloText ? PrintOptions::Dump()
                                                                    : PrintOptions::Short());
      break;
    default: {
      xla::HloSnapshot snapshot;
      xla::HloProto* hp = snapshot.mutable_hlo();
      absl::Status st = ModuleToProto(module, hp->mutable_hlo_module(), options.proto, warnings);
      if (!st.ok()) return st;
      if (options.buffer_assignment) *hp->mutable_buffer_assignment() = *options.buffer_assignment;
      const pb::Message* message = hp;
      if (format == HloOutputFormat::kHloModuleProto) message = &hp->hlo_module();
      if (format == HloOutputFormat::kHloSnapshot) {
        message = &snapshot;
        if (options.snapshot) {
          for (size_t i = 0; i < options.snapshot->arguments.size(); ++i) {
            st = LiteralToProto(options.snapshot->arguments[i], snapshot.add_arguments());
            if (!st.ok()) return Invalid(StrCat("argument ", i, ": ", st.message()));
          }
          if (options.snapshot->result) {
            st = LiteralToProto(*options.snapshot->result, snapshot.mutable_result());
            if (!st.ok()) return Invalid(StrCat("result: ", st.message()));
          }
          snapshot.set_execution_platform(options.snapshot->execution_platform);
        }
      }
      if (format == HloOutputFormat::kHloProtoText) {
        pb::TextFormat::Printer printer;
        if (!printer.PrintToString(*message, &out))
          return absl::InternalError("text proto printing failed");
      } else {
        absl::StatusOr<std::string> bytes = SerializeDeterministic(*message);
        if (!bytes.ok()) return bytes.status();
        out = std::move(*bytes);
      }
      break;
    }
  }
  if (options.gzip) return Gzip(out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Literal files

absl::StatusOr<LiteralFile> OpenLiteralFile(const std::string& path, const OpenOptions& options) {
  absl::StatusOr<std::string> data = ReadFileToString(path, options.max_file_bytes);
  if (!data.ok()) return data.status();
  const std::string label = path == "-" ? "<stdin>" : path;
  std::string_view bytes = *data;
  std::string inflated;
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b) {
    absl::StatusOr<std::string> d = Gunzip(bytes, options.max_decompressed_bytes);
    if (!d.ok())
      return absl::Status(d.status().code(), StrCat(label, ": gzip data: ", d.status().message()));
    inflated = std::move(*d);
    bytes = inflated;
  }
  std::vector<std::string> tried;
  // A snapshot (any format OpenHloBytes reads).
  {
    absl::StatusOr<OpenedHloFile> f = OpenHloBytes(bytes, label, options);
    if (f.ok() && f->is_snapshot) {
      LiteralFile out;
      out.description =
          StrCat("HloSnapshot of module '", f->modules[0].module->name(), "'",
                 f->execution_platform.empty() ? "" : " run on ", f->execution_platform);
      out.warnings = std::move(f->warnings);
      const Computation* entry = f->modules[0].module->entry();
      for (size_t i = 0; i < f->arguments.size(); ++i) {
        std::string name = StrCat("argument ", i);
        if (entry && static_cast<int>(i) < entry->parameter_count() &&
            entry->parameter(static_cast<int>(i))) {
          StrAppend(&name, " (", entry->parameter(static_cast<int>(i))->name(), ")");
        }
        out.literals.push_back({name, std::move(f->arguments[i])});
      }
      if (f->result) out.literals.push_back({"result", std::move(*f->result)});
      return out;
    }
    tried.push_back(f.ok() ? StrCat("HLO files: it is ", HloFileFormatName(f->format),
                                    " without arguments or result")
                           : StrCat("HLO files: ", Indent(AsStd(f.status().message()))));
  }
  // A LiteralProto, binary or text.
  {
    xla::LiteralProto lp;
    absl::Status st = ParseBinary(bytes, &lp);
    if (st.ok()) {
      absl::StatusOr<Literal> lit = LiteralFromProto(lp, options.proto.limits);
      if (lit.ok()) {
        LiteralFile out;
        out.description = "LiteralProto (binary)";
        out.literals.push_back({label, std::move(*lit)});
        return out;
      }
      st = lit.status();
    }
    tried.push_back(StrCat("LiteralProto (binary): ", st.message()));
    lp.Clear();
    st =
        bytes.find('\0') == std::string_view::npos ? ParseText(bytes, &lp) : Invalid("binary data");
    if (st.ok()) {
      absl::StatusOr<Literal> lit = LiteralFromProto(lp, options.proto.limits);
      if (lit.ok()) {
        LiteralFile out;
        out.description = "LiteralProto (text proto)";
        out.literals.push_back({label, std::move(*lit)});
        return out;
      }
      st = lit.status();
    }
    tried.push_back(StrCat("LiteralProto (text proto): ", st.message()));
  }
  // HLO literal text.
  {
    absl::StatusOr<Literal> lit = bytes.find('\0') == std::string_view::npos
                                      ? ParseShapedLiteral(bytes)
                                      : absl::StatusOr<Literal>(Invalid("binary data"));
    if (lit.ok()) {
      LiteralFile out;
      out.description = "HLO literal text";
      out.literals.push_back({label, std::move(*lit)});
      return out;
    }
    tried.push_back(StrCat("HLO literal text: ", Indent(AsStd(lit.status().message()))));
  }
  std::string msg = StrCat(label, ": no literals found; formats tried:");
  for (const std::string& t : tried) StrAppend(&msg, "\n  ", t);
  return Invalid(msg);
}

}  // namespace hlowb

namespace hlowb {

std::function<absl::StatusOr<std::unique_ptr<Module>>(const std::string&)> AnyFormatModuleOpener(
    const OpenOptions& options) {
  return [options](const std::string& path) -> absl::StatusOr<std::unique_ptr<Module>> {
    absl::StatusOr<OpenedHloFile> file = OpenHloFile(path, options);
    if (!file.ok()) return file.status();
    if (file->modules.empty()) {
      return absl::InvalidArgumentError(StrCat(path, ": the file holds no module"));
    }
    return std::move(file->modules.front().module);
  };
}

bool LooksLikeHloText(std::string_view name, std::string_view head) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".hlo") || ends_with(".txt")) return true;
  if (ends_with(".pb") || ends_with(".gz") || ends_with(".pbtxt") || ends_with(".textproto")) {
    return false;
  }
  for (unsigned char c : head.substr(0, 4096)) {
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) return false;
  }
  size_t start = head.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return true;
  std::string_view rest = head.substr(start);
  // Text protos start with a field name followed by ':' or '{' (hlo_module {, name: ...).
  size_t word = 0;
  while (word < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[word])) || rest[word] == '_')) ++word;
  if (word > 0 && rest.substr(0, word) != "HloModule") {
    size_t next = rest.find_first_not_of(" \t", word);
    if (next != std::string_view::npos && (rest[next] == ':' || rest[next] == '{')) return false;
  }
  return true;
}

}  // namespace hlowb
