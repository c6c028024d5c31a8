// oid against libbson 1.23, in one binary on one machine: making ids (one per call, in batches,
// from two threads) and converting them (hex both ways, base64 both ways, comparison).
//
// Every benchmark is registered as "<row>/<library>" so that scripts/bench-objectid.sh can pair
// the rows; the script repeats each one and reports medians. Conversions cycle through 256
// different ids so that branch predictors cannot learn a single input.
#include <benchmark/benchmark.h>
#include <bson/bson.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/id64_generator.hpp>
#include <oid/objectid/object_id.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr std::size_t sample_count = 256;  // power of two: index with `i & (sample_count - 1)`

/// 256 fixed pseudo-random ids, with their hex and base64 text, shared by both libraries.
struct samples {
  std::array<oid::object_id, sample_count> ids;
  std::array<bson_oid_t, sample_count> bson_ids;
  std::array<std::array<char, 25>, sample_count> hex;  // NUL-terminated: libbson needs it
  std::array<std::array<char, 16>, sample_count> base64;

  samples() {
    std::mt19937_64 rng(20240601);  // fixed seed: the same inputs in every run
    for (std::size_t i = 0; i < sample_count; ++i) {
      oid::object_id::bytes_type b;
      for (auto& x : b) x = static_cast<std::uint8_t>(rng());
      ids[i] = oid::object_id(b);
      std::memcpy(bson_ids[i].bytes, b.data(), 12);
      *ids[i].to_hex(hex[i].data()) = '\0';
      ids[i].to_base64(base64[i].data());
    }
  }
};

const samples& inputs() {
  static const samples s;
  return s;
}

// ---- Reference costs -----------------------------------------------------------------------
//
// Not a comparison: what the generators cannot avoid, measured in the same run so that the table
// can say how close to the floor each one is. Every id reads the clock (`time()`, a vDSO call),
// and libbson's default context makes a getpid() system call per id.

void ref_clock(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(::time(nullptr));
  state.SetItemsProcessed(state.iterations());
}

void ref_getpid(benchmark::State& state) {
  // The raw system call, as libbson makes it per id (glibc has not cached getpid since 2.25).
  for (auto _ : state) benchmark::DoNotOptimize(::syscall(SYS_getpid));
  state.SetItemsProcessed(state.iterations());
}

// ---- Generation ----------------------------------------------------------------------------

void oid_generate_one(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(oid::generate());
  state.SetItemsProcessed(state.iterations());
}

void bson_generate_default(benchmark::State& state) {
  bson_oid_t id;
  for (auto _ : state) {
    bson_oid_init(&id, nullptr);  // the default context: getpid() per id to notice a fork
    benchmark::DoNotOptimize(id);
  }
  state.SetItemsProcessed(state.iterations());
}

bson_context_t* none_context() {
  // Shared by all threads and never freed, like libbson's own default context.
  static bson_context_t* const ctx = bson_context_new(BSON_CONTEXT_NONE);
  return ctx;
}

void bson_generate_none(benchmark::State& state) {
  bson_context_t* ctx = none_context();
  bson_oid_t id;
  for (auto _ : state) {
    bson_oid_init(&id, ctx);  // no fork check: a forked child repeats its parent's ids
    benchmark::DoNotOptimize(id);
  }
  state.SetItemsProcessed(state.iterations());
}

constexpr std::size_t batch_size = 1024;

void oid_generate_batch(benchmark::State& state) {
  std::vector<oid::object_id> ids(batch_size);
  for (auto _ : state) {
    oid::generate(ids);
    benchmark::DoNotOptimize(ids.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch_size));
}

/// libbson has no batch call: the nearest thing is its fastest mode in a loop.
void bson_generate_none_batch(benchmark::State& state) {
  bson_context_t* ctx = none_context();
  std::vector<bson_oid_t> ids(batch_size);
  for (auto _ : state) {
    for (auto& id : ids) bson_oid_init(&id, ctx);
    benchmark::DoNotOptimize(ids.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch_size));
}

// ---- 64-bit ids (Snowflake layout) -----------------------------------------------------------
//
// No libbson counterpart: these rows stand beside the ObjectId rows. One generator shared by all
// threads (machine id assigned, as the generator requires). At these rates the generator makes
// more than Snowflake's 4,096 ids a millisecond, so the ids run ahead of the clock: that is the
// path it takes under such load (no sleeping), with one clock read and one compare-and-swap per
// call.

