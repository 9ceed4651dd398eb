#include "replay/data/literals_file.h"

#include <google/protobuf/text_format.h>

#include "core/proto/literal_convert.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "replay/data/run_hlo_module_literals.pb.h"
#include "xla_data.pb.h"

namespace hlowb {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

absl::StatusOr<Literal> FromProto(const xla::LiteralProto& proto, const std::string& what) {
  auto l = LiteralFromProto(proto);
  if (!l.ok()) {
    return absl::InvalidArgumentError(StrCat(what, ": ", std::string(l.status().message())));
  }
  return std::move(*l);
}

}  // namespace

absl::StatusOr<std::vector<IterationLiterals>> ParseRunHloModuleLiterals(const std::string& data,
                                                                         const std::string& name) {
  xla::RunHloModuleLiterals proto;
  bool parsed = proto.ParseFromString(data);
  if (!parsed || (proto.iterations_size() == 0 && !data.empty())) {
    xla::RunHloModuleLiterals text_proto;
    if (google::protobuf::TextFormat::ParseFromString(data, &text_proto)) {
      proto = std::move(text_proto);
      parsed = true;
    }
  }
  if (!parsed) {
    return absl::InvalidArgumentError(
        StrCat(name, ": not a RunHloModuleLiterals message (binary or text proto)"));
  }
  std::vector<IterationLiterals> out;
  for (int i = 0; i < proto.iterations_size(); ++i) {
    const xla::RunHloModuleIterationLiterals& it = proto.iterations(i);
    IterationLiterals lit;
    for (int a = 0; a < it.arguments_size(); ++a) {
      auto l = FromProto(it.arguments(a), StrCat(name, ": iteration ", i + 1, " argument ", a));
      if (!l.ok()) return l.status();
      lit.arguments.push_back(std::move(*l));
    }
    if (it.has_result()) {
      auto l = FromProto(it.result(), StrCat(name, ": iteration ", i + 1, " result"));
      if (!l.ok()) return l.status();
      lit.result = std::move(*l);
    }
    if (it.has_reference_result()) {
      auto l = FromProto(it.reference_result(), StrCat(name, ": iteration ", i + 1, " reference result"));
      if (!l.ok()) return l.status();
      lit.reference_result = std::move(*l);
    }
    out.push_back(std::move(lit));
  }
  return out;
}

absl::StatusOr<std::vector<IterationLiterals>> ReadRunHloModuleLiterals(const std::string& path) {
  auto data = ReadFileToString(path);
  if (!data.ok()) return data.status();
  return ParseRunHloModuleLiterals(*data, path);
}

absl::StatusOr<std::string> EncodeRunHloModuleLiterals(
    const std::vector<IterationLiterals>& iterations, bool text) {
  xla::RunHloModuleLiterals proto;
  for (const IterationLiterals& it : iterations) {
    xla::RunHloModuleIterationLiterals* p = proto.add_iterations();
    for (const Literal& a : it.arguments) {
      absl::Status st = LiteralToProto(a, p->add_arguments());
      if (!st.ok()) return st;
    }
    if (it.result) {
      absl::Status st = LiteralToProto(*it.result, p->mutable_result());
      if (!st.ok()) return st;
    }
    if (it.reference_result) {
      absl::Status st = LiteralToProto(*it.reference_result, p->mutable_reference_result());
      if (!st.ok()) return st;
    }
  }
  std::string out;
  if (text) {
    if (!google::protobuf::TextFormat::PrintToString(proto, &out)) {
      return absl::InternalError("cannot print the literals as a text proto");
    }
  } else if (!proto.SerializeToString(&out)) {
    return absl::InvalidArgumentError(
        "cannot serialize the literals (a binary proto is limited to 2 GiB)");
  }
  return out;
}

absl::Status WriteRunHloModuleLiterals(const std::string& path,
                                       const std::vector<IterationLiterals>& iterations) {
  bool text = EndsWith(path, ".txt") || EndsWith(path, ".pbtxt") || EndsWith(path, ".textproto");
  auto data = EncodeRunHloModuleLiterals(iterations, text);
  if (!data.ok()) return data.status();
  return WriteStringToFile(path, *data);
}

}  // namespace hlowb
