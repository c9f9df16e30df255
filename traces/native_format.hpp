#pragma once
// SlurmTwin's own binary trace format (".stt"): fast to load (a 1M-job year in well under a second
// of parsing), versioned, and checksummed so a truncated or corrupt file fails with a clear error.
//
// Layout (little-endian): magic "STWTRACE", u32 version, u64 payload size, payload, u64 FNV-1a of the
// payload. Payload: origin (i64), source (string), five dictionaries (u32 count + strings), u64 job
// count, then each job as fixed-width fields followed by its GRES list. Strings are u32 length + bytes.
#include <string>

#include "traces/trace.hpp"

namespace slurmtwin {

// 2: JobRecord::cancel after time_limit (version 1 files read with no cancellations)
// 3: JobRecord::reservation and reservation_id after cancel (older files read with no reservations)
// 4: JobRecord::array_max_running after them; 5: JobRecord::licenses after that (older: none)
inline constexpr std::uint32_t kNativeTraceVersion = 5;

/// Serialises a trace to the native format. Without `with_source` the trace's source (the files it was
/// read from) is written empty: the bytes then depend on the jobs alone, for content fingerprints.
std::string encode_native_trace(const Trace& trace, bool with_source = true);
/// Parses the native format; throws InputError naming `file` on a wrong magic, an unknown version,
/// a checksum mismatch or a truncated payload.
Trace decode_native_trace(const std::string& bytes, const std::string& file);
/// True when `bytes` starts with the native magic.
bool is_native_trace(const std::string& bytes);

void write_native_trace(const Trace& trace, const std::string& path);
Trace read_native_trace(const std::string& path);

}  // namespace slurmtwin
