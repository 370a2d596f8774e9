#pragma once
// Parameters of one run of the bundled attention kernel, and every reason a
// configuration cannot work that is decidable without the device. Pure C++: the
// parent validates before it spawns a child, the child re-validates with the real
// shared-memory limit of its device, and neither launches an invalid configuration.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "kernels/attention/attention_layout.h"
#include "profiles/allocator.h"
#include "report/report.h"
#include "util/choices.h"

namespace cudadiag::attention {

using json = report::json;

// Relative error ||out - ref||_2 / ||ref||_2 above which a run is a mismatch.
// Inputs are identical for kernel and reference, so the error comes from rounding P
// (the softmax probabilities) to the input dtype before P*V and from rounding the
// output: about one unit roundoff each. fp16 (u = 2^-11 = 4.9e-4) measures about
// 5e-4, so 2e-3 leaves 4x headroom; bf16 (u = 2^-8 = 3.9e-3) measures about 4e-3, so
// 1e-2. A race or an out-of-range read moves whole rows and gives errors near 1.
// NaN anywhere in the output is a mismatch whatever the norm says.
inline constexpr double kToleranceFp16 = 2e-3;
inline constexpr double kToleranceBf16 = 1e-2;

// Opt-in shared memory per block (cudaDevAttrMaxSharedMemoryPerBlockOptin).
inline constexpr size_t kSmemOptinH100 = 232448;  // 227 KB: H100, H200
inline constexpr size_t kSmemOptinA100 = 166912;  // 163 KB: A100

// CPU float64 reference while B*H*S^2*D stays below this; the fp32 GPU reference above.
inline constexpr double kCpuReferenceWork = 268435456.0;  // 2^28

struct TensorStrides {
  long long batch = 0, head = 0, seq = 0;  // elements; D is contiguous
};

struct AttentionConfig {
  DType dtype = DType::fp16;
  // mma (mma.sync, every compiled tile) | wgmma (sm_90a engine: head_dim 128, block_m 128,
  // 8 warps, block_n 64 or 128, no fault knob but misalign). In the JSON parameters only
  // when wgmma.
  Engine engine = Engine::mma;
  int batch = 1, heads = 1, seq_len = 64, head_dim = 64;
  bool causal = false;
  int block_m = 64, block_n = 64, warps = 4;
  // Strides per tensor (q, k, v, o); zero fields mean the contiguous default.
  std::array<TensorStrides, 4> strides{};
  // Fault knobs.
  int misalign_bytes = 0;
  bool no_tail_mask = false;
  bool drop_barrier = false;
  bool smem_overflow = false;
  // The drop-barrier race (kernels/attention/attention_kernel.cuh): per run and CTA, a
  // seeded draw with probability race_rate makes warps 1.. start race_window cycles late.
  // In the JSON parameters only when drop_barrier is set.
  int race_window = attention::kDefaultRaceWindowCycles;
  double race_rate = attention::kDefaultRaceRate;
};

inline constexpr std::array<const char*, 4> kTensorNames = {"q", "k", "v", "o"};

// The engines' words (JSON parameters, --engine).
inline constexpr ChoiceTable<Engine, 2> kEngineChoices{{{Engine::mma, "mma"}, {Engine::wgmma, "wgmma"}}};
inline std::string_view to_string(Engine e) { return choice_name(kEngineChoices, e); }

// The element types' words (JSON parameters, --dtype).
inline constexpr ChoiceTable<DType, 2> kDTypeChoices{{{DType::fp16, "fp16"}, {DType::bf16, "bf16"}}};
inline std::string_view to_string(DType d) { return choice_name(kDTypeChoices, d); }

// Contiguous [B,H,S,D] strides for zero fields (filled in place).
void fill_default_strides(AttentionConfig& c);
// Elements a tensor spans: (B-1)*sb + (H-1)*sh + (S-1)*ss + D.
size_t tensor_extent_elems(const AttentionConfig& c, int tensor);

// Exact dynamic shared memory of the kernel for this configuration.
size_t attention_smem_bytes(const AttentionConfig& c);
int attention_threads(const AttentionConfig& c);
double attention_tolerance(DType dtype);
// FLOPs of the forward pass: 4*B*H*S^2*D, halved when causal.
double attention_flops(const AttentionConfig& c);

// The compiled values of a tile knob, "16, 32, 64, 80, 128" (for --help and messages).
enum class Knob { head_dim, block_m, block_n, warps };
std::string compiled_list(Knob k);

// Every value that is not a well-formed parameter at all (a size below 1, a negative
// offset, a rate outside 0..1, tensors too large to address), each as "name: what is
// wrong": the command line and suite files refuse these as usage errors (exit 2).
std::vector<std::string> malformed_attention(const AttentionConfig& c);

// Every reason this configuration cannot run, in a stable order; empty when it can.
// Well-formed configurations the kernel or device cannot run (a tile that is not
// compiled, too much shared memory) are findings, not usage errors.
// smem_limit: the device's opt-in shared memory per block.
std::vector<std::string> validate_attention(const AttentionConfig& c, size_t smem_limit);

// JSON parameters <-> config. from_json fills defaults and throws
// std::invalid_argument naming the parameter on a wrong type or an unknown key.
json attention_params_to_json(const AttentionConfig& c);
AttentionConfig attention_config_from_json(const json& params);

// The outcome a healthy device gives for this configuration under an allocator
// (expectation expression, cases/expectation.h): "ok" without knobs; each knob's
// documented effect; "any" when several knobs combine.
std::string attention_expectation(const AttentionConfig& c, profiles::Allocator allocator);

// "attention.<dtype>.d<D>.bm<M>-bn<N>-w<W>": the id of a one-off run of this configuration.
std::string case_id_of(const AttentionConfig& c);

// Estimated milliseconds of one verified run in a warm child (quadratic in the sequence).
double estimate_run_ms(const AttentionConfig& c);

}  // namespace cudadiag::attention
