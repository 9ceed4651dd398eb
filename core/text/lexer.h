// Tokenizer for HLO text (hlo-format.md §1.1). Pull-based: the parser looks at the current
// token and advances. Tokens point into the input text (no copies) except string literals,
// whose unescaped value is materialized. The lexer never fails hard: bad characters become
// kError tokens that the parser reports with their position.
#ifndef HLOWB_CORE_TEXT_LEXER_H_
#define HLOWB_CORE_TEXT_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ir/primitive_type.h"

namespace hlowb {

enum class TokKind : uint8_t {
  kEof,
  kError,
  kIdent,      // bare identifier (opcodes, enum words, keywords)
  kName,       // %name, or identifier immediately followed by ':' (':' consumed)
  kAttrName,   // identifier immediately followed by '=' ('=' consumed)
  kPrimType,   // f32, s32, pred, token, ...
  kInt,
  kDecimal,    // includes nan, -nan, nan(0x..)
  kNegInf,     // -inf
  kString,
  kDimLabels,  // b01f_01io->b01f
  kDxD,        // 3x3
  kPad,        // 0_0x1_1
  kEqual,
  kComma,
  kColon,
  kStar,
  kHash,
  kPlus,
  kTilde,
  kLsquare,
  kRsquare,
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kQuestion,
  kArrow,
  kLeq,
  kDots,
};

std::string_view TokKindName(TokKind kind);

struct Token {
  TokKind kind = TokKind::kEof;
  std::string_view text;   // raw text of the token (attr names/names without '=', ':', '%')
  size_t offset = 0;       // byte offset of the token's first character
  size_t end = 0;          // byte offset one past the token
  bool newline_before = false;  // a line break separates it from the previous token
  // kInt: value as unsigned bits plus sign; values up to 2^64-1 are representable.
  uint64_t int_bits = 0;
  bool int_negative = false;
  bool int_overflow = false;
  // kDecimal: parsed value; NaN payload (if given) in nan_payload.
  double decimal = 0;
  bool has_nan_payload = false;
  uint64_t nan_payload = 0;
  PrimitiveType prim = PrimitiveType::kInvalid;
  std::string str;  // kString: unescaped value; kError: what is wrong
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  const Token& tok() const { return tok_; }
  TokKind kind() const { return tok_.kind; }
  // Advances to the next token and returns its kind.
  TokKind Next();
  // Positions the lexer at `offset` and lexes the token there.
  void SeekTo(size_t offset);
  std::string_view text() const { return text_; }
  // End offset of the token before the current one (where the last consumed token ended).
  size_t prev_end() const { return prev_end_; }
  // Moves the current kString token's value out (the token is consumed by the caller next).
  std::string TakeString() { return std::move(tok_.str); }
  // Lexes a balanced `{...}` starting at the current token (which must be '{'), treating quoted
  // strings as opaque, and returns its raw text; the lexer is advanced past it. Returns false
  // on an unbalanced dict.
  bool TakeBalancedBraces(std::string_view* out);
  // Returns the raw text from the current token up to (not including) the next ',' or '}' at
  // nesting depth 0 or a line break at depth 0, and advances past it. For attribute values this
  // version does not model.
  std::string_view TakeRawValue();

 private:
  void Lex();
  void SkipSpaceAndComments();
  bool LexNumber(size_t start);
  void LexIdentifierOrKeyword(size_t start);
  void LexString(size_t start);
  bool TryDimLabels(size_t start);
  void Error(size_t start, std::string msg);

  std::string_view text_;
  size_t pos_ = 0;
  size_t prev_end_ = 0;
  bool saw_newline_ = false;
  Token tok_;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_TEXT_LEXER_H_
