# collbench_precompile_headers(<target> [<header>...])
#
# Precompiles, for one target's own sources, the standard headers nearly
# every collbench file includes and fmt, plus any given third-party headers.
# scripts/test.sh's default tier builds from scratch (no ccache) under a time
# budget, and parsing C++20's <algorithm>, <functional>, <chrono>, ... is
# most of the CPU of a small source. PRIVATE: nothing reaches an installed
# target's consumers.
#
# Building the precompiled header costs a few parses (5-7 s of CPU on a
# loaded machine), so only a target of many small sources gains: it saved
# about 30% of collbench_collectives' CPU, and no clear gain was seen for the
# five sources of collbench_core or collbench_transport or the eight of
# collbench_catalog. A header with static objects (gtest's <iostream>, CLI11's validators,
# Google Benchmark's stream anchor) would add their initialization, and for
# CLI11 seconds of code generation, to every source of the target: list one
# only where each source includes it anyway. A source compiled with other
# flags than its target's (its own -O level) must set
# SKIP_PRECOMPILE_HEADERS: CMake adds -Winvalid-pch, which -Werror turns into
# a failure.
#
# -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON builds without them, which shows a
# source that compiles only because the precompiled header holds an include
# it lacks. With ccache, set CCACHE_SLOPPINESS=pch_defines,time_macros so
# that it caches these targets' objects (it compiles them uncached otherwise).
function(collbench_precompile_headers target)
  target_precompile_headers(${target} PRIVATE
    <algorithm> <array> <chrono> <cstddef> <cstdint> <functional> <map> <memory> <optional>
    <span> <sstream> <stdexcept> <string> <string_view> <unordered_map> <utility> <vector>
    <fmt/format.h> ${ARGN})
endfunction()
