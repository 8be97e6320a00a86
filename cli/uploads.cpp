// `h5tile uploads`: the unfinished S3 multipart uploads under a prefix (what a writer killed
// outright leaves: its parts take space until aborted), listed, and aborted with --abort.
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <h5tile/h5tile.hpp>

#include "common.hpp"

namespace h5tile::cli {
namespace {

struct UploadsCli {
  std::string prefix;
  bool abort = false;
  std::string older_than;
  bool json = false;
};
UploadsCli uploads_options;

// "90", "90s", "30m", "2h", "1d": seconds; nullopt for anything else.
std::optional<double> duration_seconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const auto unit = text.substr(used);
  const double scale = unit.empty() || unit == "s" ? 1
                       : unit == "m"               ? 60
                       : unit == "h"               ? 3600
                       : unit == "d"               ? 86400
                                                   : -1;
  if (scale < 0 || !(value >= 0)) return std::nullopt;
  return value * scale;
}

// Seconds since `initiated` (ISO 8601 UTC, "2026-12-06T10:47:54.000Z"); nullopt where it does not parse.
std::optional<double> age_seconds(const std::string& initiated) {
  std::tm when{};
  if (std::sscanf(initiated.c_str(), "%d-%d-%dT%d:%d:%d", &when.tm_year, &when.tm_mon, &when.tm_mday, &when.tm_hour,
                  &when.tm_min, &when.tm_sec) != 6) {
    return std::nullopt;
  }
  when.tm_year -= 1900;
  when.tm_mon -= 1;
  return std::difftime(std::time(nullptr), timegm(&when));
}

int run_uploads() {
  const auto& prefix = uploads_options.prefix;
  if (prefix.size() < 5 || (prefix.compare(0, 5, "s3://") != 0 && prefix.compare(0, 5, "S3://") != 0)) {
    throw CLI::ValidationError(
        "PREFIX", fmt::format("'{}' is not an s3:// URL (s3://bucket/ or s3://bucket/folder/)", redacted_path(prefix)));
  }
  std::optional<double> older;
  if (!uploads_options.older_than.empty()) {
    older = duration_seconds(uploads_options.older_than);
    if (!older) {
      throw CLI::ValidationError(
          "--older-than", fmt::format("'{}' is not a duration such as 90s, 30m, 2h or 1d", uploads_options.older_than));
    }
  }
  const auto found = pending_uploads(uploads_options.prefix);
  nlohmann::json out = nlohmann::json::array();
  std::size_t aborted = 0;
  std::size_t kept = 0;
  for (const auto& upload : found) {
    const auto age = age_seconds(upload.initiated);
    const bool old_enough = !older || (age && *age >= *older);
    bool done = false;
    if (uploads_options.abort && old_enough) {
      abort_upload(upload);
      done = true;
      ++aborted;
    } else {
      ++kept;
    }
    if (uploads_options.json) {
      out.push_back({{"url", redacted_path(upload.url)},
                     {"upload_id", upload.upload_id},
                     {"initiated", upload.initiated},
                     {"aborted", done}});
    } else {
      print_line(stdout, "{}{}  began {}  upload {}", done ? "aborted " : "", redacted_path(upload.url),
                 upload.initiated.empty() ? "(not said)" : upload.initiated, upload.upload_id);
    }
  }
  if (uploads_options.json) {
    fmt::print("{}\n", json_text(out));
  } else if (uploads_options.abort) {
    print_line(stdout, "{} unfinished upload{} under {}: {} aborted{}", found.size(), found.size() == 1 ? "" : "s",
               redacted_path(uploads_options.prefix), aborted,
               kept > 0 ? fmt::format(", {} younger than {} kept", kept, uploads_options.older_than) : std::string());
  } else {
    print_line(stdout, "{} unfinished upload{} under {}{}", found.size(), found.size() == 1 ? "" : "s",
               redacted_path(uploads_options.prefix),
               found.empty() ? std::string() : " (give --abort to discard their parts)");
  }
  return kOk;
}

}  // namespace

void add_uploads(CLI::App& app) {
  auto* cmd = app.add_subcommand("uploads",
                                 "List (and with --abort discard) the unfinished S3 multipart uploads under a "
                                 "prefix: what a writer killed outright leaves");
  cmd->add_option("PREFIX", uploads_options.prefix,
                  "s3://bucket/ (the whole bucket) or s3://bucket/folder/ (keys that start with folder/)")
      ->required();
  cmd->add_flag("--abort", uploads_options.abort,
                "abort them (AbortMultipartUpload): their parts are discarded; no object appears from them");
  cmd->add_option("--older-than", uploads_options.older_than,
                  "with --abort, only uploads begun longer ago than this (90s, 30m, 2h, 1d): a write in "
                  "progress elsewhere is younger");
  cmd->add_flag("--json", uploads_options.json, "one JSON array of {url, upload_id, initiated, aborted}");
  cmd->footer(
      "Examples:\n"
      "  h5tile uploads s3://bucket/                       list them\n"
      "  h5tile uploads s3://bucket/runs/ --abort --older-than 1d\n"
      "Credentials and endpoint as for reads (AWS_* variables). A write h5tile completes or fails\n"
      "cleanly leaves no upload; a bucket lifecycle rule (AbortIncompleteMultipartUpload) does the\n"
      "same as --abort --older-than on a schedule.");
  cmd->callback([] { selected_command() = run_uploads; });
}

}  // namespace h5tile::cli
