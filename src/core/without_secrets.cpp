// The one redaction of messages (include/h5tile/error.hpp): what a URL in any text may hide.
//
// Where a URL ends in running text cannot be known (a password or a query may hold quotes,
// slashes or '@'), so the rules lean to removing too much: the user information runs to the last
// '@' before the query, and the query and fragment to the next white space. A
// quote that opened before the URL and closes inside what was removed is put back with what
// follows it, so that "'http://h/x?sig=S': 403" reads "'http://h/x': 403".
#include <h5tile/error.hpp>

#include <cctype>

namespace h5tile {
namespace {

bool scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

bool space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::string without_secrets(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t done = 0;  // text[0, done) is in `out`
  for (auto sep = text.find("://"); sep != std::string_view::npos; sep = text.find("://", done)) {
    auto start = sep;  // the scheme, where there is one
    while (start > done && scheme_char(text[start - 1])) --start;
    const char opening = start > 0 ? text[start - 1] : '\0';
    const std::size_t from = sep + 3;
    std::size_t end = from;  // the URL runs to the next white space
    while (end < text.size() && !space(text[end])) ++end;
    const auto url = text.substr(from, end - from);
    const auto query = url.find_first_of("?#");
    // User information: up to the last '@' before the query (a password may hold '/', '@' or
    // quotes), where what comes before the first '@' holds a ':' (user:password) or no '/' (a
    // user name); otherwise the '@' is the path's ("http://h/users/a@b.h5").
    const auto head = url.substr(0, query);
    const auto first_at = head.find('@');
    const bool user =
        first_at != std::string_view::npos && (head.substr(0, first_at).find(':') != std::string_view::npos ||
                                               head.substr(0, first_at).find('/') == std::string_view::npos);
    const auto kept_from = user ? head.rfind('@') + 1 : 0;
    out.append(text.substr(done, from - done));
    out.append(url.substr(kept_from, query == std::string_view::npos ? std::string_view::npos : query - kept_from));
    if (query != std::string_view::npos && (opening == '\'' || opening == '"' || opening == '`')) {
      // The closing quote of a quoted URL, and what follows it ("':"), come back.
      if (const auto closing = url.rfind(opening); closing != std::string_view::npos && closing >= query) {
        out.append(url.substr(closing));
      }
    }
    done = end;
  }
  out.append(text.substr(done));
  return out;
}

}  // namespace h5tile
