// Native benchmark of the engine (Google Benchmark). One program holds both kernel sets; scripts/bench-native.sh
// runs it with the SIMD kernels (through SIMDe) and again with ATTNLAB_KERNELS=scalar. The context line names the
// set that ran. A benchmark, not a test: it prints numbers and asserts nothing.
//
// GFLOP/s counts 4·nq·nk·d per attention call (2 for Q·Kᵀ, 2 for weights·V) — for causal runs too, so a
// causal figure above the dense one shows the masked work that was skipped. Softmax counts n² elements.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "attnlab.h"

namespace {

std::vector<float> randn(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

void BM_Attention(benchmark::State& state, bool causal, attnlab::AttentionPath path) {
  const auto n = std::size_t(state.range(0)), d = std::size_t(state.range(1));
  const auto q = randn(n * d, 1), k = randn(n * d, 2), v = randn(n * d, 3);
  std::vector<float> out(n * d, 0.0f);  // written once up front so page faults are not timed
  const attnlab::AttentionArgs args{q, k, v, n, n, d, d, std::nullopt, causal, {}, path};
  for (auto _ : state) {
    auto st = attnlab::attention(args, attnlab::AttentionOutputs{out});
    benchmark::DoNotOptimize(st);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * double(n) * double(n) * double(d) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Softmax(benchmark::State& state) {
  const auto n = std::size_t(state.range(0));
  const auto x = randn(n * n, 4);
  std::vector<float> out(n * n, 0.0f);
  for (auto _ : state) {
    auto st = attnlab::softmax(attnlab::SoftmaxArgs{x, n, 1.0f, false}, out);
    benchmark::DoNotOptimize(st);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["Melem/s"] = benchmark::Counter(double(n) * double(n) * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int n : {64, 256, 1024, 2048}) b->Args({n, 64});
  b->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Attention, streaming, false, attnlab::AttentionPath::streaming)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Attention, streaming_causal, true, attnlab::AttentionPath::streaming)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Attention, materialized, false, attnlab::AttentionPath::materialized)->Apply(sizes);
BENCHMARK(BM_Softmax)->Arg(64)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("attnlab kernels", attnlab::build_info().kernels);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
