// `info`'s view of attributes: values as text and as JSON.
#include "attribute_text.hpp"

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common.hpp"

namespace h5tile::cli {
namespace {

// Values shown of an array attribute in text mode; --json gives them all.
constexpr std::size_t kShownValues = 8;

template <class T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// IEEE half precision to float (exact: every half is a float).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000U) << 16U;
  const std::uint32_t exponent = (h >> 10U) & 0x1fU;
  const std::uint32_t mantissa = h & 0x3ffU;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {
    return std::bit_cast<float>(sign | 0x7f800000U | (mantissa << 13U));
  }
  return std::bit_cast<float>(sign | ((exponent + 112U) << 23U) | (mantissa << 13U));
}

// One element as JSON (a complex number as [re, im], opaque bytes as hex text).
nlohmann::json element_json(const std::byte* p, DType dtype) {
  switch (dtype.kind()) {
    case DTypeKind::Bool: return load<std::uint8_t>(p) != 0;
    case DTypeKind::Int8: return load<std::int8_t>(p);
    case DTypeKind::Int16: return load<std::int16_t>(p);
    case DTypeKind::Int32: return load<std::int32_t>(p);
    case DTypeKind::Int64: return load<std::int64_t>(p);
    case DTypeKind::UInt8: return load<std::uint8_t>(p);
    case DTypeKind::UInt16: return load<std::uint16_t>(p);
    case DTypeKind::UInt32: return load<std::uint32_t>(p);
    case DTypeKind::UInt64: return load<std::uint64_t>(p);
    case DTypeKind::Float16: return half_to_float(load<std::uint16_t>(p));
    case DTypeKind::Float32: return load<float>(p);
    case DTypeKind::Float64: return load<double>(p);
    case DTypeKind::Complex64: return {load<float>(p), load<float>(p + 4)};
    case DTypeKind::Complex128: return {load<double>(p), load<double>(p + 8)};
    default: {
      std::string hex;
      for (std::size_t i = 0; i < dtype.size(); ++i) hex += fmt::format("{:02x}", static_cast<unsigned>(p[i]));
      return hex;
    }
  }
}

// One element as text, as NumPy prints it where it can (nan, inf, True, (1+2j)).
std::string element_text(const std::byte* p, DType dtype) {
  const auto number = [](double v) { return std::isnan(v) ? std::string("nan") : fmt::format("{}", v); };
  switch (dtype.kind()) {
    case DTypeKind::Bool: return load<std::uint8_t>(p) != 0 ? "True" : "False";
    case DTypeKind::Float16: return number(half_to_float(load<std::uint16_t>(p)));
    case DTypeKind::Float32: return number(load<float>(p));
    case DTypeKind::Float64: return number(load<double>(p));
    case DTypeKind::Complex64: return fmt::format("({}{:+}j)", load<float>(p), load<float>(p + 4));
    case DTypeKind::Complex128: return fmt::format("({}{:+}j)", load<double>(p), load<double>(p + 8));
    default: return element_json(p, dtype).dump();
  }
}

std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string attribute_line(const Attribute& a) {
  std::vector<std::string> values;
  std::uint64_t count = 0;
  switch (a.kind) {
    case AttributeKind::Empty:
      return fmt::format("@{} = (empty, {})", a.name, a.numbers ? a.numbers->dtype().name() : "?");
    case AttributeKind::Unsupported: return fmt::format("@{} = (not read: {})", a.name, a.reason);
    case AttributeKind::References:
      count = a.references.size();
      for (std::size_t i = 0; i < a.references.size() && i < kShownValues; ++i) {
        values.push_back(a.references[i].size() == 1 ? quoted(a.references[i].front())
                                                     : fmt::format("[{}]", fmt::join(a.references[i], ", ")));
      }
      break;
    case AttributeKind::FixedStrings:
    case AttributeKind::VariableStrings:
      count = a.strings.size();
      for (std::size_t i = 0; i < a.strings.size() && i < kShownValues; ++i) values.push_back(quoted(a.strings[i]));
      break;
    case AttributeKind::Numbers: {
      const Array& array = *a.numbers;
      count = array.size();
      const auto size = array.dtype().size();
      for (std::uint64_t i = 0; i < count && i < kShownValues; ++i) {
        values.push_back(element_text(array.data() + i * size, array.dtype()));
      }
      break;
    }
  }
  if (a.shape.empty() && values.size() == 1) return fmt::format("@{} = {}", a.name, values.front());
  const std::string more = count > values.size() ? ", ..." : "";
  return fmt::format("@{} = [{}{}] (shape [{}])", a.name, fmt::join(values, ", "), more, fmt::join(a.shape, ", "));
}

nlohmann::json attribute_json(const Attribute& a) {
  auto j = json_name(a.name);
  switch (a.kind) {
    case AttributeKind::Empty: j["empty"] = a.numbers ? a.numbers->dtype().name() : "?"; return j;
    case AttributeKind::Unsupported: j["unsupported"] = a.reason; return j;
    case AttributeKind::References: {
      j["dtype"] = "reference";
      j["shape"] = a.shape;
      nlohmann::json values = nlohmann::json::array();
      for (const auto& paths : a.references)
        values.push_back(paths.size() == 1 ? nlohmann::json(paths.front()) : nlohmann::json(paths));
      j["value"] = a.shape.empty() && values.size() == 1 ? values[0] : values;
      return j;
    }
    case AttributeKind::FixedStrings:
    case AttributeKind::VariableStrings: {
      j["dtype"] = a.kind == AttributeKind::FixedStrings ? fmt::format("S{}", a.string_width) : "str";
      j["shape"] = a.shape;
      nlohmann::json values = nlohmann::json::array();
      for (const auto& s : a.strings) values.push_back(s);
      j["value"] = a.shape.empty() && a.strings.size() == 1 ? values[0] : values;
      return j;
    }
    case AttributeKind::Numbers: {
      const Array& array = *a.numbers;
      j["dtype"] = array.dtype().name();
      j["shape"] = a.shape;
      nlohmann::json values = nlohmann::json::array();
      const auto size = array.dtype().size();
      for (std::uint64_t i = 0; i < array.size(); ++i)
        values.push_back(element_json(array.data() + i * size, array.dtype()));
      j["value"] = a.shape.empty() && values.size() == 1 ? values[0] : values;
      return j;
    }
  }
  return j;
}

}  // namespace h5tile::cli
