// The one redaction of messages (include/h5tile/error.hpp): what a URL in any text may hide.
#include <h5tile/error.hpp>

#include <cctype>

namespace h5tile {
namespace {

bool scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

// Where a URL ends inside running text: at white space, a quote or an angle bracket.
bool ends_url(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0 || c == '\'' || c == '"' || c == '`' || c == '<' || c == '>';
}

}  // namespace

std::string without_secrets(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t done = 0;  // text[0, done) is in `out`
  std::size_t from = 0;  // where the next "://" is looked for
  for (auto sep = text.find("://"); sep != std::string_view::npos; sep = text.find("://", from)) {
    from = sep + 3;
    auto start = sep;
    while (start > done && scheme_char(text[start - 1])) --start;
    while (start < sep && std::isalpha(static_cast<unsigned char>(text[start])) == 0) ++start;
    if (start == sep) continue;  // no scheme before it
    // The authority ends at '/', '?', '#' or the end of the URL; user information before its last '@'.
    std::size_t i = sep + 3;
    std::size_t authority_end = i;
    while (authority_end < text.size() && !ends_url(text[authority_end]) && text[authority_end] != '/' &&
           text[authority_end] != '?' && text[authority_end] != '#') {
      ++authority_end;
    }
    if (const auto at = text.substr(i, authority_end - i).rfind('@'); at != std::string_view::npos) i += at + 1;
    std::size_t end = i;
    while (end < text.size() && !ends_url(text[end])) ++end;
    out.append(text.substr(done, sep + 3 - done));
    const auto rest = text.substr(i, end - i);
    out.append(rest.substr(0, rest.find_first_of("?#")));
    done = from = end;
  }
  out.append(text.substr(done));
  return out;
}

}  // namespace h5tile
