#pragma once
// Small string helpers shared by the readers and importers.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace slurmtwin::text {

std::string_view trim(std::string_view s);
/// Splits on every `sep` (keeps empty fields).
std::vector<std::string_view> split(std::string_view s, char sep);
/// Splits on runs of whitespace (no empty fields).
std::vector<std::string_view> split_ws(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
bool starts_with_i(std::string_view s, std::string_view prefix);

/// Whole-string integer / float parses; nullopt on any junk, overflow or empty input.
std::optional<std::int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(std::string_view s);

/// Memory size with optional unit suffix K/M/G/T/P (binary, case-insensitive) -> MB (rounded up).
/// A bare number is `default_unit` ('M' for Slurm options). nullopt on junk.
std::optional<std::int64_t> parse_memory_mb(std::string_view s, char default_unit = 'M');

/// Text escaped for XML and HTML content and attribute values (&, <, >, " and ' as entities).
std::string xml_escape(std::string_view s);

}  // namespace slurmtwin::text
