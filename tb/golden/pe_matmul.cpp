// See pe_matmul.hpp.
#include "pe_matmul.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ncore::golden {
namespace {

// Rows [j0, j1) with std::fma.
void rows_scalar(const float* w, const float* x, float* out, uint32_t k, uint32_t m, uint64_t n, uint32_t j0,
                 uint32_t j1) {
  for (uint32_t j = j0; j < j1; ++j)
    for (uint64_t c = 0; c < n; ++c) {
      float s = 0.0f;
      for (uint32_t r = 0; r < k; ++r) s = std::fma(w[uint64_t{r} * m + j], x[r * n + c], s);
      out[j * n + c] = s;
    }
}

// Rows [j0, j1) with AVX2 + FMA: blocks of 4 rows x 16 columns in 8 registers.
__attribute__((target("avx2,fma"))) void rows_avx2(const float* w, const float* x, float* out, uint32_t k, uint32_t m,
                                                   uint64_t n, uint32_t j0, uint32_t j1) {
  const uint64_t n16 = n / 16 * 16;
  uint32_t j = j0;
  for (; j + 4 <= j1; j += 4) {
    for (uint64_t c = 0; c < n16; c += 16) {
      __m256 a00 = _mm256_setzero_ps(), a01 = _mm256_setzero_ps(), a10 = _mm256_setzero_ps(),
             a11 = _mm256_setzero_ps(), a20 = _mm256_setzero_ps(), a21 = _mm256_setzero_ps(),
             a30 = _mm256_setzero_ps(), a31 = _mm256_setzero_ps();
      const float* xr = x + c;
      const float* wr = w + j;
      for (uint32_t r = 0; r < k; ++r, xr += n, wr += m) {
        const __m256 x0 = _mm256_loadu_ps(xr), x1 = _mm256_loadu_ps(xr + 8);
        const __m256 w0 = _mm256_broadcast_ss(wr), w1 = _mm256_broadcast_ss(wr + 1), w2 = _mm256_broadcast_ss(wr + 2),
                     w3 = _mm256_broadcast_ss(wr + 3);
        a00 = _mm256_fmadd_ps(w0, x0, a00);
        a01 = _mm256_fmadd_ps(w0, x1, a01);
        a10 = _mm256_fmadd_ps(w1, x0, a10);
        a11 = _mm256_fmadd_ps(w1, x1, a11);
        a20 = _mm256_fmadd_ps(w2, x0, a20);
        a21 = _mm256_fmadd_ps(w2, x1, a21);
        a30 = _mm256_fmadd_ps(w3, x0, a30);
        a31 = _mm256_fmadd_ps(w3, x1, a31);
      }
      float* o = out + uint64_t{j} * n + c;
      _mm256_storeu_ps(o, a00);
      _mm256_storeu_ps(o + 8, a01);
      _mm256_storeu_ps(o + n, a10);
      _mm256_storeu_ps(o + n + 8, a11);
      _mm256_storeu_ps(o + 2 * n, a20);
      _mm256_storeu_ps(o + 2 * n + 8, a21);
      _mm256_storeu_ps(o + 3 * n, a30);
      _mm256_storeu_ps(o + 3 * n + 8, a31);
    }
    for (uint32_t jj = j; jj < j + 4; ++jj)  // the last n % 16 columns
      for (uint64_t c = n16; c < n; ++c) {
        float s = 0.0f;
        for (uint32_t r = 0; r < k; ++r) s = std::fma(w[uint64_t{r} * m + jj], x[r * n + c], s);
        out[jj * n + c] = s;
      }
  }
  rows_scalar(w, x, out, k, m, n, j, j1);  // the last j1 - j0 % 4 rows
}

bool have_avx2_fma() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

// A pool of worker threads (one fewer than the machine's cores) that run the parts of one call.
class Pool {
 public:
  static Pool& get() {
    static Pool p;
    return p;
  }
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Runs f(0) .. f(parts - 1), part 0 on the calling thread, the others on the workers.
  void run(unsigned parts, const std::function<void(unsigned)>& f) {
    if (parts <= 1 || workers_.empty()) {
      for (unsigned i = 0; i < parts; ++i) f(i);
      return;
    }
    {
      std::lock_guard<std::mutex> l(m_);
      job_ = &f;
      parts_ = parts;
      next_ = 1;
      pending_ = parts - 1;
      ++gen_;
    }
    cv_.notify_all();
    f(0);
    for (;;) {  // the caller helps with what is left
      unsigned i;
      {
        std::lock_guard<std::mutex> l(m_);
        if (next_ >= parts_) break;
        i = next_++;
      }
      f(i);
      std::lock_guard<std::mutex> l(m_);
      --pending_;
    }
    std::unique_lock<std::mutex> l(m_);
    done_cv_.wait(l, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  Pool() {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned t = 1; t < n; ++t) workers_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  void loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || (gen_ != seen && job_ && next_ < parts_); });
      if (stop_) return;
      seen = gen_;
      while (job_ && next_ < parts_) {
        const unsigned i = next_++;
        const std::function<void(unsigned)>* f = job_;
        l.unlock();
        (*f)(i);
        l.lock();
        if (--pending_ == 0) done_cv_.notify_all();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned parts_ = 0, next_ = 0, pending_ = 0;
  uint64_t gen_ = 0;
  bool stop_ = false;
};

}  // namespace

void pe_matmul(const float* w, const float* x, float* out, uint32_t k, uint32_t m, uint64_t n) {
  auto rows = have_avx2_fma() ? rows_avx2 : rows_scalar;
  // Split the rows (in blocks of 4) over the pool when the product is large enough to pay for it.
  const uint64_t work = uint64_t{k} * m * n;
  const unsigned parts = work < (1u << 20) ? 1u : std::min<unsigned>(Pool::get().size(), (m + 3) / 4);
  const uint32_t blocks = (m + 3) / 4;
  Pool::get().run(parts, [&](unsigned i) {
    const uint32_t j0 = std::min(m, blocks * i / parts * 4), j1 = std::min(m, blocks * (i + 1) / parts * 4);
    rows(w, x, out, k, m, n, j0, j1);
  });
  for (uint64_t i = 0; i < uint64_t{m} * n; ++i)
    if (std::isnan(out[i])) {
      const uint32_t canon = 0x7FC00000u;
      std::memcpy(&out[i], &canon, 4);
    }
}

}  // namespace ncore::golden