oid::id64_generator& snowflake_generator() {
  static oid::id64_generator gen(oid::id64_layout::snowflake(), 1);
  return gen;
}

void id64_generate_one(benchmark::State& state) {
  oid::id64_generator& gen = snowflake_generator();
  for (auto _ : state) benchmark::DoNotOptimize(gen.next());
  state.SetItemsProcessed(state.iterations());
}

void id64_generate_batch(benchmark::State& state) {
  oid::id64_generator& gen = snowflake_generator();
  std::vector<oid::id64> ids(batch_size);
  for (auto _ : state) {
    gen.fill(ids);
    benchmark::DoNotOptimize(ids.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch_size));
}

void ref_clock_ms(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(oid::system_clock_milliseconds());
  state.SetItemsProcessed(state.iterations());
}

// ---- Conversion ----------------------------------------------------------------------------

void oid_hex_format(benchmark::State& state) {
  const auto& in = inputs();
  char out[24];
  std::size_t i = 0;
  for (auto _ : state) {
    in.ids[i++ & (sample_count - 1)].to_hex(out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void bson_hex_format(benchmark::State& state) {
  const auto& in = inputs();
  char out[25];
  std::size_t i = 0;
  for (auto _ : state) {
    bson_oid_to_string(&in.bson_ids[i++ & (sample_count - 1)], out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void oid_hex_parse(benchmark::State& state) {
  const auto& in = inputs();
  std::size_t i = 0;
  for (auto _ : state) {
    auto r =
        oid::object_id::from_hex(std::string_view(in.hex[i++ & (sample_count - 1)].data(), 24));
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

/// libbson's parser turns a bad character into zero, so validation is a separate pass.
void bson_hex_parse(benchmark::State& state) {
  const auto& in = inputs();
  std::size_t i = 0;
  bson_oid_t id;
  for (auto _ : state) {
    const char* s = in.hex[i++ & (sample_count - 1)].data();
    const bool ok = bson_oid_is_valid(s, 24);
    if (ok) bson_oid_init_from_string(&id, s);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(id);
  }
  state.SetItemsProcessed(state.iterations());
}

void oid_base64_format(benchmark::State& state) {
  const auto& in = inputs();
  char out[16];
  std::size_t i = 0;
  for (auto _ : state) {
    in.ids[i++ & (sample_count - 1)].to_base64(out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void oid_base64_parse(benchmark::State& state) {
  const auto& in = inputs();
  std::size_t i = 0;
  for (auto _ : state) {
    auto r = oid::object_id::from_base64(
        std::string_view(in.base64[i++ & (sample_count - 1)].data(), 16));
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

// Neighbouring samples share no prefix, so most comparisons stop in the first bytes; the
// "equal prefix" rows compare ids that differ only in the last byte (same second, same process).
void oid_compare(benchmark::State& state) {
  const auto& in = inputs();
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& a = in.ids[i & (sample_count - 1)];
    const auto& b = in.ids[(i + 1) & (sample_count - 1)];
    ++i;
    benchmark::DoNotOptimize(a < b);
  }
  state.SetItemsProcessed(state.iterations());
}

void bson_compare(benchmark::State& state) {
  const auto& in = inputs();
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& a = in.bson_ids[i & (sample_count - 1)];
    const auto& b = in.bson_ids[(i + 1) & (sample_count - 1)];
    ++i;
    benchmark::DoNotOptimize(bson_oid_compare(&a, &b) < 0);
  }
  state.SetItemsProcessed(state.iterations());
}

/// Pairs of ids that differ only in byte 11, the worst case for a byte-by-byte comparison.
struct late_pairs {
  std::array<oid::object_id, sample_count> a, b;
  std::array<bson_oid_t, sample_count> ba, bb;
  late_pairs() {
    const auto& in = inputs();
    for (std::size_t i = 0; i < sample_count; ++i) {
      auto x = in.ids[i].bytes();
      a[i] = oid::object_id(x);
      x[11] = static_cast<std::uint8_t>(x[11] ^ (1 + i % 255));
      b[i] = oid::object_id(x);
      std::memcpy(ba[i].bytes, a[i].bytes().data(), 12);
      std::memcpy(bb[i].bytes, b[i].bytes().data(), 12);
    }
  }
};

const late_pairs& pairs() {
  static const late_pairs p;
  return p;
}

void oid_compare_late(benchmark::State& state) {
  const auto& p = pairs();
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t k = i++ & (sample_count - 1);
    benchmark::DoNotOptimize(p.a[k] < p.b[k]);
  }
  state.SetItemsProcessed(state.iterations());
}

void bson_compare_late(benchmark::State& state) {
  const auto& p = pairs();
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t k = i++ & (sample_count - 1);
    benchmark::DoNotOptimize(bson_oid_compare(&p.ba[k], &p.bb[k]) < 0);
  }
  state.SetItemsProcessed(state.iterations());
}

void oid_equal(benchmark::State& state) {
  const auto& p = pairs();
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t k = i++ & (sample_count - 1);
    benchmark::DoNotOptimize(p.a[k] == p.b[k]);
  }
  state.SetItemsProcessed(state.iterations());
}

void bson_equal(benchmark::State& state) {
  const auto& p = pairs();
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t k = i++ & (sample_count - 1);
    benchmark::DoNotOptimize(bson_oid_equal(&p.ba[k], &p.bb[k]));
  }
  state.SetItemsProcessed(state.iterations());
}

void register_all() {
  using benchmark::RegisterBenchmark;
  // libbson's default context makes a system call per id (about 1.4 us here): a shorter minimum
  // time keeps the run short without losing precision at that scale.
  RegisterBenchmark("gen_one/oid", oid_generate_one);
  RegisterBenchmark("gen_one/libbson_none", bson_generate_none);
  RegisterBenchmark("gen_one/libbson_default", bson_generate_default)->MinTime(0.2);
  RegisterBenchmark("gen_batch1024/oid", oid_generate_batch);
  RegisterBenchmark("gen_batch1024/libbson_none", bson_generate_none_batch);
  // Two threads at once on the shared generator (oid) or shared context (libbson). Real time, so
  // the figure is the aggregate: wall time divided by the ids both threads made. A full second per
  // run: Google Benchmark starts the threads for every run, and with its usual 0.1 s the start-up
  // alone costs oid about 0.3 ns of the 2.5 ns per id (1.7x one thread instead of 2x, measured).
  RegisterBenchmark("gen_2threads/oid", oid_generate_one)->Threads(2)->UseRealTime()->MinTime(1.0);
  RegisterBenchmark("gen_2threads/libbson_none", bson_generate_none)
      ->Threads(2)
      ->UseRealTime()
      ->MinTime(1.0);
  RegisterBenchmark("gen_2threads/libbson_default", bson_generate_default)
      ->Threads(2)
      ->UseRealTime()
      ->MinTime(1.0);
  RegisterBenchmark("gen64_one/oid_snowflake", id64_generate_one);
  RegisterBenchmark("gen64_batch1024/oid_snowflake", id64_generate_batch);
  RegisterBenchmark("gen64_2threads/oid_snowflake", id64_generate_one)
      ->Threads(2)
      ->UseRealTime()
      ->MinTime(1.0);
  RegisterBenchmark("hex_format/oid", oid_hex_format);
  RegisterBenchmark("hex_format/libbson", bson_hex_format);
  RegisterBenchmark("hex_parse/oid", oid_hex_parse);
  RegisterBenchmark("hex_parse/libbson", bson_hex_parse);
  RegisterBenchmark("base64_format/oid", oid_base64_format);
  RegisterBenchmark("base64_parse/oid", oid_base64_parse);
  RegisterBenchmark("compare/oid", oid_compare);
  RegisterBenchmark("compare/libbson", bson_compare);
  RegisterBenchmark("compare_late/oid", oid_compare_late);
  RegisterBenchmark("compare_late/libbson", bson_compare_late);
  RegisterBenchmark("equal/oid", oid_equal);
  RegisterBenchmark("equal/libbson", bson_equal);
  RegisterBenchmark("ref_clock/floor", ref_clock);
  RegisterBenchmark("ref_getpid/floor", ref_getpid);
  RegisterBenchmark("ref_clock_ms/floor", ref_clock_ms);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
